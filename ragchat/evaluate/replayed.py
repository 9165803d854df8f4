"""Models replayed through the real Ollama path, for `ragchat eval`.

A replayed model answers the reformulation request from what the conversation set recorded
(`recorded`: the `llm_reply` a strong model gave for that turn) or the way small models fail
(`echo`: the question back, no flags; `drift`: the previous question put in front, "follow-up";
`flip`: "topic shift" on every turn). Its replies are served in-process by an
`httpx.MockTransport` speaking Ollama's HTTP protocol, handed to `OllamaBackend` (its network
seam) and read by the real `ollama` client, so the same validation, weighting, fusion and
anchoring run as with a live model; nothing listens on a port.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from ..llm import OllamaBackend

REPLAYED = ("recorded", "echo", "drift", "flip")
REPLY_FIELDS = {"semantic_query": str, "is_follow_up": bool, "is_meta": bool, "topic_shift": bool}
HOST = "http://127.0.0.1:11434"  # never connected to: the transport answers (a loopback name,
# so a replayed turn says nothing about passages leaving the machine)
CONTEXT_LENGTH = 131072  # what /api/show says of every replayed model
NDJSON = "application/x-ndjson"  # a streamed reply: one JSON object a line


@dataclass(frozen=True)
class Content:
    """A whole reply: the message's content."""

    text: str


@dataclass(frozen=True)
class Failure:
    """An HTTP error status with Ollama's {"error": ...} body."""

    status: int
    error: str


Reply = Content | Failure
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


class ReplayedModels:
    """Every replayed model behind one in-process transport; `answer_with` sets the next reply."""

    def __init__(self, models: Sequence[str], timeout: float) -> None:
        self.models = [_with_tag(model_name(model)) for model in models]
        self.timeout = timeout
        self.prompt_chars: list[int] = []  # characters of each reformulation request's messages
        self.reply: Reply = NO_REPLY
        self.transport = httpx.MockTransport(self._handle)

    def backend(self, model: str) -> OllamaBackend:
        return OllamaBackend(HOST, model_name(model), self.timeout, transport=self.transport)

    def answer_with(self, reply: Reply) -> None:
        self.reply = reply

    def _handle(self, request: httpx.Request) -> httpx.Response:
        route = (request.method, request.url.path)
        if route == ("GET", "/api/tags"):
            return httpx.Response(200, json={"models": [_model_entry(m) for m in self.models]})
        if route not in {("POST", "/api/chat"), ("POST", "/api/show"), ("POST", "/api/generate")}:
            return httpx.Response(404, text="404 page not found")
        body = json.loads(request.content)
        model = str(body.get("model", ""))
        if route == ("POST", "/api/chat"):
            messages = body.get("messages", [])
            self.prompt_chars.append(sum(len(m.get("content", "")) for m in messages))
        if _with_tag(model) not in self.models:
            return httpx.Response(404, json={"error": f'model "{model}" not found'})
        if route == ("POST", "/api/show"):
            info = {"general.architecture": "llama", "llama.context_length": CONTEXT_LENGTH}
            return httpx.Response(200, json={"modelfile": "", "details": {}, "model_info": info})
        if route == ("POST", "/api/generate"):
            done = {"model": model, "response": "", "done": True, "done_reason": "load"}
            return httpx.Response(200, json=done)
        return self._chat(model, body)

    def _chat(self, model: str, body: dict[str, Any]) -> httpx.Response:
        reply = self.reply
        if isinstance(reply, Failure):
            return httpx.Response(reply.status, json={"error": reply.error})
        tokens = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4 or 1
        if body.get("stream", True) is False:
            return httpx.Response(200, json=_chat_chunk(model, reply.text, tokens))
        lines = [_chat_chunk(model, reply.text, None), _chat_chunk(model, "", tokens)]
        content = "".join(json.dumps(line) + "\n" for line in lines).encode()
        return httpx.Response(
            200, content=content, headers={"Content-Type": "application/x-ndjson"}
        )


@contextmanager
def replayed_models(models: Sequence[str], timeout: float) -> Iterator[ReplayedModels]:
    replayed = ReplayedModels(models, timeout)
    try:
        yield replayed
    finally:
        replayed.transport.close()


def _with_tag(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _model_entry(name: str) -> dict[str, Any]:
    return {"name": name, "model": name, "size": 1, "digest": "0" * 64, "details": {}}


def _chat_chunk(model: str, content: str, prompt_tokens: int | None) -> dict[str, Any]:
    """One reply line as Ollama sends it; the last (with the prompt's token count) is done."""
    chunk: dict[str, Any] = {
        "model": model,
        "message": {"role": "assistant", "content": content},
        "done": prompt_tokens is not None,
    }
    if prompt_tokens is not None:
        chunk |= {"done_reason": "stop", "prompt_eval_count": prompt_tokens, "eval_count": 1}
    return chunk
