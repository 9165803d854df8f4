"""Ingest: find files, skip the unchanged, parse and chunk the rest, embed in batches across
documents, and write each document atomically (its chunks, FTS rows and vectors together)."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..config import Settings
from ..embed import Embedder
from ..errors import IngestError, UnreadableFile
from ..lazy import lazy_module
from ..store import library
from ..store.db import set_setting, write
from ..store.library import ChunkRecord, DocumentRecord
from .chunking import Chunk, chunk_document, embedding_text
from .includes import IncludeResolver
from .keywords import select_keywords, term_counts
from .loaders import PARSER_VERSION, ParsedDocument, is_supported, parse_document, read_file

if TYPE_CHECKING:
    import numpy as np
    from sqlite_utils import Database
else:
    np = lazy_module("numpy")

# Chunks are embedded in windows of about WINDOW chunks across documents (the whole ingest when it is
# smaller): a window is embedded sorted by length, batch by batch (less padding: ~1.5x faster than in
# document order), and each document is written as soon as its last chunk is embedded.
WINDOW = 256


class Progress(Protocol):
    """Called from the ingest's two threads: files from the parsing one, chunks from the embedding one.
    `chunks(total)` is called again as more chunks are parsed."""

    def files(self, total: int) -> None: ...
    def file_done(self, path: str) -> None: ...
    def chunks(self, total: int) -> None: ...
    def chunks_done(self, count: int) -> None: ...


class NoProgress:
    def files(self, total: int) -> None: ...
    def file_done(self, path: str) -> None: ...
    def chunks(self, total: int) -> None: ...
    def chunks_done(self, count: int) -> None: ...


@dataclass
class IngestReport:
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    reparsed: list[str] = field(default_factory=list)  # unchanged bytes, parsed again by a newer parser
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0  # files of other types met while walking folders
    chunks: int = 0  # chunks embedded and written
    reembedded: int = 0
    gone: list[str] = field(default_factory=list)  # documents whose files are gone (kept without --prune)

    @property
    def ok(self) -> bool:
        """Anything was ingested, or everything was already up to date."""
        return bool(self.added or self.updated or self.unchanged or self.removed or self.reembedded or self.reparsed)


@dataclass(frozen=True)
class Found:
    path: Path  # as met while walking
    root: Path  # the ingest argument it was found under
    library: tuple[Path, ...] = ()  # every path given to ingest, resolved: where includes may be read


@dataclass
class Pending:
    found: Found
    record: DocumentRecord
    chunks: list[Chunk]
    title: str
    is_new: bool
    reparsed: bool = False


# --- finding files ---------------------------------------------------------------------------


def _walk(root: Path, excluded: set[Path], report: IngestReport, follow: _SymlinkRule) -> Iterator[Found]:
    seen: set[Path] = set()
    stack: list[Path] = [root]
    linked: list[Path] = []  # folders reached through a symlink wait until the real ones are walked
    while stack or linked:
        folder = stack.pop() if stack else linked.pop(0)
        real = folder.resolve()
        if real in seen:
            loop = folder.parent.resolve().is_relative_to(real)  # the link points at a folder it is in
            reason = "symlink loop (folder already visited)" if loop else "symlink to a folder already ingested"
            report.skipped.append((_folder_shown(folder, root), reason))
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:
            report.skipped.append((_folder_shown(folder, root), f"cannot list folder: {exc.strerror}"))
            continue
        for entry in entries:
            path = Path(entry.path)
            if entry.name.startswith("."):
                continue
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            if entry.is_symlink() and not follow.allows(path):
                if is_dir or is_supported(path):
                    report.skipped.append((_folder_shown(path, root), SYMLINK_OUTSIDE))
                else:
                    report.ignored += 1
                continue
            if is_dir:
                if path.resolve() not in excluded:
                    (linked if entry.is_symlink() else stack).append(path)
            elif is_supported(path):
                yield Found(path, root)
            else:
                report.ignored += 1


SYMLINK_OUTSIDE = "symlink outside the ingested folders"


@dataclass(frozen=True)
class _SymlinkRule:
    """Which symlinks met while walking are followed: those resolving inside one of the paths given
    (like ripgrep), or every one with --follow-symlinks. A path given itself is always read."""

    given: tuple[Path, ...]  # resolved
    follow_all: bool = False

    def allows(self, link: Path) -> bool:
        if self.follow_all:
            return True
        try:
            target = link.resolve()
        except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13): reading says so
            return True
        return any(target == given or target.is_relative_to(given) for given in self.given)


def _folder_shown(folder: Path, root: Path) -> str:
    """A folder as the skipped list shows it: relative to the ingest root, like the files in it."""
    return folder.relative_to(root).as_posix() if folder != root else str(folder)


def discover(paths: Sequence[Path], excluded: set[Path], report: IngestReport,
             follow_symlinks: bool = False) -> list[Found]:
    found: list[Found] = []
    rule = _SymlinkRule(tuple(_resolved(path) for path in paths), follow_symlinks)
    for path in paths:
        if path.is_dir():
            found.extend(_walk(path, excluded, report, rule))
        elif path.is_file() or path.is_symlink():
            if is_supported(path):
                found.append(Found(path, path.parent))
            else:
                report.skipped.append((str(path), f"unsupported file type {path.suffix or '(none)'}"))
        else:
            report.skipped.append((str(path), "no such file or folder"))
    # a file reached twice (through a symlink inside the folders) is read once, by its own path if met
    unique: dict[Path, Found] = {}
    for item in sorted(set(found), key=lambda item: (_resolved(item.path) != item.path.absolute(), str(item.path))):
        unique.setdefault(_resolved(item.path), item)
    return sorted((replace(item, library=rule.given) for item in unique.values()), key=lambda item: str(item.path))


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


# --- reading one file ------------------------------------------------------------------------


def _prepare(known: Mapping[str, dict], found: Found, settings: Settings, report: IngestReport) -> Pending | None:
    """Read, parse and chunk one file (in the parsing thread: no database access; `known` holds
    the stored documents by source)."""
    path, shown = found.path, _display_path(found)
    data = read_file(path, int(settings.max_file_mb * 1_048_576))
    includes = IncludeResolver(path, found.library or (_resolved(found.root),))
    digest = includes.digest(data)  # covers the included files: a changed one re-ingests this document
    source = str(path.resolve())
    old = known.get(source)
    stale = old is not None and (old.get("parser_version") or 0) < PARSER_VERSION
    if old is not None and old["content_hash"] == digest and not stale:
        report.unchanged.append(shown)
        return None
    parsed: ParsedDocument = parse_document(path, data, includes)
    if parsed.encoding.lower().replace("_", "-") not in {"utf-8", "utf-8-sig", "ascii"}:
        report.warnings.append((shown, f"not valid UTF-8; read as {parsed.encoding}"))
    chunks = chunk_document(parsed, settings.chunk_size, settings.chunk_max, settings.chunk_overlap)
    if not chunks:
        raise UnreadableFile("no text")
    stat = path.stat()
    record = DocumentRecord(
        source=source, path=shown, root=str(found.root.resolve()), title=parsed.title,
        content_hash=digest, size=stat.st_size, mtime=stat.st_mtime, encoding=parsed.encoding,
        term_counts=term_counts(parsed.text), parser_version=PARSER_VERSION,
    )
    reparsed = old is not None and old["content_hash"] == digest
    return Pending(found, record, chunks, parsed.title, is_new=old is None, reparsed=reparsed)


def _display_path(found: Found) -> str:
    try:
        return found.path.relative_to(found.root).as_posix()
    except ValueError:
        return found.path.name


# --- embedding and writing -------------------------------------------------------------------


class _Parser(threading.Thread):
    """Reads, parses and chunks the files in order, ahead of the embedding (which releases the GIL
    in onnxruntime): the next files are ready when a window of chunks is embedded. Yields Pending
    items; unchanged, skipped and warned files go straight into the report."""

    _DONE = object()

    def __init__(self, db: Database, found: list[Found], settings: Settings, report: IngestReport,
                 progress: Progress) -> None:
        super().__init__(name="ragchat-ingest-parser", daemon=True)
        self._known = {row["source"]: row for row in library.documents(db)}
        self._found, self._settings, self._report, self._progress = found, settings, report, progress
        self._queue: queue.Queue = queue.Queue(maxsize=256)  # bounds the memory of parsed documents
        self._stopping = threading.Event()
        self._error: BaseException | None = None

    def run(self) -> None:
        try:
            for item in self._found:
                if self._stopping.is_set():
                    return
                try:
                    prepared = _prepare(self._known, item, self._settings, self._report)
                except UnreadableFile as exc:
                    self._report.skipped.append((_display_path(item), str(exc)))
                    prepared = None
                if prepared:
                    self._put(prepared)
                self._progress.file_done(_display_path(item))
        except BaseException as exc:
            self._error = exc
        finally:
            self._put(self._DONE)

    def _put(self, item: object) -> None:
        while not self._stopping.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def windows(self) -> Iterator[list[Pending]]:
        """The parsed documents in order, in windows of about WINDOW chunks."""
        window: list[Pending] = []
        size = 0
        while (item := self._queue.get()) is not self._DONE:
            window.append(item)
            size += len(item.chunks)
            if size >= WINDOW:
                yield window
                window, size = [], 0
        if self._error is not None:
            raise self._error
        if window:
            yield window

    def stop(self) -> None:
        self._stopping.set()
        self.join()


def embed_in_order(
    embedder: Embedder, texts: Sequence[str], batch: int, progress: Progress,
    on_batch: Callable[[list[int], np.ndarray], None] = lambda rows, vectors: None,
) -> np.ndarray:
    """Vectors of `texts` in their order, embedded in batches of similar length (a progress step
    each); `on_batch(rows, vectors)` after each batch, with those rows of `vectors` filled."""
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    for rows, embedded in _batches(embedder, texts, batch):
        vectors[rows] = embedded
        progress.chunks_done(len(rows))
        on_batch(rows, vectors)
    return vectors


def _batches(embedder: Embedder, texts: Sequence[str], batch: int) -> Iterator[tuple[list[int], np.ndarray]]:
    """The embedder's own length-sorted batches (by token count), or batches sorted by characters."""
    if hasattr(embedder, "embed_batches"):
        yield from embedder.embed_batches(texts)
        return
    order = sorted(range(len(texts)), key=lambda row: len(texts[row]))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        yield rows, embedder.embed([texts[row] for row in rows])


