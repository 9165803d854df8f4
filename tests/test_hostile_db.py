"""The database under hostile conditions, through the real CLI in real processes: two processes at
once, files that are not ours to touch, and errors that must reach the user as one clean line."""

from __future__ import annotations

import hashlib
import os
import subprocess
import time
from pathlib import Path

import pytest
from helpers import invoke, settings_for
from test_hostile_ingest import (
    RAGCHAT,
    chunk_ids_by_path,
    documents_written,
    library_problems,
    run_cli,
    write_corpus,
)

from ragchat.cli import app
from ragchat.errors import RagchatError
from ragchat.ingest.pipeline import ingest
from ragchat.store import sessions
from ragchat.store.db import open_db
from ragchat.store.schema import KNOWN

WILLS = """# Wills

A will is legally binding when the testator signs it in the presence of two competent witnesses.
A witness to a will must be at least 14 years old.
"""
COMPOST = """# Composting

A compost heap needs green and brown material and should be turned every week to stay aerobic.
"""


@pytest.fixture
def small_library(tmp_path: Path, embedder) -> Path:
    folder, db_path = tmp_path / "small", tmp_path / "db" / "lib.db"
    folder.mkdir()
    (folder / "wills.md").write_text(WILLS)
    (folder / "compost.md").write_text(COMPOST)
    db = open_db(db_path)
    ingest(db, settings_for(db_path), [folder], lambda: embedder)
    db.close()
    return db_path


def fingerprint(path: Path) -> tuple[str, int, list[str]]:
    """The file's bytes, its mtime and what lies beside it."""
    return (
        hashlib.sha256(path.read_bytes()).hexdigest(),
        path.stat().st_mtime_ns,
        sorted(p.name for p in path.parent.iterdir()),
    )


def assert_one_error_line(result: subprocess.CompletedProcess[str], *expected: str) -> None:
    assert result.returncode == 1, result
    assert "Traceback" not in result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.stderr
    for text in expected:
        assert text in lines[0], lines[0]


# --- two processes at once ---------------------------------------------------------------------

QUESTIONS = [
    "Who may witness a will?",
    "How often is a compost heap turned?",
    "summarize it",
    "what age must a witness be",
    "What does survey 3 say about the glacier?",
]


WRITTEN = 32  # documents the other process ingests: a writing window of several turns when busy


def test_asking_while_another_process_ingests(small_library: Path, tmp_path: Path, runner) -> None:
    folder = tmp_path / "corpus"
    write_corpus(folder, WRITTEN)
    ingesting = subprocess.Popen(
        [RAGCHAT, "ingest", str(folder), "--db", str(small_library)],
        env={**os.environ, "RAGCHAT_EMBED_BATCH": "4"},  # many short write transactions
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    asked, interleaved, deadline = [], 0, time.monotonic() + 180
    try:
        while ingesting.poll() is None or len(asked) < len(QUESTIONS):
            assert time.monotonic() < deadline, "ingest did not finish in 180 s"
            documents_before = documents_written(small_library)
            result = invoke(
                runner,
                "ask",
                QUESTIONS[len(asked) % len(QUESTIONS)],
                "--session",
                "busy",
                "--db",
                small_library,
            )
            interleaved += (
                documents_written(small_library) > documents_before
            )  # the ingest wrote meanwhile
            asked.append(result)
    finally:
        stdout, stderr = ingesting.communicate(timeout=120)

    assert ingesting.returncode == 0, stdout + stderr
    assert "locked" not in (stdout + stderr).lower()
    for result in asked:
        assert result.exit_code == 0, result.output
        assert "locked" not in result.output.lower() and "Traceback" not in result.output
    assert interleaved >= 2, f"only {interleaved} turn(s) ran while the ingest was writing"
    assert library_problems(small_library) == []
    assert len(chunk_ids_by_path(small_library)) == 2 + WRITTEN
    turns = invoke(runner, "sessions", "--db", small_library)
    assert turns.exit_code == 0 and "busy" in turns.stdout
    db = open_db(small_library)
    assert {row["name"]: row["turns"] for row in sessions.sessions(db)}["busy"] == len(asked)
    db.close()


# --- databases that are not ours to touch ------------------------------------------------------


def not_sqlite(path: Path) -> None:
    path.write_text("# My notes\n\nA text file someone named .db by mistake.\n")


def future_schema(path: Path) -> None:
    db = open_db(path)
    db["_sqlite_migrations"].insert(
        {
            "migration_set": "ragchat",
            "name": "m099_from_the_future",
            "applied_at": "2099-01-01T00:00:00",
        }
    )
    db.execute("UPDATE settings SET value = '99' WHERE key = 'schema_version'")
    db.close()


def other_model(path: Path) -> None:
    """Rows as a library embedded by another 384-dimension model would hold them."""
    db = open_db(path)
    db.execute(
        "INSERT INTO settings(key, value) VALUES ('embedding_model', 'BAAI/bge-small-en-v1.5'), "
        "('embedding_dim', '384')"
    )
    db.execute(
        "CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY, "
        "embedding float[384] distance_metric=cosine)"
    )
    db["documents"].insert(
        {
            "id": 1,
            "source": "/elsewhere/a.md",
            "path": "a.md",
            "content_hash": "h",
            "title": "A",
            "chunk_count": 1,
            "keywords": "[]",
        }
    )
    db.execute(
        "INSERT INTO chunks(id, document_id, ordinal, text, heading, start_char, end_char) "
        "VALUES (1, 1, 0, 'Some text about wills.', '', 0, 22)"
    )
    db.execute(
        "INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (1, 'A', '', 'Some text "
        "about wills.')"
    )
    db.close()


REFUSALS = {
    "not-sqlite": (not_sqlite, ["is not a SQLite database; refusing to touch it"]),
    "future-schema": (
        future_schema,
        ["the database has schema version 99", f"(schema version {len(KNOWN)})", "upgrade ragchat"],
    ),
    "other-model": (
        other_model,
        ["this database was embedded with BAAI/bge-small-en-v1.5 (dim 384)", "ingest --reembed"],
    ),
}


@pytest.mark.parametrize("case", list(REFUSALS))
@pytest.mark.parametrize(
    "command", [["ask", "Who may witness a will?"], ["ingest", "{docs}"]], ids=["ask", "ingest"]
)
def test_a_database_that_is_not_ours_is_refused_in_one_line_and_left_untouched(
    tmp_path: Path, case, command
) -> None:
    make, expected = REFUSALS[case]
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "wills.md").write_text(WILLS)
    path = tmp_path / "db" / "library.db"
    path.parent.mkdir()
    make(path)
    before = fingerprint(path)
    time.sleep(0.01)  # a rewrite would show in the mtime

    result = run_cli(*[part.format(docs=docs) for part in command], "--db", path)

    assert_one_error_line(result, *expected)
    assert fingerprint(path) == before


