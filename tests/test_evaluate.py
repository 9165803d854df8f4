"""`ragchat eval`: metrics against hand-computed cases, loading, strategies, and a tiny
conversation set replayed for real (real embedding model) where anchoring finds what the last
turn alone misses."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from helpers import invoke, settings_for

from ragchat.conversation.models import Exchange, ReformulationInput
from ragchat.errors import RagchatError
from ragchat.evaluate import metrics, report, runs, sets, strategies
from ragchat.store import sessions
from ragchat.store.db import open_db

# --- metrics -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "ranked, gold, k, expected",
    [
        (["a", "b", "c"], ["a", "c"], 1, 0.5),
        (["a", "b", "c"], ["a", "c"], 2, 0.5),
        (["a", "b", "c"], ["a", "c"], 3, 1.0),
        (["a", "b", "c"], ["z"], 3, 0.0),
        (["a"], ["a", "b", "c", "d"], 10, 0.25),  # fewer ranked files than k
        ([], ["a"], 5, 0.0),
    ],
)
def test_recall_at(ranked, gold, k, expected):
    assert metrics.recall_at(ranked, gold, k) == pytest.approx(expected)


@pytest.mark.parametrize(
    "ranked, gold, expected",
    [
        (["a", "b"], ["a"], 1.0),
        (["x", "a"], ["a"], 0.5),
        (["x", "y", "b", "a"], ["a", "b"], 1 / 3),  # the first gold file counts
        ([f"x{i}" for i in range(10)] + ["a"], ["a"], 0.0),  # rank 11 is beyond @10
        (["x"], ["a"], 0.0),
    ],
)
def test_mrr_at_10(ranked, gold, expected):
    assert metrics.mrr_at(ranked, gold) == pytest.approx(expected)


@pytest.mark.parametrize(
    "ranked, gold, expected",
    [
        (["a", "b"], ["a", "b"], 1.0),
        (["x", "a"], ["a"], 1 / math.log2(3)),
        (["a", "x", "b"], ["a", "b"], (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))),
        (
            ["x", "a"],
            ["a", "b", "c"],
            (1 / math.log2(3)) / (1 + 1 / math.log2(3) + 1 / math.log2(4)),
        ),
        (
            [f"g{i}" for i in range(10)],
            [f"g{i}" for i in range(12)],
            1.0,
        ),  # ideal DCG over min(|gold|, 10)
        ([f"x{i}" for i in range(10)] + ["a"], ["a"], 0.0),
    ],
)
def test_ndcg_at_10(ranked, gold, expected):
    assert metrics.ndcg_at(ranked, gold) == pytest.approx(expected)


def test_distinct_files_keep_first_positions():
    assert metrics.distinct_files(["a", "a", "b", "a", "c", "b"]) == ["a", "b", "c"]


def test_score_names_every_metric():
    assert metrics.score(["x", "a"], ["a"], (1, 5)) == {
        "R@1": 0.0,
        "R@5": 1.0,
        "MRR@10": 0.5,
        "nDCG@10": pytest.approx(1 / math.log2(3)),
    }


# --- loading -----------------------------------------------------------------------------------


def _write_lines(path: Path, *lines: object) -> Path:
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


@pytest.mark.parametrize(
    "lines, message",
    [
        (
            ['{"id": "a", "turns": [{"user": "q", "gold": ["f.md"]}]}', '{"id": "b", "turns": ['],
            "line 2: not valid JSON",
        ),
        ([{"turns": [{"user": "q", "gold": ["f.md"]}]}], "line 1: missing field 'id'"),
        ([{"id": "a"}], "line 1: missing field 'turns'"),
        (
            [{"id": "a", "turns": [{"assistant": "x", "gold": ["f.md"]}]}],
            "line 1, turn 1: missing field 'user'",
        ),
        ([{"id": "a", "turns": [{"user": "q"}]}], "line 1: no turn has 'gold'"),
        (
            [{"id": "a", "turns": [{"user": "q", "gold": "f.md"}]}],
            "line 1, turn 1: 'gold' must be a list",
        ),
        ([{"id": "a", "turns": [{"user": "q", "gold": ["f.md"]}]}] * 2, "line 2: duplicate id 'a'"),
    ],
)
def test_load_rejects_bad_sets_with_one_line(tmp_path, lines, message):
    with pytest.raises(RagchatError, match=message):
        sets.load_conversations(_write_lines(tmp_path / "set.jsonl", *lines))


def test_load_missing_file(tmp_path):
    with pytest.raises(RagchatError, match="conversation set not found"):
        sets.load_conversations(tmp_path / "nope.jsonl")


# --- strategies --------------------------------------------------------------------------------


def test_baseline_queries():
    data = ReformulationInput(
        question="how long?", last=Exchange("b", "answer"), earlier_questions=("a", "b")
    )
    assert strategies.last_turn_query(data) == "how long?"
    assert strategies.full_history_query(data) == "a b how long?"
    assert strategies.prev_turn_query(data) == "b how long?"
    first = ReformulationInput(question="q", last=Exchange())
    assert strategies.prev_turn_query(first) == strategies.full_history_query(first) == "q"


def test_choose_strategies(tmp_path):
    plain = [sets.EvalItem("a", {}, (sets.EvalTurn("q", gold=("f",)),))]
    rewritten = [sets.EvalItem("b", {}, (sets.EvalTurn("q", gold=("f",), rewrite="Q"),))]
    assert [s.name for s in strategies.choose_strategies(None, plain)] == list(
        strategies.DEFAULT_STRATEGIES
    )
    assert [s.name for s in strategies.choose_strategies(["last-turn"], rewritten)] == [
        "last-turn",
        "rewrite",
    ]
    with pytest.raises(RagchatError, match="unknown strategy 'nope'"):
        strategies.choose_strategies(["nope"], plain)
    with pytest.raises(RagchatError, match="needs turns with both"):
        strategies.choose_strategies(["rewrite"], plain)


# --- a tiny set, replayed for real -------------------------------------------------------------

CORPUS = {
    "zephyr-warranty.md": "# Zephyr X200 blender warranty\n\nThe Zephyr X200 blender comes with "
    "a limited warranty against defects in materials and workmanship, covering the motor base "
    "and the glass jar. The warranty lasts two years from the date of purchase. Register your "
    "blender online to claim repairs.",
    "nimbus-battery.md": "# Nimbus phone battery life\n\nHow long does the Nimbus phone battery "
    "last? On a full charge the battery lasts about ten hours of screen time, and it lasts "
    "longer in low power mode. Battery capacity slowly declines over hundreds of charge cycles.",
    "returns.md": "# Returns and refunds\n\nAny product can be returned within 30 days of "
    "delivery for a full refund. Items must be unused and in their original packaging; refunds "
    "reach your card within a week.",
    "shipping.md": "# Shipping\n\nOrders ship within two business days from our warehouse. "
    "Express delivery arrives the next day for an extra fee; standard delivery takes three to "
    "five days.",
    "cleaning.md": "# Cleaning the blender jar\n\nRinse the jar with warm water and a drop of "
    "dish soap right after use. Never put the motor base in water; wipe it with a damp cloth "
    "instead.",
}
ITEMS = [
    {
        "id": "warranty",
        "tags": {"multi_turn": "Follow-up"},
        "turns": [
            {
                "user": "What warranty does the Zephyr X200 blender have?",
                "assistant": "The Zephyr X200 blender comes with a limited warranty against "
                "defects in materials and workmanship that covers the motor base and the glass "
                "jar.",
            },
            {
                "user": "How long does it last?",
                "gold": ["zephyr-warranty.md"],
                "rewrite": "How long does the Zephyr X200 blender warranty last?",
            },
        ],
    },
    {
        "id": "express",
        "tags": {"multi_turn": "N/A"},
        "turns": [{"user": "How fast is express delivery?", "gold": ["shipping.md"]}],
    },
]


def _write_set(folder: Path) -> tuple[Path, Path]:
    corpus = folder / "corpus"
    corpus.mkdir()
    for name, text in CORPUS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    return _write_lines(folder / "conversations.jsonl", *ITEMS), corpus


@pytest.fixture(scope="module")
def replayed(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("evalset")
    conversations, corpus = _write_set(folder)
    db_path = folder / "eval.db"
    db = open_db(db_path)
    settings = settings_for(db_path)
    sets.prepare_library(db, settings, corpus, lambda: embedder)
    items = sets.load_conversations(conversations)
    chosen = strategies.choose_strategies(
        ["ragchat", "last-turn", "full-history", "prev-turn"], items
    )
    progress: list[tuple[int, int]] = []
    run = runs.replay(
        db,
        embedder,
        settings,
        items,
        chosen,
        ks=(1, 3),
        on_progress=lambda done, total, _: progress.append((done, total)),
    )
    yield db, settings, run, progress
    db.close()


def _turn(run, strategy: str, item: str) -> runs.ScoredTurn:
    return next(t for t in run.turns if t.strategy == strategy and t.id == item)


def test_anchoring_finds_what_the_last_turn_alone_misses(replayed):
    _, _, run, _ = replayed
    baseline, ours = _turn(run, "last-turn", "warranty"), _turn(run, "ragchat", "warranty")
    assert baseline.ranked_files[0] == "nimbus-battery.md"
    assert baseline.metrics["R@1"] == 0.0
    assert ours.ranked_files[0] == "zephyr-warranty.md"
    assert ours.metrics["R@1"] == ours.metrics["MRR@10"] == 1.0
    assert ours.result.lineage.plan == "anchored_search"
    assert ours.result.lineage.anchor_documents == ("zephyr-warranty.md",)
    assert _turn(run, "rewrite", "warranty").ranked_files[0] == "zephyr-warranty.md"


def test_replay_scores_gold_turns_of_every_strategy(replayed):
    db, _, run, progress = replayed
    assert run.strategies == ["ragchat", "last-turn", "full-history", "prev-turn", "rewrite"]
    assert sorted((t.strategy, t.id, t.turn) for t in run.turns) == sorted(
        [(s, "warranty", 2) for s in run.strategies]
        + [(s, "express", 1) for s in run.strategies[:-1]]
    )
    assert progress[-1] == (9, 9)  # 4 strategies x 2 items, plus the rewrite oracle on 1
    assert _turn(run, "full-history", "warranty").result.lineage.reformulation.semantic_query == (
        "What warranty does the Zephyr X200 blender have? How long does it last?"
    )
    # the recorded answer is what the session keeps
    history = sessions.messages(db, sessions.session_id(db, "eval:ragchat:warranty", create=False))
    assert [m.content for m in history][:2] == [
        ITEMS[0]["turns"][0]["user"],
        ITEMS[0]["turns"][0]["assistant"],
    ]


def test_summary_overall_and_per_tag(replayed):
    _, _, run, _ = replayed
    summaries = report.summarize(run, [("multi_turn", frozenset({"Follow-up", "N/A"}))])
    assert [s.name for s in summaries] == [
        "overall",
        "multi_turn: Follow-up",
        "multi_turn: N/A",
        "multi_turn: Follow-up + N/A",
    ]
    follow_up = {row.strategy: row for row in summaries[1].rows}
    assert follow_up["ragchat"].count == 1 and follow_up["ragchat"].metrics["R@1"] == 1.0
    assert follow_up["last-turn"].metrics["R@1"] == 0.0
    assert {row.strategy: row.count for row in summaries[0].rows}["rewrite"] == 1


def test_paired_counts_against_last_turn(replayed):
    _, _, run, _ = replayed
    overall = {row.strategy: row for row in report.summarize(run)[0].rows}
    assert overall["last-turn"].versus is None
    mine = [t for t in run.turns if t.strategy == "ragchat"]
    theirs = {(t.id, t.turn): t.metrics["nDCG@10"] for t in run.turns if t.strategy == "last-turn"}
    diffs = [t.metrics["nDCG@10"] - theirs[(t.id, t.turn)] for t in mine]
    versus = overall["ragchat"].versus
    assert (versus.wins, versus.losses, versus.ties) == (
        sum(d > 0 for d in diffs),
        sum(d < 0 for d in diffs),
        sum(d == 0 for d in diffs),
    )
    assert versus.wins >= 1, "the anchored follow-up beats the last turn alone"


@pytest.mark.parametrize(
    ("wins", "losses", "expected"),
    [
        (0, 0, 1.0),
        (5, 5, 1.0),
        (6, 0, 0.03125),
        (0, 6, 0.03125),
        (9, 1, 0.021484375),
        (20, 3, 0.00048828125),
    ],
)
def test_sign_test(wins, losses, expected):
    assert metrics.sign_test(wins, losses) == pytest.approx(expected, abs=1e-5)


def test_a_group_of_values_with_spaces(tmp_path):
    assert report.parse_group("kind=switch turn,after switch") == (
        "kind",
        frozenset({"switch turn", "after switch"}),
    )


# --- the command -------------------------------------------------------------------------------


def test_eval_command_prints_tables_and_writes_rows(runner, tmp_path):
    conversations, corpus = _write_set(tmp_path)
    out, db = tmp_path / "run.jsonl", tmp_path / "eval.db"
    args = [
        "eval",
        conversations,
        "--corpus",
        corpus,
        "--strategies",
        "ragchat,last-turn",
        "--k",
        "1,3",
        "--out",
        out,
        "--db",
        db,
    ]
    result = invoke(runner, *args)
    assert result.exit_code == 0, result.output
    assert "5 added" in result.output
    for text in (
        "overall",
        "multi_turn: Follow-up",
        "R@1",
        "R@3",
        "MRR@10",
        "nDCG@10",
        "last-turn",
        "rewrite",
        "W/L/T",
        "sign",
    ):
        assert text in " ".join(result.output.split())
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert {(r["strategy"], r["id"]) for r in rows} == {
        ("ragchat", "warranty"),
        ("ragchat", "express"),
        ("last-turn", "warranty"),
        ("last-turn", "express"),
        ("rewrite", "warranty"),
    }
    required = {
        "id",
        "turn",
        "strategy",
        "query",
        "keyword_query",
        "is_follow_up",
        "is_meta",
        "ranked_files",
        "gold",
    }
    assert all(required <= set(row) for row in rows)
    by_key = {(r["strategy"], r["id"]): r for r in rows}
    assert by_key[("ragchat", "warranty")]["gold"] == ["zephyr-warranty.md"]
    assert by_key[("ragchat", "warranty")]["plan"] == "anchored_search"
    assert (
        by_key[("rewrite", "warranty")]["query"]
        == "How long does the Zephyr X200 blender warranty last?"
    )
    assert by_key[("last-turn", "express")]["keyword_query"] == "How fast is express delivery?"
    again = invoke(runner, *args)  # the database is reused: nothing to ingest
    assert again.exit_code == 0 and "5 unchanged" in again.output
    assert [json.loads(line) for line in out.read_text().splitlines()] == rows


def test_eval_command_errors_are_one_line(runner, tmp_path):
    result = invoke(runner, "eval", tmp_path / "missing.jsonl", "--corpus", tmp_path)
    assert result.exit_code == 1
    assert "Error: conversation set not found" in result.output
    conversations, _ = _write_set(tmp_path)
    result = invoke(runner, "eval", conversations, "--corpus", tmp_path / "nowhere")
    assert result.exit_code == 1 and "Error: corpus folder not found" in result.output


def test_a_turn_without_reply_stores_an_empty_one_and_anchors_nothing(replayed, embedder):
    db, settings, _, _ = replayed
    item = sets.EvalItem(
        "unanswered",
        {},
        (
            sets.EvalTurn("What is the warranty of the Zephyr X200 blender?"),
            sets.EvalTurn("How long does it last?", gold=("zephyr-warranty.md",)),
        ),
    )
    run = runs.replay(db, embedder, settings, [item], [strategies.STRATEGIES["ragchat"]])
    history = sessions.messages(
        db, sessions.session_id(db, "eval:ragchat:unanswered", create=False)
    )
    assert [m.content for m in history if m.role == "assistant"][0] == ""
    assert (
        run.turns[0].result.lineage.plan == "search"
        and run.turns[0].result.lineage.anchor_documents == ()
    )


def test_prepare_library_refuses_a_database_with_other_documents(tmp_path, embedder):
    _, corpus = _write_set(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    (other / "note.md").write_text("# Note\n\nSomething else entirely.", encoding="utf-8")
    db = open_db(tmp_path / "eval.db")
    settings = settings_for(tmp_path / "eval.db")
    sets.prepare_library(db, settings, other, lambda: embedder)
    with pytest.raises(RagchatError, match="holds 1 document.* from outside"):
        sets.prepare_library(db, settings, corpus, lambda: embedder)
    db.close()


def test_eval_unanswerable_reports_precision_and_recall_of_not_covered(runner, tmp_path):
    conversations, corpus = _write_set(tmp_path)
    unanswerable = _write_lines(
        tmp_path / "unanswerable.jsonl",
        {
            "id": "u1",
            "turns": [
                {
                    "user": "What warranty does the Zephyr X200 blender have?",
                    "assistant": "Two years.",
                },
                {"user": "Which volcano erupted on Iceland in 2010 and grounded flights?"},
            ],
        },
        {"id": "u2", "turns": [{"user": "Who painted the ceiling of the Sistine Chapel?"}]},
    )
    result = invoke(
        runner,
        "eval",
        conversations,
        "--corpus",
        corpus,
        "--strategies",
        "ragchat",
        "--db",
        tmp_path / "eval.db",
        "--unanswerable",
        unanswerable,
    )
    assert result.exit_code == 0, result.output
    shown = " ".join(result.output.split())
    assert (
        "Not covered" in shown
        and "of 2 unanswerable turns" in shown
        and "of 2 answerable ones" in shown
    )
    assert "recall 1.00" in shown and "precision 1.00" in shown


def _ragchat_rows(runner, tmp_path: Path, conversations: Path, corpus: Path, *args: str) -> dict:
    """`ragchat eval --strategies ragchat` with these flags (`--answers`) and `--param` values
    (NAME=VALUE): its --out rows by item id."""
    out = tmp_path / "run.jsonl"
    flags = [a for a in args if a.startswith("--")]
    params = [arg for a in args if not a.startswith("--") for arg in ("--param", a)]
    command = ["eval", conversations, "--corpus", corpus, "--strategies", "ragchat", *flags]
    result = invoke(runner, *command, "--db", tmp_path / "eval.db", "--out", out, *params)
    assert result.exit_code == 0, result.output
    rows = (json.loads(line) for line in out.read_text().splitlines())
    return {row["id"]: row for row in rows if row["strategy"] == "ragchat"}


def test_eval_param_runs_with_another_tuning_value(runner, tmp_path):
    """`--param followup.max_keyword_terms=1` cuts the keyword query to one term; a parameter set
    to its default value changes nothing."""
    conversations, corpus = _write_set(tmp_path)

    def rows(*params: str) -> list[dict]:
        return list(_ragchat_rows(runner, tmp_path, conversations, corpus, *params).values())

    plain = rows()
    assert (
        rows("followup.max_keyword_terms=5", "plan.confident=0.5", "coverage.threshold=0.6")
        == plain
    )
    changed = rows("followup.max_keyword_terms=1")
    before = {r["id"]: r["keyword_query"] for r in plain}
    after = {r["id"]: r["keyword_query"] for r in changed}
    assert all(len(terms.split(", ")) >= 2 for terms in before.values()), before
    assert after == {key: terms.split(", ")[0] for key, terms in before.items()}


def test_eval_param_reaches_the_answer(runner, tmp_path):
    """`--param answer.pool=1`: each extractive answer draws on the first source alone (and is
    scored on it), where the default draws on four."""
    _, corpus = _write_set(tmp_path)
    conversations = _write_lines(
        tmp_path / "answered.jsonl",
        {
            "id": "delivery",
            "turns": [
                {
                    "user": "How long does delivery take?",
                    "gold": ["shipping.md"],
                    "reference": "Standard delivery takes three to five days; express arrives "
                    "the next day.",
                }
            ],
        },
        {
            "id": "blender",
            "turns": [
                {
                    "user": "How do I look after my blender?",
                    "gold": ["cleaning.md"],
                    "reference": "Rinse the jar with warm water and wipe the motor base with a "
                    "damp cloth.",
                }
            ],
        },
    )

    def answers(*params: str) -> dict[str, dict]:
        return _ragchat_rows(runner, tmp_path, conversations, corpus, "--answers", *params)

    plain, narrow = answers(), answers("answer.pool=1")
    assert answers("answer.pool=4") == plain
    assert all(len(row["answer_chunk_ids"]) == 4 for row in plain.values())
    assert all(
        row["answer_chunk_ids"] == plain[key]["answer_chunk_ids"][:1] for key, row in narrow.items()
    )
    assert any(row["answer"] != plain[key]["answer"] for key, row in narrow.items())


@pytest.mark.parametrize(
    ("param", "message"),
    [
        (
            "followup.decya=0.5",
            "Error: unknown parameter 'followup.decya' (did you mean followup.decay",
        ),
        ("decay=0.5", "Error: unknown parameter 'decay' (did you mean followup.decay?)"),
        ("plan.protect=1", "Error: unknown parameter 'plan.protect' (did you mean "),
        (
            "followup.decay=abc",
            "Error: invalid value for parameter followup.decay: 'abc' (expected a number)",
        ),
        (
            "followup.decay=nan",
            "Error: invalid value for parameter followup.decay: 'nan' (expected a finite number)",
        ),
        (
            "followup.max_context_terms=2.5",
            "Error: invalid value for parameter followup.max_context_terms: '2.5' (expected an "
            "integer)",
        ),
        (
            "followup.decay",
            "Error: --param 'followup.decay': expected NAME=VALUE, e.g. followup.decay=0.5",
        ),
    ],
)
def test_eval_param_errors_are_one_line(runner, tmp_path, param, message):
    conversations, corpus = _write_set(tmp_path)
    result = invoke(
        runner,
        "eval",
        conversations,
        "--corpus",
        corpus,
        "--db",
        tmp_path / "eval.db",
        "--param",
        param,
    )
    assert result.exit_code == 1
    assert (
        result.output.strip().startswith(message) and len(result.output.strip().splitlines()) == 1
    )
    assert not (tmp_path / "eval.db").exists()  # refused before anything was ingested
