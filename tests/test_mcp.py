"""`ragchat mcp`: the server driven by the MCP SDK's own client over stdio (one server process for
the module): its tools, a search, two asks in one session (the second read as a follow-up), and
that nothing writes without --allow-write."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from helpers import MODEL_CACHE, SAMPLE_DOCS, settings_for
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from ragchat.embed import load_embedder
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def mcp_library(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("mcp") / "ragchat.db"
    settings = settings_for(path)
    db = open_db(path)
    ingest(db, settings, [SAMPLE_DOCS], lambda: load_embedder(settings))
    db.close()
    return path


def _server(db: Path) -> StdioServerParameters:
    env = {
        "PYTHONPATH": str(ROOT),  # this tree's ragchat, whatever is installed
        "RAGCHAT_MODEL_CACHE": MODEL_CACHE,
        "RAGCHAT_OLLAMA": "off",
        "XDG_CONFIG_HOME": str(db.parent / "xdg-config"),
        "XDG_DATA_HOME": str(db.parent / "xdg-data"),
    }
    command = [sys.executable, "-c", "from ragchat.cli import main; main()", "mcp", "--db", str(db)]
    return StdioServerParameters(command=command[0], args=command[1:], env=env, cwd=db.parent)


def _data(result) -> dict:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data
    return json.loads(result.content[0].text)


@pytest.fixture(scope="module")
def calls(mcp_library: Path) -> Iterator[dict]:
    """One server process for the module: every call the tests look at, made in one go."""
    found: dict = {}

    async def session() -> None:
        async with stdio_client(_server(mcp_library)) as (read, write):
            async with ClientSession(read, write) as client:
                await client.initialize()
                found["tools"] = sorted(t.name for t in (await client.list_tools()).tools)
                found["search"] = _data(
                    await client.call_tool("search", {"query": "who may witness a will", "k": 3})
                )
                found["first"] = _data(
                    await client.call_tool(
                        "ask",
                        {"question": "What makes a will legally binding in South Africa?",
                         "session": "agent"},
                    )
                )  # fmt: skip
                found["second"] = _data(
                    await client.call_tool(
                        "ask", {"question": "what age must a witness be?", "session": "agent"}
                    )
                )
                chunk = found["search"]["results"][0]["chunk_id"]
                found["show"] = _data(await client.call_tool("show", {"chunk_id": chunk}))
                found["documents"] = _data(await client.call_tool("documents", {}))
                found["bad"] = await client.call_tool("show", {"chunk_id": 10**30})

    anyio.run(session)
    yield found


def test_tools_are_read_only_by_default(calls: dict) -> None:
    assert calls["tools"] == ["ask", "documents", "search", "show"]


def test_search_returns_ranked_passages(calls: dict) -> None:
    results = calls["search"]["results"]
    assert [r["rank"] for r in results] == [1, 2, 3]
    assert results[0]["document"] == "south_africa_wills.md"
    assert {"section", "score", "collection", "chunk_id", "text"} <= set(results[0])
    assert results[0]["collection"] == "sample_docs"


def test_a_second_ask_in_a_session_is_read_as_a_follow_up(calls: dict) -> None:
    first, second = calls["first"], calls["second"]
    assert first["understood_as"]["is_follow_up"] is False and first["turn"] == 1
    assert second["turn"] == 2 and second["understood_as"]["is_follow_up"] is True
    assert "south_africa_wills.md" in second["understood_as"]["anchored_on"]
    assert "14" in second["answer"]
    assert second["sources"] and second["sources"][0]["document"] == "south_africa_wills.md"


def test_show_and_documents(calls: dict) -> None:
    assert calls["show"]["document"] == "south_africa_wills.md" and calls["show"]["text"]
    paths = [d["path"] for d in calls["documents"]["documents"]]
    assert "south_africa_wills.md" in paths and calls["documents"]["collections"]
    assert calls["bad"].is_error


def test_allow_write_adds_ingest_and_remove(mcp_library: Path) -> None:
    from ragchat.app import App
    from ragchat.mcp_server import build_server

    app = App(settings_for(mcp_library))

    async def names(allow: bool) -> list[str]:
        return sorted(t.name for t in await build_server(app, allow_write=allow).list_tools())

    assert anyio.run(names, True) == ["ask", "documents", "ingest", "remove", "search", "show"]
    assert anyio.run(names, False) == ["ask", "documents", "search", "show"]
    app.close()
