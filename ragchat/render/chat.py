"""The chat's own lines: the banner, a piped question echoed, the resumed session, the scope, the
session switched, the help, goodbye."""

from __future__ import annotations

from .. import render
from ..text import printable, snippet
from . import ECHO_LIMIT, escape, width
from .turns import preview


def echo(session: str, text: str) -> None:
    """A question read from a pipe, echoed as if typed at the prompt (the output reads as a
    transcript)."""
    shown = snippet(text, ECHO_LIMIT)
    render.console.print(f"[bold]{escape(session)}>[/] {escape(shown)}", soft_wrap=True)


def title(session: str, documents: int, chunks: int) -> None:
    render.console.print(
        f"[bold]ragchat[/] · session [bold]{escape(session)}[/] · "
        f"{documents} documents, {chunks} chunks"
    )


def answers_by(problem: str | None, *, chosen: bool) -> None:
    """Who answers: Ollama, or extractive answers and why (`chosen`: the user turned Ollama off,
    nothing to warn about)."""
    if problem is None:
        mode = "Ollama answers"
    elif chosen:
        mode = "Extractive answers"
    else:
        mode = f"{problem}: heuristic reformulation, extractive answers"
    render.console.print(f"[dim]{escape(mode)}. /help for commands.[/]")


def scope(names: list[str], *, hint: bool = False) -> None:
    """The collections the session's questions search (`hint`: and how to search every one)."""
    shown = ", ".join(names) if names else "all collections"
    more = " (/in all: every collection)" if hint else ""
    render.console.print(
        f"[dim]questions search {escape(printable(shown))}{more}[/]", soft_wrap=True
    )


def resumed(turns: int, question: str, reply: str | None) -> None:
    """A session resumed: how many turns it had, its last question and the start of the answer."""
    render.console.print(f"[dim]resuming: {turns} earlier turn(s); the last was:[/]")
    render.console.print(f"[dim]> {escape(snippet(question, ECHO_LIMIT))}[/]", width=width())
    if reply is not None:
        render.console.print(preview(reply, 400), style="dim", width=width())


def switched(session: str) -> None:
    render.console.print(f"[bold]session {escape(session)}[/]")


def help_text(text: str) -> None:
    render.console.print(text, markup=False)


def clear() -> None:
    render.console.clear()


def bye() -> None:
    render.console.print("[dim]bye[/]")
