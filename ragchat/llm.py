"""The Ollama seam: one small class over the official client, every failure mapped to
BackendUnavailable."""

from __future__ import annotations

import ipaddress
import json
import os
import queue
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import urlsplit

from ragchat.errors import BackendUnavailable, ReplyCut
from ragchat.text import one_line

if TYPE_CHECKING:
    import ollama

# JSON schema type -> (Python types that satisfy it, how a reason names it).
_JSON_TYPES: dict[str, tuple[tuple[type, ...], str]] = {
    "string": ((str,), "a string"),
    "boolean": ((bool,), "a boolean"),
    "array": ((list,), "an array"),
    "object": ((dict,), "an object"),
    "number": ((int, float), "a number"),
    "integer": ((int,), "an integer"),
}
_MAX_REASON = 120
T = TypeVar("T")
# A thinking model's reasoning, when the server sends it apart from the answer (`thinking`), is
# passed on inline between these tags, as models that think in their content write it.
THINK_OPEN, THINK_CLOSE = "<think>", "</think>"


@dataclass(frozen=True)
class Limits:
    """How long and how much a model may take (the `ollama_*` settings). Each wait is bounded on
    its own: connecting; the first piece of a reply (a model that is not in memory loads first,
    and Ollama sends nothing, not even headers, until it has: 10-60 s on a laptop, minutes on a
    CPU); each later piece; the whole reply; and its size."""

    connect: float = 5.0
    first_token: float = 300.0
    between: float = 20.0  # `ollama_timeout`: between two pieces, and for /api/tags
    total: float = 600.0
    max_chars: int = 40_000
    num_ctx: int = 8192  # the context window asked for on every request
    keep_alive: str = "30m"  # how long the server keeps the model loaded after a request

    @classmethod
    def single(cls, timeout: float) -> Limits:
        """One timeout for every wait (older callers and tests)."""
        return cls(connect=timeout, first_token=timeout, between=timeout)


class ChatBackend(Protocol):
    """A chat model: what the turn needs of Ollama (tests use an in-process fake)."""

    host: str
    model: str

    def available(self) -> bool: ...

    def chat_json(
        self, messages: list[dict[str, str]], schema: dict[str, Any]
    ) -> dict[str, Any]: ...

    def chat_stream(self, messages: list[dict[str, str]]) -> Iterator[str]: ...


def host_name(host: str) -> str:
    """The machine an Ollama host setting points at, read the way the client reads it
    ("gpu-box:11434", "http://[::1]:11434", ":11434"; nothing before the port means 127.0.0.1)."""
    text = (
        host.strip() or os.environ.get("OLLAMA_HOST", "").strip()
    )  # what the client falls back on
    url = urlsplit(text if "://" in text else f"http://{text}")
    return (url.hostname or "127.0.0.1").rstrip(".").lower()


def is_loopback(host: str) -> bool:
    """Whether talking to `host` stays on this machine: 127.0.0.0/8, ::1, localhost (and the
    unspecified 0.0.0.0 / ::, which connect to this machine)."""
    name = host_name(host)
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name)
    except ValueError:
        return False  # any other name may resolve anywhere
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return address.is_loopback or address.is_unspecified


def remote_notice(host: str) -> str | None:
    """What a turn says once when its questions and passages leave this machine."""
    if is_loopback(host):
        return None
    return (
        f"questions and document passages are sent to the Ollama server at {host_name(host)} "
        "(not this machine)"
    )


