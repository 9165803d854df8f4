"""Documents, chunks and their FTS5 rows (their vectors: `vectors.py`; keywords: `keywords.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from sqlite_utils import Database

from ..lazy import lazy_module
from .db import get_setting, set_setting, write
from .vectors import VECTOR_TABLE, has_vectors, to_blob, vectors_changed

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: not every command needs it

# FTS5 cannot use `rowid IN (...)` (it scores every match, then filters) but seeks rowid ranges:
# a search among some chunks asks for at most this many ranges of their ids
MAX_FTS_RANGES = 8


@dataclass(frozen=True)
class DocumentRecord:
    source: str
    path: str
    root: str
    title: str
    content_hash: str
    size: int
    mtime: float
    encoding: str
    term_counts: dict[str, int]
    parser_version: int = 0
    source_bytes: bytes | None = None  # the file name's bytes when `source` escapes them


@dataclass(frozen=True)
class ChunkRecord:
    ordinal: int
    text: str
    heading: str
    start_char: int
    end_char: int
    page_start: int | None = None
    page_end: int | None = None


@dataclass(frozen=True)
class StoredChunk:
    id: int
    document_id: int
    path: str
    title: str
    heading: str
    text: str
    ordinal: int
    page_start: int | None = None
    page_end: int | None = None


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


# --- documents ---------------------------------------------------------------------------------


def document_by_source(db: Database, source: str) -> dict | None:
    rows = list(db["documents"].rows_where("source = ?", [source], limit=1))
    return rows[0] if rows else None


def documents(db: Database) -> list[dict]:
    return list(db["documents"].rows_where(order_by="path"))


def documents_by_ids(db: Database, ids: Iterable[int]) -> dict[int, dict]:
    wanted = sorted(set(ids))
    if not wanted:
        return {}
    marks = ",".join("?" * len(wanted))
    return {row["id"]: row for row in db["documents"].rows_where(f"id IN ({marks})", wanted)}


def _delete_document_rows(db: Database, document_id: int) -> None:
    ids = [
        row[0] for row in db.execute("SELECT id FROM chunks WHERE document_id = ?", [document_id])
    ]
    for start in range(0, len(ids), 500):
        part = ids[start : start + 500]
        marks = ",".join("?" * len(part))
        db.execute(f"DELETE FROM chunks_fts WHERE rowid IN ({marks})", part)
        if has_vectors(db):
            db.execute(f"DELETE FROM {VECTOR_TABLE} WHERE chunk_id IN ({marks})", part)
    if ids and has_vectors(db):
        vectors_changed(db)
    db.execute("DELETE FROM chunks WHERE document_id = ?", [document_id])


def delete_document(db: Database, document_id: int) -> None:
    with write(db):
        _delete_document_rows(db, document_id)
        db.execute("DELETE FROM document_copies WHERE document_id = ?", [document_id])
        db.execute("DELETE FROM documents_fts WHERE rowid = ?", [document_id])
        db.execute("DELETE FROM documents WHERE id = ?", [document_id])


@dataclass(frozen=True)
class FileName:
    """Where a document's file is: its identity (`source`), its bytes if escaped, as shown."""

    source: str
    source_bytes: bytes | None
    path: str
    root: str


def move_document(db: Database, document_id: int, to: FileName, mtime: float) -> None:
    """The document's file moved (same content): same row, chunks, vectors and ids; new name."""
    with write(db):
        db.execute("DELETE FROM document_copies WHERE source = ?", [to.source])
        db.execute(
            "UPDATE documents SET source = ?, source_bytes = ?, path = ?, root = ?, mtime = ? "
            "WHERE id = ?",
            [to.source, to.source_bytes, to.path, to.root, mtime, document_id],
        )
        title = db.execute("SELECT title FROM documents WHERE id = ?", [document_id]).fetchone()[0]
        index_title(db, document_id, title, to.path)  # found by its new name


def add_copy(db: Database, document_id: int, name: FileName) -> None:
    """Another file with the document's exact content: remembered, not stored or embedded again."""
    with write(db):
        db.execute(
            "INSERT INTO document_copies(source, source_bytes, document_id, path, root) VALUES "
            "(?, ?, ?, ?, ?) ON CONFLICT(source) DO UPDATE SET document_id = "
            "excluded.document_id, path = excluded.path, root = excluded.root, source_bytes = "
            "excluded.source_bytes",
            [name.source, name.source_bytes, document_id, name.path, name.root],
        )


