"""A chunk's text as blocks, read by markdown-it (the parser ingest's Markdown reader uses).

Chunk text is what ingest wrote: paragraphs (one per line or hard-wrapped), fenced code with its
language, "- " and "1." list lines (two spaces a level), tables as "cell | cell" lines, and the
short heading-like lines of text and web pages. markdown-it reads the fences (their language, the
closing fence: a "```python" line inside a block does not end it), headings and paragraphs, and
drives four rules for what CommonMark reads otherwise or not at all: ingest's lists (two spaces a
level whatever the marker), ingest's tables (no delimiter row), code that lost its fences (plain
text) and title lines. Indented code, block quotes, rules, setext headings, HTML and link
definitions are off: ingest never writes them, so such lines are prose."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

from markdown_it import MarkdownIt
from markdown_it.ruler import RuleOptionsType
from markdown_it.rules_block import StateBlock

LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S")
END_PUNCTUATION = re.compile(r"[.!?:;…][\"'”’)\]]*$")
ENDS_IN_ADDRESS = re.compile(r"\s\w+://\S+$")  # "... at http://localhost:8001"
# "... parsed as JSON: await request.json()", "Signature: BackgroundTask(func, *args, **kwargs)",
# "For example: request.path_params['username']"; not a plural's or a clause's letter ("the
# call(s)", "Section 303(d)")
ENDS_IN_CODE = re.compile(
    r"[\w\]]\((?!\w\)$)[^()]*(?:\([^()]*\)[^()]*)*\)$"
    r"|[\w)\]]\[(?:'[^'\]]*'|\"[^\"\]]*\"|[A-Za-z_]\w*)\]$"
)
TABLE_ROW = re.compile(r"\S\s*\|\s*\S")
CODE_LINE = re.compile(
    r"^\s*(?:import \w|from [\w.]+ import |def \w+\(|class \w+[(:]|return\b|async |await |\$ "
    r"|>>> |[\w.\[\]'\"]+\s*[+\-*/]?=\s*\S|[\w.]+\([^()]*(?:\([^()]*\)[^()]*)*\)\s*;?$|with "
    r"\S.*:$|for \S.* in .*:$|if .*:$|[{}\[\]()]+[,;]?$)"
)
_KINDS = {
    "fence": "code",
    "loose_code": "loose_code",
    "item_lines": "list",
    "pipe_table": "table",
    "heading_open": "heading",
    "title": "title",
    "paragraph_open": "prose",
}  # token -> block kind
BlockRule = Callable[[StateBlock, int, int, bool], bool]


@dataclass(frozen=True)
class Block:
    kind: str  # prose | code | loose_code (code without fences) | list | table | heading | title
    lines: tuple[str, ...]  # as they are in the chunk (code cut at the chunk's end: fence closed)


@lru_cache(maxsize=4096)  # the same chunks come back turn after turn
def blocks(text: str, title_words: int) -> tuple[Block, ...]:
    """The top-level blocks of a chunk in reading order."""
    lines = text.splitlines()
    found: list[Block] = []
    for token in _parser(title_words).parse("\n".join(lines)):
        if token.level == 0 and token.type in _KINDS and token.map:
            start, end = token.map
            found += _blocks(_KINDS[token.type], lines[start:end], token.markup)
    return tuple(found)


def _blocks(kind: str, lines: list[str], fence: str) -> list[Block]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    if kind == "code" and not (len(lines) > 1 and lines[-1].strip().startswith(fence)):
        lines = [*lines, fence]  # the chunk ends inside the block
    return [Block(kind, tuple(lines))]


@lru_cache(maxsize=4)
def _parser(title_words: int) -> MarkdownIt:
    parser = MarkdownIt("commonmark").disable(
        ["code", "blockquote", "hr", "html_block", "reference", "lheading", "inline"]
    )  # blocks only: their lines are taken as they are
    paragraph: RuleOptionsType = {"alt": ["paragraph"]}  # each may end a paragraph
    parser.block.ruler.at("paragraph", _paragraph)
    parser.block.ruler.at("list", _item_lines, paragraph)
    parser.block.ruler.after("fence", "loose_code", _loose_code, paragraph)
    parser.block.ruler.after("list", "pipe_table", _pipe_table, paragraph)
    parser.block.ruler.after("heading", "title", _titled(title_words), paragraph)
    return parser


def _paragraph(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Lines up to a blank one or the start of another block. Unlike CommonMark's paragraph, an
    indented line may start one too (a tab-indented "to" between two times is still a title)."""
    terminators = state.md.block.ruler.getRules("paragraph")
    outer, state.parentType = (
        state.parentType,
        "paragraph",
    )  # so a list starting at "2." does not end it
    line = start + 1
    while line < state.lineMax and not state.isEmpty(line):
        if any(rule(state, line, state.lineMax, True) for rule in terminators):
            break
        line += 1
    state.parentType = outer
    state.push("paragraph_open", "p", 1).map = [start, line]
    state.push("paragraph_close", "p", -1)
    state.line = line
    return True


