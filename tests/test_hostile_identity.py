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

from ragchat.store import sessions
from ragchat.store.db import open_db

RAGCHAT = str(Path(sys.executable).parent / "ragchat")
DOCS = {
    "wills.md": "# Wills\n\nA will needs two witnesses who sign in the presence of the testator.\n",
    "compost.md": "# Compost\n\nA compost heap needs green and brown material, turned every week.\n",
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


# --- 1. turns numbered by the database --------------------------------------------------------------


def test_concurrent_asks_on_one_session_make_complete_consecutive_turns(small_db: Path, runner) -> None:
    count = 6
    processes = [subprocess.Popen([RAGCHAT, "ask", f"q{n} witness", "-s", "same"], env=cli_env(small_db),
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for n in range(count)]
    for process in processes:
        stdout, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stdout + stderr

    db = open_db(small_db)
    history = sessions.messages(db, sessions.session_id(db, "same", create=False))
    assert [(m.turn, m.role) for m in history] == [(n, role) for n in range(1, count + 1)
                                                  for role in ("user", "assistant")]
    for question, answer in zip(history[::2], history[1::2]):
        assert answer.lineage is not None and answer.lineage["question"] == question.content
        assert answer.lineage["turn"] == question.turn
        # the history a turn read is the session as of its write: only turns before it
        assert all(message_turn(db, m) < question.turn for m in answer.lineage["history_window"])
    db.close()

    exported = invoke(runner, "export", "same", "--db", small_db)
    assert exported.exit_code == 0, exported.output
    numbers = [int(line.split(".")[0][3:]) for line in exported.output.splitlines() if line.startswith("## ")]
    assert numbers == list(range(1, count + 1))
    for n in (1, count):
        shown = invoke(runner, "inspect", "turn", n, "-s", "same", "--json", "--db", small_db)
        assert shown.exit_code == 0, shown.output
        assert json.loads(shown.stdout)["turn"] == n


def message_turn(db, message_id: int) -> int:
    message = sessions.message_by_id(db, message_id)
    assert message is not None
    return message.turn
