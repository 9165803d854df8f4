"""Start-up: each command imports what it needs when it runs. `--help`, `config`, `sessions` and
`inspect` never load the embedding runtime, the Ollama client or the eval module; checked in a
new process (this one has imported everything already)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ask_json

HEAVY = ("fastembed", "onnxruntime", "tokenizers", "ollama", "pandas")
PROBE = """
import json, sys
from ragchat.cli import app
try:
    app(sys.argv[1:], prog_name="ragchat")
    code = 0
except SystemExit as exc:
    code = exc.code
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {heavy} or m == "ragchat.evaluate")
print("PROBE " + json.dumps({{"code": code, "loaded": loaded, "numpy": "numpy" in sys.modules}}))
"""


def run_probe(*args: object) -> tuple[dict, str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=set(HEAVY)), *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = done.stdout.splitlines()
    assert lines and lines[-1].startswith("PROBE "), done.stdout + done.stderr
    return json.loads(lines[-1][len("PROBE ") :]), "\n".join(lines[:-1])


@pytest.fixture
def db_with_a_turn(library_db: Path, runner) -> Path:
    ask_json(runner, library_db, "probe", "who may witness a will?")
    return library_db


def test_help_imports_no_database_or_model_code() -> None:
    probe, output = run_probe("--help")
    assert probe == {"code": 0, "loaded": [], "numpy": False}
    assert "ingest" in output and "inspect" in output


@pytest.mark.parametrize(
    "args, shown",
    [
        (("config",), "embed_batch"),
        (("sessions",), "probe"),
        (("inspect", "last-turn"), "witness"),
        (("inspect", "turn", "1", "--json"), '"question": "who may witness a will?"'),
    ],
)
def test_read_only_commands_load_no_model_client_or_eval(
    db_with_a_turn: Path, args: tuple[str, ...], shown: str
) -> None:
    probe, output = run_probe(*args, "--db", db_with_a_turn)
    assert probe["code"] == 0, output
    assert probe["loaded"] == []
    assert shown in output


def test_search_loads_the_model_runtime_but_not_ollama_or_eval(db_with_a_turn: Path) -> None:
    """The counter-check: the probe does see a model being loaded."""
    probe, output = run_probe("search", "witness", "--db", db_with_a_turn)
    assert probe["code"] == 0, output
    assert "onnxruntime" in probe["loaded"] and not {"ollama", "ragchat.evaluate", "pandas"} & set(
        probe["loaded"]
    )


def test_ask_without_ollama_listening_never_imports_its_client(db_with_a_turn: Path) -> None:
    """Nothing listens at the configured Ollama host (see conftest): a refused connection is
    enough to fall back, without the client's import."""
    probe, output = run_probe(
        "ask", "what age must a witness be?", "--session", "probe", "--db", db_with_a_turn
    )
    assert probe["code"] == 0, output
    assert "connection refused" in output and "ollama" not in probe["loaded"]
