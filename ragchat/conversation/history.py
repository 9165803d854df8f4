"""The history window: the last exchange always, plus the older messages most like the question."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..params import AnswerParams
from ..store.sessions import Message
from ..text import sentences
from .models import Exchange

# answers a model must not read as the conversation: no answer came (cancelled, or still pending)
UNANSWERED = frozenset({"pending", "cancelled"})
_AFTER_STOP = re.compile(r"([.!?])\s*((?:\[\d{1,3}\]\s*)+)")
_MARKERS = re.compile(r"\s*\[\d{1,3}\](?:\s*\[\d{1,3}\])*")


@dataclass(frozen=True)
class HistoryWindow:
    last: Exchange
    messages: tuple[Message, ...]  # the whole window, chronological (last exchange included)
    older: tuple[Message, ...]  # the relevant older messages only

    @property
    def ids(self) -> list[int]:
        return [m.id for m in self.messages]


def last_exchange(history: list[Message]) -> list[Message]:
    """The last user message and the assistant reply after it (if any)."""
    for index in range(len(history) - 1, -1, -1):
        if history[index].role == "user":
            return history[index : index + 2]
    return history[-1:]


def select_window(
    history: list[Message], question: np.ndarray, size: int, minimum: float
) -> HistoryWindow:
    """Up to `size` older messages by cosine similarity to the question (at least `minimum`),
    never repeating the last exchange, returned in chronological order."""
    last = last_exchange(history)
    last_ids = {m.id for m in last}
    scored = [
        (float(m.embedding @ question), m)
        for m in history
        if m.id not in last_ids and m.embedding is not None and m.content.strip()
    ]
    scored.sort(key=lambda pair: (-pair[0], -pair[1].id))
    older = sorted(
        (m for score, m in scored[: max(size, 0)] if score >= minimum), key=lambda m: m.id
    )
    user = next((m.content for m in last if m.role == "user"), "")
    assistant = next((m.content for m in last if m.role == "assistant"), "")
    window = tuple(sorted([*older, *last], key=lambda m: m.id))
    return HistoryWindow(Exchange(user, assistant), window, tuple(older))


def model_history(history: Sequence[Message], params: AnswerParams) -> list[tuple[str, str]]:
    """The conversation as a model reads it: every answered exchange in order, (question as the
    user typed it, answer), oldest first, at most `params.model_history_turns`. Turns without an
    answer (cancelled, failed before answering) are left out, so the last exchange is the last
    one answered; [n] markers are removed (their numbers belong to another turn's sources); an
    earlier answer is compacted to the sentences that cited sources (what it stood on)."""
    asked = {m.turn: m.content for m in history if m.role == "user"}
    pairs: list[tuple[str, str]] = []
    for message in history:
        lineage = message.lineage or {}
        if message.role != "assistant" or lineage.get("answer_mode", "pending") in UNANSWERED:
            continue
        typed = str(lineage.get("correction") or "")
        question = typed if typed and not typed.startswith("/") else asked.get(message.turn, "")
        if question.strip() and message.content.strip():
            pairs.append((question, message.content))
    pairs = pairs[-params.model_history_turns :] if params.model_history_turns else []
    return [
        (
            _cut(question, params.history_chars),
            _cut(
                uncited(said if index == len(pairs) - 1 else compacted(said)),
                params.history_chars if index == len(pairs) - 1 else params.history_answer_chars,
            ),
        )
        for index, (question, said) in enumerate(pairs)
    ]


def uncited(text: str) -> str:
    """An answer without its [n] markers."""
    return _MARKERS.sub("", text).strip()


def compacted(answer: str) -> str:
    """An earlier answer as the sentences that cited a source (all of it when none did)."""
    # a marker after a full stop ("... sized. [1] Next") cites the sentence before it
    text = _AFTER_STOP.sub(lambda m: f" {m.group(2).strip()}{m.group(1)} ", answer)
    kept = [s for s in sentences(text) if _MARKERS.search(s)]
    return " ".join(kept) if kept else answer


def _cut(text: str, limit: int) -> str:
    """Cut at a word, marked, never mid-word."""
    if len(text) <= limit:
        return text
    head = text[:limit]
    return (head.rsplit(None, 1)[0] if " " in head else head) + " …"
