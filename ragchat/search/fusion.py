"""Weighted reciprocal rank fusion with an additive source-anchoring boost. Pure functions.

Scores are normalised so that a chunk ranked first by both retrievers scores 1.0:
    rrf(c) = (w_v / (k + rank_v(c)) + w_f / (k + rank_f(c))) / ((w_v + w_f) / (k + 1))
A chunk missing from one list gets nothing from it. On that scale the anchor boost (default 0.3)
is a modest nudge that lets a fairly relevant chunk of the previous answer's documents pass an
equally relevant chunk from elsewhere, without lifting irrelevant anchored chunks to the top.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping, Sequence


@dataclass(frozen=True)
class Fused:
    chunk_id: int
    document_id: int
    vector_rank: int | None  # 1-based, None when the vector index did not return it
    fts_rank: int | None
    rrf: float  # normalised fused score before the boost
    boost: float
    score: float  # rrf + boost: what the final order is by
    anchored: bool


def _ranks(ids: Sequence[int]) -> dict[int, int]:
    ranks: dict[int, int] = {}
    for position, chunk_id in enumerate(ids, start=1):
        ranks.setdefault(chunk_id, position)
    return ranks


def rrf_scores(
    vector_ids: Sequence[int],
    fts_ids: Sequence[int],
    *,
    k: int = 60,
    vector_weight: float = 0.7,
    fts_weight: float = 0.3,
) -> dict[int, float]:
    """Normalised weighted RRF of two ranked id lists."""
    total = vector_weight + fts_weight
    if total <= 0:
        raise ValueError("at least one fusion weight must be positive")
    best = total / (k + 1)
    scores: dict[int, float] = {}
    for weight, ranks in ((vector_weight, _ranks(vector_ids)), (fts_weight, _ranks(fts_ids))):
        for chunk_id, rank in ranks.items():
            scores[chunk_id] = scores.get(chunk_id, 0.0) + weight / (k + rank)
    return {chunk_id: score / best for chunk_id, score in scores.items()}


def fuse(
    vector_ids: Sequence[int],
    fts_ids: Sequence[int],
    document_of: Mapping[int, int],
    *,
    anchor_documents: Collection[int] = (),
    boost: float = 0.3,
    already_used: Collection[int] = (),
    k: int = 60,
    vector_weight: float = 0.7,
    fts_weight: float = 0.3,
) -> list[Fused]:
    """Fuse two rankings; chunks of `anchor_documents` get `boost` added, except the chunks in
    `already_used` (what the last answer already said: a follow-up asks for more of the same
    sources, not the same passages again). Best first, ties by id."""
    scores = rrf_scores(vector_ids, fts_ids, k=k, vector_weight=vector_weight, fts_weight=fts_weight)
    vector_ranks, fts_ranks = _ranks(vector_ids), _ranks(fts_ids)
    fused = []
    for chunk_id, rrf in scores.items():
        anchored = document_of[chunk_id] in anchor_documents and chunk_id not in already_used
        extra = boost if anchored else 0.0
        fused.append(
            Fused(chunk_id, document_of[chunk_id], vector_ranks.get(chunk_id), fts_ranks.get(chunk_id),
                  rrf, extra, rrf + extra, anchored)
        )
    return sorted(fused, key=lambda item: (-item.score, item.chunk_id))
