"""The turn pipeline: history window -> reformulation -> retrieval plan -> hybrid search with
anchoring (or reuse) -> answer -> the turn persisted with its lineage.

The user message and the retrieval lineage are written before the answer is attempted, so a
failed or cancelled answer loses nothing of the turn.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Callable, Protocol

import numpy as np
from sqlite_utils import Database

from .. import answer as answers
from ..config import Settings
from ..embed import Embedder
from ..errors import BackendUnavailable, RagchatError
from ..llm import OllamaBackend
from ..search.hybrid import Hit, SearchRequest, search
from ..store import library, sessions
from ..store.sessions import Message
from .corpus import CorpusView
from .heuristic import HeuristicReformulator
from .history import HistoryWindow, select_window
from .models import Plan, Reformulation, ReformulationInput, RetrievedChunk, TurnResult
from .ollama_reformulator import OllamaReformulator

MAX_QUESTION_CHARS = 4000
EMPTY_QUESTION = "empty question: type a question about your documents"


class Reformulator(Protocol):
    name: str

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation: ...


@dataclass(frozen=True)
class TurnOptions:
    source_anchoring: bool = True
    use_window: bool = True
    use_keywords: bool = True  # False: the semantic query also goes to FTS (an ablation)
    allow_reuse: bool = True
    recorded_answer: str | None = None  # eval replays: store this instead of answering


@dataclass
class Previous:
    """What the last turns left for this one: the lineage of the last searching turn."""

    lineage: dict | None
    reuse_source: dict | None  # lineage of the last turn that searched (a chain of reuses keeps it)


def _previous(history: list[Message]) -> Previous:
    lineages = [m.lineage for m in history if m.role == "assistant" and m.lineage]
    last = lineages[-1] if lineages else None
    searching = next((l for l in reversed(lineages) if l.get("plan") != "reuse"), None)
    return Previous(last, searching)


@dataclass
class Conversation:
    db: Database
    embedder: Embedder
    settings: Settings
    session: str
    backend: OllamaBackend | None = None
    options: TurnOptions = field(default_factory=TurnOptions)
    reformulator: Reformulator | None = None  # fixed one (eval baselines); else Ollama/heuristic
    on_notice: Callable[[str], None] = lambda message: None
    _corpus: CorpusView | None = None
    _corpus_version: tuple | None = None
    _warned: set = field(default_factory=set)
    _announced: set = field(default_factory=set)  # notices already shown through on_notice

    def fresh_notices(self, result: TurnResult) -> list[str]:
        """The turn's notices that on_notice has not already shown."""
        return [n for n in result.notices if n not in self._announced]

    # --- entry point -------------------------------------------------------------------------

    def ask(self, question: str, on_token: Callable[[str], None] | None = None) -> TurnResult:
        started = time.perf_counter()
        question, notices = self._clean(question)
        session_id = sessions.session_id(self.db, self.session)
        history = sessions.messages(self.db, session_id)
        q_vector = self.embedder.embed_query(question[:2000])
        window = select_window(history, q_vector, self.settings.history_window if self.options.use_window else 0)
        previous = _previous(history)
        anchors, anchor_paths, missing = self._anchors(previous.lineage)
        user_id = sessions.add_message(self.db, session_id, "user", question, embedding=q_vector)
        data = self._reformulation_input(question, q_vector, window, history, previous, anchors)
        reformulation = self._reformulate(data, q_vector, notices)
        plan = self._plan(reformulation, previous, anchors)
        chunks, best = self._retrieve(plan, question, reformulation, q_vector, anchors, previous, notices)
        if missing:
            notices.append(f"anchor document(s) gone since the last turn: {', '.join(missing)}")
        result = TurnResult(
            question=question, session=self.session, turn=sum(1 for m in history if m.role == "user") + 1,
            history_window=window.ids, reformulation=reformulation, plan=plan,
            anchor_documents=sorted(anchors) if plan == "anchored_search" else [],
            anchor_paths=anchor_paths if plan == "anchored_search" else [], missing_anchors=missing,
            chunks=chunks, notices=notices, user_message_id=user_id,
            weak=best is not None and best < self.settings.weak_match or not chunks,
        )
        result.timings_ms["retrieval"] = round((time.perf_counter() - started) * 1000, 1)
        result.assistant_message_id = sessions.add_message(
            self.db, session_id, "assistant", "", lineage=result.lineage())
        self._answer(result, window, on_token)
        result.timings_ms["total"] = round((time.perf_counter() - started) * 1000, 1)
        sessions.update_message(self.db, result.assistant_message_id, content=result.answer,
                                lineage=result.lineage(), embedding=self._answer_vector(result))
        return result

    # --- stages ------------------------------------------------------------------------------

    def _clean(self, question: str) -> tuple[str, list[str]]:
        text = " ".join(question.split())
        if not text:
            raise RagchatError(EMPTY_QUESTION)
        notices = []
        if len(text) > MAX_QUESTION_CHARS:
            notices.append(f"question cut to its first {MAX_QUESTION_CHARS} characters (it had {len(text)})")
            text = text[:MAX_QUESTION_CHARS]
        return text, notices

    def corpus(self) -> CorpusView:
        version = library.library_version(self.db)
        if self._corpus is None or version != self._corpus_version:
            self._corpus, self._corpus_version = CorpusView(self.db), version
        return self._corpus

    def _anchors(self, lineage: dict | None) -> tuple[set[int], list[str], list[str]]:
        """The documents the last answer stood on that still exist unchanged (and those that are gone).
        A changed document counts as gone: the chunks the answer used were replaced (ids are never reused)."""
        if not lineage or lineage.get("weak"):
            return set(), [], []  # nothing to anchor on after an answer the documents did not support
        wanted = lineage.get("answer_documents") or []
        chunks = lineage.get("chunks", [])
        paths = {c["document_id"]: c["document"] for c in chunks}
        used = [c for c in chunks if c.get("used")]
        existing = library.chunks_by_ids(self.db, [c["chunk_id"] for c in used])
        changed = {c["document_id"] for c in used if c["chunk_id"] not in existing}
        alive = {d: row for d, row in library.documents_by_ids(self.db, wanted).items() if d not in changed}
        missing = [paths.get(d, f"#{d}") for d in wanted if d not in alive]
        return set(alive), [alive[d]["path"] for d in sorted(alive)], missing

    def _reformulation_input(self, question: str, q_vector: np.ndarray, window: HistoryWindow, history: list[Message],
                             previous: Previous, anchors: set[int]) -> ReformulationInput:
        corpus = self.corpus()
        last = previous.reuse_source or {}
        return ReformulationInput(
            question=question, last=window.last,
            window=tuple(m.content for m in window.older),
            anchor_keywords=tuple(corpus.keywords_of(sorted(anchors))),
            anchor_chunk_ids=tuple(library.chunk_ids_of_documents(self.db, anchors)),
            last_semantic_query=(last.get("reformulation") or {}).get("semantic_query", ""),
            last_keyword_query=(last.get("reformulation") or {}).get("keyword_query", ""),
            earlier_questions=tuple(m.content for m in history if m.role == "user"),
            last_user_similarity=_similarity(q_vector, window.messages, "user"),
        )

    def _reformulate(self, data: ReformulationInput, q_vector: np.ndarray, notices: list[str]) -> Reformulation:
        if self.reformulator is not None:
            return self.reformulator.reformulate(data, q_vector)
        heuristic = HeuristicReformulator(self.corpus())
        if self._use_ollama() and data.has_history:
            # the corpus vocabulary nearest to the question: only the Ollama prompt shows it
            nearest = tuple(self.corpus().nearest_keywords(q_vector, n=40, minimum=0.15))
            try:
                return OllamaReformulator(self.backend).reformulate(replace(data, corpus_keywords=nearest))  # type: ignore[arg-type]
            except BackendUnavailable as exc:
                self._fallback_notice("reformulation", exc.reason, notices)
        return heuristic.reformulate(data, q_vector)

    def _use_ollama(self) -> bool:
        if self.backend is None or self.settings.ollama == "off":
            return False
        if self.settings.ollama == "on":
            return True
        return self.backend.available()

    def _fallback_notice(self, stage: str, reason: str, notices: list[str]) -> None:
        message = (f"Ollama {stage} failed ({reason}); using the heuristic reformulator" if stage == "reformulation"
                   else f"Ollama {stage} failed ({reason}); using an extractive answer")
        notices.append(message)
        if (stage, reason) not in self._warned:  # said once per session, recorded every turn
            self._warned.add((stage, reason))
            self.on_notice(message)
        self._announced.add(message)

    def _plan(self, reformulation: Reformulation, previous: Previous, anchors: set[int]) -> Plan:
        if reformulation.is_meta and self.options.allow_reuse and previous.reuse_source and not reformulation.topic_shift:
            return "reuse"
        if reformulation.is_follow_up and not reformulation.topic_shift and anchors and self.options.source_anchoring \
                and self.settings.source_anchoring:
            return "anchored_search"
        return "search"

    def _retrieve(self, plan: Plan, question: str, reformulation: Reformulation, q_vector: np.ndarray,
                  anchors: set[int], previous: Previous, notices: list[str]) -> tuple[list[RetrievedChunk], float | None]:
        if plan == "reuse":
            return self._reuse(previous.reuse_source or {}, notices)
        semantic = reformulation.semantic_query
        vector = q_vector if semantic == question else None
        request = SearchRequest(
            semantic_query=semantic,
            keyword_query=reformulation.keyword_query if self.options.use_keywords else semantic,
            k=self.settings.top_k,
            anchor_documents=frozenset(anchors) if plan == "anchored_search" else frozenset(),
            anchor_boost=self.settings.anchor_boost if plan == "anchored_search" else 0.0,
            anchor_exclude=self._said_sections(previous.lineage, anchors) if plan == "anchored_search" else frozenset(),
            vector=vector,
        )
        hits = search(self.db, self.embedder, self.settings, request)
        best = max((h.similarity for h in hits if h.similarity is not None), default=None)
        return [_retrieved(hit) for hit in hits], best

    def _said_sections(self, lineage: dict | None, anchors: set[int]) -> frozenset[int]:
        """Chunks of the sections the last answer already drew on: they get no anchor boost (a
        follow-up wants more from the same documents, not the same passages again)."""
        used = [c for c in (lineage or {}).get("chunks", []) if c.get("used")]
        said = {(c["document_id"], c.get("heading") or "") for c in used}
        chunks = library.chunks_by_ids(self.db, library.chunk_ids_of_documents(self.db, anchors))
        return frozenset(cid for cid, chunk in chunks.items() if (chunk.document_id, chunk.heading or "") in said)

    def _reuse(self, lineage: dict, notices: list[str]) -> tuple[list[RetrievedChunk], float | None]:
        old = [c for c in lineage.get("chunks", []) if c.get("used")] or lineage.get("chunks", [])
        alive = library.chunks_by_ids(self.db, [c["chunk_id"] for c in old])
        if len(alive) < len(old):
            notices.append(f"{len(old) - len(alive)} reused chunk(s) no longer exist (document changed or removed)")
        kept = [c for c in old if c["chunk_id"] in alive]
        chunks = [
            RetrievedChunk(rank=i, chunk_id=c["chunk_id"], document_id=alive[c["chunk_id"]].document_id,
                           document=alive[c["chunk_id"]].path, heading=alive[c["chunk_id"]].heading,
                           vector_rank=c.get("vector_rank"), fts_rank=c.get("fts_rank"), similarity=c.get("similarity"),
                           rrf=c.get("rrf", 0.0), boost=0.0, score=c.get("score", 0.0), anchored=True, reused=True)
            for i, c in enumerate(kept, start=1)
        ]
        best = max((c.similarity for c in chunks if c.similarity is not None), default=None)
        return chunks, best

    # --- answering ---------------------------------------------------------------------------

    def _answer(self, result: TurnResult, window: HistoryWindow, on_token: Callable[[str], None] | None) -> None:
        sources = self._sources(result)
        if self.options.recorded_answer is not None:
            result.answer, result.answer_mode = self.options.recorded_answer, "recorded"
            self._mark_supported(result)
            return
        if sources and self._use_ollama():
            try:
                self._llm_answer(result, window, sources, on_token)
                return
            except BackendUnavailable as exc:
                self._fallback_notice("answer", exc.reason, result.notices)
            except KeyboardInterrupt:
                result.notices.append("answer cancelled")
                result.answer = (result.answer + " …[cancelled]").strip()
                return
        self._extractive_answer(result, window, sources)

    def _sources(self, result: TurnResult) -> list[answers.Source]:
        stored = library.chunks_by_ids(self.db, [c.chunk_id for c in result.chunks])
        return [answers.Source(c.rank, stored[c.chunk_id]) for c in result.chunks if c.chunk_id in stored]

    def _llm_answer(self, result: TurnResult, window: HistoryWindow, sources: list[answers.Source],
                    on_token: Callable[[str], None] | None) -> None:
        prompt = answers.build_prompt(result.question, result.reformulation.semantic_query,
                                      window.messages, sources[:6], result.weak)
        result.answer_mode = "llm"
        pieces: list[str] = []
        try:
            for piece in answers.stream(self.backend, prompt):
                pieces.append(piece)
                if on_token:
                    on_token(piece)
        finally:
            result.answer = "".join(pieces)
        if not result.answer.strip():
            raise BackendUnavailable("empty answer")
        cited = answers.cited_numbers(result.answer, len(result.chunks))
        if cited:
            result.chunks = [replace(c, used=c.rank in cited) for c in result.chunks]
        else:
            self._mark_supported(result)

    def _extractive_answer(self, result: TurnResult, window: HistoryWindow, sources: list[answers.Source]) -> None:
        meta = result.plan == "reuse"
        question = result.question.lower()
        priors = {c.rank: c.similarity or 0.0 for c in result.chunks}
        reply = answers.extractive(
            f"{result.reformulation.semantic_query} {result.reformulation.keyword_query}",
            sources if meta else sources[:4], self.corpus().idf, priors=priors,
            count=self.settings.extractive_sentences + (1 if meta else 0), weak=result.weak,
            want_examples="example" in question or "instance" in question,
            exclude=window.last.assistant if meta and "summar" not in question else "",
        )
        result.answer, result.answer_mode = reply.text, "extractive"
        result.chunks = [replace(c, used=c.rank in reply.used) for c in result.chunks]

    def _answer_vector(self, result: TurnResult) -> np.ndarray:
        """The reply's vector for later history windows. An extractive answer is made of its
        chunks' sentences, so the mean of their vectors stands in for embedding it again."""
        used = [c.chunk_id for c in result.chunks if c.used]
        vectors = list(library.vectors_of(self.db, used).values()) if result.answer_mode == "extractive" else []
        if vectors:
            mean = np.mean(vectors, axis=0)
            return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
        return self.embedder.embed_query(result.answer[:2000] or " ")

    def _mark_supported(self, result: TurnResult) -> None:
        """For an answer without citations: the chunks most like the answer are what it used."""
        if not result.answer.strip() or not result.chunks:
            return
        vectors = library.vectors_of(self.db, [c.chunk_id for c in result.chunks])
        used = answers.supported_by(self.embedder.embed_query(result.answer[:2000]), vectors)
        result.chunks = [replace(c, used=c.chunk_id in used) for c in result.chunks]


def _similarity(vector: np.ndarray, window: tuple[Message, ...], role: str) -> float:
    """Cosine of the question and the window's last message of `role` (0 when there is none)."""
    last = next((m for m in reversed(window) if m.role == role and m.embedding is not None), None)
    return float(last.embedding @ vector) if last is not None else 0.0


def _retrieved(hit: Hit) -> RetrievedChunk:
    return RetrievedChunk(
        rank=hit.rank, chunk_id=hit.chunk.id, document_id=hit.chunk.document_id, document=hit.chunk.path,
        heading=hit.chunk.heading, vector_rank=hit.vector_rank, fts_rank=hit.fts_rank,
        similarity=None if hit.similarity is None else round(hit.similarity, 4), rrf=round(hit.rrf, 4),
        boost=hit.boost, score=round(hit.score, 4), anchored=hit.anchored, reused=False,
    )
