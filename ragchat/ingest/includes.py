"""Files a document includes: mkdocs snippets (`--8<-- "path"`, `{* path hl[...] *}`),
markdown-include's `{!path!}`, RST `.. include:: path` and `.. literalinclude:: path`, and MyST's
```` ```{include} path ````.

A name is resolved against the document's folder, then each folder above it (FastAPI's
`../../docs_src/x.py` is relative to docs/en/docs, the site root, so that `ingest docs/en/docs
docs_src` finds it), then the `base_path` folders of the nearest mkdocs config's
`pymdownx.snippets` (odmantic's `--8<-- "modeling/compound_index.py"` lives in docs/examples_src,
its `base_path`; only the config's `base_path` is read); a name starting with "/" (Sphinx's source
folder) against the documentation roots between the page and the folder given to ingest (a folder
holding conf.py or mkdocs.yml) and that folder itself. A file is read only when the ingest's walk
would read it (`Scope`: inside the paths given, not hidden, not ignored, not `--exclude`d, not a
library's folder), checked again on the real path of the file opened, at most MAX_INCLUDE_BYTES
each; any other name is shown as one line naming it. A page's includes have a budget (INCLUDE_COUNT
includes, INCLUDE_CHARS characters, each file read once); line ranges select the file's real lines.

The document's digest covers what each name resolves to and that file's stat signature (device,
inode, size, modification and change times), not its bytes: an unchanged page is recognised
without reading what it includes, and any write to an included file re-ingests the page.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from .formats.common import Included, language_of, normalise
from .ignore import OUTSIDE, Scope
from .limits import INCLUDE_CHARS, INCLUDE_COUNT

MAX_INCLUDE_BYTES = 256 * 1024
MAX_NAME = 1024  # characters: a longer name is refused before any file system call
MAX_RANGES = 64  # line ranges one include may list
MAX_REPEAT = 4  # how many times over the lines selected may repeat the file
_MARKDOWN_SUFFIXES = (".md", ".markdown")
_INCLUDING_SUFFIXES = (".md", ".markdown", ".rst")
_DOCS_ROOT_FILES = ("conf.py", "mkdocs.yml", "mkdocs.yaml")
_MKDOCS_FILES = ("mkdocs.yml", "mkdocs.yaml")
MAX_CONFIG_BYTES = 256 * 1024
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | os.O_NOCTTY
_SNIPPETS_KEY = re.compile(r"^(\s*)(?:-\s*)?['\"]?pymdownx\.snippets['\"]?\s*:\s*$")
_BASE_PATH = re.compile(r"^(\s*)base_path\s*:\s*(.*?)\s*$")
_SNIPPET = re.compile(r"""^[ \t]*;?-{2,}8<-{2,}[ \t]+["']([^"'\n]+)["']""")
_DIRECTIVE = re.compile(r"^[ \t]*\.\.[ \t]+(?:literal)?include::[ \t]*(\S[^\n]*)")
_MYST = re.compile(r"^[ \t]*(?:`{3,}|~{3,}|:{3,})\{(?:literal)?include\}[ \t]*(\S[^\n]*)")
_BRACES = re.compile(r"^[ \t]*\{\*[ \t]*([^\s*][^\s]*)")  # {* path hl[1:3] *}: the name only
_SECTION_MARKER = re.compile(r"^.*-{2,}8<-{2,}[ \t]*\[(?:start|end):[^\]\n]*\].*$\n?", re.M)
_SNIPPET_LINES = re.compile(r"^(.*?):(\d*:?\d*(?:,\d*:?\d*)*)$")  # pymdownx "file.py:3:8"


def include_names(text: str) -> list[str]:
    """The names of the files `text` includes, in order, each once (line by line: linear)."""
    names: list[str] = []
    for line in text.split("\n"):
        match = _SNIPPET.match(line) or _DIRECTIVE.match(line) or _MYST.match(line)
        if match is None and "{*" in line and "*}" in line:
            match = _BRACES.match(line)
        if match is not None:
            names.append(match.group(1).strip())
        start = line.find("{!")
        while start >= 0 and (end := line.find("!}", start + 2)) >= 0:
            names.append(split_braces_include(line[start + 2 : end])[0])
            start = line.find("{!", end + 2)
    return list(dict.fromkeys(names))


def split_braces_include(inside: str) -> tuple[str, str]:
    """markdown-include's `path[ln:1-18]` or `path!lines=1 3-5` as (path, line ranges)."""
    name, _, lines = inside.partition("!lines=")
    if not lines and name.endswith("]") and (open_at := name.rfind("[ln:")) > 0:
        name, lines = name[:open_at], name[open_at + 4 : -1]
    return name.strip(), lines.strip()


