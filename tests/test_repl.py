"""The chat REPL driven with scripted keyboard input (prompt-toolkit pipe input), on a real library."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from helpers import settings_for
from ollama_server import FakeOllama
from ragchat.app import App
from ragchat.repl import Repl
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
    run_repl(library_db, [
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
    ])
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
    assert [m.role for m in sessions.messages(db, sessions.session_id(db, "r1"))] == ["user", "assistant"] * 2
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
                return {"semantic_query": request["messages"][-1]["content"].split("LATEST USER MESSAGE: ")[-1],
                        "keyword_query": "rainwater, tank", "is_follow_up": False, "is_meta": False,
                        "topic_shift": False, "reasoning": "standalone"}
            return "unused"

        server.default = reply
        server.stream(["Rainwater ", "tanks ", "are ", "sized ", "by ", "roof ", "area ", "[1]."], delay=0.4)
        timer = threading.Timer(1.0, lambda: os.kill(os.getpid(), signal.SIGINT))
        timer.start()
        try:
            run_repl(library_db, ["How big should a rainwater tank be?", "/sources"], session="cc",
                     ollama="on", ollama_host=server.url, ollama_timeout=5.0)
        finally:
            timer.cancel()
    out = capsys.readouterr().out
    assert "answer cancelled" in out
    assert "Sources" in out  # /sources still ran: the program went on
    assert "bye" in out
    db = App(settings_for(library_db)).db
    answer = sessions.messages(db, sessions.session_id(db, "cc"))[-1]
    assert answer.content.startswith("Rainwater") and answer.content.endswith("[cancelled]")
    assert "roof" not in answer.content
    assert answer.lineage["answer_mode"] == "llm" and answer.lineage["chunks"]


def test_ollama_failure_is_announced_once_per_session(library_db: Path, capsys) -> None:
    with FakeOllama() as server:
        server.default = lambda request: "not json at all"  # garbage for every request
        run_repl(library_db, ["Tell me about heat pumps", "How does it work?", "and the defrost cycle?"],
                 session="once", ollama="on", ollama_host=server.url, ollama_timeout=5.0)
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert out.count("Ollama reformulation failed (invalid JSON in reply); using the heuristic reformulator") == 1
    db = App(settings_for(library_db)).db
    lineages = [m.lineage for m in sessions.messages(db, sessions.session_id(db, "once")) if m.lineage]
    assert [l["reformulation"]["reformulator"] for l in lineages] == ["heuristic"] * 3
    assert all(any("invalid JSON" in n for n in l["notices"]) for l in lineages[1:])  # recorded every turn
