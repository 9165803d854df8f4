"""A model's answer as it arrives, and the chunks an answer without citations stands on."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np

from ..llm import ChatBackend
from .params import AnswerParams


def stream(backend: ChatBackend, messages: list[dict[str, str]]) -> Iterator[str]:
    """Tokens from Ollama as they arrive (errors surface as BackendUnavailable)."""
    yield from backend.chat_stream(messages)


def supported_by(
    answer_vector: np.ndarray,
    chunk_vectors: dict[int, np.ndarray],
    params: AnswerParams,
) -> set[int]:
    """Chunks an uncited answer stands on: the most similar to it, and any close behind. An
    answer like none of them ("I do not have that information.") stands on nothing."""
    if not chunk_vectors:
        return set()
    scored = sorted(
        ((float(v @ answer_vector), cid) for cid, v in chunk_vectors.items()), reverse=True
    )
    floor = max(scored[0][0] - params.support_margin, params.support_minimum)
    return {cid for score, cid in scored[: params.support_limit] if score >= floor}


THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)


class ThinkSplitter:
    """A streamed reply split into its answer and a thinking model's reasoning (`<think>...
    </think>`, possibly across pieces): `feed` returns (answer, thinking) text of a piece; a tag
    cut across pieces is held back until it is whole."""

    OPEN, CLOSE = "<think>", "</think>"

    def __init__(self) -> None:
        self.thinking = False
        self._held = ""

    def feed(self, piece: str) -> tuple[str, str]:
        text, self._held = self._held + piece, ""
        answer: list[str] = []
        thought: list[str] = []
        while text:
            tag = self.CLOSE if self.thinking else self.OPEN
            at = text.lower().find(tag)
            if at < 0:
                keep = _partial_tag(text, tag)
                body, self._held = text[: len(text) - keep], text[len(text) - keep :]
                (thought if self.thinking else answer).append(body)
                break
            (thought if self.thinking else answer).append(text[:at])
            text = text[at + len(tag) :]
            self.thinking = not self.thinking
        return "".join(answer), "".join(thought)

    def flush(self) -> tuple[str, str]:
        held, self._held = self._held, ""
        return ("", held) if self.thinking else (held, "")


def _partial_tag(text: str, tag: str) -> int:
    """How many characters at the end of `text` may begin `tag`."""
    lowered = text.lower()
    for size in range(min(len(tag) - 1, len(text)), 0, -1):
        if tag.startswith(lowered[-size:]):
            return size
    return 0


def without_thinking(text: str) -> str:
    """A whole reply without its thinking blocks (an unclosed one runs to the end)."""
    return THINK.sub("", text).strip()