def delete_copy(db: Database, source: str) -> None:
    with write(db):
        db.execute("DELETE FROM document_copies WHERE source = ?", [source])


def copies(db: Database) -> list[dict]:
    """Every copy, with the document's content hash, by path."""
    return [
        dict(zip(("source", "source_bytes", "document_id", "path", "root", "content_hash"), row))
        for row in db.execute(
            "SELECT c.source, c.source_bytes, c.document_id, c.path, c.root, d.content_hash "
            "FROM document_copies c JOIN documents d ON d.id = c.document_id ORDER BY c.path"
        )
    ]


def replace_document(
    db: Database, record: DocumentRecord, chunks: Sequence[ChunkRecord], vectors: np.ndarray
) -> int:
    """Write one document with its chunks, FTS rows and vectors in one transaction, replacing any
    earlier version: a crash leaves either the old document whole or the new one whole."""
    assert len(chunks) == len(vectors), "one vector per chunk"
    with write(db):
        old = document_by_source(db, record.source)
        if old:
            _delete_document_rows(db, old["id"])
            if old["content_hash"] != record.content_hash:  # its copies hold the old content
                db.execute("DELETE FROM document_copies WHERE document_id = ?", [old["id"]])
        values = {
            "source": record.source,
            "source_bytes": record.source_bytes,
            "path": record.path,
            "root": record.root,
            "title": record.title,
            "content_hash": record.content_hash,
            "size": record.size,
            "mtime": record.mtime,
            "encoding": record.encoding,
            "term_counts": json.dumps(record.term_counts),
            "chunk_count": len(chunks),
            "ingested_at": now(),
            "keywords": old["keywords"] if old else "[]",
            "parser_version": record.parser_version,
        }
        if old:
            db.table("documents").update(old["id"], values)
            document_id = old["id"]
        else:
            document_id = (
                db.table("documents")
                .insert({"id": _next_ids(db, "documents", 1), **values})
                .last_pk
            )
        _insert_chunks(db, document_id, record.title, chunks, vectors)
        index_title(db, int(document_id), record.title, record.path)
    return int(document_id)


def index_title(db: Database, document_id: int, title: str, path: str) -> None:
    """A document's title and file name in `documents_fts`, for finding documents by name."""
    from ..search.titles import indexed_text, name_words

    db.execute("DELETE FROM documents_fts WHERE rowid = ?", [document_id])
    db.execute(
        "INSERT INTO documents_fts(rowid, title, name) VALUES (?, ?, ?)",
        [document_id, indexed_text(title or ""), name_words(path)],
    )


def titled_documents(db: Database) -> int | None:
    """How many documents the title index holds (None: a database from before it)."""
    if not db["documents_fts"].exists():
        return None
    return db.execute("SELECT count(*) FROM documents_fts").fetchone()[0]


def title_holders(db: Database, match: str) -> set[int]:
    """The ids of the documents whose title or file name matches an FTS5 MATCH expression."""
    rows = db.execute("SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?", [match])
    return {row[0] for row in rows}


def documents_at(db: Database, name: str) -> set[int]:
    """The ids of the documents whose path, or a copy's path, is `name` or ends with "/name"."""
    suffix = "%/" + name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    rows = db.execute(
        "SELECT id FROM documents WHERE path = ? OR path LIKE ? ESCAPE '\\' UNION "
        "SELECT document_id FROM document_copies WHERE path = ? OR path LIKE ? ESCAPE '\\'",
        [name, suffix, name, suffix],
    )
    return {row[0] for row in rows}


def _next_ids(db: Database, table: str, count: int) -> int:
    """The first of `count` fresh ids for `table`, never reusing the id of a deleted row (lineage
    of old turns names chunks and documents by id; a reused id would point at other content)."""
    key = f"{table}_high_water"
    current = db.execute(f"SELECT coalesce(max(id), 0) FROM {table}").fetchone()[0]
    first = max(int(get_setting(db, key) or 0), current) + 1
    set_setting(db, key, str(first + count - 1))
    return first


