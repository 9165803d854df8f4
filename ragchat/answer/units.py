"""A chunk's text as the units an answer can show: sentences (each with the block it introduces),
list items, code blocks, tables, and the titles and cut sentences an answer never shows."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..text import split_sentences
from .params import ANSWER_PARAMS, AnswerParams

FENCE = re.compile(r"^\s*(```+|~~~+)\s*([\w+#.-]*)")
LIST_ITEM = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+\S")
HEADING = re.compile(r"^#{1,6}\s")
END_PUNCTUATION = re.compile(r"[.!?:;…][\"'”’)\]]*$")
TABLE_ROW = re.compile(r"\S\s*\|\s*\S")
CODE_LINE = re.compile(
    r"^\s*(?:import \w|from [\w.]+ import |def \w+\(|class \w+[(:]|return\b|async |await |\$ |>>> |"
    r"[\w.\[\]'\"]+\s*[+\-*/]?=\s*\S|[\w.]+\([^()]*(?:\([^()]*\)[^()]*)*\)\s*;?$|with \S.*:$|for \S.* in .*:$|if .*:$|[{}\[\]()]+[,;]?$)")
# a notice, not an answer; "licensed under the MIT license" stays: it answers "what licence?"
_LICENCE_NOTICE = re.compile(r"\b(?:placed in the public domain|all rights reserved)\b", re.I)


@dataclass(frozen=True)
class Unit:
    """A piece of a chunk an answer can show: a sentence (with the block it introduces, if any),
    a list item, or a block on its own."""

    position: int
    sentence: str  # "" for a block on its own
    block: str = ""  # a fenced code block, list or table, as it is in the chunk
    kind: str = "sentence"  # sentence | item | code | list | table | title | fragment

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.sentence, self.block) if part)

    @property
    def has_code(self) -> bool:
        return self.block.lstrip().startswith(("```", "~~~"))


def units(text: str, params: AnswerParams = ANSWER_PARAMS) -> list[Unit]:
    """The units of a chunk in reading order. A block goes with the sentence right before it
    (the sentence that introduces it); a list nobody introduces gives its items one by one."""
    found: list[Unit] = []
    for kind, piece in _pieces(text, params):
        if kind == "prose":
            found.extend(Unit(len(found), s) for s in split_sentences(piece))
            continue
        if kind == "title":
            found.append(Unit(len(found), piece, kind="title"))
            continue
        last = found[-1] if found else None
        if last is not None and last.kind == "sentence" and not last.block:
            found[-1] = Unit(last.position, last.sentence, piece, kind)
        elif kind == "list":
            found.extend(Unit(len(found), " ".join(item.split()), kind="item")
                         for item in piece.splitlines() if item.strip() and item.strip() != "…")
        else:
            found.append(Unit(len(found), "", piece, kind))
    return _fragments_marked(found)


def _fragments_marked(found: list[Unit]) -> list[Unit]:
    """A chunk can start or end inside a sentence: those pieces are fragments."""
    if found and found[0].kind == "sentence" and found[0].sentence[:1].islower():
        found[0] = replace(found[0], kind="fragment")
    last = found[-1] if found else None
    if last is not None and last.kind == "sentence" and not last.block and not END_PUNCTUATION.search(last.sentence):
        found[-1] = replace(last, kind="fragment")
    return found


def lead_text(text: str) -> str:
    """A chunk's text as the units would show it, from the start (the lead baseline)."""
    return " ".join(unit.text for unit in units(text) if unit.kind not in ("title", "fragment"))


def is_boilerplate(sentence: str, params: AnswerParams = ANSWER_PARAMS) -> bool:
    """Navigation and footer text: a run of capitalised labels without a sentence's small
    words, or a copyright or licence notice ("This document has been placed in the public
    domain.", which ends every PEP)."""
    tokens = sentence.split()
    if "©" in sentence or "(c) 20" in sentence.lower() or _LICENCE_NOTICE.search(sentence):
        return True
    capitalised = sum(1 for t in tokens if t[:1].isupper())
    return len(tokens) >= params.boilerplate_words and capitalised / len(tokens) > params.boilerplate_capitals


# --- the chunk's blocks ---------------------------------------------------------------------------


def _cut(lines: list[str], code: bool, params: AnswerParams) -> list[str]:
    most = params.max_block_lines
    if len(lines) <= most:
        return lines
    if code:  # keep the closing fence so the block stays a block
        return [*lines[: most - 2], lines[0][: len(lines[0]) - len(lines[0].lstrip())] + "# …", lines[-1]]
    return [*lines[:most], "…"]


def _pieces(text: str, params: AnswerParams) -> list[tuple[str, str]]:
    """The chunk as (kind, text) pieces in order: prose paragraphs and code/list/table blocks."""
    pieces: list[tuple[str, str]] = []
    lines = text.splitlines()
    prose: list[str] = []

    def flush() -> None:
        if prose:
            pieces.append(("prose", " ".join(prose)))
            prose.clear()

    i = 0
    while i < len(lines):
        line = lines[i]
        fence = FENCE.match(line)
        if fence:
            flush()
            j = i + 1
            while j < len(lines) and not lines[j].strip().startswith(fence.group(1)):
                j += 1
            block = lines[i : j + 1] if j < len(lines) else [*lines[i:], fence.group(1)]
            pieces.append(("code", "\n".join(_cut(block, True, params))))
            i = j + 1
            continue
        if _looks_like_code(line):
            flush()
            j = i + 1
            while j < len(lines) and (_looks_like_code(lines[j]) or lines[j].startswith(("    ", "\t"))
                                      or (not lines[j].strip() and j + 1 < len(lines) and _looks_like_code(lines[j + 1]))):
                j += 1
            code_lines = [line.rstrip() for line in lines[i:j]]
            pieces.append(("code", "\n".join(_cut(["```", *code_lines, "```"], True, params))))
            i = j
            continue
        if LIST_ITEM.match(line):
            flush()
            j = i + 1
            while j < len(lines) and lines[j].strip() and (LIST_ITEM.match(lines[j]) or lines[j].startswith("  ")):
                j += 1
            pieces.append(("list", "\n".join(_cut(lines[i:j], False, params))))
            i = j
            continue
        if TABLE_ROW.search(line) and i + 1 < len(lines) and TABLE_ROW.search(lines[i + 1]) \
                and line.count("|") == lines[i + 1].count("|"):
            flush()
            j = i + 1
            while j < len(lines) and TABLE_ROW.search(lines[j]):
                j += 1
            pieces.append(("table", "\n".join(_cut(lines[i:j], False, params))))
            i = j
            continue
        if not line.strip() or HEADING.match(line):
            flush()
        elif _is_title(line.strip(), lines[i + 1].strip() if i + 1 < len(lines) else "", params):
            flush()
            pieces.append(("title", line.strip()))
        else:
            prose.append(line.strip())
        i += 1
    flush()
    return pieces


def _looks_like_code(line: str) -> bool:
    """A line of code in text that lost its fences (today's plain-text chunks): an assignment,
    a call, an import or a definition, not a sentence."""
    stripped = line.strip()
    return bool(stripped) and not re.search(r"[.!?]$", stripped) and bool(CODE_LINE.match(line)) \
        and not LIST_ITEM.match(line)


def _is_title(line: str, following: str, params: AnswerParams) -> bool:
    """A short line without end punctuation before a capitalised line (or none): a heading or a
    navigation label, not part of a sentence."""
    return (not END_PUNCTUATION.search(line) and len(line.split()) <= params.title_words
            and (not following or not following[0].islower()))
