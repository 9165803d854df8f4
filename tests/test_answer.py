"""Answers end to end: extractive answers through the CLI (examples, "tell me more"), code
blocks rendered as code, and the answer-quality figures of `eval --answers`."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from helpers import ask_json, invoke, script_module
from rich.console import Console
from test_extractive import TANK

from ragchat import render
from ragchat.evaluate import answers
from ragchat.params import DEFAULT
from ragchat.text import split_sentences

# --- answer-quality figures -----------------------------------------------------------------------


def test_f1_and_recall_on_stemmed_content_words() -> None:
    reference = answers.answer_tokens("The tanks store rainwater for the garden, tanks.")
    assert reference == ["tank", "store", "rainwat", "garden", "tank"]  # Porter2 stems
    answer = answers.answer_tokens("A tank holds water.")
    assert answer == ["tank", "hold", "water"]
    f1, recall = answers.overlap_scores(answer, reference)  # common: one "tank"
    assert recall == pytest.approx(1 / 5)
    assert f1 == pytest.approx(2 * (1 / 3) * (1 / 5) / (1 / 3 + 1 / 5))
    assert answers.overlap_scores(["tank", "tank"], reference) == (
        pytest.approx(2 * 1 * 0.4 / 1.4),
        0.4,
    )
    assert answers.overlap_scores([], reference) == (0.0, 0.0)


def test_lead_is_cut_to_the_answers_length() -> None:
    assert (
        answers.lead_answer(
            "Heading\nOne two three four. Five six seven.", 5, params=DEFAULT.answer
        )
        == "One two three four. Five"
    )
    assert answers.lead_answer("One two.", 10, params=DEFAULT.answer) == "One two."


def test_the_oracle_picks_sentences_greedily_on_f1() -> None:
    chunks = ["Cats sleep a lot. Dogs bark at night.", "Birds sing in the morning. Fish swim."]
    assert (
        answers.oracle_answer(
            chunks, "Dogs bark at night and birds sing in the morning.", params=DEFAULT.answer
        )
        == "Dogs bark at night. Birds sing in the morning."
    )
    scored = answers.score_answer(
        "Cats sleep a lot.", chunks, [7, 8], "Dogs bark at night.", params=DEFAULT.answer
    )
    assert scored.scores["oracle"][0] == 1.0 and scored.scores["ragchat"][0] == 0.0
    assert scored.scores["lead"] == (0.0, 0.0, 4) and scored.chunk_ids == (7, 8)


# --- end to end -----------------------------------------------------------------------------------


DOCS = """# Client options

## Timeouts

The `timeout` option sets how many seconds the client waits for the server before it gives up.
The default timeout is five seconds for connecting, reading and writing.

Here is an example of setting the timeout option:

```python
import httpx

client = httpx.Client(timeout=10.0)
response = client.get("https://example.org")
```

## Proxies

The proxy option routes every request through a proxy server.
"""


def library_of(runner, tmp_path: Path, name: str, text: str) -> Path:
    """A library of one page and an unrelated one, ingested through the CLI."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / name).write_text(text, encoding="utf-8")
    (docs / "other.md").write_text(
        "# Gardening\n\nTomatoes need sun and regular water to grow well.\n", encoding="utf-8"
    )
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", docs, "--db", db).exit_code == 0
    return db


def test_give_me_an_example_shows_the_code_block_intact(runner, tmp_path: Path) -> None:
    db = library_of(runner, tmp_path, "client.md", DOCS)
    first = invoke(runner, "ask", "What does the timeout option do?", "--session", "t", "--db", db)
    assert first.exit_code == 0, first.output
    assert "sets how many seconds the client waits" in first.output, first.output
    second = invoke(runner, "ask", "give me an example", "--session", "t", "--db", db)
    assert second.exit_code == 0, second.output
    lines = second.output.splitlines()
    code = [line.strip() for line in lines]
    assert "client = httpx.Client(timeout=10.0)" in code, second.output
    assert 'response = client.get("https://example.org")' in code
    assert "```" not in second.output  # rendered as code, not as fence markers


def test_code_renders_as_syntax_and_prose_stays_inert() -> None:
    buffer = io.StringIO()
    target = Console(file=buffer, width=30, color_system=None)
    render.answer_body(
        "Use [bold]this[/bold]:\n\n```python\nvalue = some_function(argument_one, "
        "argument_two)\n```\n\nDone [1]",
        target,
    )
    out = buffer.getvalue()
    assert "[bold]this[/bold]" in out
    assert "\nvalue = some_function(argument_one, argument_two)" in out, (
        "one line, not cropped or wrapped"
    )
    assert "Done [1]" in out


