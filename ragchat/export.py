"""A session as Markdown: each question, its answer and the sources it stood on."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import RagchatError
from .text import printable, source_label

if TYPE_CHECKING:
    from .app import AnsweredTurn, App
    from .conversation.models import RetrievedChunk


UNANSWERED_MARK = "*(unanswered: the answer never came; the turn was cancelled or failed)*"


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
    app.turn(session)  # a missing session, or one without turns, is a clear SessionError
    return turns_markdown(session, app.turns(session))


def turns_markdown(session: str, turns: list[AnsweredTurn]) -> str:
    parts = [f"# Session {_quote_free(session)}", ""]
    for turn in turns:
        answer = turn.answer.strip()
        if not turn.answered:  # what was shown, if anything, then the mark
            answer = f"{answer}\n\n{UNANSWERED_MARK}" if answer else UNANSWERED_MARK
        parts += [f"## {turn.number}. {_quote_free(turn.lineage.question)}", "", answer, ""]
        sources = _sources(turn)
        if sources:
            parts += ["**Sources**", "", *sources, ""]
    return printable("\n".join(parts).rstrip("\n") + "\n")


def write_private(path: Path, text: str, *, force: bool = False) -> None:
    """Write a transcript readable by its owner only (0600, whatever the umask: it holds the
    history the database keeps private). Without `force` an existing name (a dangling symlink
    too) is refused; with it the name is replaced by a new file, so a symlink there is
    replaced, never followed."""
    data = text.encode("utf-8")
    try:
        if force:
            _replace_private(path, data)
        else:
            _create_private(path, data)
    except FileExistsError:
        raise RagchatError(f"{path} exists; add --force to overwrite it") from None
    except OSError as exc:
        raise RagchatError(f"cannot write {path}: {exc.strerror or exc}") from None


def _create_private(path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    handle = os.open(path, flags, 0o600)  # a umask can only take bits away from 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(path)
        raise


def _replace_private(path: Path, data: bytes) -> None:
    if path.is_dir():
        raise IsADirectoryError(21, "Is a directory", str(path))
    handle, staging = tempfile.mkstemp(prefix=".ragchat-export-", dir=path.parent)  # 0600
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(staging, path)  # the name now points at the new file; a symlink there is gone
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(staging)
        raise
