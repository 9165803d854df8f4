"""The compact vector index of a large library: each chunk vector as sign bits (48 bytes at 384
dimensions), as int8 (384 bytes) and as stored (float32, for rescoring), persisted in one file
beside the database and memory-mapped, so a one-shot process searches a million chunks without
loading them.

A search scans the bits (Hamming distance to the query's bits, both centred on the library's mean
vector), keeps the closest share of the library, scores those with the int8 codes, and rescores
the best hundred or so exactly with their float vectors, read from the file (only their rows: no
vec0 lookup). The file is a derived cache, never the only copy: it records the `vectors_version`
it was built from, and after any vector write it is stale and is rebuilt from vec0 (in memory,
without the floats, when the folder cannot be written; those searches rescore from vec0)."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator, Sequence
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

MAGIC = b"RAGCHAT-VECTORS-2\n"  # 2: the float vectors are in the file too (rescoring)
SUFFIX = "-vectors"  # library.db -> library.db-vectors, beside SQLite's -wal and -shm files
_ALIGN = 64
_HEADER = 4096  # the arrays start here; the header (JSON) is written last, once all are written
_ARRAYS = ("ids", "inverse_norms", "mean", "scale", "bits", "codes", "floats", "by_id")
_SCORE_BLOCK = 1024  # int8 rows scored at a time (converted to float32 in cache-sized pieces)


@dataclass
class CompactIndex:
    version: str  # the vectors_version it was built from
    ids: np.ndarray  # int64 chunk ids, in the order the vectors were read
    inverse_norms: np.ndarray  # float32, 0 for a zero vector
    mean: np.ndarray  # float32 (dim,): the centre of the sign bits
    scale: np.ndarray  # float32 (dim,): int8 code * scale ~ the vector
    bits: np.ndarray  # uint64 (words, n): sign bits, one row per 64 dimensions (column layout)
    codes: np.ndarray  # int8 (n, dim)
    # float32 (n, dim), the vectors as stored, for exact rescoring of the candidates (only in the
    # file, read row by row with pread: a search reads just its candidates' rows, and pages it
    # read do not stay in the process's memory as mapped pages would); None for an index held
    # in memory, which rescores from vec0
    floats: np.ndarray | FileRows | None = None
    # int64 (n,): the rows in chunk id order (finding a chunk's row without a scan of `ids`)
    by_id: np.ndarray | None = None

    def __len__(self) -> int:
        return len(self.ids)

    def candidates(self, vector: np.ndarray, keep: int) -> np.ndarray:
        """Row numbers (ascending) of the best `keep` rows by int8 cosine, from the closest rows by
        Hamming distance (`SCALE.hamming_share` of the library, at least `hamming_least`)."""
        query = np.asarray(vector, dtype=np.float32)
        rows = self._near_in_bits(query)
        weights = (query * self.scale).astype(np.float32)
        scores = np.empty(len(rows), dtype=np.float32)
        # einsum in blocks, not `@` on the whole gather: the float copy of each block stays in
        # cache, and BLAS's worker threads stay asleep (awake, they spin and starve other work)
        for start in range(0, len(rows), _SCORE_BLOCK):
            part = rows[start : start + _SCORE_BLOCK]
            scores[start : start + len(part)] = np.einsum(
                "ij,j->i", self.codes[part].astype(np.float32), weights
            )
        scores *= self.inverse_norms[rows]
        if keep < len(rows):
            rows = np.sort(rows[np.argpartition(-scores, keep - 1)[:keep]])
        return rows

    def rescore(self, rows: np.ndarray, vector: np.ndarray, limit: int) -> list[tuple[int, float]]:
        """(chunk id, exact cosine distance) of the nearest `limit` of `rows`, nearest first, from
        the float vectors in the file (`floats` must be there)."""
        assert self.floats is not None
        query = np.asarray(vector, dtype=np.float32)
        matrix = np.asarray(self.floats[rows])  # only these rows' pages are read
        norms = np.linalg.norm(matrix, axis=1) * np.float32(np.linalg.norm(query))
        dots = np.einsum("ij,j->i", matrix, query)
        distances = np.where(norms > 0, 1.0 - dots / np.where(norms > 0, norms, 1), 1.0)
        ids = np.asarray(self.ids[rows])
        order = np.lexsort((ids, distances))[:limit]
        return [(int(ids[i]), float(distances[i])) for i in order]

    def stored(self, chunk_ids: Sequence[int]) -> dict[int, np.ndarray]:
        """The float vectors of those of `chunk_ids` in the index, from the file (`floats` and
        `by_id` must be there)."""
        assert self.floats is not None and self.by_id is not None
        wanted = np.asarray(list(chunk_ids), dtype=np.int64)
        if not len(wanted) or not len(self):
            return {}
        sorted_ids = _SortedIds.of(self)
        at = np.minimum(np.searchsorted(sorted_ids, wanted), len(self) - 1)
        found = sorted_ids[at] == wanted
        rows = np.asarray(self.by_id[at[found]])
        return {int(c): np.array(self.floats[r]) for c, r in zip(wanted[found], rows, strict=True)}

    def _near_in_bits(self, query: np.ndarray) -> np.ndarray:
        words = _pack(query[None, :] - self.mean)[0]
        distance = np.bitwise_count(self.bits[0] ^ words[0]).astype(np.uint16)  # up to 384+
        for row, word in zip(self.bits[1:], words[1:]):
            distance += np.bitwise_count(row ^ word)
        wanted = max(SCALE.hamming_least, int(SCALE.hamming_share * len(self)))
        if wanted >= len(self):
            return np.arange(len(self))
        # the smallest distance that takes in `wanted` rows (a histogram: no sort of n values)
        cutoff = int(np.searchsorted(np.cumsum(np.bincount(distance)), wanted))
        return np.flatnonzero(distance <= cutoff)


class FileRows:
    """The rows of a float32 matrix in a file, read on demand with `os.pread` (no mapping)."""

    def __init__(self, path: Path, offset: int, shape: tuple[int, int]) -> None:
        self._file = path.open("rb")  # the file as opened: a rebuild renames a new one over it
        self.offset, self.shape = offset, shape
        self._row_bytes = shape[1] * 4

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, rows: Any) -> np.ndarray:
        wanted = np.atleast_1d(np.asarray(rows, dtype=np.int64))
        out = np.empty((len(wanted), self.shape[1]), dtype="<f4")
        handle, size = self._file.fileno(), self._row_bytes
        for at, row in enumerate(wanted.tolist()):
            if not 0 <= row < self.shape[0]:
                raise IndexError(row)
            out[at] = np.frombuffer(os.pread(handle, size, self.offset + row * size), "<f4")
        return out if np.ndim(rows) else out[0]

    def __del__(self) -> None:
        if hasattr(self, "_file"):
            self._file.close()


class _SortedIds:
    """The chunk ids in ascending order, made once per index (8 MB at 1M)."""

    _made: dict[int, tuple[CompactIndex, np.ndarray]] = {}

    @classmethod
    def of(cls, index: CompactIndex) -> np.ndarray:
        held = cls._made.get(id(index))
        if held is None or held[0] is not index:
            assert index.by_id is not None
            cls._made.clear()  # one index at a time
            held = cls._made[id(index)] = (index, np.asarray(index.ids)[np.asarray(index.by_id)])
        return held[1]


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


@dataclass
class _Encoded:
    """One block of vectors in the index's forms."""

    ids: np.ndarray
    norms: np.ndarray
    bits: np.ndarray  # (rows, words)
    codes: np.ndarray
    floats: np.ndarray
    mean: np.ndarray  # the library's (the first block's), the same in every block
    scale: np.ndarray


