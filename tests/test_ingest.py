"""Ingest, through the library function and the CLI, on small real corpora written to tmp_path:
chunks, FTS rows and vectors always agree; unchanged files cost nothing; changes leave nothing
stale; deletions wait for --prune; unreadable files are reported with their reason."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import SAMPLE_DOCS, invoke, settings_for

from ragchat.errors import IngestError
from ragchat.ingest.pipeline import IngestReport, ingest
from ragchat.search.fts import build_match
from ragchat.store import keywords, library, vectors
from ragchat.store.db import open_db
from ragchat.store.transaction import get_setting

MINILM = "sentence-transformers/all-MiniLM-L6-v2"

COMPOST = """# Composting at home

Compost turns kitchen scraps into humus. A compost heap needs greens and browns in roughly
equal measure, and the compost pile should be turned every week so that it stays aerobic.

## Troubleshooting the compost

A smelly compost heap is too wet: add browns such as dry leaves or shredded cardboard. A compost
pile that stays cold is too dry or too small; water it and add fresh greens.

## Using finished compost

Finished compost is dark and crumbly. Spread the compost on beds in autumn or sieve it for
potting mixes.
"""

CARS = """Automobile upkeep

Change the engine oil of your automobile every ten thousand kilometres. An automobile engine
with old oil wears quickly.

Check the tyre pressure of the automobile monthly and rotate the tyres each season. Automobile
brakes need inspection at every service.
"""

BREAD = """<html><head><title>Sourdough bread</title></head><body>
<h1>Sourdough bread</h1>
<p>Feed the sourdough starter with flour and water. Knead the dough and let the sourdough rise
overnight before baking the loaf in a hot oven.</p>
<h2>Shaping</h2>
<p>Shape the sourdough loaf gently so the dough keeps its gas; a banneton helps the loaf hold
its shape.</p>
</body></html>
"""

SMALL_CHUNKS = {"chunk_size": 200, "chunk_max": 300, "chunk_overlap": 30}


def make_corpus(root: Path) -> Path:
    docs = root / "docs"
    (docs / "garden").mkdir(parents=True)
    (docs / "garden" / "compost.md").write_text(COMPOST)
    (docs / "cars.txt").write_text(CARS)
    (docs / "bread.html").write_text(BREAD)
    return docs


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    return make_corpus(tmp_path)


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "store" / "ragchat.db"


def run(db_path: Path, paths: list[Path], load, **kwargs) -> IngestReport:
    db = open_db(db_path)
    try:
        return ingest(db, settings_for(db_path, **SMALL_CHUNKS), paths, load, **kwargs)
    finally:
        db.close()


def never_needed():
    raise AssertionError("the embedder was loaded although nothing needed embedding")


class CountingLoader:
    """A `load_embedder` callable that hands out the real embedder and counts what it embeds."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.loads = 0
        self.embedded = 0

    def __call__(self):
        self.loads += 1
        loader = self

        class Counting:
            model_id, dim = self.embedder.model_id, self.embedder.dim

            def embed(self, texts):
                loader.embedded += len(texts)
                return loader.embedder.embed(texts)

            def embed_query(self, text):
                return loader.embedder.embed_query(text)

        return Counting()


def document_id(db, path: str) -> int:
    return db.execute("SELECT id FROM documents WHERE path = ?", [path]).fetchone()[0]


def chunk_ids(db, doc_id: int) -> list[int]:
    return [
        r[0]
        for r in db.execute("SELECT id FROM chunks WHERE document_id = ? ORDER BY id", [doc_id])
    ]


def rows_for(db, ids: list[int]) -> dict[str, int]:
    """How many chunks, FTS rows and vectors exist for these chunk ids."""
    marks = ",".join("?" * len(ids)) or "NULL"
    return {
        "chunks": db.execute(f"SELECT count(*) FROM chunks WHERE id IN ({marks})", ids).fetchone()[
            0
        ],
        "fts": db.execute(
            f"SELECT count(*) FROM chunks_fts WHERE rowid IN ({marks})", ids
        ).fetchone()[0],
        "vectors": db.execute(
            f"SELECT count(*) FROM chunk_vectors WHERE chunk_id IN ({marks})", ids
        ).fetchone()[0],
    }