class OllamaBackend:
    """One model on one Ollama server. Every failure surfaces as
    BackendUnavailable(reason). `transport` (an httpx transport) is the network seam: tests
    route a configured host to a local server.

    Each request runs in a worker thread and is waited for here, so every limit holds whatever the
    server does (trickles a byte a second, never ends, sends 50 MB), and Ctrl-C stops the wait at
    once; an abandoned request's connection is closed, which also tells Ollama to stop."""

    def __init__(
        self, host: str, model: str, timeout: Limits | float, *, transport: Any = None
    ) -> None:
        self.host = host
        self.model = model
        self.limits = timeout if isinstance(timeout, Limits) else Limits.single(timeout)
        self.timeout = self.limits.between
        self._transport = transport
        self._available: bool | None = None
        self.warmed = threading.Event()  # set once a warm-up request has answered (or failed)
        self.last_prompt_tokens: int | None = None  # the server's prompt_eval_count, last reply
        self.last_prompt_chars = 0  # the characters of that request's messages

    @cached_property
    def _client(self) -> ollama.Client:
        return self._new_client()

    def _new_client(self) -> ollama.Client:
        # here, not at the top: the client and pydantic take ~0.15 s to import
        import httpx
        import ollama

        extra = {"transport": self._transport} if self._transport is not None else {}
        limits = self.limits
        # the waits themselves are bounded in `_bounded`; httpx's own only ends a lost worker
        timeout = httpx.Timeout(
            connect=limits.connect,
            read=max(limits.first_token, limits.between) + 1,
            write=limits.between,
            pool=limits.connect,
        )
        # never follow a redirect: the prompt and passages must not be re-sent to another host
        return ollama.Client(host=self.host, timeout=timeout, follow_redirects=False, **extra)

    def _drop_client(self) -> None:
        """Close the client (ending a request still running in a worker) and start afresh."""
        client = self.__dict__.pop("_client", None)
        if client is not None:
            with suppress(Exception):
                client._client.close()

    def available(self) -> bool:
        """Whether the server answers and has the model. Asked once, then cached; never raises."""
        if self._available is None:
            with suppress(BackendUnavailable):
                self.check()
        return bool(self._available)

    def check(self) -> None:
        """Ask the server afresh (refreshing the cache); raise BackendUnavailable saying why not."""
        self._available = False
        # the common "no Ollama here", known without importing the client (a transport routes
        # elsewhere)
        if self._transport is None and _refused(self.host):
            raise BackendUnavailable(f"connection refused at {self.host}")
        listing = self._call(lambda client: client.list(), self.limits.between)
        if not self.listed(listing):
            raise BackendUnavailable(f"model '{self.model}' not found")
        self._available = True

    def listed(self, listing: Any) -> bool:
        return any(_same_model(entry.model or "", self.model) for entry in listing.models)

    def models(self) -> list[str]:
        """The models the server has (pulled), as it names them."""
        listing = self._call(lambda client: client.list(), self.limits.between)
        return [entry.model or "" for entry in listing.models]

    def context_length(self) -> int | None:
        """The model's trained context length, as the server shows it (None: not said)."""
        shown = self._call(lambda client: client.show(self.model), self.limits.between)
        info = getattr(shown, "modelinfo", None) or {}
        lengths = [v for k, v in info.items() if k.endswith(".context_length")]
        return int(lengths[0]) if lengths and isinstance(lengths[0], int) else None

    def warm(self) -> None:
        """Load the model now (an empty generate request with keep_alive), so the first question
        does not wait for it; bounded by the first-token limit. Sets `warmed` however it ends."""
        client = self._new_client()  # its own: it runs beside the chat's requests
        try:
            self._call(
                lambda c: c.generate(
                    self.model, "", keep_alive=self.limits.keep_alive, options=self._options()
                ),
                self.limits.first_token,
                client,
            )
        finally:
            self.warmed.set()
            with suppress(Exception):
                client.close()

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        """One deterministic reply constrained to `schema`, parsed and checked against it. It is
        streamed, so that the same limits hold as for an answer."""
        text = "".join(self._chat(messages, format=schema, temperature=0))
        try:
            reply = json.loads(text)
        except json.JSONDecodeError as exc:
            raise BackendUnavailable("invalid JSON in reply") from exc
        if not isinstance(reply, dict):
            raise BackendUnavailable("reply is not a JSON object")
        _check_against(schema, reply)
        return reply

    def chat_stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        """Yield the answer's pieces as they arrive (a thinking model's reasoning between
        <think> tags); a failure mid-stream raises after earlier pieces, a limit reached raises
        ReplyCut."""
        yield from self._chat(messages)

    def _options(self, temperature: float | None = None) -> dict[str, Any]:
        options: dict[str, Any] = {"num_ctx": self.limits.num_ctx}
        if temperature is not None:
            options["temperature"] = temperature
        return options

    def _chat(
        self,
        messages: list[dict[str, str]],
        format: dict[str, Any] | None = None,
        temperature: float | None = None,
    ) -> Iterator[str]:
        self.last_prompt_tokens = None
        self.last_prompt_chars = sum(len(m.get("content", "")) for m in messages)
        extra = {"format": format} if format is not None else {}

        def request(client: ollama.Client) -> Iterator[Any]:
            return client.chat(  # type: ignore[call-overload]  # format: a schema, as documented
                self.model,
                messages,
                stream=True,
                options=self._options(temperature),
                keep_alive=self.limits.keep_alive,
                **extra,
            )

        size, thinking = 0, False
        for part in self._bounded(request):
            if part.done and part.prompt_eval_count:
                self.last_prompt_tokens = int(part.prompt_eval_count)
            text = ""
            thought = getattr(part.message, "thinking", None) or ""
            if thought:
                text += (THINK_OPEN if not thinking else "") + thought
                thinking = True
            if part.message.content:
                text += (THINK_CLOSE if thinking else "") + part.message.content
                thinking = False
            if not text:
                continue
            room = self.limits.max_chars - size
            if len(text) > room:
                if room > 0:
                    yield text[:room]
                raise ReplyCut(
                    f"reply cut at {self.limits.max_chars:,} characters (ollama_reply_chars)"
                )
            size += len(text)
            yield text
        if thinking:
            yield THINK_CLOSE

    def _call(self, call: Callable[[ollama.Client], T], limit: float, client: Any = None) -> T:
        """One non-streamed request, waited for at most `limit` seconds."""
        # read to the end: a request left unfinished would close the client
        [result] = list(self._bounded(lambda c: iter([call(c)]), first=limit, client=client))
        return result

    def _bounded(
        self,
        request: Callable[[ollama.Client], Iterator[T]],
        first: float | None = None,
        client: Any = None,
    ) -> Iterator[T]:
        """The request's items, read by a worker thread and waited for here under the limits:
        `first` (default: the first-token limit) for the first item, the between-tokens limit for
        each later one, the total limit for all. `client`: one of its own (default: the shared
        one, replaced when a request is abandoned)."""
        own = client is not None
        client = client if own else self._client
        box: queue.Queue[tuple[str, Any]] = queue.Queue()

        def work() -> None:
            try:
                with self._mapped_errors():
                    for item in request(client):
                        box.put(("item", item))
                box.put(("end", None))
            except BaseException as exc:  # handed to the waiting thread, which raises it
                box.put(("error", exc))

        threading.Thread(target=work, daemon=True, name="ollama-request").start()
        limits, started, received = self.limits, time.monotonic(), False
        finished = False
        try:
            while True:
                limit = limits.between if received else (first or limits.first_token)
                left = limits.total - (time.monotonic() - started)
                try:
                    kind, value = box.get(timeout=max(min(limit, left), 0.001))
                except queue.Empty:
                    if left <= limit:
                        raise ReplyCut(
                            f"reply stopped after {limits.total:g}s (ollama_reply_timeout)"
                        ) from None
                    raise BackendUnavailable(f"timed out after {limit:g}s") from None
                if kind == "end":
                    finished = True
                    return
                if kind == "error":
                    finished = True
                    raise value
                received = True
                yield value
        finally:
            if not finished:  # cut, timed out, cancelled (Ctrl-C) or abandoned by the caller
                if own:
                    with suppress(Exception):
                        client.close()
                else:
                    self._drop_client()

    @contextmanager
    def _mapped_errors(self) -> Iterator[None]:
        """Turn whatever the client or httpx raises into BackendUnavailable with a short reason."""
        # here: the client loads only when a model is asked
        import httpx
        import ollama
        import pydantic

        try:
            yield
        except httpx.ConnectTimeout as exc:
            raise BackendUnavailable(
                f"could not connect to {self.host} within {self.limits.connect:g}s"
            ) from exc
        except httpx.TimeoutException as exc:
            raise BackendUnavailable(f"timed out after {self.timeout:g}s") from exc
        # list() and chat() raise ConnectionError; a stream raises the bare httpx.ConnectError.
        except (httpx.ConnectError, ConnectionError) as exc:
            raise BackendUnavailable(f"connection refused at {self.host}") from exc
        except ollama.ResponseError as exc:
            raise BackendUnavailable(self._http_reason(exc)) from exc
        except httpx.HTTPError as exc:  # e.g. the server hung up mid-reply
            raise BackendUnavailable(_reason(f"connection failed: {exc}")) from exc
        except json.JSONDecodeError as exc:
            raise BackendUnavailable("invalid JSON in reply") from exc
        except pydantic.ValidationError as exc:  # JSON, but not shaped like an Ollama reply
            raise BackendUnavailable("unexpected reply from server") from exc

    def _http_reason(self, exc: ollama.ResponseError) -> str:
        error = _reason(str(exc.error))
        if exc.status_code == 404 and "model" in error.lower():
            return f"model '{self.model}' not found"
        if 300 <= exc.status_code < 400:
            return (
                f"HTTP {exc.status_code}: the server at {self.host} redirects elsewhere; not "
                "followed (set ollama_host to the server itself)"
            )
        if exc.status_code < 0:  # an {"error": ...} line inside a 200 stream carries no status
            return error
        return f"HTTP {exc.status_code}: {error}"


