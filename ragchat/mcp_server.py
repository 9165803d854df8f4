"""`ragchat mcp`: the library served over stdio with the official MCP SDK, so an agent can search
it and ask questions with ragchat's follow-up handling (a second `ask` in the same session is read
against the first). Read-only unless `allow_write` (then `ingest` and `remove` tools too).

The tools are coroutines that call ragchat directly: they run one at a time on the server's own
thread, which holds the SQLite connection (a worker thread could not use it)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import catalog
from .errors import RagchatError
from .search.hybrid import SearchRequest
from .search.hybrid import search as run_search
from .store import library, sessions

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from .app import App
    from .conversation.models import Lineage, RetrievedChunk
    from .conversation.turn import Conversation

MAX_K = 50  # passages one `search` call returns at most
PASSAGE_CHARS = 1500  # of each passage's text in a result (`show` gives a whole section)

INSTRUCTIONS = (
    "Search and ask questions about the user's own documents (a ragchat library). `search` "
    "returns ranked passages; `ask` answers with sources and understands follow-ups within a "
    "session; `show` reads a passage's whole section; `documents` lists what is in the library."
)


class LibraryTools:
    """What the tools do, without the protocol (tested directly too)."""

    def __init__(self, app: App) -> None:
        self.app = app
        self._conversations: dict[str, Conversation] = {}
        self._notices: list[str] = []

    def search(self, query: str, collections: list[str] | None = None, k: int = 8) -> dict:
        query = " ".join(query.split())
        if not query:
            raise RagchatError("empty query: say what to look for")
        within = catalog.scope_of(self.app.db, collections or [])
        request = SearchRequest(query, query, k=max(1, min(k, MAX_K)), within=within)
        hits = run_search(self.app.db, self.app.embedder, self.app.settings, request)
        return {
            "query": query,
            "collections": list(within.names) if within else [],
            "results": [
                {
                    "rank": hit.rank,
                    "chunk_id": hit.chunk.id,
                    "document": hit.chunk.path,
                    "collection": hit.chunk.collection,
                    "absolute_path": hit.chunk.source,
                    "title": hit.chunk.title or "",
                    "section": hit.chunk.heading,
                    "pages": _pages(hit.chunk.page_start, hit.chunk.page_end),
                    "score": round(hit.score, 4),
                    "similarity": None if hit.similarity is None else round(hit.similarity, 4),
                    "text": hit.chunk.text[:PASSAGE_CHARS],
                }
                for hit in hits
            ],
        }

    def ask(
        self, question: str, session: str = "mcp", collections: list[str] | None = None
    ) -> dict:
        sessions.check_session_name(session)
        if collections is not None:
            catalog.set_session_scope(self.app.db, session, collections)
        conversation = self._conversations.get(session)
        if conversation is None:
            conversation = self.app.conversation(session, on_notice=self._notices.append)
            self._conversations[session] = conversation
        self._notices.clear()
        result = conversation.ask(question)
        lineage = result.lineage
        return {
            "session": session,
            "turn": lineage.turn,
            "answer": result.answer,
            "not_covered": lineage.weak,
            "understood_as": _understood(lineage),
            "sources": [_source(c) for c in (lineage.used_chunks or list(lineage.chunks))],
            "notices": [*lineage.notices, *self._notices],
        }

    def documents(self, collections: list[str] | None = None) -> dict:
        rows = catalog.documents(self.app.db, collections or [])
        return {
            "documents": [row.to_dict() for row in rows],
            "collections": [c.name for c in library.collections(self.app.db)],
        }

    def show(self, chunk_id: int) -> dict:
        found = library.section(self.app.db, chunk_id) if 0 < chunk_id < 2**63 else None
        if found is None:
            raise RagchatError(f"no chunk {chunk_id} in the library")
        return {
            "chunk_id": chunk_id,
            "document": found.path,
            "title": found.title,
            "section": found.heading,
            "pages": _pages(found.page_start, found.page_end),
            "text": found.text,
        }

    def ingest(self, paths: list[str], name: str | None = None) -> dict:
        from .ingest.pipeline import ingest  # here: a server that only reads loads no parsers

        report = ingest(
            self.app.db,
            self.app.settings,
            [Path(p).expanduser() for p in paths],
            lambda: self.app.embedder,
            name=name,
        )
        return {
            "added": report.added,
            "updated": [*report.updated, *report.reparsed],
            "unchanged": len(report.unchanged),
            "skipped": [{"path": p, "reason": r} for p, r in report.skipped],
        }

    def remove(self, patterns: list[str]) -> dict:
        done = catalog.remove_documents(self.app.db, patterns)
        return {"removed": done.removed, "chunks": done.chunks}


def _pages(start: int | None, end: int | None) -> list[int] | None:
    return None if start is None else [start, end if end is not None else start]


def _understood(lineage: Lineage) -> dict[str, Any]:
    r = lineage.reformulation
    return {
        "query": r.leading_query,
        "keyword_query": r.keyword_query,
        "is_follow_up": r.is_follow_up,
        "topic_shift": r.topic_shift,
        "reasoning": r.reasoning,
        "plan": lineage.plan,
        "anchored_on": list(lineage.anchor_documents),
        "collections": list(lineage.scope),
    }


def _source(chunk: RetrievedChunk) -> dict[str, Any]:
    return {
        "number": chunk.rank,
        "chunk_id": chunk.chunk_id,
        "document": chunk.document,
        "collection": chunk.collection,
        "absolute_path": chunk.absolute_path,
        "title": chunk.title,
        "section": chunk.heading,
        "pages": _pages(chunk.page_start, chunk.page_end),
        "cited": chunk.used,
    }


def build_server(app: App, *, allow_write: bool = False) -> MCPServer:
    """The MCP server over one library; `allow_write` adds `ingest` and `remove`."""
    # here: the MCP SDK loads only for `ragchat mcp`
    from mcp.server.mcpserver import MCPServer

    tools = LibraryTools(app)
    server: MCPServer = MCPServer("ragchat", instructions=INSTRUCTIONS)

    @server.tool()
    async def search(query: str, collections: list[str] | None = None, k: int = 8) -> dict:
        """Ranked passages of the library for a query (hybrid: meaning and keywords), each with
        its document, collection, section and score. `collections` limits the search to those
        (see `documents`)."""
        return tools.search(query, collections, k)

    @server.tool()
    async def ask(
        question: str, session: str = "mcp", collections: list[str] | None = None
    ) -> dict:
        """Answer a question from the library, with its sources and how it was understood. Ask
        follow-ups in the same `session`: "and how is it configured?" is read against the earlier
        questions. `collections` scopes the session to those collections (`["all"]`: every one)."""
        return tools.ask(question, session, collections)

    @server.tool()
    async def documents(collections: list[str] | None = None) -> dict:
        """The library's documents (collection, path, title, chunks, pages, when ingested) and its
        collections."""
        return tools.documents(collections)

    @server.tool()
    async def show(chunk_id: int) -> dict:
        """The whole section a passage (by its chunk_id from `search` or `ask`) belongs to."""
        return tools.show(chunk_id)

    if allow_write:

        @server.tool()
        async def ingest(paths: list[str], name: str | None = None) -> dict:
            """Ingest files or folders into the library (each folder a collection; `name` names
            one folder's collection)."""
            return tools.ingest(paths, name)

        @server.tool()
        async def remove(patterns: list[str]) -> dict:
            """Remove documents by path, collection:path or glob."""
            return tools.remove(patterns)

    return server