def assert_consistent(db) -> dict[str, int]:
    """Per document: chunk_count = chunks = FTS rows = vectors; and no orphans anywhere."""
    counts = {}
    for doc in library.documents(db):
        ids = chunk_ids(db, doc["id"])
        n = len(ids)
        assert n > 0
        assert rows_for(db, ids) == {"chunks": n, "fts": n, "vectors": n}, doc["path"]
        assert doc["chunk_count"] == n
        counts[doc["path"]] = n
    total = sum(counts.values())
    assert db.execute("SELECT count(*) FROM chunks").fetchone()[0] == total
    assert db.execute("SELECT count(*) FROM chunks_fts").fetchone()[0] == total
    assert db.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == total
    return counts


def fts_paths(db, word: str) -> list[str]:
    ids = [chunk_id for chunk_id, _ in library.fts_search(db, build_match(word), 50)]
    return sorted({chunk.path for chunk in library.chunks_by_ids(db, ids).values()})


# --- the library function --------------------------------------------------------------------


def test_first_ingest_adds_every_document_with_agreeing_rows(
    corpus: Path, db_path: Path, embedder
) -> None:
    loader = CountingLoader(embedder)
    report = run(db_path, [corpus], loader)
    assert sorted(report.added) == ["bread.html", "cars.txt", "garden/compost.md"]
    assert (report.updated, report.unchanged, report.removed, report.skipped) == ([], [], [], [])

    db = open_db(db_path)
    counts = assert_consistent(db)
    assert set(counts) == {"bread.html", "cars.txt", "garden/compost.md"}
    assert counts["garden/compost.md"] >= 3  # small chunk settings: several chunks per document
    assert report.chunks == sum(counts.values())
    vocabulary = keywords.all_keywords(db)
    assert loader.embedded == report.chunks + len(
        vocabulary
    )  # every chunk once, every keyword once
    assert get_setting(db, "embedding_model") == MINILM
    assert get_setting(db, "embedding_dim") == "384"
    doc = library.document_by_source(db, str((corpus / "garden" / "compost.md").resolve()))
    assert (doc["title"], doc["root"]) == ("Composting at home", str(corpus.resolve()))
    db.close()


def test_reingesting_an_unchanged_tree_embeds_nothing(
    corpus: Path, db_path: Path, embedder
) -> None:
    run(db_path, [corpus], lambda: embedder)
    before = open_db(db_path)
    snapshot = list(
        before.query("SELECT id, path, content_hash, ingested_at, keywords FROM documents")
    )
    chunks_before = list(before.query("SELECT * FROM chunks ORDER BY id"))
    before.close()

    report = run(db_path, [corpus], never_needed)
    assert sorted(report.unchanged) == ["bread.html", "cars.txt", "garden/compost.md"]
    assert (report.added, report.updated, report.removed, report.skipped, report.chunks) == (
        [],
        [],
        [],
        [],
        0,
    )
    assert report.ok

    db = open_db(db_path)
    assert (
        list(db.query("SELECT id, path, content_hash, ingested_at, keywords FROM documents"))
        == snapshot
    )
    assert list(db.query("SELECT * FROM chunks ORDER BY id")) == chunks_before
    db.close()


def test_a_changed_file_is_replaced_without_stale_rows(
    corpus: Path, db_path: Path, embedder
) -> None:
    run(db_path, [corpus], lambda: embedder)
    db = open_db(db_path)
    assert fts_paths(db, "kilometres") == ["cars.txt"]
    doc_id = document_id(db, "cars.txt")
    old_ids = chunk_ids(db, doc_id)
    assert len(old_ids) >= 2
    other_ids = {
        path: chunk_ids(db, document_id(db, path)) for path in ("bread.html", "garden/compost.md")
    }
    db.close()

    # cars.txt is not the last document written, so its new chunks cannot take over its old ids
    # (chunk ids are plain rowids: the last document's ids ARE reused after a rewrite)
    changed = CARS.replace("ten thousand kilometres", "fifteen thousand miles")
    (corpus / "cars.txt").write_text(changed + "\nWash the automobile after salty winter roads.\n")
    loader = CountingLoader(embedder)
    report = run(db_path, [corpus], loader)
    assert report.updated == ["cars.txt"]
    assert sorted(report.unchanged) == ["bread.html", "garden/compost.md"]
    assert report.added == [] and report.removed == []

    db = open_db(db_path)
    assert document_id(db, "cars.txt") == doc_id  # the same document, with new content
    new_ids = chunk_ids(db, doc_id)
    assert loader.embedded >= len(new_ids) == report.chunks
    assert set(new_ids).isdisjoint(old_ids)
    assert rows_for(db, old_ids) == {"chunks": 0, "fts": 0, "vectors": 0}
    assert fts_paths(db, "kilometres") == []  # only the old version had it
    assert fts_paths(db, "miles") == ["cars.txt"]
    assert fts_paths(db, "salty") == ["cars.txt"]
    # the other documents were not rewritten
    assert {path: chunk_ids(db, document_id(db, path)) for path in other_ids} == other_ids
    assert_consistent(db)
    db.close()


