"""A session as Markdown: each question, its answer and the sources it stood on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .store import library

if TYPE_CHECKING:
    from .app import AnsweredTurn, App
    from .conversation.models import RetrievedChunk


def _quote_free(text: str) -> str:
    """One line of plain text for a heading or a list item (no Markdown line breaks inside)."""
    return " ".join(text.split())


def source_line(chunk: RetrievedChunk, page: int | None) -> str:
    where = f"`{chunk.document}`"
    if chunk.heading:
        where += f" › {_quote_free(chunk.heading.replace(' > ', ' › '))}"
    if page is not None:
        where += f", page {page}"
    return f"- [{chunk.rank}] {where}"


def _sources(app: App, turn: AnsweredTurn) -> list[str]:
    chunks = [c for c in turn.lineage.chunks if c.used] or list(turn.lineage.chunks)
    stored = library.chunks_by_ids(app.db, [c.chunk_id for c in chunks])
    return [source_line(c, getattr(stored.get(c.chunk_id), "page", None)) for c in chunks]


def session_markdown(app: App, session: str) -> str:
    """The whole session; a missing session or one without answers is a SessionError."""
    app.turn(session)  # a missing session, or one without answers, is a clear SessionError
    turns = app.turns(session)
    parts = [f"# Session {_quote_free(session)}", ""]
    for turn in turns:
        parts += [f"## {turn.number}. {_quote_free(turn.lineage.question)}", "", turn.answer.strip(), ""]
        sources = _sources(app, turn)
        if sources:
            parts += ["**Sources**", "", *sources, ""]
    return "\n".join(parts).rstrip("\n") + "\n"
