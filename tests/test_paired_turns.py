"""benchmarks/paired_turns.py: two versions of ragchat answer each turn after the same history
(the base version's), so a change's own effect on a turn is told from what it does to the turns
after it (docs/measuring.md). The real CLI in subprocesses, SQLite with FTS5 and sqlite-vec, the
real embedding model; a scorer written for the test in the shape of `run_docs_chat.py`, which
lives outside the repository."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from helpers import REPO, ingested, script_module

PAGES = {
    "install.md": "# Installing\n\nRun `pip install widget` to install the widget tool.\n",
    "config.md": "# Configuring\n\nSet `WIDGET_HOME` to choose where widget keeps its files.\n",
}
TURNS = [
    {"user": "how do I install widget?", "kind": "first", "gold": ["docs/install.md"],
     "keys": ["pip install widget"]},
    {"user": "and where does it keep its files?", "kind": "follow-up",
     "gold": ["docs/config.md"], "keys": ["WIDGET_HOME"]},
    {"user": "how do I install widget and choose where it keeps its files?", "kind": "first",
     "gold": ["docs/install.md"], "keys": ["pip install widget", "WIDGET_HOME"]},
]  # fmt: skip
# the functions of run_docs_chat.py the pairing scores with, in their shape (its copies of a
# document left out: the test library has none)
SCORER = """
import sqlite3
PROMPT_SOURCES = 6
def norm(text):
    return " ".join(text.casefold().split())
def _connect(db):
    try:
        import pysqlite3 as sqlite3
    except ImportError:
        import sqlite3
    return sqlite3.connect(f"file:{db}?mode=ro", uri=True)
def chunk_texts(db, ids):
    con = _connect(db)
    marks = ",".join("?" * len(ids))
    rows = con.execute(f"SELECT id, text FROM chunks WHERE id IN ({marks})", ids).fetchall()
    return {int(i): t for i, t in rows}
def document_sources(db):
    con = _connect(db)
    return {int(i): [s] for i, s in con.execute("SELECT id, source FROM documents")}
def is_gold(gold, sources):
    return any(s.replace("\\\\", "/").endswith("/" + gold) for s in sources)
"""


@pytest.fixture(scope="module")
def pairing() -> ModuleType:
    return script_module("benchmarks/paired_turns.py")


def run(tmp_path: Path, db: Path, new: str) -> tuple[list[str], list[dict]]:
    conversations = tmp_path / "conversations.jsonl"
    conversations.write_text(json.dumps({"id": "w", "turns": TURNS}) + "\n", encoding="utf-8")
    scorer = tmp_path / "run_docs_chat.py"
    scorer.write_text(SCORER, encoding="utf-8")
    out = tmp_path / "paired.jsonl"
    base = str(Path(sys.executable).parent / "ragchat")
    done = subprocess.run(
        [sys.executable, str(REPO / "benchmarks" / "paired_turns.py"), str(conversations)]
        + ["--db", str(db), "--base", base, "--new", new, "--scorer", str(scorer)]
        + ["--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    return done.stdout.splitlines(), rows


def test_the_same_version_on_both_sides_differs_on_no_turn(runner, tmp_path: Path) -> None:
    """Both answer every turn after the same history, and the library is never written."""
    db = ingested(runner, tmp_path, PAGES)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    lines, rows = run(tmp_path, db, str(Path(sys.executable).parent / "ragchat"))
    assert [(r["turn"], r["kind"]) for r in rows] == [(1, "first"), (2, "follow-up"), (3, "first")]
    assert all(r["base"] == r["new"] for r in rows)
    assert [r["base"]["context"] for r in rows] == [True, True, True]
    assert lines[-1] == "answers changed: 0 of 3 turns"
    assert "context  won 0" in lines and "         lost 0" in lines
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before


def test_a_changed_version_is_scored_on_each_turn_after_the_base_history(
    runner, tmp_path: Path
) -> None:
    """NEW reads one chunk a turn (`RAGCHAT_TOP_K=1`): the turn whose keys lie on two pages
    loses its context, and BASE's turns are those of a run beside itself (NEW's answers never
    enter the session BASE holds)."""
    db = ingested(runner, tmp_path, PAGES)
    _, alone = run(tmp_path, db, str(Path(sys.executable).parent / "ragchat"))
    narrow = tmp_path / "narrow"
    ragchat = Path(sys.executable).parent / "ragchat"
    narrow.write_text(f'#!/bin/sh\nRAGCHAT_TOP_K=1 exec "{ragchat}" "$@"\n', encoding="utf-8")
    narrow.chmod(0o755)
    lines, rows = run(tmp_path, db, str(narrow))
    assert [r["base"] for r in rows] == [r["base"] for r in alone]
    assert [r["new"]["context"] for r in rows] == [True, True, False]
    assert "         lost 1 w/3" in lines
    assert lines[-1].startswith("answers changed: ")


def test_differences_count_a_notice_right_only_on_a_not_covered_turn(pairing) -> None:
    def row(turn: int, kind: str, base: bool, new: bool) -> dict:
        scores = {"gold5": None, "context": None, "answer": None}
        return {
            "id": "c", "turn": turn, "kind": kind,
            "base": {**scores, "notice": base}, "new": {**scores, "notice": new},
        }  # fmt: skip

    rows = [row(1, "first", False, True), row(2, "not-covered", False, True)]
    assert pairing.differences(rows)["notice"] == (["c/2"], ["c/1"])
