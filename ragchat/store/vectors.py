"""The chunk vectors: the vec0 table, the model that made them, and vector search with its
in-memory copy, held by one explicit `VectorIndex` per connection (the app makes its own when it
opens the database and releases it in `App.close()`)."""

from __future__ import annotations

import uuid
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlite_utils import Database

from ..config import MAX_NEIGHBOURS
from ..errors import ModelMismatchError
from ..lazy import lazy_module
from ..params import SCALE
from . import compact
from .transaction import get_setting, set_setting, write

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: not every command needs it

VECTOR_TABLE = "chunk_vectors"
# Vector search keeps the vectors in memory (exact brute force with NumPy, ~5x faster than a vec0
# KNN) once a process has searched the same vectors this many times: a one-shot `ragchat ask`
# never pays for loading them, a chat session or an eval run does after its first search.
MEMORY_AFTER_SEARCHES = 2
# above this many bytes of float32 vectors the compact index (store/compact.py) serves searches
MEMORY_MAX_BYTES = SCALE.exact_max_bytes


def to_blob(vector: np.ndarray) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


# --- the embedding model ---------------------------------------------------------------------


def recorded_model(db: Database) -> tuple[str, int] | None:
    name, dim = get_setting(db, "embedding_model"), get_setting(db, "embedding_dim")
    return (name, int(dim)) if name and dim else None


def check_model(db: Database, model: str, dim: int | None = None) -> None:
    """Raise if the database's vectors come from another model than the configured one."""
    recorded = recorded_model(db)
    if recorded is None:
        return
    if recorded[0] != model or (dim is not None and recorded[1] != dim):
        shown = f"{model}" + (f" (dim {dim})" if dim else "")
        raise ModelMismatchError(
            f"this database was embedded with {recorded[0]} (dim {recorded[1]}) but the configured "
            f"model is {shown}; run `ragchat ingest --reembed PATH` to re-embed it with the new "
            f"model, or set embedding_model back to {recorded[0]}"
        )


def ensure_vector_table(db: Database, model: str, dim: int, *, reset: bool = False) -> None:
    """Record the model and create the vec0 table; `reset` drops all vectors (re-embedding)."""
    if not reset:
        check_model(db, model, dim)
    with write(db):
        if reset:
            db.execute(f"DROP TABLE IF EXISTS {VECTOR_TABLE}")
            vectors_changed(db)
        db.execute(
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {VECTOR_TABLE} USING vec0("
            f"chunk_id INTEGER PRIMARY KEY, embedding float[{int(dim)}] distance_metric=cosine)"
        )
        set_setting(db, "embedding_model", model)
        set_setting(db, "embedding_dim", str(dim))


def has_vectors(db: Database) -> bool:
    found = db.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [VECTOR_TABLE]
    )
    return found.fetchone() is not None


def vectors_changed(db: Database) -> None:
    """Every write to the vectors marks them with a fresh token (inside its transaction), so an
    in-memory copy in any process knows it is stale."""
    set_setting(db, "vectors_version", uuid.uuid4().hex)


def put_vectors(db: Database, ids: Sequence[int], vectors: np.ndarray) -> None:
    with write(db):
        for chunk_id, vector in zip(ids, vectors):
            db.execute(f"DELETE FROM {VECTOR_TABLE} WHERE chunk_id = ?", [chunk_id])
            db.execute(
                f"INSERT INTO {VECTOR_TABLE}(chunk_id, embedding) VALUES (?, ?)",
                [chunk_id, to_blob(vector)],
            )
        vectors_changed(db)


# --- search -------------------------------------------------------------------------------------


