"""The store: migrations on blank, current and half-migrated databases, pragmas, refusing files
that are not ours (not SQLite, a future schema) and the embedding-model check."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
import sqlite_utils.utils
import sqlite_vec
from helpers import invoke, settings_for
from sqlite_utils import Database

from ragchat.errors import ModelMismatchError, StoreError
from ragchat.ingest.pipeline import ingest
from ragchat.store import vectors
from ragchat.store.db import BUSY_TIMEOUT_MS, open_db
from ragchat.store.schema import KNOWN, MIGRATIONS
from ragchat.store.transaction import get_setting

FIRST_MIGRATIONS = ["m001_library", "m002_conversation", "m003_keyword_vectors"]
TABLES = {
    "settings",
    "documents",
    "chunks",
    "chunks_fts",
    "sessions",
    "messages",
    "keyword_vectors",
    "_sqlite_migrations",
}
MINILM = "sentence-transformers/all-MiniLM-L6-v2"


def applied(db: Database) -> list[dict]:
    return list(
        db.query("SELECT migration_set, name, applied_at FROM _sqlite_migrations ORDER BY id")
    )


def raw_db(path: Path) -> Database:
    """A plain sqlite-utils connection with sqlite-vec loaded, bypassing open_db."""
    db = Database(path)
    db.conn.enable_load_extension(True)
    sqlite_vec.load(db.conn)
    db.conn.enable_load_extension(False)
    return db


def dump(path: Path) -> list[str]:
    """Every row of every ordinary table, read without sqlite-vec or open_db."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [
            row[0]
            for row in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE "
                "VIRTUAL%' AND name NOT LIKE 'chunks_fts_%' AND name NOT LIKE 'documents_fts_%' "
                "ORDER BY name"
            )
        ]
        return [
            f"{table}: {row!r}"
            for table in tables
            for row in conn.execute(f"SELECT * FROM [{table}] ORDER BY rowid")
        ]
    finally:
        conn.close()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- migrations ------------------------------------------------------------------------------


def test_blank_database_gets_every_table_and_records_its_migrations(tmp_path: Path) -> None:
    path = tmp_path / "sub" / "new.db"
    db = open_db(path)
    assert path.is_file()
    assert TABLES <= set(db.table_names())
    assert KNOWN[:3] == FIRST_MIGRATIONS
    assert [(row["migration_set"], row["name"]) for row in applied(db)] == [
        ("ragchat", n) for n in KNOWN
    ]
    assert get_setting(db, "schema_version") == str(len(KNOWN))
    assert MIGRATIONS.pending(db) == []
    # the FTS table is a real FTS5 table with the documented columns
    assert db["chunks_fts"].columns_dict.keys() == {"title", "heading", "text"}
    assert (
        "fts5"
        in db.execute("SELECT sql FROM sqlite_master WHERE name = 'chunks_fts'").fetchone()[0]
    )
    db.close()


def test_opening_twice_is_idempotent_and_keeps_data(tmp_path: Path) -> None:
    path = tmp_path / "twice.db"
    db = open_db(path)
    db["sessions"].insert({"name": "kept", "created_at": "t0", "updated_at": "t0"})
    first = applied(db)
    db.close()

    again = open_db(path)
    assert applied(again) == first  # same rows, same applied_at: nothing ran a second time
    assert list(again.query("SELECT name FROM sessions")) == [{"name": "kept"}]
    assert get_setting(again, "schema_version") == str(len(KNOWN))
    again.close()


