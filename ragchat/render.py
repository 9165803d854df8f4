"""Everything rich: progress, tables, panels, errors. Core modules never import this."""

from __future__ import annotations

import json
import math
import re
import textwrap
import threading
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.markup import escape as escape_markup
from rich.padding import Padding
from rich.panel import Panel
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from .conversation.models import Lineage, RetrievedChunk, TurnResult
from .ingest.releases import section_label
from .text import PrintableStream, inert_char, printable, source_label

if (
    TYPE_CHECKING
):  # annotations only: importing them would load eval, ingest and search for every command
    from .app import AnsweredTurn
    from .catalog import Removed
    from .config import Settings
    from .evaluate.coverage import CoverageScore
    from .evaluate.report import AnswerGroup, GroupSummary
    from .ingest.pipeline import IngestReport
    from .search.hybrid import Hit
    from .store import library
    from .watch import Change


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


class _RateColumn(ProgressColumn):
    """Chunks/s and the time left, for the tasks that ask for it (rich averages the last 30 s)."""

    def render(self, task: Task) -> Text:
        if not task.fields.get("rate") or not task.speed:
            return Text("")
        expected = task.fields.get("expected")  # the total foreseen while it is still growing
        left = (
            task.time_remaining if not expected else max(expected - task.completed, 0) / task.speed
        )
        eta = (
            "" if left is None or task.finished else f"  ETA {int(left) // 60}:{int(left) % 60:02d}"
        )
        return Text(f"{task.speed:.1f} {task.fields['rate']}/s{eta}", style="cyan")


def _progress_console(target: Console | None) -> Console:
    """Progress goes to stderr (stdout stays the result) and is drawn only on a terminal."""
    return target or err_console


def expected_chunks(known: int, files_done: int, files_total: int) -> int:
    """The chunk total to expect while files are still being parsed: the chunks so far, scaled by
    the share of files parsed (0 once every file is parsed: the total is known)."""
    if not files_done or files_done >= files_total:
        return 0
    return round(known * files_total / files_done)


class IngestProgress:
    """A rich progress bar with one line for files and one for chunks (with chunks/s and an ETA);
    updated from the ingest's parsing and embedding threads (rich's Progress takes a lock)."""

    def __init__(self, target: Console | None = None) -> None:
        shown = _progress_console(target)
        self._bar = Progress(
            TextColumn("[bold]{task.description:<8}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}", style="dim"),
            _RateColumn(),
            TimeElapsedColumn(),
            console=shown,
            transient=False,
            disable=not shown.is_terminal,
        )
        self._files = self._bar.add_task("files", total=None, detail="")
        self._chunks = self._bar.add_task(
            "chunks", total=None, detail="", visible=False, rate="chunks", expected=0
        )
        self._files_done, self._files_total = 0, 0

    def __enter__(self) -> IngestProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def files(self, total: int) -> None:
        self._files_total = total
        self._bar.update(self._files, total=total)

    def file_done(self, path: str) -> None:
        self._files_done += 1
        self._bar.update(self._files, advance=1, detail=escape_markup(printable(path)[-40:]))

    def chunks(self, total: int) -> None:
        self._bar.update(
            self._chunks,
            total=total,
            visible=True,
            detail="embedding",
            expected=expected_chunks(total, self._files_done, self._files_total),
        )

    def chunks_done(self, count: int) -> None:
        self._bar.update(self._chunks, advance=count)


