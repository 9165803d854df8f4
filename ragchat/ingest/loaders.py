"""Load a supported file into a ParsedDocument: plain text, a title and heading-labelled sections.

Pure except for reading the file. Every reason a file cannot be ingested is an UnreadableFile
whose message is the short phrase shown in the ingest summary's skipped list.

Each format parser turns the file into an outline (body strings and headings); `_Layout` then
joins it into one normalised text with a blank line between blocks and records where each
section body lies, so every format gets the same text and offset rules.
"""

from __future__ import annotations

import codecs
import io
import logging
import math
import re
import errno
import stat
import textwrap
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from ragchat.errors import UnreadableFile
from ragchat.text import one_line

if TYPE_CHECKING:
    from pypdf import PdfReader

SUPPORTED_SUFFIXES: frozenset[str] = frozenset(
    {".md", ".markdown", ".txt", ".rst", ".html", ".htm", ".pdf"}
)
DEFAULT_MAX_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class Section:
    """The body text under one heading path: `ParsedDocument.text[start:end]` (no heading line)."""

    heading_path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class ParsedDocument:
    """A loaded file. `encoding` is "utf-8" (always for PDFs) unless a fallback was needed."""

    title: str
    text: str
    sections: tuple[Section, ...]
    encoding: str = "utf-8"


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in SUPPORTED_SUFFIXES


def load_document(path: Path, max_bytes: int = DEFAULT_MAX_BYTES) -> ParsedDocument:
    """Read and parse `path` by its suffix; raise UnreadableFile with a short reason on failure."""
    return parse_document(path, read_file(path, max_bytes))


def parse_document(path: Path, data: bytes) -> ParsedDocument:
    """Parse bytes already read from `path`, by its suffix."""
    suffix = path.suffix.lower()
    if suffix not in SUPPORTED_SUFFIXES:
        raise UnreadableFile(f"unsupported file type {suffix or '(no suffix)'}")
    if not data:
        raise UnreadableFile("empty file")
    if suffix == ".pdf":
        return _assemble(_parse_pdf(data), _readable_stem(path), "utf-8")
    text, encoding = _decode_text(data)
    return _assemble(_TEXT_PARSERS[suffix](_normalise(text)), _readable_stem(path), encoding)


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


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufeff]")
_BLANK_RUNS = re.compile(r"\n{3,}")


def _normalise(text: str) -> str:
    """Unix newlines, no control characters, no trailing spaces, at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = _CONTROL_CHARS.sub("", text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip("\n")


def _readable_stem(path: Path) -> str:
    """"south_africa_wills" -> "South Africa Wills"."""
    words = [w for w in re.split(r"[\s_-]+", path.stem) if w]
    return " ".join(w[:1].upper() + w[1:] for w in words) or path.name


# --- outline -> document --------------------------------------------------------------------


@dataclass(frozen=True)
class _Heading:
    level: int
    text: str
    shown: bool = True  # False sets the heading path without adding a line (PDF "Page N")


_Block = _Heading | str


@dataclass
class _Outline:
    blocks: list[_Block] = field(default_factory=list)
    title: str = ""


class _Layout:
    """Joins blocks with a blank line between them and records each section body's offsets."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.length = 0
        self.path: list[tuple[int, str]] = []
        self.sections: list[Section] = []

    def add(self, block: _Block) -> None:
        if isinstance(block, _Heading):
            self.path = [p for p in self.path if p[0] < block.level] + [(block.level, block.text)]
            if block.shown:
                self._append(block.text)
            return
        start = self._append(block)
        self.sections.append(Section(tuple(text for _, text in self.path), start, self.length))

    def _append(self, text: str) -> int:
        start = self.length + (2 if self.parts else 0)
        self.parts.append(text)
        self.length = start + len(text)
        return start

    def document(self, title: str, encoding: str) -> ParsedDocument:
        text = "\n\n".join(self.parts)
        sections = tuple(self.sections) or (Section((), 0, len(text)),)  # headings only
        return ParsedDocument(title, text, sections, encoding)


