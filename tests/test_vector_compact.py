"""The compact vector index of a large library (bits, int8 codes, exact float rescoring): its
recall against exact search, the switch between exact and compact by library size, and that it
is never stale after an ingest."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest
from helpers import settings_for

from ragchat.embed import Embedder
from ragchat.ingest.pipeline import ingest
from ragchat.store import compact, library, vectors
from ragchat.store.db import open_db
from ragchat.store.library import ChunkRecord, DocumentRecord
from ragchat.store.transaction import write

DIM = 384
MODEL = "generated"


def unit(rng: np.random.Generator, count: int) -> np.ndarray:
    raw = rng.standard_normal((count, DIM)).astype(np.float32)
    return raw / np.linalg.norm(raw, axis=1, keepdims=True)


def add_document(db, number: int, matrix: np.ndarray) -> None:
    chunks = [ChunkRecord(i, f"chunk {i} of {number}", "", 0, 1) for i in range(len(matrix))]
    record = DocumentRecord(
        f"/generated/{number}.md", f"{number}.md", "/generated", f"doc {number}", f"{number}",
        1, 0.0, "utf-8", {},
    )  # fmt: skip
    library.replace_document(db, record, chunks, matrix)


def generated_library(path: Path, documents: int, seed: int = 7) -> tuple[np.ndarray, np.ndarray]:
    """Documents of 4-20 chunks whose vectors share a topic and a document direction (so there are
    neighbourhoods to find, as with real embeddings); returns (chunk ids, vectors)."""
    rng = np.random.default_rng(seed)
    topics = unit(rng, 8)
    db = open_db(path)
    vectors.ensure_vector_table(db, MODEL, DIM)
    with write(db):
        for number in range(documents):
            size = int(rng.integers(4, 21))
            mix = (
                0.45 * topics[rng.integers(8)] + 0.45 * unit(rng, 1) + 0.75 * unit(rng, size)
            ).astype(np.float32)
            add_document(db, number, mix / np.linalg.norm(mix, axis=1, keepdims=True))
    ids = np.array([row[0] for row in db.execute("SELECT chunk_id FROM chunk_vectors")])
    matrix = np.vstack(list(vectors.vectors_of(db, [int(i) for i in ids]).values()))
    db.close()
    return ids, matrix


@pytest.fixture
def large(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any library with vectors counts as large (a real one would need ~350k chunks)."""
    monkeypatch.setattr(vectors, "MEMORY_MAX_BYTES", 1)


def test_compact_search_finds_what_exact_search_finds(tmp_path: Path, large: None) -> None:
    path = tmp_path / "big.db"
    ids, matrix = generated_library(path, 1500)
    db = open_db(path)
    index = vectors.index_of(db)
    rng = np.random.default_rng(1)
    overlap = []
    for row in rng.choice(len(ids), 60, replace=False):
        query = matrix[row] + 0.9 * unit(rng, 1)[0]
        exact = ids[np.argsort(-(matrix @ query), kind="stable")[:10]]
        found = index.search(query, 10)
        overlap.append(len({i for i, _ in found} & set(exact.tolist())) / 10)
        best = found[0]
        cosine = matrix[ids.tolist().index(best[0])] @ query / np.linalg.norm(query)
        assert best[1] == pytest.approx(1 - cosine, abs=1e-5), "distances are exact float ones"
    assert index.compact_index() is not None and not index.loaded, "served by the compact index"
    assert np.mean(overlap) >= 0.99
    current = index.compact_index()
    assert current is not None and current.floats is not None, "rescored from the index file"
    some = [int(i) for i in ids[[0, 7, 700]]] + [10**9]
    held = index.vectors(some)
    assert sorted(held) == sorted(some[:3]), "a chunk without a vector has none"
    for chunk_id in some[:3]:
        assert np.array_equal(held[chunk_id], matrix[ids.tolist().index(chunk_id)])
    db.close()


