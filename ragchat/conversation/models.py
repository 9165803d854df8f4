"""The values that flow through a turn, each stage's output a frozen dataclass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Plan = Literal["search", "anchored_search", "reuse"]


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
    corpus_keywords: tuple[str, ...] = ()  # corpus keywords nearest to the question
    anchor_chunk_ids: tuple[int, ...] = ()  # every chunk of the anchor documents
    last_semantic_query: str = ""  # what the last searching turn was understood as
    last_keyword_query: str = ""
    earlier_questions: tuple[str, ...] = ()  # every user message before this one, in order
    last_user_similarity: float = 0.0  # cosine of the question and the last user message

    @property
    def has_history(self) -> bool:
        return bool(self.last.user or self.last.assistant)


@dataclass(frozen=True)
class Reformulation:
    semantic_query: str
    keyword_query: str
    is_follow_up: bool
    is_meta: bool
    topic_shift: bool
    reasoning: str
    reformulator: str  # "heuristic" or "ollama:<model>"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class TurnResult:
    """Everything a turn did; `lineage()` is what the assistant message stores."""

    question: str
    session: str
    turn: int
    history_window: list[int]
    reformulation: Reformulation
    plan: Plan
    anchor_documents: list[int]
    anchor_paths: list[str]
    missing_anchors: list[str]
    chunks: list[RetrievedChunk]
    answer: str = ""
    answer_mode: str = "extractive"  # llm | extractive | recorded
    weak: bool = False
    notices: list[str] = field(default_factory=list)
    user_message_id: int = 0
    assistant_message_id: int = 0
    timings_ms: dict[str, float] = field(default_factory=dict)

    @property
    def answer_documents(self) -> list[int]:
        return sorted({c.document_id for c in self.chunks if c.used})

    def lineage(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "turn": self.turn,
            "history_window": self.history_window,
            "reformulation": self.reformulation.to_dict(),
            "plan": self.plan,
            "anchor_documents": self.anchor_documents,
            "anchor_paths": self.anchor_paths,
            "missing_anchors": self.missing_anchors,
            "chunks": [chunk.to_dict() for chunk in self.chunks],
            "answer_mode": self.answer_mode,
            "answer_documents": self.answer_documents,
            "weak": self.weak,
            "notices": self.notices,
            "timings_ms": self.timings_ms,
        }