def test_a_changed_last_document_leaves_no_stale_text(
    corpus: Path, db_path: Path, embedder
) -> None:
    run(db_path, [corpus], lambda: embedder)
    changed = COMPOST.replace("into humus", "into vermicast")
    (corpus / "garden" / "compost.md").write_text(changed)
    report = run(db_path, [corpus], lambda: embedder)
    assert report.updated == ["garden/compost.md"]
    db = open_db(db_path)
    assert fts_paths(db, "humus") == []
    assert fts_paths(db, "vermicast") == ["garden/compost.md"]
    texts = [row[0] for row in db.execute("SELECT text FROM chunks")]
    assert not any("humus" in text for text in texts)
    fts_texts = [row[0] for row in db.execute("SELECT text FROM chunks_fts")]
    assert sorted(fts_texts) == sorted(texts)
    assert_consistent(db)
    db.close()


def test_a_deleted_file_stays_until_prune(corpus: Path, db_path: Path, embedder) -> None:
    run(db_path, [corpus], lambda: embedder)
    db = open_db(db_path)
    cars_ids = chunk_ids(db, document_id(db, "cars.txt"))
    db.close()
    (corpus / "cars.txt").unlink()

    report = run(db_path, [corpus], never_needed)
    assert report.removed == []
    assert sorted(report.unchanged) == ["bread.html", "garden/compost.md"]
    db = open_db(db_path)
    assert rows_for(db, cars_ids) == {
        "chunks": len(cars_ids),
        "fts": len(cars_ids),
        "vectors": len(cars_ids),
    }
    assert fts_paths(db, "automobile") == ["cars.txt"]
    db.close()

    report = run(db_path, [corpus], never_needed, prune_missing=True)
    assert report.removed == ["cars.txt"]
    db = open_db(db_path)
    assert [doc["path"] for doc in library.documents(db)] == ["bread.html", "garden/compost.md"]
    assert rows_for(db, cars_ids) == {"chunks": 0, "fts": 0, "vectors": 0}
    assert fts_paths(db, "automobile") == []
    assert not any("automobile" in kw for kw in keywords.all_keywords(db))
    assert_consistent(db)
    db.close()


def test_hidden_folders_and_the_database_folder_are_skipped(tmp_path: Path, embedder) -> None:
    docs = make_corpus(tmp_path)
    (docs / ".hidden").mkdir()
    (docs / ".hidden" / "secret.md").write_text("# Secret\n\nDo not ingest the plutonium notes.\n")
    (docs / ".dotfile.md").write_text("# Dot\n\nA hidden file about plutonium.\n")
    db_dir = docs / "dbdir"  # a visible folder, excluded only because the database lives there
    db_dir.mkdir()
    (db_dir / "notes.md").write_text(
        "# Notes beside the database\n\nPlutonium is not for the garden.\n"
    )
    db_path = db_dir / "ragchat.db"

    report = run(db_path, [docs], lambda: embedder)
    assert sorted(report.added) == ["bread.html", "cars.txt", "garden/compost.md"]
    assert report.skipped == []
    db = open_db(db_path)
    assert fts_paths(db, "plutonium") == []
    db.close()


def test_binary_and_empty_files_are_skipped_with_reasons(
    corpus: Path, db_path: Path, embedder
) -> None:
    (corpus / "blob.txt").write_bytes(bytes(range(256)) * 8)
    (corpus / "empty.md").write_text("")
    (corpus / "blank.txt").write_text("   \n\n  \n")
    (corpus / "photo.jpg").write_bytes(
        b"\xff\xd8\xff" + bytes(100)
    )  # another type: ignored, not skipped

    report = run(db_path, [corpus], lambda: embedder)
    assert sorted(report.added) == ["bread.html", "cars.txt", "garden/compost.md"]
    assert sorted(report.skipped) == [
        ("blank.txt", "empty file"),
        ("blob.txt", "binary file"),
        ("empty.md", "empty file"),
    ]
    assert report.ignored == 1
    db = open_db(db_path)
    assert len(library.documents(db)) == 3
    db.close()


