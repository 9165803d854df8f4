"""Chunks that repeat what a better-ranked chunk already holds yield their place. Pure.

Overlapping chunks of one section, a page included in another, the same example code on two
pages: a chunk whose text is mostly inside the chunks ranked above it adds little to the passages
an answer is given, so it moves below every chunk that adds something new. Measured on the words
themselves (runs of `SHINGLE` words), not on any language's vocabulary.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from ..params import DEFAULT, FusionParams

SHINGLE = 6  # words a run: long enough that shared runs are shared text, not common phrases
_WORD = re.compile(r"\w+")


def shingles(text: str) -> set[tuple[str, ...]]:
    """The text's runs of SHINGLE words (casefolded); a shorter text is one run."""
    tokens = _WORD.findall(text.casefold())
    if len(tokens) <= SHINGLE:
        return {tuple(tokens)} if tokens else set()
    return {tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1)}


def repeated_in(
    order: Sequence[int],
    texts: Mapping[int, str],
    params: FusionParams = DEFAULT.fusion,
) -> dict[int, int]:
    """Per chunk that repeats: the better-ranked chunk holding most of its runs. A chunk repeats
    when at least `repeat_share` of its runs are in the chunks kept above it."""
    seen: set[tuple[str, ...]] = set()
    holders: list[tuple[int, set[tuple[str, ...]]]] = []
    repeats: dict[int, int] = {}
    for chunk_id in order:
        own = shingles(texts.get(chunk_id, ""))
        if own and len(own & seen) >= params.repeat_share * len(own):
            repeats[chunk_id] = max(holders, key=lambda held: len(own & held[1]))[0]
            continue
        seen |= own
        holders.append((chunk_id, own))
    return repeats


def yielding(order: Sequence[int], repeats: Mapping[int, int]) -> list[int]:
    """The order with every repeating chunk moved below the ones that add something new."""
    return [*(i for i in order if i not in repeats), *(i for i in order if i in repeats)]
