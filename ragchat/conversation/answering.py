"""Stage 5 of a turn: the answer, streamed from the chat backend or extractive, and which
chunks it stands on."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

import numpy as np
from sqlite_utils import Database

from .. import answer as answers
from ..answer import Request
from ..config import Settings
from ..embed import Embedder
from ..errors import BackendUnavailable
from ..ingest.releases import release_of
from ..lexicon import WHY_QUESTION
from ..llm import ChatBackend
from ..params import AnswerParams
from ..search.passages import Passage, passages
from ..store.library import StoredChunk
from ..store.vectors import vectors_of
from ..text import content_words, holds_code, is_name, printable, stem, stems
from .corpus import CorpusStats
from .followup.cues import meta_subject
from .history import HistoryWindow
from .models import Lineage
from .outline import Outline, numbered
from .reformulate import fallback_notice

TokenSink = Callable[[str], None]


@dataclass(frozen=True)
class Answered:
    text: str
    mode: str  # llm | extractive | recorded | cancelled | cut (a model's reply stopped by a limit)
    used: frozenset[int] | None  # chunk ids the answer stands on (None: not decided here)
    notices: tuple[str, ...] = ()
    vector: np.ndarray | None = None  # the reply's vector for later history windows, when known
    given: tuple[int, ...] | None = None  # the source numbers a model was given (None: no model)
    prompt: dict | None = None  # what the model's prompt held and left out (for inspect)


@dataclass(frozen=True)
class AnswerInputs:
    lineage: Lineage
    window: HistoryWindow
    sources: tuple[answers.Source, ...]
    shown: tuple[str, ...] = ()  # the session's earlier answers, oldest first
    turns: tuple[tuple[str, str], ...] = ()  # the answered exchanges a model reads (history.py)
    typed: str = ""  # the question as typed, when the turn runs another (a correction)
    outline: Outline | None = None  # the page the question names and asks about as a whole
    named: frozenset[int] = frozenset()  # the documents the question names (a title typed whole)


def sources_of(stored: Mapping[int, StoredChunk], lineage: Lineage) -> tuple[answers.Source, ...]:
    return tuple(
        answers.Source(c.rank, chunk, label=release_of(chunk.heading) or _entry_of(chunk.heading))
        for c in lineage.chunks
        if (chunk := stored.get(c.chunk_id)) is not None
    )


def _entry_of(heading: str) -> str:
    """The name a chunk's section is titled by, when its title is a name (`text.is_name`): a
    reference entry ("[report] fail_under", "site_name", "--keep") whose text leaves it out."""
    title = heading.rsplit(" > ", 1)[-1].strip()
    return title if is_name(title) else ""


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
    backend: ChatBackend,
    inputs: AnswerInputs,
    on_token: TokenSink | None,
    params: AnswerParams,
    num_ctx: int,
    on_thinking: TokenSink | None = None,
) -> Answered:
    """Streamed; raises BackendUnavailable when nothing usable came. What was shown is kept when
    the reply is cancelled (Ctrl-C), cut by a limit or broken off: stored as the answer, free of
    terminal escapes and of a thinking model's reasoning."""
    lineage = inputs.lineage
    prompt, joined = _prompt(backend, inputs, params, num_ctx)
    given = tuple(sorted(_ranks(joined, set(prompt.given))))  # the chunks the model saw, by rank
    splitter = answers.ThinkSplitter()
    pieces: list[str] = []
    thought = 0

    def take(answer: str, thinking: str) -> None:
        nonlocal thought
        thought += len(thinking)
        if thinking and on_thinking:
            on_thinking(thinking)
        if answer:
            pieces.append(answer)
            if on_token:
                on_token(answer)

    stopped, notice = "", ""
    try:
        for piece in answers.stream(backend, prompt.messages):
            take(*splitter.feed(piece))
    except KeyboardInterrupt:
        stopped, notice = "cancelled", "answer cancelled"
    except BackendUnavailable as exc:
        if not "".join(pieces).strip():
            raise
        stopped, notice = "cut", f"answer stopped: {exc.reason}"
    take(*splitter.flush())
    text = printable("".join(pieces)).strip()
    report = _report(prompt, backend, thought)
    if stopped:
        mark = " …[cancelled]" if stopped == "cancelled" else " …[cut]"
        partly = _ranks(joined, answers.citations(text, prompt.given)[0])
        chosen = frozenset(c.chunk_id for c in lineage.chunks if c.rank in partly)
        return Answered(
            (text + mark).strip(), stopped, chosen, (notice,), given=given, prompt=report
        )
    if not text:
        raise BackendUnavailable("empty answer" if not thought else "only thinking, no answer")
    numbers, unknown = answers.citations(text, prompt.given)
    notices = (_unknown_notice(unknown, prompt.given),) if unknown else ()
    cited = _ranks(joined, numbers)
    stands = frozenset(c.chunk_id for c in lineage.chunks if c.rank in cited) if cited else None
    return Answered(text, "llm", stands, notices, given=given, prompt=report)


