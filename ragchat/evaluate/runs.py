"""Every item of a set, replayed in a fresh session per strategy through `Conversation.ask`;
each scored turn becomes a row (`--out`).

Scoring looks deeper than the chat shows: EVAL_DEPTH chunks a turn instead of `top_k`, so that
Recall@10 over distinct files means something. (The deeper list also feeds the support marking of
recorded answers, which picks the chunks most like the answer among all retrieved ones.)
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np
from sqlite_utils import Database

from ..config import Settings
from ..conversation.models import TurnResult
from ..conversation.turn import Conversation
from ..embed import Embedder
from ..errors import RagchatError
from ..llm import ChatBackend
from ..store import library, sessions
from .answers import AnswerScore, answer_of
from .metrics import DEFAULT_KS, distinct_files, metric_names, score
from .replayed import REPLAYED, ReplayedModels, replayed_models, reply_for
from .sets import EvalItem
from .strategies import Strategy, answers_strategy

EVAL_DEPTH = 20  # chunks retrieved per turn for scoring (the chat's top_k is 8)
OUT_FILES = 20  # ranked files written per --out row

ProgressCallback = Callable[[int, int, str], None]  # (done, total, what is running)


class CachingEmbedder:
    """Remembers query embeddings: strategies replay the same questions and recorded answers."""

    def __init__(self, inner: Embedder, limit: int = 50_000) -> None:
        self.inner, self.limit = inner, limit
        self.model_id, self.dim = inner.model_id, inner.dim
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    @property
    def one_piece(self) -> Callable[[str], bool] | None:
        return getattr(self.inner, "one_piece", None)

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._cache.get(text)
        if vector is None:
            vector = self.inner.embed_query(text)
            vector.setflags(write=False)
            if len(self._cache) < self.limit:
                self._cache[text] = vector
        return vector


@dataclass(frozen=True)
class ScoredTurn:
    id: str
    turn: int
    strategy: str
    tags: Mapping[str, str]
    result: TurnResult = field(repr=False)
    ranked_files: tuple[str, ...]
    gold: tuple[str, ...]
    metrics: Mapping[str, float]
    answer: AnswerScore | None = None  # --answers: the answer and its scores

    def to_row(self) -> dict:
        r = self.result.lineage.reformulation
        return {
            "id": self.id,
            "turn": self.turn,
            "strategy": self.strategy,
            "question": self.result.lineage.question,
            "query": r.semantic_query,
            "keyword_query": r.keyword_query,
            "is_follow_up": r.is_follow_up,
            "is_meta": r.is_meta,
            "topic_shift": r.topic_shift,
            "reasoning": r.reasoning,
            "reformulator": r.reformulator,
            "plan": self.result.lineage.plan,
            "context_weight": self.result.lineage.context_weight,
            "model_query": r.model_query,
            "model_weight": r.model_weight,
            "anchor_files": self.result.lineage.anchor_documents,
            "ranked_files": list(self.ranked_files[:OUT_FILES]),
            "gold": list(self.gold),
            "metrics": {name: round(value, 4) for name, value in self.metrics.items()},
            "tags": dict(self.tags),
        } | (self.answer.to_row() if self.answer else {})


@dataclass
class EvalRun:
    strategies: list[str]
    ks: tuple[int, ...]
    turns: list[ScoredTurn] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # replay time per strategy
    prompt_chars: list[int] = field(
        default_factory=list
    )  # characters of each replayed model request

    @property
    def metric_names(self) -> list[str]:
        return metric_names(self.ks)


def session_name(strategy: str, item_id: str) -> str:
    return f"eval:{strategy}:{item_id}"


def replay(
    db: Database,
    embedder: Embedder,
    settings: Settings,
    items: Sequence[EvalItem],
    strategies: Sequence[Strategy],
    *,
    ks: Sequence[int] = DEFAULT_KS,
    depth: int = EVAL_DEPTH,
    backend: ChatBackend | None = None,
    on_progress: ProgressCallback | None = None,
    on_notice: Callable[[str], None] = lambda message: None,
    answers: bool = False,
) -> EvalRun:
    """Replay every item with every strategy; one embedder and one connection for all. `backend`
    is the user's Ollama (the `ragchat+ollama` strategy); replayed models answer in-process."""
    base = Conversation(
        db,
        CachingEmbedder(embedder),
        settings.replace(top_k=depth, ollama="off"),
        "eval",
        on_notice=on_notice,
    )
    base.corpus()  # built once; every per-item copy below shares it
    run = EvalRun([s.name for s in strategies], tuple(ks))
    total = sum(1 for s in strategies for item in items if s.applies_to(item))
    done = 0
    models = [s.model for s in strategies if s.model in REPLAYED]
    with (
        replayed_models(models, settings.ollama_timeout)
        if models
        else contextlib.nullcontext() as replayed
    ):
        for strategy in strategies:
            started = time.perf_counter()
            model = _with_model(base, strategy, replayed, backend)
            for item in (i for i in items if strategy.applies_to(i)):
                if on_progress:
                    on_progress(done, total, f"{strategy.name} {item.id}")
                run.turns.extend(
                    replay_item(model, strategy, item, ks, answers=answers, replayed=replayed)
                )
                done += 1
            run.seconds[strategy.name] = round(time.perf_counter() - started, 2)
        if replayed is not None:
            run.prompt_chars = replayed.prompt_chars
    if on_progress:
        on_progress(done, total, "done")
    return run


