"""The turn's searches (`ragchat/conversation/searching.py`): each query runs once a turn, every
stage is handed the same list, and an un-anchored turn's lists carry no anchor chunks but the
question's own vector list.

Whole turns through `Conversation.ask` on a small library in an in-memory database (real SQLite
with FTS5 and sqlite-vec) with a hashed-words embedder, the store's searches counted; the lists
themselves against the hybrid rankings on the sample library embedded with the real model."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fakes import FakeChat, HashedWords
from helpers import memory_library
from sqlite_utils import Database

from ragchat.config import Settings
from ragchat.conversation import retrieve as retrieve_module
from ragchat.conversation.models import Lineage
from ragchat.conversation.searching import TurnSearch
from ragchat.conversation.turn import Conversation
from ragchat.embed import Embedder
from ragchat.evaluate.strategies import BASELINE, FixedQuery, last_turn_query
from ragchat.params import DEFAULT
from ragchat.search.fusion import RankedList
from ragchat.search.hybrid import fts_ranking, vector_ranking
from ragchat.store import library, vectors
from ragchat.store.db import open_db
from ragchat.store.library import Scope

DOCUMENTS = {
    "wills.md": (
        "Wills",
        [
            (
                "Witnesses",
                "A will needs two witnesses who sign it in the presence of the testator.",
            ),
            ("Witnesses", "A witness must be at least fourteen years old and competent."),
            ("Revoking", "A testator may revoke a will by destroying it or by making a new will."),
            ("Executors", "An executor pays the debts of the estate and hands the rest to heirs."),
        ],
    ),
    "tax.md": (
        "Tax",
        [
            ("Income", "Income tax is paid on salary, wages and interest earned in the tax year."),
            ("Deadlines", "The tax return is due at the end of October for individuals."),
            ("Refunds", "A refund of overpaid tax is paid into the bank account on file."),
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
SHALLOW = Settings(ollama="off", candidates=2, top_k=2)  # a depth of 2: anchors fall below it


@pytest.fixture
def words() -> HashedWords:
    return HashedWords()


@pytest.fixture
def db(words: HashedWords) -> Iterator[Database]:
    db = memory_library(DOCUMENTS, words)
    yield db
    db.close()


def chunks_of(db: Database, path: str) -> set[int]:
    document = library.document_by_source(db, f"/docs/{path}")
    assert document is not None
    return set(library.chunk_ids_of_documents(db, [document["id"]]))


class Searches:
    """Every vector and keyword search the store runs, with its arguments, and each list the
    fusion is handed."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runs: Counter[tuple[Any, ...]] = Counter()
        self.fused: list[list[RankedList]] = []
        self._spy(
            monkeypatch, vectors, "vector_search", lambda db, v, limit: ("v", v.tobytes(), limit)
        )
        self._spy(
            monkeypatch,
            library,
            "fts_search",
            lambda db, match, limit, only_ids=None: (
                "fts",
                match,
                limit,
                None if only_ids is None else tuple(only_ids),
            ),
        )
        real_fuse = retrieve_module.fuse

        def fuse(lists: list[RankedList], *args: Any, **kwargs: Any) -> Any:
            self.fused.append(list(lists))
            return real_fuse(lists, *args, **kwargs)

        monkeypatch.setattr(retrieve_module, "fuse", fuse)

    def _spy(
        self,
        monkeypatch: pytest.MonkeyPatch,
        module: object,
        name: str,
        key: Callable[..., tuple[Any, ...]],
    ) -> None:
        real = getattr(module, name)

        def spy(*args: Any, **kwargs: Any) -> Any:
            found = key(*args, **kwargs)
            if found[2]:  # a limit of 0 searches nothing (the extras alone are ranked)
                self.runs[found] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, spy)

    def repeated(self) -> list[tuple[Any, ...]]:
        return [run for run, count in self.runs.items() if count > 1]


def turn(conversation: Conversation, question: str) -> Lineage:
    return conversation.ask(question).lineage


def question_list(lists: list[RankedList]) -> tuple[int, ...]:
    return next(item.ids for item in lists if item.name == "question/vector")


