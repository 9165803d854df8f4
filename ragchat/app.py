"""What every command needs: the settings, the database and the embedder, opened lazily once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

from .config import Settings
from .conversation.models import Lineage
from .embed import Embedder, load_embedder
from .errors import BackendUnavailable, RagchatError, SessionError
from .store import library, readers, sessions, vectors
from .store.db import open_db

if TYPE_CHECKING:
    from sqlite_utils import Database

    from .conversation.turn import Conversation
    from .llm import Limits, OllamaBackend


def limits_of(settings: Settings) -> Limits:
    from .llm import Limits  # here: commands without a model never load the network code

    return Limits(
        connect=settings.ollama_connect_timeout,
        first_token=settings.ollama_load_timeout,
        between=settings.ollama_timeout,
        total=settings.ollama_reply_timeout,
        max_chars=settings.ollama_reply_chars,
        num_ctx=settings.ollama_num_ctx,
    )


def setup_hint(reason: str, model: str) -> str:
    """The command that fixes a setup failure, when there is one."""
    if reason.startswith("connection refused"):
        return " (start it: `ollama serve`; `ragchat doctor` checks the setup)"
    if reason.startswith("model '") and reason.endswith("not found"):
        return f" (pull it: `ollama pull {model}`)"
    return ""


@dataclass(frozen=True)
class AnsweredTurn:
    number: int  # 1-based, counting the session's questions
    message_id: int  # the assistant message
    lineage: Lineage
    answer: str

    @property
    def answered(self) -> bool:
        """An answer came (a question cut short by Ctrl-C or a failure has none)."""
        return self.lineage.answer_mode not in UNANSWERED and bool(self.answer.strip())


UNANSWERED = ("pending", "unanswered")


@dataclass
class App:
    settings: Settings
    origins: dict[str, str] = field(default_factory=dict)
    create: bool = False  # only ingest (and eval's own library) may create the database

    # the database's vector search and its in-memory copy: made with the database, released by
    # close()
    vector_index: vectors.VectorIndex | None = field(
        default=None, init=False, repr=False, compare=False
    )

    @cached_property
    def db(self) -> Database:
        db = open_db(self.settings.db, create=self.create)
        self.vector_index = vectors.attach(db)
        return db

    @cached_property
    def embedder(self) -> Embedder:
        """The configured model, after checking the database was embedded with the same one."""
        vectors.check_model(self.db, self.settings.embedding_model)
        embedder = load_embedder(self.settings)
        vectors.check_model(self.db, embedder.model_id, embedder.dim)
        return embedder

    def require_library(self) -> None:
        if library.chunk_count(self.db) == 0:
            raise RagchatError(
                "the library is empty: run `ragchat ingest PATH` first (database "
                f"{self.settings.db})"
            )

    def close(self) -> None:
        if self.vector_index is not None:
            self.vector_index.close()
            self.vector_index = None
        if "db" in self.__dict__:  # once: a later use opens the database again
            db = self.__dict__.pop("db")
            readers.close_reader(db)
            db.close()

    @cached_property
    def backend(self) -> OllamaBackend | None:
        if self.settings.ollama == "off":
            return None
        from .llm import OllamaBackend  # here: commands without a model never load it

        return OllamaBackend(
            self.settings.ollama_host, self.settings.ollama_model, limits_of(self.settings)
        )

    def backend_problem(self) -> str | None:
        """Why Ollama will not be used (None when it will)."""
        if self.backend is None:
            return "Ollama is off (setting ollama = off)"
        try:
            self.backend.check()
        except BackendUnavailable as exc:
            return f"Ollama not usable: {exc.reason}{setup_hint(exc.reason, self.backend.model)}"
        return None

    def warm_model(self) -> None:
        """Ask the server to load the model now, in the background (a chat's first question then
        does not wait for the load); `backend.warmed` is set when it is in memory or failed."""
        backend = self.backend
        if backend is None:
            return

        def warm() -> None:
            with suppress(BackendUnavailable):
                backend.warm()

        threading.Thread(target=warm, daemon=True, name="ollama-warm").start()

    def conversation(
        self, session: str, on_notice: Callable[[str], None] = lambda m: None
    ) -> Conversation:
        from .conversation.turn import Conversation  # here: only chatting loads the turn pipeline

        return Conversation(
            self.db,
            self.embedder,
            self.settings,
            session,
            backend=self.backend,
            on_notice=on_notice,
        )

    def turns(self, session: str) -> list[AnsweredTurn]:
        """The turns of a session, in order; a question whose answer never came is a turn too
        (its lineage says `unanswered`, or `pending` when it searched before it stopped)."""
        history = sessions.messages(self.db, sessions.session_id(self.db, session, create=False))
        answers = {m.turn: m for m in history if m.role == "assistant" and m.lineage is not None}
        turns = []
        for m in history:
            if m.role == "user" and m.turn in answers:
                reply = answers[m.turn]
                lineage = Lineage.from_dict(reply.lineage or {})
                turns.append(AnsweredTurn(m.turn, reply.id, lineage, reply.content))
            elif m.role == "user":
                lineage = Lineage.from_dict(
                    {"question": m.content, "turn": m.turn, "answer_mode": "unanswered"}
                )
                turns.append(AnsweredTurn(m.turn, m.id, lineage, ""))
        return turns

    def turn(self, session: str, number: int | None = None) -> AnsweredTurn:
        """Turn `number` of a session (default: the last); a SessionError says what exists."""
        turns = self.turns(session)
        if not turns:
            raise SessionError(f"session {session!r} has no turns yet")
        chosen = (
            turns[-1] if number is None else next((t for t in turns if t.number == number), None)
        )
        if chosen is None:
            raise SessionError(
                f"session {session!r} has no turn {number} (it has turns 1-{turns[-1].number})"
            )
        return chosen

    def session_name(self, session: str | None) -> str:
        if (
            session is not None and not session.strip()
        ):  # not "the latest": that would be another session
            raise SessionError("the session name is empty: give one with --session NAME")
        name = session or sessions.latest_session(self.db)
        if not name:
            raise SessionError(
                "no sessions yet: ask something first (`ragchat ask` or `ragchat chat`)"
            )
        return name
