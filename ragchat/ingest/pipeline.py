"""Ingest: find files, skip the unchanged, parse and chunk the rest, embed in batches across
documents, and write each document atomically (its chunks, FTS rows and vectors together)."""

from __future__ import annotations

import errno
import hashlib
import os
import queue
import shlex
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from ..config import LIBRARY_DIR, Settings
from ..embed import Embedder
from ..errors import IngestError, UnreadableFile
from ..lazy import lazy_module
from ..names import name_bytes, shown_name, stored_path
from ..store import keywords, library, vectors
from ..store.library import ChunkRecord, DocumentRecord, FileName
from ..store.transaction import set_setting, write
from ..text import some_of
from .chunking import Chunk, chunk_document, embedding_text
from .documents import (
    FRAGMENT,
    Survey,
    generates_reference,
    is_markup,
    is_surveyed,
    not_a_document,
    survey,
)
from .ignore import LIBRARY, SYMLINK_OUTSIDE, Rules, Scope
from .includes import IncludeResolver
from .keywords import KEYWORDS_PER_DOCUMENT, select_keywords, term_counts
from .labels import references, resolve, title_of
from .limits import Limits
from .loaders import PARSER_VERSION, is_supported, read_file
from .parsed import ParsedDocument
from .releases import (
    NOTICE_SHARE,
    RELEASE_KINDS,
    RELEASE_NOTES,
    RELEASE_SERIES,
    is_release_notes,
    release_series,
)
from .worker import Parser, failure_reason

if TYPE_CHECKING:
    import numpy as np
    from sqlite_utils import Database
else:
    np = lazy_module("numpy")

# Chunks are embedded in windows of about WINDOW chunks across documents (the whole ingest when it
# is smaller): a window is embedded sorted by length, batch by batch (less padding: ~1.5x faster
# than in document order), and each document is written as soon as its last chunk is embedded.
WINDOW = 256


class Progress(Protocol):
    """Called from the ingest's two threads: files from the parsing one, chunks from the embedding
    one. `chunks(total)` is called again as more chunks are parsed."""

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
    reparsed: list[str] = field(
        default_factory=list
    )  # unchanged bytes, parsed again by a newer parser
    removed: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, reason)
    warnings: list[tuple[str, str]] = field(default_factory=list)
    ignored: int = 0  # files of other types met while walking folders
    left_out: list[tuple[str, str]] = field(
        default_factory=list
    )  # (path, why): hidden, an ignore file, --exclude
    chunks: int = 0  # chunks embedded and written
    reembedded: int = 0
    gone: list[str] = field(
        default_factory=list
    )  # documents whose files are gone (kept without --prune)
    moved: list[tuple[str, str]] = field(
        default_factory=list
    )  # (was, now): same content, not re-embedded
    copies: list[tuple[str, str]] = field(
        default_factory=list
    )  # (path, document it repeats): stored once
    interrupted: bool = (
        False  # Ctrl-C: the documents written so far are kept, the rest waits for the next run
    )
    release_notes: dict[str, int] = field(default_factory=dict)  # path -> chunks, this run
    # a file given whose type ingest does not read, as the report names it (skipped unless a
    # page includes it: then its text is read there)
    unsupported: dict[Path, str] = field(default_factory=dict)
    included: set[Path] = field(default_factory=set)  # the files pages include
    included_by: dict[Path, set[str]] = field(default_factory=dict)  # each of them -> the pages
    # a file outside the paths given that pages include -> (the name they write, those pages)
    outside_includes: dict[Path, tuple[str, list[str]]] = field(default_factory=dict)
    # pages whose reference the site's build writes from the code (autodoc, mkdocstrings, ...)
    generated: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one-line remarks on what was read

    @property
    def ok(self) -> bool:
        """Anything was ingested, or everything was already up to date."""
        return bool(
            self.added
            or self.updated
            or self.unchanged
            or self.removed
            or self.reembedded
            or self.reparsed
            or self.moved
            or self.copies
        )


@dataclass(frozen=True)
class Found:
    path: Path  # as met while walking
    root: Path  # the ingest argument it was found under
    scope: Scope | None = None  # what the ingest reads: where includes may be read


@dataclass
class Pending:
    found: Found
    record: DocumentRecord
    chunks: list[Chunk]
    title: str
    is_new: bool
    reparsed: bool = False
    moved: dict | None = None  # the stored document whose file this is, moved or renamed
    copy_of: str | int | None = None  # the document this file repeats: its id, or its source if new


