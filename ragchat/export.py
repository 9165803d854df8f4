"""A session as Markdown: each question, its answer and the sources it stood on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .text import printable, source_label

if TYPE_CHECKING:
    from .app import AnsweredTurn, App
    from .conversation.models import RetrievedChunk


def _quote_free(text: str) -> str:
    """One line of plain text for a heading or a list item (no Markdown line breaks inside)."""
    return " ".join(text.split())


def source_line(chunk: RetrievedChunk) -> str:
    """`- [n] `path` p. 12 › Section › Subsection`."""
    where = f"`{chunk.document}`" + source_label("", chunk.page_start, chunk.page_end)
    if chunk.heading:
        where += f" › {_quote_free(chunk.heading.replace(' > ', ' › '))}"
    return f"- [{chunk.rank}] {where}"


def _sources(turn: AnsweredTurn) -> list[str]:
    """The chunks the answer stood on (all retrieved ones when it stood on none)."""
    chunks = [c for c in turn.lineage.chunks if c.used] or list(turn.lineage.chunks)
    return [source_line(c) for c in chunks]


def session_markdown(app: App, session: str) -> str:
    """The whole session, without terminal control characters (it goes to a terminal or a file
    that will be `cat`); a missing session or one without answers is a SessionError."""
    app.turn(session)  # a missing session, or one without answers, is a clear SessionError
    turns = app.turns(session)
    parts = [f"# Session {_quote_free(session)}", ""]
    for turn in turns:
        parts += [f"## {turn.number}. {_quote_free(turn.lineage.question)}", "", turn.answer.strip(), ""]
        sources = _sources(turn)
        if sources:
            parts += ["**Sources**", "", *sources, ""]
    return printable("\n".join(parts).rstrip("\n") + "\n")