# --- errors reach the user as one line; the traceback only on request --------------------------


def nothing(tmp_path: Path) -> dict[str, str]:
    return {}


def notes_named_db(tmp_path: Path) -> dict[str, str]:
    not_sqlite(tmp_path / "notes.db")
    return {}


def file_where_the_db_folder_goes(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "afile").write_text("x")
    return {}


def empty_library(tmp_path: Path) -> dict[str, str]:
    open_db(tmp_path / "empty.db").close()
    return {}


def broken_toml(tmp_path: Path) -> dict[str, str]:
    (tmp_path / "ragchat.toml").write_text("top_k = [\n")
    return {}


def bad_top_k(tmp_path: Path) -> dict[str, str]:
    return {"RAGCHAT_TOP_K": "many"}


# name -> (prepare the working folder, returning extra environment; arguments; what the error says)
KNOWN_ERRORS = {
    "not-sqlite": (
        notes_named_db,
        ["ask", "hello", "--db", "notes.db"],
        "notes.db is not a SQLite database",
    ),
    "db-folder-blocked": (
        file_where_the_db_folder_goes,
        ["ingest", ".", "--db", "afile/x.db"],
        "cannot create folder afile for database afile/x.db: File exists",
    ),
    "no-library": (
        nothing,
        ["ask", "hello", "--db", "x.db"],
        "no library at x.db: `ragchat ingest PATH` creates it",
    ),
    "empty-library": (empty_library, ["ask", "hello", "--db", "empty.db"], "the library is empty"),
    "bad-setting": (
        bad_top_k,
        ["search", "hello", "--db", "x.db"],
        "invalid value for top_k: 'many' (expected an integer) in env RAGCHAT_TOP_K",
    ),
    "broken-config-file": (broken_toml, ["config"], "ragchat.toml"),
    "nothing-to-ingest": (
        nothing,
        ["ingest", "no-such-folder", "--db", "x.db"],
        "nothing could be ingested: 1 file(s) skipped "
        "(first: no-such-folder: no such file or folder)",
    ),
    "no-sessions": (empty_library, ["inspect", "last-turn", "--db", "empty.db"], "no sessions yet"),
}


def run_in(
    tmp_path: Path, args: list[str], env: dict[str, str]
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [RAGCHAT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
        env={**os.environ, **env},
    )


@pytest.mark.parametrize("case", list(KNOWN_ERRORS))
def test_a_known_error_is_one_line_and_ragchat_debug_reraises_it(
    tmp_path: Path, runner, case
) -> None:
    prepare, args, message = KNOWN_ERRORS[case]
    env = prepare(tmp_path)

    plain = run_in(tmp_path, args, env)
    debug = runner.invoke(
        app, args, env={**env, "RAGCHAT_DEBUG": "1"}
    )  # in-process: the exception itself

    assert_one_error_line(plain, message)
    assert "unexpected" not in plain.stderr  # a known error is not reported as a surprise
    assert isinstance(debug.exception, RagchatError), debug.exception
    assert message in str(debug.exception)


@pytest.mark.parametrize("case", ["not-sqlite", "nothing-to-ingest"])
def test_the_same_failing_command_shows_its_traceback_only_with_ragchat_debug(
    tmp_path: Path, case
) -> None:
    prepare, args, message = KNOWN_ERRORS[case]
    env = prepare(tmp_path)

    plain = run_in(tmp_path, args, env)
    debug = run_in(tmp_path, args, {**env, "RAGCHAT_DEBUG": "1"})

    assert_one_error_line(plain, message)
    assert debug.returncode != 0
    assert "Traceback (most recent call last)" in debug.stderr
    assert message in " ".join(
        debug.stderr.split()
    )  # the same error, wrapped in the traceback's box