class _Known:
    """What the parsing thread knows of the library: a snapshot at the start, and what this run
    decided so far (files are met in order, so the first of two identical new files is parsed
    and the second is its copy)."""

    def __init__(self, db: Database, found: Survey | None = None) -> None:
        self.survey = found or Survey()
        self.by_source = {row["source"]: row for row in library.documents(db)}
        self.copies = {row["source"]: row for row in library.copies(db)}
        self.by_hash: dict[str, dict] = {}
        for row in self.by_source.values():
            self.by_hash.setdefault(row["content_hash"], row)
        self.not_documents: list[str] = []  # sources found to be fragments or templates
        self.claimed: dict[str, str] = {}  # content hash -> source of the new file parsed for it
        self.changed: set[int] = set()  # documents whose content this run replaces
        self.moved: set[int] = set()

    def same_content(self, digest: str, found: Found, record: DocumentRecord) -> Pending | None:
        """A file whose content the library holds: the document moved here, or this is a copy."""
        same = self.by_hash.get(digest)
        if same is not None and same["id"] not in self.changed:
            if (
                same["id"] not in self.moved
                and not stored_path(same["source"], same.get("source_bytes")).exists()
            ):
                self.moved.add(same["id"])
                return Pending(found, record, [], same["title"], is_new=False, moved=same)
            return Pending(found, record, [], same["title"], is_new=False, copy_of=same["id"])
        if digest in self.claimed:
            return Pending(found, record, [], "", is_new=False, copy_of=self.claimed[digest])
        self.claimed[digest] = record.source
        return None


# --- finding files ---------------------------------------------------------------------------


def _walk(root: Path, report: IngestReport, scope: Scope, rules: Rules) -> Iterator[Found]:
    seen: set[Path] = set()
    stack: list[Path] = [root]
    linked: list[Path] = []  # folders reached through a symlink wait until the real ones are walked
    while stack or linked:
        folder = stack.pop() if stack else linked.pop(0)
        real = folder.resolve()
        if real in seen:
            loop = folder.parent.resolve().is_relative_to(
                real
            )  # the link points at a folder it is in
            reason = (
                "symlink loop (folder already visited)"
                if loop
                else "symlink to a folder already ingested"
            )
            report.skipped.append((_folder_shown(folder, root), reason))
            continue
        seen.add(real)
        try:
            entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
        except OSError as exc:
            report.skipped.append(
                (_folder_shown(folder, root), f"cannot list folder: {exc.strerror}")
            )
            continue
        for entry in entries:
            path = Path(entry.path)
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            why = scope.entry_reason(rules, path, is_dir, entry.is_symlink())
            if why == SYMLINK_OUTSIDE:
                if is_dir or is_supported(path):
                    report.skipped.append((_folder_shown(path, root), SYMLINK_OUTSIDE))
                else:
                    report.ignored += 1
            elif why == LIBRARY and is_dir and path.name != LIBRARY_DIR:
                continue  # the database's folder, met inside a folder given
            elif why:
                if is_dir or is_supported(path):  # a hidden .DS_Store or .gitignore is not news
                    report.left_out.append(
                        (_folder_shown(path, root) + ("/" if is_dir else ""), why)
                    )
            elif is_dir:
                (linked if entry.is_symlink() else stack).append(path)
            elif is_supported(path):
                yield Found(path, root)
            else:
                report.ignored += 1


def _folder_shown(folder: Path, root: Path) -> str:
    """A folder as the skipped list shows it: relative to the ingest root, like the files in it."""
    return shown_name(folder.relative_to(root).as_posix() if folder != root else str(folder))


def discover(
    paths: Sequence[Path],
    excluded: set[Path],
    report: IngestReport,
    follow_symlinks: bool = False,
    rules: Mapping[Path, Rules] | None = None,
) -> list[Found]:
    found: list[Found] = []
    folders = {path: (rules or {}).get(path) or Rules(path) for path in paths if _is_dir(path)}
    files = tuple(_resolved(path) for path in paths if path not in folders)
    scope = Scope(tuple(folders.values()), files, frozenset(excluded), follow_symlinks)
    for path in paths:
        if path in folders:
            found.extend(_walk(path, report, scope, folders[path]))
        elif _given_file(path):
            if is_supported(path):
                found.append(Found(path, path.parent))
            else:
                report.unsupported[_resolved(path)] = shown_name(str(path))
        else:
            report.skipped.append((shown_name(str(path)), _missing(path)))
    # a file reached twice (through a symlink inside the folders) is read once, by its own
    # path if met
    unique: dict[Path, Found] = {}
    for item in sorted(
        set(found), key=lambda item: (_resolved(item.path) != item.path.absolute(), str(item.path))
    ):
        unique.setdefault(_resolved(item.path), item)
    return sorted(
        (replace(item, scope=scope) for item in unique.values()),
        key=lambda item: str(item.path),
    )


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # a name too long, a NUL byte: said by _missing
        return False