def _prompt(
    backend: ChatBackend, inputs: AnswerInputs, params: AnswerParams, num_ctx: int
) -> tuple[answers.Prompt, list[Passage]]:
    """The answer's prompt fitted to the model's context: `num_ctx` less room for the answer,
    in characters at the rate the server last counted (prompt_eval_count), else an estimate.
    Adjacent chunks of one section reach the model as one passage, numbered by its first."""
    lineage = inputs.lineage
    rate = chars_per_token(backend) or params.chars_per_token
    budget = int(max(num_ctx - params.answer_reserve_tokens, num_ctx // 2) * rate)
    joined = _passages(inputs, params)
    prompt = answers.fit_prompt(
        inputs.typed or lineage.question,
        lineage.reformulation.leading_query,  # the turn's best reading, a hint beside the words
        inputs.turns,
        [answers.Source(p.number, p.chunk) for p in joined],
        lineage.weak,
        budget,
        params,
    )
    prompt.report["num_ctx"] = num_ctx
    return prompt, joined


def _passages(inputs: AnswerInputs, params: AnswerParams) -> list[Passage]:
    """The turn's sources as the passages a model reads: the first `prompt_sources`, adjacent
    chunks of one section joined into one, their overlap said once (`search.passages`)."""
    return passages([(s.number, s.chunk) for s in inputs.sources], params.prompt_sources)


def _ranks(joined: list[Passage], numbers: set[int]) -> set[int]:
    """The ranks of the chunks in the passages numbered `numbers`."""
    return {rank for p in joined if p.number in numbers for rank in p.ranks}


def chars_per_token(backend: ChatBackend) -> float | None:
    """Characters per token of the backend's last request, as its server counted them."""
    tokens = getattr(backend, "last_prompt_tokens", None)
    chars = getattr(backend, "last_prompt_chars", 0)
    return chars / tokens if tokens and chars else None


def _report(prompt: answers.Prompt, backend: ChatBackend, thought: int) -> dict:
    report = dict(prompt.report)
    tokens = getattr(backend, "last_prompt_tokens", None)
    if tokens:
        report["prompt_tokens"] = tokens  # counted by the server
    if thought:
        report["thinking_chars"] = thought
    return report


def _unknown_notice(unknown: list[int], given: tuple[int, ...]) -> str:
    cited = ", ".join(f"[{n}]" for n in unknown)
    shown = ", ".join(f"[{n}]" for n in given) or "none"
    return f"the answer cites {cited}, which it was not given (it was given {shown})"


def extractive_answer(inputs: AnswerInputs, corpus: CorpusStats, settings: Settings) -> Answered:
    """Units of the sources chosen by the request's mode (`answers.mode_of`): a meta-request
    draws on all the sources (the last ones first) and shows one more unit. "Tell me more" and
    "give me an example" never say again what the session's answers said, unless the example's
    own subject is code one of them showed (`extractive._shown_on_subject`); a question may
    (asked again, or "and read it?" after an answer that already holds it, it gets that answer)."""
    lineage = inputs.lineage
    meta = lineage.plan == "reuse"
    r = lineage.reformulation
    params = settings.params.answer
    if inputs.outline is not None:
        parts = numbered(inputs.outline, lineage)
        summary = answers.outline_summary(
            parts, inputs.outline.section, params, inputs.outline.title, corpus.idf
        )
        if summary.text:
            used = frozenset(c.chunk_id for c in lineage.chunks if c.rank in summary.used)
            return Answered(summary.text, "extractive", used)
    mode = answers.mode_of(lineage.question, meta)
    pool = _in_passages(
        _pool(inputs, meta, params, beside=mode is answers.Mode.EXAMPLE)
        if meta or mode is not answers.Mode.QUESTION
        else _named_pool(inputs, params),
        inputs,
        params,
    )
    request = Request(
        query=f"{r.leading_query} {r.keyword_query}",
        sources=pool,
        # a meta-request shows one unit more, a summary none: it is no longer than its subject
        count=settings.extractive_sentences
        + (params.meta_extra_units if meta and mode is not answers.Mode.SUMMARY else 0),
        weak=lineage.weak,
        priors={c.rank: c.similarity or 0.0 for c in lineage.chunks},
        exclude=_shown(inputs, meta),
        last=inputs.window.last.assistant if meta else "",
        said="" if meta else "\n\n".join(inputs.shown),
        cover=[c.rank for c in lineage.chunks if c.reused],
        subject=(meta_subject(lineage.question) or "") if meta else "",
        why=bool(WHY_QUESTION.match(inputs.typed or lineage.question)),
        asked="" if meta else lineage.question,
        again=_named_again(inputs, meta, corpus),
        reach=_reach(inputs, pool, params) if mode is answers.Mode.QUESTION else (),
        follow_up=r.goes_on,
    )
    reply = answers.extractive(mode, request, corpus.idf, params)
    used = frozenset(c.chunk_id for c in lineage.chunks if c.rank in reply.used)
    return Answered(reply.text, "extractive", used)


def _named_pool(inputs: AnswerInputs, params: AnswerParams) -> list[answers.Source]:
    """A question's pool; when it names, by a title typed whole, the page that leads its sources
    ("does httpx support HTTP/2, and how do I turn it on?", the "HTTP/2" page first), that page's
    sources only: what the page says is the answer, and another page's sentence on the subject
    is not (the async page's `.http_version` example beside the HTTP/2 page's `pip install
    httpx[http2]`)."""
    pool = _pool(inputs, False, params)
    if not pool or pool[0].chunk.document_id not in inputs.named:
        return pool
    brought = {c.rank for c in inputs.lineage.chunks if c.beside is not None}
    page = [
        s
        for s in inputs.sources
        if s.chunk.document_id == pool[0].chunk.document_id and s.number not in brought
    ]
    return list(answers.answer_pool(page, False, params))


def _pool(
    inputs: AnswerInputs, meta: bool, params: AnswerParams, beside: bool = False
) -> list[answers.Source]:
    """The sources an extractive answer draws from, without the chunks brought in beside another
    of their section (`beside`): they widen what a model reads, while the extractive answer ranks
    its units by the search's own order (drawing on them too lost 3 docs-set turns for 1); a
    pool chunk's passage still joins them, for the units that start in it (`_in_passages`). An
    example request keeps them: a section's code often sits in the chunk after the sentences
    the last answer showed ("show me that code")."""
    if beside:
        return list(answers.answer_pool(inputs.sources, meta, params))
    brought = {c.rank for c in inputs.lineage.chunks if c.beside is not None}
    own = [s for s in inputs.sources if s.number not in brought]
    return list(answers.answer_pool(own, meta, params))


def _in_passages(
    pool: list[answers.Source], inputs: AnswerInputs, params: AnswerParams
) -> list[answers.Source]:
    """The pool's chunks, each read in its passage as a model reads it (`_passages`: the
    chunks of its section next to it among the turn's sources, joined, the overlap said once),
    so a chunk boundary parts no lead-in from its code: its units are those that start in it
    (`extractive._own_units`), cited by its own number as before. Only a passage that holds
    code: in prose the joining only makes the sentences a boundary cut whole, and read so,
    MTRAG's answers (no code) lost answer F1 (govt 0.3070 -> 0.3064, switch 0.3293 -> 0.3270)."""
    texts = {s.number: s.chunk.text for s in inputs.sources}
    holding = {rank: p for p in _passages(inputs, params) for rank in p.ranks}
    read = []
    for source in pool:
        passage = holding.get(source.number)
        if passage is None or len(passage.ranks) == 1 or not holds_code(passage.chunk.text):
            read.append(source)
            continue
        whole = replace(
            source.chunk,
            text=passage.chunk.text,
            opens_section=passage.chunk.opens_section,
            closes_section=passage.chunk.closes_section,
        )
        near = tuple(texts[rank] for rank in passage.ranks if rank != source.number)
        read.append(replace(source, chunk=whole, own=source.chunk.text, near=near))
    return read


def _reach(
    inputs: AnswerInputs, pool: list[answers.Source], params: AnswerParams
) -> tuple[answers.Source, ...]:
    """The sources a model would read (the first `prompt_sources`) that the pool leaves out and
    that go on with a section the pool draws on (same document, same heading): the code of a
    section the answer stands on may come beside it, whether its chunk was brought in beside
    one of the pool's or ranked below them. Another section's code, even on the same page
    ("Files & Binary Data" beside an answer on "Form Data"), is another subject. The chunk
    right after a pool chunk in its section lends the step that opens it (a lead-in with its
    code) to the answer that shows the pool chunk's last unit (`_Ranking.with_next_steps`): a
    test that uses the fixtures the pool chunk ends with, offered otherwise only when its own
    words outscore the answer's (dramatiq's "how do I test my actors?")."""
    taken = {s.number for s in pool}
    sections = {(s.chunk.document_id, s.chunk.heading) for s in pool}
    read = sorted(inputs.sources, key=lambda s: s.number)[: params.prompt_sources]
    return tuple(
        s
        for s in read
        if s.number not in taken and (s.chunk.document_id, s.chunk.heading) in sections
    )


def _shown(inputs: AnswerInputs, meta: bool) -> str:
    """What the answer must not say again: for "tell me more" or "give me an example", every
    answer of the session; for a correction ("no, I meant X"), the answer it corrects,
    which the user has just said was about the wrong thing; nothing for a question, which gets
    its best units even when the last answer showed them (excluding them lost answer F1: govt
    0.3042 -> 0.3035, 3 turns)."""
    if inputs.typed and not meta:
        return inputs.window.last.assistant
    if not meta:
        return ""
    return "\n\n".join(dict.fromkeys([*inputs.shown, inputs.window.last.assistant]))


def _named_again(inputs: AnswerInputs, meta: bool, corpus: CorpusStats) -> frozenset[str]:
    """What a correction names that the answer it corrects may show again: the rarest word of
    "no, I meant X" (`Lineage.correction`) that the corrected question did not hold. "no, I
    meant making it use uvloop" after an answer that listed `use_uvloop` among other options
    points at that line."""
    subject = inputs.lineage.correction
    if not subject or meta:
        return frozenset()
    asked = stems(inputs.window.last.user)
    new = [w for w in content_words(subject) if stem(w) not in asked and corpus.chunk_frequency(w)]
    return frozenset({stem(max(new, key=corpus.idf))}) if new else frozenset()


def answer(
    inputs: AnswerInputs,
    *,
    backend: ChatBackend | None,
    corpus: CorpusStats,
    settings: Settings,
    on_token: TokenSink | None,
    on_fallback: Callable[[str], None],
    on_thinking: TokenSink | None = None,
) -> Answered:
    """The backend's answer when there is one and sources to give it, else extractive."""
    if inputs.sources and backend is not None:
        try:
            return llm_answer(
                backend,
                inputs,
                on_token,
                settings.params.answer,
                settings.ollama_num_ctx,
                on_thinking,
            )
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
