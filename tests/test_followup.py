"""The follow-up detector read from a phrase table (`tests/followup_cases.jsonl`): one row a
question, with the conversation before it and what it should yield: its cue kinds, pointers,
referent, decision (first | shift | meta | follow_up | new_topic | continues) and rewrite. A new
rule adds rows. In-memory corpora; no database, no embedding model."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_stages import CORPUS, HIVE, PLACES

from ragchat import lexicon
from ragchat.conversation.corpus import MemoryCorpus
from ragchat.conversation.followup.cues import (
    explicit_shift,
    read_cues,
    read_signals,
    without_deixis,
)
from ragchat.conversation.followup.heuristic import HeuristicReformulator
from ragchat.conversation.followup.referents import pick_referent, referent_candidates
from ragchat.conversation.models import Exchange, ReformulationInput
from ragchat.params import DEFAULT
from ragchat.text import subject_words

CASES: list[dict[str, Any]] = [
    json.loads(line)
    for line in (Path(__file__).parent / "followup_cases.jsonl").read_text().splitlines()
    if line.strip()
]
CORPORA: dict[str, MemoryCorpus] = {"general": CORPUS, "places": PLACES, "hive": HIVE}
CUE_FIELDS = {"cues", "pointers", "meta", "content", "without_deixis", "shift_rest"}
VECTOR = np.zeros(4, dtype=np.float32)


def rows(*fields: str) -> list[dict[str, Any]]:
    return [case for case in CASES if set(fields) & set(case)]


def case_id(case: dict[str, Any]) -> str:
    return f"{case.get('corpus', '-')}: {case['question']}"


def data_of(case: dict[str, Any]) -> ReformulationInput:
    earlier = [tuple(exchange) for exchange in case.get("conversation", [])]
    questions = tuple(question for question, _ in earlier)
    return ReformulationInput(
        question=case["question"],
        last=Exchange(*earlier[-1]) if earlier else Exchange(),
        anchor_chunk_ids=tuple(case.get("anchors", ())),
        earlier_questions=questions,
        topic_questions=questions,
        last_semantic_query=case.get("understood", ""),
        own_best=case.get("best", 0.3),
        own_margin=case.get("margin", 0.0),
    )


@pytest.mark.parametrize("case", rows(*CUE_FIELDS), ids=case_id)
def test_cues(case: dict[str, Any]) -> None:
    question = case["question"]
    signals = read_signals(question, subject_words(question))
    if "cues" in case:
        assert sorted({cue.kind for cue in read_cues(question)}) == case["cues"]
    if "pointers" in case:
        assert signals.anaphora == case["pointers"]
    if "meta" in case:
        assert signals.is_meta is case["meta"]
    if "content" in case:
        assert signals.content == case["content"]
    if "without_deixis" in case:
        assert without_deixis(question) == case["without_deixis"]
    if "shift_rest" in case:
        assert explicit_shift(question) == (True, case["shift_rest"])


@pytest.mark.parametrize("case", rows("decision", "rewrite"), ids=case_id)
def test_decision_and_rewrite(case: dict[str, Any]) -> None:
    reformulator = HeuristicReformulator(CORPORA[case["corpus"]], params=DEFAULT.followup)
    if "decision" in case:
        assert reformulator.decide(data_of(case)).kind == case["decision"]
    if "rewrite" in case:
        assert (
            reformulator.reformulate(data_of(case), VECTOR).semantic_query.split(" (")[0]
            == case["rewrite"]
        )


@pytest.mark.parametrize("case", rows("referent"), ids=case_id)
def test_referent(case: dict[str, Any]) -> None:
    """The first pronoun's referent, picked among the conversation's candidates."""
    data, corpus = data_of(case), CORPORA[case["corpus"]]
    pointer = next(p for p in read_signals(data.question, []).anaphora if p in lexicon.REPLACEABLE)
    candidates = referent_candidates(
        corpus,
        data.topic_questions,
        data.last_semantic_query,
        data.last.assistant,
        DEFAULT.followup,
    )
    assert pick_referent(pointer, candidates, data.question, DEFAULT.followup) == case["referent"]


def test_every_cue_spans_its_words() -> None:
    """A cue's span is where its words stand (a pointer's: outside chat discourse)."""
    for case in CASES:
        question = case["question"]
        for cue in read_cues(question):
            start, end = cue.span
            if cue.kind in ("anaphora", "deixis"):
                assert (start, end) != (0, 0), (question, cue)
            if (start, end) != (0, 0) and cue.kind != "meta":
                assert " ".join(question[start:end].lower().split()) == cue.text, (question, cue)
    got = read_cues("Got it. How is it harvested?")
    assert [(c.kind, c.span) for c in got] == [("discourse", (0, 7)), ("anaphora", (15, 17))]


def test_the_pointer_table_derives_the_sets() -> None:
    """One table of pointing words; each set is one of its attributes."""
    assert lexicon.DEMONSTRATIVES == {"this", "that", "these", "those"}
    assert lexicon.REPLACEABLE == lexicon.PERSONAL | lexicon.DEMONSTRATIVES
    assert lexicon.PLURAL == {"they", "them", "their", "theirs", "these", "those"}
    assert lexicon.PERSON == {"he", "she", "him", "his", "her", "hers"}
    assert lexicon.POSSESSIVE == {"its", "their", "theirs", "his", "her", "hers"}
    assert lexicon.POINTING_WORDS >= lexicon.REPLACEABLE | {"there", "such", "same", "other"}


@pytest.mark.parametrize(
    ("phrase", "plural"),
    [
        ("bees", True),
        ("honey bees", True),
        ("policies", True),
        ("glass", False),
        ("virus", False),
        ("analysis", False),
        ("bus", False),
        ("honey", False),
    ],
)
def test_english_plural_rule(phrase: str, plural: bool) -> None:
    assert lexicon.looks_plural(phrase) is plural
    assert lexicon.possessive(phrase).endswith("'" if phrase.endswith("s") else "'s")


@pytest.mark.parametrize(
    ("anchor_best", "margin", "anchored", "lowered"),
    [
        (0.19, 0.13, False, True),  # one other document, clearly closer: the need halves
        (0.36, 0.13, False, False),  # the anchor documents come about as close
        (0.19, 0.0, False, False),  # several documents alike: no clear elsewhere
        (0.19, 0.13, True, False),  # its best chunk is in the anchor documents
    ],
)
def test_a_question_whose_own_meaning_points_elsewhere_needs_less_context(
    anchor_best: float, margin: float, anchored: bool, lowered: bool
) -> None:
    """Measured on embeddings, not words: no follow-up cue, and the question alone finds one
    other document clearly closer than the last answer's ("What is the g object used for?"
    after a 404 answer, on Flask's docs: 0.39 against 0.19)."""
    case = next(c for c in CASES if c["question"] == "what age must a witness be?")
    plain = replace(data_of(case), own_best=0.39)
    reformulator = HeuristicReformulator(CORPUS, params=DEFAULT.followup)
    before = reformulator.decide(plain)
    data = replace(
        plain, own_anchor_best=anchor_best, own_margin=margin, own_best_anchored=anchored
    )
    after = reformulator.decide(data)
    assert before.kind == after.kind == "continues" and before.need == 1.0
    expected = 1.0 - DEFAULT.followup.elsewhere_damping if lowered else before.need
    assert after.need == pytest.approx(expected)
