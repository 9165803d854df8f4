"""Stage 2 of a turn: the reformulation, by whichever reformulator the turn has.

`Reformulator` is the protocol; the heuristic (no LLM), the Ollama one and the eval's fixed
baselines satisfy it. A model's reading is asked beside it (`ask_model`, in a thread) and
weighed in by `combine.py`; when the model fails, the turn goes on without it and says why.
"""

from __future__ import annotations

import threading
import time
from typing import Protocol

import numpy as np

from ..errors import BackendUnavailable
from .models import Reformulation, ReformulationInput
from .ollama_reformulator import ModelReading, OllamaReformulator
from .reading import TurnContext


class Reformulator(Protocol):
    @property
    def name(self) -> str: ...

    def reformulate(
        self, data: ReformulationInput, question_vector: np.ndarray
    ) -> Reformulation: ...


def fallback_notice(stage: str, reason: str) -> str:
    using = "the heuristic reformulator" if stage == "reformulation" else "an extractive answer"
    return f"Ollama {stage} failed ({reason}); using {using}"


class PendingReading:
    """The model's reading of a turn, asked in a thread so that the question's own searches and
    the heuristic run while the model thinks. `result()` waits; a failure is (None, a notice)."""

    def __init__(self, model: OllamaReformulator, data: ReformulationInput) -> None:
        self._reading: ModelReading | None = None
        self._notice = ""
        self.seconds = 0.0
        self._done = threading.Event()
        threading.Thread(target=self._run, args=(model, data), daemon=True).start()

    def _run(self, model: OllamaReformulator, data: ReformulationInput) -> None:
        started = time.perf_counter()
        try:
            self._reading = model.read(data)
        except BackendUnavailable as exc:
            self._notice = fallback_notice("reformulation", exc.reason)
        except Exception as exc:  # never lose the turn to a thread's surprise
            self._notice = fallback_notice("reformulation", f"{type(exc).__name__}: {exc}"[:120])
        finally:
            self.seconds = time.perf_counter() - started
            self._done.set()

    def result(self) -> tuple[ModelReading | None, str]:
        self._done.wait()
        return self._reading, self._notice


def ask_model(model: OllamaReformulator, data: ReformulationInput) -> PendingReading | None:
    """Start asking the model about a question that has history (a first question is not asked)."""
    return PendingReading(model, data) if data.has_history else None


def reformulation_input(
    context: TurnContext, anchor_keywords: tuple[str, ...]
) -> ReformulationInput:
    last = context.searching.reformulation if context.searching else None
    window = context.window
    return ReformulationInput(
        question=context.question,
        last=window.last,
        window=tuple(m.content for m in window.older),
        anchor_keywords=anchor_keywords,
        anchor_chunk_ids=context.anchors.chunk_ids,
        last_semantic_query=last.semantic_query if last else "",
        last_keyword_query=last.keyword_query if last else "",
        last_question=context.searching.question if context.searching else "",
        last_followed=last.is_follow_up if last else True,
        earlier_questions=tuple(m.content for m in context.history if m.role == "user"),
        topic_questions=context.topic_questions,
        own_best=context.probe.best
        if context.carried.subject_best is None
        else context.carried.subject_best,
        own_margin=context.probe.margin,
        own_best_anchored=bool(context.probe.ids)
        and context.probe.ids[0] in set(context.anchors.chunk_ids),
        own_anchor_best=context.probe.best_of(context.anchors.chunk_ids),
        moved=context.carried.moved,
    )


def reformulate(
    context: TurnContext, reformulator: Reformulator, anchor_keywords: tuple[str, ...]
) -> Reformulation:
    return reformulator.reformulate(reformulation_input(context, anchor_keywords), context.vector)
