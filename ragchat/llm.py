"""The Ollama seam: one small class over the official client, every failure mapped to
BackendUnavailable."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from functools import cached_property
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import urlsplit

from ragchat.errors import BackendUnavailable
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
    route a configured host to a local server."""

    def __init__(self, host: str, model: str, timeout: float, *, transport: Any = None) -> None:
        self.host = host
        self.model = model
        self.timeout = timeout
        self._transport = transport
        self._available: bool | None = None

    @cached_property
    def _client(self) -> ollama.Client:
        import ollama  # here, not at the top: the client and pydantic take ~0.15 s to import

        extra = {"transport": self._transport} if self._transport is not None else {}
        return ollama.Client(host=self.host, timeout=self.timeout, **extra)

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
        with self._mapped_errors():
            listing = self._client.list()
        if not any(_same_model(entry.model or "", self.model) for entry in listing.models):
            raise BackendUnavailable(f"model '{self.model}' not found")
        self._available = True

    def chat_json(self, messages: list[dict[str, str]], schema: dict[str, Any]) -> dict[str, Any]:
        """One deterministic reply constrained to `schema`, parsed and checked against it."""
        with self._mapped_errors():
            response = self._client.chat(
                self.model, messages, format=schema, stream=False, options={"temperature": 0}
            )
            reply = json.loads(response.message.content or "")
        if not isinstance(reply, dict):
            raise BackendUnavailable("reply is not a JSON object")
        _check_against(schema, reply)
        return reply

    def chat_stream(self, messages: list[dict[str, str]]) -> Iterator[str]:
        """Yield the answer's pieces as they arrive; a failure mid-stream raises
        after earlier pieces."""
        # The client is lazy: connecting, HTTP errors and {"error"} lines all surface while
        # iterating.
        with self._mapped_errors():
            for part in self._client.chat(self.model, messages, stream=True):
                if part.message.content:
                    yield part.message.content

    @contextmanager
    def _mapped_errors(self) -> Iterator[None]:
        """Turn whatever the client or httpx raises into BackendUnavailable with a short reason."""
        import httpx
        import ollama
        import pydantic

        try:
            yield
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