def _project_of(folder: Path) -> Path:
    """The repository holding `folder` (the nearest folder above or at it with a `.git`), else
    the folder just above it."""
    for candidate in (folder, *folder.parents):
        try:
            if (candidate / ".git").exists():
                return candidate
        except OSError:
            continue
    return folder.parent


def line_ranges(spec: str) -> list[tuple[int, int | None]]:
    """`1:3,8`, `1-3 8`, `5:` as 1-based inclusive (first, last or None: to the end); ValueError
    when not ranges of line numbers."""
    parts = [part for part in re.split(r"[,\s]+", spec.strip()) if part]
    if len(parts) > MAX_RANGES:
        raise ValueError(f"more than {MAX_RANGES} line ranges")
    ranges: list[tuple[int, int | None]] = []
    for part in parts:
        first, separator, last = part.replace("-", ":").partition(":")
        if not (first or separator) or not all(p.isdigit() for p in (first, last) if p):
            raise ValueError(f"not a line range: {part[:20]}")
        start = int(first) if first else 1
        ranges.append((start, int(last) if last else (None if separator else start)))
    return ranges


def selected_lines(text: str, spec: str) -> str:
    """The lines `spec` names (line_ranges), in the order named (as Sphinx, a line named twice
    shows twice); ValueError past MAX_REPEAT times the file's lines (`ln[1:99999,...]` x 1000)."""
    if not spec.strip():
        return text
    lines = text.split("\n")
    kept: list[str] = []
    for first, last in line_ranges(spec):
        kept += lines[max(first - 1, 0) : min(len(lines), last or len(lines))]
        if len(kept) > MAX_REPEAT * len(lines):
            raise ValueError(f"the line ranges repeat the file more than {MAX_REPEAT} times")
    return "\n".join(kept)


