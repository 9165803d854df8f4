"""`read_turn` and `retrieve` as unit tests: an in-memory migrated database (sqlite-vec loaded
through pysqlite3, FTS5) and a fake embedder (hashed bag of words, the real model's dimension).
No database file, no model: the whole file runs in about a second."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

import pytest
from fakes import HashedWords
from helpers import memory_library
from sqlite_utils import Database

from ragchat.config import Settings
from ragchat.conversation.models import (
    Index,
    Lineage,
    QueryList,
    Reformulation,
    RetrievedChunk,
    Source,
)
from ragchat.conversation.plan import Ablations, plan
from ragchat.conversation.reading import LoadedChunks, TurnContext, read_turn, window_of
from ragchat.conversation.retrieve import retrieve
from ragchat.conversation.searching import TurnSearch
from ragchat.params import DEFAULT, with_values
from ragchat.store import library, sessions

SETTINGS = Settings(ollama="off")
DEPTH = max(SETTINGS.candidates, SETTINGS.top_k)
DOCUMENTS = {
    "wills.md": (
        "Wills",
        [
            (
                "Witnesses",
                "A will needs two witnesses who sign it in the presence of the testator.",
            ),
            (
                "Witnesses",
                "A witness must be at least fourteen years old and competent to give evidence.",
            ),
            ("Revoking", "A testator may revoke a will by destroying it or by making a new will."),
        ],
    ),
    "tax.md": (
        "Tax",
        [
            (
                "Income",
                "Income tax is paid on salary, wages and interest earned during the tax year.",
            ),
            ("Deadlines", "The tax return is due at the end of October for individuals."),
        ],
    ),
    "garden.md": (
        "Garden",
        [
            ("Compost", "Compost needs green waste, brown leaves, air and water to break down."),
            ("Watering", "Water the vegetable beds early in the morning in dry weather."),
        ],
    ),
}


@pytest.fixture
def embedder() -> HashedWords:
    return HashedWords()


@pytest.fixture
def db(embedder: HashedWords) -> Iterator[Database]:
    db = memory_library(DOCUMENTS, embedder)
    yield db
    db.close()


def chunk_of(db: Database, text: str) -> int:
    return next(
        chunk.id
        for chunk in library.chunks_by_ids(db, range(1, 100)).values()
        if chunk.text.startswith(text)
    )


def context(db: Database, embedder: HashedWords, question: str, session: str = "s") -> TurnContext:
    vector = embedder.embed_query(question)
    opened = sessions.open_turn(db, session, question, embedding=vector)
    window = window_of(
        opened.history, vector, SETTINGS.history_window, DEFAULT.followup.window_similarity
    )
    search = TurnSearch(
        db,
        embedder,
        depth=DEPTH,
        embed_chars=DEFAULT.answer.embed_chars,
        embedded={question: vector},
    )
    found = read_turn(db, question, vector, opened.history, window=window, search=search)
    return replace(found, turn=opened.number)


def answered(db: Database, session: str, question: str, used: list[int]) -> None:
    """A turn of `session` whose answer stood on the chunks `used`."""
    sessions.open_turn(db, session, question)
    stored = library.chunks_by_ids(db, used)
    chunks = tuple(
        RetrievedChunk(
            rank=rank,
            chunk_id=i,
            document_id=stored[i].document_id,
            document=stored[i].path,
            heading=stored[i].heading,
            vector_rank=rank,
            fts_rank=None,
            similarity=0.5,
            rrf=0.5,
            boost=0.0,
            score=0.5,
            anchored=False,
            reused=False,
            used=True,
        )
        for rank, i in enumerate(used, start=1)
    )
    lineage = Lineage(
        question=question, turn=1, reformulation=standalone(question), plan="search", chunks=chunks
    )
    sessions.add_message(
        db,
        sessions.session_id(db, session),
        "assistant",
        "Two witnesses.",
        lineage=lineage.to_dict(),
    )


def standalone(question: str, **changes: object) -> Reformulation:
    reading = Reformulation(
        semantic_query=question,
        keyword_query=question,
        is_follow_up=False,
        is_meta=False,
        topic_shift=False,
        reasoning="test",
        reformulator="test",
    )
    return replace(reading, **changes)


# --- read_turn ---------------------------------------------------------------------------------


def test_a_first_question_has_no_anchors_and_probes_the_vectors(
    db: Database, embedder: HashedWords
) -> None:
    found = context(db, embedder, "how old must a witness be?")
    assert found.last is None and found.searching is None and found.turn == 1
    assert found.anchors.document_ids == frozenset() and found.anchors.chunk_ids == ()
    assert found.probe.ids[0] == chunk_of(db, "A witness must be")
    assert found.probe.best == pytest.approx(found.probe.similarity[found.probe.ids[0]])
    assert 0 < found.probe.margin <= found.probe.best


def test_the_last_answer_anchors_the_next_turn_on_its_documents(
    db: Database, embedder: HashedWords
) -> None:
    used = chunk_of(db, "A will needs two witnesses")
    answered(db, "s", "does a will need witnesses?", [used])
    found = context(db, embedder, "how old must they be?")
    wills = library.document_by_source(db, "/docs/wills.md")
    assert wills is not None and found.anchors.document_ids == {wills["id"]}
    assert found.anchors.paths == ("wills.md",) and found.anchors.missing == ()
    assert set(found.anchors.chunk_ids) == set(library.chunk_ids_of_documents(db, [wills["id"]]))
    # the section the answer drew on (both "Witnesses" chunks), not the one it did not
    assert found.anchors.said == {used, chunk_of(db, "A witness must be")}
    assert found.last is not None and found.last.question == "does a will need witnesses?"
    assert found.topic_questions == ("does a will need witnesses?",)
    assert set(found.anchors.chunk_ids) <= set(found.probe.ids), (
        "anchor chunks are ranked, even far down"
    )


def test_a_removed_anchor_document_is_reported_missing(db: Database, embedder: HashedWords) -> None:
    answered(db, "s", "does a will need witnesses?", [chunk_of(db, "A will needs two witnesses")])
    wills = library.document_by_source(db, "/docs/wills.md")
    assert wills is not None
    library.delete_document(db, wills["id"])
    found = context(db, embedder, "how old must they be?")
    assert found.anchors.document_ids == frozenset() and found.anchors.missing == ("wills.md",)
    assert found.notices == ("anchor document(s) gone since the last turn: wills.md",)


def test_a_turns_chunks_are_read_from_the_database_once(db: Database) -> None:
    statements: list[str] = []
    db.conn.set_trace_callback(statements.append)
    loaded = LoadedChunks(db)
    first = loaded.get([1, 2, 999])
    again = loaded.get([2, 1, 999, 3])
    reads = [s for s in statements if "FROM chunks c WHERE c.id IN" in s]
    assert sorted(first) == [1, 2] and list(again) == [2, 1, 3]
    assert len(reads) == 2, "the second call reads only chunk 3 (999 is known not to exist)"
    assert again[1] is first[1]


# --- retrieve ----------------------------------------------------------------------------------


def test_a_standalone_question_is_searched_through_its_probe(
    db: Database, embedder: HashedWords
) -> None:
    found = context(db, embedder, "when is the tax return due?")
    chosen = plan(found, standalone(found.question), SETTINGS)
    assert [(q.source, q.index, q.as_typed) for q in chosen.queries] == [
        (Source.QUESTION, Index.VECTOR, True),
        (Source.QUESTION, Index.FTS, False),
    ]
    embedder.queries.clear()
    retrieval = retrieve(db, SETTINGS, chosen, found)
    assert embedder.queries == [], "the question's vector list is its probe: nothing embedded again"
    assert retrieval.chunks[0].chunk_id == chunk_of(db, "The tax return is due")
    assert retrieval.chunks[0].document == "tax.md" and retrieval.chunks[0].vector_rank == 1
    assert [c.rank for c in retrieval.chunks] == list(range(1, len(retrieval.chunks) + 1))
    assert set(retrieval.stored) == {c.chunk_id for c in retrieval.chunks}
    assert retrieval.best == pytest.approx(found.probe.best, abs=1e-4)


def test_context_lists_are_embedded_and_weighted_by_the_need(
    db: Database, embedder: HashedWords
) -> None:
    answered(db, "s", "does a will need witnesses?", [chunk_of(db, "A will needs two witnesses")])
    found = context(db, embedder, "how old must they be?")
    reading = standalone(
        found.question,
        semantic_query="how old must witnesses of a will be?",
        keyword_query="witness age",
        is_follow_up=True,
        context_need=0.5,
    )
    chosen = plan(found, reading, SETTINGS)
    names = {q.name: q for q in chosen.queries}
    assert names["context/vector"].weight == pytest.approx(SETTINGS.vector_weight * 0.5)
    assert chosen.kind == "anchored_search"
    embedder.queries.clear()
    retrieval = retrieve(db, SETTINGS, chosen, found)
    assert "how old must witnesses of a will be?" in embedder.queries
    assert found.question not in embedder.queries
    top = retrieval.chunks[0]
    assert top.chunk_id == chunk_of(db, "A witness must be") and top.document == "wills.md"
    assert chosen.anchoring.documents == found.anchors.document_ids
    assert top.chunk_id in chosen.anchoring.exclude and top.anchored, (
        "a section already said, ranked first without the boost, keeps it (plan.said_keep)"
    )
    said_below = [c for c in retrieval.chunks[1:] if c.chunk_id in chosen.anchoring.exclude]
    assert said_below and not any(c.anchored for c in said_below), "the others get no boost"


def test_a_meta_request_puts_the_last_answers_chunks_first(
    db: Database, embedder: HashedWords
) -> None:
    used = chunk_of(db, "Compost needs")
    answered(db, "s", "how do I make compost?", [used])
    found = context(db, embedder, "tell me more")
    chosen = plan(
        found,
        standalone(found.question, is_meta=True, is_follow_up=True, context_need=1.0),
        SETTINGS,
    )
    assert chosen.reuse and chosen.kind == "reuse"
    retrieval = retrieve(db, SETTINGS, chosen, found)
    assert retrieval.chunks[0].chunk_id == used and retrieval.chunks[0].reused
    assert not any(c.reused for c in retrieval.chunks[1:])
    assert used in retrieval.stored


def test_one_query_per_index_reports_the_similarity_to_its_own_query(
    db: Database, embedder: HashedWords
) -> None:
    found = context(db, embedder, "watering")
    reading = standalone(
        found.question, semantic_query="when to water vegetable beds", keyword_query="water beds"
    )
    chosen = plan(found, reading, SETTINGS, Ablations(fusion=False))
    assert [q.name for q in chosen.queries] == [
        "context/vector",
        "keywords/fts",
    ] and not chosen.fusion
    retrieval = retrieve(db, SETTINGS, chosen, found)
    top = retrieval.chunks[0]
    assert top.chunk_id == chunk_of(db, "Water the vegetable beds")
    own = float(
        embedder.vector("when to water vegetable beds")
        @ embedder.vector("Water the vegetable beds early in the morning in dry weather.")
    )
    assert top.similarity == pytest.approx(own, abs=1e-4)
    assert retrieval.extra == (), "the baselines' path searches no titles"


def test_a_title_the_question_names_joins_the_fusion_as_its_own_list(
    db: Database, embedder: HashedWords
) -> None:
    found = context(db, embedder, "Garden?")  # all its words name the document
    retrieval = retrieve(db, SETTINGS, plan(found, standalone(found.question), SETTINGS), found)
    assert [(q.source, q.index, q.name) for q in retrieval.extra] == [
        (Source.QUESTION, Index.TITLE, "question/title")
    ]
    assert retrieval.chunks[0].document == "garden.md"


# --- query lists as lineage stores them --------------------------------------------------------


def test_query_lists_are_stored_by_name_and_read_back_typed() -> None:
    stored = {"name": "previous/fts", "query": "a b", "weight": 0.15}
    assert QueryList.from_dict(stored) == QueryList(Source.PREVIOUS, Index.FTS, "a b", 0.15)
    assert QueryList.from_dict(stored).to_dict() == stored
    names = [
        "question/vector",
        "question/fts",
        "context/vector",
        "context/fts",
        "keywords/fts",
        "model/vector",
        "model/fts",
        "previous/vector",
        "previous/fts",
        "question/title",
    ]
    assert [
        QueryList.from_dict({"name": n, "query": "", "weight": 1.0}).name for n in names
    ] == names
    with pytest.raises(ValueError, match="unknown query list 'elsewhere/vector'"):
        QueryList.from_dict({"name": "elsewhere/vector", "query": "", "weight": 1.0})


# --- the anchor boost and the question's own first hits (issue 28, family 5) -------------------


def test_the_boost_keeps_a_weak_questions_own_first_hit_in_place(
    db: Database, embedder: HashedWords
) -> None:
    """A follow-up that finds little alone (its best chunk far below a confident cosine) keeps
    its own first hit where the un-boosted fusion put it: the anchor document's chunks (boosted
    with no margin here, so they pass anything) take the places below it, not its place."""
    answered(db, "s", "does a will need witnesses?", [chunk_of(db, "A will needs two witnesses")])
    found = context(db, embedder, "and in october?")
    assert found.probe.best < DEFAULT.plan.confident, "the question finds little alone"
    reading = standalone(found.question, is_follow_up=True, context_need=1.0)
    loose = SETTINGS.replace(
        anchor_boost=1.0,
        params=with_values(DEFAULT, ["plan.anchor_margin=1.0", "fusion.own_within=1"]),
    )
    chosen = plan(found, reading, loose)
    assert chosen.kind == "anchored_search"
    deadline = chunk_of(db, "The tax return is due")
    own = [q for q in chosen.queries if q.source is Source.QUESTION]
    assert own and all(
        found.searches().vector(q.query).ids[0] == deadline
        if q.index is Index.VECTOR
        else found.searches().fts(q.query).ids[0] == deadline
        for q in own
    ), "the question's own lists both rank the deadline first"
    retrieval = retrieve(db, loose, chosen, found)
    assert retrieval.chunks[0].chunk_id == deadline
    assert retrieval.chunks[1].document == "wills.md" and retrieval.chunks[1].anchored
