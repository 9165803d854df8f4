"""reStructuredText through docutils, walked into an outline the way a reader sees the page.

Paragraphs are single lines (hard wraps gone); a PEP-style header (`PEP: 723`, `Title: ...`) gives
the title and one line of metadata; roles become their visible text (`:pep:` -> "PEP 634",
`:func:` -> "len()", a reference -> its text); literal blocks and code directives become fences
with their language; admonitions keep their title; comments, targets and substitution definitions
go. Sphinx and unknown directives or roles degrade to their content, never to an error message.

docutils is configured never to touch the file system (no config files, include or raw) and never
to report to the terminal; a document it still cannot parse is read as plain text.
"""

from __future__ import annotations

import functools
import io
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING, Any, cast

from ...lazy import lazy_module
from .common import (
    Block,
    Heading,
    Included,
    Includes,
    Links,
    Outline,
    between_markers,
    code_fence,
    definition,
    included_part,
    looks_like_code,
    not_in_library,
    signature_fence,
)
from .sphinx import (
    DIAGRAM_CAPTIONS,
    DIAGRAM_DIRECTIVES,
    DROPPED_DIRECTIVES,
    LABEL_CLOSE,
    LABEL_OPEN,
    api_signature,
    code_language,
    directive_title,
    holds_markup,
    is_api_directive,
    release_title,
    role_text,
    shows_code,
)
from .text import parse_text

if TYPE_CHECKING:
    from docutils import nodes
else:  # on first use: a library of Markdown pages never loads docutils
    nodes = lazy_module("docutils.nodes")

_HEADER_FIELD = re.compile(r"^([A-Za-z][\w-]*):(?:[ \t]+(.*))?$")
_HEADER_SHOWN = ("Author", "Status", "Type", "Created", "Python-Version")
# Sphinx's file-wide metadata (a field list at the top: `:orphan:`, `:tocdepth: 2`): not text
_FILE_METADATA = frozenset("orphan nocomments nosearch tocdepth".split())
_SETTINGS: dict[str, Any] = {
    "_disable_config": True,  # never read docutils.conf files
    "file_insertion_enabled": False,
    "raw_enabled": False,
    "report_level": 5,
    "halt_level": 5,
    "doctitle_xform": False,
    "sectsubtitle_xform": False,
    "syntax_highlight": "none",
    "pep_references": False,
    "rfc_references": False,
    "character_level_inline_markup": False,
    "embed_stylesheet": False,
}


MarkdownReader = Callable[[str], list[Block]]  # a Markdown text's outline blocks


def parse_rst(
    text: str, includes: Includes | None = None, markdown: MarkdownReader | None = None
) -> Outline:
    """The outline of an RST document; the plain-text reading if docutils cannot parse it.
    `markdown` reads a Markdown file the page includes (`.. include:: ../README.md` with MyST's
    `:parser:`), which is then part of the page as the Markdown reader reads it."""
    header, body = _pep_header(text)
    try:
        tree = _doctree(body, includes, markdown)
    except (
        Exception
    ):  # docutils on hostile input (deep nesting, odd markup): the text is still there
        return parse_text(text)
    blocks = _header_blocks(header) + list(_Walker().blocks(tree))
    return Outline(blocks, _header_title(header) or _lone_top_title(blocks))


def _lone_top_title(blocks: list[Block]) -> str:
    """The page title: its top-level heading when it is the only one (docutils' own rule); a
    page of several top-level sections (a changelog's versions) is titled by its file name."""
    tops = [b.text for b in blocks if isinstance(b, Heading) and b.level == 1]
    return tops[0] if len(tops) == 1 else ""


# --- the PEP header -------------------------------------------------------------------------


def _pep_header(text: str) -> tuple[dict[str, str], str]:
    """An RFC 2822 style header (`PEP: 8`, `Title: ...`, indented continuations) before the first
    blank line, when it names the PEP or has a Title; else ({}, text)."""
    head, sep, rest = text.partition("\n\n")
    fields: dict[str, str] = {}
    for line in head.split("\n"):
        if (match := _HEADER_FIELD.match(line)) is not None:
            fields[match.group(1).title()] = (match.group(2) or "").strip()
        elif line[:1].isspace() and fields:
            last = list(fields)[-1]
            fields[last] = f"{fields[last]} {line.strip()}"
        else:
            return {}, text
    if not ("Pep" in fields or "Title" in fields) or len(fields) < 2:
        return {}, text
    return fields, rest if sep else ""


