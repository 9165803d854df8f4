"""Hostile inputs, round two (issue 22, first half): concurrent writers on one session, bytes that
are not UTF-8 in file names and questions, and the identity of moved, renamed and copied documents.

Real files, a real database and the real embedding model; concurrency through real `ragchat ask`
processes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import invoke

from ragchat.cli import app
from ragchat.store import sessions
from ragchat.store.db import open_db

RAGCHAT = str(Path(sys.executable).parent / "ragchat")
DOCS = {
    "wills.md": "# Wills\n\nA will needs two witnesses who sign in the presence of the testator.\n",
    "compost.md": "# Compost\n\nA compost heap needs green and brown material, turned every "
    "week.\n",
}


def write_docs(folder: Path, docs: dict[str, str] = DOCS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in docs.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture
def small_db(tmp_path: Path, runner) -> Path:
    db = tmp_path / "lib.db"
    result = invoke(runner, "ingest", write_docs(tmp_path / "docs"), "--db", db)
    assert result.exit_code == 0, result.output
    return db


def cli_env(db: Path) -> dict[str, str]:
    return {**os.environ, "RAGCHAT_OLLAMA": "off", "RAGCHAT_DB": str(db)}


# --- 1. turns numbered by the database ------------------------------------------------------------


def test_concurrent_asks_on_one_session_make_complete_consecutive_turns(
    small_db: Path, runner
) -> None:
    count = 6
    processes = [
        subprocess.Popen(
            [RAGCHAT, "ask", f"q{n} witness", "-s", "same"],
            env=cli_env(small_db),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(count)
    ]
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stdout + stderr

    db = open_db(small_db)
    history = sessions.messages(db, sessions.session_id(db, "same", create=False))
    assert [(m.turn, m.role) for m in history] == [
        (n, role) for n in range(1, count + 1) for role in ("user", "assistant")
    ]
    for question, answer in zip(history[::2], history[1::2]):
        assert answer.lineage is not None and answer.lineage["question"] == question.content
        assert answer.lineage["turn"] == question.turn
        # the history a turn read is the session as of its write: only turns before it
        assert all(message_turn(db, m) < question.turn for m in answer.lineage["history_window"])
    db.close()

    exported = invoke(runner, "export", "same", "--db", small_db)
    assert exported.exit_code == 0, exported.output
    numbers = [
        int(line.split(".")[0][3:])
        for line in exported.output.splitlines()
        if line.startswith("## ")
    ]
    assert numbers == list(range(1, count + 1))
    for n in (1, count):
        shown = invoke(runner, "inspect", "turn", n, "-s", "same", "--json", "--db", small_db)
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["turn"] == n


def message_turn(db, message_id: int) -> int:
    message = sessions.message_by_id(db, message_id)
    assert message is not None
    return message.turn


# --- 3. bytes that are not UTF-8 -----------------------------------------------------------------


def bad_name_folder(base: Path) -> Path:
    """A folder holding `bad\\xff.md` (not UTF-8: made through bytes paths) between
    two plain files."""
    folder = write_docs(base / "docs")
    with open(os.path.join(os.fsencode(folder), b"bad\xff.md"), "w") as handle:
        handle.write("# Invalid name\n\nThe zanzibarite witness signs in front of the notary.\n")
    return folder


def run(*args: object, db: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    command = [RAGCHAT, *(a if isinstance(a, bytes) else str(a).encode() for a in args)]
    return subprocess.run(command, input=stdin, capture_output=True, timeout=120, env=cli_env(db))


def test_a_file_name_that_is_not_utf8_is_ingested_stored_and_shown_escaped(tmp_path: Path) -> None:
    db_path = tmp_path / "lib.db"
    folder = bad_name_folder(tmp_path)

    first = run("ingest", folder, db=db_path)
    assert first.returncode == 0, first.stdout + first.stderr
    assert b"3 added" in first.stdout and b" 0 skipped" in first.stdout

    found = run("search", "zanzibarite notary", "--json", db=db_path)
    assert found.returncode == 0, found.stderr
    assert (
        json.loads(found.stdout.splitlines()[0])["document"] == "bad\\xff.md"
    )  # reversible: \xff is the byte
    db = open_db(db_path)
    row = db.execute(
        "SELECT source, source_bytes FROM documents WHERE path = 'bad\\xff.md'"
    ).fetchone()
    db.close()
    assert row[0].endswith("/docs/bad\\xff.md") and row[1] == os.fsencode(folder) + b"/bad\xff.md"

    again = run("ingest", folder, db=db_path)
    assert b"0 added, 0 updated, 3 unchanged" in again.stdout, again.stdout
    os.unlink(os.path.join(os.fsencode(folder), b"bad\xff.md"))
    pruned = run("ingest", folder, "--prune", db=db_path)
    assert b"1 removed" in pruned.stdout, pruned.stdout + pruned.stderr


def test_repl_ingest_of_a_folder_with_a_name_that_is_not_utf8(tmp_path: Path, capsys) -> None:
    from helpers import settings_for
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput

    from ragchat.app import App
    from ragchat.repl import Repl

    folder = bad_name_folder(tmp_path)
    open_db(tmp_path / "lib.db").close()
    app = App(settings_for(tmp_path / "lib.db"))
    with create_pipe_input() as keyboard:
        for line in (f"/ingest {folder}", "who signs in front of the notary?"):
            keyboard.send_text(line + "\r")
        keyboard.close()
        Repl(app, "r", input=keyboard, output=DummyOutput()).run()
    app.close()
    out = capsys.readouterr().out
    assert "3 added" in out
    assert "bad\\xff.md" in out  # the answer's source, escaped


@pytest.mark.parametrize("command", ["ask", "search"])
def test_a_question_with_bytes_that_are_not_utf8_is_answered(small_db: Path, command: str) -> None:
    done = run(command, b"witness \xff", db=small_db)
    assert done.returncode == 0, done.stdout + done.stderr
    assert b"wills.md" in done.stdout


def test_a_piped_chat_line_with_bytes_that_are_not_utf8_is_answered(small_db: Path) -> None:
    done = run("chat", "-s", "piped", db=small_db, stdin=b"witness \xff\n")
    assert done.returncode == 0, done.stdout + done.stderr
    db = open_db(small_db)
    asked = [
        m.content for m in sessions.messages(db, sessions.session_id(db, "piped", create=False))
    ]
    db.close()
    assert asked[0] == "witness \ufffd" and asked[1]  # read with replacement, and answered


# --- 4. identity of documents --------------------------------------------------------------------


def ingest_into(db_path: Path, embedder, *paths: Path, prune: bool = False):
    from helpers import settings_for

    from ragchat.ingest.pipeline import ingest

    db = open_db(db_path)
    try:
        return ingest(db, settings_for(db_path), list(paths), lambda: embedder, prune_missing=prune)
    finally:
        db.close()


def rows(db_path: Path, sql: str) -> list[tuple]:
    db = open_db(db_path)
    try:
        return [tuple(row) for row in db.execute(sql)]
    finally:
        db.close()


def test_a_renamed_file_keeps_its_document_and_vectors(tmp_path: Path, embedder) -> None:
    folder, db_path = write_docs(tmp_path / "docs"), tmp_path / "lib.db"
    ingest_into(db_path, embedder, folder)
    before = rows(
        db_path,
        "SELECT d.id, c.id FROM documents d JOIN chunks c ON c.document_id = d.id "
        "WHERE d.path = 'wills.md'",
    )
    (folder / "archive").mkdir()
    (folder / "wills.md").rename(folder / "archive" / "estate.md")

    report = ingest_into(db_path, embedder, folder)

    assert report.moved == [("wills.md", "archive/estate.md")]
    assert report.added == [] and report.chunks == 0  # nothing parsed or embedded again
    after = rows(
        db_path,
        "SELECT d.id, c.id FROM documents d JOIN chunks c ON c.document_id = d.id "
        "WHERE d.path = 'archive/estate.md'",
    )
    assert after == before  # the same document and chunk ids: turns that cited them still resolve
    assert rows(db_path, "SELECT count(*) FROM documents") == [(2,)]


def test_the_same_content_under_two_paths_is_stored_once_and_shown_with_both(
    tmp_path: Path, embedder, runner
) -> None:
    first, second, db_path = (
        write_docs(tmp_path / "one"),
        write_docs(tmp_path / "two"),
        tmp_path / "lib.db",
    )
    report = ingest_into(db_path, embedder, first, second)

    assert sorted(report.added) == ["compost.md", "wills.md"]
    assert sorted(report.copies) == [("compost.md", "compost.md"), ("wills.md", "wills.md")]
    assert rows(db_path, "SELECT count(*) FROM documents") == [(2,)]
    found = invoke(runner, "search", "witnesses sign the will", "--json", "--db", db_path)
    paths = [json.loads(line)["document"] for line in found.stdout.splitlines()]
    # two folders' wills.md: each placed in its collection (issue 32), so they read apart
    assert paths.count("one:wills.md (also two:wills.md)") == 1 and len(paths) == len(set(paths))

    (second / "wills.md").write_text("# Wills\n\nA will changed in the second folder only.\n")
    changed = ingest_into(db_path, embedder, first, second)
    assert changed.added == ["wills.md"]  # the copy became a document of its own
    assert rows(db_path, "SELECT count(*) FROM documents") == [(3,)]


def test_a_newline_in_a_file_name_is_shown_escaped(tmp_path: Path, runner) -> None:
    folder = write_docs(tmp_path / "docs", {"two\nlines.md": "# Fake\n\nA zanzibarite row.\n"})
    result = invoke(runner, "ingest", folder, "--db", tmp_path / "lib.db")
    assert result.exit_code == 0, result.output
    found = invoke(runner, "search", "zanzibarite", "--db", tmp_path / "lib.db")
    assert "two\\nlines.md" in found.output
    assert not any(line.strip().startswith("lines.md") for line in found.output.splitlines())


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "witness", "-s", ""],
        ["inspect", "last-turn", "-s", ""],
        ["ask", "witness", "-s", "two\nlines"],
    ],
)
def test_blank_or_multiline_session_names_are_refused(
    small_db: Path, runner, args: list[str]
) -> None:
    invoke(runner, "ask", "witness", "-s", "other", "--db", small_db)
    result = runner.invoke(app, [*args, "--db", str(small_db)])
    assert result.exit_code == 1
    assert result.output.startswith("Error: the session name"), result.output
    db = open_db(small_db)
    assert sessions.session_names(db) == ["other"]
    db.close()


def test_prune_moves_a_document_whose_file_is_gone_to_its_copy(tmp_path: Path, embedder) -> None:
    first, second, db_path = (
        write_docs(tmp_path / "one"),
        write_docs(tmp_path / "two"),
        tmp_path / "lib.db",
    )
    ingest_into(db_path, embedder, first, second)
    before = rows(db_path, "SELECT id, chunk_count FROM documents ORDER BY id")
    (first / "wills.md").unlink()

    kept = ingest_into(db_path, embedder, first, second)
    assert kept.gone == ["wills.md"]
    pruned = ingest_into(db_path, embedder, first, second, prune=True)

    assert pruned.moved == [("wills.md", "wills.md")] and pruned.removed == []
    assert rows(db_path, "SELECT id, chunk_count FROM documents ORDER BY id") == before
    assert rows(db_path, "SELECT source FROM documents WHERE path = 'wills.md'") == [
        (str(second / "wills.md"),)
    ]
    assert rows(db_path, "SELECT count(*) FROM document_copies") == [(1,)]  # compost.md's