def _write_all(
    db: Database, load_embedder: Callable[[], Embedder], parser: _Parser, settings: Settings,
    progress: Progress, report: IngestReport,
) -> None:
    embedder: Embedder | None = None
    total = 0
    for window in parser.windows():
        if embedder is None:
            embedder = load_embedder()
            library.ensure_vector_table(db, embedder.model_id, embedder.dim)
        total += sum(len(item.chunks) for item in window)
        progress.chunks(total)  # grows while the parser finds more
        _write_window(db, embedder, window, settings.embed_batch, progress, report)


def _write_window(db: Database, embedder: Embedder, window: list[Pending], batch: int, progress: Progress,
                  report: IngestReport) -> None:
    """Embed a window's chunks in length-sorted batches; write each document once its last chunk is in."""
    texts: list[str] = []
    owner: list[int] = []  # the window item each text belongs to
    first: list[int] = []  # each item's first text
    for number, item in enumerate(window):
        first.append(len(texts))
        texts += [embedding_text(item.title, chunk) for chunk in item.chunks]
        owner += [number] * len(item.chunks)
    missing = [len(item.chunks) for item in window]

    def write_finished(rows: list[int], vectors: np.ndarray) -> None:
        finished = []
        for row in rows:
            missing[owner[row]] -= 1
            if missing[owner[row]] == 0:
                finished.append(owner[row])
        for number in sorted(finished):
            item = window[number]
            _write_one(db, item, vectors[first[number] : first[number] + len(item.chunks)], report)

    embed_in_order(embedder, texts, batch, progress, write_finished)