def _with_model(
    base: Conversation,
    strategy: Strategy,
    replayed: ReplayedModels | None,
    backend: ChatBackend | None,
) -> Conversation:
    """The conversation a strategy replays with: its model's backend, if it has one."""
    if strategy.model is None:
        return base
    chosen = (
        backend
        if strategy.model == "ollama"
        else (replayed.backend(strategy.model) if replayed else None)
    )
    if chosen is None:
        raise RagchatError(f"strategy {strategy.name!r} has no model to talk to")
    return replace(base, backend=chosen, settings=base.settings.replace(ollama="on"))


def as_shown(gold: Sequence[str], shown: Mapping[str, str]) -> tuple[str, ...]:
    """Gold file names as results name them: a file stored as an identical copy of another (or
    with copies) is the document's shown path "a.txt (also b.txt)"; copies count once."""
    return tuple(dict.fromkeys(shown.get(name, name) for name in gold))


def replay_item(
    base: Conversation,
    strategy: Strategy,
    item: EvalItem,
    ks: Sequence[int],
    *,
    answers: bool = False,
    replayed: ReplayedModels | None = None,
) -> list[ScoredTurn]:
    """One item in a fresh session: every turn through `Conversation.ask`, the scored ones scored
    (with `answers`, a ragchat strategy answers the scored turns that have a reference); a
    replayed model is told each turn's reply first."""
    name = session_name(strategy.name, item.id)
    sessions.clear_session(base.db, name)
    scored: list[ScoredTurn] = []
    conversation = replace(
        base, session=name, reformulator=strategy.reformulator(item), ablations=strategy.ablations
    )
    shown = library.shown_paths(base.db)  # a gold file stored as a copy counts as its original
    for index, turn in enumerate(item.turns):
        answering = (
            answers
            and answers_strategy(strategy)
            and strategy.scores(turn)
            and bool(turn.reference)
        )
        conversation.recorded_answer = None if answering else turn.assistant or ""
        if replayed is not None and strategy.model in REPLAYED:
            questions = [t.user for t in item.turns[: index + 1]]
            replayed.answer_with(reply_for(str(strategy.model), questions, turn.llm_reply))
        result = conversation.ask(turn.user)
        if strategy.scores(turn):
            ranked = tuple(distinct_files(chunk.document for chunk in result.lineage.chunks))
            reference = turn.reference or ""
            scored_answer = (
                answer_of(base.db, result, reference, base.params.answer) if answering else None
            )
            scored.append(
                ScoredTurn(
                    item.id,
                    result.lineage.turn,
                    strategy.name,
                    item.tags,
                    result,
                    ranked,
                    turn.gold,
                    score(ranked, as_shown(turn.gold, shown), ks),
                    scored_answer,
                )
            )
    return scored


def write_rows(path: Path, run: EvalRun) -> None:
    with Path(path).open("w", encoding="utf-8") as handle:
        for turn in run.turns:
            handle.write(json.dumps(turn.to_row(), ensure_ascii=False) + "\n")
