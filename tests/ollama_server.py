"""An Ollama-protocol server on 127.0.0.1 for the tests (and `make bench`): the real wire
protocol, scripted replies, a log of requests. The tests script it to fail the ways a server
fails; `ragchat eval` replays its models in-process instead (ragchat/evaluate/replayed.py).

    with FakeOllama(model="llama3.2") as server:
        server.reply_json({"query": "x"})           # next /api/chat answers this
        server.stream(["Hel", "lo"], delay=0.1)    # the one after streams two pieces
        backend = OllamaBackend(server.url, "llama3.2", timeout=2)
        ...
        assert server.requests[0]["format"] == schema

Scripted replies are used in order by POST /api/chat; when none is left, `server.default(request)`
answers (a str is content, a dict/list is JSON content, or any Reply). Stdlib only.
"""

from __future__ import annotations

import json
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

VERSION = "0.6.3"
DEFAULT_CONTENT = "ok"


@dataclass(frozen=True)
class Content:
    """A whole reply; sent as a single piece when the client asked for a stream."""

    text: str


@dataclass(frozen=True)
class Stream:
    """Pieces sent `delay` seconds apart, optionally followed by an {"error": ...} line; a
    thinking model's `thinking` pieces go first, in the message's `thinking` field. `endless`:
    the pieces again and again, never done."""

    pieces: tuple[str, ...]
    delay: float = 0.0
    error: str | None = None
    thinking: tuple[str, ...] = ()
    endless: bool = False


@dataclass(frozen=True)
class Trickle:
    """One reply line sent a byte at a time, `delay` seconds apart (every read gets something)."""

    text: str
    delay: float = 0.05


@dataclass(frozen=True)
class Redirect:
    """An HTTP redirect to `location` (a client that follows it re-sends the request there)."""

    location: str
    status: int = 307


@dataclass(frozen=True)
class Failure:
    """An HTTP error status with Ollama's {"error": ...} body."""

    status: int
    error: str


@dataclass(frozen=True)
class Slow:
    """Wait `seconds` (so client timeouts fire), then answer `then` (None: the default reply)."""

    seconds: float
    then: Reply | None = None


Reply = Content | Stream | Failure | Slow | Trickle | Redirect
ReplyLike = Reply | str | dict | list


