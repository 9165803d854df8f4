"""Sphinx cross-reference labels across the library: an untitled `:ref:`label`` shows the title of
the section the label marks, wherever in the library that section is (as Sphinx shows it).

Labels are read from the source text of every file an ingest finds (RST `.. _label:` and MyST
`(label)=` just before a section title), so the order documents are parsed in does not matter. The
parsers leave an untitled reference as LABEL_OPEN label LABEL_CLOSE; `resolve` replaces it with the
title (or, for a label nobody defines, the label without an intersphinx prefix) and moves the
section offsets with the text. A document's digest covers the titles its references resolve to,
so renaming a section re-parses the pages that point at it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import replace

from .formats.sphinx import LABEL_CLOSE, LABEL_OPEN, role_text, without_inventory
from .parsed import ParsedDocument, Section

_RST_LABEL = re.compile(r"^\.\.[ \t]+_([^:`\n][^:\n]*|`[^`\n]+`):[ \t]*$")
_MYST_LABEL = re.compile(r"^\(([^()\s][^()\n]*)\)=[ \t]*$")
_ATX = re.compile(r"^[ \t]{0,3}#{1,6}[ \t]+(.+?)[ \t#]*$")
_ADORNMENT = re.compile(r"^([!-/:-@\[-`{-~])\1{2,}[ \t]*$")
_ROLE = re.compile(r"(?::[\w:+.-]+:|\{[\w:+.-]+\})`([^`]*)`")
_INLINE_MARKUP = re.compile(r"`+|\*\*|(?<!\w)\*|\*(?!\w)")
_REFERENCE = re.compile(r"(?::ref:|\{ref\})`([^`<>]+)`")
_UNTITLED_LINK = re.compile(r"\[\]\([^()\s#]*#([^()\s]+)\)")  # MyST `[](page.md#anchor)`
_MARKED = re.compile(f"{LABEL_OPEN}([^{LABEL_OPEN}{LABEL_CLOSE}]*){LABEL_CLOSE}")
# RST substitutions: `|name|` in a page, `.. |name| replace:: text` where it is defined
_NAME = r"\|([^|\s](?:[^|\n]*[^|\s])?)\|"
SUBSTITUTION = re.compile(_NAME)
_SUBSTITUTION_REFERENCE = re.compile(rf"(?<![\w|\\]){_NAME}(?=_{{0,2}}(?![\w|]))")
_DEFINITION = re.compile(rf"^\.\.[ \t]+{_NAME}[ \t]+([\w:-]+)::[ \t]*(.*)$")
_COMMENT = re.compile(r"^\.\.(?:[ \t]+(?!.*::).*)?$")
_ANY_ROLE = re.compile(r"(?::([\w:+.-]+):|\{([\w:+.-]+)\})`([^`]*)`")
# Sphinx's own substitutions, values its build fills in from conf.py: shown as written
_BUILD_VALUES = frozenset({"version", "release", "today"})


def label_key(label: str) -> str:
    """Sphinx compares labels lowercased, whitespace collapsed."""
    return " ".join(label.strip().strip("`").lower().split())


def collect_labels(text: str) -> dict[str, str]:
    """{label: section title} of the labels `text` defines before a section title (RST underlined
    or overlined titles, Markdown `#` headings); labels before anything else are left out."""
    lines = text.replace("\r\n", "\n").split("\n")
    found: dict[str, str] = {}
    waiting: list[str] = []  # labels stacked before the next title
    for i, line in enumerate(lines):
        label = _RST_LABEL.match(line) or _MYST_LABEL.match(line)
        if label:
            waiting.append(label_key(label.group(1)))
            continue
        if not line.strip() or not waiting:
            continue
        if (title := _title_at(lines, i)) is not None:
            found.update(dict.fromkeys(waiting, title))
        waiting = []
    return {key: title for key, title in found.items() if key and title}


_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_SLUG_DROPPED = re.compile(r"[^\w\- ]")


def heading_anchors(text: str) -> dict[str, str]:
    """{anchor: title} of a Markdown page's `#` headings, outside code fences, by the slug MyST
    and GitHub give them ("Default Union Strategy" -> "default-union-strategy", "typing.Any" ->
    "typingany"), so an untitled link `[](page.md#anchor)` shows the heading it points at."""
    found: dict[str, str] = {}
    fence = ""
    for line in text.replace("\r\n", "\n").split("\n"):
        if opened := _FENCE.match(line):
            marker = opened.group(1)
            if not fence:
                fence = marker
            elif marker[0] == fence[0] and len(marker) >= len(fence):
                fence = ""
            continue
        if fence or not (match := _ATX.match(line)):
            continue
        title = _plain(match.group(1))
        slug = _SLUG_DROPPED.sub("", title.lower()).strip().replace(" ", "-")
        if slug and title:
            found.setdefault(label_key(slug), title)
    return found


def _title_at(lines: list[str], i: int) -> str | None:
    """The section title starting at line i (an overline, a title and its underline; a title and
    its underline; an ATX heading), as plain text; else None."""
    line = lines[i]
    if match := _ATX.match(line):
        return _plain(match.group(1))
    below = lines[i + 1] if i + 1 < len(lines) else ""
    if _ADORNMENT.match(line) and i + 2 < len(lines) and _ADORNMENT.match(lines[i + 2]):
        return _plain(below)
    if _ADORNMENT.match(below) and not _ADORNMENT.match(line):
        return _plain(line)
    return None


def _plain(title: str) -> str:
    text = _ROLE.sub(lambda m: re.sub(r"^(.*?)\s*<[^<>]*>$", r"\1", m.group(1)).lstrip("~!"), title)
    text = re.sub(r"`([^`<>]*?)\s*<[^<>]*>`_{1,2}", r"\1", text)  # `Text <url>`_
    return " ".join(_INLINE_MARKUP.sub("", text).replace("\\", "").split())


def references(text: str) -> list[str]:
    """The labels `text` refers to without a title, each once, and its substitutions (`|name|`,
    which a prolog may define)."""
    found = [*_REFERENCE.finditer(text), *_UNTITLED_LINK.finditer(text)]
    keys = [label_key(m.group(1)) for m in found]
    keys += [label_key(m.group(0)) for m in _SUBSTITUTION_REFERENCE.finditer(text)]
    return list(dict.fromkeys(keys))


def prolog_substitutions(text: str) -> dict[str, str]:
    """{`|name|`: what a page shows for it} of an RST file that holds nothing but substitution
    definitions (and comments): Sphinx's `rst_prolog` file, which conf.py reads into every page
    (hypothesis' prolog.rst: `.. |@given| replace:: :func:`@given <hypothesis.given>``, used as
    `|@given|` on every page). A page that defines a name itself keeps its own (docutils reads
    it). {} for any other file: a page's definitions are its own."""
    found: dict[str, str] = {}
    for line in text.split("\n"):
        if not line.strip() or line[:1].isspace():
            continue
        if definition := _DEFINITION.match(line):
            name, kind, body = definition.groups()
            if kind == "replace":
                found.setdefault(label_key(f"|{name}|"), _shown(body))
        elif not _COMMENT.match(line):
            return {}
    return {key: shown for key, shown in found.items() if shown}


