"""Load a supported file into a ParsedDocument: plain text, a title and heading-labelled sections.

Pure except for reading the file. Every reason a file cannot be ingested is an UnreadableFile
whose message is the short phrase shown in the ingest summary's skipped list.

Each format has its parser module in `formats/` (registered by suffix at the end of this file); it
turns the file into an outline (body strings, headings, page breaks); `_Layout` then
joins it into one normalised text with a blank line between blocks and records where each
section body lies, so every format gets the same text and offset rules.
"""

from __future__ import annotations

import codecs
import errno
import re
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ragchat.errors import UnreadableFile
from ragchat.text import one_line

from .formats.common import Block as _Block
from .formats.common import Heading as _Heading
from .formats.common import Includes, PageBreak, clean_chars, without_link_sections
from .formats.common import Outline as _Outline
from .formats.common import normalise as _normalise
from .formats.docx import parse_docx
from .formats.html import parse_html
from .formats.markdown import parse_markdown
from .formats.pdf import parse_pdf
from .formats.rst import parse_rst
from .formats.text import parse_text
from .labels import resolve
from .limits import DEFAULT_LIMITS, Limits
from .parsed import ParsedDocument, Section

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf", ".docx"}
)
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
# Bumped whenever parsing or chunking changes what a file turns into: `ingest` re-parses (and
# re-embeds) documents parsed with an older version even when their bytes are unchanged. 1:
# the hand-written readers; 2: markdown-it-py, clean HTML/PDF text, code fences, PDF pages,
# .docx; 3: docutils for RST, unwrapped paragraphs, includes resolved, pymdownx blocks,
# chunks whole sentences/fences; 4: Sphinx roles without their search dot, file metadata
# dropped, long lists cut between items, overlaps at most twice the window; 5: MyST (roles,
# directive fences, eval-rst, includes), RST `include`, unregistered directives holding code;
# 6: Hugo shortcodes and Jekyll Liquid tags, include line ranges on the file's real lines,
# markdown-include `{!path!}`, snippet markers gone; 7: Sphinx object descriptions as signatures,
# `only` and tab content kept, `:ref:` labels resolved across the library, front matter titles
# first, an RST page of several top-level sections titled by its file name, fragments and page
# templates not documents, release notes; 8: mkdocs icon shortcodes and attribute lists gone;
# 9: diagram sources (mermaid, graphviz, plantuml) give way to their captions; 10: doctest
# blocks as code (groups, setup and `:hide:` unseen), untitled MyST links show their heading;
# 11: RST definition terms with their own colon read once, autodoc objects whose body says
# nothing without a signature; 12: code spans without their InlineHilite language mark
# (`#!bash cmd`), the information sign (ℹ️) not folded into an "i"; 13: release notes read by
# their top level too (a changelog that titles every change under its versions); 14: a list of
# links alone under its heading ("See also", "Articles") left out, like a toctree; 15: a line
# that is only a template macro's call (mkdocs-macros) one line naming what it makes; 16: an
# object description's signature fenced with tildes (`text.SIGNATURE_MARK`): no lead-in; a plain
# text's own tilde fences written with backticks; 17: Markdown definition lists as "term:
# definition", a MyST glossary a section per term, footnote marks gone (each note kept where
# written), MyST directive arguments' roles read as text; 18: a version before a written-out
# date ("0.47.3 (August 24, 2025)") titles a release; 19: an include's `:start-after:` and
# `:end-before:` honoured (RST and MyST), a Markdown file an RST page includes with a `:parser:`
# read as Markdown; 20: a block's body (an admonition's) is what is indented by four more, as
# Python-Markdown reads it; a reference link the page does not define is its text; 21: ... also
# when its text is code ("[`ValidationError`][pydantic_core.ValidationError]"); an admonition
# with more class words after its type, or quotes inside its title, is one; 22: a version with a
# pre-release after it ("Version 18.3a0", "2.0rc1") titles a release; 23: a `literalinclude`'s
# `:pyobject:` selects that class or function of the file; 24: a directive whose options name a
# version (the changelog extension's `.. changelog::` `:version:`) titles a release, and
# `:paramref:` shows no leading dot, an RST enumerated list's markers as written ("F.", "(iv)");
# 25: a picture a snippet pastes into a page is no text, a `#### ::: pkg.obj` heading is titled by
# the object, an object description's `:type:`, `:value:`, `:annotation:` show in its signature
# 26: a Markdown page's raw HTML table is read as a table (its cells parted, one line per row),
# and a table cell spanning rows (`rowspan`) stands in each row it spans, in HTML pages too; a
# piece of a code block cut between chunks keeps its first line's indentation; 27: an RST
# substitution the page does not define shows what a prolog file of the library defines, else its
# name; a Python role's object in another project's inventory (`python:Ellipsis`) shows its name;
# 28: an RST link docutils cannot resolve (`` `relationship() <relationship()_>`_ ``) shows its
# text; 29: an RST paragraph of inline images only (a row of badges) is no text
PARSER_VERSION = 29


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def load_document(
    path: Path, max_bytes: int = DEFAULT_MAX_BYTES, includes: Includes | None = None
) -> ParsedDocument:
    """Read and parse `path` by its suffix; raise UnreadableFile with a short reason on failure.
    References to other documents' sections show their labels (ingest resolves them across the
    library: labels.py)."""
    return resolve(parse_document(path, read_file(path, max_bytes), includes), {})


