"""The turn's stages, one at a time: the history window, the heuristic reformulator on
an in-memory corpus, the model's reading and the answer stage on a fake chat backend,
the plan, and the lineage. No database, no embedding model: fast."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

import numpy as np
import pytest
from fakes import FakeChat

from ragchat.config import Settings
from ragchat.conversation import answering
from ragchat.conversation import history as turn_history
from ragchat.conversation.corpus import MemoryCorpus
from ragchat.conversation.followup.heuristic import HeuristicReformulator, own_closeness
from ragchat.conversation.models import (
    Exchange,
    Lineage,
    Reformulation,
    ReformulationInput,
    RetrievedChunk,
)
from ragchat.conversation.ollama_reformulator import ModelReading, OllamaReformulator
from ragchat.conversation.plan import Ablations, plan
from ragchat.conversation.reading import Anchors, Probe, TurnContext
from ragchat.conversation.reformulate import ask_model
from ragchat.errors import BackendUnavailable
from ragchat.params import DEFAULT
from ragchat.store.library import StoredChunk
from ragchat.store.sessions import Message

VECTOR = np.zeros(4, dtype=np.float32)
NEW_TOPIC_NEED, WEAK_NEED = DEFAULT.followup.new_topic_need, DEFAULT.followup.weak_need
# the window as a turn picks it (the history module takes no defaults)
select_window = partial(turn_history.select_window, minimum=DEFAULT.followup.window_similarity)

# Phrase-level cases of the follow-up detector (cues, referents, decisions): test_followup.py and
# its table, followup_cases.jsonl.


# --- the history window ------------------------------------------------------------------------


def message(id: int, role: str, content: str, vector: list[float]) -> Message:
    return Message(
        id, 1, role, content, "2026-01-01", None, np.array(vector, dtype=np.float32).tobytes()
    )


def test_window_keeps_the_last_exchange_and_the_most_similar_older_messages_in_order() -> None:
    history = [
        message(1, "user", "bees", [1, 0, 0]),
        message(2, "assistant", "about bees", [0.6, 0.8, 0]),
        message(3, "user", "taxes", [0, 1, 0]),
        message(4, "assistant", "about taxes", [0, 1, 0]),
        message(5, "user", "wills", [0, 0, 1]),
        message(6, "assistant", "about wills", [0, 0, 1]),
    ]
    window = select_window(history, np.array([1, 0, 0], dtype=np.float32), size=1)
    assert window.ids == [1, 5, 6]
    assert window.last == Exchange("wills", "about wills")
    assert select_window(history, np.array([1, 0, 0], dtype=np.float32), size=0).ids == [5, 6]


# --- the heuristic reformulator on an in-memory corpus ----------------------------------------

CHUNKS = {
    1: "Bees pollinate crops; honey bees live in hives with a queen.",
    2: "If bees died out, pollination of many crops would fail and food prices would rise.",
    3: "The queen bee lays eggs; workers feed the larvae.",
    4: "Donald Trump went to college at the Wharton School of the University of Pennsylvania.",
    5: "Ivanka Trump went to college at Georgetown and then at the University of Pennsylvania.",
    6: "Sourdough hydration for a beginner is about 70 percent water to flour.",
    7: "A will is legally binding when the testator signs it before two competent witnesses.",
    8: "A competent witness is at least 14 years old.",
}
CORPUS = MemoryCorpus(CHUNKS.items())


def reformulate(
    question: str,
    earlier: list[tuple[str, str]],
    anchors: tuple[int, ...] = (),
    best: float = 0.3,
    margin: float = 0.0,
    corpus: MemoryCorpus = CORPUS,
) -> Reformulation:
    last = Exchange(*earlier[-1]) if earlier else Exchange()
    data = ReformulationInput(
        question=question,
        last=last,
        anchor_chunk_ids=anchors,
        earlier_questions=tuple(q for q, _ in earlier),
        topic_questions=tuple(q for q, _ in earlier),
        own_best=best,
        own_margin=margin,
    )
    return HeuristicReformulator(corpus, params=DEFAULT.followup).reformulate(data, VECTOR)


def test_a_first_question_stands_alone() -> None:
    r = reformulate("Why do bees matter?", [])
    assert (r.semantic_query, r.is_follow_up, r.context_need) == ("Why do bees matter?", False, 0.0)


def test_a_pronoun_is_resolved_to_the_topic() -> None:
    r = reformulate(
        "What would happen if they died out?", [("Tell me about bees", "Bees pollinate crops.")]
    )
    assert (
        r.is_follow_up
        and r.context_need == 1.0 - 0.7 * own_closeness(0.3, params=DEFAULT.followup) == 1.0
    )
    assert "bees" in r.semantic_query.lower()


def test_a_name_is_as_rare_as_the_name_not_as_its_words() -> None:
    """A term counts where it occurs as a phrase, as FTS5 counts it: a two-word name is rarer
    than its words (so names outrank the common words they are made of)."""
    assert CORPUS.chunk_frequency("university of pennsylvania") == 2
    assert (
        CORPUS.chunk_frequency("pennsylvania university") == 0
    )  # both words there, not the phrase
    assert CORPUS.chunk_frequency("donald trump") == 1 < CORPUS.chunk_frequency("trump") == 2
    assert CORPUS.idf("donald trump") > CORPUS.idf("trump")


PLACES = MemoryCorpus(
    {
        1: "Jurors in Ventura County serve for one day or one trial.",
        2: "The Superior Court of California in Ventura County publishes local rules for civil "
        "cases.",
        3: "Each county court adopts local rules; Orange County has its own.",
        4: "The California Integrated Water Quality System tracks permits for water boards.",
        5: "Dwayne Johnson trains six days a week to get in shape for his film roles.",
        6: "Water boards issue permits; the system lists each permit.",
    }.items()
)


# one topic: every chunk speaks of bees, so "bees" is the commonest word of the corpus
HIVE = MemoryCorpus(
    enumerate(
        [
            "Bees pollinate crops and bees make honey.",
            "Honey bees live in hives; the bees follow a queen.",
            "Bees die in winter when the hive runs out of stores; bees cluster for warmth.",
            "Varroa mites weaken bees and spread viruses among bees.",
            "Wild bees nest in the ground; solitary bees do not make honey.",
            "If pollinators died out, many fruits would vanish and food prices would rise.",
            "Beekeepers treat colonies against mites in autumn.",
        ]
    )
)


def test_what_about_x_makes_x_the_subject() -> None:
    r = reformulate(
        "What about Ivanka?",
        [("Where did Donald Trump go to college?", "He went to Wharton.")],
        best=0.8,
        margin=0.2,
    )
    assert r.is_follow_up and r.new_subject
    assert "ivanka" in r.semantic_query.lower() and "college" in r.semantic_query.lower()
    assert "donald" not in r.semantic_query.lower() and "donald" not in r.keyword_query.lower()


def test_filler_never_becomes_a_query_term() -> None:
    r = reformulate(
        "Oh interesting, and the queen?",
        [("Tell me about bees", "Bees live in hives with a queen.")],
    )
    assert (
        "interesting" not in r.keyword_query
        and "interesting" not in r.semantic_query.split("(")[-1]
    )
    assert "queen" in r.keyword_query


def test_a_short_question_in_other_terms_is_a_new_topic() -> None:
    r = reformulate(
        "what hydration should a beginner use?",
        [("What makes a will legally binding?", "Two witnesses.")],
        anchors=(7, 8),
        best=0.6,
        margin=0.1,
    )
    assert r.topic_shift and not r.is_follow_up
    assert r.context_need == NEW_TOPIC_NEED


def test_a_new_topic_the_question_alone_cannot_find_keeps_more_context() -> None:
    """New words that find nothing close on their own ("Major characters" after a talk about a
    novel) may still lean on the conversation: the need grows as the question's own best match
    weakens, and stays below the question's own weight and without anchoring."""
    earlier = [("What makes a will legally binding?", "Two witnesses.")]
    needs = [
        reformulate(
            "what hydration should a beginner use?", earlier, anchors=(7, 8), best=best
        ).context_need
        for best in (0.6, 0.45, 0.4, 0.35, 0.2)
    ]
    assert needs == sorted(needs) and needs[0] == needs[1] == NEW_TOPIC_NEED
    assert needs[-1] == NEW_TOPIC_NEED + WEAK_NEED and needs[2] == pytest.approx(
        NEW_TOPIC_NEED + WEAK_NEED / 2
    )
    weak = reformulate("what hydration should a beginner use?", earlier, anchors=(7, 8), best=0.2)
    assert weak.topic_shift and not weak.is_follow_up and "finds little" in weak.reasoning