@dataclass
class IncludeResolver:
    """Resolves and reads the includes of one document (a callable: name, lines -> Included)."""

    document: Path  # as met while walking
    scope: Scope  # what the ingest reads: the only files an include may read
    root: Path  # the folder given to ingest that the page was found under
    max_bytes: int = MAX_INCLUDE_BYTES
    _texts: dict[Path, str | None] = field(default_factory=dict, repr=False)  # by real path
    located: set[Path] = field(default_factory=set)  # the files the page's includes name
    unread: list[str] = field(default_factory=list)  # the names no file the walk reads answers
    _count: int = field(default=0, repr=False)
    _chars: int = field(default=0, repr=False)

    def __call__(self, name: str, lines: str = "") -> Included:
        if self._count >= INCLUDE_COUNT:
            return _refused(name, f"not read: more than {INCLUDE_COUNT} includes in one page")
        self._count += 1
        found = self.locate(name)
        if found is None and (pieces := _SNIPPET_LINES.match(name)) and not lines:
            name, lines = pieces.group(1), pieces.group(2)  # pymdownx's "file.py:3:8"
            found = self.locate(name)
        if found is None:
            return _refused(name, "not in the library")
        if found not in self._texts:  # each file read once a page
            self._texts[found] = self._read(found)
        text = self._texts[found]
        if text is None:
            return _refused(name, "not in the library")
        try:  # the file's own lines, then without pymdownx's `--8<-- [start:name]` lines
            text = normalise(_SECTION_MARKER.sub("", selected_lines(text, lines)))
        except ValueError as exc:
            return _refused(name, f"not read: {exc}")
        if self._chars + len(text) > INCLUDE_CHARS:
            return _refused(
                name, f"not read: one page's includes stop at {INCLUDE_CHARS:,} characters"
            )
        if not text:
            return _refused(
                name, f"not read: {'the lines selected are' if lines else 'it is'} blank"
            )
        self._chars += len(text)
        return _included(name, text)

    def candidates(self, name: str) -> Iterator[Path]:
        """Where `name` may be, in order (absolute, without `..`)."""
        if not name or len(name) > MAX_NAME or "\0" in name:
            return
        folder = Path(os.path.normpath(self.document.absolute().parent))
        bases = [folder, *folder.parents]
        if name.startswith("/"):
            root = Path(os.path.normpath(self.root.absolute()))
            bases = [
                base
                for base in bases[: bases.index(root) if root in bases else 0]
                if any((base / marker).is_file() for marker in _DOCS_ROOT_FILES)
            ] + [root]
        relative = name.lstrip("/")
        for base in bases:
            yield Path(os.path.normpath(os.path.join(base, relative)))
        for base in snippet_bases(folder):  # looked for only when no folder above holds the name
            yield Path(os.path.normpath(os.path.join(base, relative)))

    def locate(self, name: str) -> Path | None:
        """The first candidate the walk would read, or None."""
        for candidate in self.candidates(name):
            try:
                if self.scope.reason_anywhere(candidate) is None and candidate.is_file():
                    return candidate
            except (OSError, ValueError):
                continue
        return None

    def outside(self) -> list[tuple[str, Path]]:
        """(name, file) of each include the walk would not read because its file is outside the
        paths given to ingest (`../README.md` from docs/index.rst): what the user may give to
        ingest too. Only a file of the project is named: inside the repository holding the folder
        given (the nearest folder above it with a `.git`), else the folder just above it; never
        a hidden file or one under a hidden folder. A page cannot talk a user into ingesting
        `../../../../etc/passwd`. The names are those `digest` found unread."""
        if not self.unread:
            return []
        project = _project_of(Path(os.path.normpath(self.root.absolute())))
        found: list[tuple[str, Path]] = []
        for name in self.unread:
            for candidate in self.candidates(name):
                try:
                    if not candidate.is_file():
                        continue
                    if (
                        candidate.is_relative_to(project)
                        and not any(p.startswith(".") for p in candidate.parts[1:])
                        and self.scope.reason_anywhere(candidate) == OUTSIDE
                    ):
                        found.append((name, candidate))
                except (OSError, ValueError):
                    pass
                break
        return found

    def digest(self, data: bytes) -> str:
        """sha256 of the document's bytes and, for a page that includes files, of what each name
        resolves to and its stat signature (no included file is read). Keeps the files found
        (`located`) and the names that found none (`unread`, for `outside`)."""
        digest = hashlib.sha256(data)
        if not self.document.suffix.lower().endswith(_INCLUDING_SUFFIXES):
            return digest.hexdigest()
        names = include_names(data.decode("utf-8", errors="replace"))
        for name in names[:INCLUDE_COUNT]:
            found = self.locate(name)
            if found is not None:
                self.located.add(found)
            else:
                self.unread.append(name)
            digest.update(f"\0{name}\0{found}\0{_signature(found)}".encode())
        return digest.hexdigest()

    def _read(self, path: Path) -> str | None:
        """The text of the file at `path` (checked by locate), read through one descriptor whose
        real path is checked again: a symlink swapped in since then reads nothing. None when
        refused, too large, binary or unreadable."""
        try:
            handle = os.open(path, _READ_FLAGS)
        except (OSError, ValueError):
            return None
        try:
            real = _opened_path(handle) or path.resolve()
            why = self.scope.reason_anywhere(real)
            if why and not (why == OUTSIDE and self.scope.follow_all):
                return None
            info = os.fstat(handle)
            same = _opened_path(handle) is not None or _same_file(info, os.stat(real))
            data = _regular_bytes(handle, info, self.max_bytes) if same else None
        except (OSError, ValueError, RuntimeError):
            return None
        finally:
            os.close(handle)
        if data is None or b"\0" in data[:8192]:
            return None
        return data.decode("utf-8-sig", errors="replace").replace("\r\n", "\n").replace("\r", "\n")