def _assemble(outline: _Outline, fallback_title: str, encoding: str) -> ParsedDocument:
    layout = _Layout()
    for block in _clean_blocks(outline.blocks):
        layout.add(block)
    if not layout.parts:
        raise UnreadableFile("no text content")
    return layout.document(one_line(outline.title) or fallback_title, encoding)


def _clean_blocks(blocks: list[_Block]) -> Iterator[_Block]:
    """Merge consecutive bodies, normalise them, drop empty bodies and headings."""
    pending: list[str] = []
    for block in blocks:
        if isinstance(block, str):
            pending.append(block)
            continue
        if body := _normalise("\n\n".join(pending)):
            yield body
        pending = []
        if heading := one_line(block.text):
            yield _Heading(block.level, heading, block.shown)
    if body := _normalise("\n\n".join(pending)):
        yield body


# --- plain text -----------------------------------------------------------------------------

_NUM = r"(?:\d+|[ivxlcdm]+|[a-z])(?:\.(?:\d+|[ivxlcdm]+|[a-z]))*"
_KEYWORD_HEADING = re.compile(
    rf"^(?:section|part|chapter|article|appendix|annex|schedule)\s+({_NUM})\b", re.I
)
_NUMBERED_HEADING = re.compile(
    r"^(\d+(?:\.\d+)+\.?|\d+\.|[IVXLC]+\.|[A-Z]\.)\s+[\"'(\[]?[A-Z0-9]"
)


def _parse_text(text: str) -> _Outline:
    paragraphs = re.split(r"\n{2,}", text)
    first = paragraphs[0].strip()
    titled = "\n" not in first and _looks_like_title(first) and not _heading_number(first)
    return _Outline(_text_blocks(paragraphs), first if titled else "")


def _text_blocks(paragraphs: list[str]) -> list[_Block]:
    """A one-line paragraph that is ALL CAPS or numbered is a heading.

    Unnumbered caps headings are level 1. A numbered heading nests under the open heading whose
    number prefixes its own ("2.3" under "2."; "II.A" under "II", not under "I"), and numbered
    headings sit one level below caps headings when the document has both.
    """
    numbers = [_heading_number(p) for p in paragraphs]
    base = 2 if () in numbers else 1
    open_numbers: list[tuple[str, ...]] = []
    blocks: list[_Block] = []
    for paragraph, number in zip(paragraphs, numbers):
        if number is None:
            blocks.append(paragraph)
            continue
        while open_numbers and not _is_parent(open_numbers[-1], number):
            open_numbers.pop()
        open_numbers = open_numbers + [number] if number else []
        blocks.append(_Heading(base + len(open_numbers) - 1 if number else 1, paragraph))
    return blocks


def _is_parent(parent: tuple[str, ...], child: tuple[str, ...]) -> bool:
    return len(parent) < len(child) and child[: len(parent)] == parent


def _heading_number(paragraph: str) -> tuple[str, ...] | None:
    """None: not a heading; (): an ALL CAPS heading; else its number ("2.3" -> ("2", "3"))."""
    line = paragraph.strip()
    if "\n" in line or len(line) > 80 or line.endswith(".") or not _has_letters(line):
        return None
    if match := _KEYWORD_HEADING.match(line) or _NUMBERED_HEADING.match(line):
        return tuple(match.group(1).upper().rstrip(".").split("."))
    return () if line == line.upper() else None


def _has_letters(line: str) -> bool:
    return sum(c.isalpha() for c in line) >= 2


def _looks_like_title(line: str) -> bool:
    return (
        len(line) <= 80
        and len(line.split()) <= 12
        and _has_letters(line)
        and not line.endswith((".", ",", ";", ":"))
    )


