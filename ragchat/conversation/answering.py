"""Stage 5 of a turn: the answer, streamed from the chat backend or extractive, and which
chunks it stands on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np
from sqlite_utils import Database

from .. import answer as answers
from ..answer import Request
from ..config import Settings
from ..embed import Embedder
from ..errors import BackendUnavailable
from ..llm import ChatBackend
from ..params import AnswerParams
from ..search.passages import passages
from ..store.library import StoredChunk
from ..store.vectors import vectors_of
from .corpus import CorpusStats
from .history import HistoryWindow
from .models import Lineage
from .reformulate import fallback_notice

TokenSink = Callable[[str], None]


@dataclass(frozen=True)
class Answered:
    text: str
    mode: str  # llm | extractive | recorded
    used: frozenset[int] | None  # chunk ids the answer stands on (None: not decided here)
    notices: tuple[str, ...] = ()
    vector: np.ndarray | None = None  # the reply's vector for later history windows, when known


@dataclass(frozen=True)
class AnswerInputs:
    lineage: Lineage
    window: HistoryWindow
    sources: tuple[answers.Source, ...]
    shown: tuple[str, ...] = ()  # the session's earlier answers, oldest first


def sources_of(stored: Mapping[int, StoredChunk], lineage: Lineage) -> tuple[answers.Source, ...]:
    return tuple(
        answers.Source(c.rank, stored[c.chunk_id]) for c in lineage.chunks if c.chunk_id in stored
    )


def supported(
    db: Database, embedder: Embedder, lineage: Lineage, text: str, params: AnswerParams
) -> tuple[frozenset[int], np.ndarray]:
    """For an answer without citations: the chunks most like the answer are what it used."""
    vector = embedder.embed_query(text[: params.embed_chars] or " ")
    if not text.strip() or not lineage.chunks:
        return frozenset(), vector
    vectors = vectors_of(db, [c.chunk_id for c in lineage.chunks])
    return frozenset(answers.supported_by(vector, vectors, params)), vector


def recorded(
    db: Database, embedder: Embedder, lineage: Lineage, text: str, params: AnswerParams
) -> Answered:
    used, vector = supported(db, embedder, lineage, text, params)
    return Answered(text, "recorded", used, vector=vector)


def llm_answer(
    backend: ChatBackend, inputs: AnswerInputs, on_token: TokenSink | None, params: AnswerParams
) -> Answered:
    """Streamed; raises BackendUnavailable (nothing usable) or KeyboardInterrupt (cancelled)."""
    lineage = inputs.lineage
    joined = passages([(s.number, s.chunk) for s in inputs.sources], params.prompt_sources)
    prompt = answers.build_prompt(
        lineage.question,
        lineage.reformulation.leading_query,
        inputs.window.messages,
        [answers.Source(p.number, p.chunk) for p in joined],
        lineage.weak,
        params,
    )
    pieces: list[str] = []
    try:
        for piece in answers.stream(backend, prompt):
            pieces.append(piece)
            if on_token:
                on_token(piece)
    except KeyboardInterrupt:
        return Answered(
            ("".join(pieces) + " …[cancelled]").strip(), "llm", None, ("answer cancelled",)
        )
    text = "".join(pieces)
    if not text.strip():
        raise BackendUnavailable("empty answer")
    cited = answers.cited_numbers(text, len(lineage.chunks))
    ranks = {rank for p in joined if p.number in cited for rank in p.ranks}
    used = frozenset(c.chunk_id for c in lineage.chunks if c.rank in ranks) if cited else None
    return Answered(text, "llm", used)


def extractive_answer(inputs: AnswerInputs, corpus: CorpusStats, settings: Settings) -> Answered:
    """Units of the sources chosen by the request's mode (`answers.mode_of`): a meta-request
    draws on all the sources (the last ones first) and shows one more unit. "Tell me more" and
    "give me an example" never say again what the session's answers said; a question may (asked
    again, or "and read it?" after an answer that already holds it, it gets that answer)."""
    lineage = inputs.lineage
    meta = lineage.plan == "reuse"
    r = lineage.reformulation
    params = settings.params.answer
    request = Request(
        query=f"{r.leading_query} {r.keyword_query}",
        sources=answers.answer_pool(inputs.sources, meta, params),
        count=settings.extractive_sentences + (params.meta_extra_units if meta else 0),
        weak=lineage.weak,
        priors={c.rank: c.similarity or 0.0 for c in lineage.chunks},
        exclude=_shown(inputs, meta),
        cover=[c.rank for c in lineage.chunks if c.reused],
    )
    reply = answers.extractive(answers.mode_of(lineage.question, meta), request, corpus.idf, params)
    used = frozenset(c.chunk_id for c in lineage.chunks if c.rank in reply.used)
    return Answered(reply.text, "extractive", used)


def _shown(inputs: AnswerInputs, meta: bool) -> str:
    """What the answer must not say again: for "tell me more" or "give me an example", every
    answer of the session; nothing for a question, which gets its best units even when the last
    answer showed them (excluding them lost answer F1: govt 0.3042 -> 0.3035, 3 turns)."""
    if not meta:
        return ""
    return "\n\n".join(dict.fromkeys([*inputs.shown, inputs.window.last.assistant]))


def answer(
    inputs: AnswerInputs,
    *,
    backend: ChatBackend | None,
    corpus: CorpusStats,
    settings: Settings,
    on_token: TokenSink | None,
    on_fallback: Callable[[str], None],
) -> Answered:
    """The backend's answer when there is one and sources to give it, else extractive."""
    if inputs.sources and backend is not None:
        try:
            return llm_answer(backend, inputs, on_token, settings.params.answer)
        except BackendUnavailable as exc:
            notice = fallback_notice("answer", exc.reason)
            on_fallback(notice)
            extractive = extractive_answer(inputs, corpus, settings)
            return Answered(extractive.text, extractive.mode, extractive.used, (notice,))
    return extractive_answer(inputs, corpus, settings)


def reply_vector(
    db: Database, embedder: Embedder, answered: Answered, lineage: Lineage, params: AnswerParams
) -> np.ndarray:
    """The reply's vector for later history windows. An extractive answer is made of its
    chunks' sentences, so the mean of their vectors stands in for embedding it again."""
    if answered.vector is not None:
        return answered.vector
    used = [c.chunk_id for c in lineage.chunks if c.used]
    vectors = list(vectors_of(db, used).values()) if answered.mode == "extractive" else []
    if vectors:
        mean = np.mean(vectors, axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
    return embedder.embed_query(answered.text[: params.embed_chars] or " ")
