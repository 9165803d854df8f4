"""The interactive chat: a prompt-toolkit loop over the same services as the CLI."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import FileHistory, History, InMemoryHistory

from . import catalog, render
from .app import App
from .catalog import session_scope_names
from .conversation.models import RetrievedChunk
from .errors import RagchatError, SessionError
from .export import turns_markdown, write_private
from .ingest.pipeline import ingest
from .names import readable_text
from .render import chat, listings, progress, trace, turns
from .runner import open_conversation, run_turn
from .store import library, sessions
from .text import printable

HELP = """Ask anything about your documents; follow-ups ("what about X?") are understood.
  /help           this help (or type help)
  /ingest PATH    ingest files or folders (same as `ragchat ingest`)
  /sources [N]    the last answer's sources, or source N's passage
  /open N         the whole section behind source N (paged when long)
  /retry [X]      the last question again, with X as its subject ("no, I meant X" works too)
  /inspect [N]    the trace of the last turn (or turn N)
  /history [N]    this session's questions by turn number (or turn N whole)
  /export [FILE]  write this session as Markdown (never over an existing file
                  unless FILE is followed by --force)
  /documents      the library's documents by collection
  /in NAME...     ask only in these collections (/in all: every one; /in: show)
  /new NAME       start a new session
  /resume NAME    continue an existing session
  /sessions       list sessions
  /clear          clear the screen (or type clear)
  /exit           leave (or type exit or quit; Ctrl-D works too)
Ctrl-C cancels the current answer; Tab completes commands and session names."""

BARE_COMMANDS = {
    "help",
    "exit",
    "quit",
    "clear",
}  # typed without the slash, these are commands, not questions


def default_export_name(session: str) -> str:
    """`/export` without a FILE: the session's name, made a plain file name."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in session).strip("_")
    return f"ragchat-{safe or 'session'}.md"


