"""The leading document's other sections, searched again on their own.

A question's best chunk names the page; the passage that answers is often another section of that
page, ranked far below it because the library's other pages share its words and meaning (a code
block under a short lead-in, a section titled in the page's own words). Searched among that page's
chunks alone, with the same queries and the same fusion, those sections come first: the other
pages no longer compete for the ranks.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np
from sqlite_utils import Database

from ..store import library
from ..store.library import Scope
from .fusion import RankedList, rrf_scores
from .hybrid import fts_ranking, vector_ranking


def within_document(
    db: Database,
    document_id: int,
    vector: np.ndarray,
    keyword_query: str,
    *,
    k: int,
    vector_weight: float,
    fts_weight: float,
) -> list[int]:
    """The document's chunks by the question's vector and keywords, fused as the chat fuses."""
    ids = library.chunk_ids_of_documents(db, [document_id])
    if not ids:
        return []
    scope = Scope((), frozenset({document_id}), tuple(sorted(ids)))
    near, _ = vector_ranking(db, vector, len(ids), within=scope)
    words = fts_ranking(db, keyword_query, len(ids), within=scope)
    lists = [
        RankedList("document/vector", "vector", tuple(near), vector_weight),
        RankedList("document/fts", "fts", tuple(words), fts_weight),
    ]
    scores = rrf_scores(lists, k=k)
    return sorted(scores, key=lambda i: (-scores[i], i))


def placed(
    order: Sequence[tuple[int, int]],
    lead: int,
    best: Sequence[int],
    places: int,
    most: int,
    keep: Collection[int] = (),
) -> tuple[list[int], list[int]]:
    """The order of (chunk id, document id) pairs with the `lead` document's `best` chunks (by
    its own ranking) that the first `places` lack brought in, and which were brought in. They
    take the places of the last other documents' chunks among the first `places` (at most
    `most`, never more than other documents hold there; never one of `keep`, the chunks an
    answer without a model draws on, so it stays as it was), coming in where the first of those
    stood; those chunks move just below the places, in their order. The rest keeps its order:
    the lead's chunks keep their places, and no document's first place moves before another's
    (the lead is first, and the chunks that move down are the last of the other documents')."""
    read = [chunk for chunk, _ in order[:places]]
    others = [
        i
        for i, (chunk, document) in enumerate(order[:places])
        if document != lead and chunk not in keep
    ]
    taken = set(read)
    new = [chunk for chunk in best if chunk not in taken][: min(most, len(others))]
    if not new:
        return [chunk for chunk, _ in order], []
    out = others[-len(new) :]
    kept = [chunk for i, chunk in enumerate(read) if i not in out]
    moved = [read[i] for i in out]
    rest = [chunk for chunk, _ in order[places:] if chunk not in new]
    return [*kept[: out[0]], *new, *kept[out[0] :], *moved, *rest], new
