"""Hybrid search on a large library: keyword search runs in a thread on a read-only connection of
its own while the vector search runs, with exactly the lists a serial search finds; the split
keyword search leaves out the query for chunks without a common word only when none of them can
rank (BM25's bound); the title list counts the library's text only for titles that cover the
question."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path

import pytest
from helpers import settings_for
from test_common_terms import build_orchard, put_notes

from ragchat.app import App
from ragchat.embed import Embedder
from ragchat.search import hybrid, titles
from ragchat.search.fts import score_bound
from ragchat.search.hybrid import SearchRequest, search
from ragchat.store import library, readers
from ragchat.store import titles as title_index
from ragchat.store.db import open_db
from ragchat.store.transaction import write

QUESTIONS = [
    "how many witnesses must sign a will?",
    "what temperature should the dough proof at",
    "heat pump efficiency in winter",
    "who may process personal information",
    "beehive inspection schedule",
]


def _searched(db, embedder: Embedder, path: Path, question: str, mode: str = "hybrid"):
    request = SearchRequest(question, question, k=8, mode=mode)  # type: ignore[arg-type]
    return [
        (hit.chunk.id, hit.vector_rank, hit.fts_rank, hit.rrf, hit.score)
        for hit in search(db, embedder, settings_for(path), request)
    ]


def test_keyword_search_beside_finds_exactly_the_serial_lists(
    library_db: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_db(library_db)
    serial = {q: _searched(db, embedder, library_db, q) for q in QUESTIONS}
    fts_only = {q: _searched(db, embedder, library_db, q, "fts") for q in QUESTIONS}
    assert all(serial.values())

    ran: list[tuple[str, bool]] = []
    inner = hybrid.fts_ranking

    def spied(on, *args, **kwargs):
        ran.append((threading.current_thread().name, on is db))
        return inner(on, *args, **kwargs)

    monkeypatch.setattr(hybrid, "fts_ranking", spied)
    monkeypatch.setattr(hybrid, "SCALE", replace(hybrid.SCALE, beside_rows=0))
    beside = {q: _searched(db, embedder, library_db, q) for q in QUESTIONS}
    assert beside == serial
    assert {q: _searched(db, embedder, library_db, q, "fts") for q in QUESTIONS} == fts_only
    assert ran and all(name.startswith("ragchat-keywords") and not main for name, main in ran)
    db.close()


def test_a_library_in_a_write_or_in_memory_searches_on_its_own_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Inside a write the reader would not see the rows written so far; a library in memory has
    no file for a second connection."""
    monkeypatch.setattr(hybrid, "SCALE", replace(hybrid.SCALE, beside_rows=0))
    db = open_db(tmp_path / "lib.db")
    put_notes(db, "/n", ["The quince hedge by the gate."])
    with write(db):
        put_notes(db, "/m", ["A second quince, grafted last spring."])
        assert len(hybrid.fts_ranking_beside(db, "quince", 10)()) == 2
    assert len(hybrid.fts_ranking_beside(db, "quince", 10)()) == 2, "committed: the reader sees it"
    db.close()

    memory = open_db(":memory:")
    put_notes(memory, "/n", ["The quince hedge by the gate."])
    assert readers.reader_of(memory) is None
    assert len(hybrid.fts_ranking_beside(memory, "quince", 10)()) == 1
    memory.close()


def test_the_reader_cannot_write_and_closes_with_the_app(library_db: Path) -> None:
    app = App(settings_for(library_db))
    reader = readers.reader_of(app.db)
    assert reader is not None and readers.reader_of(app.db) is reader, "one a library"
    assert reader.execute("SELECT count(*) FROM chunks").fetchone()[0] > 0
    with pytest.raises(Exception, match="readonly"):
        reader.execute("DELETE FROM chunks")
    app.close()
    with pytest.raises(Exception, match="closed"):
        reader.execute("SELECT 1")


def test_no_chunk_scores_above_the_bm25_bound(tmp_path: Path) -> None:
    """Whatever a chunk's length and a term's count in it, FTS5's BM25 stays under the bound."""
    path = tmp_path / "lib.db"
    db = open_db(path)
    put_notes(
        db,
        "/b",
        ["pear"] * 2
        + ["pear pear pear pear pear pear pear pear quince"]
        + ["a long note on the orchard rows and their mowing, with a pear at the end"] * 5
        + [f"plain note {i} on mowing" for i in range(40)],
    )
    total = library.chunk_count(db)
    for terms in (['"pear"'], ['"pear"', '"quince"'], ['"mowing"']):
        rows = {t: library.fts_chunk_frequency(db, t) for t in terms}
        scores = library.fts_search(db, " OR ".join(terms), -1)
        assert scores and max(-score for _, score in scores) < score_bound(terms, rows, total)
        # a phrase or an unknown term counts as held by none: the largest idf
        assert score_bound(terms, {}, total) >= score_bound(terms, rows, total)
    db.close()


def test_chunks_without_a_common_word_are_searched_only_when_they_can_rank(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = build_orchard(tmp_path / "lib.db")
    db = open_db(tmp_path / "lib.db")
    whole = library.fts_search(db, '"pear" OR "espalier" OR "watering"', 100)
    queries: list[str] = []
    inner = library.fts_search

    def counted(on, match, *args, **kwargs):
        queries.append(match)
        return inner(on, match, *args, **kwargs)

    monkeypatch.setattr(library, "fts_search", counted)
    rare = '"pear" OR "espalier"'
    holding = [hit for hit in whole if hit[0] != ids["pear"]][:2]  # the best two hold "watering"
    assert library.fts_search_holding(db, rare, '"watering"', 2, bound=0.0) == holding
    assert len(queries) == 1, "no chunk without 'watering' can rank: not searched"
    queries.clear()
    found = library.fts_search_holding(db, rare, '"watering"', 4, bound=1e9)
    assert len(queries) == 2 and ids["espalier"] in {i for i, _ in found}
    assert found == [hit for hit in whole if hit[0] in {i for i, _ in found}][:4]

    # through the search: a bound the AND query's chunks pass, or not, gives the whole query's list
    monkeypatch.setattr(hybrid, "SCALE", replace(hybrid.SCALE, fts_scored_rows=6))
    for depth in (1, 2, 3, 6):
        queries.clear()
        found_ids = hybrid.fts_ranking(db, "watering, pear, espalier", depth)
        held = {ids[n] for n in ("pear and watering", "pear", "pear again", "espalier")}
        held.add(ids["espalier and watering"])
        assert found_ids == [i for i, _ in whole if i in held][:depth]
    db.close()


def test_the_title_list_counts_the_library_only_for_titles_that_cover_the_question(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = open_db(tmp_path / "lib.db")
    put_notes(db, "/t", [f"Orchard diary {i}: the rows were mown." for i in range(10)])
    db.execute("UPDATE documents SET title = 'Quince grafting' WHERE id = 1")
    title_index.index_title(db, 1, "Quince grafting", "quince-grafting.md")
    counted: list[str] = []
    inner = library.fts_chunk_frequency

    def spied(on, match):
        counted.append(match)
        return inner(on, match)

    monkeypatch.setattr(library, "fts_chunk_frequency", spied)
    assert titles.named_documents(db, "when are the rows mown?") == []
    assert counted == [], "no title covers it: nothing counted in the text"
    assert [n.document_id for n in titles.named_documents(db, "how is quince grafting done")] == [1]
    assert counted, "a covering title's words are counted"
    assert title_index.titled_documents(db) == 10
    library.delete_document(db, 2)
    assert title_index.titled_documents(db) == 9
    db.close()