def _given_file(path: Path) -> bool:
    try:
        return path.is_file() or path.is_symlink()
    except (OSError, ValueError):
        return False


def _missing(path: Path) -> str:
    """Why a path given to ingest is neither a folder nor a file."""
    try:
        os.stat(path)
    except OSError as exc:
        if exc.strerror and exc.errno != errno.ENOENT:
            return f"cannot read: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    except ValueError:
        return "not a file name"
    return "no such file or folder"


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()


# --- reading one file ------------------------------------------------------------------------


def _prepare(
    known: _Known, found: Found, settings: Settings, report: IngestReport, parser: Parser
) -> Pending | None:
    """Read, parse and chunk one file (in the parsing thread: no database access). A file whose
    content the library already holds is a move or a copy, neither parsed nor embedded."""
    path = found.path
    data = read_file(path, int(settings.max_file_mb * 1_048_576))  # first: a symlink loop is a skip
    name = _file_name(found)
    scope = found.scope or Scope((), (_resolved(path),))
    text = data.decode("utf-8", errors="replace") if is_markup(path) else ""
    if why := not_a_document(path, text, known.survey):
        report.left_out.append((name.path, why))
        known.not_documents.append(name.source)
        return None
    includes = IncludeResolver(path, scope, found.root)
    digest = includes.digest(data)  # covers the included files: a changed one re-ingests this
    report.included.update(includes.located)
    for located in includes.located:
        report.included_by.setdefault(located, set()).add(name.path)
    for included, outside in includes.outside():
        report.outside_includes.setdefault(outside, (included, []))[1].append(name.path)
    if labels := references(text):  # and the titles its references show
        shown = "\0".join(title_of(label, known.survey.labels) for label in labels)
        digest = hashlib.sha256(f"{digest}\0{shown}".encode()).hexdigest()
    old = known.by_source.get(name.source)
    copy = known.copies.get(name.source)
    stale = old is not None and (old.get("parser_version") or 0) < PARSER_VERSION
    unchanged_copy = (
        copy is not None
        and copy["content_hash"] == digest
        and copy["document_id"] not in known.changed
    )
    if (old is not None and old["content_hash"] == digest and not stale) or unchanged_copy:
        report.unchanged.append(name.path)
        return None
    if generates_reference(text):  # said when the page is read, not on every run
        report.generated.append(name.path)
    stat = path.stat()
    record = DocumentRecord(
        source=name.source,
        path=name.path,
        root=name.root,
        title="",
        content_hash=digest,
        size=stat.st_size,
        mtime=stat.st_mtime,
        encoding="utf-8",
        term_counts={},
        parser_version=PARSER_VERSION,
        source_bytes=name.source_bytes,
    )
    if old is None and (same := known.same_content(digest, found, record)) is not None:
        return same
    if old is not None and old["content_hash"] != digest:
        known.changed.add(old["id"])
    parsed: ParsedDocument = resolve(parser.parse(path, data, includes), known.survey.labels)
    if parsed.encoding.lower().replace("_", "-") not in {"utf-8", "utf-8-sig", "ascii"}:
        report.warnings.append((name.path, f"not valid UTF-8; read as {parsed.encoding}"))
    chunks = chunk_document(parsed, settings.chunk_size, settings.chunk_max, settings.chunk_overlap)
    if not chunks:
        raise UnreadableFile("no text")
    record = replace(
        record,
        title=parsed.title,
        encoding=parsed.encoding,
        term_counts=term_counts(parsed.text),
        kind=RELEASE_NOTES if is_release_notes(parsed) else None,
    )
    reparsed = old is not None and old["content_hash"] == digest
    return Pending(found, record, chunks, parsed.title, is_new=old is None, reparsed=reparsed)


def _file_name(found: Found) -> FileName:
    source = str(_resolved(found.path))
    return FileName(
        shown_name(source),
        name_bytes(source),
        _display_path(found),
        shown_name(str(_resolved(found.root))),
    )


