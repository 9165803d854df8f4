"""The tests' name for the project's Ollama-protocol server (ragchat/ollama_server.py)."""

from ragchat.ollama_server import (
    Content,
    Failure,
    FakeOllama,
    Redirect,
    Slow,
    Stream,
    Trickle,
    free_port_url,
)

__all__ = [
    "Content",
    "Failure",
    "FakeOllama",
    "Redirect",
    "Slow",
    "Stream",
    "Trickle",
    "free_port_url",
]