class _LoopErrors:
    """An error in the prompt's own event loop is said in one line and the prompt goes on (its
    own handler waits for an Enter that a pipe may never send); the same error again with no
    key read in between ends the prompt as the end of input does: the prompt cannot read what
    is typed (an input whose descriptor `select()` cannot watch, past 1024 open files, fails
    on every turn of the loop and would fill the screen with that one line forever)."""

    def __init__(self, session: PromptSession[str]) -> None:
        self.session = session
        self.last = ""
        session.app.key_processor.after_key_press += self.read_a_key

    def attach(self) -> None:
        """Run before each prompt: the handler of its loop."""
        self.last = ""
        asyncio.get_running_loop().set_exception_handler(self.said)

    def read_a_key(self, _: object) -> None:
        self.last = ""

    def said(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        problem = printable(str(context.get("exception") or context.get("message", "unknown")))
        app = self.session.app
        if problem != self.last:
            self.last = problem
            render.error(f"the prompt hit an internal error and goes on: {problem}")
        elif not app.is_done:
            render.error(f"the prompt cannot read what is typed and ends: {problem}")
            app.exit(exception=EOFError())


class SlashCompleter(Completer):
    """Tab completion: slash commands at the start of the line, session names after
    /new and /resume."""

    def __init__(self, repl: Repl) -> None:
        self.repl = repl

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterator[Completion]:
        text = document.text_before_cursor
        if not text.startswith("/"):
            return
        name, space, partial = text.partition(" ")
        if not space:
            for command in self.repl.commands:
                if command.startswith(name.lower()):
                    yield Completion(command, start_position=-len(name))
        elif name.lower() in {"/new", "/resume"}:
            for session in sessions.session_names(self.repl.app.db):
                if session.startswith(partial):
                    yield Completion(session, start_position=-len(partial))
        elif name.lower() == "/in":
            word = partial.rpartition(" ")[2]
            for collection in [c.name for c in library.collections(self.repl.app.db)] + ["all"]:
                if collection.startswith(word):
                    yield Completion(collection, start_position=-len(word))


class Repl:
    def __init__(
        self,
        app: App,
        session: str,
        *,
        input: Any = None,
        output: Any = None,
        lines: Iterable[str] | None = None,
    ) -> None:
        """`lines`: questions and commands read from a pipe, one a line (no prompt, no terminal)."""
        self.app = app
        self.session = session
        self.lines = lines
        if lines is None:
            history_file = Path(app.settings.db).parent / "chat_history"
            history: History = InMemoryHistory()
            try:
                if not history_file.exists():  # the questions asked are as private as the database
                    os.close(os.open(history_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
                if history_file.is_file() and os.access(history_file, os.R_OK | os.W_OK):
                    history = FileHistory(str(history_file))
                else:
                    render.notice(
                        f"input history not kept: {printable(str(history_file))} "
                        "is not a file this user can read and write"
                    )
            except OSError as exc:
                render.notice(f"input history not kept: {printable(str(exc))}")
            self.prompt: PromptSession[str] = PromptSession(
                history=history, input=input, output=output, completer=SlashCompleter(self)
            )
            self.loop_errors = _LoopErrors(self.prompt)
        self.commands: dict[str, Callable[[str], bool]] = {
            "/help": self._help,
            "/ingest": self._ingest,
            "/sources": self._sources,
            "/open": self._open,
            "/retry": self._retry,
            "/inspect": self._inspect,
            "/history": self._history,
            "/export": self._export,
            "/documents": self._documents,
            "/in": self._in,
            "/new": self._new,
            "/resume": self._resume_command,
            "/sessions": self._sessions,
            "/clear": self._clear,
            "/exit": lambda arg: False,
            "/quit": lambda arg: False,
        }
        self._start_conversation()

    def _start_conversation(self) -> None:
        self.conversation = open_conversation(self.app, self.session)

    def _read(self) -> Iterator[str]:
        """What the user typed, one line at a time: from the prompt, or from a pipe (echoed, so the
        output reads as a transcript)."""
        if self.lines is not None:
            for line in self.lines:
                text = readable_text(line.rstrip("\r\n"))
                if text.strip():
                    chat.echo(self.session, text)
                yield text
            return
        while True:
            try:
                yield readable_text(
                    self.prompt.prompt(
                        f"{printable(self.session)}> ",
                        # an error in the prompt's own loop is said in one line: prompt-toolkit's
                        # handler waits for an Enter that a pipe may never send
                        set_exception_handler=False,
                        pre_run=self.loop_errors.attach,
                    )
                )
            except KeyboardInterrupt:
                continue
            except EOFError:
                return

    def run(self) -> None:
        self._banner()
        for line in self._read():
            text = line.strip()
            if not text:
                continue
            if text.lower() in BARE_COMMANDS:
                text = "/" + text.lower()
            if text.startswith("/"):
                if not self._command(text):
                    break
                continue
            self._ask(text)
        chat.bye()

    def _banner(self) -> None:
        docs, chunks = len(library.documents(self.app.db)), library.chunk_count(self.app.db)
        chat.title(self.session, docs, chunks)
        problem = self.app.backend_problem()
        if problem is None:
            self.app.warm_model()  # loads it while the first question is typed
        chat.answers_by(problem, chosen=self.app.settings.ollama == "off")
        if docs == 0:
            render.notice("the library is empty: /ingest PATH adds documents")
        self._resume()
        scope = session_scope_names(self.app.db, self.session)
        if scope:
            chat.scope(scope, hint=True)

    def _resume(self) -> None:
        history = sessions.messages(self.app.db, sessions.session_id(self.app.db, self.session))
        last_user = next((m for m in reversed(history) if m.role == "user"), None)
        if last_user is None:
            return
        reply = next(
            (m for m in history if m.role == "assistant" and m.turn == last_user.turn), None
        )
        earlier = sum(m.role == "user" for m in history)
        chat.resumed(earlier, last_user.content, reply.content if reply else None)

    def _ask(self, text: str, retry: str | None = None) -> None:
        try:
            run_turn(
                self.conversation,
                text,
                retry=retry,
                show_thinking=self.app.settings.ollama_show_thinking,
                warmed=True,  # the banner asked the model to load
            )
        except KeyboardInterrupt:
            render.notice("cancelled")
        except RagchatError as exc:
            render.error(str(exc))

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

    @staticmethod
    def _no_argument(name: str, arg: str) -> None:
        if arg:
            raise RagchatError(f"{name} takes no argument (got {arg!r})")

    def _help(self, arg: str) -> bool:
        self._no_argument("/help", arg)
        chat.help_text(HELP)
        return True

    def _clear(self, arg: str) -> bool:
        self._no_argument("/clear", arg)
        chat.clear()
        return True

    def _ingest(self, arg: str) -> bool:
        if not arg:
            raise RagchatError("usage: /ingest PATH [PATH ...]")
        try:
            paths = [Path(p).expanduser() for p in shlex.split(arg)]
        except ValueError as exc:  # an unclosed quote
            raise RagchatError(f"/ingest: {exc}") from None
        try:
            with progress.IngestProgress() as bar:
                report = ingest(
                    self.app.db,
                    self.app.settings,
                    paths,
                    lambda: self.app.embedder,
                    progress=bar,
                )
        except KeyboardInterrupt:  # before the walk finished: nothing was written
            render.notice("ingest interrupted")
            return True
        listings.ingest_report(report, self.app.settings.db)
        return True

    def _sources(self, arg: str) -> bool:
        if arg and not arg.isdigit():
            raise RagchatError(f"/sources wants a source number, not {arg!r} (usage: /sources [N])")
        last = self.app.turn(self.session)
        if not arg:
            turns.sources(last.lineage)
            return True
        chunk = self._source(last.lineage.chunks, arg)
        stored = library.chunks_by_ids(self.app.db, [chunk.chunk_id]).get(chunk.chunk_id)
        if stored is None:
            raise RagchatError(
                f"source {arg} is gone: its document was removed or changed since that turn"
            )
        turns.passage(chunk, stored.text, last.answer)
        return True

    @staticmethod
    def _source(chunks: tuple[RetrievedChunk, ...], arg: str) -> RetrievedChunk:
        chunk = next((c for c in chunks if c.rank == int(arg)), None)
        if chunk is None:
            ranks = [c.rank for c in chunks]
            raise RagchatError(
                f"the last answer has no source {arg}"
                + (f" (it has {min(ranks)}-{max(ranks)})" if ranks else " (it has none)")
            )
        return chunk

    def _open(self, arg: str) -> bool:
        if not arg.isdigit():
            raise RagchatError(
                f"/open wants a source number, not {arg!r} (usage: /open N)"
                if arg
                else "usage: /open N"
            )
        chunk = self._source(self.app.turn(self.session).lineage.chunks, arg)
        found = library.section(self.app.db, chunk.chunk_id)
        if found is None:
            raise RagchatError(
                f"source {arg} is gone: its document was removed or changed since that turn"
            )
        listings.section_view(found)
        return True

    def _retry(self, arg: str) -> bool:
        self._ask("", retry=arg)
        return True

    def _inspect(self, arg: str) -> bool:
        if arg and not arg.isdigit():
            raise SessionError(f"/inspect wants a turn number, not {arg!r} (usage: /inspect [N])")
        chosen = self.app.turn(self.session, int(arg) if arg else None)
        trace.inspect_view(chosen.lineage.trace(chosen.message_id, chosen.number, chosen.answer))
        return True

    def _history(self, arg: str) -> bool:
        if arg and not arg.isdigit():
            raise SessionError(f"/history wants a turn number, not {arg!r} (usage: /history [N])")
        if arg:
            chosen = self.app.turn(self.session, int(arg))
            turns.history_turn(chosen)
            return True
        turns.history_list(self.session, self.app.turns(self.session))
        return True

    def _export(self, arg: str) -> bool:
        try:
            words = shlex.split(arg)
        except ValueError as exc:
            raise RagchatError(f"/export: {exc}") from None
        force = "--force" in words
        names = [w for w in words if w != "--force"]
        if len(names) > 1:
            raise RagchatError("usage: /export [FILE] [--force]")
        done = self.app.turns(self.session)
        if not done:
            raise SessionError(f"session {self.session!r} has no turns yet: nothing to export")
        path = Path(names[0]).expanduser() if names else Path(default_export_name(self.session))
        if (path.exists() or path.is_symlink()) and not force:
            raise RagchatError(f"{path} exists; /export {path} --force overwrites it")
        write_private(path, turns_markdown(self.session, done), force=force)
        render.said(f"Wrote {path} ({len(done)} turn(s)).")
        return True

    def _documents(self, arg: str) -> bool:
        try:
            names = shlex.split(arg)
        except ValueError as exc:
            raise RagchatError(f"/documents: {exc}") from None
        listings.documents_table(catalog.documents(self.app.db, names), as_json=False)
        return True

    def _in(self, arg: str) -> bool:
        try:
            names = shlex.split(arg)
        except ValueError as exc:
            raise RagchatError(f"/in: {exc}") from None
        if names:
            catalog.set_session_scope(self.app.db, self.session, names)
        chat.scope(catalog.session_scope_names(self.app.db, self.session))
        return True

    def _switch(self, name: str) -> None:
        self.session = name
        self._start_conversation()
        chat.switched(name)

    def _new(self, arg: str) -> bool:
        if not arg:
            raise RagchatError("usage: /new NAME")
        existing = next((row for row in sessions.sessions(self.app.db) if row["name"] == arg), None)
        if existing is not None and existing["turns"]:
            render.notice(
                f"session {arg} exists already ({existing['turns']} turn(s), last used "
                f"{listings.ago(existing['updated_at'])}): /resume {arg} continues it, "
                "or /new with another name starts afresh"
            )
            return True
        sessions.session_id(self.app.db, arg)  # started: /sessions lists it
        self._switch(arg)
        return True

    def _resume_command(self, arg: str) -> bool:
        if not arg:
            raise RagchatError("usage: /resume NAME (/sessions lists them)")
        sessions.session_id(
            self.app.db, arg, create=False
        )  # a clear error when there is no such session
        self._switch(arg)
        self._resume()
        return True

    def _sessions(self, arg: str) -> bool:
        self._no_argument("/sessions", arg)
        listings.sessions_table(sessions.sessions(self.app.db))
        return True
