"""Hybrid retrieval: sqlite-vec KNN + FTS5 BM25 rankings, fused by weighted RRF.

The turn builds several rankings (the question and its context-expanded queries, each sent to both
indexes) and fuses them itself; `search` is the single-query case used by `ragchat search`."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Literal

import numpy as np
from sqlite_utils import Database

from ..config import Settings
from ..embed import Embedder
from ..params import SCALE
from ..store import library, readers, terms, vectors
from ..store.library import Scope, StoredChunk
from ..store.transaction import get_setting
from ..text import snippet, source_label
from .fts import match_terms, quote, rarer_terms, score_bound, split_by_postings
from .fusion import RankedList, fuse
from .titles import named_documents, title_ranking

Mode = Literal["hybrid", "vector", "fts"]


@dataclass(frozen=True)
class SearchRequest:
    semantic_query: str  # goes to the vector index
    keyword_query: str  # goes to FTS5
    k: int = 8
    mode: Mode = "hybrid"
    vector: np.ndarray | None = field(default=None, compare=False)  # a precomputed query vector
    within: Scope | None = field(default=None, compare=False)  # these collections only


@dataclass(frozen=True)
class Hit:
    rank: int
    chunk: StoredChunk
    vector_rank: int | None
    fts_rank: int | None
    similarity: float | None  # cosine similarity to the semantic query
    rrf: float
    boost: float
    score: float
    anchored: bool

    def to_dict(self) -> dict[str, object]:
        """The hit as `search --json` gives it, one JSON line each."""
        chunk = self.chunk
        return {
            "rank": self.rank,
            "chunk_id": chunk.id,
            "score": round(self.score, 4),
            "vector_rank": self.vector_rank,
            "fts_rank": self.fts_rank,
            "similarity": None if self.similarity is None else round(self.similarity, 4),
            "boost": self.boost,
            "anchored": self.anchored,
            "document": chunk.path,
            "page_start": chunk.page_start,
            "page_end": chunk.page_end,
            "source": source_label(chunk.path, chunk.page_start, chunk.page_end),
            "heading": chunk.heading,
            "snippet": snippet(chunk.text, 200),
            "document_id": chunk.document_id,
            "collection": chunk.collection,
            "absolute_path": chunk.source,
        }


def vector_ranking(
    db: Database,
    vector: np.ndarray,
    depth: int,
    extra_ids: Sequence[int] = (),
    within: Scope | None = None,
) -> tuple[list[int], dict[int, float]]:
    """Chunk ids by similarity: the global top `depth` (among the chunks of `within`, when
    scoped), then any `extra_ids` (anchor chunks) below it, so they have true ranks even when
    they fall outside the global candidates."""
    hits = (
        vectors.vector_search(db, vector, depth)
        if within is None
        else vectors.vector_search_among(db, vector, depth, within.chunk_ids)
    )
    similarity = {chunk_id: 1.0 - distance for chunk_id, distance in hits}
    missing = [chunk_id for chunk_id in extra_ids if chunk_id not in similarity]
    extra = vectors.vectors_of(db, missing)
    tail = sorted(extra, key=lambda chunk_id: -float(extra[chunk_id] @ vector))
    for chunk_id in tail:
        similarity[chunk_id] = float(extra[chunk_id] @ vector)
    return [chunk_id for chunk_id, _ in hits] + tail, similarity


def fts_ranking(
    db: Database,
    keyword_query: str,
    depth: int,
    extra_ids: Sequence[int] = (),
    within: Scope | None = None,
) -> list[int]:
    """Chunk ids by BM25 for a query's terms (ORed; without terms common in the library when it
    has rarer ones), among the chunks of `within` when scoped, then any matching `extra_ids` below
    them. In a large library, when the query's terms are held by more than
    `SCALE.fts_scored_rows` chunks, only the chunks holding its rarest terms are scored (with
    every term's BM25): a chunk found by common words alone is left out."""
    quoted = match_terms(keyword_query, known=library_holds(db))
    if not quoted:
        return []
    shares = _shares(db, quoted)
    kept = rarer_terms(quoted, shares, SCALE.common_term_share)
    match = " OR ".join(kept)
    if within is None:
        total = _SHARES_TOTAL.get(id(db.conn), 0.0)
        rows = {term: share * total for term, share in shares.items()}
        scored, common = (
            split_by_postings(kept, rows, SCALE.fts_scored_rows)
            if total > SCALE.fts_scored_rows  # a smaller library never scores more
            else (kept, [])
        )
        hits = (
            library.fts_search_holding(
                db,
                " OR ".join(scored),
                " OR ".join(common),
                depth,
                score_bound(scored, rows, total),
            )
            if common
            else library.fts_search(db, match, depth)
        )
    else:
        hits = library.fts_search(db, match, depth, only_ids=within.chunk_ids)
    ids = [chunk_id for chunk_id, _ in hits]
    seen = set(ids)
    if extra_ids:
        anchored = library.fts_search(db, match, len(extra_ids), only_ids=extra_ids)
        ids += [chunk_id for chunk_id, _ in anchored if chunk_id not in seen]
    return ids


_SHARES: dict[tuple[int, str], dict[str, float]] = {}  # by connection and library version
_SHARES_TOTAL: dict[int, float] = {}  # the chunk count behind the connection's shares


def _shares(db: Database, quoted: Sequence[str]) -> dict[str, float]:
    """The share of chunks holding each single-word quoted term (multi-word phrases are left out),
    remembered per library version."""
    version = get_setting(db, "vectors_version")
    key = (id(db.conn), str(version))
    known = _SHARES.get(key) if version else None  # no vectors yet: nothing marks a change
    if known is None:
        if len(_SHARES) >= 8:  # a few connections' (a library's reader has its own) are enough
            _SHARES.clear()
            _SHARES_TOTAL.clear()
        known = {"": float(max(1, terms.chunk_count(db)))}
        if version:
            _SHARES[key] = known
    _SHARES_TOTAL[id(db.conn)] = known[""]
    missing = [term for term in quoted if term not in known]
    for term in missing:
        found = terms.index_terms(db, term[1:-1].replace('""', '"'))
        single = len(found) == 1  # a phrase, or a word the index does not keep, always stays
        known[term] = terms.chunk_frequencies(db, found)[found[0]] / known[""] if single else 0.0
    return {term: known[term] for term in quoted if term in known}


def library_holds(db: Database) -> Callable[[str], bool]:
    """Whether some chunk holds a word as typed (as the index tokenizes it)."""

    def holds(word: str) -> bool:
        quoted = quote(word)
        return _shares(db, [quoted]).get(quoted, 0.0) > 0

    return holds


_WORKER: ThreadPoolExecutor | None = None  # one thread: a library's reader serves one at a time
_WORKER_LOCK = threading.Lock()


def fts_ranking_beside(
    db: Database, keyword_query: str, depth: int, within: Scope | None = None
) -> Callable[[], list[int]]:
    """`fts_ranking`'s list, searched in a thread on the library's read-only connection while
    the caller goes on (a library of at least `SCALE.beside_rows` chunks, outside a write);
    call what it returns for the list. Else searched when called, on `db`."""
    reader = (
        readers.reader_of(db)
        if not db.conn.in_transaction and terms.chunk_count(db) >= SCALE.beside_rows
        else None
    )
    if reader is None:
        return lambda: fts_ranking(db, keyword_query, depth, within=within)
    global _WORKER
    with _WORKER_LOCK:
        if _WORKER is None:
            _WORKER = ThreadPoolExecutor(1, thread_name_prefix="ragchat-keywords")
        pending = _WORKER.submit(fts_ranking, reader, keyword_query, depth, within=within)
    return pending.result


def scoped(within: Scope | None) -> frozenset[int] | None:
    """The documents of a scope (None: every document)."""
    return within.document_ids if within is not None else None


def search(
    db: Database, embedder: Embedder | None, settings: Settings, request: SearchRequest
) -> list[Hit]:
    """The top `request.k` chunks for one query, best first (the `search` command)."""
    depth = max(settings.candidates, request.k)
    lists: list[RankedList] = []
    similarity: dict[int, float] = {}
    keywords = (
        fts_ranking_beside(db, request.keyword_query, depth, request.within)
        if request.mode != "vector"
        else None
    )
    if request.mode != "fts" and request.semantic_query.strip() and embedder is not None:
        vector = (
            request.vector
            if request.vector is not None
            else embedder.embed_query(request.semantic_query)
        )
        ids, similarity = vector_ranking(db, vector, depth, within=request.within)
        lists.append(RankedList("question/vector", "vector", tuple(ids), settings.vector_weight))
        named = (
            named_documents(db, request.semantic_query, scoped(request.within))
            if request.mode == "hybrid"
            else []
        )
        if named:  # the documents the query names by title or file name (see titles.py)
            lists.append(
                RankedList(
                    "question/title",
                    "title",
                    tuple(title_ranking(db, named, vector)),
                    settings.vector_weight,
                )
            )
    if keywords is not None:
        ids = keywords()
        lists.append(RankedList("question/fts", "fts", tuple(ids), settings.fts_weight))
    chunks = library.chunks_by_ids(db, [i for item in lists for i in item.ids], request.within)
    lists = [replace(item, ids=tuple(i for i in item.ids if i in chunks)) for item in lists]
    if not any(item.ids and item.weight > 0 for item in lists):
        return []
    fused = fuse(
        lists,
        {i: c.document_id for i, c in chunks.items()},
        k=settings.rrf_k,
        protect_within=settings.params.fusion.protect_within,
        own_within=settings.params.fusion.own_within,
    )
    return [
        Hit(
            rank,
            chunks[item.chunk_id],
            item.vector_rank,
            item.fts_rank,
            similarity.get(item.chunk_id),
            item.rrf,
            item.boost,
            item.score,
            item.anchored,
        )
        for rank, item in enumerate(fused[: request.k], start=1)
    ]