def same(found: list[tuple[int, float]], exact: list[tuple[int, float]]) -> bool:
    return [i for i, _ in found] == [i for i, _ in exact] and bool(
        np.allclose([d for _, d in found], [d for _, d in exact], atol=1e-5)
    )


def test_small_libraries_stay_exact_and_large_ones_go_compact(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "lib.db"
    ids, matrix = generated_library(path, 60)
    query = matrix[5]
    db = open_db(path)
    index = vectors.index_of(db)
    for _ in range(vectors.MEMORY_AFTER_SEARCHES):
        exact = index.search(query, 8)
    assert index.loaded and index.compact_index() is None, "small: exact search in memory"
    assert not compact.path_of(db).exists(), "and no index file"  # type: ignore[union-attr]
    db.close()

    monkeypatch.setattr(vectors, "MEMORY_MAX_BYTES", len(ids) * DIM * 4 - 1)
    db = open_db(path)
    index = vectors.index_of(db)
    assert same(index.search(query, 8), exact)
    assert index.compact_index() is not None and not index.loaded, "large: compact from the start"
    saved = compact.path_of(db)
    assert saved is not None and saved.exists() and saved.name == "lib.db-vectors"
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600, "the user's alone, like the database"
    written = saved.stat().st_mtime_ns
    db.close()
    db = open_db(path)  # another process: the saved index is used as it is
    assert same(vectors.index_of(db).search(query, 8), exact)
    assert saved.stat().st_mtime_ns == written, "not rebuilt"
    db.close()


def test_the_compact_index_is_never_stale_after_an_ingest(tmp_path: Path, large: None) -> None:
    path = tmp_path / "lib.db"
    ids, matrix = generated_library(path, 60)
    reader = open_db(path)
    index = vectors.index_of(reader)
    rng = np.random.default_rng(3)
    target = unit(rng, 1)[0]
    assert index.search(target, 1)[0][1] > 0.5, "nothing near it yet"
    before = index.compact_index()
    assert before is not None

    writer = open_db(path)  # another process ingests a document holding that direction
    add_document(writer, 999, np.vstack([target, unit(rng, 1)]))
    new_id = max(library.chunk_ids_of_documents(writer, [writer.execute(
        "SELECT id FROM documents WHERE source = '/generated/999.md'").fetchone()[0]]))  # fmt: skip
    writer.close()

    assert np.allclose(index.vectors([new_id - 1])[new_id - 1], target), "read while stale"
    found = index.search(target, 1)
    assert found[0][1] == pytest.approx(0.0, abs=1e-5), "the new chunk is found at once"
    assert found[0][0] in {new_id - 1, new_id}
    after = index.compact_index()
    assert after is not None and after.version != before.version and len(after) == len(ids) + 2
    saved = compact.load(compact.path_of(reader))  # type: ignore[arg-type]
    assert saved is not None and saved.version == after.version, "the file was rebuilt too"

    library.delete_document(reader, library.document_by_source(reader, "/generated/999.md")["id"])
    assert found[0][0] not in {i for i, _ in index.search(target, 20)}, "nor after a delete"
    reader.close()


def test_an_ingest_leaves_a_large_librarys_compact_index_current(
    tmp_path: Path, large: None, embedder: Embedder
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "tank.md").write_text("# Rainwater tank\n\nClean the tank filter each autumn.\n")
    path = tmp_path / "lib.db"
    db = open_db(path)
    ingest(db, settings_for(path), [folder], lambda: embedder)
    saved = compact.load(compact.path_of(db))  # type: ignore[arg-type]
    assert saved is not None and saved.version == vectors.get_setting(db, "vectors_version")
    (folder / "pump.md").write_text("# Pump\n\nPrime the pump before its first run.\n")
    ingest(db, settings_for(path), [folder], lambda: embedder)
    saved = compact.load(compact.path_of(db))  # type: ignore[arg-type]
    assert saved is not None and saved.version == vectors.get_setting(db, "vectors_version")
    assert len(saved) == library.chunk_count(db), "built by the ingest, with the new chunks"
    db.close()
