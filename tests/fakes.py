"""In-process fakes for unit tests of the turn's stages: a chat backend and an embedder. (The
integration tier talks to the Ollama-protocol HTTP server in ollama_server.py through the real
client, and embeds with the real model.)"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ragchat.errors import BackendUnavailable


class FakeChat:
    """A ChatBackend: JSON replies and streamed pieces from queues; an Exception in a queue is
    raised instead. Records every message list it was sent."""

    host = "http://127.0.0.1:11434"
    model = "fake"

    def __init__(
        self, json_replies: list[Any] | None = None, streams: list[Any] | None = None
    ) -> None:
        self.json_replies = list(json_replies or [])
        self.streams = list(streams or [])
        self.sent: list[list[dict[str, str]]] = []

    def available(self) -> bool:
        return True

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(messages)
        reply = (
            self.json_replies.pop(0) if self.json_replies else BackendUnavailable("no reply queued")
        )
        if isinstance(reply, Exception):
            raise reply
        return reply

    def chat_stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        self.sent.append(messages)
        pieces = self.streams.pop(0) if self.streams else BackendUnavailable("no stream queued")
        if isinstance(pieces, Exception):
            raise pieces
        for piece in pieces:
            if isinstance(piece, Exception):
                raise piece
            yield piece


class HashedWords:
    """An Embedder without a model: each word (lower-cased) adds 1 to one of `dim` dimensions
    chosen by its hash, then the vector is normalised. Deterministic, instant, and texts that
    share words are close, as with a real model; the dimension is the real model's (384).
    Records every query it embeds."""

    model_id = "test/hashed-words"

    def __init__(self, dim: int = 384) -> None:
        self.dim = dim
        self.queries: list[str] = []

    def vector(self, text: str) -> np.ndarray:
        found = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", text.casefold()):
            digest = hashlib.blake2b(word.encode(), digest_size=4).digest()
            found[int.from_bytes(digest, "big") % self.dim] += 1.0
        norm = float(np.linalg.norm(found))
        return found / norm if norm else found

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return (
            np.vstack([self.vector(t) for t in texts])
            if texts
            else np.zeros((0, self.dim), dtype=np.float32)
        )

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return self.vector(text)