# --- markdown -------------------------------------------------------------------------------

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*$\n?", re.S | re.M)
_YAML_KEY = re.compile(r"^\s*[\w-]+\s*:", re.M)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_THEMATIC = re.compile(r"^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$")
_REF_DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s+\S+")
_NOT_PARAGRAPH = re.compile(r"^\s*(?:[-*+>|]|\d+[.)])(?:\s|$)")
_HEADING_ID = re.compile(r"\s*\{#[^}]*\}\s*$")
_MD_INLINE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"^ {0,3}(?:>[ \t]?)+"), ""),  # block quote markers
    (re.compile(r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])"), ""),  # images
    (re.compile(r"\[([^\]]+)\](?:\([^)]*\)|\[[^\]]*\])"), r"\1"),  # links
    (re.compile(r"<((?:https?|mailto):[^>\s]+)>"), r"\1"),  # autolinks
    (re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>"), ""),  # inline HTML tags
    (re.compile(r"(`+)(.+?)\1"), r"\2"),  # code spans
    (re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1"), r"\2"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),
    (re.compile(r"(?<![\w_])_(?=[^\s_])(.+?)(?<=[^\s_])_(?![\w_])"), r"\1"),
    (re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~<])"), r"\1"),  # backslash escapes
]


def _parse_markdown(text: str) -> _Outline:
    text, meta_title = _strip_front_matter(text)
    reader = _MarkdownReader()
    for line in _HTML_COMMENT.sub("", text).split("\n"):
        reader.feed(line)
    blocks = reader.finish()
    h1 = next((b.text for b in blocks if isinstance(b, _Heading) and b.level == 1), "")
    return _Outline(blocks, h1 or meta_title)


def _strip_front_matter(text: str) -> tuple[str, str]:
    match = _FRONT_MATTER.match(text)
    if not match or not _YAML_KEY.match(match.group(1)):
        return text, ""
    title = re.search(r"^title:[ \t]*(.+)$", match.group(1), re.M)
    return text[match.end() :], title.group(1).strip().strip("\"'") if title else ""


def _md_inline(line: str) -> str:
    for pattern, replacement in _MD_INLINE:
        line = pattern.sub(replacement, line)
    return line


class _MarkdownReader:
    """Line by line: headings (ATX and setext) split the body; fenced code is kept verbatim."""

    def __init__(self) -> None:
        self.blocks: list[_Block] = []
        self.lines: list[str] = []
        self.fence = ""  # the opening fence while inside a code block
        self.paragraph_lines = 0  # plain text lines since the last blank line

    def feed(self, line: str) -> None:
        if self.fence:
            self._feed_code(line)
        elif match := _FENCE.match(line):
            self.fence, self.paragraph_lines = match.group(1), 0
        elif match := _ATX.match(line):
            self._heading(len(match.group(1)), match.group(2) or "")
        elif _SETEXT.match(line) and self.paragraph_lines == 1:
            self._heading(1 if line.strip()[0] == "=" else 2, self.lines.pop())
        elif _THEMATIC.match(line) or _SETEXT.match(line) or _REF_DEFINITION.match(line):
            self.paragraph_lines = 0
        else:
            self.lines.append(_md_inline(line))
            plain = bool(line.strip()) and not _NOT_PARAGRAPH.match(line)
            self.paragraph_lines = self.paragraph_lines + 1 if plain else 0

    def _feed_code(self, line: str) -> None:
        closing = line.strip()
        if closing.startswith(self.fence) and closing == self.fence[0] * len(closing):
            self.fence = ""
        else:
            self.lines.append(line)

    def _heading(self, level: int, text: str) -> None:
        self._flush()
        self.blocks.append(_Heading(level, _HEADING_ID.sub("", _md_inline(text))))
        self.paragraph_lines = 0

    def _flush(self) -> None:
        self.blocks.append("\n".join(self.lines))
        self.lines = []

    def finish(self) -> list[_Block]:
        self._flush()
        return self.blocks


# --- reStructuredText -----------------------------------------------------------------------

