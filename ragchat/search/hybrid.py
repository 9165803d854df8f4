"""Hybrid retrieval: sqlite-vec KNN + FTS5 BM25, fused by weighted RRF, with source anchoring."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sqlite_utils import Database

from ..config import Settings
from ..embed import Embedder
from ..store import library
from ..store.library import StoredChunk
from .fts import build_match
from .fusion import fuse

Mode = Literal["hybrid", "vector", "fts"]


@dataclass(frozen=True)
class SearchRequest:
    semantic_query: str  # goes to the vector index
    keyword_query: str  # goes to FTS5
    k: int = 8
    mode: Mode = "hybrid"
    anchor_documents: frozenset[int] = field(default_factory=frozenset)
    anchor_boost: float = 0.0
    anchor_exclude: frozenset[int] = field(default_factory=frozenset)  # chunks not boosted (already used)
    vector: np.ndarray | None = field(default=None, compare=False)  # a precomputed query vector


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


def _vector_ranking(
    db: Database, vector: np.ndarray, depth: int, anchor_ids: list[int]
) -> tuple[list[int], dict[int, float]]:
    """Chunk ids by similarity: the global top `depth`, then any anchor chunks below it, so
    anchored chunks have true ranks even when they fall outside the global candidates."""
    hits = library.vector_search(db, vector, depth)
    similarity = {chunk_id: 1.0 - distance for chunk_id, distance in hits}
    missing = [chunk_id for chunk_id in anchor_ids if chunk_id not in similarity]
    extra = library.vectors_of(db, missing)
    tail = sorted(extra, key=lambda chunk_id: -float(extra[chunk_id] @ vector))
    for chunk_id in tail:
        similarity[chunk_id] = float(extra[chunk_id] @ vector)
    return [chunk_id for chunk_id, _ in hits] + tail, similarity


def _fts_ranking(db: Database, keyword_query: str, depth: int, anchor_ids: list[int]) -> list[int]:
    match = build_match(keyword_query)
    if match is None:
        return []
    ids = [chunk_id for chunk_id, _ in library.fts_search(db, match, depth)]
    seen = set(ids)
    if anchor_ids:
        anchored = library.fts_search(db, match, len(anchor_ids), only_ids=anchor_ids)
        ids += [chunk_id for chunk_id, _ in anchored if chunk_id not in seen]
    return ids


def search(db: Database, embedder: Embedder, settings: Settings, request: SearchRequest) -> list[Hit]:
    """The top `request.k` chunks for a request, best first."""
    depth = max(settings.candidates, request.k)
    anchor_ids = library.chunk_ids_of_documents(db, request.anchor_documents) if request.anchor_documents else []
    vector_ids: list[int] = []
    similarity: dict[int, float] = {}
    if request.mode != "fts" and request.semantic_query.strip():
        vector = request.vector if request.vector is not None else embedder.embed_query(request.semantic_query)
        vector_ids, similarity = _vector_ranking(db, vector, depth, anchor_ids)
    fts_ids = _fts_ranking(db, request.keyword_query, depth, anchor_ids) if request.mode != "vector" else []
    chunks = library.chunks_by_ids(db, [*vector_ids, *fts_ids])
    document_of = {chunk_id: chunk.document_id for chunk_id, chunk in chunks.items()}
    vector_ids = [i for i in vector_ids if i in document_of]
    fts_ids = [i for i in fts_ids if i in document_of]
    fused = fuse(
        vector_ids, fts_ids, document_of,
        anchor_documents=request.anchor_documents, boost=request.anchor_boost,
        already_used=request.anchor_exclude,
        k=settings.rrf_k, vector_weight=settings.vector_weight if request.mode != "fts" else 0.0,
        fts_weight=settings.fts_weight if request.mode != "vector" else 0.0,
    ) if (vector_ids or fts_ids) else []
    return [
        Hit(rank, chunks[item.chunk_id], item.vector_rank, item.fts_rank, similarity.get(item.chunk_id),
            item.rrf, item.boost, item.score, item.anchored)
        for rank, item in enumerate(fused[: request.k], start=1)
    ]