def ingest_report(
    report: IngestReport, database: Path | None = None, verbose: bool = False
) -> None:
    parts = [
        f"{len(report.added)} added",
        f"{len(report.updated)} updated",
        f"{len(report.unchanged)} unchanged",
        f"{len(report.removed)} removed",
        f"{len(report.skipped)} skipped",
    ]
    if report.reparsed:
        parts.append(f"{len(report.reparsed)} re-parsed (newer parser)")
    if report.reembedded:
        parts.append(f"{report.reembedded} chunks re-embedded")
    if report.left_out:
        from .ingest.ignore import summary as ignore_summary  # here: pathspec loads for ingest only

        why = ", ".join(
            f"{count} {reason}" for reason, count in ignore_summary(report.left_out).items()
        )
        parts.append(f"{len(report.left_out)} left out ({why})")
    where = f" to {escape(str(database))}" if database is not None else ""
    # on a terminal the summary wraps at spaces; piped, it stays one greppable line
    console.print(
        f"[bold]Ingest:[/] {', '.join(parts)}; {report.chunks} chunks written{where}",
        soft_wrap=_wrapped(),
        width=width() if console.is_terminal else None,
    )
    if verbose:
        for path, reason in report.left_out:
            console.print(f"  [dim]left out[/] {escape(path)}: {escape(reason)}", soft_wrap=True)
    # soft_wrap: one line per file however narrow (or piped) the output is, so it stays greppable
    for path, reason in report.skipped:
        console.print(f"  [red]skipped[/] {escape(path)}: {escape(reason)}", soft_wrap=True)
    for was, now in report.moved:
        console.print(
            f"  moved {escape(was)} -> {escape(now)} (same content: not embedded again)",
            soft_wrap=True,
        )
    for path, original in report.copies:
        console.print(
            f"  copy {escape(path)}: same content as {escape(original)} (stored once)",
            soft_wrap=True,
        )
    for path, message in report.warnings:
        console.print(f"  [yellow]warning[/] {escape(path)}: {escape(message)}", soft_wrap=True)
    for note in report.notes:
        console.print(f"  [yellow]note[/] {escape(printable(note))}", soft_wrap=True)
    if report.interrupted:
        notice("ingest interrupted: the documents written are kept; ingest again to add the rest")
    if report.gone:
        console.print(
            f"  [yellow]{len(report.gone)} document(s) whose files are gone are kept[/]; "
            "`ragchat ingest --prune PATH` removes them"
        )
    if report.ignored:
        console.print(f"  [dim]{report.ignored} file(s) of other types ignored[/]")