def test_nothing_readable_is_an_ingest_error(tmp_path: Path, db_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "empty.md").write_text("")
    with pytest.raises(
        IngestError, match=r"nothing could be ingested: 1 file\(s\) skipped.*empty\.md: empty file"
    ):
        run(db_path, [docs], never_needed)
    pictures = tmp_path / "pictures"
    pictures.mkdir()
    (pictures / "photo.jpg").write_bytes(b"\xff\xd8\xff" + bytes(100))
    with pytest.raises(IngestError, match="no supported files found"):
        run(db_path, [pictures], never_needed)


def test_keywords_are_stored_and_characteristic(corpus: Path, db_path: Path, embedder) -> None:
    run(db_path, [corpus], lambda: embedder)
    db = open_db(db_path)
    stored = {doc["path"]: json.loads(doc["keywords"]) for doc in library.documents(db)}
    assert set(stored) == {"bread.html", "cars.txt", "garden/compost.md"}
    assert all(1 <= len(words) <= 12 for words in stored.values())
    assert "compost" in stored["garden/compost.md"]
    assert "automobile" in stored["cars.txt"]
    assert "sourdough" in stored["bread.html"]
    assert (
        "automobile" not in stored["garden/compost.md"]
        and "sourdough" not in stored["garden/compost.md"]
    )
    assert "compost" not in stored["cars.txt"] and "compost" not in stored["bread.html"]
    # each keyword has a stored vector for mapping user words onto the corpus vocabulary
    names, matrix = keywords.keyword_vectors(db)
    assert sorted(names) == sorted(keywords.all_keywords(db))
    assert matrix.shape == (len(names), 384)
    db.close()


def test_reembed_rewrites_every_vector_and_keeps_the_model(
    corpus: Path, db_path: Path, embedder
) -> None:
    run(db_path, [corpus], lambda: embedder)
    db = open_db(db_path)
    ids = [r[0] for r in db.execute("SELECT id FROM chunks ORDER BY id")]
    original = vectors.vectors_of(db, ids)
    garbage = np.random.default_rng(7).standard_normal((len(ids), 384)).astype(np.float32)
    vectors.put_vectors(db, ids, garbage)  # a damaged index that only re-embedding can repair
    db.close()

    loader = CountingLoader(embedder)
    report = run(db_path, [corpus], loader, reembed_all=True)
    assert report.reembedded == len(ids) and loader.loads >= 1
    assert sorted(report.unchanged) == ["bread.html", "cars.txt", "garden/compost.md"]

    db = open_db(db_path)
    assert db.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == len(ids)
    repaired = vectors.vectors_of(db, ids)
    assert sorted(repaired) == ids
    for chunk_id in ids:
        assert float(repaired[chunk_id] @ original[chunk_id]) > 0.999
    assert get_setting(db, "embedding_model") == MINILM
    assert get_setting(db, "embedding_dim") == "384"
    assert_consistent(db)
    db.close()


# --- through the CLI -------------------------------------------------------------------------

SUMMARY = re.compile(
    r"Ingest: (\d+) added, (\d+) updated, (\d+) unchanged, (\d+) removed, (\d+) skipped"
)


def flat(output: str) -> str:
    """The output with rich's line wrapping (80 columns under the test runner) undone."""
    return " ".join(output.split())


def summary(output: str) -> tuple[int, ...]:
    found = SUMMARY.search(flat(output))
    assert found, output
    return tuple(int(n) for n in found.groups())


