"""OllamaBackend against FakeOllama, through the real ollama client and real HTTP."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from ollama_server import FakeOllama, free_port_url

from ragchat.errors import BackendUnavailable
from ragchat.llm import Limits, OllamaBackend

MODEL = "llama3.2"
SCHEMA = {
    "type": "object",
    "properties": {
        "query": {"type": "string"},
        "follow_up": {"type": "boolean"},
        "keywords": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["query", "follow_up", "keywords"],
}
MESSAGES = [
    {"role": "system", "content": "Rewrite the question."},
    {"role": "user", "content": "and its license?"},
]
GOOD_REPLY = {"query": "ragchat license", "follow_up": True, "keywords": ["license"]}


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(model=MODEL) as fake:
        yield fake


def backend(server: FakeOllama, model: str = MODEL, timeout: float = 5.0) -> OllamaBackend:
    return OllamaBackend(server.url, model, timeout)


def reason_of(excinfo: pytest.ExceptionInfo[BackendUnavailable]) -> str:
    return excinfo.value.reason


# -- available() / check() -----------------------------------------------------------------------


@pytest.mark.parametrize("model", ["llama3.2", "llama3.2:latest"])
def test_available_when_model_listed_with_or_without_tag(server: FakeOllama, model: str) -> None:
    llm = backend(server, model)
    assert llm.available() is True
    llm.check()


def test_available_is_cached(server: FakeOllama) -> None:
    llm = backend(server)
    assert [llm.available(), llm.available()] == [True, True]
    assert server.hits == ["GET /api/tags"]


def test_not_available_when_model_missing(server: FakeOllama) -> None:
    llm = backend(server, "mistral")
    assert llm.available() is False
    with pytest.raises(BackendUnavailable) as excinfo:
        llm.check()
    assert reason_of(excinfo) == "model 'mistral' not found"


def test_other_tag_is_not_the_model() -> None:
    with FakeOllama(model="llama3.2:1b") as server:
        assert backend(server, "llama3.2").available() is False
        assert backend(server, "llama3.2:1b").available() is True


def test_not_available_when_down() -> None:
    url = free_port_url()
    llm = OllamaBackend(url, MODEL, timeout=2)
    assert llm.available() is False
    with pytest.raises(BackendUnavailable) as excinfo:
        llm.check()
    assert reason_of(excinfo) == f"connection refused at {url}"


def test_check_times_out(server: FakeOllama) -> None:
    server.tags_delay = 3
    llm = backend(server, timeout=0.5)
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as excinfo:
        llm.check()
    assert time.monotonic() - started < 2
    assert reason_of(excinfo) == "timed out after 0.5s"
    assert llm.available() is False


def test_check_reports_http_error_when_host_is_not_ollama(server: FakeOllama) -> None:
    llm = OllamaBackend(server.url + "/not-ollama", MODEL, timeout=2)
    with pytest.raises(BackendUnavailable) as excinfo:
        llm.check()
    assert reason_of(excinfo) == "HTTP 404: 404 page not found"


# -- chat_json() ---------------------------------------------------------------------------------


def test_chat_json_returns_reply_and_sends_schema(server: FakeOllama) -> None:
    server.reply_json(GOOD_REPLY)
    assert backend(server).chat_json(MESSAGES, SCHEMA) == GOOD_REPLY
    [request] = server.requests
    assert request["format"] == SCHEMA
    assert request["messages"] == MESSAGES
    assert request["model"] == MODEL
    # streamed, so that the reply's limits hold for it too
    assert request["stream"] is True
    assert request["options"] == {"temperature": 0, "num_ctx": Limits().num_ctx}


def test_chat_json_uses_default_reply_when_script_is_empty(server: FakeOllama) -> None:
    server.default = lambda request: GOOD_REPLY | {"query": request["messages"][-1]["content"]}
    reply = backend(server).chat_json(MESSAGES, SCHEMA)
    assert reply["query"] == "and its license?"


def test_chat_json_missing_fields(server: FakeOllama) -> None:
    server.reply_json({"query": "x"})
    with pytest.raises(BackendUnavailable) as excinfo:
        backend(server).chat_json(MESSAGES, SCHEMA)
    assert reason_of(excinfo) == "reply missing fields: follow_up, keywords"


@pytest.mark.parametrize(
    ("field", "value", "reason"),
    [
        ("follow_up", "yes", "field follow_up is not a boolean"),
        ("keywords", "license", "field keywords is not an array"),
        ("query", 3, "field query is not a string"),
        ("query", None, "field query is not a string"),
    ],
)
def test_chat_json_wrong_types(server: FakeOllama, field: str, value: object, reason: str) -> None:
    server.reply_json(GOOD_REPLY | {field: value})
    with pytest.raises(BackendUnavailable) as excinfo:
        backend(server).chat_json(MESSAGES, SCHEMA)
    assert reason_of(excinfo) == reason


@pytest.mark.parametrize(
    ("script", "reason"),
    [
        (lambda s: s.garbage("not json at all"), "invalid JSON in reply"),
        (lambda s: s.reply(""), "invalid JSON in reply"),
        (lambda s: s.reply_json(["a", "b"]), "reply is not a JSON object"),
        (lambda s: s.fail(500, "boom"), "HTTP 500: boom"),
        (lambda s: s.fail(503, "server busy\nretry later"), "HTTP 503: server busy"),
    ],
    ids=["garbage", "empty", "not-object", "http-500", "multiline-error"],
)
def test_chat_json_bad_replies(
    server: FakeOllama, script: Callable[[FakeOllama], None], reason: str
) -> None:
    script(server)
    with pytest.raises(BackendUnavailable) as excinfo:
        backend(server).chat_json(MESSAGES, SCHEMA)
    assert reason_of(excinfo) == reason


def test_chat_json_unknown_model(server: FakeOllama) -> None:
    with pytest.raises(BackendUnavailable) as excinfo:
        backend(server, "mistral").chat_json(MESSAGES, SCHEMA)
    assert reason_of(excinfo) == "model 'mistral' not found"


def test_chat_json_times_out(server: FakeOllama) -> None:
    server.slow(3, then=GOOD_REPLY)
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as excinfo:
        backend(server, timeout=0.5).chat_json(MESSAGES, SCHEMA)
    assert time.monotonic() - started < 2
    assert reason_of(excinfo) == "timed out after 0.5s"


def test_slow_reply_within_timeout_still_arrives(server: FakeOllama) -> None:
    server.slow(0.2, then=GOOD_REPLY)
    assert backend(server, timeout=2).chat_json(MESSAGES, SCHEMA) == GOOD_REPLY


@pytest.mark.parametrize("call", ["chat_json", "chat_stream"])
def test_connection_refused(call: str) -> None:
    url = free_port_url()
    llm = OllamaBackend(url, MODEL, timeout=2)
    with pytest.raises(BackendUnavailable) as excinfo:
        if call == "chat_json":
            llm.chat_json(MESSAGES, SCHEMA)
        else:
            list(llm.chat_stream(MESSAGES))
    assert reason_of(excinfo) == f"connection refused at {url}"


# -- chat_stream() -------------------------------------------------------------------------------


def test_chat_stream_yields_pieces_in_order(server: FakeOllama) -> None:
    server.stream(["The ", "license ", "is MIT."])
    assert list(backend(server).chat_stream(MESSAGES)) == ["The ", "license ", "is MIT."]
    [request] = server.requests
    assert request["stream"] is True
    assert request["messages"] == MESSAGES
    assert "format" not in request


def test_chat_stream_is_incremental(server: FakeOllama) -> None:
    server.stream(["a", "b", "c", "d"], delay=0.3)
    received_at = []
    pieces = []
    for piece in backend(server).chat_stream(MESSAGES):
        received_at.append(time.monotonic())
        pieces.append(piece)
    assert pieces == ["a", "b", "c", "d"]
    last_sent = server.sent_at[-1]
    assert received_at[0] < last_sent - 0.5  # the first piece was in hand long before the last left


def test_chat_stream_of_plain_content_is_one_piece(server: FakeOllama) -> None:
    server.reply("whole answer")
    assert list(backend(server).chat_stream(MESSAGES)) == ["whole answer"]


def test_chat_stream_without_content_yields_nothing(server: FakeOllama) -> None:
    server.stream([])
    assert list(backend(server).chat_stream(MESSAGES)) == []


def test_chat_stream_error_mid_stream(server: FakeOllama) -> None:
    server.stream(["first ", "second "], error="model runner crashed")
    received = []
    with pytest.raises(BackendUnavailable) as excinfo:
        for piece in backend(server).chat_stream(MESSAGES):
            received.append(piece)
    assert received == ["first ", "second "]
    assert reason_of(excinfo) == "model runner crashed"


def test_chat_stream_times_out_mid_stream(server: FakeOllama) -> None:
    server.stream(["first ", "never"], delay=3)
    received = []
    started = time.monotonic()
    with pytest.raises(BackendUnavailable) as excinfo:
        for piece in backend(server, timeout=0.5).chat_stream(MESSAGES):
            received.append(piece)
    assert time.monotonic() - started < 2
    assert received == ["first "]
    assert reason_of(excinfo) == "timed out after 0.5s"


def test_chat_stream_http_500(server: FakeOllama) -> None:
    server.fail(500, "boom")
    received = []
    with pytest.raises(BackendUnavailable) as excinfo:
        for piece in backend(server).chat_stream(MESSAGES):
            received.append(piece)
    assert received == []
    assert reason_of(excinfo) == "HTTP 500: boom"


def test_chat_stream_unknown_model(server: FakeOllama) -> None:
    with pytest.raises(BackendUnavailable) as excinfo:
        list(backend(server, "mistral").chat_stream(MESSAGES))
    assert reason_of(excinfo) == "model 'mistral' not found"
