"""PDF (pypdf): headings from font sizes, else plain-text rules, else one section per
page; paragraphs from line gaps; line-end hyphenation joined; each page's start marked
for page numbers."""

from __future__ import annotations

import io
import logging
import math
import re
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ragchat.errors import UnreadableFile
from ragchat.text import one_line

from ..limits import DEFAULT_LIMITS, Limits
from .common import CONTROL_CHARS, Block, Heading, Outline, PageBreak, has_letters
from .text import is_toc_line, text_blocks

if TYPE_CHECKING:
    from pypdf import PdfReader

_JUNK_PDF_TITLE = re.compile(
    r"^(?:untitled.*|document\d*|microsoft (?:word|powerpoint) - .*"
    r"|.*\.(?:docx?|pdf|odt|rtf|tex|txt|pptx?))$",
    re.I,
)


def parse_pdf(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Outline:
    """Headings from larger fonts, else from plain-text rules, else one section per page.

    Paragraph breaks come from larger vertical gaps between lines. Streams inflate to at most
    `limits.expanded` bytes and extraction stops past `limits.chars` characters (a flate bomb).
    """
    with _quiet_pypdf(), _bounded(limits):
        reader = _open_pdf(data)
        pages = _pdf_pages(reader, limits)
        meta_title = _pdf_meta_title(reader)
    level_of = _font_heading_levels([line for page in pages for line in page])
    page_blocks = [_pdf_page_blocks(page, level_of) for page in pages]
    blocks = [block for n, page in enumerate(page_blocks, 1) for block in [PageBreak(n), *page]]
    if not _first_heading(blocks):
        blocks = text_blocks([b for b in blocks if not isinstance(b, Heading) and b])
    if not _first_heading(blocks):
        blocks = [
            block
            for n, page in enumerate(page_blocks, 1)
            for block in [PageBreak(n), Heading(1, f"Page {n}", shown=False), *page]
        ]
    return Outline(blocks, meta_title or _first_heading(blocks))


def _first_heading(blocks: list[Block]) -> str:
    return next((b.text for b in blocks if isinstance(b, Heading) and b.shown), "")


@dataclass(frozen=True)
class _PdfLine:
    text: str
    size: float  # the largest effective font size on the line
    y: float | None  # the baseline of its first text run, in page space


class _PdfLineCollector:
    """Rebuilds extract_text()'s lines from pypdf's visitor, with their font size and height."""

    def __init__(self, limits: Limits = DEFAULT_LIMITS, extracted: int = 0) -> None:
        self.limits = limits
        self.extracted = extracted  # characters extracted from the document so far
        self.lines: list[_PdfLine] = []
        self.parts: list[str] = []
        self.size = 0.0
        self.y: float | None = None

    def visit(
        self, text: str, cm: list[float], tm: list[float], font: object, font_size: float
    ) -> None:
        self.extracted += len(text)
        self.limits.check_chars(self.extracted)
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


def _pdf_pages(reader: PdfReader, limits: Limits) -> list[list[_PdfLine]]:
    """Lines per page; a page that fails to extract counts as empty unless no page has text."""
    try:
        pages = list(reader.pages)
    except Exception as exc:
        raise UnreadableFile(f"corrupt PDF: {_short_error(exc)}") from None
    texts: list[list[_PdfLine]] = []
    error: Exception | None = None
    extracted = 0
    for page in pages:
        collector = _PdfLineCollector(limits, extracted)
        try:
            page.extract_text(visitor_text=collector.visit)
        except UnreadableFile:
            raise
        except Exception as exc:
            error = error or _limit_reached(exc, limits) or exc
        extracted = collector.extracted
        texts.append(_clean_pdf_lines(collector.finish()))
    if not any(texts):
        if isinstance(error, UnreadableFile):
            raise error
        if error is not None:
            raise UnreadableFile(f"corrupt PDF: {_short_error(error)}")
        raise UnreadableFile("no text layer in PDF (scanned?)")
    return texts


_PAGE_NUMBER_LINE = re.compile(r"^(?:page\s+)?\d+(?:\s*(?:of|/)\s*\d+)?$|^- ?\d+ ?-$", re.I)


def _clean_pdf_lines(lines: list[_PdfLine]) -> list[_PdfLine]:
    """One-line texts without control characters; bare page numbers ("Page 2 of 9") dropped."""
    cleaned = [(line, one_line(CONTROL_CHARS.sub("", line.text))) for line in lines]
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
        big = line.size >= body * 1.15 and len(line.text) <= 120
        return big and has_letters(line.text) and not is_toc_line(line.text)

    sizes = sorted({line.size for line in lines if is_heading(line)}, reverse=True)
    return lambda line: sizes.index(line.size) + 1 if is_heading(line) else 0


def _pdf_page_blocks(lines: list[_PdfLine], level_of: Callable[[_PdfLine], int]) -> list[Block]:
    blocks: list[Block] = []
    paragraph: list[str] = []
    gap = _typical_line_gap(lines)
    previous: _PdfLine | None = None
    for line in lines:
        level = level_of(line)
        if paragraph and (level or _new_paragraph(previous, line, gap)):
            blocks.append("\n".join(paragraph))
            paragraph = []
        if (
            not level
            and paragraph
            and _HYPHENATED_END.search(paragraph[-1])
            and line.text[:1].islower()
        ):
            paragraph[-1] = paragraph[-1][:-1] + line.text  # "man-" + "agement"
        elif not level:
            paragraph.append(line.text)
        elif previous and level_of(previous) == level and isinstance(blocks[-1], Heading):
            blocks[-1] = Heading(level, f"{blocks[-1].text} {line.text}")  # a wrapped heading
        else:
            blocks.append(Heading(level, line.text))
        previous = line
    return blocks + (["\n".join(paragraph)] if paragraph else [])


_HYPHENATED_END = re.compile(r"[a-z]-$")


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


PARSING_WORK = (
    500_000  # operands and operators in one content stream (a dense real page has ~50,000)
)


@contextmanager
def _bounded(limits: Limits) -> Iterator[None]:
    """pypdf's own limits on inflated streams, set to ours."""
    # here: pypdf loads only for PDFs
    from pypdf import apply_configuration

    size = limits.expanded
    with apply_configuration(
        zlib_maximum_output_length=size,
        lzw_maximum_output_length=size,
        run_length_maximum_output_length=size,
        brotli_maximum_output_length=size,
        array_based_stream_maximum_output_length=size,
        maximum_declared_stream_length=size,
        stream_parsing_work_maximum_count=PARSING_WORK,
    ):
        yield


def _limit_reached(exc: Exception, limits: Limits) -> UnreadableFile | None:
    """A stream pypdf refused to inflate past the limit: a refusal that says so."""
    # here: pypdf loads only for PDFs
    from pypdf.errors import LimitReachedError

    if not isinstance(exc, LimitReachedError):
        return None
    if "decompress" in str(exc).lower() or "length" in str(exc).lower():
        return UnreadableFile(
            f"a PDF stream expands to more than {limits.expanded >> 20} MB (a compression bomb?)"
        )
    return UnreadableFile(f"a PDF page has more than {PARSING_WORK:,} drawing operations")


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
    sensible = 3 <= len(title) <= 200 and has_letters(title) and not _JUNK_PDF_TITLE.match(title)
    return title if sensible else ""


def _short_error(exc: Exception) -> str:
    detail = one_line(str(exc)) or type(exc).__name__
    return detail if len(detail) <= 80 else detail[:77] + "..."