_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_RST_EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s+(.*))?$")
_RST_DIRECTIVE = re.compile(r"^([\w:+.-]+)::(?:\s+(.*))?$")
_RST_OPTION = re.compile(r"^\s*:[\w -]+:(?:\s|$)")
_RST_ADMONITIONS = frozenset(
    "admonition attention caution danger error hint important note tip warning seealso "
    "topic sidebar rubric versionadded versionchanged deprecated".split()
)
_RST_DROPPED_DIRECTIVES = frozenset("toctree raw include contents meta index only".split())
_RST_INLINE: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r":[\w:+.-]+:`([^`<]+?)\s*<[^>]*>`"), r"\1"),  # :role:`text <target>`
    (re.compile(r":[\w:+.-]+:`([^`]+)`"), r"\1"),  # :role:`text`
    (re.compile(r"`([^`<]+?)\s*<[^>]*>`__?"), r"\1"),  # `text <url>`_
    (re.compile(r"``(.+?)``"), r"\1"),
    (re.compile(r"`([^`]+)`__?"), r"\1"),  # `reference`_
    (re.compile(r"`([^`]+)`"), r"\1"),
    (re.compile(r" ?\[(?:\d+|#[\w-]*|\*)\]_"), ""),  # footnote references
    (re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*"), r"\1"),
    (re.compile(r"(?<![\w*])\*(?=[^\s*])(.+?)(?<=[^\s*])\*(?![\w*])"), r"\1"),
    (re.compile(r"\|([^|\s][^|]*?)\|(?![\w|])"), r"\1"),  # substitutions
    (re.compile(r"(?<=\w)__?(?=[\s.,;:!?)]|$)"), ""),  # word_ references
]


def _parse_rst(text: str) -> _Outline:
    """Titles are underlined (maybe overlined); each new (char, overline) style nests deeper."""
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    blocks: list[_Block] = []
    segment_start = i = 0
    while i < len(lines):
        found = _rst_title_at(lines, i)
        if found is None:
            i += 1
            continue
        style, title, next_i = found
        styles += [] if style in styles else [style]
        blocks.append("\n".join(_rst_body(lines[segment_start:i])))
        blocks.append(_Heading(styles.index(style) + 1, title))
        segment_start = i = next_i
    blocks.append("\n".join(_rst_body(lines[segment_start:])))
    first = next((b.text for b in blocks if isinstance(b, _Heading)), "")
    return _Outline(blocks, first)


def _rst_title_at(lines: list[str], i: int) -> tuple[tuple[str, bool], str, int] | None:
    if i > 0 and lines[i - 1].strip():
        return None
    over = _rst_adornment(lines[i])
    below = lines[i + 2].strip() if i + 2 < len(lines) else ""
    if over and below == lines[i].strip() and lines[i + 1].strip():
        return (over, True), _rst_inline(lines[i + 1].strip()), i + 3
    if i + 1 < len(lines) and _rst_underlines(lines[i], lines[i + 1]):
        return (lines[i + 1][0], False), _rst_inline(lines[i].strip()), i + 2
    return None


def _rst_adornment(line: str) -> str:
    """The repeated punctuation character if `line` is an adornment line, else ""."""
    match = _RST_ADORNMENT.match(line)
    return match.group(1) if match and line.strip() not in ("::", "..") else ""


def _rst_underlines(title: str, under: str) -> bool:
    if not title.strip() or title[0].isspace() or _rst_adornment(title):
        return False
    if not _rst_adornment(under):
        return False
    return len(under.rstrip()) >= min(len(title.rstrip()), 4)


def _rst_body(lines: list[str]) -> list[str]:
    """Body lines with markup removed: directive markers, options and comments dropped."""
    kept: list[str] = []
    i = 0
    while i < len(lines):
        if match := _RST_EXPLICIT.match(lines[i]):
            end = _rst_block_end(lines, i + 1, len(match.group(1)))
            kept += _rst_explicit((match.group(2) or "").strip(), lines[i + 1 : end])
            i = end
        else:
            kept.append(_rst_line(lines[i]))
            i += 1
    return kept


def _rst_block_end(lines: list[str], i: int, indent: int) -> int:
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) > indent):
        i += 1
    return i


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _rst_explicit(marker: str, content: list[str]) -> list[str]:
    """`.. name:: arg` keeps its content (and an admonition's argument); comments and targets go."""
    body = textwrap.dedent("\n".join(content)).split("\n")
    if directive := _RST_DIRECTIVE.match(marker):
        name, argument = directive.group(1).lower(), directive.group(2) or ""
        if name in _RST_DROPPED_DIRECTIVES:
            return []
        while body and _RST_OPTION.match(body[0]):
            body.pop(0)
        head = [_rst_inline(argument)] if argument and name in _RST_ADMONITIONS else []
        return head + _rst_body(body)
    if marker.startswith("[") and "]" in marker:  # footnote or citation: keep its text
        return [_rst_inline(marker)] + _rst_body(body)
    return []


