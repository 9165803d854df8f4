"""A model's reply is bounded whatever the server does (issue 29.4, 31.1): separate connect,
first-token and between-token waits, a total time and a size cap, no redirect followed; and what a
request carries (num_ctx, keep_alive). Through the real ollama client and the project's
Ollama-protocol server; no assertion on elapsed time."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from ollama_server import FakeOllama, Redirect, Slow, Stream, Trickle

from ragchat.config import Settings
from ragchat.errors import BackendUnavailable, ReplyCut
from ragchat.llm import THINK_CLOSE, THINK_OPEN, Limits, OllamaBackend

MODEL = "llama3.2"
MESSAGES = [{"role": "user", "content": "How do I print a table?"}]


@pytest.fixture
def server() -> Iterator[FakeOllama]:
    with FakeOllama(model=MODEL) as fake:
        yield fake


def limited(server: FakeOllama, **limits: float) -> OllamaBackend:
    return OllamaBackend(server.url, MODEL, Limits(**limits))  # type: ignore[arg-type]


def test_default_settings_wait_for_a_model_that_loads() -> None:
    """With the default settings a cold model (10-60 s on a laptop, minutes on a CPU) is waited
    for: the first-token wait is the long one, the between-token wait stays short."""
    settings = Settings()
    assert settings.ollama_load_timeout >= 120
    assert settings.ollama_timeout < settings.ollama_load_timeout
    assert settings.ollama_reply_timeout > settings.ollama_load_timeout


def test_a_first_reply_later_than_the_between_token_wait_still_arrives(
    server: FakeOllama,
) -> None:
    """A server that answers only after loading (no headers until then) is not given up on
    after the between-token wait: the first piece has its own, longer wait (here the load is
    scaled down: 0.6 s against a 0.2 s between-token wait)."""
    server.slow(0.6, then=Stream(("The table ", "prints [1].")))
    backend = limited(server, between=0.2, first_token=30, total=60)
    assert "".join(backend.chat_stream(MESSAGES)) == "The table prints [1]."


def test_a_reply_that_trickles_a_byte_at_a_time_is_stopped_at_the_total_limit(
    server: FakeOllama,
) -> None:
    server.script(Trickle("x" * 400, delay=0.02))  # every read gets a byte: no read times out
    backend = limited(server, between=5, first_token=5, total=0.5)
    with pytest.raises(ReplyCut) as excinfo:
        list(backend.chat_stream(MESSAGES))
    assert excinfo.value.reason == "reply stopped after 0.5s (ollama_reply_timeout)"


def test_a_stream_that_never_ends_is_stopped_and_keeps_what_came(server: FakeOllama) -> None:
    server.script(Stream(("more ",), delay=0.01, endless=True))
    backend = limited(server, between=5, first_token=5, total=0.5)
    received: list[str] = []
    with pytest.raises(ReplyCut):
        for piece in backend.chat_stream(MESSAGES):
            received.append(piece)
    assert received and set(received) == {"more "}


def test_a_huge_reply_is_cut_at_the_size_cap(server: FakeOllama) -> None:
    server.script(Stream(("y" * 1000,) * 50))
    backend = limited(server, max_chars=2500)
    received: list[str] = []
    with pytest.raises(ReplyCut) as excinfo:
        for piece in backend.chat_stream(MESSAGES):
            received.append(piece)
    assert len("".join(received)) == 2500
    assert excinfo.value.reason == "reply cut at 2,500 characters (ollama_reply_chars)"


def test_a_slow_model_listing_is_bounded(server: FakeOllama) -> None:
    server.tags_delay = 30
    backend = limited(server, between=0.3, first_token=60)
    with pytest.raises(BackendUnavailable) as excinfo:
        backend.check()
    assert excinfo.value.reason == "timed out after 0.3s"


def test_a_redirect_is_not_followed(server: FakeOllama) -> None:
    with FakeOllama(model=MODEL) as elsewhere:
        server.script(Redirect(elsewhere.url + "/api/chat"))
        with pytest.raises(BackendUnavailable) as excinfo:
            list(limited(server).chat_stream(MESSAGES))
        assert elsewhere.requests == []  # the prompt was not re-sent to the other host
    assert "redirects elsewhere; not followed" in excinfo.value.reason


def test_every_request_sets_num_ctx_and_keep_alive(server: FakeOllama) -> None:
    server.reply_json({"q": "x"})
    backend = limited(server, num_ctx=6144)
    backend.chat_json(MESSAGES, {"type": "object", "properties": {"q": {"type": "string"}}})
    list(backend.chat_stream(MESSAGES))
    backend.warm()
    asked = [*server.requests, *server.generated]
    assert len(asked) == 3
    assert all(request["options"]["num_ctx"] == 6144 for request in asked)
    assert all(request["keep_alive"] == Limits().keep_alive for request in asked)
    assert server.generated[0]["prompt"] == "" and backend.warmed.is_set()


def test_the_prompt_size_the_server_counted_is_kept(server: FakeOllama) -> None:
    server.prompt_tokens = lambda request: 321
    backend = limited(server)
    list(backend.chat_stream(MESSAGES))
    assert backend.last_prompt_tokens == 321
    assert backend.last_prompt_chars == len(MESSAGES[0]["content"])


def test_a_thinking_models_reasoning_comes_between_think_tags(server: FakeOllama) -> None:
    server.script(Stream(("Use ", "Table [1]."), thinking=("The user ", "wants tables.")))
    text = "".join(limited(server).chat_stream(MESSAGES))
    assert text == f"{THINK_OPEN}The user wants tables.{THINK_CLOSE}Use Table [1]."


def test_the_models_context_length_is_read(server: FakeOllama) -> None:
    server.context_length = 4096
    assert limited(server).context_length() == 4096


def test_a_slow_load_is_waited_for_by_the_warm_up(server: FakeOllama) -> None:
    server.load_delay = 0.5
    backend = limited(server, between=0.1, first_token=30)
    backend.warm()
    assert backend.warmed.is_set() and len(server.generated) == 1


def test_a_slow_first_reply_is_given_up_on_at_the_first_token_limit(server: FakeOllama) -> None:
    server.script(Slow(30))
    with pytest.raises(BackendUnavailable) as excinfo:
        list(limited(server, first_token=0.3, between=5).chat_stream(MESSAGES))
    assert excinfo.value.reason == "timed out after 0.3s"