def test_half_migrated_database_is_upgraded_keeping_its_rows(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = raw_db(path)
    MIGRATIONS.apply(old, stop_before="m002_conversation")
    old["documents"].insert(
        {"source": "/x/a.md", "path": "a.md", "content_hash": "h1", "title": "A"}
    )
    old["settings"].insert({"key": "embedding_model", "value": MINILM})
    assert [row["name"] for row in applied(old)] == ["m001_library"]
    assert not old["sessions"].exists()
    old.close()

    db = open_db(path)
    assert TABLES <= set(db.table_names())
    assert [row["name"] for row in applied(db)] == KNOWN
    assert get_setting(db, "schema_version") == str(len(KNOWN))
    assert list(db.query("SELECT source, path, content_hash, title FROM documents")) == [
        {"source": "/x/a.md", "path": "a.md", "content_hash": "h1", "title": "A"}
    ]
    assert get_setting(db, "embedding_model") == MINILM
    db.close()


def test_pragmas_wal_foreign_keys_and_busy_timeout(tmp_path: Path) -> None:
    db = open_db(tmp_path / "p.db")
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert db.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert db.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS == 30_000
    # foreign keys are enforced, not just declared
    with pytest.raises(sqlite_utils.utils.sqlite3.IntegrityError):
        db.execute("INSERT INTO chunks(document_id, ordinal, text) VALUES (12345, 0, 'orphan')")
    assert db.execute("SELECT count(*) FROM chunks").fetchone()[0] == 0
    db.close()
    # WAL is a property of the file: a plain connection sees it too
    conn = sqlite3.connect(tmp_path / "p.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()


# --- refusing files that are not ours --------------------------------------------------------


@pytest.mark.parametrize(
    "content", [b"# my notes\n\nnot a database at all\n", b"PK\x03\x04" + bytes(200), b"x"]
)
def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.db"
    path.write_bytes(content)
    with pytest.raises(StoreError, match="not a SQLite database"):
        open_db(path)
    assert path.read_bytes() == content
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.db"]  # no -wal / -shm left behind


def test_the_cli_refuses_a_non_sqlite_db_with_one_error_line(tmp_path: Path, runner) -> None:
    path = tmp_path / "essay.txt"
    path.write_text("An essay, not a database.\n")
    result = invoke(runner, "search", "anything", "--mode", "fts", "--db", path)
    assert result.exit_code == 1
    assert result.output.startswith("Error: ")
    assert len(result.output.strip().splitlines()) == 1
    assert "not a SQLite database" in result.output
    assert path.read_text() == "An essay, not a database.\n"


def _future_database(path: Path, *, wal: bool, fake_row: bool, version: str | None) -> None:
    if wal:
        open_db(path).close()
        db = raw_db(path)
    else:  # a rollback-journal file, as another tool would leave it
        db = raw_db(path)
        MIGRATIONS.apply(db)
        db["settings"].insert({"key": "schema_version", "value": str(len(KNOWN))})
    if fake_row:
        db["_sqlite_migrations"].insert(
            {"migration_set": "ragchat", "name": "m099_from_the_future", "applied_at": "2099-01-01"}
        )
    if version:
        db.execute("UPDATE settings SET value = ? WHERE key = 'schema_version'", [version])
    db["documents"].insert({"source": "/x/keep.md", "path": "keep.md", "content_hash": "h"})
    db.close()


@pytest.mark.parametrize("wal", [True, False], ids=["wal-file", "rollback-journal-file"])
@pytest.mark.parametrize(
    "fake_row, version, shown",
    [
        (True, "99", "schema version 99"),
        (False, "99", "schema version 99"),
        (True, None, "unknown migration(s) m099_from_the_future"),
    ],
    ids=["row-and-version", "version-only", "row-only"],
)
def test_a_future_schema_is_refused_and_left_unchanged(
    tmp_path: Path, wal: bool, fake_row: bool, version: str | None, shown: str
) -> None:
    path = tmp_path / "future.db"
    _future_database(path, wal=wal, fake_row=fake_row, version=version)
    before_bytes, before_rows = sha256(path), dump(path)
    before_files = sorted(p.name for p in tmp_path.iterdir())

    with pytest.raises(StoreError) as caught:
        open_db(path)
    message = str(caught.value)
    assert shown in message
    assert f"(schema version {len(KNOWN)})" in message and "upgrade ragchat" in message

    assert sha256(path) == before_bytes  # not even the journal mode was switched
    assert dump(path) == before_rows
    assert sorted(p.name for p in tmp_path.iterdir()) == before_files


def test_cli_reports_a_future_schema_as_one_error_line(tmp_path: Path, runner) -> None:
    path = tmp_path / "future.db"
    _future_database(path, wal=True, fake_row=True, version="99")
    result = invoke(runner, "search", "anything", "--mode", "fts", "--db", path)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: ")
    assert "schema version 99" in lines[0]
    assert "Traceback" not in result.output


# --- the embedding model ---------------------------------------------------------------------


@pytest.fixture
def embedded_db(tmp_path: Path, embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "wills.md").write_text("# Wills\n\nA will must be signed in front of two witnesses.\n")
    path = tmp_path / "lib" / "ragchat.db"
    db = open_db(path)
    ingest(db, settings_for(path), [docs], lambda: embedder)
    db.close()
    return path


def test_the_model_is_recorded_and_a_mismatch_is_refused(embedded_db: Path, embedder) -> None:
    db = open_db(embedded_db)
    assert vectors.recorded_model(db) == (MINILM, 384) == (embedder.model_id, embedder.dim)
    vectors.check_model(db, MINILM, 384)  # the same model passes
    vectors.check_model(db, MINILM)

    with pytest.raises(ModelMismatchError) as caught:
        vectors.check_model(db, "other/model", 512)
    message = str(caught.value)
    assert MINILM in message and "other/model" in message
    assert "dim 384" in message and "dim 512" in message
    assert "--reembed" in message

    with pytest.raises(ModelMismatchError, match="--reembed"):
        vectors.check_model(db, MINILM, 768)  # same name, other dimension
    db.close()


def test_ingest_refuses_another_model_before_touching_anything(
    embedded_db: Path, tmp_path: Path
) -> None:
    docs = tmp_path / "more"
    docs.mkdir()
    (docs / "new.md").write_text("# New\n\nSomething new to add.\n")
    db = open_db(embedded_db)
    before = dump(embedded_db)

    def never() -> None:
        raise AssertionError("the embedder must not be loaded for a mismatched database")

    settings = settings_for(embedded_db, embedding_model="other/model")
    with pytest.raises(ModelMismatchError, match="other/model"):
        ingest(db, settings, [docs], never)
    db.close()
    assert dump(embedded_db) == before


def test_cli_model_mismatch_is_one_error_line(embedded_db: Path, runner, monkeypatch) -> None:
    monkeypatch.setenv("RAGCHAT_EMBEDDING_MODEL", "other/model")
    result = invoke(runner, "search", "x", "--db", embedded_db)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1, result.output
    assert lines[0].startswith("Error:")
    assert MINILM in lines[0] and "other/model" in lines[0] and "--reembed" in lines[0]
    assert "Traceback" not in result.output