def test_a_short_question_in_the_conversations_terms_continues_it() -> None:
    r = reformulate(
        "what age must a witness be?",
        [("What makes a will legally binding?", "Two competent witnesses.")],
        anchors=(7, 8),
    )
    assert r.is_follow_up and not r.topic_shift and r.context_need > 0.5


def test_a_confident_question_needs_less_context() -> None:
    unsure = reformulate(
        "what age must a witness be?", [("Is a will binding?", "Yes.")], anchors=(7, 8)
    )
    sure = reformulate(
        "what age must a witness be?",
        [("Is a will binding?", "Yes.")],
        anchors=(7, 8),
        best=0.8,
        margin=0.2,
    )
    assert sure.context_need < unsure.context_need
    # several documents answering it closely (no lead of one over the next) is standing alone too
    several = reformulate(
        "what age must a witness be?",
        [("Is a will binding?", "Yes.")],
        anchors=(7, 8),
        best=0.8,
        margin=0.0,
    )
    assert several.context_need == sure.context_need < unsure.context_need
    pointing = reformulate(
        "what age must its witness be?", [("Is a will binding?", "Yes.")], best=0.7, margin=0.0
    )
    assert pointing.is_follow_up and pointing.context_need == pytest.approx(0.3)


def test_meta_requests_keep_the_last_query() -> None:
    data = ReformulationInput(
        question="why?",
        last=Exchange("Why do bees matter?", "They pollinate."),
        last_semantic_query="Why do bees matter?",
        last_keyword_query="bees",
    )
    r = HeuristicReformulator(CORPUS, params=DEFAULT.followup).reformulate(data, VECTOR)
    assert (r.is_meta, r.semantic_query, r.keyword_query, r.context_need) == (
        True,
        "Why do bees matter?",
        "bees",
        1.0,
    )


