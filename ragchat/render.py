"""Everything rich: progress, tables, panels, errors. Core modules never import this."""

from __future__ import annotations

import json
import re
import textwrap
from typing import TYPE_CHECKING, Iterable, Mapping

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.panel import Panel
from rich.text import Text
from rich.markup import escape as escape_markup
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, ProgressColumn, Task, TextColumn,
                           TimeElapsedColumn)
from rich.segment import Segment
from rich.table import Table

from .conversation.models import Lineage, RetrievedChunk, TurnResult
from .text import PrintableStream, printable

if TYPE_CHECKING:  # annotations only: importing them would load eval, ingest and search for every command
    from .config import Settings
    from .evaluate import AnswerGroup, GroupSummary
    from .ingest.pipeline import IngestReport
    from .search.hybrid import Hit



def escape(text: str) -> str:
    """How every untrusted value (file name, heading, chunk text, session name, model output, error)
    enters rich markup: made printable first (no terminal control), then markup-escaped."""
    return escape_markup(printable(text))


class PrintableConsole(Console):
    """A safety net under `escape`: text segments are made printable once laid out (rich's own styles
    and cursor moves are not text segments, so they pass)."""

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        for segment in super().render(renderable, options):
            if segment.control or segment.text.isprintable():
                yield segment
            else:
                yield Segment(printable(segment.text), segment.style, segment.control)


console = PrintableConsole(highlight=False)
err_console = PrintableConsole(stderr=True, highlight=False)


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
        left = task.time_remaining
        eta = "" if left is None or task.finished else f"  ETA {int(left) // 60}:{int(left) % 60:02d}"
        return Text(f"{task.speed:.1f} {task.fields['rate']}/s{eta}", style="cyan")


class IngestProgress:
    """A rich progress bar with one line for files and one for chunks (with chunks/s and an ETA);
    updated from the ingest's parsing and embedding threads (rich's Progress takes a lock)."""

    def __init__(self, target: Console | None = None) -> None:
        self._bar = Progress(
            TextColumn("[bold]{task.description:<8}"), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}", style="dim"), _RateColumn(), TimeElapsedColumn(),
            console=target or console, transient=False,
        )
        self._files = self._bar.add_task("files", total=None, detail="")
        self._chunks = self._bar.add_task("chunks", total=None, detail="", visible=False, rate="chunks")

    def __enter__(self) -> "IngestProgress":
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def files(self, total: int) -> None:
        self._bar.update(self._files, total=total)

    def file_done(self, path: str) -> None:
        self._bar.update(self._files, advance=1, detail=escape_markup(printable(path)[-40:]))

    def chunks(self, total: int) -> None:
        self._bar.update(self._chunks, total=total, visible=True, detail="embedding")

    def chunks_done(self, count: int) -> None:
        self._bar.update(self._chunks, advance=count)


def ingest_report(report: IngestReport) -> None:
    parts = [f"{len(report.added)} added", f"{len(report.updated)} updated",
             f"{len(report.unchanged)} unchanged", f"{len(report.removed)} removed",
             f"{len(report.skipped)} skipped"]
    if report.reembedded:
        parts.append(f"{report.reembedded} chunks re-embedded")
    # soft_wrap: one line per file however narrow (or piped) the output is, so it stays greppable
    console.print(f"[bold]Ingest:[/] {', '.join(parts)}; {report.chunks} chunks written", soft_wrap=True)
    for path, reason in report.skipped:
        console.print(f"  [red]skipped[/] {escape(path)}: {escape(reason)}", soft_wrap=True)
    for path, message in report.warnings:
        console.print(f"  [yellow]warning[/] {escape(path)}: {escape(message)}", soft_wrap=True)
    if report.gone:
        console.print(f"  [yellow]{len(report.gone)} document(s) whose files are gone are kept[/]; "
                      "`ragchat ingest --prune PATH` removes them")
    if report.ignored:
        console.print(f"  [dim]{report.ignored} file(s) of other types ignored[/]")


def snippet(text: str, width: int = 140) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def _rank(value: int | None) -> str:
    return "-" if value is None else str(value)


