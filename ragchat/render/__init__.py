"""Everything rich: the console, untrusted text made inert, widths, one-line messages and the
places (`document › section`) every view shows. Core modules never import this package.

The views live in its modules, each loaded when first used: `progress` (ingest and eval bars),
`listings` (the library: ingest summaries, search hits, documents, collections, sessions, a
section), `turns` (a turn: the streamed answer, the sources panel, passages, history), `trace`
(inspect), `evaluation` (eval tables), `chat` (the chat's own lines). They print through
`render.console`, looked up at each call, so a caller (or a test) that swaps it is obeyed
everywhere; `render.NAME` reaches any view's NAME."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from importlib import import_module
from typing import Any

from rich.console import Console, ConsoleOptions, RenderableType
from rich.markup import escape as escape_markup
from rich.segment import Segment
from rich.text import Text

from ..text import inert_char, printable, source_label

VIEWS = ("turns", "listings", "trace", "progress", "evaluation", "chat")


def __getattr__(name: str) -> Any:
    """A view's function or class by its name (`render.turn`): the views are imported in order,
    on first use, until one has it."""
    for view in VIEWS:
        module = import_module(f"{__name__}.{view}")
        if name in vars(module):
            return vars(module)[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def escape(text: str) -> str:
    """How every untrusted value (file name, heading, chunk text, session name, model output, error)
    enters rich markup: made printable first (no terminal control), then markup-escaped."""
    return escape_markup(printable(text))


class PrintableConsole(Console):
    """A safety net under `escape`: text segments are made printable once laid out (rich's own
    styles and cursor moves are not text segments, so they pass)."""

    def render(
        self, renderable: RenderableType, options: ConsoleOptions | None = None
    ) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or segment.text.isprintable():
                yield segment
            else:
                yield Segment(printable(segment.text), segment.style, segment.control)


console = PrintableConsole(highlight=False)
err_console = PrintableConsole(stderr=True, highlight=False)


MAX_WIDTH = 100  # tables and panels stop growing here: readable, and the same at 120 or 200 columns


def width() -> int:
    return min(console.width, MAX_WIDTH)


def show(renderable: object) -> None:
    """Print a table or panel at most MAX_WIDTH columns wide."""
    console.print(renderable, width=width())


def error(message: str) -> None:
    # soft_wrap: the error stays one line however narrow (or piped) the terminal is
    err_console.print(f"[bold red]Error:[/] {escape(message)}", soft_wrap=True)


def notice(message: str) -> None:
    console.print(f"[yellow]! {escape(message)}[/]", soft_wrap=True)


def said(message: str) -> None:
    """What a command did, in one line ("Renamed session a to b.")."""
    console.print(escape(message), soft_wrap=True)


def rank_cell(value: int | None) -> str:
    return "-" if value is None else str(value)


def short_path(path: str, limit: int) -> str:
    """A path shortened from the left, whole folders at a time: `…/advanced/authentication.md`."""
    if len(path) <= limit:
        return path
    parts = path.split("/")
    for start in range(1, len(parts)):
        tail = "…/" + "/".join(parts[start:])
        if len(tail) <= limit:
            return tail
    return "…" + path[-(limit - 1) :] if limit > 1 else "…"


def place(
    path: str,
    heading: str,
    limit: int,
    page_start: int | None = None,
    page_end: int | None = None,
    title: str = "",
) -> Text:
    """`document p. N · title › section` for a cell `limit` wide: the path shortened from the left
    so that it and its pages fit one line, the title and section after it (wrapping at spaces)."""
    pages = source_label("", page_start, page_end)  # " p. 12", " pp. 12-13" or ""
    text = Text(printable(short_path(path, max(limit - len(pages), 8)) + pages))
    if title and title.strip().lower() != (heading or "").strip().lower():
        text.append(printable(f" · {title}"))
    if heading:
        text.append(printable(f" › {heading}"), style="dim")
    return text


# json.dumps escapes C0 controls (ESC becomes \u001b) but, with ensure_ascii=False, not DEL or C1
_JSON_UNPRINTABLE = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def json_lines(rows: Iterable[dict]) -> None:
    """One JSON object a line; the original text, every control and invisible formatting character
    escaped; a number that is not finite is null (NaN is not JSON)."""
    for row in rows:
        line = json.dumps(_finite(row), ensure_ascii=False).translate(_JSON_UNPRINTABLE)
        if not line.isprintable():
            line = "".join(
                json.dumps(c)[1:-1] if not c.isprintable() and inert_char(c) else c for c in line
            )
        print(line)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


ECHO_LIMIT = 160  # a question or query echoed back is shortened to this, with an ellipsis


def soft_wrap() -> bool:
    """Soft wrap (one long line) when piped, so output stays greppable; on a terminal rich wraps at
    spaces, where the terminal itself would cut words at its edge."""
    return not console.is_terminal