def parse_document(
    path: Path, data: bytes, includes: Includes | None = None, limits: Limits = DEFAULT_LIMITS
) -> ParsedDocument:
    """Parse bytes already read from `path`, by its suffix, within `limits` (in this process:
    `worker.Parser` runs this where it can be stopped). `includes` reads the files Markdown and
    RST include (without it each include is one line naming the file)."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnreadableFile(f"unsupported file type {suffix or '(no suffix)'}")
    if not data:
        raise UnreadableFile("empty file")
    if suffix in _BINARY_PARSERS:
        document = _assemble(_BINARY_PARSERS[suffix](data, limits), _readable_stem(path), "utf-8")
    else:
        text, encoding = _decode_text(data)
        limits.check_chars(len(text))
        if suffix in _INCLUDING_PARSERS:
            outline = _INCLUDING_PARSERS[suffix](_normalise(text), includes)
        else:
            outline = _TEXT_PARSERS[suffix](_normalise(text))
        document = _assemble(outline, _readable_stem(path), encoding)
    limits.check_chars(len(document.text))
    return document


# --- reading and decoding -------------------------------------------------------------------

_T = TypeVar("_T")
_CONTROL_BYTES = bytes(b for b in range(256) if (b < 32 and b not in b"\t\n\r\f") or b == 127)
_NOT_CONTROL_BYTES = bytes(b for b in range(256) if b not in _CONTROL_BYTES)


def read_file(path: Path, max_bytes: int) -> bytes:
    """The bytes of a regular file of at most `max_bytes` (the one place files are read)."""
    info = _os_call(path.stat)
    if stat.S_ISDIR(info.st_mode):
        raise UnreadableFile("is a directory")
    if not stat.S_ISREG(info.st_mode):
        raise UnreadableFile("not a regular file")  # a FIFO or device would block or never end
    if info.st_size > max_bytes:
        raise UnreadableFile(_too_large(max_bytes))
    data = _os_call(path.read_bytes)
    if len(data) > max_bytes:  # it grew since stat
        raise UnreadableFile(_too_large(max_bytes))
    if not data:
        raise UnreadableFile("empty file")
    return data


def _os_call(read: Callable[[], _T]) -> _T:
    try:
        return read()
    except PermissionError:
        raise UnreadableFile("permission denied") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise UnreadableFile("symlink loop") from None
        reason = exc.strerror or type(exc).__name__
        raise UnreadableFile(f"cannot read: {reason[:1].lower()}{reason[1:]}") from None


def _too_large(max_bytes: int) -> str:
    return f"larger than the {round(max_bytes / 1_048_576, 3):g} MB limit (max_file_mb)"


def _decode_text(data: bytes) -> tuple[str, str]:
    """Decode a text file's bytes; return (text, encoding). Raise for binary or blank content."""
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        text, encoding = _decode_utf16(data), "utf-16"
    elif _looks_binary(data):
        raise UnreadableFile("binary file")
    else:
        text, encoding = _decode_8bit(data)
    if not text.strip():
        raise UnreadableFile("empty file")
    return text, encoding


def _looks_binary(data: bytes) -> bool:
    head = data[:8192]
    if b"\0" in head:
        return True
    controls = len(head.translate(None, _NOT_CONTROL_BYTES))
    return controls > len(head) * 0.1


def _decode_utf16(data: bytes) -> str:
    try:
        return data.decode("utf-16")
    except UnicodeDecodeError:
        raise UnreadableFile("binary file") from None


