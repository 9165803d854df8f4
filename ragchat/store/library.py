"""Documents, chunks and their FTS5 rows (their vectors: `vectors.py`; keywords: `keywords.py`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import PurePath
from typing import TYPE_CHECKING

from sqlite_utils import Database

from ..errors import StoreError
from ..lazy import lazy_module
from .titles import index_title
from .transaction import get_setting, set_setting, write
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
    kind: str | None = None  # "release-notes" by shape ("release-series": set after writing)


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
    collection: str = ""  # the collection (ingested folder) it belongs to
    source: str = ""  # the absolute path of its document's file
    opens_section: bool = False  # the first chunk under its heading (the one before is another's)
    closes_section: bool = False  # the last chunk under its heading (the one after is another's)


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
            "kind": record.kind,
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


def more_documents_than(db: Database, count: int) -> bool:
    """The library holds more than `count` documents (counted no further than one past them)."""
    query = "SELECT count(*) FROM (SELECT 1 FROM documents LIMIT ?)"
    return db.execute(query, [count + 1]).fetchone()[0] > count


def _place(t: str) -> str:
    """SQL for a document's (or copy's, table alias `t`) path as shown: `collection:path` when
    another document or copy has the same path (two folders' README.md), else the path."""
    return (
        f"CASE WHEN EXISTS (SELECT 1 FROM documents o WHERE o.path = {t}.path AND o.source != "
        f"{t}.source) OR EXISTS (SELECT 1 FROM document_copies o WHERE o.path = {t}.path AND "
        f"o.source != {t}.source) THEN {_collection(t)} || ':' || {t}.path ELSE {t}.path END"
    )


def _collection(t: str) -> str:
    return f"coalesce((SELECT k.name FROM collections k WHERE k.root = {t}.root), {t}.root)"


# a document's path as results show it: with the paths of its copies, so one content is one result
SHOWN_PATH = (
    f"{_place('d')} || coalesce((SELECT ' (also ' || group_concat(p.shown, ', ') || ')' FROM "
    f"(SELECT {_place('c')} AS shown FROM document_copies c WHERE c.document_id = d.id "
    "ORDER BY c.path) p), '')"
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


def placed_paths(db: Database, document_ids: Iterable[int]) -> dict[int, str]:
    """Documents' paths as shown (`collection:path` where another document reads the same)."""
    wanted = sorted(set(document_ids))
    marks = ",".join("?" * len(wanted)) or "NULL"
    return dict(
        db.execute(f"SELECT d.id, {_place('d')} FROM documents d WHERE d.id IN ({marks})", wanted)
    )


def chunks_by_ids(
    db: Database, ids: Iterable[int], within: Scope | None = None
) -> dict[int, StoredChunk]:
    """The chunks of `ids` that exist; placed as `within` shows them (see `Scope.placed`)."""
    found = _chunks_by_ids(db, ids)
    if within is None or not within.copies:
        return found
    return {chunk_id: within.placed(chunk) for chunk_id, chunk in found.items()}


def _chunks_by_ids(db: Database, ids: Iterable[int]) -> dict[int, StoredChunk]:
    wanted = sorted(set(ids))
    rows: list[tuple] = []
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        rows += db.execute(
            "SELECT c.id, c.document_id, c.heading, c.text, c.ordinal, c.page_start, c.page_end, "
            "NOT EXISTS (SELECT 1 FROM chunks b WHERE b.document_id = c.document_id "
            "AND b.ordinal = c.ordinal - 1 AND b.heading IS c.heading), "
            "NOT EXISTS (SELECT 1 FROM chunks a WHERE a.document_id = c.document_id "
            "AND a.ordinal = c.ordinal + 1 AND a.heading IS c.heading) "
            f"FROM chunks c WHERE c.id IN ({marks})",
            part,
        ).fetchall()
    # each document's place, title and collection once (a turn's chunks share few documents)
    documents = _shown_documents(db, {row[1] for row in rows})
    found: dict[int, StoredChunk] = {}
    for chunk_id, document_id, heading, text, ordinal, page_start, page_end, opens, closes in rows:
        path, title, collection, source = documents[document_id]
        found[chunk_id] = StoredChunk(
            chunk_id, document_id, path, title, heading, text, ordinal, page_start, page_end,
            collection, source, bool(opens), bool(closes),
        )  # fmt: skip
    return found


def _shown_documents(db: Database, document_ids: set[int]) -> dict[int, tuple]:
    """{document id: (path as shown, title, collection, source)}."""
    wanted = sorted(document_ids)
    found: dict[int, tuple] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        for row in db.execute(
            f"SELECT d.id, {SHOWN_PATH}, d.title, {_collection('d')}, d.source FROM documents d "
            f"WHERE d.id IN ({marks})",
            part,
        ):
            found[row[0]] = row[1:]
    return found


def documents_of_kind(db: Database, document_ids: Iterable[int], kinds: Iterable[str]) -> set[int]:
    """Those of `document_ids` whose documents are of one of `kinds`."""
    wanted = sorted(set(document_ids))
    wanted_kinds = sorted(set(kinds))
    found: set[int] = set()
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        of_kind = ",".join("?" * len(wanted_kinds))
        sql = f"SELECT id FROM documents WHERE kind IN ({of_kind}) AND id IN ({marks})"
        found.update(row[0] for row in db.execute(sql, [*wanted_kinds, *part]))
    return found


def documents_titled(db: Database) -> list[tuple[int, str, str]]:
    """Every document's id, source path and title."""
    return [tuple(row) for row in db.execute("SELECT id, source, title FROM documents")]


def set_kind_of(db: Database, kind: str, document_ids: Iterable[int]) -> set[int]:
    """Exactly `document_ids` are of `kind` (a kind decided across documents, after they are
    written): others lose it, and these take it unless they have a kind of their own. Returns
    the documents that were not of `kind` before."""
    ids = sorted(set(document_ids))
    with write(db):
        before = {row[0] for row in db.execute("SELECT id FROM documents WHERE kind = ?", [kind])}
        db.execute("UPDATE documents SET kind = NULL WHERE kind = ?", [kind])
        for start in range(0, len(ids), 500):
            part = ids[start : start + 500]
            marks = ",".join("?" * len(part))
            db.execute(
                f"UPDATE documents SET kind = ? WHERE kind IS NULL AND id IN ({marks})",
                [kind, *part],
            )
        now = {row[0] for row in db.execute("SELECT id FROM documents WHERE kind = ?", [kind])}
    return now - before


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


def fts_search_holding(
    db: Database, scored: str, common: str, limit: int, bound: float | None = None
) -> list[tuple[int, float]]:
    """The best `limit` chunks for `scored OR common` (safe MATCH expressions) among the chunks
    holding a `scored` term, by the same BM25 scores as that whole query: those that hold a
    `common` term too and those that hold none, each scored with every query term (BM25 is a sum
    over the terms; a term a chunk lacks adds nothing), so FTS5 scores only the chunks of the
    scored terms. `bound`: more than any score a chunk holding no `common` term can get; when
    the `limit` best chunks holding one all score more, the others are not searched at all."""
    found = fts_search(db, f"({scored}) AND ({common})", limit)
    if bound is not None and 0 < limit <= len(found) and -max(s for _, s in found) > bound:
        found.sort(key=lambda hit: (hit[1], hit[0]))
        return found[:limit]
    found += fts_search(db, f"({scored}) NOT ({common})", limit)
    found.sort(key=lambda hit: (hit[1], hit[0]))
    return found[:limit]


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


def fts_holds(db: Database, match: str) -> bool:
    """Whether some chunk holds a (safe) MATCH expression: the first row, not a count of all."""
    found = db.execute("SELECT 1 FROM chunks_fts WHERE chunks_fts MATCH ? LIMIT 1", [match])
    return found.fetchone() is not None


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
        f"SELECT {_place('d')}, d.title FROM documents d WHERE d.id = ?", [document_id]
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


def outline(db: Database, document_id: int) -> list[tuple[int, str, str]]:
    """A document's chunks in reading order, as (chunk id, heading path, text)."""
    rows = db.execute(
        "SELECT id, heading, text FROM chunks WHERE document_id = ? ORDER BY ordinal",
        [document_id],
    ).fetchall()
    return [(int(i), heading or "", text or "") for i, heading, text in rows]


def section_neighbours(db: Database, chunk_ids: Iterable[int]) -> dict[int, tuple[int, ...]]:
    """Per chunk: the ids of the chunks right before and after it in its document (ordinal -1,
    +1) under the same heading, the one before first."""
    wanted = sorted(set(chunk_ids))
    found: dict[int, tuple[int, ...]] = {}
    for start in range(0, len(wanted), 500):
        part = wanted[start : start + 500]
        marks = ",".join("?" * len(part))
        rows = db.execute(
            "SELECT c.id, n.id FROM chunks c JOIN chunks n ON n.document_id = c.document_id "
            "AND n.ordinal IN (c.ordinal - 1, c.ordinal + 1) AND n.heading IS c.heading "
            f"WHERE c.id IN ({marks}) ORDER BY c.id, n.ordinal",
            part,
        ).fetchall()
        for chunk_id, neighbour in rows:
            found[chunk_id] = (*found.get(chunk_id, ()), neighbour)
    return found


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


# --- collections: each ingested folder (a document's `root`), under a name -----------------------

RESERVED_NAMES = ("all",)  # `/in all` and `--in all` mean every collection


@dataclass(frozen=True)
class Collection:
    id: int
    name: str
    root: str
    documents: int  # documents and copies under it
    chunks: int
    created_at: str

    def to_dict(self) -> dict[str, object]:
        """The collection as `collections --json` gives it."""
        return {
            "name": self.name,
            "folder": self.root,
            "documents": self.documents,
            "chunks": self.chunks,
            "created_at": self.created_at,
        }


def collections(db: Database) -> list[Collection]:
    """Every collection by name, with how many documents (copies included) and chunks it holds."""
    return [
        Collection(*row)
        for row in db.execute(
            "SELECT k.id, k.name, k.root, (SELECT count(*) FROM documents d WHERE d.root = k.root)"
            " + (SELECT count(*) FROM document_copies c WHERE c.root = k.root), (SELECT "
            "coalesce(sum(d.chunk_count), 0) FROM documents d WHERE d.root = k.root), "
            "k.created_at FROM collections k ORDER BY k.name"
        )
    ]


def collection_named(db: Database, name: str) -> Collection | None:
    return next((c for c in collections(db) if c.name == name), None)


def check_collection_name(name: str) -> None:
    if not name.strip() or name != name.strip():
        raise StoreError(f"a collection name needs visible text without spaces around it: {name!r}")
    if any(ch in name for ch in "\n\r\t") or not name.isprintable():
        raise StoreError(f"a collection name is one line of printable text, not {name!r}")
    if name in RESERVED_NAMES:
        raise StoreError(f"{name!r} is reserved (`--in {name}` means every collection)")


def _free_name(db: Database, root: str) -> str:
    """A new folder's collection name: the folder's name; when another collection has it (two
    projects' `docs`), the parent folder's name before it (`markupsafe-docs`); then `-2`, `-3`."""
    taken = {row[0] for row in db.execute("SELECT name FROM collections")} | set(RESERVED_NAMES)
    folder = PurePath(root)

    def clean(name: str) -> str:
        return "".join(ch for ch in name if ch.isprintable()).strip()

    base = clean(folder.name) or "folder"
    parent = clean(folder.parent.name)
    for candidate in (base, f"{parent}-{base}" if parent else base):
        if candidate not in taken:
            return candidate
    return next(f"{base}-{n}" for n in range(2, len(taken) + 3) if f"{base}-{n}" not in taken)


def check_wanted_names(db: Database, wanted: dict[str, str]) -> None:
    """Each name the user gives a folder is valid and not another folder's."""
    for root, name in wanted.items():
        check_collection_name(name)
        holder = db.execute("SELECT root FROM collections WHERE name = ?", [name]).fetchone()
        if holder is not None and holder[0] != root:
            raise StoreError(
                f"collection {name!r} is another folder's ({holder[0]}): choose another --name"
            )


def name_new_collections(db: Database, wanted: dict[str, str]) -> None:
    """A collection for every folder documents were ingested from that has none, named after the
    folder (`name-2` when taken); `wanted` maps a folder (root) to the name the user gave it (a
    known folder is renamed). A name another folder holds is refused."""
    check_wanted_names(db, wanted)
    with write(db):
        for root, name in wanted.items():
            db.execute("UPDATE collections SET name = ? WHERE root = ?", [name, root])
        roots = [
            row[0]
            for row in db.execute(
                "SELECT root FROM documents UNION SELECT root FROM document_copies ORDER BY 1"
            )
        ]
        known = {row[0] for row in db.execute("SELECT root FROM collections")}
        for root in dict.fromkeys([*wanted, *roots]):
            if root and root not in known:
                name = wanted.get(root) or _free_name(db, root)
                db.execute(
                    "INSERT INTO collections(name, root, created_at) VALUES (?, ?, ?)",
                    [name, root, now()],
                )
                known.add(root)


def rename_collection(db: Database, old: str, new: str) -> None:
    found = collection_named(db, old)
    if found is None:
        raise StoreError(f"no collection named {old!r} (`ragchat collections` lists them)")
    check_collection_name(new)
    if new == old:
        return
    if collection_named(db, new) is not None:
        raise StoreError(f"a collection named {new!r} exists already")
    with write(db):
        db.execute("UPDATE collections SET name = ? WHERE id = ?", [new, found.id])


def forget_collection(db: Database, collection_id: int) -> None:
    """The collection's row (its documents are removed first, by the caller)."""
    with write(db):
        db.execute("DELETE FROM collections WHERE id = ?", [collection_id])


@dataclass(frozen=True)
class Scope:
    """The collections a question is asked in: their documents (a copy under one of them brings
    its document in) and those documents' chunks, sorted."""

    names: tuple[str, ...]
    document_ids: frozenset[int]
    chunk_ids: tuple[int, ...]
    # documents in scope through a copy only: (collection, place shown, source) of that copy
    copies: dict[int, tuple[str, str, str]] = field(default_factory=dict, compare=False)

    def placed(self, chunk: StoredChunk) -> StoredChunk:
        """A chunk as the scope shows it: a document stored under another collection but copied
        into this one reads as its copy here (`mine:changes.rst (also other:changes.rst)`)."""
        copy = self.copies.get(chunk.document_id)
        if copy is None:
            return chunk
        collection, shown, source = copy
        return replace(chunk, path=shown, collection=collection, source=source)


def scope(db: Database, collection_ids: Sequence[int]) -> Scope:
    wanted = sorted(set(collection_ids))
    marks = ",".join("?" * len(wanted)) or "NULL"
    rows = db.execute(
        f"SELECT name, root FROM collections WHERE id IN ({marks}) ORDER BY name", wanted
    ).fetchall()
    roots = [row[1] for row in rows]
    held = ",".join("?" * len(roots)) or "NULL"
    documents = {
        row[0]
        for row in db.execute(
            f"SELECT id FROM documents WHERE root IN ({held}) UNION "
            f"SELECT document_id FROM document_copies WHERE root IN ({held})",
            [*roots, *roots],
        )
    }
    copies = {
        row[0]: (row[1], f"{row[2]} (also {row[3]})", row[4])
        for row in db.execute(
            f"SELECT c.document_id, {_collection('c')}, {_place('c')}, {_place('d')}, c.source "
            "FROM document_copies c JOIN documents d ON d.id = c.document_id "
            f"WHERE c.root IN ({held}) AND d.root NOT IN ({held}) ORDER BY c.path DESC",
            [*roots, *roots],
        )
    }
    return Scope(
        tuple(row[0] for row in rows),
        frozenset(documents),
        tuple(sorted(chunk_ids_of_documents(db, documents))),
        copies,
    )


# --- the documents as listed, and removing them --------------------------------------------------


@dataclass(frozen=True)
class Listed:
    """A document (or a copy: another path holding its content) as `ragchat documents` lists it."""

    document_id: int
    collection: str
    path: str
    title: str
    chunks: int
    pages: int | None
    ingested_at: str
    source: str  # the absolute path of the file
    copy_of: str | None = None  # a copy: the path of the document it repeats

    def to_dict(self) -> dict[str, object]:
        """The row as `documents --json` and the MCP server's `documents` tool give it."""
        return {
            "collection": self.collection,
            "path": self.path,
            "title": self.title,
            "chunks": self.chunks,
            "pages": self.pages,
            "ingested_at": self.ingested_at,
            "document_id": self.document_id,
            "absolute_path": self.source,
            "copy_of": self.copy_of,
        }


def listed_documents(db: Database) -> list[Listed]:
    """Every document and copy, by collection and path."""
    rows = [
        Listed(*row)
        for row in db.execute(
            f"SELECT d.id, {_collection('d')}, d.path, coalesce(d.title, ''), d.chunk_count, "
            "(SELECT max(coalesce(c.page_end, c.page_start)) FROM chunks c WHERE c.document_id "
            "= d.id), d.ingested_at, d.source FROM documents d"
        )
    ]
    rows += [
        Listed(*row)
        for row in db.execute(
            f"SELECT d.id, {_collection('c')}, c.path, coalesce(d.title, ''), d.chunk_count, "
            "(SELECT max(coalesce(x.page_end, x.page_start)) FROM chunks x WHERE x.document_id "
            f"= d.id), d.ingested_at, c.source, {_place('d')} FROM document_copies c "
            "JOIN documents d ON d.id = c.document_id"
        )
    ]
    return sorted(rows, key=lambda row: (row.collection, row.path, row.source))
