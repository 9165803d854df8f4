"""reStructuredText, read by hand (docutils leaves Sphinx roles and directives as raw text or
error messages; see README "Formats"): titles by adornment, directive bodies kept, code as fences."""

from __future__ import annotations

import re
import textwrap

from .common import Block, Heading, Outline, code_fence

_RST_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1+[ \t]*$")
_RST_EXPLICIT = re.compile(r"^(\s*)\.\.(?:\s+(.*))?$")
_RST_DIRECTIVE = re.compile(r"^([\w:+.-]+)::(?:\s+(.*))?$")
_RST_OPTION = re.compile(r"^\s*:[\w -]+:(?:\s|$)")
_RST_ADMONITIONS = frozenset(
    "admonition attention caution danger error hint important note tip warning seealso "
    "topic sidebar rubric versionadded versionchanged deprecated".split()
)
_RST_CODE_DIRECTIVES = frozenset("code code-block sourcecode".split())
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


def parse_rst(text: str) -> Outline:
    """Titles are underlined (maybe overlined); each new (char, overline) style nests deeper."""
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []
    blocks: list[Block] = []
    segment_start = i = 0
    while i < len(lines):
        found = _rst_title_at(lines, i)
        if found is None:
            i += 1
            continue
        style, title, next_i = found
        styles += [] if style in styles else [style]
        blocks.append("\n".join(_rst_body(lines[segment_start:i])))
        blocks.append(Heading(styles.index(style) + 1, title))
        segment_start = i = next_i
    blocks.append("\n".join(_rst_body(lines[segment_start:])))
    first = next((b.text for b in blocks if isinstance(b, Heading)), "")
    return Outline(blocks, first)


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
        elif lines[i].rstrip().endswith("::") and not _rst_adornment(lines[i]):
            end = _rst_block_end(lines, i + 1, _indent(lines[i]))
            kept.append(_rst_line(lines[i]))
            code = textwrap.dedent("\n".join(lines[i + 1 : end])).strip("\n")
            kept += ["", code_fence(code), ""] if code else []
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
        if name in _RST_CODE_DIRECTIVES:
            return ["", code_fence("\n".join(body).strip("\n"), argument.strip()), ""]
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
