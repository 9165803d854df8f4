"""Markdown (CommonMark + tables, via markdown-it-py) with the common mkdocs extensions.

Before parsing, mkdocs-only syntax is rewritten line by line (outside code fences): admonitions
(`!!! note "Title"`, `??? tip`, `=== "Tab"`) and pymdownx blocks (`/// note | Title` ... `///`) keep
their title and body; snippet includes (`--8<-- "file"`, `{* docs_src/... hl[3] *}`) become the
included file (code as a fence with the language of its suffix), or one line naming it when it is
not in the library; mkdocstrings directives (`::: package.module` with their indented options)
are dropped; YAML front matter gives the title (it wins over the first heading) and is dropped;
`{ #id }` leaves headings; a code span's InlineHilite language mark (`#!bash cmd`) goes.
MyST (Sphinx's Markdown, through markdown-it's MyST plugins) reads as its RST twin does: roles show
their visible text (`{func}`len`` -> "len()", `{ref}`Text <label>`` -> "Text"), directive fences
(```` ```{note} ````, `:::{tip}`) keep their title and Markdown body, code directives are code,
`{eval-rst}` is RST, `{include}` reads the file like a snippet, a `{glossary}` is a section per
term, navigation (`{toctree}`) and targets `(label)=`, `%` comments and `+++` breaks
go. Definition lists (`Term`, then `: definition`) read "Term: definition", as RST's do; footnote
marks (`[^note]`) go and each note stays a paragraph where it is written.
Code stays a fence with its language; list items become "- item" lines, two spaces per level;
a paragraph is one line (the author's hard wraps are soft breaks: spaces).
"""

from __future__ import annotations

import functools
import re
import textwrap
from html import unescape
from typing import TYPE_CHECKING

from ..includes import split_braces_include
from .common import (
    Block,
    Heading,
    Includes,
    Links,
    Outline,
    code_fence,
    definition,
    included_part,
    looks_like_code,
    not_in_library,
    signature_fence,
)
from .html import fragment_blocks
from .rst import parse_rst
from .shortcodes import read_template_tags
from .sphinx import (
    ADMONITION_TITLES,
    DIAGRAM_CAPTIONS,
    DIAGRAM_DIRECTIVES,
    DIAGRAM_LANGUAGES,
    DROPPED_DIRECTIVES,
    INCLUDE_DIRECTIVES,
    MEDIA_DIRECTIVES,
    api_signature,
    code_language,
    directive_title,
    holds_markup,
    is_api_directive,
    role_text,
    shows_code,
    untitled_link,
)

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