def _display_path(found: Found) -> str:
    """The path shown for a file: relative to its ingest root, escaped (names.shown_name)."""
    try:
        return shown_name(found.path.relative_to(found.root).as_posix())
    except ValueError:
        return shown_name(found.path.name)


def _survey(found: list[Found], max_bytes: int) -> Survey:
    """Every found file that can include others or define labels, read once before parsing
    (documents.py): which files are fragments, which labels the library defines."""
    files, others = [], []
    for item in found:
        if not is_surveyed(item.path):
            others.append(item.path)
            continue
        try:
            data = read_file(item.path, max_bytes)
        except UnreadableFile:
            continue
        scope = item.scope or Scope((), (_resolved(item.path),))
        files.append((item.path, scope, item.root, data.decode("utf-8", errors="replace")))
    return survey(files, others)


# --- embedding and writing -------------------------------------------------------------------


class _Parser(threading.Thread):
    """Reads, parses and chunks the files in order, ahead of the embedding (which releases the GIL
    in onnxruntime): the next files are ready when a window of chunks is embedded. Yields Pending
    items; unchanged, skipped and warned files go straight into the report."""

    _DONE = object()

    def __init__(
        self,
        db: Database,
        found: list[Found],
        settings: Settings,
        report: IngestReport,
        progress: Progress,
    ) -> None:
        super().__init__(name="ragchat-ingest-parser", daemon=True)
        self._known = _Known(db, _survey(found, int(settings.max_file_mb * 1_048_576)))
        self._found, self._settings, self._report, self._progress = (
            found,
            settings,
            report,
            progress,
        )
        self._queue: queue.Queue = queue.Queue(maxsize=256)  # bounds the memory of parsed documents
        self._stopping = threading.Event()
        self._error: BaseException | None = None
        self._worker = Parser(Limits.for_file_mb(settings.max_file_mb))

    def run(self) -> None:
        try:
            for item in self._found:
                if self._stopping.is_set():
                    return
                try:
                    prepared = _prepare(
                        self._known, item, self._settings, self._report, self._worker
                    )
                except Exception as exc:  # one file's failure, whatever it is, skips that file
                    if self._stopping.is_set():
                        return
                    self._report.skipped.append((_display_path(item), failure_reason(exc)))
                    prepared = None
                if prepared:
                    self._put(prepared)
                self._progress.file_done(_display_path(item))
        except BaseException as exc:
            self._error = exc
        finally:
            self._worker.stop()
            self._put(self._DONE)

    def _put(self, item: object) -> None:
        while not self._stopping.is_set():
            try:
                self._queue.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def windows(self) -> Iterator[list[Pending]]:
        """The parsed documents in order, in windows of about WINDOW chunks; a smaller window when
        the next file is slow to parse, so the documents before it are written meanwhile."""
        window: list[Pending] = []
        size = 0
        while (item := self._next(bool(window))) is not self._DONE:
            if item is None:  # the parser is busy with a slow file
                yield window
                window, size = [], 0
                continue
            assert isinstance(item, Pending)
            window.append(item)
            size += len(item.chunks)
            if size >= WINDOW:
                yield window
                window, size = [], 0
        if self._error is not None:
            raise self._error
        if window:
            yield window

    def _next(self, waiting: bool) -> object:
        """The next parsed item; None when documents are waiting and none came for a second."""
        try:
            return self._queue.get(timeout=1.0) if waiting else self._queue.get()
        except queue.Empty:
            return None

    @property
    def not_documents(self) -> list[str]:
        return self._known.not_documents

    def stop(self) -> None:
        """Stop at once: the worker is killed mid-file (documents already written stay)."""
        self._stopping.set()
        self._worker.stop()
        self.join()


