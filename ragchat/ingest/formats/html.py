"""HTML: the main content only, headings split the body, <pre> kept as a code fence.

When the page has <main>, <article> or role="main", only text inside it is kept. Navigation is
dropped everywhere: nav/aside/script/style, page header and footer, navigation panels by class
(texinfo "nav-panel"/"header", DocBook "navheader"/"navfooter", Sphinx "related") and
texinfo-style lines such as "Next: Thread Safety, Previous: Limits, Up: Top [Contents][Index]".
"""

from __future__ import annotations

import re
from collections import Counter
from html.parser import HTMLParser

from ragchat.text import one_line

from .common import Block, Heading, Outline, PageBreak, code_fence

_ALWAYS_SKIPPED = frozenset("script style noscript nav template svg aside button form".split())
_PAGE_CHROME = frozenset(
    "header footer".split()
)  # skipped outside <main>/<article> (an article's header is its title)
_NAV_CLASSES = re.compile(
    r"\b(?:nav-?panel|navigation|navheader|navfooter|nav|navbar|breadcrumbs?|related|sidebar|"
    r"sphinxsidebar|toc|skip-link|header|footer|menu)\b",
    re.I,
)
_MAIN_MARKER = re.compile(r"<main[\s>]|<article[\s>]|\brole\s*=\s*[\"']?main\b", re.I)
_HEADINGS = frozenset(f"h{n}" for n in range(1, 7))
_PARAGRAPH_BREAKS = frozenset(
    "p div section article main header blockquote ul ol dl table figure figcaption "
    "fieldset address details summary hr body".split()
)
_LINE_BREAKS = frozenset("li tr dt dd br caption option".split())
_VOID = frozenset("br hr img input meta link area base col embed source track wbr".split())
_WHITESPACE = re.compile(r"\s+")
_LANGUAGE_CLASS = re.compile(r"\b(?:language|lang|highlight|sourceCode)-?([\w+#-]+)", re.I)
_NAV_PART = re.compile(r"^(?:Next|Previous|Prev|Up|Top)\s*:\s*\S", re.I)
_TRAILING_BRACKETS = re.compile(r"(?:\s*\[[^\]\n]*\])+\s*$")


def parse_html(text: str) -> Outline:
    reader = _HtmlReader(main_only=bool(_MAIN_MARKER.search(text)))
    reader.feed(text)
    reader.close()
    blocks = [_drop_nav_lines(b) if isinstance(b, str) else b for b in reader.finish()]
    h1 = next((b.text for b in blocks if isinstance(b, Heading) and b.level == 1), "")
    return Outline(blocks, reader.title or h1)


def fragment_blocks(html: str) -> list[str]:
    """A piece of HTML inside another format's page (a Markdown page's raw `<table>`) as that
    page's text blocks, read as a whole page is: a table's cells parted by " | ", one line per
    row (stripping the tags alone ran them together: "idnamesecret_name", "GETlist"); a
    heading inside it is a line of text."""
    reader = _HtmlReader(main_only=False)
    reader.feed(html)
    reader.close()
    read = reader.finish()
    text = "\n\n".join(
        b.text if isinstance(b, Heading) else b for b in read if not isinstance(b, PageBreak)
    )
    blocks = (block.strip() for block in re.split(r"\n\s*\n", text))
    return ["\n".join(line.strip() for line in block.split("\n")) for block in blocks if block]


def _drop_nav_lines(body: str) -> str:
    return "\n".join(line for line in body.split("\n") if not _is_nav_line(line))


def _is_nav_line(line: str) -> bool:
    """ "Next: Limits, Previous: Introduction, Up: Top [Contents][Index]" (texinfo node links)."""
    rest = _TRAILING_BRACKETS.sub("", line.strip())
    parts = [part.strip() for part in rest.split(",")]
    links = all(_NAV_PART.match(part) for part in parts) if rest else False
    return links and (len(parts) >= 2 or rest != line.strip())


