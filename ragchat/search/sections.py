"""The leading document's other sections, searched again on their own.

A question's best chunk names the page; the passage that answers is often another section of that
page, ranked far below it because the library's other pages share its words and meaning (a code
block under a short lead-in, a section titled in the page's own words). Searched among that page's
chunks alone, with the same queries and the same fusion, those sections come first: the other
pages no longer compete for the ranks. When the page already holds the places a model reads, the
same ranking says which of its sections deserve them: the library's ranking chose them among
every page's chunks, where a section's rank owes as much to the other pages as to the question.
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
    fixed: Collection[int] = (),
) -> tuple[list[int], list[int]]:
    """The order of (chunk id, document id) pairs with the `lead` document's `best` chunks (by
    its own ranking) that the first `places` lack brought in, and which were brought in (at most
    `most`). They take the places of the last other documents' chunks among the first `places`
    (never one of `keep`, the chunks an answer without a model draws on), then, when no other
    document's is left, of the lead's own chunks that its ranking puts below them, the lowest
    first (never the first place, never one of `fixed`: they keep their places). They come in
    where the first of those stood; those chunks move just below the places, in their order. The
    rest keeps its order, and no document's first place moves before another's (the lead is
    first, and the chunks that move down are the last of the other documents' or the lead's
    own)."""
    read = [chunk for chunk, _ in order[:places]]
    page = {chunk: i for i, chunk in enumerate(best)}
    others = [
        i
        for i, (chunk, document) in enumerate(order[:places])
        if document != lead and chunk not in keep
    ]
    own = sorted(
        (i for i in range(1, len(read)) if order[i][1] == lead and read[i] not in fixed),
        key=lambda i: (-page.get(read[i], len(best)), -i),
    )
    taken = set(read)
    out: list[int] = []
    new: list[int] = []
    for chunk in [chunk for chunk in best if chunk not in taken][:most]:
        if others:
            out.append(others.pop())
        elif own and page.get(read[own[0]], len(best)) > page[chunk]:
            out.append(own.pop(0))
        else:
            break
        new.append(chunk)
    if not new:
        return [chunk for chunk, _ in order], []
    out.sort()
    kept = [chunk for i, chunk in enumerate(read) if i not in out]
    moved = [read[i] for i in out]
    rest = [chunk for chunk, _ in order[places:] if chunk not in new]
    return [*kept[: out[0]], *new, *kept[out[0] :], *moved, *rest], new
