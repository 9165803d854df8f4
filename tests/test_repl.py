"""The chat REPL driven with scripted keyboard input (prompt-toolkit pipe input), on
a real library."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from helpers import settings_for
from ollama_server import FakeOllama
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.input.posix_pipe import PosixPipeInput
from prompt_toolkit.output import DummyOutput

from ragchat.app import App
from ragchat.repl import Repl, SlashCompleter
from ragchat.store import sessions
from ragchat.store.db import open_db


def run_repl(db: Path, lines: list[str], session: str = "r1", **settings) -> None:
    app = App(settings_for(db, **settings))
    with create_pipe_input() as keyboard:
        for line in lines:
            keyboard.send_text(line + "\r")
        keyboard.close()  # then Ctrl-D: the prompt sees end of input
        Repl(app, session, input=keyboard, output=DummyOutput()).run()
    app.close()


def test_a_scripted_session_with_slash_commands(library_db: Path, capsys) -> None:
    run_repl(
        library_db,
        [
            "/help",
            "What makes a will legally binding in South Africa?",
            "what age must a witness be?",
            "/sources",
            "/inspect",
            "/inspect 1",
            "/sessions",
            "/bogus",
            "",
            "/new other",
            "/sessions",
        ],
    )
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "/ingest PATH" in out and "/new NAME" in out  # the help
    assert "14 years" in out
    assert "(follow-up of the last answer)" in out
    assert out.count("anchored on south_africa_wills.md") >= 2  # the answer's panel and /sources
    assert "Turn 2" in out and "anchored_search" in out and "Turn 1" in out
    assert "unknown command /bogus" in out
    assert "session other" in out
    assert "bye" in out
    db = App(settings_for(library_db)).db
    assert [m.role for m in sessions.messages(db, sessions.session_id(db, "r1"))] == [
        "user",
        "assistant",
    ] * 2
    assert {row["name"] for row in sessions.sessions(db)} >= {"r1", "other"}


def test_resuming_shows_the_last_exchange_and_keeps_context(library_db: Path, capsys) -> None:
    run_repl(library_db, ["Tell me about heat pumps"], session="resume")
    capsys.readouterr()
    run_repl(library_db, ["How does it work?"], session="resume")
    out = capsys.readouterr().out
    assert "resuming: 1 earlier turn(s)" in out and "> Tell me about heat pumps" in out
    assert "anchored on heat_pumps_explained.md" in out


def test_input_history_persists_beside_the_database(library_db: Path) -> None:
    run_repl(library_db, ["How big should a rainwater tank be?"])
    history = (library_db.parent / "chat_history").read_text()
    assert "How big should a rainwater tank be?" in history


def test_ingest_from_the_repl(tmp_path: Path, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kettle.md").write_text("# Kettles\n\nDescale a kettle with citric acid every month.\n")
    open_db(tmp_path / "fresh.db").close()  # an empty library (`chat` never creates one)
    run_repl(tmp_path / "fresh.db", [f"/ingest {docs}", "how often should I descale the kettle?"])
    out = capsys.readouterr().out
    assert "the library is empty" in out
    assert "1 added" in out
    assert "citric acid" in out


def test_ctrl_c_cancels_the_answer_not_the_program(library_db: Path, capsys) -> None:
    """A real SIGINT while Ollama streams: the answer stops, the turn is kept, the REPL goes on."""
    with FakeOllama() as server:

        def reply(request: dict):
            if request.get("format"):
                return {
                    "semantic_query": request["messages"][-1]["content"].split(
                        "LATEST USER MESSAGE: "
                    )[-1],
                    "keyword_query": "rainwater, tank",
                    "is_follow_up": False,
                    "is_meta": False,
                    "topic_shift": False,
                    "reasoning": "standalone",
                }
            return "unused"

        server.default = reply
        server.stream(
            ["Rainwater ", "tanks ", "are ", "sized ", "by ", "roof ", "area ", "[1]."], delay=0.4
        )
        done = threading.Event()

        def interrupt_while_streaming() -> None:
            # SIGINT once two pieces are out (six more follow, 0.4 s apart): mid-stream however
            # slow the start-up is on a loaded machine
            deadline = time.monotonic() + 120
            while len(server.sent_at) < 2 and time.monotonic() < deadline and not done.is_set():
                time.sleep(0.02)
            if len(server.sent_at) >= 2 and not done.is_set():
                os.kill(os.getpid(), signal.SIGINT)

        watcher = threading.Thread(target=interrupt_while_streaming, daemon=True)
        # Ctrl-C as a terminal delivers it, even when the tests were started with SIGINT ignored
        # (a background job of a non-interactive shell)
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        watcher.start()
        try:
            run_repl(
                library_db,
                ["How big should a rainwater tank be?", "/sources"],
                session="cc",
                ollama="on",
                ollama_host=server.url,
                ollama_timeout=5.0,
            )
        finally:
            done.set()
            watcher.join(timeout=5)
            signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    out = capsys.readouterr().out
    assert "answer cancelled" in out
    assert "Sources" in out  # /sources still ran: the program went on
    assert "bye" in out
    db = App(settings_for(library_db)).db
    answer = sessions.messages(db, sessions.session_id(db, "cc"))[-1]
    assert answer.content.startswith("Rainwater") and answer.content.endswith("[cancelled]")
    assert "roof" not in answer.content
    assert answer.lineage["answer_mode"] == "cancelled" and answer.lineage["chunks"]


def test_ollama_failure_is_announced_once_per_session(library_db: Path, capsys) -> None:
    with FakeOllama() as server:
        server.default = lambda request: "not json at all"  # garbage for every request
        run_repl(
            library_db,
            ["Tell me about heat pumps", "How does it work?", "and the defrost cycle?"],
            session="once",
            ollama="on",
            ollama_host=server.url,
            ollama_timeout=5.0,
        )
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert (
        out.count(
            "Ollama reformulation failed (invalid JSON in reply); using the heuristic reformulator"
        )
        == 1
    )
    db = App(settings_for(library_db)).db
    lineages = [
        m.lineage for m in sessions.messages(db, sessions.session_id(db, "once")) if m.lineage
    ]
    assert [lineage["reformulation"]["reformulator"] for lineage in lineages] == ["heuristic"] * 3
    assert all(
        any("invalid JSON" in n for n in lineage["notices"]) for lineage in lineages[1:]
    )  # recorded every turn


# --- conventions: bare words, bad arguments, /new on an existing name, /sources N, completion
# ------


def test_bare_help_exit_quit_clear_are_commands_not_questions(library_db: Path, capsys) -> None:
    run_repl(
        library_db,
        ["help", "clear", "Tell me about heat pumps", "exit", "never asked"],
        session="bare",
    )
    out = capsys.readouterr().out
    assert "/sources [N]" in out and "bye" in out
    db = App(settings_for(library_db)).db
    asked = [
        m.content
        for m in sessions.messages(db, sessions.session_id(db, "bare"))
        if m.role == "user"
    ]
    assert asked == ["Tell me about heat pumps"]  # neither "help" nor "clear" reached the documents
    run_repl(library_db, ["quit", "never asked either"], session="bare")
    assert len(sessions.messages(db, sessions.session_id(db, "bare"))) == 2


@pytest.mark.parametrize(
    "line, expected",
    [
        ("/inspect abc", "Error: /inspect wants a turn number, not 'abc'"),
        ("/inspect 9", "Error: session 'args' has no turn 9 (it has turns 1-1)"),
        ("/sources x", "Error: /sources wants a source number, not 'x'"),
        ("/sources 99", "Error: the last answer has no source 99 (it has 1-"),
        ("/sessions now", "Error: /sessions takes no argument (got 'now')"),
        ("/new", "Error: usage: /new NAME"),
        ("/resume nobody", "Error: no session named 'nobody'"),
        ("/ingest 'unclosed", "Error: /ingest: No closing quotation"),
    ],
)
def test_bad_arguments_are_one_error_line(
    line: str, expected: str, library_db: Path, capsys
) -> None:
    run_repl(library_db, ["Tell me about heat pumps", line, "/sources"], session="args")
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("Error:")]
    assert len(errors) == 1 and errors[0].startswith(expected), captured.err
    assert "Turn 1" not in captured.out  # `/inspect abc` no longer shows the last turn
    assert (
        captured.out.count("Sources") == 2
    )  # the answer's panel, and the REPL went on to /sources


def test_new_on_an_existing_session_offers_to_resume_it(library_db: Path, capsys) -> None:
    run_repl(library_db, ["Tell me about heat pumps"], session="old")
    capsys.readouterr()
    run_repl(library_db, ["/new old", "/resume old", "How does it work?"], session="other")
    out = capsys.readouterr().out
    assert (
        "session old exists already (1 turn(s), last used just now): /resume old continues it"
        in out
    )
    assert "resuming: 1 earlier turn(s)" in out and "anchored on heat_pumps_explained.md" in out
    db = App(settings_for(library_db)).db
    assert [m.role for m in sessions.messages(db, sessions.session_id(db, "old"))] == [
        "user",
        "assistant",
    ] * 2


def test_sources_n_shows_the_passage_with_the_cited_sentences(
    library_db: Path, capsys, monkeypatch
) -> None:
    from rich.console import Console

    from ragchat import render
    from ragchat.store import library

    run_repl(library_db, ["What makes a will legally binding in South Africa?"], session="src")
    app = App(settings_for(library_db))
    last = app.turn("src")
    number = next(
        c.rank for c in last.lineage.chunks if render.cited_sentences(last.answer, c.rank)
    )
    chosen = next(c for c in last.lineage.chunks if c.rank == number)
    chunk_text = library.chunks_by_ids(app.db, [chosen.chunk_id])[chosen.chunk_id].text
    app.close()

    screen = Console(
        width=100, force_terminal=True, color_system="standard", highlight=False, record=True
    )
    monkeypatch.setattr(render, "console", screen)
    run_repl(library_db, [f"/sources {number}"], session="src")
    plain = " ".join(screen.export_text(clear=False).split())
    where = chosen.document + (
        f" › {chosen.heading.replace(' > ', ' › ')}" if chosen.heading else ""
    )
    assert f"[{number}] {where}" in plain
    assert " ".join(chunk_text.split()) in plain  # the whole passage
    assert "highlighted: what the answer took from this passage" in plain
    styled = screen.export_text(styles=True)
    sentence = render.cited_sentences(last.answer, number)[0]
    assert (
        "\x1b[1;33m" + sentence.split()[0] in styled
    )  # the cited sentence starts a bold yellow span


def test_cited_sentences_are_found_without_markers_and_bullets() -> None:
    from ragchat.render import cited_sentences

    answer = (
        "- A will needs two witnesses. [1]\n- Witnesses must be 14. [2][1]\n- Unrelated "
        "text here. [3]"
    )
    assert cited_sentences(answer, 1) == ["A will needs two witnesses.", "Witnesses must be 14."]
    assert cited_sentences(answer, 4) == []


def test_tab_completes_commands_and_session_names(library_db: Path) -> None:
    run_repl(library_db, ["Tell me about heat pumps"], session="heatpumps")
    app = App(settings_for(library_db))
    with create_pipe_input() as keyboard:
        repl = Repl(app, "other", input=keyboard, output=DummyOutput())
        completer = repl.prompt.completer
        assert completer is not None

        def complete(text: str) -> list[str]:
            return [
                c.text
                for c in completer.get_completions(
                    Document(text), CompleteEvent(completion_requested=True)
                )
            ]

        assert complete("/ses") == ["/sessions"]
        assert complete("/in") == ["/ingest", "/inspect", "/in"]
        assert complete("/resume heat") == ["heatpumps"]
        assert complete("/new ") == sorted(complete("/new "))
        assert "heatpumps" in complete("/new ") and complete("what about /new") == []
        keyboard.close()
    # (Tab itself is prompt-toolkit's: it completes asynchronously, after a piped Enter would
    # submit)
    app.close()


def chat_typed_slowly(db: Path, pieces: list[str]) -> None:
    """The REPL on a keyboard that types `pieces` 0.5 s apart (the prompt runs between them); it
    must end by itself: prompt-toolkit's own handler for an error in its loop waits for an Enter
    that a pipe never sends (the full suite once hung there and was killed)."""
    with create_pipe_input() as keyboard:

        def type_slowly() -> None:
            for piece in pieces:
                keyboard.send_text(piece)
                time.sleep(0.5)
            keyboard.close()

        def chat() -> None:  # the app is the chat thread's: SQLite connections stay in theirs
            app = App(settings_for(db))
            Repl(app, "slow", input=keyboard, output=DummyOutput()).run()
            app.close()

        chatting = threading.Thread(target=chat, daemon=True)
        threading.Thread(target=type_slowly, daemon=True).start()
        chatting.start()
        chatting.join(timeout=60)
        assert not chatting.is_alive(), "the chat waited for a key that never came"


def test_an_error_inside_the_prompt_is_one_line_and_the_chat_goes_on(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    open_db(tmp_path / "lib.db").close()

    def broken(self, document, complete_event):
        raise RuntimeError("completion broke")
        yield

    monkeypatch.setattr(SlashCompleter, "get_completions", broken)  # any error in the prompt's loop
    chat_typed_slowly(tmp_path / "lib.db", ["/se", "ssions\r"])
    captured = capsys.readouterr()
    assert "Error: the prompt hit an internal error and goes on: completion broke" in captured.err
    assert "(no questions yet)" in captured.out and "bye" in captured.out  # /sessions ran


def test_an_input_that_cannot_be_read_ends_the_chat_in_one_line(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    """Past 1024 open files `select()` cannot watch the keyboard's descriptor: reading it fails
    on every turn of the prompt's loop (the full suite's CI run hung there, printing the same
    error line until it was killed). The same error twice with no key read between ends the
    chat as the end of input does."""
    open_db(tmp_path / "lib.db").close()
    reads = 0

    def unreadable(self):
        nonlocal reads
        reads += 1
        raise ValueError("filedescriptor out of range in select()")

    monkeypatch.setattr(PosixPipeInput, "read_keys", unreadable)
    chat_typed_slowly(tmp_path / "lib.db", ["/sessions\r"])
    err = capsys.readouterr().err
    said = "the prompt hit an internal error and goes on: filedescriptor out of range in select()"
    assert err.count(said) == 1, err
    assert err.count("the prompt cannot read what is typed and ends") == 1, err
    assert reads < 10


def test_an_unusable_input_history_file_is_said_and_the_chat_goes_on(
    tmp_path: Path, capsys
) -> None:
    open_db(tmp_path / "lib.db").close()
    (tmp_path / "chat_history").mkdir()  # not a file: reading it fails inside the prompt
    chat_typed_slowly(tmp_path / "lib.db", ["/sessions\r"])
    out = capsys.readouterr().out
    assert "! input history not kept:" in out
    assert "is not a file this user can read and write" in out
    assert "(no questions yet)" in out and "bye" in out
    assert (tmp_path / "chat_history").is_dir()  # left as it was
