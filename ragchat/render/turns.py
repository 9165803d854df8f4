"""A turn on screen: the spinner and the streamed answer, the answer (prose as text, code as
code, a model's reply as Markdown), how the question was understood, the sources panel, a source's
passage, the session's history."""

from __future__ import annotations

import re
import threading
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .. import render
from ..conversation.followup.referents import understood
from ..conversation.models import Lineage, RetrievedChunk, TurnResult
from ..ingest.releases import section_label
from ..text import PrintableStream, printable, snippet
from . import ECHO_LIMIT, escape, place, short_path, show, soft_wrap, width

if TYPE_CHECKING:  # annotations only
    from ..app import AnsweredTurn


class Waiting:
    """A spinner that says what the model is doing ("loading llama3.2 ...", then "thinking ..."),
    on a terminal only; `stop()` (or the first streamed piece) ends it. `loaded` is an event set
    once the model is in memory (a warm-up request answered); None: not known ("waiting for")."""

    def __init__(self, model: str, loaded: Any = None) -> None:
        self._status: Any = None
        self._done = False
        if not render.console.is_terminal:
            return
        warm = loaded is not None and loaded.is_set()
        label = "thinking ..." if warm else f"loading {printable(model)} ..."
        if loaded is None:  # not known whether it is in memory
            label = f"waiting for {printable(model)} ..."
        self._status = render.console.status(label, spinner="dots")
        self._status.start()
        if loaded is not None and not warm:

            def update() -> None:
                loaded.wait()
                if not self._done and self._status is not None:
                    self._status.update("thinking ...")

            threading.Thread(target=update, daemon=True).start()

    def stop(self) -> None:
        self._done = True
        if self._status is not None:
            self._status.stop()
            self._status = None


class StreamPrinter:
    """Prints an answer's streamed pieces as they arrive, printable even when an escape sequence is
    split across pieces; `close()` once the stream has ended. With `markdown` on a terminal, the
    reply shows as rendered Markdown while it streams (its latest lines) and in full once it
    ends; elsewhere (a pipe) it is printed as it comes. `thinking` prints a thinking model's
    reasoning dimmed (only called when the user asked to see it)."""

    def __init__(self, waiting: Waiting | None = None, markdown: bool = False) -> None:
        self._filter = PrintableStream()
        self._wrap = _WordWrap()
        self._waiting = waiting
        self._markdown = markdown and render.console.is_terminal
        self._text = ""
        self._live: Any = None
        self._thought = False

    def __call__(self, piece: str) -> None:
        self._started()
        if self._thought:
            render.console.print()
            self._thought = False
        self._print(self._filter.feed(piece))

    def thinking(self, piece: str) -> None:
        self._started()
        self._thought = True
        render.console.print(printable(piece), end="", style="dim", highlight=False, soft_wrap=True)

    def close(self) -> None:
        self._started()
        self._print(self._filter.flush())
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._markdown:
            if self._text.strip():
                render.console.print(model_markdown(self._text), width=width())
        else:
            self._wrap.finish()

    def _started(self) -> None:
        if self._waiting is not None:
            self._waiting.stop()
            self._waiting = None

    def _print(self, text: str) -> None:
        if not text:
            return
        if not self._markdown:
            self._wrap(text)
            return
        # here: only a streamed answer on a terminal needs it
        from rich.live import Live

        self._text += text
        tail = "\n".join(self._text.splitlines()[-max(render.console.height - 4, 4) :])
        if self._live is None:
            self._live = Live(
                model_markdown(tail), console=render.console, transient=True, refresh_per_second=8
            )
            self._live.start()
        else:
            self._live.update(model_markdown(tail))


def model_markdown(text: str) -> RenderableType:
    """A model's reply as Markdown (lists, emphasis, code blocks as code), its text printable; a
    link shows its address instead of becoming a terminal hyperlink."""
    # here: markdown-it loads through rich only for a reply shown as Markdown
    from rich.markdown import Markdown

    return Markdown(printable(text), code_theme="ansi_dark", hyperlinks=False)


MODEL_MODES = frozenset({"llm", "cut", "cancelled"})  # answers a model wrote (rendered as Markdown)


def understood_as(result: TurnResult) -> str:
    lineage = result.lineage
    if lineage.plan == "reuse":
        label = "reusing the last sources"
    elif lineage.reformulation.goes_on:
        label = "follow-up of the last answer"
    elif lineage.turn <= 1:
        label = "first question of the session"
    else:
        label = "new topic"
    r = lineage.reformulation
    query = r.leading_query
    if label == "new topic" and query == r.semantic_query:
        # the little context a new topic keeps, in case the guess is wrong, is not what the
        # question was understood as: listed, it read as the last topic's words carried over (a
        # model's rewrite, leading, carries none)
        query = understood(query)
    if lineage.correction:
        label = f"a correction: the last question again, {label}"
    return f"understood as: {snippet(query, ECHO_LIMIT)} ({label})"


