"""benchmarks/coverage_signals.py: the instrument for the not-covered decision (docs/answers.md,
"Does the library cover it?"). The `unheld` signal (how much closer a question comes to its
passages without the words they lack) on a small library written for the test, the AUC, and a
whole run over docs conversations. The real embedding model, SQLite with FTS5 and sqlite-vec."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import REPO, ingested, library_app, script_module

from ragchat.conversation.corpus import MemoryCorpus
from ragchat.conversation.coverage import rare_share

PROMPTS = (
    "# Asking for input\n\nCall ask_user(text) to ask the person at the terminal for a value: it "
    "prints the text, waits for a line and returns it. With hidden=True the typed characters "
    "are not echoed, for passwords.\n"
)
NETWORK = (
    "# Fetching pages\n\nfetch(url) downloads a page; it gives up after timeout seconds (30 by "
    "default) and retries three times.\n"
)
UNCOVERED = "can I give ask_user a timeout so it does not wait forever?"
COVERED = "how do I ask the person at the terminal for a value?"


@pytest.fixture(scope="module")
def signals() -> ModuleType:
    return script_module("benchmarks/coverage_signals.py")


def test_unheld_words_are_the_library_words_the_passages_lack(signals) -> None:
    """The word "timeout" is held by another page, so it is unheld here; "forever", held nowhere,
    is not counted (a word the library never uses says nothing about these passages)."""
    corpus = MemoryCorpus([(1, PROMPTS), (2, NETWORK)])
    assert signals.unheld_words(UNCOVERED, [PROMPTS], corpus) == ["timeout"]
    assert signals.unheld_words(COVERED, [PROMPTS], corpus) == []
    assert signals.without(UNCOVERED, ["timeout"]) == (
        "can I give ask_user a so it does not wait forever?"
    )


def test_a_question_asking_beside_its_passage_comes_closer_without_the_missing_word(
    signals, embedder
) -> None:
    corpus = MemoryCorpus([(1, PROMPTS), (2, NETWORK)])
    passages = embedder.embed([PROMPTS])
    gain = signals.unheld_gain(UNCOVERED, [PROMPTS], passages, corpus, embedder.embed_query)
    assert gain > 0
    covered = signals.unheld_gain(COVERED, [PROMPTS], passages, corpus, embedder.embed_query)
    assert covered == 0.0


def test_auc_counts_ties_as_half(signals) -> None:
    assert signals.auc([0.9, 0.2], [0.1, 0.2]) == pytest.approx(3.5 / 4)
    assert signals.auc([0.9], [0.1, 0.5]) == 1.0


def test_a_run_over_docs_conversations_scores_every_turn(runner, tmp_path: Path) -> None:
    db = ingested(runner, tmp_path, {"prompts.md": PROMPTS, "network.md": NETWORK})
    turns = [{"user": COVERED, "kind": "first"}, {"user": UNCOVERED, "kind": "not-covered"}]
    conversations = tmp_path / "conversations.jsonl"
    conversations.write_text(json.dumps({"id": "c1", "turns": turns}) + "\n", encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "coverage_signals.py"), "--db", str(db)]
        + ["--docs", str(conversations), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    lines = done.stdout.splitlines()
    assert lines[0] == "1 uncovered, 1 covered turns (meta-requests left out)"
    assert any(line.startswith("AUC unheld") for line in lines)
    assert any(line.startswith("rule or unheld >= 0.05") for line in lines)
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["uncovered"] for r in rows] == [False, True]
    assert {"subject", "rare", "unheld", "weak"} <= set(rows[0])


def test_a_second_run_on_the_same_library_starts_every_conversation_afresh(
    signals, embedder, tmp_path: Path
) -> None:
    """The docs conversations are held in sessions of the library's database; a second run over
    the same database read each conversation with the first run's turns before it (a question
    opening a conversation became a follow-up of the last run's), so its rows differed."""
    app = library_app(tmp_path, {"prompts.md": PROMPTS, "network.md": NETWORK}, embedder)
    turns = [{"user": COVERED, "kind": "first"}, {"user": "and can it hide what is typed?"}]
    conversations = tmp_path / "conversations.jsonl"
    conversations.write_text(json.dumps({"id": "c1", "turns": turns}) + "\n", encoding="utf-8")
    try:
        for _ in range(2):
            results = [result for _, result in signals.docs_turns(app, conversations)]
            assert [r.lineage.reformulation.is_follow_up for r in results] == [False, True]
    finally:
        app.close()


def test_the_library_scale_reads_first_sentences_as_questions(
    signals, embedder, tmp_path: Path
) -> None:
    """The library-relative signals: a chunk's opening sentence (prose, no code) as a
    pseudo-question, the library's scale from those against the rest of the library, and a
    question's cosine with the library's mean vector and its 10th best cosine."""
    text = "```\ncode here is skipped\n```\nCall ask_user(text) to ask for a value. It waits."
    assert signals.first_sentence(text) == "Call ask user text to ask for a value."
    assert signals.first_sentence("# Title\n\n    x = 1\n") is None
    app = library_app(tmp_path, {"prompts.md": PROMPTS, "network.md": NETWORK}, embedder)
    try:
        library = signals.Library(app)
        assert -1.0 <= library.pseudo <= 1.0
        question = embedder.embed_query(COVERED)
        centroid, tenth = library.relative(question)
        assert 0.0 < centroid < 1.0
        assert tenth <= float(max(library.vectors @ question))
    finally:
        app.close()


def test_soft_rare_gives_a_missing_term_the_credit_of_its_nearest_held_word(
    signals, embedder
) -> None:
    """A rarest term the passages hold counts whole; one they lack counts by the cosine of the
    nearest word they hold (partial), so the share sits between `rare` and 1."""
    corpus = MemoryCorpus([(1, PROMPTS), (2, NETWORK)])
    vectors = signals.WordVectors(embedder)
    assert signals.soft_rare(COVERED, [PROMPTS], corpus, vectors) == 1.0
    hard = rare_share(UNCOVERED, [PROMPTS], corpus, 3)
    soft = signals.soft_rare(UNCOVERED, [PROMPTS], corpus, vectors)
    assert hard < soft < 1.0