def test_only_an_anchored_turns_other_lists_carry_the_anchor_chunks(
    db: Database, words: HashedWords, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After an answer from wills.md, a question on a new subject is not anchored: only the
    question's own vector list ranks the will's chunks below its top (a vote kept on every turn,
    retrieve._always_below), no other list does; a follow-up is anchored: every anchor chunk is
    ranked below the top of its lists."""
    wills = chunks_of(db, "wills.md")
    searches = Searches(monkeypatch)
    for session, question, plan in (
        ("new", "when is the tax return due?", "search"),
        ("follow", "how old must they be?", "anchored_search"),
    ):
        conversation = Conversation(db, words, SHALLOW, session)
        first = turn(conversation, "does a will need witnesses?")
        assert {c.document for c in first.chunks if c.used} == {"wills.md"}
        second = turn(conversation, question)
        assert second.plan == plan
        lists = searches.fused[-1]
        ranked = question_list(lists)
        assert wills <= set(ranked) and len(ranked) > 2, "the top, then the anchor chunks"
        others = [item for item in lists if item.name != "question/vector"]
        if plan == "search":
            assert all(len(item.ids) <= 2 for item in others), [(i.name, i.ids) for i in others]
            assert not any(wills & set(item.ids[2:]) for item in others), "none below the top"


@pytest.mark.parametrize("model", [False, True], ids=["heuristic", "model"])
def test_each_query_runs_once_a_turn_and_each_text_is_embedded_once(
    db: Database, words: HashedWords, monkeypatch: pytest.MonkeyPatch, model: bool
) -> None:
    """A follow-up: the question's probe, the plan's lists (the question's, the context's, the
    previous question's) and the closeness of the question as the turn read it each search once;
    with a model's reading too the keyword search run while the model thinks and the rewrite's
    probe, whose lists the plan is handed."""
    rewrite = {
        "semantic_query": "how old must a witness to a will be",
        "is_follow_up": True,
        "is_meta": False,
        "topic_shift": False,
    }
    conversation = Conversation(
        db,
        words,
        Settings(ollama="on" if model else "off"),
        "s",
        backend=FakeChat(json_replies=[rewrite]) if model else None,
        recorded_answer="Two witnesses.",
    )
    turn(conversation, "does a will need witnesses?")
    searches = Searches(monkeypatch)
    words.queries.clear()
    second = turn(conversation, "how old must they be?")
    lists = {q.name for q in second.queries}
    own = {"question/vector", "question/fts"}
    assert lists == (
        own | {"model/vector", "model/fts"}
        if model
        else own | {"context/vector", "context/fts", "previous/vector", "previous/fts"}
    )
    assert second.reformulation.semantic_query != second.question, "its subject is searched too"
    assert searches.repeated() == [], "no search runs twice in one turn"
    assert sorted(words.queries) == sorted(set(words.queries)), "no text embedded twice"


def test_the_baselines_single_query_is_the_probe_not_a_second_search(
    db: Database, words: HashedWords, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`last-turn` sends the question as typed as its one query: its vector list is the probe's."""
    searches = Searches(monkeypatch)
    conversation = Conversation(
        db,
        words,
        Settings(ollama="off"),
        "s",
        ablations=BASELINE,
        reformulator=FixedQuery("last-turn", last_turn_query),
    )
    lineage = turn(conversation, "when is the tax return due?")
    assert [q.name for q in lineage.queries] == ["context/vector", "keywords/fts"]
    assert searches.repeated() == []
    assert [run[2] for run in searches.runs if run[0] == "v"] == [40]


def test_a_query_asked_again_is_handed_the_same_list(db: Database, words: HashedWords) -> None:
    search = TurnSearch(db, words, depth=2, embed_chars=DEFAULT.answer.embed_chars)
    wills = tuple(sorted(chunks_of(db, "wills.md")))
    revoke = "how do I revoke a will?"
    first = search.vector(revoke, wills)
    assert search.vector(revoke, wills) == first
    assert search.vector(revoke).ids == first.ids[:2], "without extras: the same search's top"
    keywords = search.fts("revoke will")
    assert search.fts("revoke will", wills).ids[: len(keywords.ids)] == keywords.ids
    assert [(r.kind, r.depth, bool(r.extra)) for r in search.runs] == [
        ("vector", 2, False),
        ("vector", 2, True),
        ("fts", 2, False),
        ("fts", 2, True),
    ]
    assert words.queries == ["how do I revoke a will?"]


# --- the same lists as the hybrid rankings, on the sample library and the real model -----------


QUERIES = (
    "what age must a witness be",
    "how do I feed a sourdough starter",
    "heat pump efficiency in cold weather",
    "revoke",
)


def test_the_lists_are_the_hybrid_rankings_of_each_query(
    library_db: Path, embedder: Embedder
) -> None:
    """Each list, asked with and without the anchor chunks, scoped or not, at a shallow and the
    chat's depth, is what `vector_ranking` and `fts_ranking` give for the query (as the turn
    searched before it had a search object), and each query ran once."""
    db = open_db(library_db)
    try:
        documents = {row["path"]: row["id"] for row in db.query("SELECT id, path FROM documents")}
        wills = documents["south_africa_wills.md"]
        anchors = tuple(library.chunk_ids_of_documents(db, [wills]))
        some = sorted(documents.values())[::2]
        if wills not in some:
            some.append(wills)
        scoped = Scope(
            ("some",), frozenset(some), tuple(sorted(library.chunk_ids_of_documents(db, some)))
        )
        for depth in (3, 40):
            for within in (None, scoped):
                search = TurnSearch(db, embedder, depth=depth, embed_chars=2000, within=within)
                for query in QUERIES:
                    vector = embedder.embed_query(query)
                    for extra in (anchors, ()):
                        ids, similarity = vector_ranking(db, vector, depth, extra, within)
                        found = search.vector(query, extra)
                        assert found.ids == tuple(ids), (query, depth, extra)
                        assert dict(found.similarity) == pytest.approx(similarity)
                        keyword = fts_ranking(db, query, depth, extra, within)
                        assert search.fts(query, extra).ids == tuple(keyword), (query, extra)
                assert len(search.runs) == len({(r.kind, r.text, r.extra) for r in search.runs})
    finally:
        db.close()
