"""In-process fakes for unit tests of the turn's stages. (The integration tier talks to the
Ollama-protocol HTTP server in ollama_server.py through the real client.)"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from ragchat.errors import BackendUnavailable


class FakeChat:
    """A ChatBackend: JSON replies and streamed pieces from queues; an Exception in a queue is
    raised instead. Records every message list it was sent."""

    host = "http://127.0.0.1:11434"
    model = "fake"

    def __init__(self, json_replies: list[Any] | None = None, streams: list[Any] | None = None) -> None:
        self.json_replies = list(json_replies or [])
        self.streams = list(streams or [])
        self.sent: list[list[dict[str, str]]] = []

    def available(self) -> bool:
        return True

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        self.sent.append(messages)
        reply = self.json_replies.pop(0) if self.json_replies else BackendUnavailable("no reply queued")
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
