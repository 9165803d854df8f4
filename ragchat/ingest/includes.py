"""Files a document includes: mkdocs snippets (`--8<-- "path"`, `{* path hl[...] *}`), RST
`.. include:: path` and `.. literalinclude:: path`, and MyST's ```` ```{include} path ````.

A name is resolved against the document's folder, then each folder above it (FastAPI's
`../../docs_src/x.py` is relative to docs/en/docs, the site root, so that `ingest docs/en/docs
docs_src` finds it). Only files inside the paths given to `ingest` are read (the rule symlinks
follow), at most MAX_INCLUDE_BYTES each; any other name is shown as one line naming it. The
document's digest covers the files it includes, so changing one re-ingests the documents that
include it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from .formats.common import Included, language_of, normalise

MAX_INCLUDE_BYTES = 256 * 1024
_MARKDOWN_SUFFIXES = (".md", ".markdown")
_REFERENCE = re.compile(
    r"""^[ \t]*(?:;?-{2,}8<-{2,}[ \t]+["']([^"'\n]+)["']"""  # --8<-- "path"
    r"|\{\*[ \t]*(\S+)[^\n]*?\*\}"  # {* path hl[1:3] *}
    r"|\.\.[ \t]+(?:literal)?include::[ \t]*(\S[^\n]*)"  # .. include:: path
    r"|(?:`{3,}|~{3,}|:{3,})\{(?:literal)?include\}[ \t]*(\S[^\n]*))",  # MyST ```{include} path
    re.M,
)


def include_names(text: str) -> list[str]:
    """The names of the files `text` includes, in order, each once."""
    names = (
        next(group for group in match.groups() if group) for match in _REFERENCE.finditer(text)
    )
    return list(dict.fromkeys(name.strip() for name in names))


@dataclass
class IncludeResolver:
    """Resolves and reads the includes of one document (a callable: name -> Included)."""

    document: Path  # as met while walking
    library: tuple[Path, ...]  # the resolved paths given to ingest: the only places read
    max_bytes: int = MAX_INCLUDE_BYTES
    _read: dict[str, Included] = field(default_factory=dict, repr=False)

    def __call__(self, name: str) -> Included:
        if name not in self._read:
            self._read[name] = self._load(name)
        return self._read[name]

    def locate(self, name: str) -> Path | None:
        """The first readable candidate inside the library, or None."""
        for base in self._bases():  # Sphinx's "/x.rst" is the source folder's: any base's
            try:
                candidate = (base / name.lstrip("/")).resolve()
            except (OSError, RuntimeError, ValueError):
                continue
            if self._inside_library(candidate) and candidate.is_file():
                return candidate
        return None

    def digest(self, data: bytes) -> str:
        """sha256 of the document's bytes and, when it includes files, of what each
        name resolves to."""
        names = include_names(data.decode("utf-8", errors="replace"))
        digest = hashlib.sha256(data)
        for name in names:
            found = self.locate(name)
            digest.update(f"\0{name}\0{found}\0".encode())
            if found is not None:
                digest.update(_file_digest(found, self.max_bytes).encode())
        return digest.hexdigest()

    def _bases(self) -> list[Path]:
        folder = self.document.absolute().parent
        return [folder, *folder.parents]

    def _inside_library(self, path: Path) -> bool:
        return any(path == given or path.is_relative_to(given) for given in self.library)

    def _load(self, name: str) -> Included:
        markdown = name.lower().endswith(_MARKDOWN_SUFFIXES)
        found = self.locate(name)
        text = _read_text(found, self.max_bytes) if found is not None else None
        return Included(name, text, "" if markdown else language_of(name), markdown)


def _file_digest(path: Path, max_bytes: int) -> str:
    try:
        with path.open("rb") as handle:
            return hashlib.sha256(handle.read(max_bytes + 1)).hexdigest()
    except OSError:
        return "unreadable"


def _read_text(path: Path, max_bytes: int) -> str | None:
    """A small text file's normalised text; None when too large, binary or unreadable."""
    try:
        if path.stat().st_size > max_bytes:
            return None
        data = path.read_bytes()[: max_bytes + 1]
    except OSError:
        return None
    if len(data) > max_bytes or b"\0" in data[:8192]:
        return None
    text = normalise(data.decode("utf-8-sig", errors="replace"))
    return text or None