def _write_one(db: Database, item: Pending, vectors: np.ndarray, report: IngestReport) -> None:
    records = [
        ChunkRecord(c.ordinal, c.text, " > ".join(_below_title(c.heading_path, item.title)), c.start, c.end,
                    c.page_start, c.page_end)
        for c in item.chunks
    ]
    library.replace_document(db, item.record, records, vectors)
    report.chunks += len(records)
    (report.added if item.is_new else report.reparsed if item.reparsed else report.updated).append(item.record.path)


def _below_title(path: tuple[str, ...], title: str) -> tuple[str, ...]:
    """A heading path without the document title on top (it is shown beside it anyway)."""
    return path[1:] if path and path[0].strip().lower() == title.strip().lower() else path


def refresh_keywords(db: Database) -> None:
    library.set_keywords(db, select_keywords(library.term_counts(db)))


def prune(db: Database, report: IngestReport) -> None:
    for document in library.documents(db):
        if not Path(document["source"]).exists():
            library.delete_document(db, document["id"])
            report.removed.append(document["path"])


def reembed(db: Database, embedder: Embedder, progress: Progress, report: IngestReport, batch: int) -> None:
    """Re-embed every chunk with the current model; swapped in one transaction at the end."""
    rows = list(library.all_chunk_texts(db))
    progress.chunks(len(rows))
    texts = [_stored_embedding_text(title, heading, text) for _, _, title, heading, text in rows]
    vectors = embed_in_order(embedder, texts, batch, progress)
    with write(db):
        library.ensure_vector_table(db, embedder.model_id, embedder.dim, reset=True)
        library.clear_keyword_vectors(db)
        if rows:
            library.put_vectors(db, [row[0] for row in rows], vectors)
    refresh_keywords(db)
    report.reembedded = len(rows)