def test_cli_ingest_summary_and_exit_codes(corpus: Path, tmp_path: Path, runner) -> None:
    db = tmp_path / "cli" / "ragchat.db"
    (corpus / "empty.md").write_text("")
    first = invoke(runner, "ingest", corpus, "--db", db)
    assert first.exit_code == 0, first.output
    assert summary(first.output) == (3, 0, 0, 0, 1)
    assert "skipped empty.md: empty file" in flat(first.output)

    again = invoke(runner, "ingest", corpus, "--db", db)
    assert again.exit_code == 0, again.output
    assert summary(again.output) == (0, 0, 3, 0, 1)
    assert "0 chunks written" in flat(again.output)

    (corpus / "cars.txt").write_text(CARS + "\nWash the automobile after salty winter roads.\n")
    (corpus / "bread.html").unlink()
    (corpus / "new.txt").write_text("Beekeeping\n\nA hive needs a laying queen.\n")
    changed = invoke(runner, "ingest", corpus, "--db", db, "--prune")
    assert changed.exit_code == 0, changed.output
    assert summary(changed.output) == (1, 1, 1, 1, 1)

    conn = open_db(db)
    assert [d["path"] for d in library.documents(conn)] == [
        "cars.txt",
        "garden/compost.md",
        "new.txt",
    ]
    assert_consistent(conn)
    conn.close()


def test_cli_exit_code_when_nothing_could_be_read(tmp_path: Path, runner) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "empty.md").write_text("")
    result = invoke(runner, "ingest", docs, "--db", tmp_path / "x.db")
    assert result.exit_code == 1
    errors = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and "empty.md: empty file" in errors[0]
    assert "Traceback" not in result.output

    missing = invoke(runner, "ingest", tmp_path / "no-such-folder", "--db", tmp_path / "x.db")
    assert missing.exit_code == 1
    assert "no such file or folder" in missing.output


def test_cli_reembed(corpus: Path, tmp_path: Path, runner) -> None:
    db = tmp_path / "cli" / "ragchat.db"
    assert invoke(runner, "ingest", corpus, "--db", db).exit_code == 0
    conn = open_db(db)
    before = conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0]
    conn.close()

    result = invoke(runner, "ingest", corpus, "--reembed", "--db", db)
    assert result.exit_code == 0, result.output
    assert f"{before} chunks re-embedded; 0 chunks written" in flat(result.output)
    assert summary(result.output) == (0, 0, 3, 0, 0)

    conn = open_db(db)
    assert conn.execute("SELECT count(*) FROM chunk_vectors").fetchone()[0] == before
    assert get_setting(conn, "embedding_model") == MINILM
    assert_consistent(conn)
    conn.close()


class RecordingProgress:
    """Records what ingest reports (from its parsing and its embedding thread)."""

    def __init__(self) -> None:
        self.files_done: list[str] = []
        self.totals: list[int] = []
        self.steps: list[int] = []

    def files(self, total: int) -> None:
        self.file_total = total

    def file_done(self, path: str) -> None:
        self.files_done.append(path)

    def chunks(self, total: int) -> None:
        self.totals.append(total)

    def chunks_done(self, count: int) -> None:
        self.steps.append(count)


def test_chunks_sorted_for_embedding_are_stored_in_document_order(tmp_path: Path, embedder) -> None:
    """Embedding sorts chunks by length across documents; every stored vector is still the vector
    of its own chunk, and progress adds up."""
    from ragchat.ingest.chunking import chunk_document, embedding_text
    from ragchat.ingest.loaders import load_document

    db_path, progress = tmp_path / "order.db", RecordingProgress()
    report = run(db_path, [SAMPLE_DOCS], lambda: embedder, progress=progress)
    settings = settings_for(db_path, **SMALL_CHUNKS)
    db = open_db(db_path)
    expected, stored = [], []
    for path in sorted(SAMPLE_DOCS.iterdir()):
        parsed = load_document(path)
        chunks = chunk_document(
            parsed, settings.chunk_size, settings.chunk_max, settings.chunk_overlap
        )
        expected += [embedding_text(parsed.title, chunk) for chunk in chunks]
        ids = chunk_ids(db, document_id(db, path.name))
        assert len(ids) == len(chunks)
        found = vectors.vectors_of(db, ids)
        stored += [found[i] for i in ids]
    db.close()
    assert (
        len(stored) == report.chunks > 2 * settings.embed_batch
    )  # several batches, sorted by length
    one_by_one = np.vstack([embedder.embed([text]) for text in expected])
    assert np.allclose(np.vstack(stored), one_by_one, atol=1e-5)
    assert sum(progress.steps) == progress.totals[-1] == report.chunks
    assert max(progress.steps) == settings.embed_batch  # a step a batch
    assert sorted(progress.files_done) == sorted(p.name for p in SAMPLE_DOCS.iterdir())
