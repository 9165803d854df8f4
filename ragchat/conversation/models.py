"""The values that flow through a turn, each stage's output a frozen dataclass, and the Lineage an
assistant message stores: the only way lineage is read or written."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace
from enum import Enum
from typing import Any, Literal

Plan = Literal["search", "anchored_search", "reuse"]
LINEAGE_VERSION = 2


@dataclass(frozen=True)
class Exchange:
    """The last question and its answer (either may be missing at the start of a session)."""

    user: str = ""
    assistant: str = ""


@dataclass(frozen=True)
class ReformulationInput:
    question: str
    last: Exchange
    window: tuple[str, ...] = ()  # older relevant messages, chronological
    anchor_keywords: tuple[str, ...] = ()  # keywords of the documents behind the last answer
    anchor_chunk_ids: tuple[int, ...] = ()  # every chunk of the anchor documents
    last_semantic_query: str = ""  # what the last searching turn was understood as
    last_keyword_query: str = ""
    last_question: str = ""  # the last searching turn's question, as asked
    last_followed: bool = True  # that turn was read as a follow-up (its query holds the talk's)
    earlier_questions: tuple[str, ...] = ()  # every user message before this one, in order
    topic_questions: tuple[str, ...] = ()  # the questions since the current topic began, in order
    own_best: float = 0.0  # cosine of the question's own best chunk
    own_margin: float = 0.0  # how far that chunk's document leads the next document
    own_best_anchored: bool = False  # that chunk belongs to the documents behind the last answer
    own_anchor_best: float | None = None  # cosine of its closest chunk of those (None: unknown)
    moved: tuple[str, ...] = ()  # the collections it names, none of which held those documents
    # --- for a model's reading only
    turns: tuple[tuple[str, str], ...] = ()  # the answered exchanges a model reads, oldest first
    typed: str = ""  # the message as the user typed it, when the turn runs another (a correction)
    hint: str = ""  # the heuristic's reading of the message
    scope: tuple[str, ...] = ()  # titles of the documents behind the last answer

    @property
    def has_history(self) -> bool:
        return bool(self.last.user or self.last.assistant)


@dataclass(frozen=True)
class Reformulation:
    semantic_query: str  # the context-expanded query (the question itself when it stands alone)
    keyword_query: str
    is_follow_up: bool
    is_meta: bool
    topic_shift: bool
    reasoning: str
    reformulator: str  # "heuristic" or "ollama:<model>"
    context_need: float = (
        0.0  # 0 = stands alone .. 1 = cannot be understood without the conversation
    )
    fallback: str = ""  # why the preferred reformulator was not used ("" when it was)
    new_subject: bool = (
        False  # "what about X?": X replaces the last subject (no anchoring on its sources)
    )
    model_query: str = ""  # a model's rewrite, searched as its own lists ("" when there is none)
    model_weight: float = 0.0  # their weight in the fusion (combine.py), next to the question's
    question_weight: float = 1.0  # the question's own lists' weight (less beside a trusted rewrite)
    # the question points back at the conversation (a cue: a pointer, "and ...?", a meta-request,
    # no subject of its own), not only may continue it: the anchor boost may then pass the first
    # hit both of its own lists agree on (`fusion.fuse`'s `agreed`)
    points_back: bool = False

    @property
    def goes_on(self) -> bool:
        """Read as going on with the last answer ("follow-up of the last answer"), not a new
        topic."""
        return self.is_follow_up and not self.topic_shift

    @property
    def leading_query(self) -> str:
        """What the turn searched for most: a model's rewrite where it leads the question, else
        the heuristic's query."""
        return (
            self.model_query
            if self.model_query and self.model_weight >= self.question_weight
            else self.semantic_query
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Reformulation:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


class Source(Enum):
    """What a query list's query is made of (its value names the list in lineage and eval)."""

    QUESTION = "question"  # the question as typed
    CONTEXT = "context"  # the question expanded with the conversation (the heuristic's reading)
    PREVIOUS = "previous"  # the previous question with this one
    LLM = "model"  # a model's rewrite
    KEYWORDS = "keywords"  # the heuristic's keyword query (the one-query-per-index ablation)
    CORRECTION = "correction"  # what a correction names ("no, I meant X": X), as typed
    ANSWERED = "answered"  # the chunks the last answer stood on (their ids), searched by their
    # own vectors: a question that moves the conversation to another collection ("same idea in
    # click?") asks there for the passages like them


class Index(Enum):
    """Where a query list's query is sent."""

    VECTOR = "vector"
    FTS = "fts"
    TITLE = "title"  # the documents the question names by title or file name


@dataclass(frozen=True)
class QueryList:
    """One query sent to one index, and its weight in the fusion. Retrieval decides from these
    fields; `name` (e.g. `question/vector`) is only how lineage, inspect and eval show it."""

    source: Source
    index: Index
    query: str
    weight: float
    as_typed: bool = False  # the query is the question exactly as typed (its vector is known)
    within: tuple[str, ...] = ()  # the collections it searches instead of the turn's own: where
    # the conversation stands (`collections.py`)

    @property
    def name(self) -> str:
        return f"{self.source.value}/{self.index.value}"

    def to_dict(self) -> dict[str, Any]:
        found = {"name": self.name, "query": self.query, "weight": self.weight}
        return {**found, "in": list(self.within)} if self.within else found

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> QueryList:
        """A stored list (`as_typed` is not stored: it only matters while the turn retrieves)."""
        source, _, index = str(data.get("name", "")).partition("/")
        within = tuple(str(name) for name in data.get("in") or ())
        try:
            return cls(
                Source(source),
                Index(index),
                data.get("query", ""),
                data.get("weight", 0.0),
                within=within,
            )
        except ValueError:
            raise ValueError(f"unknown query list {data.get('name')!r}") from None


@dataclass(frozen=True)
class RetrievedChunk:
    """One chunk of a turn's lineage."""

    rank: int
    chunk_id: int
    document_id: int
    document: str  # path relative to the ingest root
    heading: str
    vector_rank: int | None
    fts_rank: int | None
    similarity: float | None
    rrf: float
    boost: float
    score: float
    anchored: bool
    reused: bool
    used: bool = False  # the answer stands on it (cited, or supported by it)
    page_start: int | None = None  # pages of a PDF chunk
    page_end: int | None = None
    title: str = ""  # the document's title
    seen: bool | None = None  # a model was given it in its prompt (None: no model answered)
    collection: str = ""  # its document's collection
    absolute_path: str = ""  # its document's file
    repeats: int | None = None  # a better-ranked chunk that holds most of its text (ranked after)
    beside: int | None = (
        None  # the chunk next to it in its section that brought it in (ranked after)
    )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> RetrievedChunk:
        names = {f.name for f in fields(cls)}
        values = {k: v for k, v in data.items() if k in names}
        values.setdefault("document_id", 0)
        for key in ("heading", "document"):
            values.setdefault(key, "")
        for key in ("vector_rank", "fts_rank", "similarity"):
            values.setdefault(key, None)
        for key in ("rrf", "boost", "score"):
            values.setdefault(key, 0.0)
        for key in ("anchored", "reused"):
            values.setdefault(key, False)
        return cls(**values)


@dataclass(frozen=True)
class Lineage:
    """What an assistant message stores about its turn. Keys mean one thing everywhere: document
    *ids* are `*_document_ids`, paths are `anchor_documents`."""

    question: str
    turn: int
    reformulation: Reformulation
    plan: Plan
    history_window: tuple[int, ...] = ()
    context_weight: float = 0.0  # weight of the context lists in the fusion
    queries: tuple[QueryList, ...] = ()
    anchor_document_ids: tuple[int, ...] = ()
    anchor_documents: tuple[str, ...] = ()  # their paths
    missing_anchors: tuple[str, ...] = ()
    chunks: tuple[RetrievedChunk, ...] = ()
    # pending | llm | extractive | recorded | cancelled | cut (a model's reply stopped by a limit)
    answer_mode: str = "pending"
    weak: bool = False  # the documents do not cover the question (coverage.not_covered)
    notices: tuple[str, ...] = ()
    timings_ms: dict[str, float] = field(default_factory=dict)
    version: int = LINEAGE_VERSION
    # the evidence `weak` was decided on: numbers, and the question's names the library lacks
    coverage: dict[str, float | list[str]] = field(default_factory=dict)
    correction: str = (
        ""  # a correction turn ("no, I meant X"): X, the new subject of the last question
    )
    # a model's answer: its prompt's size, what the budget left out, the server's token count
    prompt: dict[str, Any] = field(default_factory=dict)
    scope: tuple[str, ...] = ()  # the collections the question was asked in (empty: all)

    @property
    def unknown_names(self) -> tuple[str, ...]:
        """The question's names the library never mentions (`coverage.unknown_names`)."""
        found = self.coverage.get("unknown")
        return tuple(str(word) for word in found) if isinstance(found, list) else ()

    @property
    def answer_document_ids(self) -> list[int]:
        return sorted({c.document_id for c in self.chunks if c.used})

    @property
    def used_chunks(self) -> list[RetrievedChunk]:
        return [c for c in self.chunks if c.used]

    def with_answer(
        self, mode: str, used: frozenset[int] | None, notices: tuple[str, ...] = ()
    ) -> Lineage:
        """The lineage once answered: the mode, which chunks the answer stood on, more notices."""
        chunks = (
            self.chunks
            if used is None
            else tuple(replace(c, used=c.chunk_id in used) for c in self.chunks)
        )
        return replace(self, answer_mode=mode, chunks=chunks, notices=(*self.notices, *notices))

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "question": self.question,
            "turn": self.turn,
            "history_window": list(self.history_window),
            "reformulation": self.reformulation.to_dict(),
            "plan": self.plan,
            "context_weight": self.context_weight,
            "queries": [q.to_dict() for q in self.queries],
            "anchor_document_ids": list(self.anchor_document_ids),
            "anchor_documents": list(self.anchor_documents),
            "missing_anchors": list(self.missing_anchors),
            "chunks": [c.to_dict() for c in self.chunks],
            "answer_mode": self.answer_mode,
            "answer_document_ids": self.answer_document_ids,
            "weak": self.weak,
            "notices": list(self.notices),
            "timings_ms": dict(self.timings_ms),
            "coverage": dict(self.coverage),
            "correction": self.correction,
            "prompt": dict(self.prompt),
            "scope": list(self.scope),
        }

    def trace(self, message_id: int, turn: int, answer: str) -> dict[str, Any]:
        """A turn as `ask --json` and `inspect --json` give it: the lineage's own keys (`weak` as
        `weak_match`), plus where the turn is and its answer."""
        data = self.to_dict()
        data.update(
            {
                "turn": turn,
                "message_id": message_id,
                "weak_match": data.pop("weak"),
                "answer": answer,
                "answered": self.answer_mode not in ("pending", "unanswered") and bool(answer),
            }
        )
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Lineage:
        """Read a stored lineage; version 1 (before the typed lineage) stored anchor ids under
        `anchor_documents` and their paths under `anchor_paths`."""
        version = int(data.get("version", 1))
        if version == 1:
            ids, paths = data.get("anchor_documents", []), data.get("anchor_paths", [])
        else:
            ids, paths = data.get("anchor_document_ids", []), data.get("anchor_documents", [])
        return cls(
            question=str(data.get("question", "")),
            turn=int(data.get("turn", 0)),
            reformulation=Reformulation.from_dict(
                data.get("reformulation") or _EMPTY_REFORMULATION
            ),
            plan=data.get("plan", "search"),
            history_window=tuple(data.get("history_window", [])),
            context_weight=float(data.get("context_weight", 0.0)),
            queries=tuple(QueryList.from_dict(q) for q in data.get("queries", [])),
            anchor_document_ids=tuple(ids),
            anchor_documents=tuple(paths),
            missing_anchors=tuple(data.get("missing_anchors", [])),
            chunks=tuple(RetrievedChunk.from_dict(c) for c in data.get("chunks", [])),
            answer_mode=str(data.get("answer_mode", "pending")),
            weak=bool(data.get("weak", False)),
            notices=tuple(data.get("notices", [])),
            timings_ms=dict(data.get("timings_ms", {})),
            version=LINEAGE_VERSION,
            coverage=dict(data.get("coverage") or {}),
            correction=str(data.get("correction") or ""),
            prompt=dict(data.get("prompt") or {}),
            scope=tuple(str(name) for name in data.get("scope") or ()),
        )


_EMPTY_REFORMULATION: dict[str, Any] = {
    "semantic_query": "",
    "keyword_query": "",
    "is_follow_up": False,
    "is_meta": False,
    "topic_shift": False,
    "reasoning": "",
    "reformulator": "",
}


@dataclass(frozen=True)
class TurnResult:
    """Everything a turn did: its lineage (as stored), the answer and where both were saved."""

    session: str
    lineage: Lineage
    answer: str
    user_message_id: int
    assistant_message_id: int