def snippet(text: str, width: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def hit_row(hit: Hit) -> dict:
    return {
        "rank": hit.rank,
        "chunk_id": hit.chunk.id,
        "score": round(hit.score, 4),
        "vector_rank": hit.vector_rank,
        "fts_rank": hit.fts_rank,
        "similarity": None if hit.similarity is None else round(hit.similarity, 4),
        "boost": hit.boost,
        "anchored": hit.anchored,
        "document": hit.chunk.path,
        "page_start": hit.chunk.page_start,
        "page_end": hit.chunk.page_end,
        "source": source_label(hit.chunk.path, hit.chunk.page_start, hit.chunk.page_end),
        "heading": hit.chunk.heading,
        "snippet": snippet(hit.chunk.text, 200),
        "document_id": hit.chunk.document_id,
        "collection": hit.chunk.collection,
        "absolute_path": hit.chunk.source,
    }


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


def _place(
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


def search_hits(hits: list[Hit], as_json: bool) -> None:
    if as_json:
        json_lines(hit_row(hit) for hit in hits)
        return
    if not hits:
        console.print("[dim]No matching chunks.[/]")
        return
    fixed = [("#", 2), ("score", 5), ("vec", 3), ("fts", 3)]
    text_width = width() - sum(w for _, w in fixed) - 2 * (len(fixed) + 1) - 2
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, width=width())
    for name, size in fixed:
        table.add_column(name, justify="right", width=size, no_wrap=True)
    table.add_column("document › section / passage", ratio=1)
    for hit in hits:
        cell = _place(
            hit.chunk.path,
            hit.chunk.heading.replace(" > ", " › "),
            text_width,
            hit.chunk.page_start,
            hit.chunk.page_end,
        )
        cell.append("\n" + printable(snippet(hit.chunk.text, 2 * text_width)))
        table.add_row(
            str(hit.rank), f"{hit.score:.3f}", _rank(hit.vector_rank), _rank(hit.fts_rank), cell
        )
    console.print(table)


def documents_table(rows: list[library.Listed], as_json: bool) -> None:
    if as_json:
        json_lines(row.to_dict() for row in rows)
        return
    if not rows:
        console.print("[dim]No documents: `ragchat ingest PATH` adds some.[/]")
        return
    table = Table("collection", "path", "title", "chunks", "pages", "ingested", width=width())
    for column in table.columns[3:5]:
        column.justify = "right"
    for row in rows:
        title = escape(printable(row.title))
        if row.copy_of is not None:
            title = f"[dim](same content as {escape(printable(row.copy_of))})[/]"
        table.add_row(
            escape(printable(row.collection)),
            escape(printable(row.path)),
            title,
            str(row.chunks),
            "" if row.pages is None else str(row.pages),
            ago(row.ingested_at),
        )
    show(table)
    console.print(f"[dim]{len(rows)} document(s)[/]")


def collections_table(rows: list[library.Collection], as_json: bool) -> None:
    if as_json:
        json_lines(
            {
                "name": row.name,
                "folder": row.root,
                "documents": row.documents,
                "chunks": row.chunks,
                "created_at": row.created_at,
            }
            for row in rows
        )
        return
    if not rows:
        console.print("[dim]No collections: `ragchat ingest FOLDER` makes one per folder.[/]")
        return
    table = Table("collection", "folder", "documents", "chunks", width=width())
    for row in rows:
        table.add_row(
            escape(printable(row.name)),
            escape(printable(row.root)),
            str(row.documents),
            str(row.chunks),
        )
    show(table)


def removed(done: Removed) -> None:
    """What `documents rm` or `collections rm` took out, one line each."""
    moved = dict(done.moved)
    for name in done.removed:
        line = f"removed {escape(printable(name))}"
        if name in moved:
            line += f" [dim](its content stays under {escape(printable(moved[name]))})[/]"
        console.print(line, soft_wrap=True)
    console.print(
        f"[dim]{len(done.removed)} document(s) removed, {done.chunks} chunk(s) with them[/]"
    )


def watch_line(change: Change) -> None:
    """One line per document the watch added, updated or removed (or could not read)."""
    colour = {"added": "green", "updated": "cyan", "removed": "yellow"}.get(change.kind, "red")
    detail = f" [dim]({escape(printable(change.detail))})[/]" if change.detail else ""
    console.print(
        f"[{colour}]{change.kind}[/] {escape(printable(change.path))}{detail}", soft_wrap=True
    )


def config_table(settings: Settings, origins: Mapping[str, str]) -> None:
    table = Table("setting", "value", "from")
    for column in table.columns:
        column.overflow = "fold"  # a long path or model name is wrapped, never cut short with "…"
    for name, value in vars(settings).items():
        if name == "params":  # the code's tuning, not a setting (ragchat/params.py)
            continue
        table.add_row(name, escape(str(value)), escape(origins.get(name, "default")))
    show(table)
    state = (
        "" if Path(settings.db).exists() else " (not created yet: `ragchat ingest PATH` creates it)"
    )
    console.print(
        f"[bold]database:[/] {escape(str(settings.db))}{state} [dim]· "
        f"{escape(origins.get('db', 'default'))}[/]",
        soft_wrap=True,
    )


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


class Waiting:
    """A spinner that says what the model is doing ("loading llama3.2 ...", then "thinking ..."),
    on a terminal only; `stop()` (or the first streamed piece) ends it. `loaded` is an event set
    once the model is in memory (a warm-up request answered); None: not known ("waiting for")."""

    def __init__(self, model: str, loaded: Any = None) -> None:
        self._status: Any = None
        self._done = False
        if not console.is_terminal:
            return
        warm = loaded is not None and loaded.is_set()
        label = "thinking ..." if warm else f"loading {printable(model)} ..."
        if loaded is None:  # not known whether it is in memory
            label = f"waiting for {printable(model)} ..."
        self._status = console.status(label, spinner="dots")
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
        self._markdown = markdown and console.is_terminal
        self._text = ""
        self._live: Any = None
        self._thought = False

    def __call__(self, piece: str) -> None:
        self._started()
        if self._thought:
            console.print()
            self._thought = False
        self._print(self._filter.feed(piece))

    def thinking(self, piece: str) -> None:
        self._started()
        self._thought = True
        console.print(printable(piece), end="", style="dim", highlight=False, soft_wrap=True)

    def close(self) -> None:
        self._started()
        self._print(self._filter.flush())
        if self._live is not None:
            self._live.stop()
            self._live = None
        if self._markdown:
            if self._text.strip():
                console.print(model_markdown(self._text), width=width())
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
        tail = "\n".join(self._text.splitlines()[-max(console.height - 4, 4) :])
        if self._live is None:
            self._live = Live(
                model_markdown(tail), console=console, transient=True, refresh_per_second=8
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


# --- conversation ------------------------------------------------------------------------------

ECHO_LIMIT = 160  # a question or query echoed back is shortened to this, with an ellipsis


def understood_as(result: TurnResult) -> str:
    lineage = result.lineage
    if lineage.plan == "reuse":
        label = "reusing the last sources"
    elif lineage.reformulation.is_follow_up and not lineage.reformulation.topic_shift:
        label = "follow-up of the last answer"
    elif lineage.turn <= 1:
        label = "first question of the session"
    else:
        label = "new topic"
    if lineage.correction:
        label = f"a correction: the last question again, {label}"
    return f"understood as: {snippet(lineage.reformulation.leading_query, ECHO_LIMIT)} ({label})"


def _wrapped() -> bool:
    """Soft wrap (one long line) when piped, so output stays greppable; on a terminal rich wraps at
    spaces, where the terminal itself would cut words at its edge."""
    return not console.is_terminal


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
            _place(chunk.document, leaf, text_width, chunk.page_start, chunk.page_end, chunk.title),
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
        if not console.is_terminal:
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
            elif self.column < console.width:
                self._write(space)
                self.column += 1

    def _word(self, word: str) -> None:
        if word and self.column and self.column + len(word) > console.width:
            self._write("\n")
            self.column = 0
        self._write(word)
        self.column += len(word)

    def finish(self) -> None:
        self._word(self.held)
        self.held, self.column = "", 0

    @staticmethod
    def _write(text: str) -> None:
        console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


def token(piece: str) -> None:
    """One streamed piece of an answer, as it arrives (no markup, no wrapping of its own).
    Prefer StreamPrinter: it also drops an escape sequence split across pieces whole, and
    wraps at spaces."""
    console.print(printable(piece), end="", markup=False, highlight=False, soft_wrap=True)


def preview(text: str, limit: int = 400) -> Text:
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
    where = _place(
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
    console.print(head, width=width())
    console.print(Padding(body, (0, 0, 0, 4)), width=width())
    if cited_sentences(answer, chunk.rank):
        console.print(
            "[dim]    highlighted: what the answer took from this passage[/]", width=width()
        )


def lineage_sources(lineage: Lineage) -> Panel:
    return sources_panel(
        list(lineage.chunks), list(lineage.anchor_documents), list(lineage.missing_anchors)
    )


CODE_FENCE = re.compile(
    r"^([ \t]*)(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\2[ \t]*$", re.MULTILINE | re.DOTALL
)


def answer_body(text: str, target: Console | None = None) -> None:
    """An answer: prose as plain text (printable, no markup), each fenced code block as code
    (rich Syntax: highlighted by its language, never wrapped or joined into one line)."""
    # here: pygments loads only for code shown highlighted
    from rich.syntax import Syntax

    out = target or console
    start = 0
    for match in CODE_FENCE.finditer(text):
        before = text[start : match.start()].strip("\n")
        if before:
            out.print(Text(printable(before)), soft_wrap=_wrapped())
        code = textwrap.dedent(printable(match.group(4))).rstrip("\n")
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
        out.print(Text(printable(rest)), soft_wrap=_wrapped())


MODEL_MODES = frozenset({"llm", "cut", "cancelled"})  # answers a model wrote (rendered as Markdown)


def history_list(session: str, turns: list[AnsweredTurn]) -> None:
    """`/history`: the session's questions by turn number."""
    if not turns:
        console.print(f"[dim]session {escape(session)} has no questions yet[/]")
        return
    for item in turns:
        mark = "" if item.answered else "  [yellow](unanswered)[/]"
        console.print(
            f"[bold]{item.number:>3}[/]  {escape(snippet(item.lineage.question, 2 * ECHO_LIMIT))}"
            + mark,
            soft_wrap=True,
        )


def history_turn(item: AnsweredTurn) -> None:
    """`/history N`: the whole turn, its question, answer and sources."""
    console.print(f"[bold]Turn {item.number}[/]")
    console.print(Text(printable("> " + item.lineage.question)), soft_wrap=True)
    if item.answered:
        answer_body(item.answer)
    else:
        if item.answer.strip():
            answer_body(item.answer)
        console.print("[yellow](unanswered: the answer never came)[/]")
    if item.lineage.chunks:
        show(lineage_sources(item.lineage))


def turn(result: TurnResult, streamed: bool = False) -> None:
    """The answer (unless it was streamed), how the question was understood, the sources.
    Notices were shown as they happened (Conversation.on_notice)."""
    if not streamed:
        if result.lineage.answer_mode in MODEL_MODES:
            console.print(model_markdown(result.answer), width=width())
        else:
            answer_body(result.answer)
    elif not console.is_terminal:
        console.print()
    console.print(Text(printable(understood_as(result)), style="dim italic"), soft_wrap=_wrapped())
    lineage = result.lineage
    console.print(
        sources_panel(
            list(lineage.chunks), list(lineage.anchor_documents), list(lineage.missing_anchors)
        )
    )


def prompt_summary(prompt: dict) -> str:
    """What a model's answer prompt held and what its budget left out, in one line."""
    parts = [f"{prompt.get('prompt_chars', 0):,} characters"]
    if prompt.get("prompt_tokens"):
        parts[0] += f" = {prompt['prompt_tokens']:,} tokens (counted by the server)"
    if prompt.get("num_ctx"):
        parts.append(f"context {prompt['num_ctx']:,} tokens")
    given = ", ".join(str(n) for n in prompt.get("sources_given", [])) or "none"
    parts.append(f"sources given: {given}")
    if prompt.get("sources_left_out"):
        left = ", ".join(str(n) for n in prompt["sources_left_out"])
        parts.append(f"left out: {left}")
    if prompt.get("source_cut"):
        parts.append(f"source {prompt['source_cut']} cut to fit")
    parts.append(f"history: {prompt.get('history_turns', 0)} exchange(s)")
    if prompt.get("history_left_out"):
        parts[-1] += f", {prompt['history_left_out']} older left out (no room)"
    if prompt.get("thinking_chars"):
        parts.append(f"thinking: {prompt['thinking_chars']:,} characters, hidden")
    return "; ".join(parts)


def inspect_data(lineage: Lineage, message_id: int, turn_number: int, answer: str) -> dict:
    """The inspect JSON: the lineage's own keys, plus where the turn is and its answer."""
    data = lineage.to_dict()
    data.update(
        {
            "turn": turn_number,
            "message_id": message_id,
            "weak_match": data.pop("weak"),
            "answer": answer,
            "answered": lineage.answer_mode not in ("pending", "unanswered") and bool(answer),
        }
    )
    return data


def _hanging(rows: list[tuple[str, str]]) -> Table:
    """`  name            value` lines whose values wrap under themselves, not under the name."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=17, no_wrap=True)
    grid.add_column(ratio=1)
    for name, value in rows:
        grid.add_row(f"  {name}", value)
    return grid


def _inspect_rows(chunks: list[dict]) -> list:
    """The chunk table as fixed-width lines, each chunk's `document › section` on its own line
    below its figures: it reads at 80 columns and the columns never move."""
    idw = max([5, *(len(str(c["chunk_id"])) for c in chunks)])
    header = (
        f"{'#':>2} {'chunk':>{idw}} {'vec':>3} {'fts':>3} {'sim':>5} {'rrf':>5} "
        f"{'boost':>5} {'score':>5} marks"
    )
    rows: list = [Text(header, style="bold"), Text("─" * len(header), style="dim")]
    for c in chunks:
        marks = "".join(
            m
            for m, on in (
                ("A", c["anchored"]),
                ("R", c["reused"]),
                ("C", c["used"]),
                ("N", c.get("seen") is False),
                ("B", c.get("beside") is not None),
            )
            if on
        )
        sim = "-" if c["similarity"] is None else f"{c['similarity']:.3f}"
        rows.append(
            Text(
                f"{c['rank']:>2} {c['chunk_id']:>{idw}} {_rank(c['vector_rank']):>3} "
                f"{_rank(c['fts_rank']):>3} {sim:>5} {c['rrf'] or 0:>5.3f} {c['boost']:>5.2f} "
                f"{c['score']:>5.3f} {marks}"
            )
        )
        heading = (c["heading"] or "").replace(" > ", " › ")
        rows.append(
            Padding(
                _place(c["document"], heading, width() - 4, c.get("page_start"), c.get("page_end")),
                (0, 0, 0, 3),
            )
        )
    return rows


def inspect_view(data: dict) -> None:
    r = data["reformulation"]
    console.print(f"[bold]Turn {data['turn']}[/] (message {data['message_id']})")
    console.print(
        f"[bold]question[/]        {escape(snippet(str(data['question']), 2 * ECHO_LIMIT))}",
        width=width(),
    )
    console.print(f"[bold]history window[/]  message ids {data['history_window'] or '(none)'}")
    console.print(f"[bold]reformulation[/]   by {escape(str(r.get('reformulator')))}")
    keys = (
        "semantic_query",
        "keyword_query",
        "is_follow_up",
        "is_meta",
        "topic_shift",
        "reasoning",
        *(("model_query", "model_weight") if r.get("model_query") else ()),
    )
    show(_hanging([(key, escape(snippet(str(r.get(key)), 2 * ECHO_LIMIT))) for key in keys]))
    anchors = ", ".join(data["anchor_documents"]) or "(none)"
    console.print(f"[bold]plan[/]            {data['plan']}   anchors: {escape(anchors)}")
    if data.get("scope"):  # asked in some collections only
        scope = ", ".join(data["scope"])
        console.print(f"[bold]scope[/]           {escape(printable(scope))}", soft_wrap=True)
    own = r.get("question_weight", 1.0)
    console.print(
        f"[bold]context weight[/]  {data.get('context_weight', 0):.2f}  (the question's own "
        f"queries weigh {own:g})"
    )
    show(
        _hanging(
            [
                (
                    query["name"],
                    f"{query['weight']:.2f}  {escape(snippet(query['query'], 2 * ECHO_LIMIT))}"
                    + (
                        f"  (in {escape(printable(', '.join(query['in'])))})"
                        if query.get("in")
                        else ""
                    ),
                )
                for query in data.get("queries", [])
            ]
        )
    )
    for path in data["missing_anchors"]:
        console.print(f"  [yellow]anchor gone:[/] {escape(path)}")
    show(Group(*_inspect_rows(data["chunks"])))
    console.print(
        "[dim]marks: A anchored (boosted), R reused from the last turn, C cited by the answer"
        + (
            ", N not given to the model"
            if any(c.get("seen") is False for c in data["chunks"])
            else ""
        )
        + (
            ", B beside a better chunk of its section"
            if any(c.get("beside") is not None for c in data["chunks"])
            else ""
        )
        + "[/]"
    )
    if data.get("prompt"):
        console.print(
            f"[bold]model prompt[/]    {escape(prompt_summary(data['prompt']))}", width=width()
        )
    console.print(
        f"[bold]answer mode[/]     {data['answer_mode']}"
        + ("  (not covered)" if data["weak_match"] else "")
        + ("" if data.get("answered", True) else "  (unanswered: the answer never came)")
    )
    if data.get("coverage"):
        evidence = "  ".join(f"{key} {value:.2f}" for key, value in data["coverage"].items())
        console.print(
            f"[bold]coverage[/]        {evidence}"
            + ("  -> not covered" if data["weak_match"] else "")
        )
    if data.get("correction"):
        console.print(
            "[bold]correction[/]      of the last question, as typed: "
            f"{escape(data['correction'])}",
            width=width(),
        )
    for message in data["notices"]:
        console.print(f"  [yellow]notice:[/] {escape(message)}")


def ago(stamp: str, now: datetime | None = None) -> str:
    """A humane age of an ISO timestamp: "just now", "5 min ago", "2 h ago", "3 days ago",
    or the date."""
    try:
        then = datetime.fromisoformat(stamp)
    except (TypeError, ValueError):
        return str(stamp)
    if then.tzinfo is None:
        then = then.replace(tzinfo=UTC)
    seconds = ((now or datetime.now(UTC)) - then).total_seconds()
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    if seconds < 86400 * 14:
        days = int(seconds // 86400)
        return "yesterday" if days == 1 else f"{days} days ago"
    return then.date().isoformat()


def sessions_table(rows: list[dict], now: datetime | None = None) -> None:
    if not rows:
        console.print("[dim]No sessions yet: `ragchat chat --session NAME` starts one.[/]")
        return
    table = Table("session", "turns", "last used", "first question")
    for row in rows:
        first = row.get("first_question")
        table.add_row(
            escape(row["name"]),
            str(row["turns"]),
            ago(row["updated_at"], now),
            escape(snippet(first, 60)) if first else "[dim](no questions yet)[/]",
        )
    show(table)


# --- eval ----------------------------------------------------------------------------------------


class EvalProgress:
    """A rich progress bar over items x strategies; `update` is the replay's progress callback."""

    def __init__(self, target: Console | None = None) -> None:
        shown = _progress_console(target)
        self._bar = Progress(
            TextColumn("[bold]replay  "),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}", style="dim"),
            TimeElapsedColumn(),
            console=shown,
            transient=False,
            disable=not shown.is_terminal,
        )
        self._task = self._bar.add_task("replay", total=None, detail="")

    def __enter__(self) -> EvalProgress:
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def update(self, done: int, total: int, detail: str) -> None:
        self._bar.update(
            self._task, completed=done, total=total, detail=escape_markup(printable(detail)[-40:])
        )


def eval_tables(
    summaries: list[GroupSummary], metric_names: list[str], seconds: Mapping[str, float]
) -> None:
    """One table per group (overall, per tag value): strategies as rows, metrics as columns;
    the best value of each column in bold."""
    for position, summary in enumerate(summaries):
        overall = position == 0
        table = Table(title=escape(summary.name), title_justify="left", title_style="bold")
        table.add_column(
            "strategy", no_wrap=True
        )  # a strategy's name is never cut: it says what the row is
        table.add_column("turns", justify="right")
        for name in metric_names:
            table.add_column(name, justify="right")
        paired = any(row.versus for row in summary.rows)
        if paired:
            table.add_column("vs last-turn W/L/T", justify="right")
            table.add_column("p", justify="right")
        if overall:
            table.add_column("seconds", justify="right", style="dim")
            table.caption = (
                "W/L/T: turns whose nDCG@10 beats, trails, ties last-turn's; p: two-sided sign "
                "test. seconds: replay time (the first strategy also embeds the shared questions "
                "and replies)"
            )
        best = {
            name: max((row.metrics[name] for row in summary.rows if row.count), default=None)
            for name in metric_names
        }
        for row in summary.rows:
            cells = [
                f"[bold]{row.metrics[n]:.3f}[/]"
                if row.count and row.metrics[n] == best[n]
                else (f"{row.metrics[n]:.3f}" if row.count else "-")
                for n in metric_names
            ]
            extra = []
            if paired:
                versus = row.versus
                extra += (
                    [f"{versus.wins}/{versus.losses}/{versus.ties}", f"{versus.p_value:.3f}"]
                    if versus
                    else ["-", "-"]
                )
            if overall:
                extra.append(f"{seconds.get(row.strategy, 0):.1f}")
            table.add_row(escape(row.strategy), str(row.count), *cells, *extra)
        console.print(table)


def answer_tables(groups: list[AnswerGroup]) -> None:
    """Answer quality: one table per answered strategy, a row per group, F1 / recall / words for
    ragchat, lead and oracle; "yes" when ragchat closes a third of the lead-oracle gap."""
    if not groups:
        console.print("[dim]answer quality: no answered turn had a reference[/]")
        return
    for strategy in dict.fromkeys(g.strategy for g in groups):
        table = Table(
            title=f"answer quality: {escape(strategy)}", title_justify="left", title_style="bold"
        )
        table.add_column("group")
        table.add_column("turns", justify="right")
        for system in ("ragchat", "lead", "oracle"):
            table.add_column(f"{system}\nF1 / R / words", justify="right")
        table.add_column("1/3 of\nthe gap", justify="right")
        for group in (g for g in groups if g.strategy == strategy):
            cells = [f"{row.f1:.3f} / {row.recall:.3f} / {row.words:.0f}" for row in group.rows]
            table.add_row(
                escape(group.name),
                str(group.rows[0].count),
                *cells,
                "yes" if group.closes_a_third else "no",
            )
        table.caption = (
            "content words, stemmed, against the reference; lead: the top chunk's first words, "
            "as many as ragchat's answer; oracle: greedy best sentences of the same chunks"
        )
        console.print(table)


def section_view(section: library.Section) -> None:
    """A whole section behind a source: where it is (path, title, pages, heading), then its text;
    through the pager ($PAGER) when it is longer than the terminal."""
    pages = source_label("", section.page_start, section.page_end)
    head = Text(printable(f"{section.path}{pages}"), style="bold")
    if section.title:
        head.append(printable(f" · {section.title}"))
    if section.heading:
        head.append(printable(f" › {section.heading.replace(' > ', ' › ')}"), style="dim")
    head.append(f"  (chunk {section.chunk_id})", style="dim")
    body = Text(printable(section.text.strip()))
    long = console.is_terminal and len(section.text.splitlines()) + 2 > console.height
    if long:
        with console.pager(styles=True):
            console.print(head, width=width())
            console.print(body, width=width())
        return
    console.print(head, width=width())
    console.print(body, width=width(), soft_wrap=_wrapped())


def coverage_line(score: CoverageScore) -> None:
    """`eval --unanswerable`: how the not-covered decision did."""
    console.print(
        "[bold]Not covered[/] (the documents do not answer it): precision "
        f"{score.precision:.2f}, recall {score.recall:.2f} — fired on {score.caught} of "
        f"{score.unanswerable} unanswerable turns and on {score.false_alarms} of "
        f"{score.answerable} answerable ones (ragchat strategy)",
        soft_wrap=True,
    )
