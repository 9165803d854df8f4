"""Turns under hostile conditions, through `ragchat ask` (in-process CLI): a broken or lying Ollama
(the real protocol, served by FakeOllama), hostile user text, and anchors whose documents vanished.

A small corpus of its own is ingested with the real model; every test gets a private copy.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from helpers import ask_json, invoke, settings_for
from ollama_server import Content, Failure, FakeOllama, Slow, Stream, free_port_url

from ragchat.conversation.ollama_reformulator import SCHEMA
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db

DOCS = {
    "wills.md": """# Wills in South Africa

## Formalities

A will is legally binding when it is in writing and the testator signs every page. Two competent
witnesses must sign the will in the presence of the testator and of each other.

## Witnesses to a will

A witness to a will must be at least 14 years old and competent to give evidence in court. A witness
who is also a beneficiary of the will may lose the inheritance.
""",
    "compost.md": """# Composting at home

Compost turns kitchen scraps and garden waste into \
humus. A compost heap needs green material and brown
material in roughly equal measure, and it should be turned every week so that it stays aerobic.

## Troubleshooting

A smelly compost heap is too wet: add dry leaves or shredded cardboard.
""",
    "heat_pumps.md": """# Heat pumps explained

A heat pump moves heat from the outside air into the house with a refrigerant cycle. In cold weather
the outdoor coil frosts over, and the defrost cycle briefly reverses the flow to melt the ice.
""",
    "rainwater.md": """# Rainwater harvesting