def _mark(chunk: RetrievedChunk) -> str:
    marks = []
    if chunk.reused:
        marks.append("[magenta]reused[/]")
    elif chunk.anchored:
        marks.append("[cyan]anchored[/]")
    if chunk.used:
        marks.append("[green]cited[/]")
    elif chunk.seen is False:
        marks.append("[dim]not given[/]")  # the model never saw it: it cannot have used it
    return " ".join(marks)


_MARKS_WIDTH = len("anchored cited")


def _panel_title(anchor_paths: list[str], room: int) -> str:
    if not anchor_paths:
        return "Sources"
    title = f"Sources · anchored on {', '.join(anchor_paths)}"
    if len(title) <= room:
        return title
    more = f" +{len(anchor_paths) - 1} more" if len(anchor_paths) > 1 else ""
    head = "Sources · anchored on "
    return head + short_path(anchor_paths[0], max(room - len(head) - len(more), 8)) + more


def sources_panel(
    chunks: list[RetrievedChunk], anchor_paths: list[str], missing: list[str]
) -> Panel:
    """Fixed column widths (only the document › section column takes what is left), so the panel
    looks the same from turn to turn; at most MAX_WIDTH wide."""
    inner = width() - 4
    text_width = inner - 2 - 5 - _MARKS_WIDTH - 6
    table = Table(box=None, pad_edge=False, width=inner)
    table.add_column("#", justify="right", width=2, no_wrap=True)
    table.add_column("document › section", ratio=1)
    table.add_column("score", justify="right", width=5, no_wrap=True)
    table.add_column("", width=_MARKS_WIDTH, no_wrap=True)
    for chunk, shown in zip(chunks, panel_scores(chunks)):
        leaf = section_label(chunk.heading or "")
        table.add_row(
            str(chunk.rank),
            place(chunk.document, leaf, text_width, chunk.page_start, chunk.page_end, chunk.title),
            f"{shown:.2f}",
            _mark(chunk),
        )
    parts: list = [table] if chunks else [Text("no sources found", style="dim")]
    for path in missing:
        parts.append(
            Text(
                printable(
                    f"anchor gone: {short_path(path, inner - 50)} (removed or changed since the "
                    "last turn)"
                ),
                style="yellow",
            )
        )
    return Panel(
        Group(*parts),
        title=escape(_panel_title(anchor_paths, inner - 4)),
        title_align="left",
        border_style="blue",
        width=width(),
    )


def panel_scores(chunks: list[RetrievedChunk]) -> list[float]:
    """Scores as the panel shows them: in 0..1 (the fused score without the anchoring boost, which
    can pass 1) and never rising down the ranks (a reused or protected chunk placed above a
    better-scored one shows the lower score; a chunk brought in beside another in its section shows
    that one's score). The raw fused scores stay in `inspect`."""
    shown: list[float] = []
    ceiling, by_id = 1.0, dict[int, float]()
    for chunk in chunks:
        if chunk.beside is not None and chunk.beside in by_id:
            shown.append(by_id[chunk.beside])
            continue
        ceiling = min(ceiling, max(min(chunk.rrf if chunk.rrf else chunk.score, 1.0), 0.0))
        shown.append(ceiling)
        by_id[chunk.chunk_id] = ceiling
    return shown


class _WordWrap:
    """Streamed answer text, wrapped at spaces on a terminal (the terminal would cut words at its
    edge); `finish` writes the word still held back and starts over."""

    def __init__(self) -> None:
        self.column = 0
        self.held = ""

    def __call__(self, piece: str) -> None:
        if not render.console.is_terminal:
            self._write(piece)
            return
        self.held += piece
        while match := re.search(r"\s", self.held):
            word, space, self.held = (
                self.held[: match.start()],
                self.held[match.start()],
                self.held[match.end() :],
            )
            self._word(word)
            if space == "\n":
                self._write("\n")
                self.column = 0
            elif self.column < render.console.width:
                self._write(space)
                self.column += 1

    def _word(self, word: str) -> None:
        if word and self.column and self.column + len(word) > render.console.width:
            self._write("\n")
            self.column = 0
        self._write(word)
        self.column += len(word)

    def finish(self) -> None:
        self._word(self.held)
        self.held, self.column = "", 0

    @staticmethod
    def _write(text: str) -> None:
        render.console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


def preview(text: str, limit: int) -> Text:
    """The start of an answer for the resume line: its own line breaks kept (bullets
    stay on their lines), spaces inside a line collapsed, cut at a word with an ellipsis
    past `limit` characters."""
    kept: list[str] = []
    used = 0
    for line in text.splitlines():
        flat = " ".join(line.split())
        if not flat:
            continue
        if used + len(flat) > limit:
            kept.append(snippet(flat, max(limit - used, 20)))
            if not kept[-1].endswith("…"):
                kept[-1] += " …"
            break
        kept.append(flat)
        used += len(flat)
    return Text(printable("\n".join(kept)))


def cited_sentences(answer: str, number: int) -> list[str]:
    """The parts of an answer that cite [number], without the markers and list bullets."""
    found = []
    for segment, markers in re.findall(r"([^\[\]]+?)\s*((?:\[\d+\])+)", answer):
        if f"[{number}]" in markers:
            sentence = re.sub(r"^\s*(?:[-*•]|\d+\.)\s+", "", segment.strip()).strip()
            if len(sentence) > 8:
                found.append(sentence)
    return found