def free_port_url() -> str:
    """An address where nothing listens: bind a free port, then let it go."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class FakeOllama:
    """A scriptable Ollama server on 127.0.0.1, run in a background thread while in
    a `with` block."""

    def __init__(self, model: str = "llama3.2", *more: str) -> None:
        self.models: list[str] = [
            _with_tag(name) for name in (model, *more)
        ]  # what /api/tags lists; edit to taste
        self.requests: list[dict[str, Any]] = []  # parsed bodies of POST /api/chat, in order
        self.generated: list[dict[str, Any]] = []  # parsed bodies of POST /api/generate
        self.load_delay = 0.0  # seconds /api/generate waits (a model loading) before answering
        self.context_length = 131072  # what /api/show says of every model
        # prompt_eval_count of a reply: a function of the request (default: characters / 4)
        self.prompt_tokens: Callable[[dict[str, Any]], int] = lambda request: (
            sum(len(str(m.get("content", ""))) for m in request.get("messages", [])) // 4 or 1
        )
        self.hits: list[str] = []  # every request line, e.g. "GET /api/tags"
        self.sent_at: list[float] = []  # time.monotonic() of each streamed piece as it was sent
        self.default: Callable[[dict[str, Any]], ReplyLike] = lambda request: DEFAULT_CONTENT
        self.tags_delay = 0.0  # seconds /api/tags waits before answering
        self._script: deque[Reply] = deque()
        self._closing = threading.Event()
        self._httpd: _Server | None = None

    # -- scripting -------------------------------------------------------------------------------

    def reply(self, content: str) -> None:
        self._script.append(Content(content))

    def reply_json(self, obj: Any) -> None:
        self.reply(json.dumps(obj))

    def garbage(self, text: str = "not json at all") -> None:
        self.reply(text)

    def stream(self, pieces: Sequence[str], delay: float = 0.0, error: str | None = None) -> None:
        """Stream `pieces`; with `error`, end with an {"error": ...} line instead of done."""
        self._script.append(Stream(tuple(pieces), delay, error))

    def fail(self, status: int = 500, error: str = "boom") -> None:
        self._script.append(Failure(status, error))

    def slow(self, seconds: float, then: ReplyLike | None = None) -> None:
        self._script.append(Slow(seconds, None if then is None else _as_reply(then)))

    def script(self, reply: Reply) -> None:
        """Any reply, next in order."""
        self._script.append(reply)

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("FakeOllama is not running; use it in a `with` block")
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def __enter__(self) -> FakeOllama:
        self._httpd = _Server(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        # A short poll interval keeps shutdown (and so each test's teardown) quick.
        threading.Thread(target=self._httpd.serve_forever, args=(0.02,), daemon=True).start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._closing.set()  # wakes sleeping handlers so shutdown never waits on them
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # -- answering (called from handler threads) -------------------------------------------------

    def _answer_get(self, handler: _Handler) -> None:
        if handler.path == "/":
            handler.send_text(200, "Ollama is running")
        elif handler.path == "/api/version":
            handler.send_json(200, {"version": VERSION})
        elif handler.path == "/api/tags":
            if not self._sleep(self.tags_delay):
                handler.send_json(200, {"models": [_model_entry(name) for name in self.models]})
        else:
            handler.send_text(404, "404 page not found")

    def _answer_chat(self, handler: _Handler, request: dict[str, Any]) -> None:
        self.requests.append(request)
        model = str(request.get("model", ""))
        if _with_tag(model) not in self.models:
            handler.send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
            return
        reply = self._script.popleft() if self._script else _as_reply(self.default(request))
        self._send(handler, reply, model, streaming=request.get("stream", True) is not False)

    def _answer_generate(self, handler: _Handler, request: dict[str, Any]) -> None:
        self.generated.append(request)
        model = str(request.get("model", ""))
        if _with_tag(model) not in self.models:
            handler.send_json(404, {"error": f'model "{model}" not found, try pulling it first'})
        elif not self._sleep(self.load_delay):
            body = {"model": model, "created_at": _now(), "response": "", "done": True}
            handler.send_json(200, body | {"done_reason": "load"})

    def _answer_show(self, handler: _Handler, request: dict[str, Any]) -> None:
        model = str(request.get("model", ""))
        if _with_tag(model) not in self.models:
            handler.send_json(404, {"error": f"model '{model}' not found"})
            return
        info = {"general.architecture": "llama", "llama.context_length": self.context_length}
        handler.send_json(200, {"modelfile": "", "details": {}, "model_info": info})

    def _send(self, handler: _Handler, reply: Reply, model: str, streaming: bool) -> None:
        if isinstance(reply, Slow):
            if not self._sleep(reply.seconds):
                then = reply.then or _as_reply(self.default(self.requests[-1]))
                self._send(handler, then, model, streaming)
        elif isinstance(reply, Redirect):
            handler.send_response(reply.status)
            handler.send_header("Location", reply.location)
            handler.send_header("Content-Length", "0")
            handler.send_header("Connection", "close")
            handler.end_headers()
            handler.close_connection = True
        elif isinstance(reply, Trickle):
            handler.start_stream()
            line = (json.dumps(self._chunk(model, reply.text, done=True)) + "\n").encode()
            handler.wfile.write(b"%x\r\n" % len(line))
            for byte in line:
                if self._sleep(reply.delay):
                    return
                handler.wfile.write(bytes([byte]))
                handler.wfile.flush()
            handler.wfile.write(b"\r\n")
            handler.end_stream()
        elif isinstance(reply, Failure):
            handler.send_json(reply.status, {"error": reply.error})
        elif isinstance(reply, Content):
            self._send(handler, Stream((reply.text,)), model, streaming)
        elif streaming:
            self._send_stream(handler, reply, model)
        elif reply.error is not None:
            handler.send_json(500, {"error": reply.error})
        else:
            handler.send_json(200, self._chunk(model, "".join(reply.pieces), done=True))

    def _send_stream(self, handler: _Handler, reply: Stream, model: str) -> None:
        handler.start_stream()
        parts = [("thinking", piece) for piece in reply.thinking]
        parts += [("content", piece) for piece in reply.pieces]
        index = 0
        while index < len(parts):
            if index and self._sleep(reply.delay):
                return  # closing: drop the connection mid-stream
            field, piece = parts[index]
            chunk = _chat_chunk(model, "", done=False)
            chunk["message"][field] = piece
            try:
                handler.send_line(chunk)
            except OSError:
                return  # the client hung up
            self.sent_at.append(time.monotonic())
            index += 1
            if reply.endless and index == len(parts):
                index = 0
        handler.send_line(
            {"error": reply.error} if reply.error else self._chunk(model, "", done=True)
        )
        handler.end_stream()

    def _chunk(self, model: str, content: str, done: bool) -> dict[str, Any]:
        chunk = _chat_chunk(model, content, done)
        if done and self.requests:
            chunk["prompt_eval_count"] = self.prompt_tokens(self.requests[-1])
        return chunk

    def _sleep(self, seconds: float) -> bool:
        """Sleep, waking early when the server closes; True means it is closing."""
        return seconds > 0 and self._closing.wait(seconds)


class _Server(ThreadingHTTPServer):
    fake: FakeOllama
    block_on_close = False  # never wait on a handler at shutdown; sleeps are woken anyway

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], ConnectionError):
            return  # the client gave up (timeout, closed stream): expected in tests
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # needed for chunked streams
    server: _Server

    def do_GET(self) -> None:
        self.server.fake.hits.append(f"GET {self.path}")
        self.server.fake._answer_get(self)

    def do_POST(self) -> None:
        self.server.fake.hits.append(f"POST {self.path}")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        answer = {
            "/api/chat": self.server.fake._answer_chat,
            "/api/generate": self.server.fake._answer_generate,
            "/api/show": self.server.fake._answer_show,
        }.get(self.path)
        if answer is None:
            self.send_text(404, "404 page not found")
            return
        try:
            request = json.loads(body)
        except json.JSONDecodeError:
            self.send_json(400, {"error": "invalid JSON body"})
            return
        answer(self, request)

    def send_text(
        self, status: int, text: str, content_type: str = "text/plain; charset=utf-8"
    ) -> None:
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")  # no idle keep-alive threads left behind
        self.end_headers()
        self.wfile.write(data)
        self.close_connection = True

    def send_json(self, status: int, obj: Any) -> None:
        self.send_text(status, json.dumps(obj), "application/json; charset=utf-8")

    def start_stream(self) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def send_line(self, obj: Any) -> None:
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def end_stream(self) -> None:
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass  # keep test output clean


def _as_reply(value: ReplyLike) -> Reply:
    if isinstance(value, str):
        return Content(value)
    if isinstance(value, (dict, list)):
        return Content(json.dumps(value))
    return value


def _with_tag(name: str) -> str:
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _model_entry(name: str) -> dict[str, Any]:
    return {
        "name": name,
        "model": name,
        "modified_at": _now(),
        "size": 1,
        "digest": "0" * 64,
        "details": {
            "parent_model": "",
            "format": "gguf",
            "family": "llama",
            "families": ["llama"],
            "parameter_size": "3.2B",
            "quantization_level": "Q4_K_M",
        },
    }


def _chat_chunk(model: str, content: str, done: bool) -> dict[str, Any]:
    """One reply line as Ollama sends it; the final one (done) carries the counts."""
    chunk: dict[str, Any] = {
        "model": model,
        "created_at": _now(),
        "message": {"role": "assistant", "content": content},
        "done": done,
    }
    if done:
        chunk |= {
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "load_duration": 1_000,
            "prompt_eval_count": 1,
            "prompt_eval_duration": 1_000,
            "eval_count": 1,
            "eval_duration": 1_000,
        }
    return chunk