_FRONT_MATTER = re.compile(r"\A---[ \t]*\n(.*?)^(?:---|\.\.\.)[ \t]*$\n?", re.S | re.M)
_YAML_KEY = re.compile(r"^\s*[\w-]+\s*:", re.M)
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
# "!!! note", "??? tip \"Title\"", "=== \"Tab\""; as Python-Markdown reads them, more class words
# after the type ("!!! note annotate", "!!! warning Polymorphic serialization": the title is then
# the type's) and quotes inside the title ("!!! note \"on the \"jsonable\" nature\"")
_ADMONITION = re.compile(
    r"^(\s*)(?:!!!|\?\?\?\+?|===\+?)[ \t]*([\w-]*)(?:[ \t]+[\w-]+)*"
    r"(?:[ \t]+\"(.*)\"|[ \t]+'(.*)')?[ \t]*$"
)
_SNIPPET_LINE = re.compile(r"^\s*(?:-{2,}8<-{2,}|;-{2,}8<-{2,})")
_SNIPPET_FILE = re.compile(r"""^(\s*)-{2,}8<-{2,}[ \t]+["']([^"']+)["']\s*$""")
_ESCAPED_SNIPPET = re.compile(r"^\s*;-{2,}8<-{2,}")
_SNIPPET_BRACES_LINE = re.compile(r"^(\s*)\{\*[ \t]*([^\s*]\S*)(.*)\*\}\s*$")  # tried on "...*}"
_LINE_RANGES = re.compile(r"\bln\[([^\]\n]*)\]")
_BLOCK_OPEN = re.compile(r"^(\s*)(/{3,})[ \t]*([\w-]+)(?:[ \t]*\|[ \t]*(.*?))?[ \t]*$")
_MKDOCSTRINGS = re.compile(r"^(\s*):::\s+\S")
# a heading that is a mkdocstrings directive ("#### ::: mkdocs.plugins.event_priority"): the site
# titles the section by the object it documents
_MKDOCSTRINGS_HEADING = re.compile(r"^:::\s+(\S+)\s*$")
# a picture a snippet pastes into the page as markup (`--8<-- "img/events.svg"` in an HTML
# card): the site shows an image, no words; in a code fence the file is shown as code
_IMAGE_SUFFIXES = (".svg", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico")
# attributes after a heading, and the closing hashes before them ("## 1.0 ## {: #v1 }")
_HEADING_ATTRS = re.compile(r"(?:\s+#+)?\s*\{\s*[#.:][^}]*\}\s*$|\s+#+\s*$")
# an icon shortcode of the mkdocs emoji extension (":material-hammer-wrench:", ":octicons-file-
# code-16:": always a family and a name joined by "-") and an attribute list after an element
# ("{ .lg .middle }", "{ #id }"): page decoration, never words of the page
_ICON = re.compile(r"(?<![\w:]):[a-z0-9]+(?:-[a-z0-9]+)+:(?![\w:])[ \t]?")
_ATTR_LIST = re.compile(
    r"[ \t]*\{:?[ \t]*(?:[.#][\w-]+|[\w-]+=(?:\"[^\"}]*\"|'[^'}]*'|[^\s}]+))"
    r"(?:[ \t]+(?:[.#][\w-]+|[\w-]+=(?:\"[^\"}]*\"|'[^'}]*'|[^\s}]+)))*[ \t]*\}"
)
_DIRECTIVE = re.compile(r"^\{([\w:.-]+)\}[ \t]*(.*)$")
# a footnote mark the footnote plugin cannot resolve: one inside a directive, whose body is parsed
# apart from the page that holds the notes ("less memory on CPython[^pypy]")
_FOOTNOTE_MARK = re.compile(r"\[\^[^\]\s]+\]")
# a reference link whose definition the page does not hold ("[MkDocs][mkdocs]", "[this][]": a
# site appends the definitions to every page, pymdownx.snippets' `auto_append`): its text
_UNRESOLVED_REFERENCE = re.compile(r"\[([^\[\]\n]+)\]\[[^\[\]\n]*\]")
_CODE_PLACEHOLDER = re.compile("\ue000(\\d+)\ue001")
# pymdownx InlineHilite's language mark at the front of a code span: `#!bash export X=1`,
# `:::python len(x)`; not a shebang (`#!/usr/bin/env python`: no language name right after it)
_INLINE_HILITE = re.compile(r"^(?:#!|:::)[A-Za-z][\w+#.-]*[ \t]+(?=\S)")
_OPTION = re.compile(r"^:([\w-]+):(?:[ \t]+(.*))?$")
_MAX_NESTING = 8  # directives inside directives read this deep; deeper ones keep their text


def parse_markdown(text: str, includes: Includes | None = None, nesting: int = 0) -> Outline:
    body, meta_title = _strip_front_matter(text)
    text = read_template_tags(body, liquid=len(body) != len(text))
    if nesting == 0:  # a preprocessor, as markdown-include is: code fences too, one level deep
        text = _markdown_include(text, includes)
    tokens = _parser().parse(_mkdocs_lines(text.split("\n"), includes))
    blocks = _Renderer(includes, nesting).render(tokens)
    h1 = next((b.text for b in blocks if isinstance(b, Heading) and b.level == 1), "")
    return Outline(blocks, meta_title or h1)  # front matter wins, as in mkdocs, Jekyll, Hugo


@functools.cache
def _parser() -> MarkdownIt:  # markdown-it is imported here: only Markdown files need it
    from markdown_it import MarkdownIt
    from mdit_py_plugins.colon_fence import colon_fence_plugin
    from mdit_py_plugins.deflist import deflist_plugin
    from mdit_py_plugins.footnote import footnote_plugin
    from mdit_py_plugins.myst_blocks import myst_block_plugin
    from mdit_py_plugins.myst_role import myst_role_plugin

    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    return (
        parser.use(colon_fence_plugin)
        .use(myst_role_plugin)
        .use(myst_block_plugin)
        .use(deflist_plugin)  # `Term` then `: definition` (MyST, mkdocs' def_list, pandoc)
        .use(footnote_plugin)  # `[^note]` marks go; a note is a paragraph where it is written,
        .disable("footnote_tail")  # near the text it annotates, not gathered at the page's end
    )


def _strip_front_matter(text: str) -> tuple[str, str]:
    match = _FRONT_MATTER.match(text)
    if not match or not _YAML_KEY.match(match.group(1)):
        return text, ""
    title = re.search(r"^title:[ \t]*(.+)$", match.group(1), re.M)
    return text[match.end() :], title.group(1).strip().strip("\"'") if title else ""


# --- mkdocs extensions ---------------------------------------------------------------------


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _indented_block_end(lines: list[str], i: int, indent: int) -> int:
    """The end of the lines after `i - 1` that are blank or indented by at least four more than
    `indent`, as Python-Markdown reads a block's body: a line indented by two after a blank line
    (a link's reference definition, `  [venv]: https://...`) is the page's again."""
    end = i
    while i < len(lines) and (not lines[i].strip() or _indent(lines[i]) >= indent + 4):
        i += 1
        if lines[i - 1].strip():
            end = i
    return end


# a line that is only a template macro's call, `{{ async_sync_snippet("engine", "create.py") }}`
# (mkdocs-macros): the site writes the macro's output there, which the library cannot make; not a
# MyST substitution (`{{ key }}`: no call), not Hugo's `{{< x >}}` (shortcodes.py)
_MACRO_CALL = re.compile(r"^([ \t]*)\{\{-?[ \t]*([A-Za-z_][\w.]*)[ \t]*\((.*)\)[ \t]*-?\}\}[ \t]*$")
_QUOTED = re.compile(r"""["']([^"'\n]+)["']""")
_FILE_NAME = re.compile(r"[\w./-]+\.[A-Za-z]\w{0,7}")


def _macro_call(match: re.Match[str]) -> str:
    """The one line a macro's call becomes: the file it names (its last quoted argument that is a
    file name), else the macro, said to be made by the site and not in the library."""
    files = [q for q in _QUOTED.findall(match.group(3)) if _FILE_NAME.fullmatch(q)]
    name = files[-1] if files else f"{match.group(2)}()"
    return match.group(1) + not_in_library(name, "made by a site macro, not in the library")


def _mkdocs_lines(lines: list[str], includes: Includes | None) -> str:
    out: list[str] = []
    fence = ""
    i = 0
    while i < len(lines):
        line = lines[i]
        if fence:
            out += _in_fence(line, includes)
            if line.strip().startswith(fence) and not line.strip().strip(fence[0]):
                fence = ""
        elif match := _FENCE.match(line):
            fence = match.group(1)
            out.append(line)
        elif match := _ADMONITION.match(line):
            indent = len(match.group(1))
            end = _indented_block_end(lines, i + 1, indent)
            title = match.group(3) or match.group(4)
            if title is None and not line.lstrip().startswith("==="):
                title = match.group(2).replace("-", " ").capitalize()
            body = [
                body_line[indent + 4 :] if body_line.strip() else ""
                for body_line in lines[i + 1 : end]
            ]
            out += _titled(" " * indent, title, _mkdocs_lines(body, includes))
            i = end
            continue
        elif match := _BLOCK_OPEN.match(line):
            i = _pymdownx_block(lines, i, match, includes, out)
            continue
        elif _MKDOCSTRINGS.match(line):
            i = _indented_block_end(lines, i + 1, _indent(line))
            continue
        elif macro := _MACRO_CALL.match(line):
            out.append(_macro_call(macro))
        elif match := _SNIPPET_FILE.match(line) or _braces_line(line):
            spec = match.group(3) if match.re is _SNIPPET_BRACES_LINE else ""
            out += _included(match.group(1), match.group(2), spec, includes)
        elif _SNIPPET_LINE.match(line):
            if line.strip().strip("-8<; ") == "" and i + 1 < len(
                lines
            ):  # block form: files listed until the next marker
                end = i + 1
                while (
                    end < len(lines) and lines[end].strip() and not _SNIPPET_LINE.match(lines[end])
                ):
                    out += _included("", lines[end].strip().strip("\"'"), "", includes)
                    end += 1
                i = end + 1 if end < len(lines) and _SNIPPET_LINE.match(lines[end]) else i + 1
                continue
        else:
            out.append(_without_braces(line))
        i += 1
    return "\n".join(out)


def _in_fence(line: str, includes: Includes | None) -> list[str]:
    """A code fence's line: a snippet (`--8<-- "file"`, pymdownx reads it in fences too) becomes
    the file's lines, an escaped one (`;--8<--`) the marker a reader sees."""
    if match := _SNIPPET_FILE.match(line):
        found = includes(match.group(2)) if includes is not None else None
        if found is None or found.text is None:
            why = found.why if found else "not in the library"
            return [match.group(1) + not_in_library(match.group(2), why)]
        return [match.group(1) + text for text in found.text.split("\n")]
    if _ESCAPED_SNIPPET.match(line):
        return [line.replace(";", "", 1)]
    return [line]


def _braces_line(line: str) -> re.Match[str] | None:
    """`{* path hl[3] *}` alone on its line (the regex runs only on such a line: linear)."""
    return _SNIPPET_BRACES_LINE.match(line) if line.rstrip().endswith("*}") else None


def _without_braces(line: str) -> str:
    """The line without `{* ... *}` markers (a scan, not a backtracking regex)."""
    start = line.find("{*")
    while start >= 0 and (end := line.find("*}", start + 2)) >= 0:
        line = line[:start] + line[end + 2 :]
        start = line.find("{*", start)
    return line


def _markdown_include(text: str, includes: Includes | None) -> str:
    """markdown-include's `{!path!}`, `{!path[ln:1-18]!}`, `{!path!lines=1 3-5!}`: replaced by
    the file's text (its lines), inside code fences too; else by one line naming it."""
    if "{!" not in text:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        start = line.find("{!")
        while start >= 0 and (end := line.find("!}", start + 2)) >= 0:
            name, lines = split_braces_include(line[start + 2 : end])
            found = includes(name, lines) if includes is not None else None
            if found is None or found.text is None:
                inserted = not_in_library(name, found.why if found else "not in the library")
            else:
                inserted = found.text
            line = line[:start] + inserted + line[end + 2 :]
            start = line.find("{!", start + len(inserted))
        out.append(line)
    return "\n".join(out)


def _undecorated(text: str) -> str:
    """`text` without icon shortcodes and attribute lists (see _ICON)."""
    if ":" not in text and "{" not in text:
        return text
    return _ATTR_LIST.sub("", _ICON.sub("", text))


def _titled(indent: str, title: str | None, body: str) -> list[str]:
    """An admonition or block as text: its title line, then its body, then a blank line."""
    title = _undecorated(title) if title else title
    head = [indent + title, ""] if title else []
    return head + [indent + line if line else "" for line in body.split("\n")] + [""]


def _pymdownx_block(
    lines: list[str], i: int, opening: re.Match[str], includes: Includes | None, out: list[str]
) -> int:
    """`/// note | Title` ... `///` (any number of slashes, three or more): read like an
    admonition. Returns the index after the closing line."""
    slashes = opening.group(2)
    end = i + 1
    while end < len(lines) and lines[end].strip() != slashes:
        end += 1
    body = lines[i + 1 : end]
    while body and body[0][:1].isspace() and ":" in body[0]:  # the block's indented options
        body.pop(0)
    title = (opening.group(4) or "").strip() or opening.group(3).replace("-", " ").capitalize()
    out += _titled(opening.group(1), title, _mkdocs_lines(body, includes))
    return end + 1


def _included(indent: str, name: str, spec: str, includes: Includes | None) -> list[str]:
    """The lines an include becomes: Markdown as Markdown, other files as a fenced block, or one
    line naming the file (not in the library, too large, or includes not read here); a picture
    (`_IMAGE_SUFFIXES`) nothing."""
    if name.lower().endswith(_IMAGE_SUFFIXES):
        return [""]
    lines = match.group(1) if (match := _LINE_RANGES.search(spec)) else ""
    found = includes(name, lines) if includes is not None else None
    if found is None or found.text is None:
        return ["", indent + not_in_library(name, found.why if found else "not in the library"), ""]
    if found.markdown:  # one level deep: its own includes are named, not read
        return [
            "",
            *(indent + line for line in _mkdocs_lines(found.text.split("\n"), None).split("\n")),
            "",
        ]
    fence = code_fence(found.text, found.language)
    return ["", *(indent + line for line in fence.split("\n")), ""]


def _directive_options(content: str) -> tuple[dict[str, str], str]:
    """A MyST directive's options (`:key: value` lines, or a `---` YAML block, first) and the
    rest of its content."""
    lines = content.split("\n")
    options: dict[str, str] = {}
    if lines and lines[0].strip() == "---" and "---" in (line.strip() for line in lines[1:]):
        end = next(i for i in range(1, len(lines)) if lines[i].strip() == "---")
        for line in lines[1:end]:
            key, _, value = line.partition(":")
            options[key.strip()] = value.strip()
        lines = lines[end + 1 :]
    while lines and (match := _OPTION.match(lines[0].strip())):
        options[match.group(1)] = (match.group(2) or "").strip()
        lines.pop(0)
    while lines and not lines[0].strip():  # the blank line after the options
        lines.pop(0)
    return options, "\n".join(lines)


def _glossary(body: str, includes: Includes | None, nesting: int, level: int) -> list[Block]:
    """A MyST glossary (Sphinx's: terms at the left margin, each definition indented under its
    terms) as one section per entry, titled by its terms (Sphinx gives each term its own anchor),
    its definition the section's Markdown: a chunk holds an entry whole, under its term."""
    blocks: list[Block] = []
    terms: list[str] = []
    lines: list[str] = []

    def entry() -> None:
        if terms:
            text = textwrap.dedent("\n".join(lines))
            blocks.append(Heading(level, ", ".join(terms)))
            blocks.extend(parse_markdown(text, includes, nesting).blocks)
        terms.clear()
        lines.clear()

    for line in body.split("\n"):
        if line.strip() and not line[:1].isspace():
            if lines:  # a term after a definition: the next entry
                entry()
            terms.append(_inline_text(line))
        elif terms:
            lines.append(line)
    entry()
    return blocks


def _myst_include(
    name: str, path: str, options: dict[str, str], includes: Includes | None, nesting: int
) -> list[Block]:
    """```` ```{include} path ````: Markdown read in place (its own includes named, not read),
    RST parsed as RST, other files and `{literalinclude}` as code; else one line naming it."""
    lines = options.get("lines", "") if name == "literalinclude" else ""
    found = includes(path, lines) if includes is not None and path else None
    if found is None or found.text is None:
        why = found.why if found else "not in the library"
        return [not_in_library(path, why)] if path else []
    text = included_part(found.text, options)
    if name == "include" and found.markdown:
        return parse_markdown(text, None, nesting + 1).blocks
    if name == "include" and path.lower().endswith((".rst", ".rest")):
        return parse_rst(text, None).blocks
    return [code_fence(text, options.get("language", "") or found.language)]


# --- tokens -> blocks --------------------------------------------------------------------


class _Renderer:
    """Walks markdown-it's block tokens; a whole list (or table) becomes one block of lines."""

    def __init__(self, includes: Includes | None = None, nesting: int = 0) -> None:
        self.includes = includes
        self.nesting = nesting  # how many directives this text is inside
        self.blocks: list[Block] = []
        self.lists: list[list[str]] = []  # the open lists' markers: "-" or the next number
        self.lines: list[str] = []  # the lines of the open list
        self.item_started = False  # the open list item has its first line
        self.links = False  # the open list's items are only links
        self.terms: list[str] = []  # the open definition's terms (`Term` before `: ...`)
        self.definition_at = 0  # where the open definition's blocks begin

    def render(self, tokens: list[Token]) -> list[Block]:
        i = 0
        while i < len(tokens):
            i = self._token(tokens, i)
        self._flush()
        return self.blocks

    def _token(self, tokens: list[Token], i: int) -> int:
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            inline = tokens[i + 1]
            if (
                token.markup in ("=", "-") and "\n" in inline.content
            ):  # a dash line under a paragraph
                self._text(_inline(inline))
            else:
                self._flush()
                title = _HEADING_ATTRS.sub("", _inline(inline))
                title = _MKDOCSTRINGS_HEADING.sub(r"\1", title)
                self.blocks.append(Heading(int(token.tag[1]), title))
            return i + 3
        if kind == "table_open":
            return self._table(tokens, i)
        if kind == "dt_open" and not self.lists:  # a definition's term: said with its definition
            self.terms.append(_inline(tokens[i + 1]))
            return i + 3
        if kind == "dd_open" and self.terms and not self.lists:
            self._flush()
            self.definition_at = len(self.blocks)
        elif kind == "dd_close" and self.terms and not self.lists:
            self._flush()
            body = self.blocks[self.definition_at :]
            self.blocks[self.definition_at :] = definition(", ".join(self.terms), body)
            self.terms = []
        if kind in ("bullet_list_open", "ordered_list_open"):
            start = int(token.attrGet("start") or 1) if kind == "ordered_list_open" else 0
            if not self.lists:
                self.links = _links_only(tokens, i)
            self.lists.append(["-" if not start else str(start)])
        elif kind in ("bullet_list_close", "ordered_list_close"):
            self.lists.pop()
            if not self.lists:
                self._flush()
        elif kind == "list_item_open":
            self.item_started = False
        elif kind == "list_item_close" and self.lists and self.lists[-1][0] != "-":
            self.lists[-1][0] = str(int(self.lists[-1][0]) + 1)
        elif kind == "inline":
            self._text(_inline(token))
        elif kind == "colon_fence" or (kind == "fence" and _DIRECTIVE.match(token.info.strip())):
            for block in self._directive(token):
                if isinstance(block, Heading) and not self.lists:
                    self._flush()
                    self.blocks.append(block)
                elif isinstance(block, Heading):  # a heading inside a list item: a line of it
                    self._text(block.text)
                elif isinstance(block, str):
                    self._block(block)
        elif kind in ("fence", "code_block"):
            language = _fence_language(token.info)
            if language.lower() not in DIAGRAM_LANGUAGES:  # a diagram is a picture
                self._block(code_fence(token.content, language))
        elif kind == "html_block" and _HTML_TABLE.search(token.content):
            for block in fragment_blocks(token.content):
                self._text(block)
        elif kind == "html_block":
            if text := _strip_html(token.content).strip():
                self._text(text)
        return i + 1

    def _directive(self, token: Token) -> list[Block]:
        """A MyST directive (```` ```{name} argument ````, `:::{name}`) or a pandoc div
        (`::: warning`) as a reader sees it; unknown ones are their argument and content."""
        match = _DIRECTIVE.match(token.info.strip())
        name, argument = (match.group(1).lower(), match.group(2)) if match else ("div", "")
        options, body = _directive_options(token.content)
        if shows_code(name):
            language = code_language(name, argument, options)
            return [] if language is None else [code_fence(body, language)]
        if name in DIAGRAM_DIRECTIVES:  # drawn as a picture: its caption, never its source
            shown = next((options[k] for k in DIAGRAM_CAPTIONS if options.get(k)), "")
            return [shown] if shown else []
        if name in DROPPED_DIRECTIVES or self.nesting >= _MAX_NESTING:
            return [] if name in DROPPED_DIRECTIVES else [body]
        if name in INCLUDE_DIRECTIVES:
            return _myst_include(name, argument.strip(), options, self.includes, self.nesting)
        if name == "eval-rst":
            return parse_rst(body, self.includes).blocks
        if name == "glossary":
            under = next((b.level for b in reversed(self.blocks) if isinstance(b, Heading)), 1)
            return _glossary(body, self.includes, self.nesting + 1, min(under + 1, 6))
        if is_api_directive(name):  # ```{py:function} get(url)``` and autodoc's
            signature = api_signature(name, argument, bool(body.strip()), options)
            entry = [signature_fence(*signature)] if signature else []
            return entry + parse_markdown(body, self.includes, self.nesting + 1).blocks
        shown = _inline_text(argument)  # "{any}`dict`" -> "dict", as in the text
        title = "" if name in MEDIA_DIRECTIVES else directive_title(name, shown)
        title = title or ADMONITION_TITLES.get(name, "")
        head: list[Block] = [title] if title else []
        if (
            match
            and name not in ADMONITION_TITLES
            and not holds_markup(name)
            and looks_like_code(body)
        ):
            return [*head, code_fence(body)]  # ```{click:example} and its kind
        return head + parse_markdown(body, self.includes, self.nesting + 1).blocks

    def _table(self, tokens: list[Token], i: int) -> int:
        rows: list[list[str]] = []
        while tokens[i].type != "table_close":
            if tokens[i].type == "tr_open":
                rows.append([])
            elif tokens[i].type == "inline" and rows:
                rows[-1].append(" ".join(_inline(tokens[i]).split()))
            i += 1
        self._block("\n".join(" | ".join(row) for row in rows))
        return i + 1

    def _text(self, text: str) -> None:
        if not self.lists:
            self._block(text)
            return
        depth = len(self.lists) - 1
        lines = text.split("\n")
        if not self.item_started:
            marker = "-" if self.lists[-1][0] == "-" else f"{self.lists[-1][0]}."
            self.lines.append("  " * depth + f"{marker} {lines[0]}")
            lines = lines[1:]
            self.item_started = True
        self.lines += ["  " * (depth + 1) + line for line in lines]

    def _block(self, text: str) -> None:
        if self.lists:  # code or a table inside a list item: its own lines, unindented
            self.lines.append(text)
            self.item_started = True
            return
        self._flush()
        self.blocks.append(text)

    def _flush(self) -> None:
        if self.lines:
            lines = "\n".join(self.lines)
            self.blocks.append(Links(lines) if self.links else lines)
            self.lines = []


_LIST_TOKENS = frozenset(
    {
        "bullet_list_open",
        "bullet_list_close",
        "ordered_list_open",
        "ordered_list_close",
        "list_item_open",
        "list_item_close",
        "paragraph_open",
        "paragraph_close",
    }
)
_EMPHASIS = frozenset({"strong_open", "strong_close", "em_open", "em_close", "softbreak"})


def _links_only(tokens: list[Token], i: int) -> bool:
    """Whether the list opening at tokens[i] holds only links: each item's text is one or more
    links (bold or not), with nothing but spaces and punctuation beside them."""
    depth = 0
    for token in tokens[i:]:
        depth += token.nesting if token.type.endswith(("_list_open", "_list_close")) else 0
        if token.type == "inline":
            if not _only_links(token):
                return False
        elif token.type not in _LIST_TOKENS:
            return False
        if depth == 0:
            return True
    return False


def _only_links(token: Token) -> bool:
    inside, links = False, 0
    for child in token.children or []:
        if child.type in ("link_open", "link_close"):
            inside = child.type == "link_open"
            links += inside
        elif not inside and child.type not in _EMPHASIS:
            if child.type != "text" or any(c.isalnum() for c in child.content):
                return False
    return links > 0


_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][^<>]*>", re.S)
_HTML_TABLE = re.compile(r"<table[\s>]", re.I)


