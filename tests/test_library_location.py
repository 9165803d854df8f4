"""Where the library lives: only ingest creates a database; every other command refuses a missing,
empty, non-SQLite or foreign file without touching it; the default is the nearest `.ragchat/`
folder (as git finds `.git`), else the per-user library; --db and RAGCHAT_DB override both."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest
from helpers import invoke

from ragchat.config import find_library, user_data_dir

READ_ONLY = [
    ("search", "witness"),
    ("ask", "who may witness a will?"),
    ("chat",),
    ("inspect", "last-turn"),
    ("inspect", "turn", "1"),
    ("sessions",),
    ("sessions", "rm", "s1"),
    ("sessions", "rename", "a", "b"),
    ("export", "s1"),
]
NOTE = "# Beekeeping\n\nA hive needs a laying queen, dry frames and a calm keeper in spring.\n"


def one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: "), result.output
    return lines[0]


def digest(path: Path) -> tuple[str, int]:
    return hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "bees.md").write_text(NOTE)
    return folder


def test_no_parent_of_the_test_folders_holds_a_library(tmp_path: Path) -> None:
    """The tests below rely on it: a stray /tmp/.ragchat would be found first."""
    assert not [p for p in tmp_path.parents if (p / ".ragchat").exists()]


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_read_only_commands_never_create_a_database(
    args: tuple[str, ...], tmp_path: Path, runner
) -> None:
    target = tmp_path / "nowhere" / "x.db"
    line = one_error_line(invoke(runner, *args, "--db", target))
    assert f"no library at {target}" in line and "ragchat ingest" in line
    assert not (tmp_path / "nowhere").exists()


@pytest.mark.parametrize("args", READ_ONLY, ids=" ".join)
def test_read_only_commands_create_nothing_in_the_default_places(
    args: tuple[str, ...], tmp_path: Path, runner
) -> None:
    line = one_error_line(invoke(runner, *args))
    assert str(user_data_dir() / "ragchat.db") in line
    assert not user_data_dir().exists() and not (tmp_path / ".ragchat").exists()


NOT_A_LIBRARY = [
    (args, content)
    for args in [*READ_ONLY, ("ingest", "docs")]
    for content in ("text", "foreign-sqlite", "empty")
    if (args[0], content) != ("ingest", "empty")
]  # ingest may fill an empty file: next test


@pytest.mark.parametrize(
    "args, content", NOT_A_LIBRARY, ids=lambda v: " ".join(v) if isinstance(v, tuple) else v
)
def test_a_file_that_is_not_a_library_is_never_written(
    args: tuple[str, ...], content: str, tmp_path: Path, docs: Path, runner
) -> None:
    target = tmp_path / "README.md"
    if content == "text":
        target.write_text("# My project\n\nNot a database.\n")
    elif content == "foreign-sqlite":
        with sqlite3.connect(target) as conn:
            conn.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        conn.close()
    else:
        target.write_bytes(b"")
    before = digest(target)
    line = one_error_line(invoke(runner, *args, "--db", target))
    expected = {
        "text": "is not a SQLite database",
        "foreign-sqlite": "a SQLite database of another program",
        "empty": "is an empty file, not a library",
    }[content]
    assert expected in line and str(target) in line
    assert digest(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["README.md", "docs"]  # no -wal, no -shm


def test_ingest_fills_an_empty_file(tmp_path: Path, docs: Path, runner) -> None:
    target = tmp_path / "lib.db"
    target.write_bytes(b"")
    result = invoke(runner, "ingest", docs, "--db", target)
    assert result.exit_code == 0, result.output
    assert "1 added" in result.output and f"written to {target}" in result.output


def test_the_nearest_ragchat_folder_above_is_the_library(
    tmp_path: Path, docs: Path, runner, monkeypatch
) -> None:
    project = tmp_path / "project"
    (project / ".ragchat").mkdir(parents=True)
    deeper = project / "src" / "module"
    deeper.mkdir(parents=True)
    monkeypatch.chdir(deeper)
    expected = project / ".ragchat" / "ragchat.db"
    assert find_library() == (expected, "default: nearest .ragchat/ folder")

    result = invoke(runner, "ingest", docs)
    assert result.exit_code == 0, result.output
    assert f"written to {expected}" in result.output
    assert expected.is_file() and not user_data_dir().exists()

    config = invoke(runner, "config").output
    assert f"database: {expected}" in config and "not created yet" not in config
    assert "nearest .ragchat/" in config

    monkeypatch.chdir(project)  # the same library from anywhere in the project
    assert "bees.md" in invoke(runner, "search", "laying queen", "--mode", "fts").output


def test_without_a_project_folder_the_per_user_library_is_used(
    tmp_path: Path, docs: Path, runner
) -> None:
    expected = tmp_path / "xdg-data" / "ragchat" / "ragchat.db"
    config = invoke(runner, "config").output
    assert f"database: {expected} (not created yet: `ragchat ingest PATH` creates it)" in config
    result = invoke(runner, "ingest", docs)
    assert result.exit_code == 0, result.output
    assert f"written to {expected}" in result.output
    assert not (tmp_path / ".ragchat").exists()
    assert "not created yet" not in invoke(runner, "config").output
    assert "bees.md" in invoke(runner, "search", "laying queen", "--mode", "fts").output


def test_db_flag_and_environment_beat_the_project_folder(
    tmp_path: Path, docs: Path, runner, monkeypatch
) -> None:
    (tmp_path / ".ragchat").mkdir()
    from_env = tmp_path / "env.db"
    monkeypatch.setenv("RAGCHAT_DB", str(from_env))
    assert f"written to {from_env}" in invoke(runner, "ingest", docs).output
    flagged = tmp_path / "flag.db"
    assert f"written to {flagged}" in invoke(runner, "ingest", docs, "--db", flagged).output
    assert list((tmp_path / ".ragchat").iterdir()) == []
