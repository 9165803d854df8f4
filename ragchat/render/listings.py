"""What the library holds and what was done to it: the ingest summary, search hits, documents,
collections, sessions, a section behind a source, the settings, the watch's lines."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from rich import box
from rich.table import Table
from rich.text import Text

from .. import render
from ..text import printable, snippet, source_label
from . import escape, json_lines, notice, place, rank_cell, show, soft_wrap, width

if TYPE_CHECKING:  # annotations only: importing them would load ingest and search for every view
    from ..catalog import Removed
    from ..config import Settings
    from ..doctor import Finding
    from ..ingest.pipeline import IngestReport
    from ..search.hybrid import Hit
    from ..store import library
    from ..watch import Change


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
        from ..ingest.ignore import (
            summary as ignore_summary,
        )  # here: pathspec loads for ingest only

        why = ", ".join(
            f"{count} {reason}" for reason, count in ignore_summary(report.left_out).items()
        )
        parts.append(f"{len(report.left_out)} left out ({why})")
    where = f" to {escape(str(database))}" if database is not None else ""
    # on a terminal the summary wraps at spaces; piped, it stays one greppable line
    render.console.print(
        f"[bold]Ingest:[/] {', '.join(parts)}; {report.chunks} chunks written{where}",
        soft_wrap=soft_wrap(),
        width=width() if render.console.is_terminal else None,
    )
    if verbose:
        for path, reason in report.left_out:
            render.console.print(
                f"  [dim]left out[/] {escape(path)}: {escape(reason)}", soft_wrap=True
            )
    # soft_wrap: one line per file however narrow (or piped) the output is, so it stays greppable
    for path, reason in report.skipped:
        render.console.print(f"  [red]skipped[/] {escape(path)}: {escape(reason)}", soft_wrap=True)
    for was, now in report.moved:
        render.console.print(
            f"  moved {escape(was)} -> {escape(now)} (same content: not embedded again)",
            soft_wrap=True,
        )
    for path, original in report.copies:
        render.console.print(
            f"  copy {escape(path)}: same content as {escape(original)} (stored once)",
            soft_wrap=True,
        )
    for path, message in report.warnings:
        render.console.print(
            f"  [yellow]warning[/] {escape(path)}: {escape(message)}", soft_wrap=True
        )
    for note in report.notes:
        render.console.print(f"  [yellow]note[/] {escape(printable(note))}", soft_wrap=True)
    if report.interrupted:
        notice("ingest interrupted: the documents written are kept; ingest again to add the rest")
    if report.gone:
        render.console.print(
            f"  [yellow]{len(report.gone)} document(s) whose files are gone are kept[/]; "
            "`ragchat ingest --prune PATH` removes them"
        )
    if report.ignored:
        render.console.print(f"  [dim]{report.ignored} file(s) of other types ignored[/]")


def search_hits(hits: list[Hit], as_json: bool) -> None:
    if as_json:
        json_lines(hit.to_dict() for hit in hits)
        return
    if not hits:
        render.console.print("[dim]No matching chunks.[/]")
        return
    fixed = [("#", 2), ("score", 5), ("vec", 3), ("fts", 3)]
    text_width = width() - sum(w for _, w in fixed) - 2 * (len(fixed) + 1) - 2
    table = Table(box=box.SIMPLE_HEAD, pad_edge=False, width=width())
    for name, size in fixed:
        table.add_column(name, justify="right", width=size, no_wrap=True)
    table.add_column("document › section / passage", ratio=1)
    for hit in hits:
        cell = place(
            hit.chunk.path,
            hit.chunk.heading.replace(" > ", " › "),
            text_width,
            hit.chunk.page_start,
            hit.chunk.page_end,
        )
        cell.append("\n" + printable(snippet(hit.chunk.text, 2 * text_width)))
        table.add_row(
            str(hit.rank),
            f"{hit.score:.3f}",
            rank_cell(hit.vector_rank),
            rank_cell(hit.fts_rank),
            cell,
        )
    render.console.print(table)


def documents_table(rows: list[library.Listed], as_json: bool) -> None:
    if as_json:
        json_lines(row.to_dict() for row in rows)
        return
    if not rows:
        render.console.print("[dim]No documents: `ragchat ingest PATH` adds some.[/]")
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
    render.console.print(f"[dim]{len(rows)} document(s)[/]")


def collections_table(rows: list[library.Collection], as_json: bool) -> None:
    if as_json:
        json_lines(row.to_dict() for row in rows)
        return
    if not rows:
        render.console.print(
            "[dim]No collections: `ragchat ingest FOLDER` makes one per folder.[/]"
        )
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
        render.console.print(line, soft_wrap=True)
    render.console.print(
        f"[dim]{len(done.removed)} document(s) removed, {done.chunks} chunk(s) with them[/]"
    )


def watch_line(change: Change) -> None:
    """One line per document the watch added, updated or removed (or could not read)."""
    colour = {"added": "green", "updated": "cyan", "removed": "yellow"}.get(change.kind, "red")
    detail = f" [dim]({escape(printable(change.detail))})[/]" if change.detail else ""
    render.console.print(
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
    render.console.print(
        f"[bold]database:[/] {escape(str(settings.db))}{state} [dim]· "
        f"{escape(origins.get('db', 'default'))}[/]",
        soft_wrap=True,
    )


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
        render.console.print("[dim]No sessions yet: `ragchat chat --session NAME` starts one.[/]")
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
    long = render.console.is_terminal and len(section.text.splitlines()) + 2 > render.console.height
    if long:
        with render.console.pager(styles=True):
            render.console.print(head, width=width())
            render.console.print(body, width=width())
        return
    render.console.print(head, width=width())
    render.console.print(body, width=width(), soft_wrap=soft_wrap())


def watching() -> None:
    render.console.print(
        "[dim]watching for changes (Ctrl-C stops; the library stays consistent)[/]"
    )


def stopped_watching() -> None:
    render.console.print("[dim]stopped watching[/]")


def repaired(lines: list[str]) -> None:
    """What `doctor --repair` rebuilt, one line each."""
    for line in lines:
        render.console.print(f"repaired: {escape(line)}", soft_wrap=True)


def doctor_report(
    model_findings: list[Finding],
    working: str,
    ollama: str,
    findings: list[Finding],
    database: Path,
) -> None:
    """`doctor`: the Ollama setup (a problem with `ollama = on`, a note with `auto`), then the
    library's problems, each with its fix, or that there are none."""
    label = "[red]problem:[/]" if ollama == "on" else "[yellow]ollama:[/]"
    for finding in model_findings:
        render.console.print(
            f"{label} {escape(finding.problem)} [dim]· fix: {escape(finding.fix)}[/]",
            soft_wrap=True,
        )
    if working:
        render.console.print(escape(working), soft_wrap=True)
    elif ollama == "off":
        render.console.print("[dim]Ollama is off (setting ollama = off)[/]", soft_wrap=True)
    for finding in findings:
        render.console.print(
            f"[red]problem:[/] {escape(finding.problem)} [dim]· fix: {escape(finding.fix)}[/]",
            soft_wrap=True,
        )
    if not findings:
        render.console.print(f"{escape(str(database))}: no problems found", soft_wrap=True)