def _encode(blocks: Iterator[tuple[np.ndarray, np.ndarray]], count: int) -> Iterator[_Encoded]:
    """The blocks' first `count` rows, encoded block by block. The first block stands
    for the library: its mean centres the bits, its range scales the codes (beyond it: clipped)."""
    mean = scale = None
    at = 0
    for block_ids, block in blocks:
        if mean is None:
            mean = block.mean(axis=0).astype(np.float32)
            scale = (np.maximum(np.abs(block).max(axis=0), 1e-6) / 127).astype(np.float32)
        assert scale is not None
        block, block_ids = block[: count - at], block_ids[: count - at]
        if not len(block):
            break
        codes = np.clip(np.rint(block / scale), -127, 127).astype(np.int8)
        norms = np.linalg.norm(block, axis=1)
        yield _Encoded(block_ids, norms, _pack(block - mean), codes, block, mean, scale)
        at += len(block)


def _inverse(norms: np.ndarray) -> np.ndarray:
    inverse = np.zeros(len(norms), dtype=np.float32)
    np.divide(1.0, norms, out=inverse, where=norms > 0)
    return inverse


def build(
    db: Database, table: str, version: str, dim: int, path: Path | None
) -> CompactIndex | None:
    """Quantise every stored vector, read in blocks (a million vectors never sit in memory as
    floats): into the file `path` when it can be written (the floats too, for rescoring), else in
    memory (without the floats). The caller holds a read transaction, so `version` is the version
    read."""
    count = db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    if not count:
        return None
    if path is not None and write_file(path, version, _blocks(db, table, dim), count, dim):
        found = load(path)
        if found is not None and found.version == version:
            return found
    return quantise(version, _blocks(db, table, dim), count, dim)