# --- the model's reading ----------------------------------------------------------------------

FOLLOW_UP_DATA = ReformulationInput(
    question="and the queen?", last=Exchange("Tell me about bees", "Bees live in hives.")
)


def test_the_models_reading_is_validated_and_its_prompt_is_small() -> None:
    chat = FakeChat(
        json_replies=[
            {
                "semantic_query": "  What does the queen\nbee do? ",
                "is_follow_up": True,
                "is_meta": False,
                "topic_shift": False,
            }
        ]
    )
    reading = OllamaReformulator(chat, params=DEFAULT.answer).read(FOLLOW_UP_DATA)
    assert reading == ModelReading("What does the queen bee do?", True, False, False, "ollama:fake")
    prompt = chat.sent[0][-1]["content"]
    assert prompt.startswith(
        "RECENT EXCHANGE:\nUser: Tell me about bees\nAssistant: Bees live in hives."
    )
    assert prompt.endswith("LATEST USER MESSAGE: and the queen?") and "KEYWORDS" not in prompt


def test_a_blank_rewrite_is_no_reading() -> None:
    chat = FakeChat(
        json_replies=[
            {"semantic_query": "  ", "is_follow_up": True, "is_meta": False, "topic_shift": False}
        ]
    )
    with pytest.raises(BackendUnavailable, match="empty semantic_query"):
        OllamaReformulator(chat, params=DEFAULT.answer).read(FOLLOW_UP_DATA)