def embed_in_order(
    embedder: Embedder,
    texts: Sequence[str],
    batch: int,
    progress: Progress,
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


def _batches(
    embedder: Embedder, texts: Sequence[str], batch: int
) -> Iterator[tuple[list[int], np.ndarray]]:
    """The embedder's own length-sorted batches (by token count), or batches sorted by
    characters."""
    if hasattr(embedder, "embed_batches"):
        yield from embedder.embed_batches(texts)
        return
    order = sorted(range(len(texts)), key=lambda row: len(texts[row]))
    for start in range(0, len(order), batch):
        rows = order[start : start + batch]
        yield rows, embedder.embed([texts[row] for row in rows])


def _write_all(
    db: Database,
    load_embedder: Callable[[], Embedder],
    parser: _Parser,
    settings: Settings,
    progress: Progress,
    report: IngestReport,
) -> None:
    embedder: Embedder | None = None
    total = 0
    for window in parser.windows():
        parsed = [item for item in window if item.chunks]
        if parsed:
            if embedder is None:
                embedder = load_embedder()
                vectors.ensure_vector_table(db, embedder.model_id, embedder.dim)
            total += sum(len(item.chunks) for item in parsed)
            progress.chunks(total)  # grows while the parser finds more
            _write_window(db, embedder, parsed, settings.embed_batch, progress, report)
        for item in window:
            if (
                not item.chunks
            ):  # a move or a copy (after the documents it may repeat): nothing to embed
                _write_name(db, item, report)


def _write_window(
    db: Database,
    embedder: Embedder,
    window: list[Pending],
    batch: int,
    progress: Progress,
    report: IngestReport,
) -> None:
    """Embed a window's chunks in length-sorted batches; write each document once its last
    chunk is in."""
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


def _write_name(db: Database, item: Pending, report: IngestReport) -> None:
    """A moved document takes its new name; a copy is remembered under its document."""
    record = item.record
    name = FileName(record.source, record.source_bytes, record.path, record.root)
    if item.moved is not None:
        library.move_document(db, item.moved["id"], name, record.mtime)
        report.moved.append((item.moved["path"], record.path))
        return
    if isinstance(item.copy_of, int):
        document = library.documents_by_ids(db, [item.copy_of]).get(item.copy_of)
    else:
        document = library.document_by_source(db, item.copy_of or "")
    if document is None:  # the file it repeats could not be ingested: neither can this one
        report.skipped.append((record.path, "same content as a file that was skipped"))
        return
    library.add_copy(db, document["id"], name)
    report.copies.append((record.path, document["path"]))


def _write_one(db: Database, item: Pending, vectors: np.ndarray, report: IngestReport) -> None:
    records = [
        ChunkRecord(
            c.ordinal,
            c.text,
            " > ".join(_below_title(c.heading_path, item.title)),
            c.start,
            c.end,
            c.page_start,
            c.page_end,
        )
        for c in item.chunks
    ]
    if item.is_new:
        library.delete_copy(db, item.record.source)  # it was a copy until its content changed
    library.replace_document(db, item.record, records, vectors)
    report.chunks += len(records)
    if item.record.kind == RELEASE_NOTES:
        report.release_notes[item.record.path] = len(records)
    (report.added if item.is_new else report.reparsed if item.reparsed else report.updated).append(
        item.record.path
    )


def _below_title(path: tuple[str, ...], title: str) -> tuple[str, ...]:
    """A heading path without the document title on top (it is shown beside it anyway)."""
    return path[1:] if path and path[0].strip().lower() == title.strip().lower() else path


def refresh_keywords(db: Database) -> None:
    keywords.set_keywords(db, select_keywords(library.term_counts(db), KEYWORDS_PER_DOCUMENT))


def _exists(row: dict) -> bool:
    return stored_path(row["source"], row.get("source_bytes")).exists()


def _gone(row: dict, rules: list[Rules]) -> bool:
    """Its file is gone, or the folders' rules now leave it out."""
    return not _exists(row) or any(
        r.reason_anywhere(stored_path(row["source"], row.get("source_bytes"))) for r in rules
    )


def prune(db: Database, report: IngestReport, rules: Iterable[Rules] = ()) -> None:
    """Forget documents and copies whose files are gone or now left out; a document whose own
    file is gone but whose copy is not moves to the copy."""
    resolved = [Rules(_resolved(r.root), r.exclude, r.hidden) for r in rules]
    for copy in library.copies(db):
        if _gone(copy, resolved):
            library.delete_copy(db, copy["source"])
            report.removed.append(copy["path"])
    surviving: dict[int, dict] = {}
    for copy in library.copies(db):
        surviving.setdefault(copy["document_id"], copy)
    for document in library.documents(db):
        if not _gone(document, resolved):
            continue
        if (kept := surviving.get(document["id"])) is not None:
            library.move_document(
                db,
                document["id"],
                FileName(kept["source"], kept["source_bytes"], kept["path"], kept["root"]),
                document["mtime"],
            )
            report.moved.append((document["path"], kept["path"]))
        else:
            library.delete_document(db, document["id"])
            report.removed.append(document["path"])


def reembed(
    db: Database, embedder: Embedder, progress: Progress, report: IngestReport, batch: int
) -> None:
    """Re-embed every chunk with the current model; swapped in one transaction at the end."""
    rows = list(library.all_chunk_texts(db))
    progress.chunks(len(rows))
    texts = [_stored_embedding_text(title, heading, text) for _, _, title, heading, text in rows]
    embedded = embed_in_order(embedder, texts, batch, progress)
    with write(db):
        vectors.ensure_vector_table(db, embedder.model_id, embedder.dim, reset=True)
        keywords.clear_keyword_vectors(db)
        if rows:
            vectors.put_vectors(db, [row[0] for row in rows], embedded)
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
    exclude: Sequence[str] = (),
    hidden: bool = False,
    name: str | None = None,
    command: str = "ragchat ingest",
) -> IngestReport:
    """Bring the library in line with `paths`. The embedder is loaded only if something needs
    it. Symlinks met in folders are followed only inside `paths`, unless `follow_symlinks`.
    Folders leave out what their ignore files, `exclude` and the globs remembered with them
    say (see ignore.py). Each folder is a collection, named after it unless `name` (one path
    only) says otherwise. `command`: how the notes write the command that does what they advise
    (the CLI's with the `--db` it was given, so the advice goes into the same library)."""
    progress = progress or NoProgress()
    report = IngestReport()
    if not reembed_all:
        vectors.check_model(db, settings.embedding_model)
    excluded = {Path(settings.db).resolve().parent}
    given = [Path(p) for p in paths]
    named = _collection_names(db, given, name)
    rules = {path: _rules(db, path, exclude, hidden) for path in given if _is_dir(path)}
    found = discover(given, excluded, report, follow_symlinks, rules)
    progress.files(len(found))
    if reembed_all:
        reembed(db, load_embedder(), progress, report, settings.embed_batch)
    parser = _Parser(db, found, settings, report, progress)
    parser.start()
    try:
        _write_all(db, load_embedder, parser, settings, progress, report)
    except KeyboardInterrupt:  # every document written so far is whole; stop here, keep them
        report.interrupted = True
    finally:
        parser.stop()
        library.name_new_collections(db, named)
    _forget_not_documents(db, parser.not_documents, report)
    if report.interrupted:
        if report.added or report.updated or report.reparsed:
            refresh_keywords(db)
        return report
    if prune_missing:
        prune(db, report, rules.values())
    else:
        report.gone = [
            row["path"] for row in [*library.documents(db), *library.copies(db)] if not _exists(row)
        ]
    series = release_series(library.documents_titled(db))  # a library of an older ragchat too
    # each advice's command reads what this one read and what the other advises reading: typed
    # one after the other, the second must not undo the first (leaving the release notes out
    # with the folder alone dropped the files the pages include, read the run before)
    reading = [*given, *_outside_files(report)]
    if library.set_kind_of(db, RELEASE_SERIES, series) or report.release_notes:
        report.notes += _release_notes_note(db, reading, command, report)
    report.notes += _outside_includes_note(report, given, command)
    report.notes += _generated_note(report)
    for path, shown in report.unsupported.items():  # read where a page includes it, else skipped
        if _resolved(path) in report.included:
            report.left_out.append((shown, FRAGMENT))
        else:
            why = f"unsupported file type {shown_name(path.suffix) or '(none)'}"
            report.skipped.append((shown, why))
    if report.added or report.updated or report.reparsed:
        set_setting(
            db, "parser_version", str(PARSER_VERSION)
        )  # the parser that last wrote documents
    if (
        report.added
        or report.updated
        or report.reparsed
        or report.removed
        or keywords.missing_keywords(db)
    ):
        refresh_keywords(db)
    missing = keywords.keywords_without_vectors(db)
    if missing:
        keywords.put_keyword_vectors(db, missing, load_embedder().embed(missing))
    vectors.index_of(db).refresh()  # a large library's compact index, rebuilt here if stale
    if not report.ok:
        raise IngestError(_nothing_read(report))
    return report