def _rst_line(line: str) -> str:
    line = line.rstrip()
    if _rst_adornment(line):  # transitions and bare "::"
        return ""
    if line.endswith("::"):  # literal block marker: "Example::" -> "Example:"
        base = line[:-2]
        line = base.rstrip() if base.endswith((" ", "\t")) else base + ":"
    return _rst_inline(line)


def _rst_inline(text: str) -> str:
    text = re.sub(r"^(\s*)\|\s", r"\1", text)  # line blocks
    for pattern, replacement in _RST_INLINE:
        text = pattern.sub(replacement, text)
    return text


# --- HTML -----------------------------------------------------------------------------------

_HTML_SKIPPED = frozenset("script style noscript nav footer template svg".split())
_HTML_HEADINGS = frozenset(f"h{n}" for n in range(1, 7))
_HTML_PARAGRAPH_BREAKS = frozenset(
    "p div section article main aside header blockquote ul ol dl table figure figcaption "
    "form fieldset address details summary hr pre body".split()
)
_HTML_LINE_BREAKS = frozenset("li tr dt dd br caption option".split())
_WHITESPACE = re.compile(r"\s+")


def _parse_html(text: str) -> _Outline:
    parser = _HtmlReader()
    parser.feed(text)
    parser.close()
    blocks = parser.finish()
    h1 = next((b.text for b in blocks if isinstance(b, _Heading) and b.level == 1), "")
    return _Outline(blocks, parser.title or h1)