def test_a_failing_model_is_a_notice_and_no_reading() -> None:
    window = select_window([message(1, "user", "Tell me about bees", [1, 0, 0, 0])], VECTOR, 0)
    pending = ask_model(
        OllamaReformulator(
            FakeChat(json_replies=[BackendUnavailable("timed out after 3s")]), params=DEFAULT.answer
        ),
        ReformulationInput("and the queen?", window.last),
    )
    assert pending is not None
    assert pending.result() == (
        None,
        "Ollama reformulation failed (timed out after 3s); using the heuristic reformulator",
    )


def test_a_first_question_is_never_sent_for_a_rewrite() -> None:
    chat = FakeChat()
    assert (
        ask_model(
            OllamaReformulator(chat, params=DEFAULT.answer),
            ReformulationInput("Why do bees matter?", select_window([], VECTOR, 0).last),
        )
        is None
    )
    assert chat.sent == []


# --- the plan ----------------------------------------------------------------------------------

SETTINGS = Settings()


def turn_context(
    question: str = "what age must a witness be?",
    *,
    anchors: frozenset[int] = frozenset({3}),
    best: float = 0.3,
    margin: float = 0.0,
    searching: Lineage | None = None,
) -> TurnContext:
    history = (
        message(1, "user", "Is a will binding?", [1, 0, 0, 0]),
        message(2, "assistant", "Yes.", [1, 0, 0, 0]),
    )
    return TurnContext(
        question=question,
        vector=VECTOR,
        turn=2,
        history=history,
        window=select_window(list(history), VECTOR, 0),
        last=searching,
        searching=searching,
        topic_questions=("Is a will binding?",),
        anchors=Anchors(anchors, ("wills.md",), (), (30, 31), frozenset({30})),
        probe=Probe((31, 40), {31: best, 40: best - margin}, best, margin),
    )


def reformulation(
    need: float, *, follow_up: bool = True, meta: bool = False, shift: bool = False
) -> Reformulation:
    return Reformulation(
        semantic_query="what age must a witness be? (will)",
        keyword_query="witness, age, will",
        is_follow_up=follow_up,
        is_meta=meta,
        topic_shift=shift,
        reasoning="r",
        reformulator="heuristic",
        context_need=need,
    )


def test_the_questions_own_lists_always_weigh_in_full() -> None:
    chosen = plan(turn_context(), reformulation(0.5), SETTINGS)
    weights = {q.name: q.weight for q in chosen.queries}
    assert weights["question/vector"] == 0.7 and weights["question/fts"] == 0.3
    assert weights["context/vector"] == pytest.approx(0.35) and weights[
        "context/fts"
    ] == pytest.approx(0.15)
    assert weights["previous/vector"] == pytest.approx(0.35)
    assert max(w for n, w in weights.items() if n.endswith("vector")) == weights["question/vector"]
    assert chosen.kind == "anchored_search" and chosen.anchoring.boost == pytest.approx(0.15)
    assert chosen.anchoring.exclude == frozenset({30}) and chosen.anchoring.reach == 10


def test_the_previous_question_joins_as_it_was_understood() -> None:
    """ "Does it need witnesses?" was understood as "Does a will need witnesses?": that, not the
    bare pronoun, goes with the next question; a question typed differently goes as typed."""
    history = (
        message(1, "user", "Does it need witnesses?", [1, 0, 0, 0]),
        message(2, "assistant", "Two.", [1, 0, 0, 0]),
    )
    said = Reformulation(
        "Does a will need witnesses? (testator, signature)",
        "will",
        True,
        False,
        False,
        "r",
        "heuristic",
        1.0,
    )
    last = Lineage("Does it need witnesses?", 1, said, "search")
    context = replace(
        turn_context(), history=history, window=select_window(list(history), VECTOR, 0), last=last
    )
    queries = {q.name: q.query for q in plan(context, reformulation(0.5), SETTINGS).queries}
    assert queries["previous/vector"] == "Does a will need witnesses? what age must a witness be?"
    other = replace(context, last=replace(last, question="Something else?"))
    queries = {q.name: q.query for q in plan(other, reformulation(0.5), SETTINGS).queries}
    assert queries["previous/vector"] == "Does it need witnesses? what age must a witness be?"


