"""`ragchat sessions` (humane times, first question, --json, rm, rename) and `ragchat export`."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from helpers import ask_json, invoke, settings_for

from ragchat import render
from ragchat.app import App
from ragchat.store import sessions


@pytest.fixture
def two_sessions(library_db: Path, runner) -> Path:
    ask_json(runner, library_db, "wills", "What makes a will legally binding in South Africa?")
    ask_json(runner, library_db, "wills", "what age must a witness be?")
    ask_json(runner, library_db, "tanks", "How big should a rainwater tank be?")
    return library_db


NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    "delta, shown",
    [
        (timedelta(seconds=5), "just now"),
        (timedelta(minutes=5), "5 min ago"),
        (timedelta(hours=2), "2 h ago"),
        (timedelta(days=1, hours=3), "yesterday"),
        (timedelta(days=3), "3 days ago"),
        (timedelta(days=40), "2026-10-13"),
    ],
)
def test_ago_is_humane(delta: timedelta, shown: str) -> None:
    assert render.ago((NOW - delta).isoformat(timespec="seconds"), NOW) == shown


def test_sessions_lists_time_ago_and_first_question(two_sessions: Path, runner) -> None:
    result = invoke(runner, "sessions", "--db", two_sessions)
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "last used" in lines[1] and "first question" in lines[1]
    tanks = next(line for line in lines if "tanks" in line)
    assert "just now" in tanks and "How big should a rainwater tank be?" in tanks
    wills = next(line for line in lines if "wills" in line)
    assert " 2 " in wills and "What makes a will legally binding" in wills
    assert lines.index(tanks) < lines.index(wills)  # most recent first


def test_sessions_json(two_sessions: Path, runner) -> None:
    rows = [
        json.loads(line)
        for line in invoke(runner, "sessions", "--json", "--db", two_sessions).stdout.splitlines()
    ]
    assert [(r["name"], r["turns"], r["first_question"]) for r in rows] == [
        ("tanks", 1, "How big should a rainwater tank be?"),
        ("wills", 2, "What makes a will legally binding in South Africa?"),
    ]
    assert all(datetime.fromisoformat(r["updated_at"]) for r in rows)


def test_rename_and_remove(two_sessions: Path, runner) -> None:
    result = invoke(runner, "sessions", "rename", "wills", "estate", "--db", two_sessions)
    assert result.exit_code == 0 and "Renamed session wills to estate." in result.output
    db = App(settings_for(two_sessions)).db
    assert [
        m.role for m in sessions.messages(db, sessions.session_id(db, "estate", create=False))
    ] == ["user", "assistant"] * 2
    taken = invoke(runner, "sessions", "rename", "estate", "tanks", "--db", two_sessions)
    assert taken.exit_code == 1 and taken.output.startswith(
        "Error: a session named 'tanks' exists already"
    )
    missing = invoke(runner, "sessions", "rm", "wills", "--db", two_sessions)
    assert missing.exit_code == 1 and missing.output.startswith("Error: no session named 'wills'")

    removed = invoke(
        runner, "sessions", "--db", two_sessions, "rm", "estate"
    )  # the group's --db counts too
    assert removed.exit_code == 0 and "Removed session estate (2 turn(s))." in removed.output
    assert [r["name"] for r in sessions.sessions(db)] == ["tanks"]
    assert db.execute(
        "SELECT count(*) FROM messages WHERE session_id NOT IN (SELECT id FROM sessions)"
    ).fetchone() == (0,)


def test_export_writes_markdown_with_sources(two_sessions: Path, runner, tmp_path: Path) -> None:
    result = invoke(runner, "export", "wills", "--db", two_sessions)
    assert result.exit_code == 0, result.output
    text = result.stdout
    assert text.startswith("# Session wills\n")
    assert "## 1. What makes a will legally binding in South Africa?" in text
    assert "## 2. what age must a witness be?" in text
    app = App(settings_for(two_sessions))
    for turn in app.turns("wills"):
        assert turn.answer.strip() in text
        for chunk in turn.lineage.chunks:
            if chunk.used:
                assert f"- [{chunk.rank}] `{chunk.document}`" in text
    assert text.count("**Sources**") == 2

    target = tmp_path / "wills.md"
    written = invoke(runner, "export", "wills", "-o", target, "--db", two_sessions)
    assert written.exit_code == 0 and "Wrote" in written.output and target.read_text() == text
    target.write_text("my notes")
    refused = invoke(runner, "export", "wills", "-o", target, "--db", two_sessions)
    assert refused.exit_code == 1 and "exists; add --force to overwrite it" in refused.output
    assert target.read_text() == "my notes"
    assert (
        invoke(runner, "export", "wills", "-o", target, "--force", "--db", two_sessions).exit_code
        == 0
    )
    assert target.read_text() == text


def test_export_of_a_missing_session_is_one_error_line(
    two_sessions: Path, runner, tmp_path: Path
) -> None:
    result = invoke(runner, "export", "nobody", "-o", tmp_path / "x.md", "--db", two_sessions)
    assert (
        result.exit_code == 1
        and result.output.strip() == "Error: no session named 'nobody' (see `ragchat sessions`)"
    )
    assert not (tmp_path / "x.md").exists()


def test_export_prints_nothing_raw(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "esc", "who may witness a will?\x1b]52;c;aGk=\x07\x1b[2J now")
    text = invoke(runner, "export", "esc", "--db", library_db).stdout
    assert "## 1. who may witness a will? now" in text
    assert not any(ch in text for ch in "\x1b\x07\x9b")