def _insert_chunks(
    db: Database, document_id: int, title: str, chunks: Sequence[ChunkRecord], vectors: np.ndarray
) -> None:
    first = _next_ids(db, "chunks", len(chunks))
    ids = range(first, first + len(chunks))
    db.conn.executemany(
        "INSERT INTO chunks(id, document_id, ordinal, text, heading, start_char, end_char, "
        "page_start, page_end) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (
                i,
                document_id,
                c.ordinal,
                c.text,
                c.heading,
                c.start_char,
                c.end_char,
                c.page_start,
                c.page_end,
            )
            for i, c in zip(ids, chunks)
        ],
    )
    db.conn.executemany(
        "INSERT INTO chunks_fts(rowid, title, heading, text) VALUES (?, ?, ?, ?)",
        [(i, title, c.heading, c.text) for i, c in zip(ids, chunks)],
    )
    db.conn.executemany(
        f"INSERT INTO {VECTOR_TABLE}(chunk_id, embedding) VALUES (?, ?)",
        [(i, to_blob(vector)) for i, vector in zip(ids, vectors)],
    )
    vectors_changed(db)


def all_chunk_texts(db: Database) -> Iterable[tuple[int, int, str, str, str]]:
    """(chunk id, document id, title, heading, text) of every chunk, for re-embedding."""
    yield from db.execute(
        "SELECT c.id, c.document_id, d.title, c.heading, c.text FROM chunks c "
        "JOIN documents d ON d.id = c.document_id ORDER BY c.id"
    )


def term_counts(db: Database) -> dict[int, dict[str, int]]:
    return {
        row[0]: json.loads(row[1] or "{}")
        for row in db.execute("SELECT id, term_counts FROM documents")
    }


# --- chunks and search -------------------------------------------------------------------------


def ingest_marks(db: Database) -> dict[int, tuple[str, str]]:
    """Per document id, (when it was last written, its path): what an ingest wrote
    is what changed."""
    return {
        row[0]: (row[1], row[2])
        for row in db.execute("SELECT id, ingested_at, path FROM documents")
    }


def chunk_count(db: Database) -> int:
    return db.execute("SELECT count(*) FROM chunks").fetchone()[0]


# a document's path as results show it: with the paths of its copies, so one content is one result
SHOWN_PATH = (
    "d.path || coalesce((SELECT ' (also ' || group_concat(p.path, ', ') || ')' FROM "
    "(SELECT path FROM document_copies WHERE document_id = d.id ORDER BY path) p), '')"
)


def shown_paths(db: Database) -> dict[str, str]:
    """Per path of a document that has copies, and per path of each copy: the document's path
    as results show it ("a.txt (also b.txt)"). A gold file stored as a copy is found as this."""
    return {
        row[0]: row[1]
        for row in db.execute(
            f"SELECT c.path, {SHOWN_PATH} FROM document_copies c JOIN documents d "
            "ON d.id = c.document_id UNION "
            f"SELECT d.path, {SHOWN_PATH} FROM documents d WHERE d.id IN "
            "(SELECT document_id FROM document_copies)"
        )
    }


def chunks_by_ids(db: Database, ids: Iterable[int]) -> dict[int, StoredChunk]:
    wanted = sorted(set(ids))
    found: dict[int, StoredChunk] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in db.execute(
            f"SELECT c.id, c.document_id, {SHOWN_PATH}, d.title, c.heading, c.text, c.ordinal, "
            "c.page_start, c.page_end FROM chunks c JOIN documents d ON d.id = c.document_id "
            f"WHERE c.id IN ({marks})",
            part,
        ):
            found[row[0]] = StoredChunk(*row)
    return found


def chunk_ids_of_documents(db: Database, document_ids: Iterable[int]) -> list[int]:
    wanted = sorted(set(document_ids))
    if not wanted:
        return []
    marks = ",".join("?" * len(wanted))
    return [
        row[0]
        for row in db.execute(f"SELECT id FROM chunks WHERE document_id IN ({marks})", wanted)
    ]


def fts_search(
    db: Database, match: str, limit: int, only_ids: Sequence[int] | None = None
) -> list[tuple[int, float]]:
    """(chunk id, bm25 score; lower is better) for an already-safe MATCH expression, optionally
    among some chunks only (their scores stay comparable: same query, same corpus statistics)."""
    select = (
        "SELECT rowid, bm25(chunks_fts, 2.0, 2.0, 1.0) AS score FROM chunks_fts WHERE "
        "chunks_fts MATCH ?"
    )
    if only_ids is None:
        return [
            (row[0], row[1])
            for row in db.execute(f"{select} ORDER BY score LIMIT ?", [match, limit])
        ]
    wanted = set(only_ids)
    found = [
        (row[0], row[1])
        for low, high in _id_ranges(wanted, MAX_FTS_RANGES)
        for row in db.execute(f"{select} AND rowid BETWEEN ? AND ?", [match, low, high])
        if row[0] in wanted
    ]
    found.sort(key=lambda hit: (hit[1], hit[0]))
    return found if limit < 0 else found[:limit]  # a negative LIMIT is no limit in SQLite


