"""The compact vector index of a large library: each chunk vector as sign bits (48 bytes at 384
dimensions) and as int8 (384 bytes), persisted in one file beside the database and memory-mapped,
so a one-shot process searches a million chunks without loading them.

A search scans the bits (Hamming distance to the query's bits, both centred on the library's mean
vector), keeps the closest share of the library, scores those with the int8 codes, and hands the
best hundred or so to `VectorIndex`, which rescores them exactly with the stored float vectors. The
file records the `vectors_version` it was built from: after any vector write it is stale and is
rebuilt (in memory when the folder cannot be written)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from ..lazy import lazy_module
from ..params import SCALE

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")

MAGIC = b"RAGCHAT-VECTORS-1\n"
SUFFIX = "-vectors"  # library.db -> library.db-vectors, beside SQLite's -wal and -shm files
_ALIGN = 64
_ARRAYS = ("ids", "inverse_norms", "mean", "scale", "bits", "codes")


@dataclass
class CompactIndex:
    version: str  # the vectors_version it was built from
    ids: np.ndarray  # int64 chunk ids, ascending
    inverse_norms: np.ndarray  # float32, 0 for a zero vector
    mean: np.ndarray  # float32 (dim,): the centre of the sign bits
    scale: np.ndarray  # float32 (dim,): int8 code * scale ~ the vector
    bits: np.ndarray  # uint64 (words, n): sign bits, one row per 64 dimensions (column layout)
    codes: np.ndarray  # int8 (n, dim)

    def __len__(self) -> int:
        return len(self.ids)

    def candidates(self, vector: np.ndarray, keep: int) -> np.ndarray:
        """Row numbers of the best `keep` rows by int8 cosine, from the closest rows by Hamming
        distance (`SCALE.hamming_share` of the library, at least `hamming_least`)."""
        query = np.asarray(vector, dtype=np.float32)
        rows = self._near_in_bits(query)
        scores = (self.codes[rows].astype(np.float32) @ (query * self.scale)) * (
            self.inverse_norms[rows]
        )
        if keep < len(rows):
            rows = rows[np.argpartition(-scores, keep - 1)[:keep]]
        return rows

    def _near_in_bits(self, query: np.ndarray) -> np.ndarray:
        words = _pack(query[None, :] - self.mean)[0]
        distance = np.bitwise_count(self.bits[0] ^ words[0])
        for row, word in zip(self.bits[1:], words[1:]):
            distance += np.bitwise_count(row ^ word)
        wanted = max(SCALE.hamming_least, int(SCALE.hamming_share * len(self)))
        if wanted >= len(self):
            return np.arange(len(self))
        # the smallest distance that takes in `wanted` rows (a histogram: no sort of n values)
        cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance)), wanted))
        return np.flatnonzero(distance <= cutoff)


def _pack(centred: np.ndarray) -> np.ndarray:
    """Sign bits of rows, as uint64 words (zero-padded to a multiple of 64 dimensions)."""
    dim = centred.shape[1]
    padded = -(-dim // 64) * 64
    signs = np.zeros((len(centred), padded), dtype=bool)
    signs[:, :dim] = centred > 0
    return np.packbits(signs, axis=1).view(np.uint64)


def path_of(db: Database) -> Path | None:
    """The index file of a database in a file (None for an in-memory database)."""
    for _, name, file in db.execute("PRAGMA database_list"):
        if name == "main":
            return Path(file + SUFFIX) if file else None
    return None


def build(db: Database, table: str, version: str, dim: int) -> CompactIndex | None:
    """Quantise every stored vector (read in blocks: a million vectors never sit in memory as
    floats). The caller holds a read transaction, so `version` is the version read."""
    count = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return quantise(version, _blocks(db, table, dim), count, dim) if count else None


def quantise(
    version: str, blocks: Iterator[tuple[np.ndarray, np.ndarray]], count: int, dim: int
) -> CompactIndex | None:
    """The index of at most `count` vectors given as blocks of (chunk ids, float32 rows)."""
    ids = np.empty(count, dtype=np.int64)
    norms = np.empty(count, dtype=np.float32)
    codes = np.empty((count, dim), dtype=np.int8)
    words = -(-dim // 64)
    bits = np.empty((count, words), dtype=np.uint64)
    mean = scale = None
    at = 0
    for block_ids, block in blocks:
        if mean is None:  # the first block stands for the library (codes beyond it are clipped)
            mean = block.mean(axis=0)
            scale = np.maximum(np.abs(block).max(axis=0), 1e-6) / 127
        assert scale is not None
        end = min(at + len(block), count)
        block, block_ids = block[: end - at], block_ids[: end - at]
        ids[at:end], norms[at:end] = block_ids, np.linalg.norm(block, axis=1)
        codes[at:end] = np.clip(np.rint(block / scale), -127, 127).astype(np.int8)
        bits[at:end] = _pack(block - mean)
        at = end
    if not at:
        return None
    ids, norms, codes, bits = ids[:at], norms[:at], codes[:at], bits[:at]
    if np.any(ids[1:] <= ids[:-1]):
        order = np.argsort(ids, kind="stable")
        ids, norms, codes, bits = ids[order], norms[order], codes[order], bits[order]
    inverse = np.zeros_like(norms)
    np.divide(1.0, norms, out=inverse, where=norms > 0)
    assert mean is not None and scale is not None
    return CompactIndex(
        version,
        ids,
        inverse,
        mean.astype(np.float32),
        scale.astype(np.float32),
        np.ascontiguousarray(bits.T),
        codes,
    )


def _blocks(db: Database, table: str, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    rows = db.execute(f"SELECT chunk_id, embedding FROM {table}")
    while batch := rows.fetchmany(SCALE.build_block):
        ids = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
        matrix = np.frombuffer(b"".join(row[1] for row in batch), dtype=np.float32)
        yield ids, matrix.reshape(len(batch), dim)


def save(index: CompactIndex, path: Path) -> bool:
    """Write the index atomically (a new file renamed over the old), readable by the user alone;
    False when the folder cannot be written."""
    arrays = {name: np.ascontiguousarray(getattr(index, name)) for name in _ARRAYS}
    layout: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, array in arrays.items():
        layout[name] = {"offset": offset, "dtype": array.dtype.str, "shape": list(array.shape)}
        offset += -(-array.nbytes // _ALIGN) * _ALIGN
    header = json.dumps({"version": index.version, "arrays": layout}).encode() + b"\n"
    start = -(-(len(MAGIC) + 8 + len(header)) // _ALIGN) * _ALIGN
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(MAGIC + start.to_bytes(8, "little") + header)
            for name, array in arrays.items():
                out.seek(start + layout[name]["offset"])
                out.write(array.tobytes())
        os.replace(temporary, path)
    except OSError:
        temporary.unlink(missing_ok=True)
        return False
    return True


def load(path: Path) -> CompactIndex | None:
    """The index in `path`, memory-mapped (nothing read until searched); None when there is no
    readable index file."""
    try:
        with path.open("rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            start = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.readline())
        arrays = {
            name: np.memmap(
                path,
                dtype=np.dtype(spec["dtype"]),
                mode="r",
                offset=start + spec["offset"],
                shape=tuple(spec["shape"]),
            )
            for name, spec in header["arrays"].items()
        }
        return CompactIndex(str(header["version"]), **{n: arrays[n] for n in _ARRAYS})
    except (OSError, ValueError, KeyError, TypeError):
        return None