def _stored_embedding_text(title: str, heading: str, text: str) -> str:
    path = tuple(heading.split(" > ")) if heading else ()
    return embedding_text(title, Chunk(0, text, path, 0, len(text)))


def ingest(
    db: Database,
    settings: Settings,
    paths: Iterable[Path],
    load_embedder: Callable[[], Embedder],
    *,
    reembed_all: bool = False,
    prune_missing: bool = False,
    follow_symlinks: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Bring the library in line with `paths`. The embedder is loaded only if something needs it.
    Symlinks met in folders are followed only inside `paths`, unless `follow_symlinks`."""
    progress = progress or NoProgress()
    report = IngestReport()
    if not reembed_all:
        library.check_model(db, settings.embedding_model)
    excluded = {Path(settings.db).resolve().parent}
    found = discover([Path(p) for p in paths], excluded, report, follow_symlinks)
    progress.files(len(found))
    if reembed_all:
        reembed(db, load_embedder(), progress, report, settings.embed_batch)
    parser = _Parser(db, found, settings, report, progress)
    parser.start()
    try:
        _write_all(db, load_embedder, parser, settings, progress, report)
    finally:
        parser.stop()
    if prune_missing:
        prune(db, report)
    else:
        report.gone = [d["path"] for d in library.documents(db) if not Path(d["source"]).exists()]
    if report.added or report.updated or report.reparsed:
        set_setting(db, "parser_version", str(PARSER_VERSION))  # the parser that last wrote documents
    if report.added or report.updated or report.reparsed or report.removed or _keywords_missing(db):
        refresh_keywords(db)
    missing = library.keywords_without_vectors(db)
    if missing:
        library.put_keyword_vectors(db, missing, load_embedder().embed(missing))
    if not report.ok:
        raise IngestError(_nothing_read(report))
    return report


def _keywords_missing(db: Database) -> bool:
    return db.execute("SELECT 1 FROM documents WHERE keywords = '[]' LIMIT 1").fetchone() is not None


def _nothing_read(report: IngestReport) -> str:
    if not report.skipped:
        return "no supported files found (.md .markdown .txt .rst .html .htm .pdf .docx)"
    path, reason = report.skipped[0]
    return f"nothing could be ingested: {len(report.skipped)} file(s) skipped (first: {path}: {reason})"