def hit_row(hit: Hit) -> dict:
    return {
        "rank": hit.rank, "chunk_id": hit.chunk.id, "score": round(hit.score, 4),
        "vector_rank": hit.vector_rank, "fts_rank": hit.fts_rank,
        "similarity": None if hit.similarity is None else round(hit.similarity, 4),
        "boost": hit.boost, "anchored": hit.anchored, "document": hit.chunk.path,
        "heading": hit.chunk.heading, "snippet": snippet(hit.chunk.text, 200),
    }


def search_hits(hits: list[Hit], as_json: bool) -> None:
    if as_json:
        json_lines(hit_row(hit) for hit in hits)
        return
    if not hits:
        console.print("[dim]No matching chunks.[/]")
        return
    table = Table(show_lines=False)
    for column, justify in [("#", "right"), ("score", "right"), ("vec", "right"), ("fts", "right"),
                            ("document", "left"), ("heading", "left"), ("snippet", "left")]:
        table.add_column(column, justify=justify, overflow="fold")
    for hit in hits:
        table.add_row(str(hit.rank), f"{hit.score:.3f}", _rank(hit.vector_rank), _rank(hit.fts_rank),
                      escape(hit.chunk.path), escape(hit.chunk.heading), escape(snippet(hit.chunk.text, 90)))
    console.print(table)


def config_table(settings: Settings, origins: Mapping[str, str]) -> None:
    table = Table("setting", "value", "from")
    for column in table.columns:
        column.overflow = "fold"  # a long path or model name is wrapped, never cut short with "…"
    for name, value in vars(settings).items():
        table.add_row(name, escape(str(value)), escape(origins.get(name, "default")))
    console.print(table)


# json.dumps escapes C0 controls (ESC becomes \u001b) but, with ensure_ascii=False, not DEL or C1
_JSON_UNPRINTABLE = {code: f"\\u{code:04x}" for code in range(0x7F, 0xA0)}


def json_lines(rows: Iterable[dict]) -> None:
    """One JSON object a line; the original text, every control character escaped."""
    for row in rows:
        print(json.dumps(row, ensure_ascii=False).translate(_JSON_UNPRINTABLE))


class StreamPrinter:
    """Prints an answer's streamed pieces as they arrive, printable even when an escape sequence is
    split across pieces; `close()` once the stream has ended."""

    def __init__(self) -> None:
        self._filter = PrintableStream()

    def __call__(self, piece: str) -> None:
        self._print(self._filter.feed(piece))

    def close(self) -> None:
        self._print(self._filter.flush())

    @staticmethod
    def _print(text: str) -> None:
        if text:
            console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


# --- conversation ------------------------------------------------------------------------------

def understood_as(result: TurnResult) -> str:
    if result.plan == "reuse":
        label = "reusing the last sources"
    elif result.reformulation.is_follow_up and not result.reformulation.topic_shift:
        label = "follow-up of the last answer"
    else:
        label = "new topic"
    return f"understood as: {result.reformulation.semantic_query} ({label})"


def _mark(chunk: RetrievedChunk) -> str:
    marks = []
    if chunk.reused:
        marks.append("[magenta]reused[/]")
    elif chunk.anchored:
        marks.append("[cyan]anchored[/]")
    if chunk.used:
        marks.append("[green]cited[/]")
    return " ".join(marks)


def sources_panel(chunks: list[RetrievedChunk], anchor_paths: list[str], missing: list[str]) -> Panel:
    table = Table(box=None, pad_edge=False, expand=True)
    for column, justify in [("#", "right"), ("document", "left"), ("heading", "left"), ("score", "right"), ("", "left")]:
        table.add_column(column, justify=justify, overflow="fold")
    for chunk in chunks:
        table.add_row(str(chunk.rank), escape(chunk.document), escape(chunk.heading or "-"),
                      f"{chunk.score:.3f}", _mark(chunk))
    parts: list = [table] if chunks else [Text("no sources found", style="dim")]
    for path in missing:
        parts.append(Text(printable(f"anchor gone: {path} (removed or changed since the last turn)"), style="yellow"))
    title = "Sources" + (f" · anchored on {', '.join(anchor_paths)}" if anchor_paths else "")
    return Panel(Group(*parts), title=escape(title), title_align="left", border_style="blue")