def _forget_not_documents(db: Database, sources: list[str], report: IngestReport) -> None:
    """Fragments and templates an older ragchat stored as documents leave the library."""
    for source in sources:
        if (old := library.document_by_source(db, source)) is not None:
            library.delete_document(db, old["id"])
            report.removed.append(old["path"])


def _outside_files(report: IngestReport) -> list[Path]:
    """The files outside the paths given that pages include, most included first."""
    included_by = {path: pages for path, (_, pages) in report.outside_includes.items()}
    return sorted(included_by, key=lambda path: (-len(included_by[path]), str(path)))


def _release_notes_note(
    db: Database, given: list[Path], command: str, report: IngestReport
) -> list[str]:
    """One line when release notes hold NOTICE_SHARE or more of the library's chunks: the share,
    and the command that leaves them out: the `--exclude` with every path `given` (the paths
    read, and those the pages include from outside them) but a file only the release notes
    include (webargs' `changelog.rst` is `.. include:: ../CHANGELOG.rst`: given on its own, the
    file would come back as a document of release notes)."""
    rows = library.documents(db)
    total = sum(row["chunk_count"] or 0 for row in rows)
    notes = [row for row in rows if row.get("kind") in RELEASE_KINDS]
    left_out = {row["path"] for row in notes}

    def only_in_notes(path: Path) -> bool:
        pages = set(report.included_by.get(_resolved(path), ()))
        pages |= set(report.outside_includes.get(path, ("", []))[1])
        return bool(pages) and pages <= left_out

    given = [path for path in given if not only_in_notes(path)]
    share = sum(row["chunk_count"] or 0 for row in notes) / total if total else 0.0
    if share < NOTICE_SHARE:
        return []
    globs = " ".join(
        f"--exclude {shlex.quote(row['path'] if '/' in row['path'] else '/' + row['path'])}"
        for row in notes
    )
    where = " ".join(shlex.quote(str(path)) for path in given) or "FOLDER"
    return [
        f"release notes are {share:.0%} of the library's chunks ({len(notes)} document(s)); "
        f"they rank below other pages unless a question names a version or a date; to leave "
        f"them out: {command} {where} {globs} --prune"
    ]