def _id_ranges(ids: Iterable[int], most: int) -> list[tuple[int, int]]:
    """Runs of consecutive ids (a document's chunks have consecutive ids), split only at the
    `most - 1` widest gaps, so at most `most` ranges cover them all."""
    runs: list[list[int]] = []
    for chunk_id in sorted(ids):
        if runs and chunk_id == runs[-1][1] + 1:
            runs[-1][1] = chunk_id
        else:
            runs.append([chunk_id, chunk_id])
    if not runs:
        return []
    gaps = sorted(range(len(runs) - 1), key=lambda i: runs[i + 1][0] - runs[i][1])
    ranges, start = [], 0
    for end in sorted(gaps[len(runs) - most :]) + [len(runs) - 1]:  # cut after the widest gaps
        ranges.append((runs[start][0], runs[end][1]))
        start = end + 1
    return ranges


def fts_chunk_frequency(db: Database, match: str) -> int:
    """In how many chunks a (safe, single-term) MATCH expression occurs: a stemmed df for idf."""
    return db.execute(
        "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [match]
    ).fetchone()[0]


def library_version(db: Database) -> tuple:
    """Changes whenever documents change: a cache key for corpus-level caches."""
    return tuple(
        db.execute("SELECT count(*), max(ingested_at), sum(chunk_count) FROM documents").fetchone()
    )


# --- what each ingested folder leaves out --------------------------------------------------------


def excludes(db: Database) -> dict[str, list[str]]:
    """The `--exclude` globs remembered with each ingested folder (by its absolute path)."""
    return json.loads(get_setting(db, "ingest_excludes") or "{}")


def remember_excludes(db: Database, root: str, added: Sequence[str]) -> list[str]:
    """The folder's remembered globs with `added` joined to them (kept for the next ingest)."""
    known = excludes(db)
    patterns = list(dict.fromkeys([*known.get(root, []), *added]))
    if patterns != known.get(root, []):
        with write(db):
            set_setting(db, "ingest_excludes", json.dumps({**known, root: patterns}))
    return patterns


# --- a whole section, to read a source in full ---------------------------------------------------


@dataclass(frozen=True)
class Section:
    chunk_id: int
    path: str
    title: str
    heading: str
    text: str  # the section's chunks joined, their overlaps removed
    page_start: int | None
    page_end: int | None


def section(db: Database, chunk_id: int) -> Section | None:
    """The section a chunk belongs to: the run of its document's consecutive chunks under the
    same heading, as one text (chunk text is `document[start:end]`, so overlaps are cut exactly)."""
    row = db.execute(
        "SELECT document_id, ordinal, heading FROM chunks WHERE id = ?", [chunk_id]
    ).fetchone()
    if row is None:
        return None
    document_id, ordinal, heading = row
    rows = db.execute(
        "SELECT ordinal, start_char, end_char, text, page_start, page_end, heading FROM chunks "
        "WHERE document_id = ? ORDER BY ordinal",
        [document_id],
    ).fetchall()
    run = _run_around(rows, ordinal, heading)
    document = db.execute(
        "SELECT path, title FROM documents WHERE id = ?", [document_id]
    ).fetchone()
    pages = [p for r in run for p in (r[4], r[5]) if p is not None]
    return Section(
        chunk_id,
        document[0],
        document[1] or "",
        heading or "",
        _joined(run),
        min(pages) if pages else None,
        max(pages) if pages else None,
    )


def _run_around(rows: list[tuple], ordinal: int, heading: str) -> list[tuple]:
    at = next(i for i, r in enumerate(rows) if r[0] == ordinal)
    start = end = at
    while start > 0 and rows[start - 1][6] == heading:
        start -= 1
    while end + 1 < len(rows) and rows[end + 1][6] == heading:
        end += 1
    return rows[start : end + 1]


def _joined(run: list[tuple]) -> str:
    text, reached = "", None
    for _, start, end, chunk_text, *_ in run:
        if reached is None:
            text = chunk_text
        elif start < reached:
            text += chunk_text[reached - start :]
        else:
            text += "\n\n" + chunk_text
        reached = end if reached is None else max(reached, end)
    return text