class _HtmlReader(HTMLParser):
    """Headings split the body; block elements become line or paragraph breaks."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[_Block] = []
        self.body: list[str] = []
        self.heading: list[str] | None = None
        self.level = 0
        self.title = ""
        self.title_parts: list[str] | None = None
        self.skipped = 0  # depth inside script/style/nav/...
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in _HTML_SKIPPED:
            self.skipped += 1
        elif self.skipped:
            return
        elif tag == "title" and not self.title:
            self.title_parts = []
        elif tag in _HTML_HEADINGS:
            self._flush()
            self.heading, self.level = [], int(tag[1])
        else:
            self.pre += 1 if tag == "pre" else 0
            self._break(tag, starting=True)

    def handle_endtag(self, tag: str) -> None:
        if tag in _HTML_SKIPPED:
            self.skipped = max(0, self.skipped - 1)
        elif self.skipped:
            return
        elif tag == "title" and self.title_parts is not None:
            self.title, self.title_parts = one_line("".join(self.title_parts)), None
        elif tag in _HTML_HEADINGS and self.heading is not None:
            self.blocks.append(_Heading(self.level, "".join(self.heading)))
            self.heading = None
        elif tag not in _HTML_LINE_BREAKS:  # those break before they start: <li>a</li><li>b</li>
            self.pre -= 1 if tag == "pre" and self.pre else 0
            self._break(tag, starting=False)

    def handle_data(self, data: str) -> None:
        if self.skipped:
            return
        if self.title_parts is not None:
            self.title_parts.append(data)
            return
        target = self.body if self.heading is None else self.heading
        if not self.pre:
            data = _WHITESPACE.sub(" ", data)
            if not target or target[-1].endswith((" ", "\n")):
                data = data.lstrip(" ")
        if data:
            target.append(data)

    def _break(self, tag: str, starting: bool) -> None:
        if tag in _HTML_PARAGRAPH_BREAKS:
            self.body.append("\n\n")
        elif tag in _HTML_LINE_BREAKS:
            self.body.append("\n")
        elif tag in ("td", "th") and starting and self.body and not self.body[-1].endswith("\n"):
            self.body.append(" | ")  # cells of one row share a line

    def _flush(self) -> None:
        self.blocks.append("".join(self.body))
        self.body = []

    def finish(self) -> list[_Block]:
        if self.heading is not None:  # an unclosed heading at the end of the file
            self.blocks.append(_Heading(self.level, "".join(self.heading)))
        self._flush()
        return self.blocks


# --- PDF ------------------------------------------------------------------------------------

_JUNK_PDF_TITLE = re.compile(
    r"^(?:untitled.*|document\d*|microsoft (?:word|powerpoint) - .*"
    r"|.*\.(?:docx?|pdf|odt|rtf|tex|txt|pptx?))$",
    re.I,
)


def _parse_pdf(data: bytes) -> _Outline:
    """Headings from larger fonts, else from plain-text rules, else one section per page.

    Paragraph breaks come from larger vertical gaps between lines.
    """
    with _quiet_pypdf():
        reader = _open_pdf(data)
        pages = _pdf_pages(reader)
        meta_title = _pdf_meta_title(reader)
    level_of = _font_heading_levels([line for page in pages for line in page])
    page_blocks = [_pdf_page_blocks(page, level_of) for page in pages]
    blocks = [block for page in page_blocks for block in page]
    if not _first_heading(blocks):
        blocks = _text_blocks([b for b in blocks if isinstance(b, str) and b])
    if not _first_heading(blocks):
        blocks = [
            block
            for n, page in enumerate(page_blocks, 1)
            for block in [_Heading(1, f"Page {n}", shown=False), *page]
        ]
    return _Outline(blocks, meta_title or _first_heading(blocks))


def _first_heading(blocks: list[_Block]) -> str:
    return next((b.text for b in blocks if isinstance(b, _Heading) and b.shown), "")


@dataclass(frozen=True)
class _PdfLine:
    text: str
    size: float  # the largest effective font size on the line
    y: float | None  # the baseline of its first text run, in page space


class _PdfLineCollector:
    """Rebuilds extract_text()'s lines from pypdf's visitor, with their font size and height."""

    def __init__(self) -> None:
        self.lines: list[_PdfLine] = []
        self.parts: list[str] = []
        self.size = 0.0
        self.y: float | None = None

    def visit(
        self, text: str, cm: list[float], tm: list[float], font: object, font_size: float
    ) -> None:
        for n, piece in enumerate(text.split("\n")):
            if n:
                self._end_line()
            self.parts.append(piece)
            if piece.strip():
                self.size = max(self.size, font_size * _scale(tm) * _scale(cm))
                self.y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5] if self.y is None else self.y

    def _end_line(self) -> None:
        if text := "".join(self.parts).strip():
            self.lines.append(_PdfLine(text, round(self.size * 2) / 2, self.y))
        self.parts, self.size, self.y = [], 0.0, None

    def finish(self) -> list[_PdfLine]:
        self._end_line()
        return self.lines


def _scale(matrix: list[float]) -> float:
    return math.hypot(matrix[2], matrix[3]) or 1.0


def _pdf_pages(reader: PdfReader) -> list[list[_PdfLine]]:
    """Lines per page; a page that fails to extract counts as empty unless no page has text."""
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise UnreadableFile(f"corrupt PDF: {_short_error(exc)}") from None
    texts: list[list[_PdfLine]] = []
    error: Exception | None = None
    for page in pages:
        collector = _PdfLineCollector()
        try:
            page.extract_text(visitor_text=collector.visit)
        except Exception as exc:
            error = error or exc
        texts.append(_clean_pdf_lines(collector.finish()))
    if not any(texts):
        if error is not None:
            raise UnreadableFile(f"corrupt PDF: {_short_error(error)}")
        raise UnreadableFile("no text layer in PDF (scanned?)")
    return texts


_PAGE_NUMBER_LINE = re.compile(r"^(?:page\s+)?\d+(?:\s*(?:of|/)\s*\d+)?$|^- ?\d+ ?-$", re.I)


def _clean_pdf_lines(lines: list[_PdfLine]) -> list[_PdfLine]:
    """One-line texts without control characters; bare page numbers ("Page 2 of 9") dropped."""
    cleaned = [(line, one_line(_CONTROL_CHARS.sub("", line.text))) for line in lines]
    return [
        _PdfLine(text, line.size, line.y)
        for line, text in cleaned
        if text and not _PAGE_NUMBER_LINE.match(text)
    ]


def _font_heading_levels(lines: list[_PdfLine]) -> Callable[[_PdfLine], int]:
    """Short lines set clearly larger than the body font are headings; bigger is higher."""
    weights: Counter[float] = Counter()
    for line in lines:
        weights[line.size] += len(line.text)
    body = weights.most_common(1)[0][0] if weights else 0.0

    def is_heading(line: _PdfLine) -> bool:
        return line.size >= body * 1.15 and len(line.text) <= 120 and _has_letters(line.text)

    sizes = sorted({line.size for line in lines if is_heading(line)}, reverse=True)
    return lambda line: sizes.index(line.size) + 1 if is_heading(line) else 0


def _pdf_page_blocks(lines: list[_PdfLine], level_of: Callable[[_PdfLine], int]) -> list[_Block]:
    blocks: list[_Block] = []
    paragraph: list[str] = []
    gap = _typical_line_gap(lines)
    previous: _PdfLine | None = None
    for line in lines:
        level = level_of(line)
        if paragraph and (level or _new_paragraph(previous, line, gap)):
            blocks.append("\n".join(paragraph))
            paragraph = []
        if not level:
            paragraph.append(line.text)
        elif previous and level_of(previous) == level and isinstance(blocks[-1], _Heading):
            blocks[-1] = _Heading(level, f"{blocks[-1].text} {line.text}")  # a wrapped heading
        else:
            blocks.append(_Heading(level, line.text))
        previous = line
    return blocks + (["\n".join(paragraph)] if paragraph else [])


def _typical_line_gap(lines: list[_PdfLine]) -> float:
    """The most common drop between consecutive lines: the line spacing inside paragraphs."""
    heights = [line.y for line in lines]
    pairs = [(a, b) for a, b in zip(heights, heights[1:]) if a is not None and b is not None]
    gaps = Counter(round(a - b) for a, b in pairs if a > b)
    return float(max(gaps, key=lambda gap: (gaps[gap], -gap))) if gaps else 0.0


def _new_paragraph(previous: _PdfLine | None, line: _PdfLine, gap: float) -> bool:
    if previous is None or previous.y is None or line.y is None or not gap:
        return False
    drop = previous.y - line.y
    return drop <= 0 or drop > gap * 1.3  # a jump up is a new column or text box


@contextmanager
def _quiet_pypdf() -> Iterator[None]:
    """pypdf logs a warning for every oddity in a damaged file; the skipped list says enough."""
    logger = logging.getLogger("pypdf")
    previous = logger.level
    logger.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(previous)


def _open_pdf(data: bytes) -> PdfReader:
    # pypdf is imported here: only PDFs need it
    from pypdf import PdfReader
    from pypdf.errors import DependencyError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise UnreadableFile("encrypted PDF (password required)")
        return reader
    except UnreadableFile:
        raise
    except DependencyError:
        raise UnreadableFile("encrypted PDF (AES needs the 'cryptography' package)") from None
    except Exception as exc:  # pypdf raises many exception types for damaged files
        raise UnreadableFile(f"corrupt PDF: {_short_error(exc)}") from None


def _pdf_meta_title(reader: PdfReader) -> str:
    try:
        metadata: dict = dict(reader.metadata or {})
        title = one_line(str(metadata.get("/Title") or ""))
    except Exception:
        return ""
    sensible = 3 <= len(title) <= 200 and _has_letters(title) and not _JUNK_PDF_TITLE.match(title)
    return title if sensible else ""


def _short_error(exc: Exception) -> str:
    detail = one_line(str(exc)) or type(exc).__name__
    return detail if len(detail) <= 80 else detail[:77] + "..."


_TEXT_PARSERS: dict[str, Callable[[str], _Outline]] = {
    ".md": _parse_markdown,
    ".markdown": _parse_markdown,
    ".txt": _parse_text,
    ".rst": _parse_rst,
    ".html": _parse_html,
    ".htm": _parse_html,
}
