"""What every command needs: the settings, the database and the embedder, opened lazily once."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from .config import Settings
from .embed import Embedder, load_embedder
from .errors import BackendUnavailable, RagchatError, SessionError
from .store import library, sessions
from .store.sessions import Message
from .store.db import open_db

if TYPE_CHECKING:
    from sqlite_utils import Database

    from .conversation.turn import Conversation, TurnOptions

    from .llm import OllamaBackend


@dataclass
class App:
    settings: Settings
    origins: dict[str, str] = field(default_factory=dict)

    @cached_property
    def db(self) -> Database:
        return open_db(self.settings.db)

    @cached_property
    def embedder(self) -> Embedder:
        """The configured model, after checking the database was embedded with the same one."""
        library.check_model(self.db, self.settings.embedding_model)
        embedder = load_embedder(self.settings)
        library.check_model(self.db, embedder.model_id, embedder.dim)
        return embedder

    def require_library(self) -> None:
        if library.chunk_count(self.db) == 0:
            raise RagchatError(f"the library is empty: run `ragchat ingest PATH` first (database {self.settings.db})")

    def close(self) -> None:
        if "db" in self.__dict__:
            self.db.close()

    @cached_property
    def backend(self) -> OllamaBackend | None:
        if self.settings.ollama == "off":
            return None
        from .llm import OllamaBackend

        return OllamaBackend(self.settings.ollama_host, self.settings.ollama_model, self.settings.ollama_timeout)

    def backend_problem(self) -> str | None:
        """Why Ollama will not be used (None when it will)."""
        if self.backend is None:
            return "Ollama is off (setting ollama = off)"
        try:
            self.backend.check()
        except BackendUnavailable as exc:
            return f"Ollama not usable: {exc.reason}"
        return None

    def conversation(self, session: str, on_notice: Callable[[str], None] = lambda m: None,
                     options: TurnOptions | None = None) -> Conversation:
        from .conversation.turn import Conversation, TurnOptions

        return Conversation(self.db, self.embedder, self.settings, session, backend=self.backend,
                            options=options or TurnOptions(), on_notice=on_notice)

    def turns(self, session: str) -> list[tuple[int, Message]]:
        """(turn number, assistant message) of a session, in order."""
        history = sessions.messages(self.db, sessions.session_id(self.db, session, create=False))
        numbered, count = [], 0
        for message in history:
            if message.role == "user":
                count += 1
            elif message.lineage is not None:
                numbered.append((count, message))
        return numbered

    def session_name(self, session: str | None) -> str:
        name = session or sessions.latest_session(self.db)
        if not name:
            raise SessionError("no sessions yet: ask something first (`ragchat ask` or `ragchat chat`)")
        return name
