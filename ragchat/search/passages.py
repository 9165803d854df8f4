"""Adjacent chunks of one section as one passage, without their overlap. Pure.

Each chunk after the first of a section starts with the end of the one before (the overlap), so
two neighbours given to a model as two passages repeat that text and spend two of its places on
one stretch of the section. Joined in reading order, the overlap said once, they take one place,
and the model's few passages carry more of the section.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..store.library import StoredChunk

MIN_OVERLAP = 20  # characters: a shorter shared edge is a coincidence, not the chunks' overlap


@dataclass(frozen=True)
class Passage:
    number: int  # the best rank among its chunks: what the model cites
    chunk: StoredChunk  # the joined text, under the first chunk's document and heading
    ranks: tuple[int, ...]  # the ranks of the chunks it holds, in reading order
    ordinals: tuple[int, ...]


def without_overlap(before: str, after: str) -> str:
    """`after` without the start it shares with the end of `before`."""
    longest = min(len(before), len(after))
    for size in range(longest, MIN_OVERLAP - 1, -1):
        if before.endswith(after[:size]):
            return after[size:].lstrip("\n")
    return after


def _neighbours(passage: Passage, chunk: StoredChunk) -> bool:
    same = passage.chunk.document_id == chunk.document_id and passage.chunk.heading == chunk.heading
    return same and chunk.ordinal in (passage.ordinals[0] - 1, passage.ordinals[-1] + 1)


def _joined(passage: Passage, rank: int, chunk: StoredChunk) -> Passage:
    if chunk.ordinal < passage.ordinals[0]:
        text = chunk.text.rstrip() + "\n\n" + without_overlap(chunk.text, passage.chunk.text)
        ranks, ordinals = (rank, *passage.ranks), (chunk.ordinal, *passage.ordinals)
        first = chunk
    else:
        tail = without_overlap(passage.chunk.text, chunk.text)
        text = passage.chunk.text.rstrip() + "\n\n" + tail
        ranks, ordinals = (*passage.ranks, rank), (*passage.ordinals, chunk.ordinal)
        first = passage.chunk
    return replace(passage, chunk=replace(first, text=text), ranks=ranks, ordinals=ordinals)


def passages(ranked: Sequence[tuple[int, StoredChunk]], limit: int) -> list[Passage]:
    """The first `limit` passages of ranked (rank, chunk) pairs: a chunk next to one already
    taken (same document and section, the ordinal before or after) joins it."""
    taken: list[Passage] = []
    for rank, chunk in ranked:
        near = next((i for i, p in enumerate(taken) if _neighbours(p, chunk)), None)
        if near is not None:
            taken[near] = _joined(taken[near], rank, chunk)
        elif len(taken) < limit:
            taken.append(Passage(rank, chunk, (rank,), (chunk.ordinal,)))
    return taken
