"""CLI conventions: help that reads like a finished tool, --version, empty input refused, no notice
for a choice the user made, progress only on a terminal and on stderr, and `chat` from a pipe."""

from __future__ import annotations

import io
import os
from importlib.metadata import version
from pathlib import Path

import pytest
import typer.main
from helpers import SAMPLE_DOCS, invoke, settings_for
from rich.console import Console

from ragchat import render
from ragchat.app import App
from ragchat.cli import app
from ragchat.store import sessions


def all_commands() -> list[tuple[list[str], object]]:
    """Every command and group, by its path of names."""
    found: list[tuple[list[str], object]] = []

    def walk(path: list[str], command: object) -> None:
        found.append((path, command))
        for name, sub in sorted(getattr(command, "commands", {}).items()):
            walk([*path, name], sub)

    walk([], typer.main.get_command(app))
    return found


COMMANDS = all_commands()


@pytest.mark.parametrize(
    "path, command", COMMANDS, ids=[" ".join(p) or "ragchat" for p, _ in COMMANDS]
)
def test_help_has_no_type_tags_and_describes_everything(path: list[str], command, runner) -> None:
    result = invoke(runner, *path, "--help")
    assert result.exit_code == 0, result.output
    text = result.output
    for junk in ("<", ">", "{", "}", "list[", "[default: no-", "text]", "x>="):
        assert junk not in text, (junk, text)
    assert text.splitlines()[0].startswith("Usage: ")
    for param in command.params:
        if param.name != "help":
            assert (getattr(param, "help", None) or "").strip(), (
                f"{' '.join(path)}: {param.name} has no help"
            )
    assert (command.help or "").strip()
    for sub in getattr(command, "commands", {}).values():
        short = sub.get_short_help_str(limit=45)
        assert short and not short.endswith("...") and len(short) <= 60, short
        assert short in text  # listed in full, not cut off


def test_choices_are_listed_and_enforced(runner) -> None:
    assert "--mode [hybrid|vector|fts]" in invoke(runner, "search", "--help").output
    result = invoke(runner, "search", "x", "--mode", "semantic")
    assert result.exit_code == 2 and "semantic" in result.output


def test_arguments_are_named_by_what_they_are(runner) -> None:
    assert "Usage: root ingest [OPTIONS] PATH..." in invoke(runner, "ingest", "--help").output
    assert "Usage: root search [OPTIONS] QUERY" in invoke(runner, "search", "--help").output
    assert (
        "Usage: root sessions rename [OPTIONS] OLD NEW"
        in invoke(runner, "sessions", "rename", "--help").output
    )


def test_version(runner) -> None:
    result = invoke(runner, "--version")
    assert result.exit_code == 0 and result.output.strip() == f"ragchat {version('ragchat')}"


@pytest.mark.parametrize("command", ["search", "ask"])
@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_query_is_one_error_line(
    command: str, text: str, library_db: Path, runner
) -> None:
    result = invoke(runner, command, text, "--db", library_db)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("Error: empty "), result.output


def test_ollama_off_prints_no_ollama_notice(library_db: Path, runner, monkeypatch) -> None:
    asked = invoke(runner, "ask", "who may witness a will?", "--db", library_db)
    assert "Ollama not usable" in asked.output  # auto, nothing listening: said once
    monkeypatch.setenv("RAGCHAT_OLLAMA", "off")
    asked = invoke(runner, "ask", "who may witness a will?", "--db", library_db)
    assert asked.exit_code == 0 and "ollama" not in asked.output.lower()
    assert "Sources" in asked.output
    chatted = invoke(
        runner, "chat", "-s", "off", "--db", library_db, input="who may witness a will?\n"
    )
    assert chatted.exit_code == 0 and "ollama" not in chatted.output.lower()


def test_search_warns_on_weak_matches_like_ask(library_db: Path, runner) -> None:
    weak = invoke(runner, "search", "quantum chromodynamics of gluon plasma", "--db", library_db)
    assert weak.exit_code == 0 and "weak matches: the documents may not cover this" in weak.output
    strong = invoke(runner, "search", "who may witness a will", "--db", library_db)
    assert "south_africa_wills.md" in strong.output and "weak matches" not in strong.output
    as_json = invoke(
        runner, "search", "quantum chromodynamics of gluon plasma", "--json", "--db", library_db
    )
    assert "weak" not in as_json.output  # JSON lines stay parseable; each row has its similarity


def test_progress_goes_to_stderr_and_only_on_a_terminal(tmp_path: Path, runner) -> None:
    result = invoke(runner, "ingest", SAMPLE_DOCS, "--db", tmp_path / "lib.db")
    assert result.exit_code == 0
    assert result.stderr == ""  # not a terminal: no bar at all
    assert result.stdout.startswith("Ingest: 8 added")

    terminal = Console(file=io.StringIO(), force_terminal=True, width=100)
    with render.IngestProgress(terminal) as progress:
        progress.files(2)
        progress.file_done("a.md")
    assert "files" in terminal.file.getvalue()
    piped = Console(file=io.StringIO(), width=100)
    with render.IngestProgress(piped) as progress:
        progress.files(2)
        progress.file_done("a.md")
    assert piped.file.getvalue() == ""
    assert render._progress_console(None) is render.err_console


def test_chat_reads_one_question_a_line_from_a_pipe(library_db: Path, runner) -> None:
    script = (
        "What makes a will legally binding in South Africa?\r\nwhat age must a witness "
        "be?\n\n/sources\n"
    )
    result = invoke(runner, "chat", "-s", "piped", "--db", library_db, input=script)
    assert result.exit_code == 0, result.output
    out = result.output
    assert "Input is not a terminal" not in out and "\r" not in out
    assert (
        "piped> what age must a witness be?" in out
    )  # echoed, so the output reads as a transcript
    assert "14 years" in out and out.count("Sources") >= 3 and out.rstrip().endswith("bye")
    db = App(settings_for(library_db)).db
    questions = [
        m.content
        for m in sessions.messages(db, sessions.session_id(db, "piped"))
        if m.role == "user"
    ]
    assert questions == [
        "What makes a will legally binding in South Africa?",
        "what age must a witness be?",
    ]


def test_help_lines_fit_80_columns(runner, monkeypatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for path, _ in COMMANDS:
        text = invoke(runner, *path, "--help").output
        assert all(len(line) <= 80 for line in text.splitlines()), text


def test_a_command_closes_the_database_it_opened(library_db: Path, runner) -> None:
    """Run in-process (as the tests and any host embedding the CLI run it), a command used to
    leave its connection open: two or three descriptors each, over 1,024 by the suite's end,
    where the chat prompt's `select()` can no longer watch its keyboard."""

    def open_files() -> int:
        return len(os.listdir("/proc/self/fd"))

    invoke(runner, "sessions", "--db", library_db)  # what loads once (the model's files) is in
    before = open_files()
    for question in ["who must sign a will?", "and how old must they be?", ""]:
        invoke(runner, "ask", question, "--session", "s", "--db", library_db)
        invoke(runner, "sessions", "--db", library_db)
        invoke(runner, "documents", "--db", library_db)
    assert open_files() == before
