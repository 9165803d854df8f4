"""What `ragchat eval` replays: `ragchat` and its ablations (the full pipeline with one part
switched off), the baselines (`last-turn`, `full-history`, `prev-turn`: a fixed query sent to the
same hybrid search, vector and FTS alike, no anchoring, no reuse), the oracle `rewrite` (a turn's
human rewrite as the query; added whenever the set has one, scored only on turns that have one)
and the replayed models."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..conversation.models import Reformulation, ReformulationInput
from ..conversation.plan import Ablations
from ..conversation.reformulate import Reformulator
from ..errors import RagchatError
from .replayed import REPLAYED
from .sets import EvalItem, EvalTurn

QueryOf = Callable[[ReformulationInput], str]


def last_turn_query(data: ReformulationInput) -> str:
    return data.question


def full_history_query(data: ReformulationInput) -> str:
    return " ".join([*data.earlier_questions, data.question])


def prev_turn_query(data: ReformulationInput) -> str:
    return " ".join([*data.earlier_questions[-1:], data.question])


@dataclass(frozen=True)
class FixedQuery:
    """A baseline reformulator: one fixed query for both indexes; never a follow-up."""

    name: str
    query_of: QueryOf

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        query = self.query_of(data)
        return Reformulation(
            query, query, False, False, False, f"baseline {self.name}", self.name, 0.0
        )


def _rewrite_query(item: EvalItem) -> QueryOf:
    """The oracle: the turn's own rewrite (the session is fresh, so turn index =
    questions so far)."""

    def query(data: ReformulationInput) -> str:
        turn = item.turns[len(data.earlier_questions)]
        return turn.rewrite or data.question

    return query


def _reply_query(item: EvalItem) -> QueryOf:
    """The recorded model's rewrite alone (the question where the model was not asked)."""

    def query(data: ReformulationInput) -> str:
        reply = item.turns[len(data.earlier_questions)].llm_reply
        return str(reply["semantic_query"]) if reply else data.question

    return query


BASELINE = Ablations(source_anchoring=False, allow_reuse=False, fusion=False)


@dataclass(frozen=True)
class Strategy:
    name: str
    ablations: Ablations
    query_of: QueryOf | None = None  # baselines: the fixed query; None = ragchat's reformulation
    oracle: bool = False  # the rewrite strategy: only items and turns that have a rewrite
    model: str | None = (
        None  # ragchat with a model: a replayed one (replay.REPLAYED) or "ollama" (--llm)
    )
    recorded_query: bool = False  # reply-alone: the recorded reply's rewrite as the fixed query

    def reformulator(self, item: EvalItem) -> Reformulator | None:
        if self.oracle:
            return FixedQuery(self.name, _rewrite_query(item))
        if self.recorded_query:
            return FixedQuery(self.name, _reply_query(item))
        return FixedQuery(self.name, self.query_of) if self.query_of else None

    def applies_to(self, item: EvalItem) -> bool:
        return item.has_rewrite if self.oracle else True

    def scores(self, turn: EvalTurn) -> bool:
        return bool(turn.gold) and (bool(turn.rewrite) or not self.oracle)


STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        Strategy("ragchat", Ablations()),
        Strategy("last-turn", BASELINE, last_turn_query),
        Strategy("full-history", BASELINE, full_history_query),
        Strategy("prev-turn", BASELINE, prev_turn_query),
        Strategy("rewrite", BASELINE, oracle=True),
        Strategy("ragchat-no-anchor", Ablations(source_anchoring=False)),
        Strategy("ragchat-no-keywords", Ablations(use_keywords=False)),
        Strategy("ragchat-no-window", Ablations(use_window=False)),
        Strategy("ragchat-no-fusion", Ablations(fusion=False)),
        *(Strategy(f"ragchat+{model}", Ablations(), model=model) for model in REPLAYED),
        Strategy("reply-alone", BASELINE, recorded_query=True),
        Strategy("ragchat+ollama", Ablations(), model="ollama"),
    )
}
DEFAULT_STRATEGIES = ("ragchat", "last-turn", "full-history", "prev-turn")


def choose_strategies(
    names: Sequence[str] | None, items: Sequence[EvalItem], llm: bool = False
) -> list[Strategy]:
    """The named strategies (default: ragchat and the baselines), plus `rewrite` when the set has
    rewrites, and `ragchat+ollama` (next to `ragchat`, no model) with `llm`."""
    wanted = list(dict.fromkeys(n.strip() for n in (names or DEFAULT_STRATEGIES) if n.strip()))
    unknown = [n for n in wanted if n not in STRATEGIES]
    if unknown:
        raise RagchatError(f"unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    if llm and "ragchat+ollama" not in wanted:
        wanted.insert(wanted.index("ragchat") + 1 if "ragchat" in wanted else 0, "ragchat+ollama")
    if "ragchat+ollama" in wanted and not llm:
        raise RagchatError("strategy 'ragchat+ollama' needs --llm (a reachable Ollama and model)")
    replies = any(turn.llm_reply for item in items for turn in item.turns)
    needing = [n for n in wanted if n in ("ragchat+recorded", "reply-alone")]
    if needing and not replies:
        raise RagchatError(
            f"strategy {needing[0]!r} needs turns with a recorded 'llm_reply'; this set has none"
        )
    has_rewrites = any(item.has_rewrite for item in items)
    if "rewrite" in wanted and not has_rewrites:
        raise RagchatError(
            "strategy 'rewrite' needs turns with both 'gold' and 'rewrite'; this set has none"
        )
    if has_rewrites and "rewrite" not in wanted:
        wanted.append("rewrite")
    if not wanted:
        raise RagchatError("no strategy given")
    return [STRATEGIES[name] for name in wanted]


def answers_strategy(strategy: Strategy) -> bool:
    """The strategies whose scored turns `--answers` answers: ragchat and its ablations."""
    return strategy.name.startswith("ragchat")
