"""What the reformulators know of the corpus: term rarity, where terms occur, its vocabulary."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from sqlite_utils import Database

from ..search.fts import build_match
from ..store import library


class CorpusView:
    """Corpus statistics for one library version; cheap to keep for a whole session."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.total_chunks = max(library.chunk_count(db), 1)
        self._keywords, self._keyword_matrix = library.keyword_vectors(db)
        self.chunk_frequency = lru_cache(maxsize=4096)(self._chunk_frequency)

    def _chunk_frequency(self, term: str) -> int:
        match = build_match(term)
        return library.fts_chunk_frequency(self.db, match) if match else 0

    def idf(self, term: str) -> float:
        """Smoothed inverse chunk frequency (porter-stemmed, as FTS5 sees the term)."""
        return math.log((self.total_chunks + 1) / (self.chunk_frequency(term) + 0.5))

    def share_in(self, term: str, chunk_ids: list[int]) -> float:
        """Which share of the chunks holding `term` lie among `chunk_ids` (0 when none hold it)."""
        match = build_match(term)
        total = self.chunk_frequency(term)
        if not match or not chunk_ids or not total:
            return 0.0
        inside = library.fts_search(self.db, match, total, only_ids=chunk_ids)
        return len(inside) / total

    def best_similarity(self, vector: np.ndarray) -> float:
        """Cosine similarity of the single closest chunk: how well a query stands on its own."""
        hits = library.vector_search(self.db, vector, 1)
        return 1.0 - hits[0][1] if hits else 0.0

    def nearest_keywords(self, vector: np.ndarray, n: int = 3, minimum: float = 0.45) -> list[str]:
        """Corpus keywords closest in meaning to a query: the corpus's words for the user's."""
        if not self._keywords:
            return []
        # einsum, not `@`: a BLAS matrix product wakes worker threads that keep spinning after it
        # and starve the embedding model of the 2 cores it needs next
        similarity = np.einsum("ij,j->i", self._keyword_matrix, vector)
        best = np.argsort(-similarity)[:n]
        return [self._keywords[i] for i in best if similarity[i] >= minimum]

    def keywords_of(self, document_ids: list[int]) -> list[str]:
        merged: list[str] = []
        for words in library.keywords_of(self.db, document_ids).values():
            merged.extend(words)
        return list(dict.fromkeys(merged))