def test_pieces_of_one_block_stay_in_line() -> None:
    """Two pieces of one block cut between chunks, shown one after the other: each keeps the
    indentation it has in the block, so the second's options line up with the first's; a block
    inside a list item loses only its fence's indentation."""
    buffer = io.StringIO()
    target = Console(file=buffer, width=60, color_system=None)
    render.answer_body(
        "The options: [1]\n```\nUsage: tool insert [OPTIONS]\n  --nl    Expect JSON lines\n```\n"
        "```\n  -c, --csv    Expect CSV input\n  --tsv        Expect TSV input\n```\n"
        "- Install it: [2]\n  ```\n  pip install tool\n  ```",
        target,
    )
    lines = [line.rstrip() for line in buffer.getvalue().splitlines()]
    assert "  --nl    Expect JSON lines" in lines
    assert "  -c, --csv    Expect CSV input" in lines
    assert "pip install tool" in lines


# --- eval --answers -------------------------------------------------------------------------------


def test_eval_answers_reports_figures_and_writes_answers(runner, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tanks.md").write_text("# Tanks\n\n" + TANK + "\n", encoding="utf-8")
    (corpus / "pumps.md").write_text(
        "# Heat pumps\n\nHeat pumps move heat rather than make it. "
        "A heat pump defrosts its outdoor coil in winter.\n",
        encoding="utf-8",
    )
    items = [
        {
            "id": "one",
            "tags": {"multi_turn": "N/A"},
            "turns": [
                {
                    "user": "What does a first-flush diverter do?",
                    "gold": ["tanks.md"],
                    "reference": "A first-flush diverter discards the first dirty water from the "
                    "roof.",
                }
            ],
        },
        {
            "id": "two",
            "tags": {"multi_turn": "Follow-up"},
            "turns": [
                {"user": "Tell me about heat pumps", "assistant": "Heat pumps move heat."},
                {
                    "user": "What happens in winter?",
                    "gold": ["pumps.md"],
                    "reference": "In winter the heat pump defrosts its outdoor coil.",
                },
            ],
        },
    ]
    conversations = tmp_path / "set.jsonl"
    conversations.write_text("\n".join(json.dumps(i) for i in items), encoding="utf-8")
    out = tmp_path / "rows.jsonl"
    result = invoke(
        runner,
        "eval",
        conversations,
        "--corpus",
        corpus,
        "--strategies",
        "ragchat,last-turn",
        "--answers",
        "--out",
        out,
        "--db",
        tmp_path / "eval.db",
    )
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "answer quality: ragchat" in text and "multi_turn: Follow-up" in text
    rows = {(r["strategy"], r["id"]): r for r in map(json.loads, out.read_text().splitlines())}
    assert "answer" not in rows[("last-turn", "one")], "only ragchat strategies answer"
    row = rows[("ragchat", "one")]
    assert "first-flush diverter discards" in row["answer"] and row["answer_chunk_ids"]
    assert set(row["answer_scores"]) == {"ragchat", "lead", "oracle"}
    # the figures can be recomputed from the row
    f1, recall = answers.overlap_scores(
        answers.answer_tokens(row["answer"]), answers.answer_tokens(row["reference"])
    )
    assert row["answer_scores"]["ragchat"]["f1"] == round(f1, 4) and row["answer_scores"][
        "ragchat"
    ]["recall"] == round(recall, 4)
    assert row["answer_scores"]["oracle"]["f1"] >= row["answer_scores"]["ragchat"]["f1"]


def test_the_ceiling_ranker_rescores_eval_rows(runner, tmp_path: Path) -> None:
    """benchmarks/answer_ceiling.py reads `eval --answers --out` rows and the eval's database: the
    sentence sharing most words with the reference comes first, and each group gets a row."""
    import subprocess
    import sys

    ceiling = Path(__file__).resolve().parent.parent / "benchmarks" / "answer_ceiling.py"
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "tanks.md").write_text("# Tanks\n\n" + TANK + "\n", encoding="utf-8")
    item = {
        "id": "one",
        "tags": {"multi_turn": "N/A"},
        "turns": [
            {
                "user": "What does a first-flush diverter do?",
                "gold": ["tanks.md"],
                "reference": "A first-flush diverter discards the first dirty water from the roof.",
            }
        ],
    }
    conversations = tmp_path / "set.jsonl"
    conversations.write_text(json.dumps(item), encoding="utf-8")
    out, db = tmp_path / "rows.jsonl", tmp_path / "eval.db"
    assert (
        invoke(
            runner,
            "eval",
            conversations,
            "--corpus",
            corpus,
            "--strategies",
            "ragchat",
            "--answers",
            "--out",
            out,
            "--db",
            db,
        ).exit_code
        == 0
    )
    done = subprocess.run(
        [sys.executable, str(ceiling), str(out), "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = {line.split(" | ")[0]: line.split(" | ") for line in done.stdout.splitlines()[1:]}
    assert set(lines) == {"N/A", "overall"} and lines["N/A"][1] == "1"
    ceiling_one = float(lines["N/A"][4].split()[0])
    row = json.loads(out.read_text().splitlines()[0])
    assert ceiling_one >= row["answer_scores"]["lead"]["f1"] and ceiling_one > 0.5


def test_the_ceiling_takes_the_sentences_the_reference_uses_most() -> None:
    module = script_module("benchmarks/answer_ceiling.py")
    chunks = ["Cats sleep a lot. Dogs bark at night.", "Birds sing in the morning. Fish swim."]
    assert module.ceiling_answer(chunks, "Dogs bark at night.", 1) == "Dogs bark at night."
    assert (
        module.ceiling_answer(chunks, "Dogs bark at night; birds sing in the morning.", 2)
        == "Dogs bark at night. Birds sing in the morning."
    )


POOL_DOCS = """# Connection pools

The pool keeps idle connections open so that later requests skip the handshake.
The pool size limits how many connections the client opens to one host at a time.
A full pool makes new requests wait until a connection is released back to the pool.
Idle connections in the pool close after the keep-alive expiry of five seconds.
The pool is shared by every request made through the same client instance.
Closing the client closes every connection in the pool and frees its sockets.
A pool per host keeps a slow host from starving the connections of the others.
Pool limits are set once, when the client is created, and cannot change later.
"""


def answer_sentences(answer: str) -> list[str]:
    return [re.sub(r"\s*\[\d+\]", "", s) for s in split_sentences(answer) if "pool" in s.lower()]


def test_tell_me_more_never_repeats_a_sentence_shown_in_the_session(runner, tmp_path: Path) -> None:
    db = library_of(runner, tmp_path, "pools.md", POOL_DOCS)
    shown: list[str] = []
    for question in ("How does the connection pool work?", "tell me more", "tell me more"):
        answer = ask_json(runner, db, "p", question)["answer"]
        said = answer_sentences(answer)
        assert said or "nothing beyond" in answer, answer
        assert not set(said) & set(shown), (question, answer)
        shown += said
    assert len(shown) >= 4


TWO_EXAMPLES = """# Timeouts

The `timeout` option sets how many seconds the client waits for the server before it gives up.
The client timeout covers connecting, reading, writing and waiting for a pooled connection.
A client without a timeout set waits five seconds, the default timeout of every client.
When the timeout passes, the client raises a timeout exception that names the phase that timed out.
You set it once for every request on the client like this:

```python
client = httpx.Client(timeout=10.0)
```

## Per request

A single request may override the client's timeout with its own value:

```python
response = client.get("https://example.org", timeout=2.0)
```
"""


def test_give_me_an_example_shows_another_example_before_repeating_one(
    runner, tmp_path: Path
) -> None:
    """An example shown in the session comes back only when the sources hold no other one."""
    db = library_of(runner, tmp_path, "timeouts.md", TWO_EXAMPLES)
    first = invoke(
        runner, "ask", "How do I set the timeout on the client?", "--session", "t", "--db", db
    )
    assert "client = httpx.Client(timeout=10.0)" in first.output, first.output
    assert "timeout=2.0" not in first.output, first.output
    second = invoke(runner, "ask", "give me an example", "--session", "t", "--db", db)
    assert 'response = client.get("https://example.org", timeout=2.0)' in second.output, (
        second.output
    )
    assert "client = httpx.Client(timeout=10.0)" not in second.output, (
        "not the example already shown"
    )
    third = invoke(runner, "ask", "give me an example", "--session", "t", "--db", db)
    assert "timeout=" in third.output, "no other example left: one already shown, rather than none"
