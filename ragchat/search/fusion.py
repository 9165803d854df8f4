"""Weighted reciprocal rank fusion of several ranked lists, with soft source anchoring and a
protected first place. Pure functions.

Each list is one query sent to one index (the question to the vector index, the question to FTS,
the context-expanded query to each, ...) with a weight. Scores are normalised so that a chunk
ranked first by every list scores 1.0:
    rrf(c) = sum_i w_i / (k + rank_i(c))  /  (sum_i w_i / (k + 1))
A chunk missing from a list gets nothing from it.

Anchoring is evidence, not a verdict: the boost is added only to chunks that some list already
ranks within `reach`, and it is never more than `margin`, so by construction it breaks near-ties
among relevant chunks: a boosted chunk passes only chunks within `margin` of its own score, it
cannot lift a chunk that no query found, and it never pushes the question's own first hits (the
first chunk of each of its own lists, `own`) out of the top `own_within` places they held, nor
lifts another document's chunk over the first hit both of them agree on when the fusion without
it ranks that first (`agreed`, on a question that does not point back at the conversation).
The chunks the last answer used get no boost, so a follow-up moves on to new text, except one the
un-anchored fusion ranks first (`keep`): the question asks about that same text again ("and read
it?" after "how do I set a cookie?"), the boost keeps it first instead of lifting the document's
other sections over it. A protected chunk (the question's own confident top hit) keeps a place in
the top `protect_within`, whatever the other lists say.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field

from ..params import DEFAULT


@dataclass(frozen=True)
class RankedList:
    name: str  # e.g. "question/vector", "context/fts"
    kind: str  # "vector" or "fts": which rank column it reports in
    ids: tuple[int, ...]
    weight: float


@dataclass(frozen=True)
class Anchoring:
    documents: frozenset[int] = frozenset()
    boost: float = 0.0
    exclude: frozenset[int] = frozenset()  # chunks the last answer already used: no boost
    reach: int = DEFAULT.plan.anchor_reach  # a chunk must rank within this in some list for a boost
    keep: int = DEFAULT.plan.said_keep  # an excluded chunk the un-anchored fusion ranks within
    # this is boosted all the same: the question asks about the text the last answer used
    margin: float = DEFAULT.plan.anchor_margin  # the most a boost adds: it breaks near-ties only


@dataclass(frozen=True)
class Fused:
    chunk_id: int
    document_id: int
    vector_rank: int | None  # best rank among the vector lists (1-based)
    fts_rank: int | None  # best rank among the FTS lists
    rrf: float  # normalised fused score before the boost
    boost: float
    score: float  # rrf + boost: what the final order is by
    anchored: bool
    ranks: Mapping[str, int] = field(default_factory=dict)  # rank in each list that holds it


def _ranks(ids: Sequence[int]) -> dict[int, int]:
    ranks: dict[int, int] = {}
    for position, chunk_id in enumerate(ids, start=1):
        ranks.setdefault(chunk_id, position)
    return ranks


def rrf_scores(lists: Sequence[RankedList], *, k: int) -> dict[int, float]:
    """Normalised weighted RRF of ranked id lists (lists of weight 0 count for nothing)."""
    total = sum(max(item.weight, 0.0) for item in lists)
    if total <= 0:
        raise ValueError("at least one fusion weight must be positive")
    best = total / (k + 1)
    scores: dict[int, float] = {}
    for item in lists:
        if item.weight <= 0:
            continue
        for chunk_id, rank in _ranks(item.ids).items():
            scores[chunk_id] = scores.get(chunk_id, 0.0) + item.weight / (k + rank)
    return {chunk_id: score / best for chunk_id, score in scores.items()}


def _best_rank(
    chunk_id: int, ranks: Mapping[str, dict[int, int]], names: Collection[str]
) -> int | None:
    found = [ranks[name][chunk_id] for name in names if chunk_id in ranks[name]]
    return min(found) if found else None


def fuse(
    lists: Sequence[RankedList],
    document_of: Mapping[int, int],
    *,
    k: int,
    anchoring: Anchoring = Anchoring(),
    protect: int | None = None,
    protect_within: int,
    own: Collection[int] = (),
    own_within: int,
    own_firm: bool = False,
    agreed: int | None = None,
) -> list[Fused]:
    """All chunks of the lists, best first (ties by id). `own`: the question's own first hits,
    which the boost never pushes out of the top `own_within` places they held without it; with
    `own_firm` (beside a model's rewrite, whose lists outweigh the question's) whatever the
    other lists say. `agreed`: the first hit of every one of the question's own lists; when the
    un-boosted order ranks it first too, no other document's boosted chunk passes it."""
    live = [item for item in lists if item.weight > 0]
    if not live:
        return []
    scores = rrf_scores(live, k=k)
    exclude = anchoring.exclude - _leading(scores, anchoring.keep)
    ranks = {item.name: _ranks(item.ids) for item in live}
    vector_names = [item.name for item in live if item.kind == "vector"]
    fts_names = [item.name for item in live if item.kind == "fts"]
    fused = []
    for chunk_id, rrf in scores.items():
        held = {name: r[chunk_id] for name, r in ranks.items() if chunk_id in r}
        anchored = (
            document_of[chunk_id] in anchoring.documents
            and chunk_id not in exclude
            and anchoring.boost > 0
            and min(held.values()) <= anchoring.reach
        )
        extra = min(anchoring.boost, anchoring.margin) if anchored else 0.0
        fused.append(
            Fused(
                chunk_id,
                document_of[chunk_id],
                _best_rank(chunk_id, ranks, vector_names),
                _best_rank(chunk_id, ranks, fts_names),
                rrf,
                extra,
                rrf + extra,
                anchored,
                held,
            )
        )
    fused.sort(key=lambda item: (-item.score, item.chunk_id))
    fused = _own_kept(fused, own, own_within, own_firm)
    fused = _agreed_kept(fused, agreed)
    return _protected(fused, protect, protect_within)