def _fence_language(info: str) -> str:
    """A fence's language from its info string: the first word, unless that word is an attribute
    (```` ``` hl_lines="5 9" ````, ```` ```{.python} ````): a language is a bare name."""
    first = (info.split() or [""])[0].strip("{}.")
    return "" if "=" in first or '"' in first or "'" in first else first


def _inline_text(text: str) -> str:
    """A line of inline Markdown (a directive's argument, a glossary's term) as plain text."""
    return _inline(_parser().parseInline(text.strip())[0]) if text.strip() else ""


def _strip_html(html: str) -> str:
    return unescape(_TAG.sub("", html))


def _inline(token: Token) -> str:
    """An inline token as plain text: markup, links' targets and images gone, code spans kept."""
    parts: list[str] = []
    codes: list[str] = []  # the code spans, each a placeholder in parts until the end
    link: tuple[int, str] | None = None  # where the open link's text began in parts, its target
    for child in token.children or []:
        if child.type == "link_open":
            link = (len(parts), str(child.attrGet("href") or ""))
        elif child.type == "link_close" and link:
            if not "".join(parts[link[0] :]).strip():  # MyST `[](page.md#anchor)`: no text
                parts.append(untitled_link(link[1]))
            link = None
        elif child.type == "text":
            plain = _undecorated(_FOOTNOTE_MARK.sub("", child.content))
            if plain != child.content and not "".join(parts)[-1:].strip():  # at a line's start
                plain = plain.lstrip()
            parts.append(plain)
        elif child.type == "code_inline":  # `#!bash export X=1` -> "export X=1"
            parts.append(f"\ue000{len(codes)}\ue001")  # kept out of the reference rule below
            codes.append(_INLINE_HILITE.sub("", child.content, count=1))
        elif child.type == "myst_role":  # {func}`len` -> "len()"
            parts.append(role_text(child.meta.get("name", ""), child.content)[0])
        elif child.type == "softbreak":  # the author's hard wrap inside a paragraph
            parts.append(" ")
        elif child.type == "hardbreak":
            parts.append("\n")
        elif child.type == "html_inline":
            continue
    shown = _UNRESOLVED_REFERENCE.sub(r"\1", "".join(parts))  # "[`RecursionError`][]" too
    return _CODE_PLACEHOLDER.sub(lambda m: codes[int(m.group(1))], shown)