def _shown(body: str) -> str:
    """A replacement's text as a page shows it: each role as Sphinx shows it (role_text)."""

    def role(match: re.Match[str]) -> str:
        shown, _ = role_text(match.group(1) or match.group(2), match.group(3))
        return shown.replace(LABEL_OPEN, "").replace(LABEL_CLOSE, "")

    return " ".join(_INLINE_MARKUP.sub("", _ANY_ROLE.sub(role, body)).split())


def title_of(label: str, labels: Mapping[str, str]) -> str:
    """The title `label` resolves to; an unknown one shows itself, without an inventory prefix;
    an unknown substitution its name (`|@given|` -> "@given"), but a value Sphinx's build
    fills in (`|release|`), which stays as written."""
    key = label_key(label)
    found = labels.get(key) or labels.get(without_inventory(key))
    if found:
        return found
    if (substitution := SUBSTITUTION.fullmatch(label)) is not None:
        name = substitution.group(1)
        return label if name.lower() in _BUILD_VALUES else name
    return without_inventory(label)


def resolve(document: ParsedDocument, labels: Mapping[str, str]) -> ParsedDocument:
    """`document` with every marked reference replaced by its title, offsets moved along."""
    if LABEL_OPEN not in document.text and LABEL_OPEN not in document.title:
        return document
    parts: list[str] = []
    shifts: list[tuple[int, int]] = []  # (end of a marked reference in the old text, total shift)
    position = shift = 0
    for match in _MARKED.finditer(document.text):
        shown = title_of(match.group(1), labels)
        parts += [document.text[position : match.start()], shown]
        shift += len(shown) - (match.end() - match.start())
        shifts.append((match.end(), shift))
        position = match.end()
    parts.append(document.text[position:])

    def moved(offset: int) -> int:
        return offset + next((s for end, s in reversed(shifts) if end <= offset), 0)

    def text(value: str) -> str:
        return _MARKED.sub(lambda m: title_of(m.group(1), labels), value)

    sections = tuple(
        Section(tuple(text(h) for h in s.heading_path), moved(s.start), moved(s.end))
        for s in document.sections
    )
    pages = tuple((moved(offset), number) for offset, number in document.pages)
    return replace(
        document, title=text(document.title), text="".join(parts), sections=sections, pages=pages
    )
