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
from ..text import FENCE_MARKS, is_fence

MIN_OVERLAP = 20  # characters: a shorter shared edge is a coincidence, not the chunks' overlap


@dataclass(frozen=True)
class Passage:
    number: int  # the best rank among its chunks: what the model cites
    chunk: StoredChunk  # the joined text, under the first chunk's document and heading
    ranks: tuple[int, ...]  # the ranks of the chunks it holds, in reading order
    ordinals: tuple[int, ...]


def _overlap(before: str, after: str) -> int:
    """How long the start of `after` that ends `before` is (0: none, or a coincidence)."""
    longest = min(len(before), len(after))
    return next(
        (size for size in range(longest, MIN_OVERLAP - 1, -1) if before.endswith(after[:size])), 0
    )


def without_overlap(before: str, after: str) -> str:
    """`after` without the start it shares with the end of `before`."""
    return after[_overlap(before, after) :].lstrip("\n")


def joined_text(before: str, after: str) -> str:
    """Two adjacent chunks' texts as one, their overlap said once. A code block cut between
    them ends `before` with a closing fence of its own (each piece of a cut block is fenced):
    when `after` starts with that block, the piece is its start, and the block is said once,
    whole, after the sentence that introduces it."""
    opened, newline, last = before.rstrip().rpartition("\n")
    if newline and last.strip() in FENCE_MARKS and is_fence(after.split("\n", 1)[0]):
        size = _overlap(opened, after)
        if size:
            return opened + after[size:]
    return before.rstrip() + "\n\n" + without_overlap(before, after)


def _neighbours(passage: Passage, chunk: StoredChunk) -> bool:
    same = passage.chunk.document_id == chunk.document_id and passage.chunk.heading == chunk.heading
    return same and chunk.ordinal in (passage.ordinals[0] - 1, passage.ordinals[-1] + 1)


def _joined(passage: Passage, rank: int, chunk: StoredChunk) -> Passage:
    """The passage with `chunk` before or after it: under the first chunk's document, heading
    and start of section, with the last chunk's end of section."""
    if chunk.ordinal < passage.ordinals[0]:
        text = joined_text(chunk.text, passage.chunk.text)
        ranks, ordinals = (rank, *passage.ranks), (chunk.ordinal, *passage.ordinals)
        first, last = chunk, passage.chunk
    else:
        text = joined_text(passage.chunk.text, chunk.text)
        ranks, ordinals = (*passage.ranks, rank), (*passage.ordinals, chunk.ordinal)
        first, last = passage.chunk, chunk
    merged = replace(first, text=text, closes_section=last.closes_section)
    return replace(passage, chunk=merged, ranks=ranks, ordinals=ordinals)


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