def _agreed_kept(fused: list[Fused], agreed: int | None) -> list[Fused]:
    """The chunk every one of the question's own lists ranks first, first again when the boost
    lifted another document's chunk over it though the un-boosted order has it first: a clear
    ranking is no near-tie. Within its own document the boost still orders (a follow-up moves on
    to the section the last answer did not use: MTRAG govt's "Who do I call about missed
    collection ...? and what should I do if ...", whose second half the last answer had said)."""
    if agreed is None or not fused or fused[0].chunk_id == agreed:
        return fused
    plain = min(fused, key=lambda item: (-item.rrf, item.chunk_id))
    if plain.chunk_id != agreed or plain.document_id == fused[0].document_id:
        return fused
    return [plain, *(item for item in fused if item.chunk_id != agreed)]


def _leading(scores: Mapping[int, float], count: int) -> set[int]:
    """The `count` best chunks by score (ties by id)."""
    if count <= 0:
        return set()
    return {i for _, i in sorted((-score, i) for i, score in scores.items())[:count]}


def _own_kept(fused: list[Fused], own: Collection[int], within: int, firm: bool) -> list[Fused]:
    """The question's own first hits that the un-boosted order ranks within `within` (`firm`:
    wherever it ranks them) stay within it: those pushed below take the last places, in their
    un-boosted order."""
    plain = sorted(fused, key=lambda item: (-item.rrf, item.chunk_id))
    plain = plain if firm else plain[:within]
    top = {item.chunk_id for item in fused[:within]}
    out = [item for item in plain if item.chunk_id in own and item.chunk_id not in top]
    if not out:
        return fused
    moved = {item.chunk_id for item in out}
    rest = [item for item in fused if item.chunk_id not in moved]
    return [*rest[: within - len(out)], *out, *rest[within - len(out) :]]


def _protected(fused: list[Fused], protect: int | None, within: int) -> list[Fused]:
    """Move the protected chunk up to place `within` when the other lists pushed it below."""
    position = next((i for i, item in enumerate(fused) if item.chunk_id == protect), None)
    if position is None or position < within:
        return fused
    item = fused.pop(position)
    fused.insert(within - 1, item)
    return fused
