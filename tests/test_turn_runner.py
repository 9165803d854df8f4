"""One turn runner for both front doors (`ragchat/runner.py`): `ask` and the chat show a turn the
same way, and `ask --json` shows nothing but its JSON, whatever the settings ask to show."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import invoke, settings_for
from ollama_server import FakeOllama, Stream

from ragchat.app import App
from ragchat.repl import Repl

MODEL = "llama3.2"
QUESTION = "What makes a will valid in South Africa?"
READING = {"is_follow_up": False, "is_meta": False, "topic_shift": False}


def reply(request: dict) -> object:
    """A reading of the question for a reading request; a thinking model's answer otherwise."""
    if request.get("format"):
        return READING | {"semantic_query": QUESTION}
    return Stream(("Two witnesses ", "must sign [1]."), thinking=("The user asks ", "about wills."))


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOllama]:
    with FakeOllama(model=MODEL) as fake:
        fake.default = reply
        for name, value in {
            "OLLAMA": "on",
            "OLLAMA_HOST": fake.url,
            "OLLAMA_MODEL": MODEL,
            "OLLAMA_SHOW_THINKING": "true",
        }.items():
            monkeypatch.setenv(f"RAGCHAT_{name}", value)
        yield fake


def test_ask_json_prints_only_its_json_even_when_thinking_is_shown(
    library_db: Path, runner, server
) -> None:
    result = invoke(runner, "ask", QUESTION, "--json", "--db", library_db)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert len(lines) == 1, lines  # no reasoning, no answer text before the JSON
    trace = json.loads(lines[0])
    assert trace["answer"] == "Two witnesses must sign [1]." and trace["answer_mode"] == "llm"


def test_ask_and_the_chat_show_a_turn_the_same_way(library_db: Path, runner, server, capsys):
    asked = invoke(runner, "ask", QUESTION, "-s", "door-ask", "--db", library_db)
    assert asked.exit_code == 0, asked.output
    app = App(
        settings_for(
            library_db,
            ollama="on",
            ollama_host=server.url,
            ollama_model=MODEL,
            ollama_show_thinking=True,
        )
    )
    Repl(app, "door-chat", lines=[QUESTION]).run()
    app.close()
    chatted = capsys.readouterr().out.splitlines()
    echoed = next(i for i, line in enumerate(chatted) if line.startswith("door-chat>"))
    turn = chatted[echoed + 1 : chatted.index("bye")]
    assert "The user asks about wills." in asked.stdout  # the reasoning, shown as asked
    assert "Two witnesses must sign [1]." in asked.stdout
    assert turn == asked.stdout.splitlines()