def _outside_includes_note(report: IngestReport, given: list[Path], command: str) -> list[str]:
    """One line when pages include files outside the paths given (a Sphinx index's `..
    include:: ../README.md`): each include is one line naming it, and the command that reads
    them (the paths given, then those files)."""
    if not report.outside_includes:
        return []
    files = _outside_files(report)
    named = [
        f"{included} (in {', '.join(sorted(set(pages))[:2])}"
        f"{', ...' if len(set(pages)) > 2 else ''})"
        for included, pages in (report.outside_includes[path] for path in files)
    ]
    read = " ".join(shlex.quote(str(path)) for path in [*given, *files])
    return [
        f"pages include {len(files)} file(s) outside the paths given, each shown as one line "
        f"naming it: {some_of(named, 3, '; ')}; to read them: {command} {read}"
    ]


def _generated_note(report: IngestReport) -> list[str]:
    """One line when pages read this run have the site's build write reference from the code
    (`.. autoclass::`, `::: pkg.module`, `.. sphinx_argparse_cli::`): a question about it finds
    only what the pages' own files say."""
    if not report.generated:
        return []
    return [
        f"{len(report.generated)} page(s) have the site's build write reference from the code "
        "(autodoc, mkdocstrings, a command-line reference); it is not in their files, so not in "
        f"the library: {some_of(sorted(report.generated), 3)}"
    ]


def _collection_names(db: Database, given: Sequence[Path], name: str | None) -> dict[str, str]:
    """{the folder's root as stored: the name given}, checked before anything is read."""
    if name is None:
        return {}
    if len(given) != 1:
        raise IngestError("--name names one folder's collection: give one PATH with it")
    folder = given[0] if given[0].is_dir() else given[0].parent
    wanted = {shown_name(str(_resolved(folder))): name}
    library.check_wanted_names(db, wanted)
    return wanted


def _rules(db: Database, folder: Path, exclude: Sequence[str], hidden: bool) -> Rules:
    """The folder's rules: the globs remembered with it plus the new ones (remembered
    from now on)."""
    patterns = library.remember_excludes(db, str(_resolved(folder)), exclude)
    return Rules(folder, tuple(patterns), hidden)


def _nothing_read(report: IngestReport) -> str:
    if not report.skipped:
        return "no supported files found (.md .markdown .txt .rst .html .htm .pdf .docx)"
    path, reason = report.skipped[0]
    return (
        f"nothing could be ingested: {len(report.skipped)} file(s) skipped (first: {path}: "
        f"{reason})"
    )
