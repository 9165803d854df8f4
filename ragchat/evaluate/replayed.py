"""Models replayed through the real Ollama path, for `ragchat eval`.

A replayed model answers the reformulation request from what the conversation set recorded
(`recorded`: the `llm_reply` a strong model gave for that turn) or the way small models fail
(`echo`: the question back, no flags; `drift`: the previous question put in front, "follow-up";
`flip`: "topic shift" on every turn). Its replies are served by the project's Ollama-protocol
server on 127.0.0.1 and read by the real `ollama` client through `OllamaBackend`, so the same
validation, weighting, fusion and anchoring run as with a live model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

from ..llm import OllamaBackend
from ..ollama_server import Content, Failure, FakeOllama, Reply

REPLAYED = ("recorded", "echo", "drift", "flip")
REPLY_FIELDS = {"semantic_query": str, "is_follow_up": bool, "is_meta": bool, "topic_shift": bool}
NO_REPLY = Failure(503, "no recorded reply for this turn")


def model_name(model: str) -> str:
    return f"replay-{model}"


def synthetic_reply(model: str, questions: Sequence[str]) -> dict[str, Any]:
    """What a failing small model says of the last of `questions` (the user turns so far)."""
    question, previous = questions[-1], (questions[-2] if len(questions) > 1 else "")
    if model == "echo":
        return {
            "semantic_query": question,
            "is_follow_up": False,
            "is_meta": False,
            "topic_shift": False,
        }
    if model == "drift":
        return {
            "semantic_query": f"{previous} {question}".strip(),
            "is_follow_up": True,
            "is_meta": False,
            "topic_shift": False,
        }
    if model == "flip":
        return {
            "semantic_query": question,
            "is_follow_up": False,
            "is_meta": False,
            "topic_shift": True,
        }
    raise ValueError(f"not a synthetic model: {model}")


def reply_for(model: str, questions: Sequence[str], recorded: Mapping[str, Any] | None) -> Reply:
    """The reply the replayed `model` gives on the last of `questions`."""
    if model == "recorded":
        return NO_REPLY if recorded is None else _content(recorded)
    return _content(synthetic_reply(model, questions))


def _content(reply: Mapping[str, Any]) -> Reply:
    return Content(json.dumps(dict(reply)))


class ReplayServer:
    """One Ollama-protocol server for every replayed model; `answer_with` sets the next reply."""

    def __init__(self, server: FakeOllama, timeout: float) -> None:
        self.server = server
        self.timeout = timeout
        self.prompt_chars: list[int] = []  # characters of each reformulation request's messages

    def backend(self, model: str) -> OllamaBackend:
        return OllamaBackend(self.server.url, model_name(model), self.timeout)

    def answer_with(self, reply: Reply) -> None:
        self.flush()
        self.server.default = lambda request: reply

    def flush(self) -> None:
        """Count the requests served so far."""
        for request in self.server.requests:
            self.prompt_chars.append(
                sum(len(m.get("content", "")) for m in request.get("messages", []))
            )
        self.server.requests.clear()


@contextmanager
def replay_server(models: Sequence[str], timeout: float) -> Iterator[ReplayServer]:
    with FakeOllama(*(model_name(m) for m in models)) as server:
        yield ReplayServer(server, timeout)