def snippet_bases(folder: Path) -> list[Path]:
    """The folders the nearest mkdocs config above `folder` (or in it) names as
    `pymdownx.snippets`' `base_path`, relative to the config's folder; [] when there is none."""
    for base in [folder, *folder.parents]:
        for name in _MKDOCS_FILES:
            config = base / name
            try:
                info = config.stat()
            except (OSError, ValueError):
                continue
            if stat.S_ISREG(info.st_mode) and info.st_size <= MAX_CONFIG_BYTES:
                found = _config_bases(str(config), info.st_mtime_ns, info.st_size)
                return [Path(os.path.normpath(os.path.join(base, b))) for b in found]
            return []
    return []


@functools.lru_cache(maxsize=16)
def _config_bases(config: str, _mtime: int, _size: int) -> tuple[str, ...]:
    """`base_path` under `pymdownx.snippets` in an mkdocs config: one folder, a `[a, b]` list or
    `- a` items (only these lines are read; the rest of the config is not parsed)."""
    try:  # through one descriptor: a pipe or a device swapped in since the stat reads nothing
        handle = os.open(config, _READ_FLAGS)
    except (OSError, ValueError):
        return ()
    try:
        data = _regular_bytes(handle, os.fstat(handle), MAX_CONFIG_BYTES)
    except OSError:
        return ()
    finally:
        os.close(handle)
    if data is None:
        return ()
    lines = data.decode("utf-8", errors="replace").splitlines()
    for at, line in enumerate(lines):
        key = _SNIPPETS_KEY.match(line)
        if key is None:
            continue
        depth = len(key.group(1))
        for below, inner in enumerate(lines[at + 1 :], start=at + 2):
            if inner.strip() and len(inner) - len(inner.lstrip()) <= depth:
                break  # the snippets options end
            found = _BASE_PATH.match(inner)
            if found is None:
                continue
            value = found.group(2)
            if value:
                return tuple(_unquoted(v) for v in value.strip("[]").split(",") if v.strip())
            items = []
            for item in lines[below:]:
                indent = len(item) - len(item.lstrip())
                if indent < len(found.group(1)) or not item.lstrip().startswith("- "):
                    break  # the list under base_path ends
                items.append(_unquoted(item.lstrip()[2:]))
            return tuple(items)
    return ()


def _regular_bytes(handle: int, info: os.stat_result, max_bytes: int) -> bytes | None:
    """The bytes of the open regular file `handle` (`info`: its fstat), None for anything else
    (a pipe, a device: reading would block or never end) or past `max_bytes`."""
    if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
        return None
    data = b""
    while len(data) <= max_bytes and (piece := os.read(handle, 1 << 16)):
        data += piece
    return data if len(data) <= max_bytes else None


def _unquoted(value: str) -> str:
    return value.split(" #", 1)[0].strip().strip("'\"")


def _included(name: str, text: str | None, why: str = "") -> Included:
    markdown = name.lower().endswith(_MARKDOWN_SUFFIXES)
    language = "" if markdown else language_of(name)
    return Included(name, text, language, markdown, *([why] if why else []))


def _refused(name: str, why: str) -> Included:
    return _included(name, None, why)


def _opened_path(handle: int) -> Path | None:
    """The real path of an open file, as the kernel knows it (Linux); None elsewhere."""
    try:
        return Path(os.readlink(f"/proc/self/fd/{handle}"))
    except OSError:
        return None


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _signature(path: Path | None) -> str:
    if path is None:
        return ""
    try:
        info = path.stat()
    except OSError:
        return "unreadable"
    return f"{info.st_dev}:{info.st_ino}:{info.st_size}:{info.st_mtime_ns}:{info.st_ctime_ns}"