def token(piece: str) -> None:
    """One streamed piece of an answer, as it arrives (no markup, no wrapping of its own). Prefer
    StreamPrinter: it also drops an escape sequence split across pieces whole."""
    console.print(printable(piece), end="", markup=False, highlight=False, soft_wrap=True)


def lineage_sources(lineage: Lineage) -> Panel:
    return sources_panel(list(lineage.chunks), list(lineage.anchor_documents), list(lineage.missing_anchors))


CODE_FENCE = re.compile(r"^([ \t]*)(```+|~~~+)[ \t]*([\w+#.-]*)[^\n]*\n(.*?)^[ \t]*\2[ \t]*$", re.MULTILINE | re.DOTALL)


def answer_body(text: str, target: Console | None = None) -> None:
    """An answer: prose as plain text (printable, no markup), each fenced code block as code
    (rich Syntax: highlighted by its language, never wrapped or joined into one line)."""
    from rich.syntax import Syntax

    out = target or console
    start = 0
    for match in CODE_FENCE.finditer(text):
        before = text[start:match.start()].strip("\n")
        if before:
            out.print(Text(printable(before)))
        code = textwrap.dedent(printable(match.group(4))).rstrip("\n")
        width = max((len(line) for line in code.splitlines()), default=1)
        # as wide as its longest line, never cropped or wrapped: code copied from here still runs
        out.print(Syntax(code, match.group(3) or "text", theme="ansi_dark", word_wrap=False, code_width=width,
                         background_color="default"), crop=False)
        start = match.end()
    rest = text[start:].strip("\n")
    if rest or start == 0:
        out.print(Text(printable(rest)))


def turn(result: TurnResult, streamed: bool = False) -> None:
    """The answer (unless it was streamed), how the question was understood, the sources.
    Notices were shown as they happened (Conversation.on_notice)."""
    if not streamed:
        answer_body(result.answer)
    else:
        console.print()
    console.print(Text(printable(understood_as(result)), style="dim italic"), soft_wrap=True)
    console.print(sources_panel(list(result.chunks), list(result.anchor_paths), list(result.missing_anchors)))


def inspect_data(lineage: Lineage, message_id: int, turn_number: int, answer: str) -> dict:
    """The inspect JSON: the lineage's own keys, plus where the turn is and its answer."""
    data = lineage.to_dict()
    data.update({"turn": turn_number, "message_id": message_id, "weak_match": data.pop("weak"), "answer": answer})
    return data


def inspect_view(data: dict) -> None:
    r = data["reformulation"]
    console.print(f"[bold]Turn {data['turn']}[/] (message {data['message_id']})")
    console.print(f"[bold]question[/]        {escape(str(data['question']))}")
    console.print(f"[bold]history window[/]  message ids {data['history_window'] or '(none)'}")
    console.print(f"[bold]reformulation[/]   by {escape(str(r.get('reformulator')))}")
    for key in ("semantic_query", "keyword_query", "is_follow_up", "is_meta", "topic_shift", "reasoning"):
        console.print(f"  {key:<15} {escape(str(r.get(key)))}")
    anchors = ", ".join(data["anchor_documents"]) or "(none)"
    console.print(f"[bold]plan[/]            {data['plan']}   anchors: {escape(anchors)}")
    console.print(f"[bold]context weight[/]  {data.get('context_weight', 0):.2f}  (the question's own queries weigh 1)")
    for query in data.get("queries", []):
        console.print(f"  {query['name']:<15} {query['weight']:.2f}  {escape(query['query'])}")
    for path in data["missing_anchors"]:
        console.print(f"  [yellow]anchor gone:[/] {escape(path)}")
    table = Table(pad_edge=False)
    for name in ("#", "chunk", "vec", "fts", "sim", "rrf", "boost", "score", "marks"):
        table.add_column(name, justify="left" if name == "marks" else "right", no_wrap=True)
    table.add_column("document › section", overflow="fold", ratio=1)
    for c in data["chunks"]:
        marks = "".join(m for m, on in (("A", c["anchored"]), ("R", c["reused"]), ("C", c["used"])) if on)
        leaf = (c["heading"] or "").split(" > ")[-1]
        table.add_row(str(c["rank"]), str(c["chunk_id"]), _rank(c["vector_rank"]), _rank(c["fts_rank"]),
                      "-" if c["similarity"] is None else f"{c['similarity']:.3f}", f"{c['rrf'] or 0:.3f}",
                      f"{c['boost']:.2f}", f"{c['score']:.3f}", marks,
                      escape(c["document"] + (f" › {leaf}" if leaf else "")))
    console.print(table)
    console.print("[dim]marks: A anchored (boosted), R reused from the last turn, C cited by the answer[/]")
    console.print(f"[bold]answer mode[/]     {data['answer_mode']}" + ("  (weak match)" if data["weak_match"] else ""))
    for message in data["notices"]:
        console.print(f"  [yellow]notice:[/] {escape(message)}")