@dataclass
class _InMemory:
    """All chunk vectors of one version of a database, for exact brute-force search."""

    version: str
    searches: int = 0
    ids: np.ndarray | None = None  # sorted chunk ids
    matrix: np.ndarray | None = None  # their vectors, one row each, as stored
    inverse_norms: np.ndarray | None = None
    large: bool | None = None  # more vectors than exact in-memory search holds (then compact)
    quantised: compact.CompactIndex | None = None

    def load(self, db: Database) -> None:
        ids, blobs = [], []
        for chunk_id, blob in db.execute(f"SELECT chunk_id, embedding FROM {VECTOR_TABLE}"):
            ids.append(chunk_id)
            blobs.append(blob)
        if not ids:
            return
        matrix = np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(ids), -1)
        del blobs
        chunk_ids = np.asarray(ids, dtype=np.int64)
        if np.any(chunk_ids[1:] <= chunk_ids[:-1]):  # vec0 scans in rowid order; just in case
            order = np.argsort(chunk_ids, kind="stable")
            chunk_ids, matrix = chunk_ids[order], matrix[order]
        norms = np.linalg.norm(matrix, axis=1)
        if np.all(norms > 0):  # a zero vector has no cosine distance: leave those to vec0
            self.ids, self.matrix, self.inverse_norms = (
                chunk_ids,
                matrix,
                (1.0 / norms).astype(np.float32),
            )

    def nearest(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        assert self.matrix is not None and self.inverse_norms is not None and self.ids is not None
        query = np.asarray(vector, dtype=np.float32)
        # einsum, not `@`: as fast here on one thread, and it leaves BLAS's worker threads asleep
        # (awake, they spin for a while after each product and starve onnxruntime on 2 cores)
        dots = np.einsum("ij,j->i", self.matrix, query)
        distances = 1.0 - dots * self.inverse_norms / np.float32(np.linalg.norm(query))
        if limit < len(distances):
            top = np.argpartition(distances, limit - 1)[:limit]
        else:
            top = np.arange(len(distances))
        top = top[np.lexsort((self.ids[top], distances[top]))]
        return [(int(self.ids[i]), float(distances[i])) for i in top]

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        assert self.matrix is not None and self.ids is not None
        wanted = np.asarray(list(chunk_ids), dtype=np.int64)
        rows = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
        return {int(c): self.matrix[r].copy() for c, r in zip(wanted, rows) if self.ids[r] == c}


class VectorIndex:
    """Vector search over one database's chunk vectors: a vec0 KNN, or exact brute force over an
    in-memory copy once this process has searched the same vectors MEMORY_AFTER_SEARCHES times
    (a one-shot `ragchat ask` never pays for loading them, a chat session or an eval run does
    after its first search). The copy is dropped when the vectors change (`vectors_version`).
    A library above MEMORY_MAX_BYTES of vectors is searched through its compact index (bits and
    int8 codes, memory-mapped from a file beside the database) with the best candidates rescored
    exactly from the stored floats; the index is rebuilt when the vectors change."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._memory: _InMemory | None = None
        self.closed = False

    def close(self) -> None:
        """Drop the in-memory copy and leave the registry (`index_of` makes a new one if asked)."""
        self._memory = None
        self.closed = True
        if _INDEXES.get(self.db) is self:
            del _INDEXES[self.db]

    @property
    def loaded(self) -> bool:
        """Whether an in-memory copy is held (current or not; no database access)."""
        return self._memory is not None and self._memory.matrix is not None

    def in_memory(self, searching: bool = False) -> _InMemory | None:
        """The vectors in memory when they are loaded and current; loaded on the
        MEMORY_AFTER_SEARCHES-th search of one version of them (never inside a write transaction:
        it might roll back)."""
        db = self.db
        version = get_setting(db, "vectors_version") or ""
        held = self._memory
        if held is None or held.version != version:
            held = self._memory = _InMemory(version)
        if searching:
            held.searches += 1
            if (
                held.matrix is None
                and held.searches == MEMORY_AFTER_SEARCHES
                and not db.conn.in_transaction
                and not self._large(held)
            ):
                held.load(db)
        return held if held.matrix is not None and not db.conn.in_transaction else None

    def _large(self, held: _InMemory) -> bool:
        """Whether this version of the vectors is too large for exact in-memory search."""
        if held.large is None:
            count = self.db.execute("SELECT count(*) FROM chunks").fetchone()[0]
            dim = int(get_setting(self.db, "embedding_dim") or 0)
            held.large = count * dim * 4 > MEMORY_MAX_BYTES
        return held.large

    def refresh(self) -> None:
        """Bring a large library's compact index up to date now (the end of an ingest: the next
        question then does not wait for it); nothing for a small library."""
        self.in_memory(searching=False)
        self.compact_index()

    def compact_index(self, build: bool = True) -> compact.CompactIndex | None:
        """The current compact index of a large library (None for a small one, or inside a
        transaction): the file beside the database when it matches the vectors' version, else
        built now (and saved there when the folder can be written) unless `build` is False."""
        held = self._memory
        if held is None or self.db.conn.in_transaction or not self._large(held):
            return None
        if held.quantised is None or held.quantised.version != held.version:
            held.quantised = self._open_compact(held.version, build)
        return held.quantised if held.quantised and held.quantised.version == held.version else None

    def _open_compact(self, version: str, build: bool) -> compact.CompactIndex | None:
        db, path = self.db, compact.path_of(self.db)
        found = compact.load(path) if path is not None else None
        if (found is not None and found.version == version) or not build:
            return found
        dim = int(get_setting(db, "embedding_dim") or 0)
        db.execute("BEGIN")  # one snapshot: the version read is the version of the vectors read
        try:
            current = get_setting(db, "vectors_version") or ""
            return compact.build(db, VECTOR_TABLE, current, dim, path)
        finally:
            db.execute("COMMIT")

    def _compact_search(
        self, index: compact.CompactIndex, vector: np.ndarray, limit: int
    ) -> list[tuple[int, float]]:
        """The compact index's candidates, rescored exactly with their float vectors (from the
        index file; from vec0 for an index held in memory)."""
        rows = index.candidates(vector, max(SCALE.rescore, 2 * limit))
        if index.floats is not None:
            return index.rescore(rows, vector, limit)
        stored = self._stored([int(i) for i in index.ids[rows]])
        if not stored:
            return []
        ids = np.fromiter(stored, dtype=np.int64, count=len(stored))
        matrix = np.vstack(list(stored.values()))
        norms = np.linalg.norm(matrix, axis=1) * np.float32(np.linalg.norm(vector))
        dots = matrix @ np.asarray(vector, dtype=np.float32)
        distances = np.where(norms > 0, 1.0 - dots / np.where(norms > 0, norms, 1), 1.0)
        order = np.lexsort((ids, distances))[:limit]
        return [(int(ids[i]), float(distances[i])) for i in order]

    def _stored(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        found: dict[int, np.ndarray] = {}
        for start in range(0, len(chunk_ids), 500):  # within SQLite's bound on parameters
            part = chunk_ids[start : start + 500]
            rows = self.db.execute(
                f"SELECT chunk_id, embedding FROM {VECTOR_TABLE} WHERE chunk_id IN "
                f"({','.join('?' * len(part))})",
                part,
            )
            found.update((row[0], np.frombuffer(row[1], dtype=np.float32)) for row in rows)
        return found

    def search(self, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """(chunk id, cosine distance) of the nearest chunks, nearest first (exact either way)."""
        db = self.db
        if not has_vectors(db) or limit <= 0:
            return []
        limit = min(
            int(limit), MAX_NEIGHBOURS
        )  # sqlite-vec's own ceiling; settings stay within it anyway
        held = self.in_memory(searching=True)
        if held is not None and np.linalg.norm(vector) > 0:
            return held.nearest(vector, limit)
        index = self.compact_index()
        if index is not None and np.linalg.norm(vector) > 0:
            return self._compact_search(index, vector, limit)
        rows = db.execute(
            f"SELECT chunk_id, distance FROM {VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? "
            "ORDER BY distance",
            [to_blob(vector), limit],
        )
        return [(row[0], row[1]) for row in rows]

    def vectors(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The stored vectors of `chunk_ids` (those that have one)."""
        db = self.db
        if not chunk_ids or not has_vectors(db):
            return {}
        held = self.in_memory(searching=False)
        if held is not None:
            return held.vectors(chunk_ids)
        index = self.compact_index(build=False)  # never built for this (an ingest asks too)
        if index is not None and index.floats is not None and index.by_id is not None:
            return index.stored(chunk_ids)  # a large library's: from the index file, no vec0
        return self._stored(list(chunk_ids))