class _HtmlReader(HTMLParser):
    """Headings split the body; block elements become line or paragraph breaks."""

    def __init__(self, main_only: bool) -> None:
        super().__init__(convert_charrefs=True)
        self.blocks: list[Block] = []
        self.body: list[str] = []
        self.heading: list[str] | None = None
        self.level = 0
        self.title = ""
        self.title_parts: list[str] | None = None
        self.open: list[tuple[str, bool, bool]] = []  # (tag, skipped, main) per open element
        self.open_count: Counter[str] = (
            Counter()
        )  # of self.open's tags: each tag costs O(1), however deep
        self.main_only = main_only
        self.pre: list[str] | None = None
        self.pre_language = ""
        self.language = ""  # from the enclosing element's class (Sphinx: div.highlight-python)
        self.tables: list[_Table] = []  # the tables open, innermost last

    def _skipped(self) -> bool:
        return bool(self.open and self.open[-1][1])

    def _in_main(self) -> bool:
        return not self.main_only or bool(self.open and self.open[-1][2])

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = attributes.get("class") or ""
        in_main = self._in_main() or tag in ("main", "article") or attributes.get("role") == "main"
        inside_article = bool(self.open_count["main"] or self.open_count["article"])
        skipped = (
            self._skipped()
            or tag in _ALWAYS_SKIPPED
            or (tag in _PAGE_CHROME and not inside_article)
            or attributes.get("role") in ("navigation", "banner", "contentinfo", "complementary")
            or (tag in ("div", "ul", "table", "p", "span") and bool(_NAV_CLASSES.search(classes)))
            or (tag == "a" and "headerlink" in classes)  # Sphinx/mkdocs permalink "¶"
        )
        if tag not in _VOID:
            self.open.append((tag, skipped, in_main))
            self.open_count[tag] += 1
        if skipped or not in_main:
            return
        if match := _LANGUAGE_CLASS.search(classes):
            self.language = match.group(1).lower()
        if tag == "title" and not self.title:
            self.title_parts = []
        elif tag in _HEADINGS:
            self._flush()
            self.heading, self.level = [], int(tag[1])
        elif tag == "pre":
            self.pre, self.pre_language = [], self.language
        elif tag == "code" and self.pre is not None and match:
            self.pre_language = match.group(1).lower()
        elif tag == "table" and self.pre is None:
            self.tables.append(_Table())
        elif tag in ("tr", "td", "th") and self.tables and self.pre is None:
            self.tables[-1].start(tag, attributes)
        elif self.pre is None:
            self._break(tag, starting=True)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.tables and self.pre is None and tag == "br":
            self.tables[-1].add(" ")
        elif not self._skipped() and self._in_main() and tag == "br":
            (self.pre if self.pre is not None else self.body).append("\n")

    def handle_endtag(self, tag: str) -> None:
        if not self.open_count[tag]:
            return
        while self.open:  # close elements left open inside this one
            closed, skipped, in_main = self.open.pop()
            self.open_count[closed] -= 1
            if closed == tag:
                break
        if skipped or not in_main:
            return
        if tag == "title" and self.title_parts is not None:
            self.title, self.title_parts = one_line("".join(self.title_parts)), None
        elif tag in _HEADINGS and self.heading is not None:
            self.blocks.append(Heading(self.level, "".join(self.heading)))
            self.heading = None
        elif tag in ("td", "th") and self.tables and self.pre is None:
            self.tables[-1].end_cell()
        elif tag == "table" and self.tables and self.pre is None:
            rows = self.tables.pop().lines()
            if self.tables:  # a table inside a cell: its rows are that cell's text
                self.tables[-1].add(" ".join(rows))
            elif rows:
                self.body.append("\n\n" + "\n".join(rows) + "\n\n")
        elif tag == "pre" and self.pre is not None:
            code = "".join(self.pre).strip("\n")
            if code.strip():
                self.body.append("\n\n" + code_fence(code, self.pre_language) + "\n\n")
            self.pre = None
            self.language = ""
        elif tag not in _LINE_BREAKS and self.pre is None:  # those break before they start
            self._break(tag, starting=False)

    def handle_data(self, data: str) -> None:
        if self.title_parts is not None:
            self.title_parts.append(data)
            return
        if self._skipped() or not self._in_main():
            return
        if self.pre is not None:
            self.pre.append(data)
            return
        if self.tables and self.heading is None:  # only a cell's text: not the space between
            self.tables[-1].add(data)
            return
        target = self.body if self.heading is None else self.heading
        data = _WHITESPACE.sub(" ", data)
        if not target or target[-1].endswith((" ", "\n")):
            data = data.lstrip(" ")
        if data:
            target.append(data)

    def _break(self, tag: str, starting: bool) -> None:
        if tag in _PARAGRAPH_BREAKS:
            self.body.append("\n\n")
        elif tag in _LINE_BREAKS:
            self.body.append("\n")
        elif tag in ("td", "th") and starting and self.body and not self.body[-1].endswith("\n"):
            self.body.append(" | ")  # cells of one row share a line

    def _flush(self) -> None:
        self.blocks.append("".join(self.body))
        self.body = []

    def finish(self) -> list[Block]:
        if self.heading is not None:  # an unclosed heading at the end of the file
            self.blocks.append(Heading(self.level, "".join(self.heading)))
        self._flush()
        return self.blocks