def sessions_table(rows: list[dict]) -> None:
    if not rows:
        console.print("[dim]No sessions yet: `ragchat chat --session NAME` starts one.[/]")
        return
    table = Table("session", "turns", "last activity", "created")
    for row in rows:
        table.add_row(escape(row["name"]), str(row["turns"]), row["updated_at"], row["created_at"])
    console.print(table)


# --- eval ----------------------------------------------------------------------------------------


class EvalProgress:
    """A rich progress bar over items x strategies; `update` is the replay's progress callback."""

    def __init__(self, target: Console | None = None) -> None:
        self._bar = Progress(
            TextColumn("[bold]replay  "), BarColumn(), MofNCompleteColumn(),
            TextColumn("{task.fields[detail]}", style="dim"), TimeElapsedColumn(),
            console=target or console, transient=False,
        )
        self._task = self._bar.add_task("replay", total=None, detail="")

    def __enter__(self) -> "EvalProgress":
        self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._bar.stop()

    def update(self, done: int, total: int, detail: str) -> None:
        self._bar.update(self._task, completed=done, total=total, detail=escape_markup(printable(detail)[-40:]))


def eval_tables(summaries: list[GroupSummary], metric_names: list[str], seconds: Mapping[str, float]) -> None:
    """One table per group (overall, per tag value): strategies as rows, metrics as columns;
    the best value of each column in bold."""
    for position, summary in enumerate(summaries):
        overall = position == 0
        table = Table(title=escape(summary.name), title_justify="left", title_style="bold")
        table.add_column("strategy")
        table.add_column("turns", justify="right")
        for name in metric_names:
            table.add_column(name, justify="right")
        paired = any(row.versus for row in summary.rows)
        if paired:
            table.add_column("vs last-turn W/L/T", justify="right")
            table.add_column("p", justify="right")
        if overall:
            table.add_column("seconds", justify="right", style="dim")
            table.caption = ("W/L/T: turns whose nDCG@10 beats, trails, ties last-turn's; p: two-sided sign test. "
                             "seconds: replay time (the first strategy also embeds the shared questions and replies)")
        best = {name: max((row.metrics[name] for row in summary.rows if row.count), default=None)
                for name in metric_names}
        for row in summary.rows:
            cells = [f"[bold]{row.metrics[n]:.3f}[/]" if row.count and row.metrics[n] == best[n]
                     else (f"{row.metrics[n]:.3f}" if row.count else "-") for n in metric_names]
            extra = []
            if paired:
                versus = row.versus
                extra += [f"{versus.wins}/{versus.losses}/{versus.ties}", f"{versus.p_value:.3f}"] if versus else ["-", "-"]
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
        table = Table(title=f"answer quality: {escape(strategy)}", title_justify="left", title_style="bold")
        table.add_column("group")
        table.add_column("turns", justify="right")
        for system in ("ragchat", "lead", "oracle"):
            table.add_column(f"{system}\nF1 / R / words", justify="right")
        table.add_column("1/3 of\nthe gap", justify="right")
        for group in (g for g in groups if g.strategy == strategy):
            cells = [f"{row.f1:.3f} / {row.recall:.3f} / {row.words:.0f}" for row in group.rows]
            table.add_row(escape(group.name), str(group.rows[0].count), *cells, "yes" if group.closes_a_third else "no")
        table.caption = ("content words, stemmed, against the reference; lead: the top chunk's first words, as many "
                         "as ragchat's answer; oracle: greedy best sentences of the same chunks")
        console.print(table)
