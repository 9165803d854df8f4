"""Chunks that repeat what a better-ranked chunk of their document already holds, and chunks that
say only their title, yield their place. Pure.

Overlapping chunks of one section, a part of a page included twice in it: a chunk whose text is
mostly inside the chunks of its document ranked above it adds little to the passages an answer
is given, so it moves below every chunk that adds something new. Measured on the words themselves
(runs of `SHINGLE` words), not on any language's vocabulary. Only within a document: another
document holding the same text is another source (on the MTRAG sets, whose files are overlapping
windows of one page, yielding across documents cost govt nDCG@10 0.918 -> 0.904).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping, Sequence

from ..params import FusionParams

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
    document_of: Mapping[int, int],
    params: FusionParams,
) -> dict[int, int]:
    """Per chunk that repeats: the better-ranked chunk of its document holding most of its runs.
    A chunk repeats when at least `repeat_share` of its runs are in the chunks of its document
    kept above it."""
    seen: dict[int, set[tuple[str, ...]]] = {}
    holders: dict[int, list[tuple[int, set[tuple[str, ...]]]]] = {}
    repeats: dict[int, int] = {}
    for chunk_id in order:
        document = document_of.get(chunk_id, -chunk_id)
        own, before = shingles(texts.get(chunk_id, "")), seen.setdefault(document, set())
        if own and len(own & before) >= params.repeat_share * len(own):
            held = holders[document]
            repeats[chunk_id] = max(held, key=lambda item: len(own & item[1]))[0]
            continue
        before |= own
        holders.setdefault(document, []).append((chunk_id, own))
    return repeats


def says_only_its_title(text: str, titles: Sequence[str]) -> bool:
    """A chunk whose words are only those of its page's or section's title ("rich.logging",
    "Exceptions" over a `.. automodule::` the site's build fills): it holds nothing to answer
    from, and its title matching a question made it rank among the passages."""
    words = _WORD.findall(text.casefold())
    return bool(words) and any(words == _WORD.findall(title.casefold()) for title in titles)


def yielding(
    order: Sequence[int], repeats: Mapping[int, int], empty: Collection[int] = ()
) -> list[int]:
    """The order with every repeating chunk, then every chunk that says only its title
    (`empty`), moved below the ones that add something new."""
    adds = [i for i in order if i not in repeats and i not in empty]
    return [
        *adds,
        *(i for i in order if i in repeats and i not in empty),
        *(i for i in order if i in empty),
    ]
