"""Stage 2 of a turn: the reformulation, by whichever reformulator the turn has.

`Reformulator` is the protocol; the heuristic (no LLM), the Ollama one and the eval's fixed
baselines satisfy it, and `FallbackReformulator` composes Ollama with the heuristic: Ollama
when it is usable, the heuristic when it fails (with a notice saying why).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Protocol

import numpy as np

from ..errors import BackendUnavailable
from .corpus import CorpusStats
from .models import Reformulation, ReformulationInput
from .reading import TurnContext


class Reformulator(Protocol):
    @property
    def name(self) -> str: ...

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation: ...


def fallback_notice(stage: str, reason: str) -> str:
    using = "the heuristic reformulator" if stage == "reformulation" else "an extractive answer"
    return f"Ollama {stage} failed ({reason}); using {using}"


@dataclass(frozen=True)
class FallbackReformulator:
    """The primary reformulator, or the secondary when the primary's backend fails (the
    reformulation then says why in `fallback`). The corpus keywords nearest to the question are
    looked up only for the primary's prompt."""

    primary: Reformulator
    secondary: Reformulator
    corpus: CorpusStats

    @property
    def name(self) -> str:
        return self.primary.name

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        if not data.has_history:  # a first question stands alone: no rewrite to ask for
            return self.secondary.reformulate(data, question_vector)
        nearest = tuple(self.corpus.nearest_keywords(question_vector, n=40, minimum=0.15))
        try:
            return self.primary.reformulate(replace(data, corpus_keywords=nearest), question_vector)
        except BackendUnavailable as exc:
            reformulation = self.secondary.reformulate(data, question_vector)
            return replace(reformulation, fallback=fallback_notice("reformulation", exc.reason))


def reformulation_input(context: TurnContext, anchor_keywords: tuple[str, ...]) -> ReformulationInput:
    last = context.searching.reformulation if context.searching else None
    window = context.window
    last_user = next((m for m in reversed(window.messages) if m.role == "user" and m.embedding is not None), None)
    return ReformulationInput(
        question=context.question, last=window.last, window=tuple(m.content for m in window.older),
        anchor_keywords=anchor_keywords, anchor_chunk_ids=context.anchors.chunk_ids,
        last_semantic_query=last.semantic_query if last else "", last_keyword_query=last.keyword_query if last else "",
        earlier_questions=tuple(m.content for m in context.history if m.role == "user"),
        topic_questions=context.topic_questions,
        last_user_similarity=float(last_user.embedding @ context.vector) if last_user is not None and last_user.embedding is not None else 0.0,
        own_best=context.probe.best, own_margin=context.probe.margin,
        own_best_anchored=bool(context.probe.ids) and context.probe.ids[0] in set(context.anchors.chunk_ids),
    )


def reformulate(context: TurnContext, reformulator: Reformulator, anchor_keywords: tuple[str, ...]) -> Reformulation:
    return reformulator.reformulate(reformulation_input(context, anchor_keywords), context.vector)
