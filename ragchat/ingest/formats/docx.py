"""Word .docx (python-docx): headings from the Title and Heading N styles, paragraphs, list
paragraphs as "- item" lines (two spaces per level), tables as "cell | cell" lines.

A .docx is a zip: before anything is parsed, the sizes its members declare are checked against the
expansion limit, then each member is read through with a running count (zipfile also stops a member
at its declared size and fails its checksum, so a lying header is a corrupt file)."""

from __future__ import annotations

import io
import re
import zipfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ragchat.errors import UnreadableFile

from ..limits import DEFAULT_LIMITS, Limits
from .common import Block, Heading, Outline

if TYPE_CHECKING:
    from docx.document import Document
    from docx.table import Table
    from docx.text.paragraph import Paragraph

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.I)
_LIST_STYLE = re.compile(r"^list\b(?:.*?(\d))?", re.I)


def parse_docx(data: bytes, limits: Limits = DEFAULT_LIMITS) -> Outline:
    _check_expansion(data, limits)
    document = _open(data)
    # here: python-docx loads only for .docx files
    from docx.table import Table
    from docx.text.paragraph import Paragraph

    style_name = _style_names(document)

    blocks: list[Block] = []
    items: list[str] = []  # the open list's lines
    title = ""
    for element in document.element.body.iterchildren():
        tag = element.tag.rsplit("}", 1)[-1]
        if tag == "tbl":
            blocks += _flush(items) + [_table_text(Table(element, document))]
            continue
        if tag != "p":
            continue
        paragraph = Paragraph(element, document)
        text = paragraph.text.strip()
        if not text:
            continue
        style = style_name(paragraph)
        level = _list_level(paragraph, style)
        if level is not None:
            items.append("  " * level + "- " + text)
            continue
        blocks += _flush(items)
        if style.lower() in ("title", "subtitle"):
            title = title or text
            blocks.append(Heading(1, text) if style.lower() == "title" else text)
        elif match := _HEADING_STYLE.match(style):
            blocks.append(Heading(int(match.group(1)) + (1 if title else 0), text))
        else:
            blocks.append(text)
    blocks += _flush(items)
    core_title = (document.core_properties.title or "").strip()
    return Outline(blocks, title or core_title)


def _check_expansion(data: bytes, limits: Limits) -> None:
    """The members' declared sizes first (cheap), then each member read through in pieces and
    counted, so a header that lies about its size is caught too (before python-docx reads it)."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            members = archive.infolist()
            limits.check_expanded(sum(member.file_size for member in members), ".docx")
            total = 0
            for member in members:
                with archive.open(member) as stream:
                    while piece := stream.read(1 << 20):
                        total += len(piece)
                        limits.check_expanded(total, ".docx")
    except UnreadableFile:
        raise
    except (
        Exception
    ) as exc:  # a damaged zip raises many exception types (BadZipFile, zlib.error, ...)
        detail = " ".join(str(exc).split())[:80] or type(exc).__name__
        raise UnreadableFile(f"corrupt .docx: {detail}") from None


def _style_names(document: Document) -> Callable[[Paragraph], str]:
    """A paragraph's style name, looked up in a table built once (python-docx's own lookup scans
    the styles for every paragraph: minutes on a file of many short paragraphs)."""
    # here: python-docx loads only for .docx files
    from docx.enum.style import WD_STYLE_TYPE

    names = {
        style.style_id: style.name or ""
        for style in document.styles
        if style.type == WD_STYLE_TYPE.PARAGRAPH
    }
    default = document.styles.default(WD_STYLE_TYPE.PARAGRAPH)
    fallback = (default.name or "") if default is not None else ""
    return lambda paragraph: (
        names.get(paragraph._p.style or "", fallback) if paragraph._p.style else fallback
    )


def _open(data: bytes) -> Document:  # python-docx is imported here: only .docx files need it
    from docx import Document

    try:
        return Document(io.BytesIO(data))
    except Exception as exc:  # a damaged zip or XML raises many exception types
        detail = " ".join(str(exc).split())[:80] or type(exc).__name__
        if detail.startswith("unknown error"):  # what lxml says when its memory runs out
            raise UnreadableFile(
                "corrupt .docx, or its XML does not fit in the parser's memory limit"
            ) from None
        raise UnreadableFile(f"corrupt .docx: {detail}") from None


def _flush(items: list[str]) -> list[Block]:
    if not items:
        return []
    block = "\n".join(items)
    items.clear()
    return [block]


def _list_level(paragraph: Paragraph, style: str) -> int | None:
    """The nesting level of a list paragraph (from its numbering or "List Bullet 2"), else None."""
    properties = paragraph._p.pPr
    numbering: Any = properties.numPr if properties is not None else None
    if numbering is not None and numbering.ilvl is not None and numbering.ilvl.val is not None:
        return int(numbering.ilvl.val)
    if match := _LIST_STYLE.match(style):
        return int(match.group(1)) - 1 if match.group(1) else 0
    return 0 if numbering is not None else None


def _table_text(table: Table) -> str:
    rows = []
    for row in table.rows:
        cells: list[str] = []
        for cell in row.cells:
            text = " ".join(cell.text.split())
            if not cells or text != cells[-1]:  # a merged cell repeats in each column it spans
                cells.append(text)
        rows.append(" | ".join(cells))
    return "\n".join(rows)
