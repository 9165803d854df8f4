"""Stage 1 of a turn: read what the conversation gives the question.

The history window, the lineage of the last turns, the documents the last answer stood on (the
anchors, resolved once: ids, paths, chunk ids, sections already said) and a *probe*: the
question's own vector ranking (asked of the turn's searches, searching.py, which hand the same
list to the fusion), which tells how well it stands alone.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from sqlite_utils import Database

from ..names import readable_text
from ..store import library
from ..store.library import Scope, StoredChunk
from ..store.sessions import Message
from .collections import Carried, carried
from .followup.cues import explicit_shift
from .history import HistoryWindow, select_window
from .models import Lineage
from .searching import Ranking, TurnSearch

MAX_QUESTION_CHARS = 4000
EMPTY_QUESTION = "empty question: type a question about your documents"


class LoadedChunks:
    """The chunks one turn has loaded, by id: each read from the database once, then handed on
    to every stage that needs it (anchors, probes, retrieval, coverage, the answer's sources)."""

    def __init__(self, db: Database, within: Scope | None = None) -> None:
        self._db = db
        self._within = within  # a scoped turn shows a copied document as its copy in scope
        self._chunks: dict[int, StoredChunk] = {}
        self._absent: set[int] = set()

    def get(self, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks of `ids` that exist, loading those not loaded yet."""
        wanted = list(dict.fromkeys(ids))
        missing = [i for i in wanted if i not in self._chunks and i not in self._absent]
        if missing:
            found = library.chunks_by_ids(self._db, missing, self._within)
            self._chunks.update(found)
            self._absent.update(i for i in missing if i not in found)
        return {i: self._chunks[i] for i in wanted if i in self._chunks}


@dataclass(frozen=True)
class Anchors:
    """The documents the last answer stood on that still exist unchanged."""

    document_ids: frozenset[int] = frozenset()
    paths: tuple[str, ...] = ()
    missing: tuple[str, ...] = ()  # gone or changed since the last turn
    chunk_ids: tuple[int, ...] = ()  # every chunk of the anchor documents
    said: frozenset[int] = frozenset()  # chunks of the sections the last answer already drew on
    whole: bool = False  # the anchor documents hold every chunk of the library


@dataclass(frozen=True)
class Probe:
    """The question's own vector ranking (anchor chunks appended with their true ranks)."""

    ids: tuple[int, ...] = ()
    similarity: dict[int, float] = field(default_factory=dict)
    best: float = 0.0  # cosine of the best chunk
    margin: float = 0.0  # best chunk's lead over the best chunk of another document

    def best_of(self, ids: Iterable[int]) -> float:
        """Cosine of the closest chunk among `ids` (0.0: none of them ranked)."""
        return max((self.similarity[i] for i in ids if i in self.similarity), default=0.0)


@dataclass(frozen=True)
class TurnContext:
    question: str
    vector: np.ndarray
    turn: int
    history: tuple[Message, ...]
    window: HistoryWindow
    last: Lineage | None  # the last answered turn
    searching: Lineage | None  # the last turn that searched (a chain of reuses keeps it)
    topic_questions: tuple[str, ...]  # the questions since the current topic began
    anchors: Anchors
    probe: Probe
    notices: tuple[str, ...] = ()
    rewrite_best: float | None = None  # a model's rewrite searched on its own: its best cosine
    chunks: LoadedChunks | None = None  # the turn's loaded chunks (None: load afresh)
    within: Scope | None = None  # the collections the question is asked in (None: all)
    search: TurnSearch | None = None  # the turn's searches (None: a context made without them)
    carried: Carried = Carried()  # where the conversation's context is searched (collections.py)
    # the collections the question names where it asks (collections.asked_in): only their chunks
    # take places (None: every collection the turn searches)
    asked: Scope | None = None
    correction: str = ""  # the X of "no, I meant X" when the turn re-runs the last question with it

    def loaded(self, db: Database) -> LoadedChunks:
        return self.chunks if self.chunks is not None else LoadedChunks(db, self.within)

    def load(self, db: Database, ids: Iterable[int]) -> dict[int, StoredChunk]:
        """The chunks of `ids` that exist, each loaded once per turn."""
        return self.loaded(db).get(ids)

    def searches(self) -> TurnSearch:
        """The turn's searches (`read_turn` makes them)."""
        if self.search is None:
            raise ValueError("this turn context was made without its searches")
        return self.search


def clean_question(question: str) -> tuple[str, tuple[str, ...]]:
    """One line of at most MAX_QUESTION_CHARS; an empty question is refused by the caller."""
    text = " ".join(readable_text(question).split())
    if len(text) > MAX_QUESTION_CHARS:
        return text[:MAX_QUESTION_CHARS], (
            f"question cut to its first {MAX_QUESTION_CHARS} characters (it had {len(text)})",
        )
    return text, ()


def lineages(history: tuple[Message, ...]) -> list[Lineage]:
    return [Lineage.from_dict(m.lineage) for m in history if m.role == "assistant" and m.lineage]


def topic_questions(history: tuple[Message, ...], turns: list[Lineage]) -> tuple[str, ...]:
    """The user questions since the last one that began a topic (the first, or a topic shift),
    each without a shift phrase: "new topic: how do I run blocking code?" began a topic about
    blocking code, and "new" is no term of it nor a referent for the next turn's "it"."""
    questions = [explicit_shift(m.content)[1] for m in history if m.role == "user"]
    start = 0
    for index, lineage in enumerate(turns):
        if lineage.reformulation.topic_shift and index < len(questions):
            start = index
    return tuple(questions[start:])


def resolve_anchors(
    chunks: LoadedChunks, db: Database, last: Lineage | None, within: Scope | None = None
) -> Anchors:
    """The documents the last answer stood on, minus those removed or changed since (a changed
    document counts as gone: its chunks were replaced, ids are never reused) and those outside
    the question's scope."""
    if last is None:
        return Anchors()
    # after a not-covered answer too: anchoring is soft (it only reaches chunks some query ranks
    # well), and the decision errs on some answered turns (docs/answers.md: "Does the library
    # cover it?")
    wanted = [d for d in last.answer_document_ids if within is None or d in within.document_ids]
    paths = {c.document_id: c.document for c in last.chunks}
    used = last.used_chunks
    existing = chunks.get(c.chunk_id for c in used)
    changed = {c.document_id for c in used if c.chunk_id not in existing}
    alive = {d: row for d, row in library.documents_by_ids(db, wanted).items() if d not in changed}
    missing = tuple(paths.get(d, f"#{d}") for d in wanted if d not in alive)
    chunk_ids = library.chunk_ids_of_documents(db, alive)
    said_sections = {(c.document_id, c.heading or "") for c in used}
    said = frozenset(
        cid
        for cid, chunk in chunks.get(chunk_ids).items()
        if (chunk.document_id, chunk.heading or "") in said_sections
    )
    shown = library.placed_paths(db, alive)
    return Anchors(
        frozenset(alive),
        tuple(shown.get(d, alive[d]["path"]) for d in sorted(alive)),
        missing,
        tuple(chunk_ids),
        said,
        bool(alive) and not library.more_documents_than(db, len(alive)),
    )


def probe(chunks: LoadedChunks, found: Ranking, depth: int) -> Probe:
    """What a vector ranking (the question's, or a rewrite's, with the anchor chunks below its
    top) tells: its best cosine and that chunk's lead over another document's."""
    ids, similarity = found.ids, found.similarity
    if not ids:
        return Probe()
    top = chunks.get(ids[:depth])
    best_id = ids[0]
    best = similarity[best_id]
    first_doc = top[best_id].document_id if best_id in top else None
    other = next(
        (similarity[i] for i in ids[1:depth] if i in top and top[i].document_id != first_doc), 0.0
    )
    return Probe(ids, dict(similarity), best, best - other)


def window_of(
    history: tuple[Message, ...], vector: np.ndarray, window_size: int, minimum: float
) -> HistoryWindow:
    return select_window(list(history), vector, window_size, minimum)


def read_turn(
    db: Database,
    question: str,
    vector: np.ndarray,
    history: tuple[Message, ...],
    *,
    window: HistoryWindow,
    search: TurnSearch,
    notices: tuple[str, ...] = (),
) -> TurnContext:
    """The turn's context; `search` holds its searches (its scope is the question's)."""
    within = search.within
    turns = lineages(history)
    last = turns[-1] if turns else None
    searching = next((t for t in reversed(turns) if t.plan != "reuse"), None)
    chunks = LoadedChunks(db, within)
    anchors = resolve_anchors(chunks, db, last, within)
    gone = (
        (f"anchor document(s) gone since the last turn: {', '.join(anchors.missing)}",)
        if anchors.missing
        else ()
    )
    return TurnContext(
        question=question,
        vector=vector,
        turn=sum(1 for m in history if m.role == "user") + 1,
        history=history,
        window=window,
        last=last,
        searching=searching,
        topic_questions=topic_questions(history, turns),
        anchors=anchors,
        probe=probe(chunks, search.vector(question, anchors.chunk_ids), search.depth),
        notices=(*notices, *gone),
        chunks=chunks,
        within=within,
        search=search,
        carried=carried(db, question, chunks.get(anchors.chunk_ids), within),
    )