A rainwater tank collects runoff from the roof. A first-flush diverter discards the first, dirtiest
water of every storm so that leaves and dust stay out of the tank.
""",
}
WILL_QUESTION = "What makes a will legally binding in South Africa?"
MODEL = "llama3.2"


def write_docs(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in DOCS.items():
        (folder / name).write_text(text)
    return folder


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """The corpus ingested once with the real model; copied per test."""
    base = tmp_path_factory.mktemp("hostile-conversation")
    db_path = base / "lib.db"
    db = open_db(db_path)
    report = ingest(db, settings_for(db_path), [write_docs(base / "docs")], lambda: embedder)
    db.close()
    assert len(report.added) == len(DOCS)
    return db_path


@pytest.fixture
def db(ingested: Path, tmp_path: Path) -> Path:
    target = tmp_path / "lib.db"
    source = open_db(ingested)
    source.execute(f"VACUUM INTO '{target}'")
    source.close()
    return target


@pytest.fixture
def own_library(tmp_path: Path, runner) -> tuple[Path, Path]:
    """A corpus folder and database of this test alone (its files get changed or deleted)."""
    folder, db_path = write_docs(tmp_path / "docs"), tmp_path / "own.db"
    result = invoke(runner, "ingest", folder, "--db", db_path)
    assert result.exit_code == 0, result.output
    return folder, db_path


def ask(runner, db_path: Path, session: str, question: str):
    return invoke(runner, "ask", question, "--session", session, "--db", db_path)


def last_turn(runner, db_path: Path, session: str) -> dict:
    result = invoke(runner, "inspect", "last-turn", "--session", session, "--json", "--db", db_path)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_clean(result, exit_code: int = 0) -> None:
    assert result.exit_code == exit_code, result.output
    assert "Traceback" not in result.output


def printed_once(output: str, message: str) -> bool:
    """The notice is printed on one line of its own, exactly once."""
    lines = [line.strip() for line in output.splitlines()]
    return lines.count(f"! {message}") == 1 and output.count(message) == 1


# --- Ollama misbehaving ------------------------------------------------------------------------

GOOD_ANSWER = Stream(("A will needs ", "two witnesses [1]."))
GOOD_REFORMULATION = {
    "semantic_query": "What age must a witness to a will be in South Africa?",
    "is_follow_up": True,
    "is_meta": False,
    "topic_shift": False,
}


def by_kind(reformulation: Any, answer: Any) -> Callable[[dict], Any]:
    """A default reply by request kind: a `format` request is a reformulation, a
    stream an answer."""
    return lambda request: reformulation if request.get("format") else answer


def reformulation_fails(reason: str) -> str:
    return f"Ollama reformulation failed ({reason}); using the heuristic reformulator"


def answer_fails(reason: str) -> str:
    return f"Ollama answer failed ({reason}); using an extractive answer"


# name -> (how the server misbehaves, reason shown, does the answer fall back too)
FAILURES: dict[str, tuple[Callable[[FakeOllama], None], str, bool]] = {
    "down": (lambda server: None, "connection refused at {url}", True),
    "slow": (
        lambda server: setattr(server, "default", lambda r: Slow(3, Content("too late"))),
        "timed out after 1s",
        True,
    ),
    "http-500": (
        lambda server: setattr(server, "default", lambda r: Failure(500, "boom")),
        "HTTP 500: boom",
        True,
    ),
    "invalid-json": (
        lambda server: setattr(server, "default", by_kind("{not json at all", GOOD_ANSWER)),
        "invalid JSON in reply",
        False,
    ),
    "missing-fields": (
        lambda server: setattr(server, "default", by_kind({"semantic_query": "x"}, GOOD_ANSWER)),
        "reply missing fields: is_follow_up, is_meta, topic_shift",
        False,
    ),
    "unknown-model": (
        lambda server: setattr(server, "models", ["mistral:latest"]),
        f"model '{MODEL}' not found",
        True,
    ),
}


@pytest.fixture
def ollama_on(monkeypatch) -> Iterator[Callable[[str], None]]:
    """Turns Ollama on (strictly) and points it at a URL."""
    monkeypatch.setenv("RAGCHAT_OLLAMA", "on")
    monkeypatch.setenv("RAGCHAT_OLLAMA_MODEL", MODEL)
    monkeypatch.setenv("RAGCHAT_OLLAMA_TIMEOUT", "1")
    monkeypatch.setenv("RAGCHAT_OLLAMA_LOAD_TIMEOUT", "1")  # "slow": past the first wait
    yield lambda url: monkeypatch.setenv("RAGCHAT_OLLAMA_HOST", url)


@pytest.mark.parametrize("case", list(FAILURES))
def test_a_failing_ollama_falls_back_with_one_notice_and_records_the_path(
    db: Path, runner, ollama_on, case
) -> None:
    misbehave, reason, answer_falls_back = FAILURES[case]
    with FakeOllama(model=MODEL) as server:
        url = free_port_url() if case == "down" else server.url
        ollama_on(url)
        misbehave(server)
        reason = reason.format(url=url)
        expected_mode = "extractive" if answer_falls_back else "llm"

        first = ask_json(runner, db, "s", WILL_QUESTION)
        assert first["reformulation"]["reformulator"] == "heuristic"  # nothing to reformulate yet
        assert first["answer_mode"] == expected_mode
        assert first["notices"] == ([answer_fails(reason)] if answer_falls_back else [])
        assert first["answer"].strip()

        second = ask(runner, db, "s", "what age must a witness be")
        assert_clean(second)
        turn = last_turn(runner, db, "s")

    notices = [reformulation_fails(reason)] + ([answer_fails(reason)] if answer_falls_back else [])
    assert turn["notices"] == notices
    assert turn["reformulation"]["reformulator"] == "heuristic"
    assert turn["answer_mode"] == expected_mode
    assert turn["answer"].strip() and turn["chunks"]
    for message in notices:
        assert printed_once(second.output, message), second.output
    if case not in ("down", "unknown-model"):  # reached the server: it was asked, and gave up on
        assert any(r.get("format") == SCHEMA for r in server.requests)


def test_a_healthy_ollama_reformulates_with_the_schema_and_answers_with_citations(
    db: Path, runner, ollama_on
) -> None:
    with FakeOllama(model=MODEL) as server:
        ollama_on(server.url)
        server.default = by_kind(GOOD_REFORMULATION, GOOD_ANSWER)
        first = ask_json(runner, db, "h", WILL_QUESTION)
        server.default = by_kind(
            GOOD_REFORMULATION, Stream(("At least 14 years old [2]", ", and competent [1]."))
        )
        second = ask(runner, db, "h", "what age must a witness be")
        assert_clean(second)
        turn = last_turn(runner, db, "h")
        requests = list(server.requests)

    assert first["answer_mode"] == "llm" and first["answer"] == "A will needs two witnesses [1]."
    assert [c["used"] for c in first["chunks"]] == [c["rank"] == 1 for c in first["chunks"]]
    assert first["notices"] == []

    assert turn["reformulation"]["reformulator"] == f"heuristic+ollama:{MODEL}"
    assert turn["reformulation"]["model_query"] == GOOD_REFORMULATION["semantic_query"]
    assert (
        turn["reformulation"]["model_weight"] > 0
    )  # the rewrite comes closer than the question: its lists join
    assert {"model/vector", "model/fts"} <= {q["name"] for q in turn["queries"]}
    assert turn["answer_mode"] == "llm" and turn["notices"] == []
    assert turn["answer"] == "At least 14 years old [2], and competent [1]."
    assert [c["used"] for c in turn["chunks"]] == [c["rank"] in (1, 2) for c in turn["chunks"]]
    assert "At least 14 years old [2], and competent [1]." in " ".join(
        second.stdout.split()
    )  # streamed

    formatted = [r for r in requests if r.get("format")]
    assert (
        len(formatted) == 1 and formatted[0]["format"] == SCHEMA and formatted[0]["stream"] is True
    )
    prompt = formatted[0]["messages"][-1]["content"]
    assert (
        # the last answer without its [n]: those numbers named the last turn's sources
        f"RECENT EXCHANGE:\nUser: {WILL_QUESTION}\nAssistant: A will needs two witnesses." in prompt
    )
    assert (
        "KEYWORDS" not in prompt and len(prompt) < 2500
    )  # small-model friendly: the exchange and the message
    assert prompt.rstrip().endswith("LATEST USER MESSAGE: what age must a witness be")
    answers = [r for r in requests if r.get("stream") and not r.get("format")]
    assert len(answers) == 2 and "Sources:" in answers[-1]["messages"][-1]["content"]


# --- hostile user text -------------------------------------------------------------------------

HOSTILE_TEXT = {
    "fts-syntax": 'witness* AND "age NEAR/2 will" OR (-court) ^title:will {col}: NOT "unbalanced',
    "sql": "'; DROP TABLE chunks; -- what makes a will binding? \" OR 1=1; SELECT * FROM documents",
    "100-kb": "How many witnesses does a will need? " * 2800,
    "punctuation": "?!.,;:()[]{}\"'*^-+=<>/\\|@#$%&~`",
    "stop-words": "what is it and the of to a an",
    "japanese": "遺言書には何人の証人が必要ですか？",
    "arabic": "كم عدد الشهود المطلوبين للوصية؟",
}


@pytest.mark.parametrize("case", list(HOSTILE_TEXT))
def test_hostile_user_text_gets_an_answer_never_a_traceback(db: Path, runner, case) -> None:
    text = HOSTILE_TEXT[case]
    result = ask(runner, db, "t", text)
    assert_clean(result)
    turn = last_turn(runner, db, "t")
    assert turn["answer"].strip()
    assert "Sources" in result.stdout
    if case == "100-kb":
        assert len(turn["question"]) == 4000, "the stored question is the cut one"
        assert turn["notices"] == [
            f"question cut to its first 4000 characters (it had {len(text.strip())})"
        ]
        assert "will" in turn["answer"].lower()
    if case in ("punctuation", "stop-words"):
        assert turn["answer"].startswith("The documents may not cover this question."), turn[
            "answer"
        ]
    check = open_db(db)  # the SQL-looking text did nothing to the tables
    assert check.execute("SELECT count(*) FROM documents").fetchone()[0] == len(DOCS)
    check.close()


@pytest.mark.parametrize("text", ["", "   \n\t  "], ids=["empty", "blank"])
def test_an_empty_question_is_one_error_line(db: Path, runner, text: str) -> None:
    result = ask(runner, db, "e", text)
    assert_clean(result, exit_code=1)
    assert result.output.strip().splitlines() == [
        "Error: empty question: type a question about your documents"
    ]


# --- anchors whose documents vanished ----------------------------------------------------------


def change_or_remove(folder: Path, db_path: Path, runner, how: str) -> None:
    if how == "removed":
        (folder / "wills.md").unlink()
        result = invoke(runner, "ingest", folder, "--prune", "--db", db_path)
        assert "1 removed" in result.output, result.output
    else:
        (folder / "wills.md").write_text(
            "# Wills in South Africa\n\nSince the 2031 reform a will may be "
            "recorded on video; no witness needs to sign it any longer.\n"
        )
        result = invoke(runner, "ingest", folder, "--db", db_path)
        assert "1 updated" in result.output, result.output
    assert result.exit_code == 0


@pytest.mark.parametrize("how", ["removed", "changed"])
def test_a_follow_up_after_the_anchor_document_vanished(own_library, runner, how: str) -> None:
    folder, db_path = own_library
    first = ask_json(runner, db_path, "a", WILL_QUESTION)
    assert "wills.md" in {c["document"] for c in first["chunks"] if c["used"]}
    change_or_remove(folder, db_path, runner, how)

    result = ask(runner, db_path, "a", "what age must a witness be")

    assert_clean(result)
    assert "anchor gone: wills.md" in result.stdout
    turn = last_turn(runner, db_path, "a")
    assert turn["missing_anchors"] == ["wills.md"]
    assert "anchor document(s) gone since the last turn: wills.md" in " ".join(turn["notices"])
    assert turn["answer"].strip()


@pytest.mark.parametrize("how", ["removed", "changed"])
def test_a_meta_request_after_its_chunks_vanished(own_library, runner, how: str) -> None:
    folder, db_path = own_library
    first = ask_json(runner, db_path, "m", WILL_QUESTION)
    used = [c for c in first["chunks"] if c["used"]]
    gone = [c for c in used if c["document"] == "wills.md"]
    assert gone
    change_or_remove(folder, db_path, runner, how)

    result = ask(runner, db_path, "m", "summarize it")

    assert_clean(result)
    turn = last_turn(runner, db_path, "m")
    assert turn["plan"] == "reuse"
    assert (
        f"{len(gone)} reused chunk(s) no longer exist (document changed or removed)"
        in turn["notices"]
    )
    assert all(c["document"] != "wills.md" for c in turn["chunks"] if c["reused"])
    assert turn["answer"].strip()
    assert "anchor gone: wills.md" in result.stdout