_INDEXES: weakref.WeakKeyDictionary[Database, VectorIndex] = weakref.WeakKeyDictionary()


def attach(db: Database) -> VectorIndex:
    """A new index for `db`, registered as its own: the app makes it when it opens the database
    and closes it in `App.close()`."""
    index = _INDEXES[db] = VectorIndex(db)
    return index


def index_of(db: Database) -> VectorIndex:
    """The connection's vector index, for code that has only the database: the app's when
    the app opened it (`App.vector_index`), else one made on first use that lives as long
    as the connection."""
    index = _INDEXES.get(db)
    if index is None:
        index = attach(db)
    return index


def vector_search(db: Database, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
    return index_of(db).search(vector, limit)


def vectors_of(db: Database, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
    return index_of(db).vectors(chunk_ids)


# --- search among some chunks (a question scoped to collections) ------------------------------


def vector_search_among(
    db: Database, vector: np.ndarray, limit: int, chunk_ids: Sequence[int]
) -> list[tuple[int, float]]:
    """(chunk id, cosine distance) of the nearest of `chunk_ids`, nearest first: exact brute force
    over their vectors (from the in-memory copy when held, else read in batches)."""
    if not chunk_ids or limit <= 0 or not has_vectors(db):
        return []
    index_of(db).in_memory(searching=True)  # counts as a search: a chat loads the copy too
    query = np.asarray(vector, dtype=np.float32)
    norm = float(np.linalg.norm(query))
    ids: list[int] = []
    rows: list[np.ndarray] = []
    for start in range(0, len(chunk_ids), 500):
        found = vectors_of(db, chunk_ids[start : start + 500])
        ids += list(found)
        rows += list(found.values())
    if not ids or norm == 0:
        return []
    matrix = np.vstack(rows)
    norms = np.linalg.norm(matrix, axis=1)
    norms[norms == 0] = np.inf  # a zero vector is never near
    distances = 1.0 - np.einsum("ij,j->i", matrix, query) / (norms * norm)
    order = np.lexsort((np.asarray(ids), distances))[: min(int(limit), MAX_NEIGHBOURS)]
    return [(ids[i], float(distances[i])) for i in order]
