"""The history window: the last exchange always, plus the older messages most like the question."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..store.sessions import Message
from .models import Exchange


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
    history: list[Message], question: np.ndarray, size: int, minimum: float = 0.2
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
