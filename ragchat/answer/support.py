"""A model's answer as it arrives, and the chunks an answer without citations stands on."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from ..llm import ChatBackend
from .params import ANSWER_PARAMS, AnswerParams


def stream(backend: ChatBackend, messages: list[dict[str, str]]) -> Iterator[str]:
    """Tokens from Ollama as they arrive (errors surface as BackendUnavailable)."""
    yield from backend.chat_stream(messages)


def supported_by(
    answer_vector: np.ndarray,
    chunk_vectors: dict[int, np.ndarray],
    params: AnswerParams = ANSWER_PARAMS,
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
