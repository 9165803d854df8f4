"""`ingest --watch`: keep the library current as files change. Each debounced batch of file
events runs the same ingest again (unchanged files are skipped by their hash, the walk's ignore
rules and `--exclude` apply, files gone or now left out are pruned), then says per document what
changed. Each document is written whole, so stopping at any moment leaves the library
consistent."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from .config import Settings
from .embed import Embedder
from .errors import RagchatError
from .ingest.pipeline import IngestReport, ingest
from .params import WATCH_DEBOUNCE_MS


@dataclass(frozen=True)
class Change:
    kind: str  # added | updated | removed | moved | skipped
    path: str
    detail: str = ""


def changes_of(report: IngestReport) -> list[Change]:
    """One change per document an ingest run added, updated, removed, moved or could not read."""
    return [
        *(Change("added", path) for path in report.added),
        *(Change("updated", path) for path in [*report.updated, *report.reparsed]),
        *(Change("added", path, f"same content as {was}") for path, was in report.copies),
        *(Change("moved", now, f"was {was}") for was, now in report.moved),
        *(Change("removed", path) for path in report.removed),
        *(Change("skipped", path, why) for path, why in report.skipped),
    ]


def _not_the_library(db_path: Path, folders: Sequence[Path]) -> Callable[[Any, str], bool]:
    """Events of the library's own files (its database, WAL, input history) are not document
    changes; nor is anything in its folder when that folder is inside a watched one (a project's
    `.ragchat/`, which ingest never reads)."""
    # here: watchfiles loads only for `ingest --watch`
    from watchfiles import DefaultFilter

    own = db_path.resolve().parent
    inside = any(own != f.resolve() and own.is_relative_to(f.resolve()) for f in folders)
    default = DefaultFilter()

    def allowed(change: Any, path: str) -> bool:
        where = Path(path).resolve()
        if where.parent == own and (
            where.name.startswith(db_path.name) or where.name == "chat_history"
        ):
            return False
        return not (inside and where.is_relative_to(own)) and default(change, path)

    return allowed


def watch_library(
    db: Database,
    settings: Settings,
    paths: Sequence[Path],
    load_embedder: Callable[[], Embedder],
    on_change: Callable[[Change], None],
    *,
    exclude: Sequence[str] = (),
    hidden: bool = False,
    follow_symlinks: bool = False,
    stop: threading.Event | None = None,
    on_ready: Callable[[], None] = lambda: None,
) -> None:
    """Watch `paths` until `stop` is set or Ctrl-C (a KeyboardInterrupt, after the document being
    written is whole). `on_ready` is called once the watch is in place."""
    # here: watchfiles loads only for `ingest --watch`
    from watchfiles import watch

    folders = [p for p in paths if Path(p).exists()]
    if not folders:
        raise RagchatError("nothing to watch: none of the paths exists")
    batches: Iterable[set] = watch(
        *folders,
        watch_filter=_not_the_library(Path(settings.db), folders),
        debounce=WATCH_DEBOUNCE_MS,
        stop_event=stop,
        yield_on_timeout=True,  # the first (empty) yield says the watch is in place
        rust_timeout=500,
        raise_interrupt=True,
    )
    ready = False
    for batch in batches:
        if not ready:
            ready = True
            on_ready()
        if not batch:
            continue
        try:
            report = ingest(
                db,
                settings,
                paths,
                load_embedder,
                prune_missing=True,
                follow_symlinks=follow_symlinks,
                exclude=exclude,
                hidden=hidden,
            )
        except RagchatError as exc:  # e.g. the folder holds nothing readable any more
            on_change(Change("skipped", ", ".join(str(p) for p in paths), str(exc)))
            continue
        for change in changes_of(report):
            on_change(change)
        if report.interrupted:
            raise KeyboardInterrupt