def _decode_8bit(data: bytes) -> tuple[str, str]:
    try:
        return data.decode("utf-8-sig"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp1252"), "cp1252"
    except UnicodeDecodeError:  # cp1252 leaves five bytes undefined; latin-1 maps every byte
        return data.decode("latin-1"), "latin-1"


def _readable_stem(path: Path) -> str:
    """ "south_africa_wills" -> "South Africa Wills"."""
    words = [w for w in re.split(r"[\s_-]+", path.stem) if w]
    return " ".join(w[:1].upper() + w[1:] for w in words) or path.name


# --- outline -> document --------------------------------------------------------------------


@dataclass(frozen=True)
class _Body:
    text: str
    pages: tuple[
        tuple[int, int], ...
    ] = ()  # (offset in text, page number) of pages starting inside


class _Layout:
    """Joins blocks with a blank line between them and records each section body's offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.path: list[tuple[int, str]] = []
        self.sections: list[Section] = []
        self.pages: list[tuple[int, int]] = []
        self.waiting_pages: list[int] = []  # pages that start with the next text appended

    def add(self, block: _Heading | _Body) -> None:
        if isinstance(block, _Heading):
            self.path = [p for p in self.path if p[0] < block.level] + [(block.level, block.text)]
            if block.shown:
                self._append(block.text)
            return
        after = [
            n for offset, n in block.pages if offset >= len(block.text)
        ]  # start with what follows
        if block.text:
            start = self._append(block.text)
            self.pages += [
                (start + offset, n) for offset, n in block.pages if offset < len(block.text)
            ]
            self.sections.append(Section(tuple(text for _, text in self.path), start, self.length))
        self.waiting_pages += after

    def _append(self, text: str) -> int:
        start = self.length + (2 if self.parts else 0)
        self.pages += [(start, n) for n in self.waiting_pages]
        self.waiting_pages = []
        self.parts.append(text)
        self.length = start + len(text)
        return start

    def document(self, title: str, encoding: str) -> ParsedDocument:
        text = "\n\n".join(self.parts)
        sections = tuple(self.sections) or (Section((), 0, len(text)),)  # headings only
        return ParsedDocument(title, text, sections, encoding, tuple(sorted(self.pages)))


def _assemble(outline: _Outline, fallback_title: str, encoding: str) -> ParsedDocument:
    layout = _Layout()
    for block in _clean_blocks(without_link_sections(outline.blocks)):
        layout.add(block)
    if not layout.parts:
        raise UnreadableFile("no text content")
    return layout.document(one_line(clean_chars(outline.title)) or fallback_title, encoding)


def _clean_blocks(blocks: list[_Block]) -> Iterator[_Heading | _Body]:
    """Merge consecutive bodies (remembering where pages start), normalise them, drop empty
    bodies and headings."""
    pieces: list[str] = []
    pages: list[tuple[int, int]] = []
    for block in blocks:
        if isinstance(block, str):
            if piece := _normalise(block):
                pieces.append(piece)
        elif isinstance(block, PageBreak):
            pages.append((sum(len(p) + 2 for p in pieces), block.number))
        else:
            if pieces or pages:
                yield _Body("\n\n".join(pieces), tuple(pages))
            pieces, pages = [], []
            if heading := one_line(clean_chars(block.text)):
                yield _Heading(block.level, heading, block.shown)
    if pieces or pages:
        yield _Body("\n\n".join(pieces), tuple(pages))


# --- parsers by suffix -----------------------------------------------------------------------


def _rst(text: str, includes: Includes | None) -> _Outline:
    """RST; a Markdown file it includes with a parser named (`:parser: myst_parser.sphinx_`) is
    read as Markdown, one level deep (what that file includes is named, not read)."""
    return parse_rst(text, includes, lambda markdown: parse_markdown(markdown, None, 1).blocks)


_INCLUDING_PARSERS: dict[str, Callable[[str, Includes | None], _Outline]] = {
    ".md": parse_markdown,
    ".markdown": parse_markdown,
    ".rst": _rst,
}
_TEXT_PARSERS: dict[str, Callable[[str], _Outline]] = {
    ".txt": parse_text,
    ".html": parse_html,
    ".htm": parse_html,
}
_BINARY_PARSERS: dict[str, Callable[[bytes, Limits], _Outline]] = {
    ".pdf": parse_pdf,
    ".docx": parse_docx,
}
