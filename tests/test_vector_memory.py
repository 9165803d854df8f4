"""The in-memory vector search that takes over from vec0 after repeated searches: same answers as
vec0, and never stale when this or another connection writes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import settings_for

from ragchat.app import App
from ragchat.ingest.pipeline import ingest
from ragchat.store import library, vectors
from ragchat.store.db import open_db

QUERIES = [
    "who may witness a will",
    "rainwater tank size",
    "sourdough starter",
    "heat pump defrost",
]


def searched(db, embedder, query: str, k: int = 8) -> list[tuple[int, float]]:
    return vectors.vector_search(db, embedder.embed_query(query), k)


def test_in_memory_search_equals_vec0(library_db: Path, embedder) -> None:
    warm = open_db(library_db)
    for _ in range(vectors.MEMORY_AFTER_SEARCHES):
        searched(warm, embedder, QUERIES[0])
    assert vectors.index_of(warm).in_memory() is not None, "the vectors are now in memory"
    for query in QUERIES:
        fresh = open_db(library_db)  # first search of a connection: vec0
        exact = searched(fresh, embedder, query)
        fresh.close()
        fast = searched(warm, embedder, query)
        assert [i for i, _ in fast] == [i for i, _ in exact]
        assert np.allclose([d for _, d in fast], [d for _, d in exact], atol=1e-5)
    warm.close()


def test_in_memory_copy_follows_writes_from_another_connection_and_its_own(
    library_db: Path, embedder, tmp_path: Path
) -> None:
    reader = open_db(library_db)
    for _ in range(vectors.MEMORY_AFTER_SEARCHES):
        searched(reader, embedder, QUERIES[0])
    assert vectors.index_of(reader).in_memory() is not None
    docs = tmp_path / "new"
    docs.mkdir()
    (docs / "kettle.md").write_text("# Kettles\n\nDescale a kettle with citric acid every month.\n")
    writer = open_db(library_db)
    ingest(writer, settings_for(library_db), [docs], lambda: embedder)
    writer.close()
    top = searched(reader, embedder, "descale the kettle with citric acid", 1)
    new_ids = library.chunk_ids_of_documents(
        reader, [library.document_by_source(reader, str((docs / "kettle.md").resolve()))["id"]]
    )
    assert top[0][0] in new_ids, "another connection's new chunk is found at once"
    document = library.document_by_source(reader, str((docs / "kettle.md").resolve()))
    library.delete_document(reader, document["id"])
    for _ in range(vectors.MEMORY_AFTER_SEARCHES + 1):
        after = searched(reader, embedder, "descale the kettle with citric acid", 20)
    assert not set(new_ids) & {i for i, _ in after}, (
        "its own delete is never served from a stale copy"
    )
    reader.close()


@pytest.mark.parametrize("writes", ["put_vectors", "reset"])
def test_every_vector_write_changes_the_version(library_db: Path, embedder, writes: str) -> None:
    db = open_db(library_db)
    before = library.get_setting(db, "vectors_version")
    if writes == "put_vectors":
        chunk_id = next(iter(library.chunks_by_ids(db, [1, 2, 3, 4, 5, 6, 7, 8, 9, 10])))
        vectors.put_vectors(db, [chunk_id], embedder.embed(["replacement"]))
    else:
        vectors.ensure_vector_table(db, embedder.model_id, embedder.dim, reset=True)
    assert library.get_setting(db, "vectors_version") != before
    db.close()


def test_the_app_owns_its_vector_index_and_close_releases_it(library_db: Path, embedder) -> None:
    """The app makes the index when it opens the database (what `index_of` gives for that
    database); `App.close()` drops the in-memory copy and the registration."""
    app = App(settings_for(library_db))
    assert app.vector_index is None, "nothing before the database is opened"
    db = app.db
    index = app.vector_index
    assert index is not None and vectors.index_of(db) is index
    for _ in range(vectors.MEMORY_AFTER_SEARCHES):
        searched(db, embedder, QUERIES[0])
    assert index.loaded and index.in_memory() is not None
    app.close()
    assert app.vector_index is None and index.closed and not index.loaded
    assert vectors.index_of(db) is not index, "no longer the database's index"
    app.close()  # twice is harmless
