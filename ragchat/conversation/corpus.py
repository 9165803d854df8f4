"""What the reformulators know of the corpus: term rarity, where terms occur, its vocabulary.

`CorpusStats` is the seam: the app reads a store-backed `CorpusView`; unit tests use
`MemoryCorpus`, built from a few texts, with no database and no model.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Protocol

import numpy as np
from sqlite_utils import Database

from ..search.fts import phrase_match
from ..store import keywords, library, titles
from ..text import stem, words


class CorpusStats(Protocol):
    total_chunks: int

    def chunk_frequency(self, term: str) -> int: ...

    def idf(self, term: str) -> float: ...

    def share_in(self, term: str, chunk_ids: Sequence[int]) -> float: ...

    def nearest_keywords(self, vector: np.ndarray, n: int, minimum: float) -> list[str]: ...

    def keywords_of(self, document_ids: Sequence[int]) -> list[str]: ...

    def mentions(self, word: str) -> bool: ...


def smoothed_idf(total: int, frequency: int) -> float:
    return math.log((total + 1) / (frequency + 0.5))


class CorpusView:
    """Corpus statistics for one library version, from the store; cheap to keep for a session."""

    def __init__(self, db: Database, within: frozenset[int] | None = None) -> None:
        """`within`: a scoped question's documents; the user's words are then mapped onto their
        keywords only (term rarity stays the whole corpus's)."""
        self.db = db
        self.total_chunks = max(library.chunk_count(db), 1)
        self._keywords, self._keyword_matrix = keywords.keyword_vectors(db)
        if within is not None:
            self._keep(set(self.keywords_of(sorted(within))))
        self._frequency = lru_cache(maxsize=4096)(self._chunk_frequency)

    def _keep(self, allowed: set[str]) -> None:
        rows = [i for i, keyword in enumerate(self._keywords) if keyword in allowed]
        self._keywords = [self._keywords[i] for i in rows]
        self._keyword_matrix = (
            self._keyword_matrix[rows] if rows else np.zeros((0, 0), dtype=np.float32)
        )

    def chunk_frequency(self, term: str) -> int:
        return self._frequency(term)

    def _chunk_frequency(self, term: str) -> int:
        match = phrase_match(term)
        return library.fts_chunk_frequency(self.db, match) if match else 0

    def idf(self, term: str) -> float:
        """Smoothed inverse chunk frequency (porter-stemmed, as FTS5 sees the term)."""
        return smoothed_idf(self.total_chunks, self.chunk_frequency(term))

    def mentions(self, word: str) -> bool:
        """Some chunk (its text or heading) or some document's title or file name holds the word,
        or a word it starts ("manytomany" of ManyToManyField)."""
        match = phrase_match(word)
        if match is None:
            return True  # nothing searchable: nothing to miss
        prefix = f"{match}*"  # existence only: a count reads every holder of a common name
        return library.fts_holds(self.db, prefix) or titles.titled(self.db, prefix)

    def share_in(self, term: str, chunk_ids: Sequence[int]) -> float:
        """Which share of the chunks holding `term` lie among `chunk_ids` (0 when none hold it)."""
        match = phrase_match(term)
        total = self.chunk_frequency(term)
        if not match or not chunk_ids or not total:
            return 0.0
        inside = library.fts_search(self.db, match, total, only_ids=chunk_ids)
        return len(inside) / total

    def nearest_keywords(self, vector: np.ndarray, n: int, minimum: float) -> list[str]:
        """The `n` corpus keywords closest in meaning to a query, those at cosine `minimum` or
        more: the corpus's words for the user's (the numbers: params.FollowupParams)."""
        if not self._keywords:
            return []
        # einsum, not `@`: a BLAS matrix product wakes worker threads that keep spinning after it
        # and starve the embedding model of the 2 cores it needs next
        similarity = np.einsum("ij,j->i", self._keyword_matrix, vector)
        best = np.argsort(-similarity)[:n]
        return [self._keywords[i] for i in best if similarity[i] >= minimum]

    def keywords_of(self, document_ids: Sequence[int]) -> list[str]:
        merged: list[str] = []
        for found in keywords.keywords_of(self.db, document_ids).values():
            merged.extend(found)
        return list(dict.fromkeys(merged))


class MemoryCorpus:
    """Corpus statistics over a few texts held in memory (for unit tests and small tools)."""

    def __init__(
        self, chunks: Iterable[tuple[int, str]], keywords: dict[int, list[str]] | None = None
    ) -> None:
        self._stems = {chunk_id: tuple(stem(w) for w in words(text)) for chunk_id, text in chunks}
        self.total_chunks = max(len(self._stems), 1)
        self._keywords = keywords or {}

    def _holding(self, term: str) -> set[int]:
        """The chunks holding the term as a phrase (its stems in a row), as FTS5 counts it."""
        wanted = tuple(stem(w) for w in words(term))
        if not wanted:
            return set()
        return {
            cid
            for cid, found in self._stems.items()
            if any(
                found[i : i + len(wanted)] == wanted for i in range(len(found) - len(wanted) + 1)
            )
        }

    def chunk_frequency(self, term: str) -> int:
        return len(self._holding(term))

    def idf(self, term: str) -> float:
        return smoothed_idf(self.total_chunks, self.chunk_frequency(term))

    def share_in(self, term: str, chunk_ids: Sequence[int]) -> float:
        holding = self._holding(term)
        return len(holding & set(chunk_ids)) / len(holding) if holding and chunk_ids else 0.0

    def nearest_keywords(self, vector: np.ndarray, n: int, minimum: float) -> list[str]:
        return []

    def keywords_of(self, document_ids: Sequence[int]) -> list[str]:
        return list(dict.fromkeys(k for d in document_ids for k in self._keywords.get(d, [])))

    def mentions(self, word: str) -> bool:
        """As `CorpusView.mentions`: a stem of the texts starts with the word's stem."""
        wanted = stem(word)
        return any(found.startswith(wanted) for held in self._stems.values() for found in held)
