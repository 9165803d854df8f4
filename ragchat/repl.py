"""The interactive chat: a prompt-toolkit loop over the same services as the CLI."""

from __future__ import annotations

import os
import shlex
from pathlib import Path
from typing import Any, Callable

from prompt_toolkit import PromptSession
from prompt_toolkit.history import FileHistory, InMemoryHistory

from . import render
from .app import App
from .errors import RagchatError, SessionError
from .ingest.pipeline import ingest
from .store import library, sessions
from .text import printable

HELP = """Ask anything about your documents; follow-ups ("what about X?", "summarize it") are understood.
  /help           this help
  /ingest PATH    ingest files or folders (same as `ragchat ingest`)
  /sources        the sources of the last answer
  /inspect [N]    the trace of the last turn (or turn N)
  /new NAME       start a new session
  /sessions       list sessions
  /exit           leave (Ctrl-D works too; Ctrl-C cancels the current answer)"""


class Repl:
    def __init__(self, app: App, session: str, *, input: Any = None, output: Any = None) -> None:
        self.app = app
        self.session = session
        history_file = Path(app.settings.db).parent / "chat_history"
        try:
            history_file.parent.mkdir(parents=True, exist_ok=True)
            if not history_file.exists():  # the questions asked are as private as the database
                os.close(os.open(history_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
            history = FileHistory(str(history_file))
        except OSError:
            history = InMemoryHistory()
        self.prompt = PromptSession(history=history, input=input, output=output)
        self.commands: dict[str, Callable[[str], bool]] = {
            "/help": self._help, "/ingest": self._ingest, "/sources": self._sources, "/inspect": self._inspect,
            "/new": self._new, "/sessions": self._sessions, "/exit": lambda arg: False, "/quit": lambda arg: False,
        }
        self._start_conversation()

    def _start_conversation(self) -> None:
        self.conversation = self.app.conversation(self.session, on_notice=render.notice)

    def run(self) -> None:
        self._banner()
        while True:
            try:
                text = self.prompt.prompt(f"{printable(self.session)}> ").strip()
            except KeyboardInterrupt:
                continue
            except EOFError:
                break
            if not text:
                continue
            if text.startswith("/"):
                if not self._command(text):
                    break
                continue
            self._ask(text)
        render.console.print("[dim]bye[/]")

    def _banner(self) -> None:
        docs, chunks = len(library.documents(self.app.db)), library.chunk_count(self.app.db)
        render.console.print(f"[bold]ragchat[/] · session [bold]{render.escape(self.session)}[/] · "
                             f"{docs} documents, {chunks} chunks")
        problem = self.app.backend_problem()
        answer_mode = "Ollama answers" if problem is None else f"{problem}: heuristic reformulation, extractive answers"
        render.console.print(f"[dim]{render.escape(answer_mode)}. /help for commands.[/]")
        if docs == 0:
            render.notice("the library is empty: /ingest PATH adds documents")
        self._resume()

    def _resume(self) -> None:
        history = sessions.messages(self.app.db, sessions.session_id(self.app.db, self.session))
        last_user = next((m for m in reversed(history) if m.role == "user"), None)
        if last_user is None:
            return
        reply = next((m for m in history if m.role == "assistant" and m.id > last_user.id), None)
        render.console.print(f"[dim]resuming: {sum(m.role == 'user' for m in history)} earlier turn(s); the last was:[/]")
        render.console.print(f"[dim]> {render.escape(last_user.content)}[/]")
        if reply:
            render.console.print(f"[dim]{render.escape(render.snippet(reply.content, 400))}[/]")

    def _ask(self, text: str) -> None:
        streaming = self.conversation.backend_in_use() is not None
        printer = render.StreamPrinter()
        try:
            result = self.conversation.ask(text, on_token=printer if streaming else None)
            printer.close()
        except KeyboardInterrupt:
            render.notice("cancelled")
            return
        except RagchatError as exc:
            render.error(str(exc))
            return
        render.turn(result, streamed=streaming and result.answer_mode == "llm")

    # --- slash commands: each returns False to leave ---------------------------------------

    def _command(self, text: str) -> bool:
        name, _, arg = text.partition(" ")
        handler = self.commands.get(name.lower())
        if handler is None:
            render.error(f"unknown command {name}; /help lists them")
            return True
        try:
            return handler(arg.strip())
        except RagchatError as exc:
            render.error(str(exc))
            return True

    def _help(self, arg: str) -> bool:
        render.console.print(HELP, markup=False)
        return True

    def _ingest(self, arg: str) -> bool:
        if not arg:
            render.error("usage: /ingest PATH [PATH ...]")
            return True
        paths = [Path(p).expanduser() for p in shlex.split(arg)]
        with render.IngestProgress() as progress:
            report = ingest(self.app.db, self.app.settings, paths, lambda: self.app.embedder, progress=progress)
        render.ingest_report(report)
        return True

    def _sources(self, arg: str) -> bool:
        render.console.print(render.lineage_sources(self.app.turn(self.session).lineage))
        return True

    def _inspect(self, arg: str) -> bool:
        if arg and not arg.isdigit():
            raise SessionError(f"/inspect wants a turn number, not {arg!r}")
        chosen = self.app.turn(self.session, int(arg) if arg else None)
        render.inspect_view(render.inspect_data(chosen.lineage, chosen.message_id, chosen.number, chosen.answer))
        return True

    def _new(self, arg: str) -> bool:
        if not arg:
            render.error("usage: /new NAME")
            return True
        self.session = arg
        self._start_conversation()
        render.console.print(f"[bold]session {render.escape(arg)}[/]")
        self._resume()
        return True

    def _sessions(self, arg: str) -> bool:
        render.sessions_table(sessions.sessions(self.app.db))
        return True
