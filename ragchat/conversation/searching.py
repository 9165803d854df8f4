"""The turn's searches, each run at most once: one object per turn that every stage asks for a
query's list.

A query is its text, sent to the vector index or to FTS, at the turn's depth (or another), in the
turn's scope, with or without extra chunks (the anchor documents' chunks) ranked below the top.
The question's vector search (the probe, reading.py), its keyword search run while a model
thinks and the model's rewrite probed on its own (turn.py), the plan's queries (retrieve.py) and
the closeness of the question as the turn read it (coverage) all ask here: a query asked again is
handed the list already found, a text already embedded is not embedded again. The top of a query
and the extra chunks below it are found apart, so a list without extras (an un-anchored turn's)
is the top of the same search and a list with them adds only the extras. A follow-up that moves
the conversation to another collection also asks for the chunks nearest the mean vector of the
chunks the last answer stood on (`like`: no text is embedded).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from sqlite_utils import Database

from ..embed import Embedder
from ..search.hybrid import fts_ranking, vector_ranking
from ..store.library import Scope
from ..store.vectors import vectors_of

Kind = Literal["vector", "fts", "like"]


@dataclass(frozen=True)
class Ranking:
    """One query's chunks, best first: its top, then the extra chunks asked for that are not in
    it, each at its true rank to the query. `similarity`: each vector-ranked chunk's cosine to
    the query (empty for FTS)."""

    ids: tuple[int, ...] = ()
    similarity: Mapping[int, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Run:
    """One search as it ran: the query's top (`extra` empty) or the extra chunks below it."""

    kind: Kind
    text: str
    depth: int
    extra: tuple[int, ...] = ()
    # the collections searched (None: the whole library), known by their names: hashing a scope
    # would hash every chunk id it holds at each lookup
    within: Scope | None = field(default=None, compare=False)
    collections: tuple[str, ...] | None = None


class TurnSearch:
    """One turn's searches by query, each run once and handed to whoever asks."""

    def __init__(
        self,
        db: Database,
        embedder: Embedder,
        *,
        depth: int,
        embed_chars: int,
        within: Scope | None = None,
        embedded: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.db = db
        self.embedder = embedder
        self.depth = depth  # how deep each query looks (the turn's candidates)
        self.within = within  # the collections the question is asked in (None: all)
        self._embed_chars = embed_chars  # a text is embedded up to here (the question is too)
        self._vectors = {t[:embed_chars]: v for t, v in (embedded or {}).items()}
        self._found: dict[Run, Ranking] = {}
        self.runs: list[Run] = []  # every search run this turn, in order: each appears once

    def embedding(self, text: str) -> np.ndarray:
        """The query vector of `text` (cut at `embed_chars`), embedded once a turn."""
        key = text[: self._embed_chars]
        if key not in self._vectors:
            self._vectors[key] = self.embedder.embed_query(key)
        return self._vectors[key]

    def vector(
        self,
        text: str,
        extra: tuple[int, ...] = (),
        depth: int | None = None,
        within: Scope | None = None,
    ) -> Ranking:
        """The chunks nearest `text`'s vector, then those of `extra` outside them (in `within`,
        else in the turn's scope)."""
        scope = within or self.within
        return self._ranking("vector", text[: self._embed_chars], extra, depth or self.depth, scope)

    def fts(self, text: str, extra: tuple[int, ...] = (), within: Scope | None = None) -> Ranking:
        """The chunks FTS ranks for `text`, then those of `extra` it matches outside them (in
        `within`, else in the turn's scope)."""
        return self._ranking("fts", text, extra, self.depth, within or self.within)

    def like(self, chunk_ids: tuple[int, ...], within: Scope | None = None) -> Ranking:
        """The chunks nearest the mean of the stored vectors of `chunk_ids` (the last answer's: a
        moved follow-up asks for passages like them), in `within`, else in the turn's scope."""
        scope = within or self.within
        text = " ".join(str(i) for i in chunk_ids)
        names = scope.names if scope is not None else None
        return self._run(Run("like", text, self.depth, (), scope, names))

    def _ranking(
        self, kind: Kind, text: str, extra: tuple[int, ...], depth: int, within: Scope | None
    ) -> Ranking:
        names = within.names if within is not None else None
        top = self._run(Run(kind, text, depth, (), within, names))
        if not extra:
            return top
        below = self._run(Run(kind, text, depth, extra, within, names), top)
        return Ranking((*top.ids, *below.ids), {**top.similarity, **below.similarity})

    def _run(self, run: Run, top: Ranking | None = None) -> Ranking:
        found = self._found.get(run)
        if found is None:
            found = self._found[run] = self._search(run, top or Ranking())
            self.runs.append(run)
        return found

    def _search(self, run: Run, top: Ranking) -> Ranking:
        """The query's top `depth` (no extras) or its extras outside `top`, as the hybrid
        rankings find them (a depth of 0 ranks only the extras)."""
        if run.kind == "like":
            found = vectors_of(self.db, [int(i) for i in run.text.split()])
            mean = np.mean(list(found.values()), axis=0) if found else None
            norm = float(np.linalg.norm(mean)) if mean is not None else 0.0
            if mean is None or norm <= 0:
                return Ranking()
            ids, similarity = vector_ranking(self.db, mean / norm, run.depth, (), run.within)
            return Ranking(tuple(ids), similarity)
        if run.kind == "vector":
            vector = self.embedding(run.text)
            if not run.extra:
                ids, similarity = vector_ranking(self.db, vector, run.depth, (), run.within)
                return Ranking(tuple(ids), similarity)
            missing = [i for i in run.extra if i not in top.similarity]
            if not missing:
                return Ranking()
            ids, similarity = vector_ranking(self.db, vector, 0, missing, run.within)
            return Ranking(tuple(ids), similarity)
        if not run.extra:
            return Ranking(tuple(fts_ranking(self.db, run.text, run.depth, (), run.within)))
        seen = set(top.ids)
        below = fts_ranking(self.db, run.text, 0, run.extra)
        return Ranking(tuple(i for i in below if i not in seen))
