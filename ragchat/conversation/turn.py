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

from sqlite_utils import Database

from ..config import Settings
from ..embed import Embedder
from ..errors import RagchatError
from ..llm import ChatBackend, remote_notice
from ..store import library, sessions
from . import answering
from .answering import Answered, AnswerInputs
from .corpus import CorpusView
from .heuristic import HeuristicReformulator
from .models import Lineage, Reformulation, TurnResult
from .ollama_reformulator import OllamaReformulator
from .plan import RetrievalPlan, TurnOptions, plan
from .reading import EMPTY_QUESTION, TurnContext, clean_question, read_turn
from .reformulate import FallbackReformulator, Reformulator, reformulate
from .retrieve import Retrieval, retrieve

__all__ = ["Conversation", "TurnOptions", "EMPTY_QUESTION"]


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
    options: TurnOptions = field(default_factory=TurnOptions)
    reformulator: Reformulator | None = None  # a fixed one (eval baselines); else Ollama/heuristic
    on_notice: Callable[[str], None] = lambda message: None
    _corpus: CorpusView | None = None
    _corpus_version: tuple | None = None
    _shown: set[str] = field(default_factory=set)  # notices already shown in this session

    # --- the chain ---------------------------------------------------------------------------

    def ask(self, question: str, on_token: Callable[[str], None] | None = None) -> TurnResult:
        started = time.perf_counter()
        text, cut = clean_question(question)
        if not text:
            raise RagchatError(EMPTY_QUESTION)
        session_id = sessions.session_id(self.db, self.session)
        history = tuple(sessions.messages(self.db, session_id))
        vector = self.embedder.embed_query(text[:2000])
        remote = self._remote_notice()
        self._announce(remote)  # before anything is sent there
        context = read_turn(self.db, text, vector, history, depth=max(self.settings.candidates, self.settings.top_k),
                            window_size=self.settings.history_window if self.options.use_window else 0,
                            notices=(*cut, *remote))
        user_id = sessions.add_message(self.db, session_id, "user", text, embedding=vector)
        reformulation = reformulate(context, self._reformulator(), tuple(self.corpus().keywords_of(sorted(context.anchors.document_ids))))
        chosen = plan(context, reformulation, self.settings, self.options)
        retrieval = retrieve(self.db, self.embedder, self.settings, chosen, context)
        lineage = self._lineage(context, reformulation, chosen, retrieval, started)
        self._announce(lineage.notices)
        assistant_id = sessions.add_message(self.db, session_id, "assistant", "", lineage=lineage.to_dict())
        answered = self._supported(lineage, self._answer(lineage, context, on_token))
        self._announce(answered.notices)
        lineage = self._answered(lineage, answered, started)
        sessions.update_message(self.db, assistant_id, content=answered.text, lineage=lineage.to_dict(),
                                embedding=answering.reply_vector(self.db, self.embedder, answered, lineage))
        return TurnResult(self.session, lineage, answered.text, user_id, assistant_id)

    # --- the stages' glue --------------------------------------------------------------------

    def corpus(self) -> CorpusView:
        version = library.library_version(self.db)
        if self._corpus is None or version != self._corpus_version:
            self._corpus, self._corpus_version = CorpusView(self.db), version
        return self._corpus

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
        heuristic = HeuristicReformulator(self.corpus())
        backend = self.backend_in_use()
        return FallbackReformulator(OllamaReformulator(backend), heuristic, self.corpus()) if backend else heuristic

    def _lineage(self, context: TurnContext, reformulation: Reformulation, chosen: RetrievalPlan,
                 retrieval: Retrieval, started: float) -> Lineage:
        fallback = reformulation.fallback
        anchored = chosen.kind == "anchored_search"
        return Lineage(
            question=context.question, turn=context.turn, reformulation=reformulation,
            plan=chosen.kind, history_window=tuple(context.window.ids), context_weight=round(chosen.context_weight, 3),
            queries=chosen.queries,
            anchor_document_ids=tuple(sorted(context.anchors.document_ids)) if anchored else (),
            anchor_documents=context.anchors.paths if anchored else (), missing_anchors=context.anchors.missing,
            chunks=retrieval.chunks, weak=retrieval.weak(self.settings.weak_match),
            notices=(*context.notices, *((fallback,) if fallback else ()), *retrieval.notices),
            timings_ms={"retrieval": round((time.perf_counter() - started) * 1000, 1)},
        )

    def _answer(self, lineage: Lineage, context: TurnContext, on_token: Callable[[str], None] | None) -> Answered:
        if self.options.recorded_answer is not None:
            return answering.recorded(self.db, self.embedder, lineage, self.options.recorded_answer)
        shown = tuple(m.content for m in context.history if m.role == "assistant")
        inputs = AnswerInputs(lineage, context.window, answering.sources_of(self.db, lineage), shown)
        return answering.answer(inputs, backend=self.backend_in_use(), corpus=self.corpus(), settings=self.settings,
                                on_token=on_token, on_fallback=lambda notice: self._announce((notice,)))

    def _supported(self, lineage: Lineage, answered: Answered) -> Answered:
        """An LLM answer without citations stands on the chunks most like it; the answer's vector,
        embedded for that, is kept for the history window (not embedded twice)."""
        if answered.used is not None or answered.mode != "llm":
            return answered
        used, vector = answering.supported(self.db, self.embedder, lineage, answered.text)
        return replace(answered, used=used, vector=vector)

    def _answered(self, lineage: Lineage, answered: Answered, started: float) -> Lineage:
        done = lineage.with_answer(answered.mode, answered.used, answered.notices)
        return replace(done, timings_ms={**done.timings_ms, "total": round((time.perf_counter() - started) * 1000, 1)})

    def _announce(self, notices: tuple[str, ...]) -> None:
        """Each notice is shown once per session (a repeated fallback is recorded every turn)."""
        for notice in notices:
            if notice not in self._shown:
                self._shown.add(notice)
                self.on_notice(notice)
