"""Parsing in a worker process: a file that parses for too long is stopped, and Ctrl-C stops
parsing at once (a thread cannot be interrupted; a process can be killed).

One worker serves a whole ingest (started on the first file that needs it, 'spawn' context: no
copy of the parent's threads, locks or open database). It ignores SIGINT (the terminal sends Ctrl-C
to the whole process group; the ingest decides) and runs with a data-size limit, so a file that
would need more memory is refused instead of swapping the machine. A timeout, a crash or a stop
kills it; the next file gets a new one.

Plain text and Markdown are parsed in-process: their parsers are linear in the text, which the
character limit bounds, and a worker would cost its start-up on libraries of small notes (the
README's "Bounded parsing" gives the measurements).
"""

from __future__ import annotations

import multiprocessing
import resource
import signal
import threading
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from ..errors import UnreadableFile
from .limits import MB, WORKER_MEMORY_MB, Limits
from .loaders import ParsedDocument, parse_document

IN_PROCESS = frozenset({".md", ".markdown", ".txt"})


class Parser:
    """Parses files within `limits`, each in the worker unless its format is linear."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._process: Any = None
        self._connection: Connection | None = None
        self._stopped = False

    def parse(self, path: Path, data: bytes) -> ParsedDocument:
        if path.suffix.lower() in IN_PROCESS:
            return parse_document(path, data, self.limits)
        connection = self._start()
        try:
            connection.send((path.name, data, self.limits))
            if not connection.poll(self.limits.seconds):
                self._kill()
                raise UnreadableFile(f"parsing took longer than {self.limits.seconds:g} s (stopped)")
            kind, value = connection.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._kill()
            raise UnreadableFile("parsing stopped" if self._stopped else "the parser crashed on this file") from None
        if kind == "ok":
            return value
        raise UnreadableFile(value)

    def stop(self) -> None:
        """Kill the worker now (from any thread): a parse in progress ends with UnreadableFile."""
        self._stopped = True
        with self._lock:
            process = self._process
        if process is not None:  # the parsing thread sees the pipe end, and closes it
            process.kill()

    def _start(self) -> Connection:
        with self._lock:
            if self._stopped:
                raise UnreadableFile("parsing stopped")
            if self._connection is None:
                context = multiprocessing.get_context("spawn")
                ours, theirs = context.Pipe()
                self._process = context.Process(target=serve, args=(theirs,), name="ragchat-parser", daemon=True)
                self._process.start()
                theirs.close()
                self._connection = ours
            return self._connection

    def _kill(self) -> None:
        with self._lock:
            process, connection = self._process, self._connection
            self._process = self._connection = None
        if process is not None:
            process.kill()
            process.join()
        if connection is not None:
            connection.close()


def serve(connection: Connection) -> None:
    """The worker's loop: (name, bytes, limits) in, ("ok", ParsedDocument) or ("skip", reason) out."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _, hard = resource.getrlimit(resource.RLIMIT_DATA)
    wanted = WORKER_MEMORY_MB * MB
    resource.setrlimit(resource.RLIMIT_DATA, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard))
    while True:
        try:
            name, data, limits = connection.recv()
        except (EOFError, OSError):
            return
        connection.send(_parse(Path(name), data, limits))


def _parse(path: Path, data: bytes, limits: Limits) -> tuple[str, object]:
    try:
        return "ok", parse_document(path, data, limits)
    except UnreadableFile as exc:
        return "skip", str(exc)
    except MemoryError:
        return "skip", f"needs more than {WORKER_MEMORY_MB} MB of memory to parse"
    except RecursionError:
        return "skip", "nested too deeply to parse"
    except Exception as exc:  # a parser's bug on a strange file: that file is skipped, not the ingest
        return "skip", f"cannot parse: {type(exc).__name__}"
