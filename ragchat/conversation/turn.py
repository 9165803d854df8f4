"""The turn: read -> reformulate -> plan -> retrieve -> answer -> persist.

Each stage is a function taking and returning frozen values (`reading`, `reformulate`, `plan`,
`retrieve`, `answering`); `Conversation.ask` is the chain, plus the two writes: the question and
the lineage of what was retrieved are saved before the answer is attempted, so a failed or
cancelled answer loses nothing of the turn.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
from sqlite_utils import Database

from ..answer import NOT_COVERED
from ..catalog import session_scope
from ..config import Settings
from ..embed import Embedder
from ..errors import RagchatError
from ..llm import ChatBackend, remote_notice
from ..params import Params
from ..search.titles import named_exactly
from ..store import library, sessions
from ..store.library import Scope
from . import answering, correction, coverage
from .answering import Answered, AnswerInputs
from .collections import Carried, asked_in, weighed_alone
from .combine import Evidence, combine, fidelity, repeats_the_user
from .corpus import CorpusView
from .followup.cues import without_deixis
from .followup.heuristic import HeuristicReformulator
from .history import model_history
from .models import Lineage, Reformulation, ReformulationInput, TurnResult
from .ollama_reformulator import ModelReading, OllamaReformulator
from .outline import asked_outline
from .plan import Ablations, RetrievalPlan, plan
from .reading import EMPTY_QUESTION, TurnContext, clean_question, probe, read_turn, window_of
from .reformulate import PendingReading, Reformulator, ask_model, reformulate
from .retrieve import Retrieval, retrieve
from .searching import TurnSearch

__all__ = ["Conversation", "Ablations", "EMPTY_QUESTION"]


def use_backend(backend: ChatBackend | None, settings: Settings) -> ChatBackend | None:
    """The backend the turn will talk to: none when off or (with `auto`) unreachable."""
    if backend is None or settings.ollama == "off":
        return None
    if settings.ollama == "on" or backend.available():
        return backend
    return None


@dataclass
class Conversation:
    db: Database
    embedder: Embedder
    settings: Settings
    session: str
    backend: ChatBackend | None = None
    ablations: Ablations = field(
        default_factory=Ablations
    )  # eval switches parts off (none in the chat)
    recorded_answer: str | None = None  # eval replays: store this instead of answering
    reformulator: Reformulator | None = None  # a fixed one (eval baselines); else Ollama/heuristic
    on_notice: Callable[[str], None] = lambda message: None
    _corpus: CorpusView | None = None
    _corpus_version: tuple | None = None
    _shown: set[str] = field(default_factory=set)  # notices already shown in this session
    # a thinking model's reasoning, as it streams (None: hidden; the setting ollama_show_thinking)
    on_thinking: Callable[[str], None] | None = None
    # the assistant message of the turn under way and its lineage, until its answer is stored
    _in_flight: tuple[int, Lineage] | None = None
    _within: Scope | None = None  # the scope of the turn being asked (None: every collection)

    # --- the chain ---------------------------------------------------------------------------

    def ask(
        self,
        question: str,
        on_token: Callable[[str], None] | None = None,
        *,
        retry: str | None = None,
    ) -> TurnResult:
        """One turn. `retry`: re-run the previous question with this as its subject (the REPL's
        `/retry X`; "" re-runs it as it was), as a typed "no, I meant X" does."""
        started = time.perf_counter()
        text, cut = clean_question(question)
        if not text and retry is None:
            raise RagchatError(EMPTY_QUESTION)
        text, typed = self._corrected(text, retry)
        vector = self.embedder.embed_query(text[: self.params.answer.embed_chars])
        remote = self._remote_notice()
        self._announce(remote)  # before anything is sent there
        opened = sessions.open_turn(
            self.db, self.session, text, embedding=vector
        )  # its number and history
        self._in_flight = None
        try:
            return self._run(opened, text, typed, vector, (*cut, *remote), on_token, started)
        except KeyboardInterrupt:
            self._cancelled(opened, text, typed)
            raise

    def _cancelled(self, opened: sessions.OpenedTurn, text: str, typed: str) -> None:
        """A turn cancelled before its answer was stored: the question stays with an empty answer
        marked cancelled (visible in inspect and export, left out of what a model reads)."""
        notice = ("cancelled before the answer",)
        if self._in_flight is not None:
            message_id, lineage = self._in_flight
            done = replace(lineage.with_answer("cancelled", None, notice))
            sessions.update_message(self.db, message_id, content="", lineage=done.to_dict())
            return
        lineage = Lineage(
            question=text,
            turn=opened.number,
            reformulation=Reformulation(text, "", False, False, False, "", ""),
            plan="search",
            answer_mode="cancelled",
            notices=notice,
            correction=typed,
        )
        sessions.add_message(
            self.db,
            opened.session_id,
            "assistant",
            "",
            lineage=lineage.to_dict(),
            turn=opened.number,
        )

    def _run(
        self,
        opened: sessions.OpenedTurn,
        text: str,
        typed: str,
        vector: np.ndarray,
        notices: tuple[str, ...],
        on_token: Callable[[str], None] | None,
        started: float,
    ) -> TurnResult:
        session_id, user_id = opened.session_id, opened.message_id
        within = self._within = session_scope(self.db, self.session)
        window = window_of(
            opened.history,
            vector,
            self.settings.history_window if self.ablations.use_window else 0,
            self.settings.params.followup.window_similarity,
        )
        search = TurnSearch(
            self.db,
            self.embedder,
            depth=max(self.settings.candidates, self.settings.top_k),
            embed_chars=self.params.answer.embed_chars,
            within=within,
            embedded={text: vector},
        )
        context = read_turn(
            self.db, text, vector, opened.history, window=window, search=search, notices=notices
        )
        context = replace(
            context,
            carried=self._weighed_alone(context),
            asked=asked_in(self.db, text, within, _standing(context.last)),
        )
        context, reformulation, pending = self._reformulate(
            replace(context, turn=opened.number, correction=correction.subject_typed(typed)), typed
        )
        chosen = plan(context, reformulation, self.settings, self.ablations)
        retrieval = retrieve(self.db, self.settings, chosen, context)
        lineage = replace(
            self._lineage(context, reformulation, chosen, retrieval, started, pending),
            correction=typed,
            scope=context.within.names if context.within is not None else (),
        )
        self._announce(lineage.notices)
        assistant_id = sessions.add_message(
            self.db, session_id, "assistant", "", lineage=lineage.to_dict(), turn=opened.number
        )
        self._in_flight = (assistant_id, lineage)
        if lineage.weak and self.recorded_answer is None and self.backend_in_use() is not None:
            # an extractive answer opens with this itself; a model's answer is streamed after it
            self.on_notice(f"{NOT_COVERED} The answer below stands on the closest passages.")
        answered = self._supported(
            lineage, self._answer(lineage, context, retrieval, on_token, typed)
        )
        self._announce(answered.notices)
        lineage = self._answered(lineage, answered, started)
        sessions.update_message(
            self.db,
            assistant_id,
            content=answered.text,
            lineage=lineage.to_dict(),
            embedding=answering.reply_vector(
                self.db, self.embedder, answered, lineage, self.params.answer
            ),
        )
        self._in_flight = None
        return TurnResult(self.session, lineage, answered.text, user_id, assistant_id)

    # --- the stages' glue --------------------------------------------------------------------

    def _corrected(self, text: str, retry: str | None) -> tuple[str, str]:
        """(the question to run, the correction as typed or ""): a correction re-runs the last
        question (as it was asked, its pronoun unresolved) with the new subject. Not for a fixed
        reformulator: an eval baseline searches what was typed."""
        subject = retry if retry is not None else correction.subject_of(text)
        if subject is None or (self.reformulator is not None and retry is None):
            return text, ""
        history = sessions.messages(self.db, sessions.session_id(self.db, self.session))
        last = next(
            (
                Lineage.from_dict(m.lineage)
                for m in reversed(history)
                if m.role == "assistant" and m.lineage
            ),
            None,
        )
        if last is None:
            if retry is not None:
                raise RagchatError("nothing to retry: ask a question first")
            return text, ""
        typed = text if retry is None else f"{correction.RETRY} {retry}".rstrip()
        if not subject:
            return last.question, typed
        if correction.restates(last.question, subject, self.params.followup.restated_words):
            return subject, typed  # X restates the whole need: it is the question
        return correction.corrected(last.question, subject), typed

    def corpus(self) -> CorpusView:
        """The corpus as this turn's question sees it (a scoped question: its documents'
        vocabulary), kept while the library and the scope stay the same."""
        within = self._within.document_ids if self._within is not None else None
        version = (library.library_version(self.db), within)
        if self._corpus is None or version != self._corpus_version:
            self._corpus, self._corpus_version = CorpusView(self.db, within), version
        return self._corpus

    @property
    def params(self) -> Params:
        return self.settings.params

    def backend_in_use(self) -> ChatBackend | None:
        return use_backend(self.backend, self.settings)

    def _remote_notice(self) -> tuple[str, ...]:
        """Said once per session when the turn's question and passages go to another machine."""
        backend = self.backend_in_use()
        notice = remote_notice(backend.host) if backend is not None else None
        return (notice,) if notice else ()

    def _reformulator(self) -> Reformulator:
        if self.reformulator is not None:
            return self.reformulator
        return HeuristicReformulator(self.corpus(), self.params.followup)

    def _ask_model(
        self,
        context: TurnContext,
        typed: str,
        heuristic: Reformulation,
        anchor_keywords: tuple[str, ...],
    ) -> PendingReading | None:
        """The model's reading (never for a fixed reformulator), asked once the heuristic's is
        known: the model reads the conversation with roles, the message as typed, the
        heuristic's reading as a hint and what the library holds behind the last answer."""
        backend = self.backend_in_use() if self.reformulator is None else None
        turns = tuple(model_history(context.history, self.params.answer))
        if backend is None or not turns:
            return None
        last = context.last
        scope = tuple(
            dict.fromkeys((c.title or c.document) for c in (last.chunks if last else ()) if c.used)
        )[: self.params.answer.scope_titles]
        data = ReformulationInput(
            question=context.question,
            last=context.window.last,
            window=tuple(m.content for m in context.window.older),
            anchor_keywords=anchor_keywords[: self.params.answer.scope_keywords],
            turns=turns,
            typed=typed if typed and not typed.startswith("/") else "",
            hint=heuristic.semantic_query,
            scope=scope,
        )
        return ask_model(OllamaReformulator(backend, self.params.answer), data)

    def _reformulate(
        self, context: TurnContext, typed: str
    ) -> tuple[TurnContext, Reformulation, PendingReading | None]:
        """The heuristic's reading, then the model's (the question's own keyword search runs
        while the model thinks), weighed in."""
        anchor_keywords = tuple(self.corpus().keywords_of(sorted(context.anchors.document_ids)))
        heuristic = reformulate(context, self._reformulator(), anchor_keywords)
        pending = self._ask_model(context, typed, heuristic, anchor_keywords)
        if pending is not None:  # the question's own keyword search, while the model thinks
            context.searches().fts(without_deixis(context.question), context.anchors.chunk_ids)
        reading, fallback = pending.result() if pending else (None, "")
        context = self._with_rewrite(context, reading)
        evidence = Evidence(
            context.probe.best, context.rewrite_best, self._fidelity(context, reading)
        )
        reformulation = combine(heuristic, reading, evidence, self.params)
        if fallback:
            reformulation = replace(reformulation, fallback=fallback)
        return context, reformulation, pending

    def _weighed_alone(self, context: TurnContext) -> Carried:
        return weighed_alone(context.searches(), context.question, context.carried)

    def _fidelity(self, context: TurnContext, reading: ModelReading | None) -> float:
        if reading is None:
            return 1.0
        previous = context.window.last.user
        return fidelity(reading.semantic_query, context.question, previous, self.params.combine)

    def _with_rewrite(self, context: TurnContext, reading: ModelReading | None) -> TurnContext:
        """The context with the model's rewrite searched on its own (when it is not the
        question): its best cosine (none when it finds nothing)."""
        earlier = tuple(m.content for m in context.history if m.role == "user")
        if reading is None or repeats_the_user(reading.semantic_query, context.question, earlier):
            return context
        search = context.searches()
        found = search.vector(reading.semantic_query, context.anchors.chunk_ids)
        rewrite = probe(context.loaded(self.db), found, search.depth)
        return replace(context, rewrite_best=rewrite.best if rewrite.ids else None)

    def _lineage(
        self,
        context: TurnContext,
        reformulation: Reformulation,
        chosen: RetrievalPlan,
        retrieval: Retrieval,
        started: float,
        pending: PendingReading | None,
    ) -> Lineage:
        fallback = reformulation.fallback
        anchored = chosen.kind == "anchored_search"
        evidence = self._evidence(context, reformulation, retrieval)
        # a meta-request ("tell me more") is about the last answer, not the library
        weak = not reformulation.is_meta and coverage.not_covered(evidence, self.params.coverage)
        return Lineage(
            question=context.question,
            turn=context.turn,
            reformulation=reformulation,
            plan=chosen.kind,
            history_window=tuple(context.window.ids),
            context_weight=round(chosen.context_weight, 3),
            queries=(*chosen.queries, *retrieval.extra),
            anchor_document_ids=tuple(sorted(context.anchors.document_ids)) if anchored else (),
            anchor_documents=context.anchors.paths if anchored else (),
            missing_anchors=context.anchors.missing,
            chunks=retrieval.chunks,
            weak=weak,
            coverage=evidence.to_dict(),
            notices=(
                *context.notices,
                *((fallback,) if fallback else ()),
                *retrieval.notices,
                *_unknown_notice(reformulation, evidence),
            ),
            timings_ms={
                "retrieval": round((time.perf_counter() - started) * 1000, 1),
                **({"model": round(pending.seconds * 1000, 1)} if pending else {}),
            },
        )

    def _evidence(
        self, context: TurnContext, reformulation: Reformulation, retrieval: Retrieval
    ) -> coverage.Evidence:
        ranked = retrieval.judged or retrieval.chunks
        top = ranked[: self.params.coverage.top]
        texts = [retrieval.stored[c.chunk_id].text for c in top if c.chunk_id in retrieval.stored]
        return coverage.gather(
            context.question,
            context.probe.best,
            self._subject_best(context, reformulation),
            context.probe.margin,
            ranked,
            texts,
            self.corpus(),
            self.params.coverage,
            getattr(self.embedder, "one_piece", None),
        )

    def _subject_best(self, context: TurnContext, reformulation: Reformulation) -> float:
        """How close the question comes to the library as the turn read it: a follow-up with its
        subject from the conversation, or a model's rewrite (the question's own best when it was
        read as typed)."""
        best = context.probe.best
        if context.rewrite_best is not None:
            best = max(best, context.rewrite_best)
        read = reformulation.semantic_query.strip()
        if not read or read == context.question.strip():
            return best
        found = context.searches().vector(read, depth=1)
        return max(best, found.similarity[found.ids[0]]) if found.ids else best

    def _answer(
        self,
        lineage: Lineage,
        context: TurnContext,
        retrieval: Retrieval,
        on_token: Callable[[str], None] | None,
        typed: str = "",
    ) -> Answered:
        if self.recorded_answer is not None:
            return answering.recorded(
                self.db, self.embedder, lineage, self.recorded_answer, self.params.answer
            )
        shown = tuple(m.content for m in context.history if m.role == "assistant")
        backend = self.backend_in_use()
        named = frozenset(named_exactly(self.db, lineage.question))  # the pages it names
        inputs = AnswerInputs(
            lineage,
            context.window,
            answering.sources_of(retrieval.stored, lineage),
            shown,
            turns=tuple(model_history(context.history, self.params.answer)) if backend else (),
            typed=typed if typed and not typed.startswith("/") else "",
            outline=asked_outline(self.db, lineage, named),
            named=named,
        )
        return answering.answer(
            inputs,
            backend=backend,
            corpus=self.corpus(),
            settings=self.settings,
            on_token=on_token,
            on_fallback=lambda notice: self._announce((notice,)),
            on_thinking=self.on_thinking,
        )

    def _supported(self, lineage: Lineage, answered: Answered) -> Answered:
        """An LLM answer without citations stands on the chunks most like it; the answer's vector,
        embedded for that, is kept for the history window (not embedded twice)."""
        if answered.used is not None or answered.mode != "llm":
            return answered
        given = set(answered.given or ())  # only a passage the model saw can support its answer
        seen = replace(lineage, chunks=tuple(c for c in lineage.chunks if c.rank in given))
        used, vector = answering.supported(
            self.db, self.embedder, seen, answered.text, self.params.answer
        )
        return replace(answered, used=used, vector=vector)

    def _answered(self, lineage: Lineage, answered: Answered, started: float) -> Lineage:
        done = lineage.with_answer(answered.mode, answered.used, answered.notices)
        if answered.given is not None:
            given = set(answered.given)
            done = replace(
                done,
                chunks=tuple(replace(c, seen=c.rank in given) for c in done.chunks),
                prompt=answered.prompt or {},
            )
        return replace(
            done,
            timings_ms={
                **done.timings_ms,
                "total": round((time.perf_counter() - started) * 1000, 1),
            },
        )

    def _announce(self, notices: tuple[str, ...]) -> None:
        """Each notice is shown once per session (a repeated fallback is recorded every turn)."""
        for notice in notices:
            if notice not in self._shown:
                self._shown.add(notice)
                self.on_notice(notice)


def _standing(last: Lineage | None) -> set[str]:
    """The collections of the documents the last answer stood on (none before a first answer)."""
    return {c.collection for c in last.chunks if c.used} if last is not None else set()


def _unknown_notice(reformulation: Reformulation, evidence: coverage.Evidence) -> tuple[str, ...]:
    """The question's names the library never mentions, said beside the answer (not for a
    meta-request, which is about the last answer)."""
    said = "" if reformulation.is_meta else coverage.never_mentioned(evidence.unknown)
    return (said,) if said else ()