class _Table:
    """A table as it is read: its rows of cells, then its lines (its caption, then one per
    row, cells parted by " | "). A cell spanning rows (`rowspan`) stands in each row it spans,
    so a row says all it means ("{prefix}/ | POST | create | {basename}-list", not "POST |
    create"); one spanning columns leaves the columns after it empty."""

    def __init__(self) -> None:
        self.rows: list[list[tuple[str, int, int]]] = []  # (text, rows, columns spanned)
        self.cell: list[str] | None = None
        self.span = (1, 1)
        self.caption: list[str] = []  # text inside the table and in no cell (its <caption>)

    def start(self, tag: str, attributes: dict[str, str | None]) -> None:
        self.end_cell()  # a cell left open ends where the next starts
        if tag == "tr" or not self.rows:
            self.rows.append([])
        if tag != "tr":
            self.cell = []
            self.span = (_span(attributes.get("rowspan")), _span(attributes.get("colspan")))

    def add(self, text: str) -> None:
        (self.caption if self.cell is None else self.cell).append(text)

    def end_cell(self) -> None:
        if self.cell is not None:
            self.rows[-1].append((one_line("".join(self.cell)), *self.span))
            self.cell = None

    def lines(self) -> list[str]:
        self.end_cell()
        spanning: dict[int, tuple[str, int]] = {}  # column -> (text, rows still to stand in)
        caption = one_line("".join(self.caption))
        lines = [caption] if caption else []
        for row in self.rows:
            cells: list[str] = []
            queue = list(row)
            while queue or any(column >= len(cells) for column in spanning):
                column = len(cells)
                if column in spanning:
                    text, left = spanning.pop(column)
                    if left > 1:
                        spanning[column] = (text, left - 1)
                    cells.append(text)
                    continue
                if not queue:  # only a span further right is left: this column is empty
                    cells.append("")
                    continue
                text, down, across = queue.pop(0)
                for offset in range(across):
                    if down > 1:
                        spanning[column + offset] = (text, down - 1)
                    cells.append(text if offset == 0 else "")
            if any(cells):
                lines.append(" | ".join(cells).strip())
        return lines


def _span(value: str | None) -> int:
    """A `rowspan`/`colspan` as a count: 1 unless a whole number from 1 to 100."""
    return int(value) if value and value.strip().isdigit() and 1 <= int(value) <= 100 else 1