def _line(state: StateBlock, line: int) -> str:
    return state.src[state.bMarks[line] : state.eMarks[line]] if line < state.lineMax else ""


def _push(state: StateBlock, kind: str, start: int, end: int) -> bool:
    state.push(kind, "", 0).map = [start, end]
    state.line = end
    return True


def looks_like_code(line: str) -> bool:
    """A line of code in text that lost its fences (plain-text chunks): an assignment, a call,
    an import or a definition, not a sentence."""
    stripped = line.strip()
    return (
        bool(stripped)
        and not re.search(r"[.!?]$", stripped)
        and bool(CODE_LINE.match(line))
        and not LIST_ITEM.match(line)
    )


def _loose_code(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Lines of code without fences, with the indented and blank lines between them."""
    if not looks_like_code(_line(state, start)):
        return False
    if silent:
        return True
    line = start + 1
    while line < end and (
        looks_like_code(_line(state, line))
        or _line(state, line).startswith(("    ", "\t"))
        or (not _line(state, line).strip() and looks_like_code(_line(state, line + 1)))
    ):
        line += 1
    return _push(state, "loose_code", start, line)


def _item_lines(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Ingest's lists: "- " or "1." item lines, two spaces a level whatever the marker, up to a
    blank line. (CommonMark nests by the marker's width and lets only "1." interrupt a
    paragraph, so it misreads a nested numbered list and a chunk that begins inside a list.)"""
    if not LIST_ITEM.match(_line(state, start)):
        return False
    if silent:
        return True
    line = start + 1
    while (
        line < end
        and _line(state, line).strip()
        and (LIST_ITEM.match(_line(state, line)) or _line(state, line).startswith("  "))
    ):
        line += 1
    return _push(state, "item_lines", start, line)


def _pipe_table(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """Ingest's tables: two or more "cell | cell" lines, the first two with as many cells."""
    first, second = _line(state, start), _line(state, start + 1)
    if not (
        TABLE_ROW.search(first)
        and TABLE_ROW.search(second)
        and first.count("|") == second.count("|")
    ):
        return False
    if silent:
        return True
    line = start + 2
    while line < end and TABLE_ROW.search(_line(state, line)):
        line += 1
    return _push(state, "pipe_table", start, line)


def is_title(line: str, following: str, title_words: int) -> bool:
    """A short line without end punctuation before a capitalised line (or none): a heading or a
    navigation label, not part of a sentence. A line that ends in a web address or a call is a
    sentence whose full stop the address or the code pushed out ("Once started you can access
    it at http://localhost:8001" before the code it introduces; "The request body, parsed as
    JSON: await request.json()")."""
    return (
        not END_PUNCTUATION.search(line)
        and not ENDS_IN_ADDRESS.search(line)
        and not ENDS_IN_CODE.search(line)
        and len(line.split()) <= title_words
        and (not following or not following[0].islower())
    )


def _titled(title_words: int) -> BlockRule:
    def title(state: StateBlock, start: int, end: int, silent: bool) -> bool:
        line = _line(state, start).strip()
        if not line or not is_title(line, _line(state, start + 1).strip(), title_words):
            return False
        return True if silent else _push(state, "title", start, start + 1)

    return title