def _header_title(header: dict[str, str]) -> str:
    title = header.get("Title", "")
    number = header.get("Pep", "")
    return f"PEP {number} \u2013 {title}" if number and title else title


def _header_blocks(header: dict[str, str]) -> list[Block]:
    """One sentence an answer can quote, title first (a title alone would read as an answer to
    every question about its subject): "PEP 8 – Style Guide for Python Code, by Guido van Rossum,
    Barry Warsaw (Active, Process, created 05-Jul-2001)." E-mail addresses are left out."""
    if not header:
        return []
    field = {name: _EMAIL.sub("", header.get(name, "")).strip(" ,") for name in _HEADER_SHOWN}
    details = [
        field["Status"],
        field["Type"],
        f"created {field['Created']}" if field["Created"] else "",
        f"Python {field['Python-Version']}" if field["Python-Version"] else "",
    ]
    shown = ", ".join(d for d in details if d)
    by = f", by {field['Author']}" if field["Author"] else ""
    return [f"{_header_title(header)}{by}" + (f" ({shown})" if shown else "") + "."]


_EMAIL = re.compile(r"\s*<[^<>@\s]+@[^<>\s]+>|\s*\([^()@\s]+@[^()\s]+\)")


# --- docutils, configured -------------------------------------------------------------------


def _doctree(text: str, includes: Includes | None, markdown: MarkdownReader | None = None) -> Any:
    # here: docutils loads only for RST pages
    from docutils.core import publish_doctree

    _register()
    # the includes ride in the settings: directives are classes, and see only their document
    settings = dict(
        _SETTINGS,
        warning_stream=io.StringIO(),
        ragchat_includes=includes,
        ragchat_markdown=markdown,
    )
    return publish_doctree(text, settings_overrides=settings)


@functools.cache
def _register() -> None:
    """Once per process: Sphinx's common roles and directives, and a fallback for unknown ones
    (docutils' own lookup returns None for them, which would turn their text into an error)."""
    # here: docutils loads only for RST pages
    from docutils.parsers.rst import directives, roles

    for name in ("pep", "rfc"):
        roles.register_local_role(name, _role_for(name))
    original_role, original_directive = roles.role, directives.directive

    def role(name: str, *args: Any) -> tuple[Any, list[Any]]:
        found, messages = original_role(name, *args)
        return (found, messages) if found is not None else (_role_for(name), [])

    def directive(name: str, *args: Any) -> tuple[Any, list[Any]]:
        if shows_code(name):
            return _code_directive(), []
        if name.lower() == "literalinclude":
            return _literal_include_directive(), []
        if name.lower() == "include":
            return _include_directive(), []
        if name.lower() in DROPPED_DIRECTIVES:
            return _dropped_directive(), []
        if name.lower() in DIAGRAM_DIRECTIVES:
            return _diagram_directive(), []
        if is_api_directive(name):  # before docutils' own `class`: in Sphinx it is `py:class`
            return _api_directive(), []
        found, messages = original_directive(name, *args)
        return (found, messages) if found is not None else (_content_directive(), [])

    setattr(roles, "role", role)  # noqa: B010 - the lookup states.py calls; a wrapper, typed loosely
    setattr(directives, "directive", directive)  # noqa: B010


class _AnyOptions(dict):
    """An option spec accepting every option (`:linenos:`, `:caption:`), so none is an error."""

    def __missing__(self, key: str) -> Callable[[str | None], str]:
        return lambda value: value or ""

    def __bool__(self) -> bool:  # docutils reads options only when the spec is truthy
        return True


def _role_for(name: str) -> Callable[..., tuple[list[Any], list[Any]]]:
    """A docutils role showing what `sphinx.role_text` says a reader sees: code as a literal."""

    def role(
        _name: str, rawtext: str, text: str, *args: Any, **kwargs: Any
    ) -> tuple[list[Any], list[Any]]:
        shown, code = role_text(name, text)
        node = (nodes.literal if code else nodes.inline)(rawtext, shown)
        if name.rsplit(":", 1)[-1].lower() in _LINK_ROLES:
            node["classes"].append(_LINK)
        return [node], []

    return role