def passage(chunk: RetrievedChunk, text: str, answer: str) -> None:
    """Source N of the last answer: where it is (document, pages when known, heading path) and its
    text, the sentences the answer took from it highlighted."""
    where = place(
        chunk.document,
        chunk.heading.replace(" > ", " › "),
        width() - 6,
        chunk.page_start,
        chunk.page_end,
    )
    head = Text(f"[{chunk.rank}] ", style="bold") + where
    body = Text(printable(text.strip()))
    for sentence in cited_sentences(answer, chunk.rank):
        body.highlight_regex(
            r"\s+".join(re.escape(word) for word in sentence.split()), style="bold yellow"
        )
    render.console.print(head, width=width())
    render.console.print(Padding(body, (0, 0, 0, 4)), width=width())
    if cited_sentences(answer, chunk.rank):
        render.console.print(
            "[dim]    highlighted: what the answer took from this passage[/]", width=width()
        )


def lineage_sources(lineage: Lineage) -> Panel:
    return sources_panel(
        list(lineage.chunks), list(lineage.anchor_documents), list(lineage.missing_anchors)
    )


CODE_FENCE = re.compile(
    r"^([ \t]*)(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\2[ \t]*$", re.MULTILINE | re.DOTALL
)


def _unindented(code: str, fence: str) -> str:
    """A fenced block's lines less its fence's indentation (a block inside a list item), as
    written otherwise: a piece of a block cut between chunks keeps the indentation it has in the
    block, in line with the piece before it (each dedented on its own, "  -c, --csv" stood two
    columns left of the "  --nl" over it)."""
    if not fence:
        return code
    return "\n".join(
        line[len(fence) :] if line.startswith(fence) else line.lstrip(" \t")
        for line in code.split("\n")
    )


def answer_body(text: str, target: Console | None = None) -> None:
    """An answer: prose as plain text (printable, no markup), each fenced code block as code
    (rich Syntax: highlighted by its language, never wrapped or joined into one line)."""
    # here: pygments loads only for code shown highlighted
    from rich.syntax import Syntax

    out = target or render.console
    start = 0
    for match in CODE_FENCE.finditer(text):
        before = text[start : match.start()].strip("\n")
        if before:
            out.print(Text(printable(before)), soft_wrap=soft_wrap())
        code = _unindented(printable(match.group(4)), match.group(1)).rstrip("\n")
        width = max((len(line) for line in code.splitlines()), default=1)
        # as wide as its longest line, never cropped or wrapped: code copied from here still runs
        out.print(
            Syntax(
                code,
                match.group(3) or "text",
                theme="ansi_dark",
                word_wrap=False,
                code_width=width,
                background_color="default",
            ),
            crop=False,
        )
        start = match.end()
    rest = text[start:].strip("\n")
    if rest or start == 0:
        out.print(Text(printable(rest)), soft_wrap=soft_wrap())


def history_list(session: str, turns: list[AnsweredTurn]) -> None:
    """`/history`: the session's questions by turn number."""
    if not turns:
        render.console.print(f"[dim]session {escape(session)} has no questions yet[/]")
        return
    for item in turns:
        mark = "" if item.answered else "  [yellow](unanswered)[/]"
        render.console.print(
            f"[bold]{item.number:>3}[/]  {escape(snippet(item.lineage.question, 2 * ECHO_LIMIT))}"
            + mark,
            soft_wrap=True,
        )


def history_turn(item: AnsweredTurn) -> None:
    """`/history N`: the whole turn, its question, answer and sources."""
    render.console.print(f"[bold]Turn {item.number}[/]")
    render.console.print(Text(printable("> " + item.lineage.question)), soft_wrap=True)
    if item.answered:
        answer_body(item.answer)
    else:
        if item.answer.strip():
            answer_body(item.answer)
        render.console.print("[yellow](unanswered: the answer never came)[/]")
    if item.lineage.chunks:
        show(lineage_sources(item.lineage))


def turn(result: TurnResult, streamed: bool = False) -> None:
    """The answer (unless it was streamed), how the question was understood, the sources.
    Notices were shown as they happened (Conversation.on_notice)."""
    if not streamed:
        if result.lineage.answer_mode in MODEL_MODES:
            render.console.print(model_markdown(result.answer), width=width())
        else:
            answer_body(result.answer)
    elif not render.console.is_terminal:
        render.console.print()
    render.console.print(
        Text(printable(understood_as(result)), style="dim italic"), soft_wrap=soft_wrap()
    )
    lineage = result.lineage
    render.console.print(
        sources_panel(
            list(lineage.chunks), list(lineage.anchor_documents), list(lineage.missing_anchors)
        )
    )


def without_model(problem: str) -> None:
    """`ask` with `ollama = auto` and no usable model: why, and what answers instead."""
    render.console.print(
        f"[dim]({escape(problem)}: heuristic reformulation, extractive answers)[/]", soft_wrap=True
    )


def sources(lineage: Lineage) -> None:
    """`/sources`: the last answer's sources panel."""
    render.console.print(lineage_sources(lineage))