_PROXY_VARIABLES = (
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
)


def _refused(host: str) -> bool:
    """Whether a TCP connection to the host (as the ollama client reads it) is refused. Anything
    else (it connects, a timeout, DNS, a proxy in the environment) is left to the client."""
    if not host.strip() or any(os.environ.get(name) for name in _PROXY_VARIABLES):
        return False
    parts = urlsplit(host if "://" in host else f"http://{host}")
    try:
        port = parts.port or (
            11434 if "://" not in host else {"http": 80, "https": 443}.get(parts.scheme)
        )
    except ValueError:
        return False
    if port is None:
        return False
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", port), timeout=1.0):
            return False
    except ConnectionRefusedError:
        return True
    except OSError:
        return False


def _same_model(listed: str, wanted: str) -> bool:
    return _with_tag(listed) == _with_tag(wanted)


def _with_tag(name: str) -> str:
    """'llama3.2' means 'llama3.2:latest'; a registry port ('host:5000/m') is not a tag."""
    return name if ":" in name.rsplit("/", 1)[-1] else f"{name}:latest"


def _check_against(schema: dict[str, Any], reply: dict[str, Any]) -> None:
    """Required keys present and top-level types right; enough to trust a small model's output."""
    missing = [key for key in schema.get("required", []) if key not in reply]
    if missing:
        raise BackendUnavailable(f"reply missing fields: {', '.join(missing)}")
    for key, spec in schema.get("properties", {}).items():
        expected = spec.get("type")  # may be a list like ["string", "null"]: not checked
        if key in reply and isinstance(expected, str) and not _is_json_type(reply[key], expected):
            raise BackendUnavailable(f"field {key} is not {_JSON_TYPES[expected][1]}")


def _is_json_type(value: object, expected: str) -> bool:
    if expected not in _JSON_TYPES:
        return True
    if isinstance(value, bool) and expected != "boolean":  # bool is an int in Python, not in JSON
        return False
    return isinstance(value, _JSON_TYPES[expected][0])


def _reason(text: str) -> str:
    """The first line of an error, short."""
    lines = text.strip().splitlines()
    return one_line(lines[0], _MAX_REASON) if lines else "no details"
