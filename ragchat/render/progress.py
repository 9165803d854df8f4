"""Progress bars on stderr, drawn on a terminal only: the ingest's files and chunks, the eval's
replay."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape as escape_markup
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from .. import render
from ..text import printable


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
    return target or render.err_console


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