def test_a_standalone_question_has_only_its_own_lists() -> None:
    chosen = plan(turn_context(), reformulation(0.0, follow_up=False, shift=True), SETTINGS)
    assert [q.name for q in chosen.queries] == ["question/vector", "question/fts"]
    assert chosen.kind == "search" and chosen.anchoring.boost == 0.0


def test_a_confident_first_hit_is_protected() -> None:
    assert plan(turn_context(best=0.6, margin=0.1), reformulation(1.0), SETTINGS).protect == 31
    assert plan(turn_context(best=0.6, margin=0.01), reformulation(1.0), SETTINGS).protect is None
    assert plan(turn_context(best=0.4, margin=0.2), reformulation(1.0), SETTINGS).protect is None


def test_a_meta_request_reuses_and_searches() -> None:
    last = Lineage("Is a will binding?", 1, reformulation(0.0), "search")
    chosen = plan(turn_context(searching=last), reformulation(1.0, meta=True), SETTINGS)
    assert chosen.kind == "reuse" and chosen.reuse and len(chosen.queries) >= 3


def test_without_fusion_one_query_per_index_and_the_full_boost() -> None:
    chosen = plan(turn_context(), reformulation(0.2), SETTINGS, Ablations(fusion=False))
    assert [q.name for q in chosen.queries] == ["context/vector", "keywords/fts"]
    assert chosen.anchoring.boost == SETTINGS.anchor_boost and chosen.protect is None


def test_no_anchoring_when_switched_off() -> None:
    assert (
        plan(turn_context(), reformulation(1.0), SETTINGS, Ablations(source_anchoring=False)).kind
        == "search"
    )
    assert plan(turn_context(anchors=frozenset()), reformulation(1.0), SETTINGS).kind == "search"


# --- the answer stage --------------------------------------------------------------------------


def lineage_with(chunks: list[RetrievedChunk], plan_kind: str = "search") -> Lineage:
    return Lineage("How do hives work?", 1, reformulation(0.0), plan_kind, chunks=tuple(chunks))  # type: ignore[arg-type]


def retrieved(rank: int, chunk_id: int) -> RetrievedChunk:
    return RetrievedChunk(rank, chunk_id, 1, "bees.md", "", 1, 1, 0.6, 1.0, 0.0, 1.0, False, False)


STORED = (
    answering.answers.Source(1, StoredChunk(11, 1, "bees.md", "Bees", "Hives", CHUNKS[1], 0)),
    answering.answers.Source(2, StoredChunk(12, 1, "bees.md", "Bees", "Queen", CHUNKS[3], 1)),
)


def inputs() -> answering.AnswerInputs:
    history = (message(1, "user", "How do hives work?", [1, 0, 0, 0]),)
    return answering.AnswerInputs(
        lineage_with([retrieved(1, 11), retrieved(2, 12)]),
        select_window(list(history), VECTOR, 0),
        STORED,
    )


def test_a_streamed_answer_marks_its_citations() -> None:
    tokens: list[str] = []
    answered = answering.answer(
        inputs(),
        backend=FakeChat(streams=[["Hives have a queen ", "[2]."]]),
        corpus=CORPUS,
        settings=SETTINGS,
        on_token=tokens.append,
        on_fallback=lambda n: None,
    )
    assert (answered.text, answered.mode, answered.used) == (
        "Hives have a queen [2].",
        "llm",
        frozenset({12}),
    )
    assert tokens == ["Hives have a queen ", "[2]."]


def test_a_failed_stream_falls_back_to_an_extractive_answer_with_one_notice() -> None:
    said: list[str] = []
    answered = answering.answer(
        inputs(),
        backend=FakeChat(streams=[BackendUnavailable("HTTP 500: boom")]),
        corpus=CORPUS,
        settings=SETTINGS,
        on_token=None,
        on_fallback=said.append,
    )
    assert answered.mode == "extractive" and "[1]" in answered.text
    assert (
        said
        == list(answered.notices)
        == ["Ollama answer failed (HTTP 500: boom); using an extractive answer"]
    )