@functools.cache
def _directive_base() -> Any:
    """A directive that accepts what any document gives it: content, one free-form argument, any
    options (so an unknown option never turns into an error message in the text)."""
    # here: docutils loads only for RST pages
    from docutils.parsers.rst import Directive

    class Permissive(Directive):
        has_content = True
        optional_arguments = 1
        final_argument_whitespace = True
        option_spec = _AnyOptions()

    return Permissive


@functools.cache
def _content_directive() -> type:
    """An unknown or Sphinx directive: its argument (a signature, an admonition's title) as a
    paragraph, then its content parsed as RST."""

    class ContentDirective(_directive_base()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            if title := release_title(self.options):
                return [self._release(title)]
            node = nodes.container()
            argument = self.arguments[0] if self.arguments else ""
            code = "\n".join(self.content) or argument  # code may start on the directive's line
            if not holds_markup(self.name) and looks_like_code(code):
                shown = "" if code is argument else directive_title(self.name, argument)
                node += [nodes.paragraph("", shown)] if shown else []
                node += nodes.literal_block(code, code)  # `.. click:example::` and its kind
                return [node]
            if shown := directive_title(self.name, argument):
                inline, _messages = self.state.inline_text(shown, self.lineno)
                node += nodes.paragraph("", "", *inline)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

        def _release(self, title: str) -> Any:
            """A release its options name (`.. changelog::` with `:version: 1.19.1`): a section
            titled by its version, its changes under it, as a changelog's version headings are."""
            section = nodes.section()
            section += nodes.title(title, title)
            if self.content:
                self.state.nested_parse(self.content, self.content_offset, section)
            return section

    return ContentDirective


@functools.cache
def _api_directive() -> type:
    """An object description (`.. py:function:: get(url)`, `.. autoclass:: pkg.Client`): its
    signature as code, then its body; an autodoc directive without a body shows nothing."""

    class ApiDirective(_directive_base()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            node, body = nodes.container(), nodes.container()
            argument = self.arguments[0] if self.arguments else ""
            if self.content:  # a body of bodiless `autoattribute`s says nothing either
                self.state.nested_parse(self.content, self.content_offset, body)
            if signature := api_signature(
                self.name, argument, bool(body.astext().strip()), self.options
            ):
                code, language = signature
                block = nodes.literal_block(code, code, classes=["code", language])
                block["signature"] = True  # written as `signature_fence`
                node += block
            node += body.children
            return [node]

    return ApiDirective


@functools.cache
def _dropped_directive() -> type:
    class DroppedDirective(_directive_base()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            return []

    return DroppedDirective


@functools.cache
def _diagram_directive() -> type:
    """A diagram (`.. mermaid::`, `.. graphviz::`): the page shows a picture, so a reader gets its
    caption (or its alternative text), never its source."""

    class DiagramDirective(_directive_base()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            shown = next((self.options[k] for k in DIAGRAM_CAPTIONS if self.options.get(k)), "")
            return [nodes.paragraph(shown, shown)] if shown else []

    return DiagramDirective


@functools.cache
def _code_directive() -> type:
    class CodeDirective(_directive_base()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            argument = self.arguments[0] if self.arguments else ""
            language = code_language(self.name, argument, self.options)
            if language is None:  # `.. doctest::` with `:hide:`
                return []
            code = "\n".join(self.content)
            return [
                nodes.literal_block(code, code, classes=["code"] + ([language] if language else []))
            ]

    return CodeDirective


@functools.cache
def _file_directive() -> type:
    """A directive naming one file (`include`, `literalinclude`): resolved through the
    document's includes, which read inside the library only."""

    class FileDirective(_directive_base()):  # type: ignore[misc]
        has_content = False
        required_arguments = 1
        optional_arguments = 0

        def included(self, lines: str = "") -> tuple[str, Included | None]:
            name = self.arguments[0].strip()
            resolve = getattr(self.state.document.settings, "ragchat_includes", None)
            return name, resolve(name, lines) if resolve else None

    return FileDirective


@functools.cache
def _literal_include_directive() -> type:
    """`.. literalinclude:: path`: the file through the document's includes (inside the library
    only), else one line naming it."""

    class LiteralInclude(_file_directive()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            name, found = self.included(str(self.options.get("lines") or ""))
            if found is None or found.text is None:
                why = found.why if found else "not in the library"
                return [nodes.paragraph("", not_in_library(name, why))]
            language = str(self.options.get("language") or "") or found.language
            code = included_part(found.text, self.options)
            return [nodes.literal_block(code, code, classes=["code", language] if language else [])]

    return LiteralInclude


_MAX_INCLUDES = 32  # per document: a chain of includes is read this far, a cycle never


@functools.cache
def _include_directive() -> type:
    """`.. include:: path`: an RST file's text read in place (as docutils does, its titles are
    the page's sections), `:literal:`/`:code:` or a Markdown file as a block; a file outside the
    library becomes one line naming it; a file already read for this page is not read again."""

    class Include(_file_directive()):  # type: ignore[misc]
        def run(self) -> list[Any]:
            seen: list[str] = self.state.document.settings.__dict__.setdefault(
                "ragchat_included", []
            )
            name, found = self.included()
            if name in seen or len(seen) >= _MAX_INCLUDES:  # read once per page, cycles never
                return []
            if found is None or found.text is None:
                why = found.why if found else "not in the library"
                return [nodes.paragraph("", not_in_library(name, why))]
            seen.append(name)
            text = between_markers(found.text, self.options)
            literal = "literal" in self.options or "code" in self.options
            read = getattr(self.state.document.settings, "ragchat_markdown", None)
            if found.markdown and not literal and read is not None and "parser" in self.options:
                return [_markdown_node()("", blocks=read(text))]  # MyST's `:parser:`
            if literal or found.markdown:
                language = str(self.options.get("code") or "") or found.language
                classes = ["code", language] if language else []
                return [nodes.literal_block(text, text, classes=classes)]
            self.state_machine.insert_input(text.split("\n"), name)
            return []

    return Include


@functools.cache
def _markdown_node() -> type:
    """A doctree node holding the outline blocks of an included Markdown file."""

    class MarkdownBlocks(nodes.General, nodes.Element):
        pass

    return MarkdownBlocks


# --- doctree -> blocks ----------------------------------------------------------------------

_SKIPPED = (
    "comment",
    "target",
    "substitution_definition",
    "system_message",
    "raw",
    "pending",
    "footnote_reference",
    "citation_reference",
    "label",
    "transition",
)


class _Walker:
    """Block nodes become outline blocks; inline content becomes one line of visible text."""

    def __init__(self) -> None:
        self.depth = 0

    def blocks(self, node: Any) -> Iterator[Block]:
        for child in node.children:
            kind = child.tagname
            if kind in _SKIPPED or (kind == "topic" and "contents" in child.get("classes", [])):
                continue
            if isinstance(child, nodes.section):
                yield from self._section(child)
            elif isinstance(child, _markdown_node()):
                yield from self._embedded(cast(Any, child)["blocks"])
            elif isinstance(child, nodes.Text):
                if text := " ".join(child.astext().split()):
                    yield text
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                fence = signature_fence if child.get("signature") else code_fence
                yield fence(child.astext(), _language(child))
            elif isinstance(
                child, (nodes.paragraph, nodes.title, nodes.rubric, nodes.line, nodes.caption)
            ):
                if _images_only(child):  # a row of badges: the page shows pictures, no words
                    continue
                if text := inline_text(child):
                    yield text
            elif isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                lines = "\n".join(self._list(child, 0))
                yield Links(lines) if _links_only(child) else lines
            elif isinstance(child, (nodes.field_list, nodes.docinfo)):
                if fields := "\n".join(_fields(child)):
                    yield fields
            elif isinstance(child, nodes.definition_list):
                yield from self._definitions(child)
            elif isinstance(child, nodes.table):
                yield "\n".join(_table_rows(child))
            elif isinstance(child, nodes.Admonition):
                yield from self._admonition(child)
            elif isinstance(child, nodes.line_block):
                yield "\n".join(inline_text(line) for line in child.findall(nodes.line))
            elif isinstance(child, nodes.image):
                continue
            else:  # block quotes, containers, footnotes, topics, figures, unknown: their content
                yield from self.blocks(child)

    def _section(self, section: Any) -> Iterator[Block]:
        self.depth += 1
        title = next((c for c in section.children if isinstance(c, nodes.title)), None)
        if title is not None:
            yield Heading(self.depth, inline_text(title))
        yield from self.blocks(_without(section, nodes.title))
        self.depth -= 1

    def _embedded(self, blocks: list[Block]) -> Iterator[Block]:
        """An included Markdown file's blocks, its headings under the section that includes it
        (its highest heading one level below)."""
        levels = [b.level for b in blocks if isinstance(b, Heading)]
        shift = self.depth + 1 - min(levels, default=1)
        for block in blocks:
            yield replace(block, level=block.level + shift) if isinstance(block, Heading) else block

    def _admonition(self, node: Any) -> Iterator[Block]:
        title = next((c for c in node.children if isinstance(c, nodes.title)), None)
        yield (
            inline_text(title) if title is not None else node.tagname.replace("_", " ").capitalize()
        )
        yield from self.blocks(_without(node, nodes.title))

    def _definitions(self, node: Any) -> Iterator[Block]:
        for item in node.findall(nodes.definition_list_item):
            # "``host``:" as a term is written with its own colon: "host: Network host ...",
            # not "host:: Network host ..."
            term = " ".join(inline_text(t) for t in item.children if isinstance(t, nodes.term))
            body = [
                b for d in item.children if isinstance(d, nodes.definition) for b in self.blocks(d)
            ]
            yield from definition(term, body)

    def _list(self, node: Any, depth: int) -> list[str]:
        lines: list[str] = []
        enumerated = isinstance(node, nodes.enumerated_list)
        for number, item in enumerate(c for c in node.children if isinstance(c, nodes.list_item)):
            marker = _enumerator(node, number + int(node.get("start", 1))) if enumerated else "-"
            first = True
            for child in item.children:
                if isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                    lines += self._list(child, depth + 1)
                    continue
                for block in self.blocks(_wrap(child)):
                    text = block.text if isinstance(block, Heading) else str(block)
                    if text.startswith(("```", "````")):
                        lines.append(text)  # code inside an item: its own lines, unindented
                    elif first:
                        lines.append("  " * depth + f"{marker} {text}")
                    else:
                        lines.append("  " * (depth + 1) + text)
                    first = False
        return lines


def _enumerator(node: Any, ordinal: int) -> str:
    """An enumerated list's marker as the author wrote its kind: "6.", "F.", "(f)", "vi)"."""
    kind = node.get("enumtype", "arabic")
    if kind in ("loweralpha", "upperalpha") and 1 <= ordinal <= 26:
        shown = chr(ord("a") + ordinal - 1)
    elif kind in ("lowerroman", "upperroman") and 1 <= ordinal < 4000:
        shown = _roman(ordinal)
    else:
        shown = str(ordinal)
    shown = shown.upper() if kind.startswith("upper") else shown
    return f"{node.get('prefix', '')}{shown}{node.get('suffix', '.')}"


_ROMAN = tuple(zip((1000, 900, 500, 400, 100, 90, 50, 40, 10, 9, 5, 4, 1),
                   "m cm d cd c xc l xl x ix v iv i".split(), strict=True))  # fmt: skip


def _roman(number: int) -> str:
    shown = ""
    for value, letters in _ROMAN:
        count, number = divmod(number, value)
        shown += letters * count
    return shown


_LINK_ROLES = frozenset({"ref", "doc", "any"})  # roles pointing at another page or section
_LINK = "ragchat-link"  # the class a link role's node carries


def _links_only(node: Any) -> bool:
    """Whether a list's items are only links: each item a paragraph of references (`` `Title
    <https://...>`_ ``, `:doc:`page``, `:ref:`label``, bold or not) and nothing but spaces and
    punctuation beside them, or a list of such items."""
    for item in node.children:
        for child in item.children:
            if isinstance(child, (nodes.bullet_list, nodes.enumerated_list)):
                if not _links_only(child):
                    return False
            elif not isinstance(child, nodes.paragraph) or not _only_links(child):
                return False
    return bool(node.children)


def _only_links(node: Any) -> bool:
    links = 0
    for child in node.children:
        if isinstance(child, nodes.Text):
            if any(c.isalnum() for c in str(child)):
                return False
        elif isinstance(child, nodes.reference) or _LINK in child.get("classes", ()):
            links += 1
        elif isinstance(child, (nodes.strong, nodes.emphasis)):
            if not _only_links(child):
                return False
            links += 1
        elif not isinstance(child, nodes.target):
            return False
    return links > 0


def _wrap(node: Any) -> Any:
    holder = nodes.container()
    holder.children = [node]
    return holder


def _without(node: Any, kind: type) -> Any:
    holder = nodes.container()
    holder.children = [c for c in node.children if not isinstance(c, kind)]
    return holder


def _language(node: Any) -> str:
    classes = [c for c in node.get("classes", []) if c not in ("code", "literal-block")]
    if node.tagname == "doctest_block":
        return "pycon"
    return classes[0] if classes else ""


def inline_text(node: Any) -> str:
    """The visible text of an inline tree on one line: references keep their text, footnote
    references and targets go, whitespace (the author's hard wraps) becomes single spaces."""
    text = " ".join("".join(_inline_parts(node)).split())
    # where a footnote reference went ("guide [1]_."), so does the space before it: "guide."
    return text.replace(" " + _GONE, "").replace(_GONE, "")


def _images_only(paragraph: Any) -> bool:
    """A paragraph of inline images and nothing else (`|PyPI| |CI| |Docs|`, each a badge
    linking somewhere): the built page shows a row of pictures, and their alternative texts
    ("PyPI version Build status ...") would be read as a sentence. An image inside a sentence
    keeps its alternative text (it stands for a word there), as does a figure's."""
    images = list(paragraph.findall(nodes.image))
    return bool(images) and not any(str(text).strip() for text in paragraph.findall(nodes.Text))


_GONE = "\x00"  # a dropped inline node (never in parsed text: control characters are cleaned)


# a substitution the page does not define, `|@given|` or `|name|_`: Sphinx's `rst_prolog`
# (conf.py reads a file of `.. |@given| replace:: ...` lines into every page) defines what the
# built page shows there; ingest resolves it as it resolves a label (labels.title_of)
_UNDEFINED = re.compile(r"^\|([^|\s](?:[^|]*[^|\s])?)\|_{0,2}$")


# a link docutils could not resolve, shown by Sphinx as its text: `` `relationship()
# <relationship()_>`_ `` (an alias of a target named twice on the page), `` `Title`_ `` (a
# target defined in another file)
_ALIAS_TARGET = re.compile(r"^\s*<[^`<>]+_>$")
_UNRESOLVED_LINK = re.compile(r"^`([^`<]*?)\s*(?:<([^`<>]+?)_?>)?`_{1,2}$")


def _inline_parts(node: Any) -> Iterator[str]:
    for child in node.children:
        if isinstance(child, nodes.Text):
            yield str(child)
        elif child.tagname in _SKIPPED:
            yield _GONE
        elif isinstance(child, nodes.image):
            yield child.get("alt", "")
        elif isinstance(child, nodes.problematic):  # markup docutils could not read as such
            text = child.astext()  # a substitution the page does not define: ingest shows it
            if _UNDEFINED.match(text):
                yield f"{LABEL_OPEN}{text.rstrip('_')}{LABEL_CLOSE}"
            elif _ALIAS_TARGET.match(text):  # the alias target docutils made of it: no text
                yield ""
            else:  # a link it could not resolve shows its text, as the built page does
                link = _UNRESOLVED_LINK.match(text)
                yield (link.group(1).strip() or link.group(2)) if link else text
        elif isinstance(child, nodes.title_reference):  # `text`: Sphinx's default role, often
            yield role_text("obj", child.astext())[0]  # `py:obj` (`~pkg.Field` -> "Field")
        else:
            yield from _inline_parts(child)


def _fields(node: Any) -> Iterator[str]:
    for field in node.children:
        if isinstance(field, nodes.field):
            name, body = field.children[0], field.children[1]
            if inline_text(name).lower() in _FILE_METADATA:
                continue
            yield f"{inline_text(name)}: {' '.join(inline_text(p) for p in body.children)}".rstrip(
                ": "
            )
        elif isinstance(field, nodes.Element):  # docinfo's own fields (author, version, ...)
            yield f"{field.tagname.capitalize()}: {inline_text(field)}"


def _table_rows(node: Any) -> Iterator[str]:
    for row in node.findall(nodes.row):
        yield " | ".join(" ".join(inline_text(p) for p in entry.children) for entry in row.children)
