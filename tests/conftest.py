"""Shared fixtures: a clean environment per test, the real embedding model, and the sample
library ingested once per run (tests that change a library get their own copy)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from helpers import MODEL_CACHE, SAMPLE_DOCS, settings_for
from ollama_server import free_port_url
from typer.testing import CliRunner

from ragchat.config import Settings
from ragchat.embed import FastEmbedder, load_embedder
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """No user config, no RAGCHAT_* from the caller, Ollama pointed at a port
    where nothing listens."""
    for key in list(os.environ):
        if key.startswith("RAGCHAT_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg-config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))  # the per-user library
    from ragchat.config import user_data_dir

    # never the real user's library, whatever the platform (macOS and Windows ignore XDG_DATA_HOME)
    assert user_data_dir().is_relative_to(tmp_path), user_data_dir()
    monkeypatch.setenv("RAGCHAT_MODEL_CACHE", MODEL_CACHE)
    monkeypatch.setenv("RAGCHAT_OLLAMA_HOST", free_port_url())
    monkeypatch.setenv("RAGCHAT_OLLAMA_TIMEOUT", "3")
    monkeypatch.chdir(tmp_path)
    yield


@pytest.fixture(scope="session")
def embedder() -> FastEmbedder:
    return load_embedder(Settings(model_cache=MODEL_CACHE))


@pytest.fixture(scope="session")
def sample_library(tmp_path_factory: pytest.TempPathFactory, embedder: FastEmbedder) -> Path:
    """sample_docs/ ingested once; treat as read-only (use `library_db` to change things)."""
    path = tmp_path_factory.mktemp("sample") / "sample.db"
    db = open_db(path)
    ingest(db, settings_for(path), [SAMPLE_DOCS], lambda: embedder)
    db.close()
    return path


@pytest.fixture
def library_db(sample_library: Path, tmp_path: Path) -> Path:
    """A private copy of the sample library, free to change."""
    target = tmp_path / "library" / "ragchat.db"
    target.parent.mkdir()
    source = open_db(sample_library)
    source.execute(f"VACUUM INTO '{target}'")
    source.close()
    return target


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
