"""Parsing in a worker process: a file that parses for too long is stopped, and Ctrl-C stops
parsing at once (a thread cannot be interrupted; a process can be killed).

One worker serves a whole ingest, started on the first file that needs it as a plain subprocess
of this interpreter running `main` below (no copy of the parent's threads, locks or open database,
and no re-import of the caller's main script as multiprocessing's 'spawn' does). It runs in its own
session, so the terminal's Ctrl-C reaches only the ingest, which kills it; it runs with a data-size
limit, so a file that would need more memory is refused instead of swapping the machine. A timeout,
a crash or a stop kills it; the next file gets a new one. Requests and answers are pickled over its
stdin and stdout (only this process's own messages: the worker trusts its parent).

Only small plain-text files (up to IN_PROCESS_BYTES) are parsed in-process: they include
nothing and parse in milliseconds. Every page that may include files (Markdown, RST), however
small, is parsed in the worker, its includes read there: a 1 KB page can name megabytes. Measured
on 9 MB files, Markdown takes 6 s for prose but 41 s for nested quotes and lists and 88 s for
unmatched emphasis; plain text up to 13 s. The worker costs ~0.33 s to start and ~0.3 ms a file
(docs/security.md, "Bounded parsing").
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import threading
from multiprocessing.connection import Connection
from pathlib import Path

from ..errors import UnreadableFile
from .limits import MB, WORKER_MEMORY_MB, Limits
from .loaders import Includes, parse_document
from .parsed import ParsedDocument

IN_PROCESS = frozenset({".txt"})
IN_PROCESS_BYTES = 64 * 1024
START_SECONDS = 60.0  # the worker's start (an interpreter, its imports) on a busy machine
READY = "ready"


class Parser:
    """Parses files within `limits`, in the worker unless small and plain."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None
        self._pipes: tuple[Connection, Connection] | None = None  # to the worker, from it
        self._stopped = False

    def parse(self, path: Path, data: bytes, includes: Includes | None = None) -> ParsedDocument:
        if path.suffix.lower() in IN_PROCESS and len(data) <= IN_PROCESS_BYTES:
            return parse_document(path, data, includes, self.limits)
        try:
            requests, answers = self._start()
            requests.send((path.name, data, self.limits, includes))
            if not answers.poll(self.limits.seconds):
                self._kill()
                raise UnreadableFile(
                    f"parsing took longer than {self.limits.seconds:g} s (stopped)"
                )
            kind, value = answers.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._kill()
            raise UnreadableFile(
                "parsing stopped" if self._stopped else "the parser crashed on this file"
            ) from None
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

    def _start(self) -> tuple[Connection, Connection]:
        with self._lock:
            if self._stopped:
                raise UnreadableFile("parsing stopped")
            if self._process is None:
                self._process = subprocess.Popen(
                    [sys.executable, "-P", "-c", _START, _package_root()],
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    start_new_session=True,
                )
                assert self._process.stdin is not None and self._process.stdout is not None
                self._pipes = (
                    Connection(os.dup(self._process.stdin.fileno()), readable=False),
                    Connection(os.dup(self._process.stdout.fileno()), writable=False),
                )
                self._process.stdin.close()
                self._process.stdout.close()
                # the parse's time budget starts once the worker has started (its imports)
                if not _started(self._pipes[1]):
                    self._process.kill()
                    raise EOFError  # parse() stops it and says the parser crashed

            assert self._pipes is not None
            return self._pipes

    def _kill(self) -> None:
        with self._lock:
            process, pipes = self._process, self._pipes
            self._process = self._pipes = None
        if process is not None:
            process.kill()
            process.wait()
        for pipe in pipes or ():
            pipe.close()


def _started(answers: Connection) -> bool:
    try:
        return answers.poll(START_SECONDS) and answers.recv() == READY
    except (EOFError, OSError):
        return False


# -P: the working folder (often the folder being ingested) is not on the import path, so a
# `pickle.py` lying there is never imported; this ragchat's folder is, unless already there
_START = (
    "import sys\n"
    "if sys.argv[1] not in sys.path: sys.path.insert(0, sys.argv[1])\n"
    "from ragchat.ingest.worker import main\n"
    "main()\n"
)


def _package_root() -> str:
    return str(Path(__file__).resolve().parents[2])


def serve(requests: Connection, answers: Connection) -> None:
    """The worker's loop: (name, bytes, limits, includes) in, ("ok", ParsedDocument) or ("skip",
    reason) out."""
    _lower_limit(resource.RLIMIT_DATA, WORKER_MEMORY_MB * MB)
    while True:
        try:
            name, data, limits, includes = requests.recv()
        except (EOFError, OSError):
            return
        _cpu_deadline(limits.seconds * 2)
        answers.send(_parse(Path(name), data, limits, includes))


def _cpu_deadline(seconds: float) -> None:
    """Die (SIGXCPU) after `seconds` more CPU time: the parent stops a parse at its wall-clock
    budget first, so this only ends a worker whose parent was killed (it has no one to stop it)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    _lower_limit(resource.RLIMIT_CPU, int(usage.ru_utime + usage.ru_stime + seconds) + 1)


def _lower_limit(which: int, wanted: int) -> None:
    """Set a soft resource limit within the hard one; a system that refuses keeps its own."""
    try:
        _, hard = resource.getrlimit(which)
        resource.setrlimit(
            which, (wanted if hard == resource.RLIM_INFINITY else min(wanted, hard), hard)
        )
    except (ValueError, OSError):
        pass


def _parse(
    path: Path, data: bytes, limits: Limits, includes: Includes | None
) -> tuple[str, object]:
    try:
        return "ok", parse_document(path, data, includes, limits)
    except Exception as exc:
        return "skip", failure_reason(exc)


def failure_reason(exc: Exception) -> str:
    """Why one file could not be read, parsed or chunked, as the skipped list shows it (a parser's
    bug on a strange file skips that file, not the ingest)."""
    if isinstance(exc, UnreadableFile):
        return str(exc)
    if isinstance(exc, MemoryError):
        return f"needs more than {WORKER_MEMORY_MB} MB of memory to parse"
    if isinstance(exc, RecursionError):
        return "nested too deeply to parse"
    if isinstance(exc, OSError) and exc.strerror:
        return f"cannot read: {exc.strerror[:1].lower()}{exc.strerror[1:]}"
    return f"cannot parse: {type(exc).__name__}"


def main() -> None:
    # the pipe to the parent is a copy of stdout; stdout itself goes to stderr, so a library that
    # prints cannot corrupt the answers
    answers = Connection(os.dup(1), readable=False)
    os.dup2(2, 1)
    answers.send(READY)
    serve(Connection(0, writable=False), answers)
