"""What a run adds up to: mean metrics per strategy, overall and per group of turns (by tag),
each paired against the `last-turn` baseline; and the answer-quality tables of `--answers`."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..errors import RagchatError
from .answers import ANSWER_SYSTEMS
from .metrics import RANK_K, sign_test
from .runs import EvalRun, ScoredTurn

PAIRED_AGAINST = "last-turn"
PAIRED_METRIC = f"nDCG@{RANK_K}"


@dataclass(frozen=True)
class Paired:
    """Per-turn comparison with the reference strategy on PAIRED_METRIC."""

    wins: int
    losses: int
    ties: int

    @property
    def p_value(self) -> float:
        return sign_test(self.wins, self.losses)


def paired(
    mine: Sequence[ScoredTurn], reference: Sequence[ScoredTurn], metric: str = PAIRED_METRIC
) -> Paired:
    theirs = {(t.id, t.turn): t.metrics[metric] for t in reference}
    diffs = [t.metrics[metric] - theirs[(t.id, t.turn)] for t in mine if (t.id, t.turn) in theirs]
    return Paired(
        sum(d > 1e-9 for d in diffs),
        sum(d < -1e-9 for d in diffs),
        sum(abs(d) <= 1e-9 for d in diffs),
    )


@dataclass(frozen=True)
class GroupRow:
    strategy: str
    count: int  # scored turns
    metrics: Mapping[str, float]  # means over the scored turns
    versus: Paired | None = None  # against PAIRED_AGAINST (None for itself, or when it did not run)


@dataclass(frozen=True)
class GroupSummary:
    name: str  # "overall", "multi_turn: Follow-up", ...
    rows: tuple[GroupRow, ...]


def parse_group(text: str) -> tuple[str, frozenset[str]]:
    """`TAG=V1,V2`: a combined breakdown over several values of one tag."""
    tag, _, values = text.partition("=")
    chosen = frozenset(v.strip() for v in values.split(",") if v.strip())
    if not tag.strip() or not chosen:
        raise RagchatError(
            "--group wants TAG=VALUE[,VALUE...], e.g. multi_turn=Follow-up,Clarification (got "
            f"{text!r})"
        )
    return tag.strip(), chosen


def summarize(
    run: EvalRun, groups: Sequence[tuple[str, frozenset[str]]] = ()
) -> list[GroupSummary]:
    """Overall, then per value of each tag (a tag with one value for all turns is left out),
    then any combined groups asked for."""
    selections: list[tuple[str, Callable[[ScoredTurn], bool]]] = [("overall", lambda t: True)]
    tags = sorted({tag for t in run.turns for tag in t.tags})
    for tag in tags:
        seen = sorted({t.tags.get(tag, "") for t in run.turns})
        if len(seen) > 1:
            selections += [(f"{tag}: {value or '(none)'}", _tag_is(tag, {value})) for value in seen]
    for tag, chosen in groups:
        selections.append((f"{tag}: {' + '.join(sorted(chosen))}", _tag_is(tag, chosen)))
    return [
        GroupSummary(name, _rows(run, [t for t in run.turns if keep(t)]))
        for name, keep in selections
    ]


def _tag_is(tag: str, values: Iterable[str]) -> Callable[[ScoredTurn], bool]:
    wanted = set(values)
    return lambda turn: turn.tags.get(tag, "") in wanted


def _rows(run: EvalRun, turns: list[ScoredTurn]) -> tuple[GroupRow, ...]:
    rows = []
    reference = [t for t in turns if t.strategy == PAIRED_AGAINST]
    for strategy in run.strategies:
        mine = [t for t in turns if t.strategy == strategy]
        means = {
            name: (sum(t.metrics[name] for t in mine) / len(mine) if mine else 0.0)
            for name in run.metric_names
        }
        versus = paired(mine, reference) if reference and strategy != PAIRED_AGAINST else None
        rows.append(GroupRow(strategy, len(mine), means, versus))
    return tuple(rows)


@dataclass(frozen=True)
class AnswerRow:
    system: str
    count: int
    f1: float
    recall: float
    words: float


@dataclass(frozen=True)
class AnswerGroup:
    name: str
    strategy: str
    rows: tuple[AnswerRow, ...]

    @property
    def closes_a_third(self) -> bool:
        """ragchat's F1 >= lead + (oracle - lead) / 3."""
        f1 = {row.system: row.f1 for row in self.rows}
        return f1["ragchat"] >= f1["lead"] + (f1["oracle"] - f1["lead"]) / 3 - 1e-9


def summarize_answers(
    run: EvalRun, groups: Sequence[tuple[str, frozenset[str]]] = ()
) -> list[AnswerGroup]:
    """Per answered strategy: overall, per value of each tag (when it varies) and the combined
    groups asked for; mean F1, recall and length of ragchat, lead and oracle."""
    answered = [t for t in run.turns if t.answer is not None]
    selections: list[tuple[str, Callable[[ScoredTurn], bool]]] = [("overall", lambda t: True)]
    for tag in sorted({tag for t in answered for tag in t.tags}):
        seen = sorted({t.tags.get(tag, "") for t in answered})
        if len(seen) > 1:
            selections += [(f"{tag}: {value or '(none)'}", _tag_is(tag, {value})) for value in seen]
    for tag, chosen in groups:
        selections.append((f"{tag}: {' + '.join(sorted(chosen))}", _tag_is(tag, chosen)))
    found = []
    for strategy in dict.fromkeys(t.strategy for t in answered):
        for name, keep in selections:
            mine = [
                t.answer
                for t in answered
                if t.strategy == strategy and keep(t) and t.answer is not None
            ]
            if not mine:
                continue
            rows = tuple(
                AnswerRow(
                    system,
                    len(mine),
                    *(sum(a.scores[system][k] for a in mine) / len(mine) for k in range(3)),
                )
                for system in ANSWER_SYSTEMS
            )
            found.append(AnswerGroup(name, strategy, rows))
    return found
