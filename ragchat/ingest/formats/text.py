"""Plain text: ALL CAPS and numbered one-line paragraphs are headings; table of contents entries
never are (shared with the PDF parser, whose text falls back on these rules)."""

from __future__ import annotations

import re

from ...text import backtick_fences
from .common import Block, Heading, Outline, PageBreak, has_letters

# Table of contents entries: "Introduction ........ 3", "2.1 Scope . . . . 12", "1.2 Scope 5".
_TOC_LEADERS = re.compile(r"\S.*?(?:\.\s?){3,}\s*(?:\d+|[ivxlcdm]+)$", re.I)
_TOC_NUMBERED = re.compile(r"^(?:\d+(?:\.\d+)*\.?|[A-Z]\.)\s+\S.*\s\d{1,3}$")


def is_toc_line(line: str) -> bool:
    """A table of contents entry: dotted leaders, or a numbered title ending with a page number."""
    return bool(_TOC_LEADERS.fullmatch(line.strip()) or _TOC_NUMBERED.match(line.strip()))


_NUM = r"(?:\d+|[ivxlcdm]+|[a-z])(?:\.(?:\d+|[ivxlcdm]+|[a-z]))*"
_KEYWORD_HEADING = re.compile(
    rf"^(?:section|part|chapter|article|appendix|annex|schedule)\s+({_NUM})\b", re.I
)
_NUMBERED_HEADING = re.compile(r"^(\d+(?:\.\d+)+\.?|\d+\.|[IVXLC]+\.|[A-Z]\.)\s+[\"'(\[]?[A-Z0-9]")


def parse_text(text: str) -> Outline:
    text = backtick_fences(text)  # tildes mark a signature's fence alone (`text.SIGNATURE_MARK`)
    width = wrap_width(text)
    paragraphs = (
        [unwrap(p, width) for p in re.split(r"\n{2,}", text)]
        if width
        else re.split(r"\n{2,}", text)
    )
    first = paragraphs[0].strip()
    titled = "\n" not in first and _looks_like_title(first) and not _heading_number(first)
    return Outline(text_blocks(list(paragraphs)), first if titled else "")


_LIST_LINE = re.compile(r"^\s*(?:[-*+\u2022]\s|\d+[.)]\s|[a-z][.)]\s|>)")


def wrap_width(text: str) -> int:
    """The column a hard-wrapped text is wrapped at (40 to 100), or 0 when it is not wrapped: at
    least a third of its lines, and a majority of its lines of 40 or more characters, end within
    15 characters of the longest usual line."""
    lengths = sorted(len(line) for line in text.split("\n") if line.strip())
    long = [n for n in lengths if n >= 40]
    if len(lengths) < 4 or not long:
        return 0
    width = long[min(len(long) - 1, int(len(long) * 0.95))]
    near = sum(width - 15 <= n <= width for n in lengths)
    return width if 40 <= width <= 100 and near * 3 >= len(lengths) and near * 2 > len(long) else 0


def unwrap(paragraph: str, width: int) -> str:
    """A hard-wrapped paragraph on one line. A line break stays where the next line's first word
    would have fitted on the line (the author broke it on purpose), before a list item, and
    around indented lines (code, quotes)."""
    lines = paragraph.split("\n")
    out = lines[:1]
    for line in lines[1:]:
        previous = out[-1]
        first_word = line.split(maxsplit=1)[0] if line.strip() else ""
        wrapped = len(previous) + 1 + len(first_word) > width - 2 and len(previous) >= width - 20
        plain = not line[:1].isspace() and not previous[:1].isspace() and not _LIST_LINE.match(line)
        if wrapped and plain and first_word:
            out[-1] = f"{previous.rstrip()} {line.strip()}"
        else:
            out.append(line)
    return "\n".join(out)


def text_blocks(paragraphs: list[str | PageBreak]) -> list[Block]:
    """A one-line paragraph that is ALL CAPS or numbered is a heading.

    Unnumbered caps headings are level 1. A numbered heading nests under the open heading whose
    number prefixes its own ("2.3" under "2."; "II.A" under "II", not under "I"), and numbered
    headings sit one level below caps headings when the document has both.
    """
    numbers = [_heading_number(p) if isinstance(p, str) else None for p in paragraphs]
    base = 2 if () in numbers else 1
    open_numbers: list[tuple[str, ...]] = []
    blocks: list[Block] = []
    for paragraph, number in zip(paragraphs, numbers):
        if number is None:
            blocks.append(paragraph)
            continue
        while open_numbers and not _is_parent(open_numbers[-1], number):
            open_numbers.pop()
        open_numbers = open_numbers + [number] if number else []
        blocks.append(Heading(base + len(open_numbers) - 1 if number else 1, str(paragraph)))
    return blocks


def _is_parent(parent: tuple[str, ...], child: tuple[str, ...]) -> bool:
    return len(parent) < len(child) and child[: len(parent)] == parent


def _heading_number(paragraph: str) -> tuple[str, ...] | None:
    """None: not a heading; (): an ALL CAPS heading; else its number ("2.3" -> ("2", "3"))."""
    line = paragraph.strip()
    if "\n" in line or len(line) > 80 or line.endswith(".") or not has_letters(line):
        return None
    if is_toc_line(line):
        return None
    if match := _KEYWORD_HEADING.match(line) or _NUMBERED_HEADING.match(line):
        return tuple(match.group(1).upper().rstrip(".").split("."))
    return () if line == line.upper() else None


def _looks_like_title(line: str) -> bool:
    return (
        len(line) <= 80
        and len(line.split()) <= 12
        and has_letters(line)
        and not line.endswith((".", ",", ";", ":"))
    )