def quantise(
    version: str, blocks: Iterator[tuple[np.ndarray, np.ndarray]], count: int, dim: int
) -> CompactIndex | None:
    """The index of at most `count` vectors given as blocks of (chunk ids, float32 rows), held in
    memory (without the floats)."""
    ids = np.empty(count, dtype=np.int64)
    norms = np.empty(count, dtype=np.float32)
    codes = np.empty((count, dim), dtype=np.int8)
    bits = np.empty((count, -(-dim // 64)), dtype=np.uint64)
    part = None
    at = 0
    for part in _encode(blocks, count):
        end = at + len(part.ids)
        ids[at:end], norms[at:end], codes[at:end], bits[at:end] = (
            part.ids, part.norms, part.codes, part.bits
        )  # fmt: skip
        at = end
    if part is None:
        return None
    bits_t = np.ascontiguousarray(bits[:at].T)
    return CompactIndex(
        version, ids[:at], _inverse(norms[:at]), part.mean, part.scale, bits_t, codes[:at]
    )


def _blocks(db: Database, table: str, dim: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    rows = db.execute(f"SELECT chunk_id, embedding FROM {table}")
    while batch := rows.fetchmany(SCALE.build_block):
        ids = np.fromiter((row[0] for row in batch), dtype=np.int64, count=len(batch))
        matrix = np.frombuffer(b"".join(row[1] for row in batch), dtype=np.float32)
        yield ids, matrix.reshape(len(batch), dim)


def _layout(count: int, dim: int) -> dict[str, dict[str, Any]]:
    words = -(-dim // 64)
    shapes = {
        "ids": ("<i8", [count]),
        "inverse_norms": ("<f4", [count]),
        "mean": ("<f4", [dim]),
        "scale": ("<f4", [dim]),
        "bits": ("<u8", [words, count]),
        "codes": ("|i1", [count, dim]),
        "floats": ("<f4", [count, dim]),
        "by_id": ("<i8", [count]),
    }
    layout: dict[str, dict[str, Any]] = {}
    offset = 0
    for name, (dtype, shape) in shapes.items():
        layout[name] = {"offset": offset, "dtype": dtype, "shape": shape}
        offset += -(-int(np.prod(shape)) * np.dtype(dtype).itemsize // _ALIGN) * _ALIGN
    return layout


def write_file(
    path: Path, version: str, blocks: Iterator[tuple[np.ndarray, np.ndarray]], count: int, dim: int
) -> bool:
    """Write the index of `count` vectors given as blocks straight to `path`, block by block (no
    array of the whole library is held, not even mapped), atomically (a new file renamed over the
    old), readable by the user alone; False when the folder cannot be written or the blocks held
    another number of vectors."""
    layout = _layout(count, dim)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    try:
        handle = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError:
        return False
    try:
        at = _write_arrays(handle, layout, blocks, count)
        if at != count:
            raise ValueError("the vectors changed while they were read")
        header = json.dumps({"version": version, "arrays": layout}).encode() + b"\n"
        if len(MAGIC) + 8 + len(header) > _HEADER:
            raise ValueError("header too long")
        os.pwrite(handle, MAGIC + _HEADER.to_bytes(8, "little") + header, 0)
        os.close(handle)
        handle = -1
        os.replace(temporary, path)
    except (OSError, ValueError):
        if handle >= 0:
            os.close(handle)
        temporary.unlink(missing_ok=True)
        return False
    return True


def _write_arrays(
    handle: int,
    layout: dict[str, dict[str, Any]],
    blocks: Iterator[tuple[np.ndarray, np.ndarray]],
    count: int,
) -> int:
    """Write each encoded block at its place in every array; the number of vectors written."""

    def put(name: str, array: np.ndarray, first: int, row_bytes: int, stride: int) -> None:
        offset = _HEADER + layout[name]["offset"] + first * row_bytes + stride
        os.pwrite(handle, np.ascontiguousarray(array).tobytes(), offset)

    at = 0
    part = None
    ids = np.empty(count, dtype=np.int64)
    for part in _encode(blocks, count):
        size = len(part.ids)
        ids[at : at + size] = part.ids
        dim = part.codes.shape[1]
        put("ids", part.ids.astype("<i8"), at, 8, 0)
        put("inverse_norms", _inverse(part.norms), at, 4, 0)
        for word in range(part.bits.shape[1]):  # column layout: one row of n words per word
            put("bits", part.bits[:, word], at, 8, word * count * 8)
        put("codes", part.codes, at, dim, 0)
        put("floats", part.floats.astype("<f4"), at, dim * 4, 0)
        at += size
    if part is not None:
        put("mean", part.mean, 0, 0, 0)
        put("scale", part.scale, 0, 0, 0)
        put("by_id", np.argsort(ids[:at], kind="stable").astype("<i8"), 0, 0, 0)
    return at


def load(path: Path) -> CompactIndex | None:
    """The index in `path`, memory-mapped (nothing read until searched); None when there is no
    readable index file (or one of an older layout)."""
    try:
        with path.open("rb") as handle:
            if handle.read(len(MAGIC)) != MAGIC:
                return None
            start = int.from_bytes(handle.read(8), "little")
            header = json.loads(handle.readline())
        arrays: dict[str, Any] = {
            name: np.memmap(
                path,
                dtype=np.dtype(spec["dtype"]),
                mode="r",
                offset=start + spec["offset"],
                shape=tuple(spec["shape"]),
            )
            for name, spec in header["arrays"].items()
            if name != "floats"
        }
        floats = header["arrays"]["floats"]
        if floats["dtype"] != "<f4":
            return None
        arrays["floats"] = FileRows(path, start + floats["offset"], tuple(floats["shape"]))
        return CompactIndex(str(header["version"]), **{n: arrays[n] for n in _ARRAYS})
    except (OSError, ValueError, KeyError, TypeError):
        return None
