"""Helpers shared by the tests (importable: pytest puts tests/ on the path)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ragchat.cli import app
from ragchat.config import Settings, user_cache_dir

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "sample_docs"
MODEL_CACHE = str(user_cache_dir() / "models")  # the offline model is assembled once per machine


def settings_for(db: Path, **changes) -> Settings:
    return Settings(db=db, model_cache=MODEL_CACHE, ollama="off").replace(**changes)


def invoke(runner: CliRunner, *args: object, input: str | None = None):
    """Run the CLI in-process; the click Result's output holds stdout and stderr."""
    return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)


def ask_json(runner: CliRunner, db: Path, session: str, question: str) -> dict:
    """One `ragchat ask --json` turn; its trace as a dict."""
    result = invoke(runner, "ask", question, "--session", session, "--json", "--db", db)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])
