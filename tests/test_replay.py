"""`ragchat eval` with replayed models: recorded replies and failing synthetic models answer the
reformulation request through the real Ollama path (an in-process transport speaking Ollama's
protocol, the real `ollama` client, the same validation, weighting and fusion)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from helpers import invoke
from test_evaluate import ITEMS, _write_lines, _write_set

from ragchat.errors import RagchatError
from ragchat.evaluate import sets, strategies
from ragchat.evaluate.replayed import Content, Failure, reply_for, synthetic_reply

RECORDED = {
    "semantic_query": "How long does the warranty of the Zephyr X200 blender last?",
    "is_follow_up": True,
    "is_meta": False,
    "topic_shift": False,
}
STRATEGIES = (
    "ragchat,ragchat+recorded,reply-alone,ragchat+echo,ragchat+drift,ragchat+flip,last-turn"
)


def _items_with_reply() -> list[dict]:
    items = copy.deepcopy(ITEMS)
    items[0]["turns"][1]["llm_reply"] = RECORDED
    return items


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> tuple[dict, str]:
    from typer.testing import CliRunner

    folder = tmp_path_factory.mktemp("replay")
    _, corpus = _write_set(folder)
    conversations = _write_lines(folder / "replied.jsonl", *_items_with_reply())
    out = folder / "rows.jsonl"
    result = invoke(
        CliRunner(),
        "eval",
        conversations,
        "--corpus",
        corpus,
        "--strategies",
        STRATEGIES,
        "--out",
        out,
        "--db",
        folder / "eval.db",
    )
    assert result.exit_code == 0, result.output
    found = {(r["strategy"], r["id"]): r for r in map(json.loads, out.read_text().splitlines())}
    return found, " ".join(result.output.split())


def test_synthetic_models_fail_the_ways_small_models_fail() -> None:
    questions = ["What warranty does the blender have?", "How long does it last?"]
    assert synthetic_reply("echo", questions) == {
        "semantic_query": "How long does it last?",
        "is_follow_up": False,
        "is_meta": False,
        "topic_shift": False,
    }
    assert synthetic_reply("drift", questions)["semantic_query"] == " ".join(questions)
    assert synthetic_reply("drift", questions)["is_follow_up"] is True
    assert synthetic_reply("flip", questions)["topic_shift"] is True
    assert reply_for("recorded", questions, None) == Failure(503, "no recorded reply for this turn")
    assert reply_for("recorded", questions, RECORDED) == Content(json.dumps(RECORDED))


def test_every_replayed_model_is_asked_through_the_server_and_scored(rows) -> None:
    found, output = rows
    for strategy in STRATEGIES.split(","):
        assert (strategy, "warranty") in found and (strategy, "express") in found
    for model in ("recorded", "echo", "drift", "flip"):
        # a first question is never sent; the follow-up is, and its reading is combined
        # with the heuristic's
        assert found[(f"ragchat+{model}", "express")]["reformulator"] == "heuristic"
        assert (
            found[(f"ragchat+{model}", "warranty")]["reformulator"]
            == f"heuristic+ollama:replay-{model}"
        )
    assert "model requests: 4, prompt" in output  # one follow-up per replayed model


def test_replayed_models_answer_in_process_without_a_socket(
    runner, tmp_path: Path, monkeypatch
) -> None:
    """A replayed model is a transport handed to the client, not a server: nothing is bound or
    connected to, and the recorded reading still reaches the turn."""
    import socket

    def refuse(*args: object) -> None:
        raise AssertionError("a socket was opened")

    monkeypatch.setattr(socket.socket, "bind", refuse)
    monkeypatch.setattr(socket.socket, "connect", refuse)
    conversations = _write_lines(tmp_path / "replied.jsonl", *_items_with_reply())
    _, corpus = _write_set(tmp_path)
    out = tmp_path / "rows.jsonl"
    result = invoke(
        runner, "eval", conversations, "--corpus", corpus, "--strategies", "ragchat+recorded",
        "--out", out, "--db", tmp_path / "e.db",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = {(r["strategy"], r["id"]): r for r in map(json.loads, out.read_text().splitlines())}
    recorded = rows[("ragchat+recorded", "warranty")]
    assert recorded["reformulator"] == "heuristic+ollama:replay-recorded"
    assert recorded["model_query"] == RECORDED["semantic_query"]


def test_a_strong_recorded_rewrite_leads_and_the_reply_alone_is_its_baseline(rows) -> None:
    found, _ = rows
    recorded, alone = found[("ragchat+recorded", "warranty")], found[("reply-alone", "warranty")]
    assert alone["query"] == RECORDED["semantic_query"] and alone["reformulator"] == "reply-alone"
    assert recorded["model_query"] == RECORDED["semantic_query"] and recorded["model_weight"] > 1
    assert recorded["ranked_files"][0] == alone["ranked_files"][0] == "zephyr-warranty.md"
    assert (
        found[("reply-alone", "express")]["query"] == "How fast is express delivery?"
    )  # not asked: the question


def test_an_echo_costs_nothing_and_failing_flags_do_not_undo_a_pointer(rows) -> None:
    found, _ = rows
    for item in ("warranty", "express"):
        assert (
            found[("ragchat+echo", item)]["ranked_files"]
            == found[("ragchat", item)]["ranked_files"]
        )
        assert found[("ragchat+echo", item)]["model_weight"] == 0.0
    flip = found[
        ("ragchat+flip", "warranty")
    ]  # "How long does it last?" points back: the shift is overruled
    assert flip["plan"] == "anchored_search" and not flip["topic_shift"]
    assert flip["ranked_files"][0] == "zephyr-warranty.md"
    assert found[("ragchat+drift", "warranty")]["ranked_files"][0] == "zephyr-warranty.md"


def test_replayed_strategies_need_what_they_replay(runner, tmp_path: Path) -> None:
    plain = sets.load_conversations(_write_set(tmp_path)[0])
    with pytest.raises(
        RagchatError, match="'ragchat\\+recorded' needs turns with a recorded 'llm_reply'"
    ):
        strategies.choose_strategies(["ragchat+recorded"], plain)
    with pytest.raises(RagchatError, match="'ragchat\\+ollama' needs --llm"):
        strategies.choose_strategies(["ragchat+ollama"], plain)
    assert [
        s.name for s in strategies.choose_strategies(["ragchat", "last-turn"], plain, llm=True)
    ][:3] == ["ragchat", "ragchat+ollama", "last-turn"]
    bad = _write_lines(
        tmp_path / "bad.jsonl",
        {
            "id": "a",
            "turns": [{"user": "q", "gold": ["f.md"], "llm_reply": {"semantic_query": "q"}}],
        },
    )
    with pytest.raises(
        RagchatError, match="line 1, turn 1: 'llm_reply' must be an object with semantic_query"
    ):
        sets.load_conversations(bad)


def test_eval_with_llm_and_no_ollama_says_so_in_one_line(
    runner, tmp_path: Path, monkeypatch
) -> None:
    from ollama_server import free_port_url

    monkeypatch.setenv("RAGCHAT_OLLAMA_HOST", free_port_url())
    conversations, corpus = _write_set(tmp_path)
    result = invoke(
        runner, "eval", conversations, "--corpus", corpus, "--llm", "--db", tmp_path / "e.db"
    )
    assert result.exit_code == 1
    assert (
        result.output.strip()
        .splitlines()[-1]
        .startswith("Error: --llm: Ollama not usable: connection refused")
    )


def test_eval_with_llm_puts_your_model_next_to_no_model(
    runner, tmp_path: Path, monkeypatch
) -> None:
    """A user compares their model with none on their own conversations: the same table, one
    more row (here the project's Ollama-protocol server stands in for their Ollama)."""
    from ollama_server import FakeOllama

    conversations = _write_lines(tmp_path / "replied.jsonl", *_items_with_reply())
    _, corpus = _write_set(tmp_path)
    out = tmp_path / "rows.jsonl"
    with FakeOllama("my-model") as server:
        server.default = lambda request: RECORDED
        monkeypatch.setenv("RAGCHAT_OLLAMA_HOST", server.url)
        monkeypatch.setenv("RAGCHAT_OLLAMA_MODEL", "my-model")
        result = invoke(
            runner,
            "eval",
            conversations,
            "--corpus",
            corpus,
            "--llm",
            "--strategies",
            "ragchat,last-turn",
            "--out",
            out,
            "--db",
            tmp_path / "e.db",
        )
        asked = [r for r in server.requests if r.get("format")]
    assert result.exit_code == 0, result.output
    assert "ragchat+ollama" in result.output and "model requests" not in result.output
    rows = {(r["strategy"], r["id"]): r for r in map(json.loads, out.read_text().splitlines())}
    assert rows[("ragchat+ollama", "warranty")]["reformulator"] == "heuristic+ollama:my-model"
    assert rows[("ragchat", "warranty")]["reformulator"] == "heuristic"
    assert len(asked) == 1 and asked[0]["messages"][-1]["content"].endswith(
        "How long does it last?"
    )