def test_without_a_backend_the_answer_is_extractive() -> None:
    answered = answering.answer(
        inputs(),
        backend=None,
        corpus=CORPUS,
        settings=SETTINGS,
        on_token=None,
        on_fallback=lambda n: None,
    )
    assert answered.mode == "extractive" and answered.used and answered.used <= {11, 12}


# --- the lineage -------------------------------------------------------------------------------


def test_lineage_round_trips_and_reads_the_old_format() -> None:
    lineage = Lineage(
        "q",
        2,
        reformulation(0.5),
        "anchored_search",
        (1, 2),
        0.5,
        (),
        (7,),
        ("wills.md",),
        (),
        (retrieved(1, 11),),
        "extractive",
    )
    assert Lineage.from_dict(lineage.to_dict()) == lineage
    old = {
        "question": "q",
        "turn": 2,
        "plan": "anchored_search",
        "anchor_documents": [7],
        "anchor_paths": ["wills.md"],
        "reformulation": reformulation(0.5).to_dict(),
        "chunks": [retrieved(1, 11).to_dict()],
    }
    read = Lineage.from_dict(old)
    assert (read.anchor_document_ids, read.anchor_documents, read.version) == (
        (7,),
        ("wills.md",),
        2,
    )


def test_a_new_subject_is_not_anchored_on_the_old_sources() -> None:
    new_subject = Reformulation(
        "what about courts?", "courts", True, False, False, "r", "heuristic", 0.9, new_subject=True
    )
    chosen = plan(turn_context(), new_subject, SETTINGS)
    assert chosen.kind == "search" and chosen.anchoring.boost == 0.0
    assert {q.name for q in chosen.queries} >= {"context/vector", "previous/vector"}, (
        "its context still counts"
    )


def test_the_prompt_names_a_pdf_passage_with_its_pages() -> None:
    chunk = StoredChunk(
        21, 2, "guide.pdf", "Guide", "Timeouts", "Set timeout=10.", 0, page_start=3, page_end=4
    )
    assert '<passage id="1" source="guide.pdf pp. 3-4 — Timeouts">' in answering.answers.passage(
        answering.answers.Source(1, chunk)
    )


def test_a_question_naming_the_page_that_leads_answers_from_that_page() -> None:
    """ "What does the FAQ page say about ...?" is answered from the FAQ: another page's sentence
    on the same subject, scoring higher, is not what that page says."""
    faq = (
        "As of Widget 2.0, Widget no longer supports Python 2.7. Users who have been unable to "
        "migrate should pin to widget<2.0."
    )
    index = (
        "Widget supports all officially supported versions of Python 2 and Python 3. Widget "
        "officially supports Python 3.10 and newer."
    )
    question = "what does the FAQ page say about Python 2 support?"
    chunks = (
        RetrievedChunk(1, 21, 5, "faq.md", "Python 2", 1, 1, 0.6, 1.0, 0.0, 1.0, False, False),
        RetrievedChunk(2, 22, 6, "index.md", "", 2, 2, 0.6, 0.9, 0.0, 0.9, False, False),
    )
    sources = (
        answering.answers.Source(1, StoredChunk(21, 5, "faq.md", "FAQ", "Python 2", faq, 0)),
        answering.answers.Source(2, StoredChunk(22, 6, "index.md", "Widget", "", index, 0)),
    )
    window = select_window([message(1, "user", question, [1, 0, 0, 0])], VECTOR, 0)
    read = replace(
        reformulation(0.0, follow_up=False),
        semantic_query=question,
        keyword_query="faq, python, support",
    )
    lineage = Lineage(question, 1, read, "search", chunks=chunks)  # type: ignore[arg-type]
    settings = replace(SETTINGS, extractive_sentences=2)

    def answered(named: frozenset[int]) -> str:
        inputs = answering.AnswerInputs(lineage, window, sources, named=named)
        return answering.extractive_answer(inputs, CORPUS, settings).text

    assert "[2]" in answered(frozenset()) and "pin to widget<2.0" not in answered(frozenset())
    named = answered(frozenset({5}))
    assert "pin to widget<2.0" in named and "[2]" not in named
