"""Loaders read real files written to tmp_path, including hand-built PDFs."""

from __future__ import annotations

import io
import logging
import os
import threading
from pathlib import Path

import pytest
from helpers import pdf_bytes
from pypdf import PdfReader, PdfWriter

from ragchat.errors import UnreadableFile
from ragchat.ingest.loaders import (
    SUPPORTED_SUFFIXES,
    ParsedDocument,
    is_supported,
    load_document,
)

# --- helpers ---------------------------------------------------------------------------------


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, str):
        path.write_text(content, encoding="utf-8")
    else:
        path.write_bytes(content)
    return path


def bodies(doc: ParsedDocument) -> dict[tuple[str, ...], str]:
    return {s.heading_path: doc.text[s.start : s.end] for s in doc.sections}


def assert_well_formed(doc: ParsedDocument) -> None:
    """The text is normalised and sections are ordered, disjoint, stripped and non-blank."""
    assert "\r" not in doc.text and "\n\n\n" not in doc.text
    assert all(line == line.rstrip() for line in doc.text.split("\n"))
    previous_end = 0
    for section in doc.sections:
        body = doc.text[section.start : section.end]
        assert previous_end <= section.start < section.end <= len(doc.text)
        assert body == body.strip() and body
        previous_end = section.end


def body_lines(
    texts: list[str], top: float = 720, size: float = 11
) -> list[tuple[str, float, float]]:
    return [(text, size, top - 14 * n) for n, text in enumerate(texts)]


def encrypted(data: bytes, user_password: str, owner_password: str | None = None) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=user_password, owner_password=owner_password)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


TWO_PAGE_PDF = pdf_bytes(
    [
        body_lines(["Sourdough needs a lively starter.", "Feed it flour and water daily."]),
        body_lines(["Bake the loaf in a hot lidded pot."]),
    ],
    title="Sourdough Notes",
)


# --- dispatch --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "supported"),
    [
        ("a.md", True),
        ("b.MARKDOWN", True),
        ("c.txt", True),
        ("d.rst", True),
        ("e.HTML", True),
        ("f.htm", True),
        ("g.Pdf", True),
        ("h.docx", True),
        ("i.doc", False),
        ("README", False),
    ],
)
def test_is_supported_by_suffix_case_insensitively(name: str, supported: bool) -> None:
    assert is_supported(Path(name)) is supported
    assert (Path(name).suffix.lower() in SUPPORTED_SUFFIXES) is supported


def test_unsupported_suffix_is_unreadable(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="unsupported file type .doc"):
        load_document(write(tmp_path, "letter.doc", "hello"))


# --- markdown --------------------------------------------------------------------------------

WILLS_MD = """\
---
title: Front matter title
tags: [law]
---
*Not legal advice.*

# Making a will

A will must be **in writing** and signed. See [the Act](https://example.org/act) for details.
![diagram](diagram.png)

## Who may witness a will

Any person of 14 or older who is competent to give evidence.

```sh
# not a heading, just a shell comment
echo "keep *this* verbatim"
```

### Spouses of witnesses

A witness's spouse may not inherit.   \r
\r
\r
\r
## Revoking a will ##

Tear it up, or write a new one.
"""


def test_markdown_headings_build_heading_paths(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "wills.md", WILLS_MD))
    assert_well_formed(doc)
    assert doc.title == "Front matter title"  # front matter wins, as in mkdocs, Jekyll, Hugo
    assert [s.heading_path for s in doc.sections] == [
        (),
        ("Making a will",),
        ("Making a will", "Who may witness a will"),
        ("Making a will", "Who may witness a will", "Spouses of witnesses"),
        ("Making a will", "Revoking a will"),
    ]
    assert bodies(doc)[()] == "Not legal advice."
    assert bodies(doc)[("Making a will", "Revoking a will")] == "Tear it up, or write a new one."


def test_markdown_code_fences_are_kept_verbatim_and_hide_hash_lines(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "wills.md", WILLS_MD))
    witness = bodies(doc)[("Making a will", "Who may witness a will")]
    assert "# not a heading, just a shell comment" in witness
    assert 'echo "keep *this* verbatim"' in witness
    assert (
        '```sh\n# not a heading, just a shell comment\necho "keep *this* verbatim"\n```' in witness
    )


def test_markdown_markup_and_front_matter_are_removed(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "wills.md", WILLS_MD))
    assert "A will must be in writing and signed. See the Act for details." in doc.text
    for markup in ("title:", "---", "**", "](", "diagram.png", "## "):
        assert markup not in doc.text
    assert doc.text.startswith("Not legal advice.\n\nMaking a will\n\nA will must")
    assert "may not inherit.\n\nRevoking a will\n\nTear it up" in doc.text  # CRLF, blank runs


def test_markdown_setext_headings(tmp_path: Path) -> None:
    text = (
        "Heat Pumps\n==========\n\nIntro text.\n\nHow they work\n-------------\n\nThey move heat.\n"
    )
    doc = load_document(write(tmp_path, "heat.md", text))
    assert doc.title == "Heat Pumps"
    assert bodies(doc) == {
        ("Heat Pumps",): "Intro text.",
        ("Heat Pumps", "How they work"): "They move heat.",
    }
    assert "===" not in doc.text and "---" not in doc.text


def test_markdown_hashtags_and_dash_lines_after_lists_or_paragraphs_are_not_headings(
    tmp_path: Path,
) -> None:
    text = "#hashtag\n\n# Notes\n\n- first item\n---\n\nLine one\nline two\n---\n\nEnd.\n"
    doc = load_document(write(tmp_path, "notes.md", text))
    assert [s.heading_path for s in doc.sections] == [(), ("Notes",)]
    assert bodies(doc)[()] == "#hashtag"
    assert "- first item" in doc.text and "Line one line two" in doc.text  # a soft break is a space


def test_markdown_title_falls_back_to_front_matter_then_file_stem(tmp_path: Path) -> None:
    with_meta = load_document(
        write(tmp_path, "x.md", '---\ntitle: "Budget 2024"\n---\n## Costs\n\nRent.\n')
    )
    assert with_meta.title == "Budget 2024"
    assert "title" not in with_meta.text
    without = load_document(write(tmp_path, "south_africa_wills.md", "## Costs\n\nRent.\n"))
    assert without.title == "South Africa Wills"


def test_markdown_without_headings_is_one_untitled_section(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "plain-notes.md", "Just a note.\n\nAnd another.\n"))
    assert doc.title == "Plain Notes"
    assert bodies(doc) == {(): "Just a note.\n\nAnd another."}


# --- reStructuredText -----------------------------------------------------------------------

HANDBOOK_RST = """\
============================
The Small Homestead Handbook
============================

Practical notes for a small plot.

.. This comment should vanish
   along with its continuation.

1. Composting
=============

Composting is *controlled* decomposition, see `the guide <https://example.org>`_.

.. note:: Keep the heap moist.

   Turn it weekly.

.. image:: heap.png
   :alt: a heap

Greens and browns
-----------------

Mix them roughly 1:3::

    greens = 1
    browns = 3

Ratios
~~~~~~

Carbon to nitrogen near 30:1.

2. Rainwater
============

Size the tank from the roof area.
"""


def test_rst_levels_follow_order_of_first_appearance(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "handbook.rst", HANDBOOK_RST))
    assert_well_formed(doc)
    assert doc.title == "The Small Homestead Handbook"
    root = "The Small Homestead Handbook"
    assert [s.heading_path for s in doc.sections] == [
        (root,),
        (root, "1. Composting"),
        (root, "1. Composting", "Greens and browns"),
        (root, "1. Composting", "Greens and browns", "Ratios"),
        (root, "2. Rainwater"),
    ]


def test_rst_markup_directives_and_comments(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "handbook.rst", HANDBOOK_RST))
    composting = bodies(doc)[("The Small Homestead Handbook", "1. Composting")]
    assert composting == (
        "Composting is controlled decomposition, see the guide.\n\nNote\n\nKeep the heap "
        "moist.\n\nTurn it weekly."
    )
    greens = bodies(doc)[("The Small Homestead Handbook", "1. Composting", "Greens and browns")]
    assert greens.startswith("Mix them roughly 1:3:\n\n```\ngreens = 1\nbrowns = 3\n```")
    for markup in ("..", "::", "heap.png", ":alt:", "This comment", "====", "~~~~"):
        assert markup not in doc.text


@pytest.mark.parametrize(
    "text",
    ["Title\n=====\n\nText.\n\n----------\n\nMore.\n", "Title\n=====\n\nText.\n\nMore.\n\n====="],
    ids=["transition", "adornment-last-line"],
)
def test_rst_transitions_are_not_titles(tmp_path: Path, text: str) -> None:
    doc = load_document(write(tmp_path, "t.rst", text))
    assert bodies(doc) == {("Title",): "Text.\n\nMore."}


# --- HTML ------------------------------------------------------------------------------------

COURT_HTML = """\
<!DOCTYPE html>
<html><head>
<title>Witnesses &amp; Courts</title>
<style>p { color: red }</style>
<script>var secret = "do not index";</script>
</head>
<body>
<nav><a href="/">Home</a> <h2>Site menu</h2></nav>
<h1>Witnesses in   South African Law</h1>
<p>The word   "witness"
   covers <strong>two</strong> roles&nbsp;in law.</p>
<h2>Competence</h2>
<p>First paragraph.</p><p>Second paragraph.<br>Same paragraph, new line.</p>
<h3>Children</h3>
<ul><li>No minimum age.</li><li>Intermediaries may help.</li></ul>
<h2>Fees</h2>
<div>Witnesses are paid allowances &eacute;quitably.</div>
<noscript>Enable JavaScript</noscript>
<footer>Copyright 2024</footer>
</body></html>
"""


def test_html_headings_nest_and_title_comes_from_title_tag(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "court.html", COURT_HTML))
    assert_well_formed(doc)
    assert doc.title == "Witnesses & Courts"
    law = "Witnesses in South African Law"
    assert bodies(doc) == {
        (law,): 'The word "witness" covers two roles in law.',  # &nbsp; too
        (law, "Competence"): "First paragraph.\n\nSecond paragraph.\nSame paragraph, new line.",
        (law, "Competence", "Children"): "No minimum age.\nIntermediaries may help.",
        (law, "Fees"): "Witnesses are paid allowances équitably.",
    }


def test_html_drops_script_style_nav_footer_and_noscript(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "court.html", COURT_HTML))
    for dropped in ("secret", "color", "Home", "Site menu", "Copyright", "JavaScript"):
        assert dropped not in doc.text


def test_html_title_falls_back_to_first_h1(tmp_path: Path) -> None:
    doc = load_document(
        write(tmp_path, "page.htm", "<h2>Intro</h2><p>x y</p><h1>Real Title</h1><p>z</p>")
    )
    assert doc.title == "Real Title"
    assert [s.heading_path for s in doc.sections] == [("Intro",), ("Real Title",)]


def test_html_tables_and_preformatted_text(tmp_path: Path) -> None:
    html = (
        "<h1>Costs</h1><table><tr><th>Item</th><th>Price</th></tr><tr><td>Rent</td><td>900</td></tr>"
        "</table><pre>  total = 900\n    # indented</pre><p>a <b>b</b>c</p>"
    )
    doc = load_document(write(tmp_path, "costs.html", html))
    assert bodies(doc) == {
        ("Costs",): "Item | Price\nRent | 900\n\n```\n  total = 900\n    # indented\n```\n\na bc"
    }


def test_a_markdown_pages_html_table_keeps_its_cells_apart(tmp_path: Path) -> None:
    """A raw HTML table in a Markdown page reads as a table: one line per row, its cells parted
    (the tags stripped alone ran them together: "URL StyleHTTP Method", "GETlist")."""
    page = (
        "# Routers\n\nThe router makes these routes:\n\n<table border=1>\n"
        "    <tr><th>URL Style</th><th>HTTP Method</th><th>Action</th></tr>\n"
        "    <tr><td>{prefix}/</td><td>GET</td><td>list</td></tr>\n"
        "    <tr><td>{prefix}/{lookup}/</td><td>DELETE</td><td>destroy</td></tr>\n"
        "</table>\n\nAfter the table, a *paragraph*.\n"
    )
    doc = load_document(write(tmp_path, "routers.md", page))
    assert bodies(doc) == {
        ("Routers",): "The router makes these routes:\n\n"
        "URL Style | HTTP Method | Action\n{prefix}/ | GET | list\n"
        "{prefix}/{lookup}/ | DELETE | destroy"
        "\n\nAfter the table, a paragraph."
    }


def test_a_cell_spanning_rows_stands_in_each_row(tmp_path: Path) -> None:
    """`rowspan` repeats the cell in each row it spans, `colspan` leaves the columns after it
    empty, a caption comes first: each row says all it means."""
    html = (
        "<h1>Routes</h1><table><caption>Routes of a router</caption>"
        "<tr><th>URL</th><th>Method</th><th>Name</th></tr>"
        "<tr><td rowspan=2>{prefix}/</td><td>GET</td><td rowspan='2'>list</td></tr>"
        "<tr><td>POST</td></tr>"
        "<tr><td colspan=2>any other</td><td>none</td></tr></table>"
    )
    doc = load_document(write(tmp_path, "routes.html", html))
    assert bodies(doc) == {
        ("Routes",): "Routes of a router\nURL | Method | Name\n{prefix}/ | GET | list\n"
        "{prefix}/ | POST | list\nany other |  | none"
    }


# --- plain text ------------------------------------------------------------------------------

RULE_TXT = """\
Physician Fee Schedule

This excerpt imitates a final rule.
Its lines are wrapped by hand and
the short last line has no period

SECTION I. SUMMARY

The rule revises payment policies.

SECTION II.A. RELATIVE VALUE UNITS

Budget neutrality applies.

Section II.A.1 Scope of the adjustment

Applies to all services.

REGULATORY IMPACT

Costs rise slightly.
"""


def test_txt_heading_heuristics(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "rule.txt", RULE_TXT))
    assert_well_formed(doc)
    assert doc.title == "Physician Fee Schedule"
    assert [s.heading_path for s in doc.sections] == [
        (),
        ("SECTION I. SUMMARY",),
        ("SECTION II.A. RELATIVE VALUE UNITS",),  # II.A is not nested under I
        ("SECTION II.A. RELATIVE VALUE UNITS", "Section II.A.1 Scope of the adjustment"),
        ("REGULATORY IMPACT",),
    ]
    assert bodies(doc)[()].startswith("Physician Fee Schedule\n\nThis excerpt")


def test_txt_numbered_headings_nest_by_number(tmp_path: Path) -> None:
    text = "1. Introduction\n\nHello.\n\n1.1 Background\n\nHistory.\n\n2. Method\n\nSteps.\n"
    doc = load_document(write(tmp_path, "paper.txt", text))
    assert [s.heading_path for s in doc.sections] == [
        ("1. Introduction",),
        ("1. Introduction", "1.1 Background"),
        ("2. Method",),
    ]
    assert doc.title == "Paper"  # a numbered heading is not a title


@pytest.mark.parametrize(
    "text",
    [
        "Dear Sam,\n\nthe meeting moved.\n\nSee you.\n",
        "ALL CAPS LINE INSIDE\na wrapped paragraph is not a heading.\n",
        "A sentence that ends with a period.\n\nAnother one.\n",
        "3.5 million people\n\nlive there.\n",
    ],
)
def test_txt_without_headings_is_one_section(tmp_path: Path, text: str) -> None:
    doc = load_document(write(tmp_path, "my_notes.txt", text))
    assert [s.heading_path for s in doc.sections] == [()]
    assert doc.sections[0].start == 0 and doc.sections[0].end == len(doc.text)


# --- decoding and size -----------------------------------------------------------------------


def test_invalid_utf8_decodes_as_cp1252_and_reports_it(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "cafe.txt", "Café – naïve “quotes”\n".encode("cp1252")))
    assert doc.encoding == "cp1252"
    assert doc.text == "Café – naïve “quotes”"


def test_bytes_undefined_in_cp1252_fall_back_to_latin1(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "odd.txt", b"caf\xe9 \x81 ok\n"))
    assert doc.encoding == "latin-1"
    assert doc.text.startswith("café")


def test_utf8_with_bom_and_crlf(tmp_path: Path) -> None:
    doc = load_document(
        write(tmp_path, "bom.md", "\ufeff# Title\r\n\r\nBody ✓\r\n".encode("utf-8"))
    )
    assert (doc.encoding, doc.title, doc.text) == ("utf-8", "Title", "Title\n\nBody ✓")


def test_utf16_with_bom(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "win.txt", "NOTES\r\n\r\nhello".encode("utf-16")))
    assert (doc.encoding, doc.text) == ("utf-16", "NOTES\n\nhello")


@pytest.mark.parametrize(
    "content",
    [
        b"text\x00with\x00nul bytes",
        bytes(range(1, 9)) * 50 + b"mostly control characters",
    ],
)
def test_binary_content_with_text_suffix(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(UnreadableFile, match="^binary file$"):
        load_document(write(tmp_path, "image.txt", content))


@pytest.mark.parametrize("content", [b"", b"   \n\t\r\n  ", b"\xef\xbb\xbf"])
def test_empty_or_blank_text_file(tmp_path: Path, content: bytes) -> None:
    with pytest.raises(UnreadableFile, match="^empty file$"):
        load_document(write(tmp_path, "empty.md", content))


def test_markup_without_text(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="^no text content$"):
        load_document(write(tmp_path, "blank.html", "<html><script>x()</script></html>"))


def test_over_default_limit_without_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.txt"
    with path.open("wb") as handle:  # sparse: the size is real, the disk use is not
        handle.truncate(10 * 1024 * 1024 + 1)
    with pytest.raises(UnreadableFile, match=r"^larger than the 10 MB limit \(max_file_mb\)$"):
        load_document(path)


def test_over_custom_limit(tmp_path: Path) -> None:
    path = write(tmp_path, "notes.txt", "x" * 2048)
    with pytest.raises(UnreadableFile, match=r"^larger than the 0.001 MB limit \(max_file_mb\)$"):
        load_document(path, max_bytes=1024)
    assert load_document(path, max_bytes=2048).text == "x" * 2048


# --- files that cannot be read ----------------------------------------------------------------


def test_chmod_000_file_as_current_user(tmp_path: Path) -> None:
    path = write(tmp_path, "secret.txt", "top secret")
    path.chmod(0)
    if os.access(path, os.R_OK):  # root ignores file modes: the file reads normally
        assert load_document(path).text == "top secret"
    else:
        with pytest.raises(UnreadableFile, match="^permission denied$"):
            load_document(path)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork")
def test_permission_denied_is_reported(tmp_path: Path) -> None:
    """As root, a forked child drops to an unprivileged user, so the read really fails."""
    path = write(tmp_path, "secret.txt", "top secret")
    path.chmod(0)
    if os.geteuid() != 0:
        with pytest.raises(UnreadableFile, match="^permission denied$"):
            load_document(path)
        return
    tmp_path.chmod(0o711)  # the child needs to reach the file, not to read it
    assert _load_as_nobody(path) == "UnreadableFile: permission denied"


def _load_as_nobody(path: Path) -> str:
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: never return into pytest
        try:
            os.close(read_end)
            os.chdir(path.parent)
            os.setgid(65534)
            os.setuid(65534)
            try:
                outcome = f"loaded: {load_document(Path(path.name)).text}"
            except Exception as exc:
                outcome = f"{type(exc).__name__}: {exc}"
            os.write(write_end, outcome.encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        outcome = pipe.read().decode()
    os.waitpid(pid, 0)
    return outcome


def test_directory_with_supported_suffix(tmp_path: Path) -> None:
    (tmp_path / "folder.txt").mkdir()
    with pytest.raises(UnreadableFile, match="^is a directory$"):
        load_document(tmp_path / "folder.txt")


def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe.txt"
    os.mkfifo(fifo)
    # If the loader ever opened the FIFO, this writer would unblock it instead of hanging the run.
    unblock = threading.Timer(5, lambda: os.close(os.open(fifo, os.O_RDWR)))
    unblock.start()
    try:
        with pytest.raises(UnreadableFile, match="^not a regular file$"):
            load_document(fifo)
    finally:
        unblock.cancel()


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="^cannot read: no such file or directory$"):
        load_document(tmp_path / "gone.md")


# --- PDF -------------------------------------------------------------------------------------


def test_pdf_text_layer_becomes_page_sections(tmp_path: Path) -> None:
    doc = load_document(write(tmp_path, "sourdough.pdf", TWO_PAGE_PDF))
    assert_well_formed(doc)
    assert doc.title == "Sourdough Notes"
    assert bodies(doc) == {
        ("Page 1",): "Sourdough needs a lively starter.\nFeed it flour and water daily.",
        ("Page 2",): "Bake the loaf in a hot lidded pot.",
    }
    assert "Page 1" not in doc.text  # page labels are heading paths, not text


def test_pdf_larger_fonts_are_headings(tmp_path: Path) -> None:
    page = [
        ("Bread Basics", 20, 740),
        ("The starter", 14, 710),
        *body_lines(["A starter is flour and water.", "It ferments for days."], top=690),
        ("Baking", 14, 640),
        *body_lines(["Bake hot.", "Page 1 of 1"], top=620),
    ]
    doc = load_document(write(tmp_path, "bread_guide.pdf", pdf_bytes([page])))
    assert doc.title == "Bread Basics"  # no metadata title: the first heading
    assert bodies(doc) == {
        ("Bread Basics", "The starter"): "A starter is flour and water.\nIt ferments for days.",
        ("Bread Basics", "Baking"): "Bake hot.",  # the bare page number is dropped
    }


def test_pdf_plain_text_headings_and_paragraph_gaps(tmp_path: Path) -> None:
    page = [
        ("INTRODUCTION", 11, 740),
        *body_lines(["Line one of the intro.", "Line two of the intro."], top=710),
        *body_lines(["A new paragraph after a gap.", "It has two lines."], top=660),
        ("1. Method", 11, 620),
        *body_lines(["We measured things.", "Then we wrote them down."], top=590),
    ]
    doc = load_document(write(tmp_path, "report.pdf", pdf_bytes([page], title="report.docx")))
    assert doc.title == "INTRODUCTION"  # "report.docx" is not a sensible title
    assert bodies(doc) == {
        ("INTRODUCTION",): (
            "Line one of the intro.\nLine two of the intro.\n\nA new paragraph after a gap.\nIt "
            "has two lines."
        ),
        ("INTRODUCTION", "1. Method"): "We measured things.\nThen we wrote them down.",
    }


def test_pdf_without_title_or_headings_uses_file_stem(tmp_path: Path) -> None:
    doc = load_document(
        write(tmp_path, "bank-statement_march.pdf", pdf_bytes([body_lines(["Balance: 10"])]))
    )
    assert doc.title == "Bank Statement March"


def test_encrypted_pdf_needs_password(tmp_path: Path) -> None:
    path = write(tmp_path, "locked.pdf", encrypted(TWO_PAGE_PDF, "secret"))
    with pytest.raises(UnreadableFile, match=r"^encrypted PDF \(password required\)$"):
        load_document(path)


def test_pdf_encrypted_with_empty_user_password_opens(tmp_path: Path) -> None:
    path = write(tmp_path, "owner_only.pdf", encrypted(TWO_PAGE_PDF, "", owner_password="owner"))
    assert "lively starter" in load_document(path).text


@pytest.mark.parametrize(
    "content",
    [
        TWO_PAGE_PDF[: len(TWO_PAGE_PDF) // 2],
        b"%PDF-1.4\nthis is not really a pdf",
        b"garbage" * 20,
    ],
    ids=["truncated", "header-only", "garbage"],
)
def test_corrupt_pdf(tmp_path: Path, content: bytes, caplog: pytest.LogCaptureFixture) -> None:
    level = logging.getLogger("pypdf").level
    with caplog.at_level(logging.WARNING), pytest.raises(UnreadableFile, match=r"^corrupt PDF: \S"):
        load_document(write(tmp_path, "broken.pdf", content))
    assert not [r for r in caplog.records if r.name.startswith("pypdf")]  # silenced during the call
    assert logging.getLogger("pypdf").level == level  # and restored after it


def test_zero_byte_pdf(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match="^empty file$"):
        load_document(write(tmp_path, "nothing.pdf", b""))


def test_pdf_without_text_layer(tmp_path: Path) -> None:
    with pytest.raises(UnreadableFile, match=r"^no text layer in PDF \(scanned\?\)$"):
        load_document(write(tmp_path, "scan.pdf", pdf_bytes([[], []])))


@pytest.mark.parametrize(
    ("markup", "shown"),
    [
        (":pep:`634`", "PEP 634"),
        (":pep:`8#naming`", "PEP 8"),
        (":pep:`the style guide <8>`", "the style guide"),
        (":rfc:`2822`", "RFC 2822"),
        (":func:`len`", "len()"),
        (":func:`~os.path.join`", "join()"),
        (":py:meth:`str.split`", "str.split()"),
        (":class:`~pathlib.Path`", "Path"),
        (":ref:`the specification <spec>`", "the specification"),
        (":doc:`faq`", "faq"),
        (":nosuchrole:`kept text`", "kept text"),
        ("`the site <https://example.org>`_", "the site"),
        ("``x = 1``", "x = 1"),
        (":data:`.current_app`", "current_app"),
        (":meth:`~.Flask.app_context`", "app_context()"),
        (":doc:`/server`", "server"),
        (":file:`.gitignore`", ".gitignore"),
        ("the ``?`` in", "the ? in"),
    ],
)
def test_rst_roles_read_as_a_reader_sees_them(tmp_path: Path, markup: str, shown: str) -> None:
    doc = load_document(write(tmp_path, "roles.rst", f"See {markup} here.\n"))
    assert doc.text == f"See {shown} here."


def test_rst_sphinx_file_metadata_is_not_text(tmp_path: Path) -> None:
    text = ":orphan:\n:tocdepth: 2\n\nTitle\n=====\n\nBody text.\n"
    doc = load_document(write(tmp_path, "page.rst", text))
    assert doc.text == "Title\n\nBody text."


def test_rst_footnote_reference_takes_its_space_along(tmp_path: Path) -> None:
    text = "Read the guide [1]_. Then ask.\n\n.. [1] The guide.\n"
    doc = load_document(write(tmp_path, "page.rst", text))
    assert doc.text.startswith("Read the guide. Then ask.")


def test_a_plain_texts_tilde_fence_is_code_not_a_signature(tmp_path: Path) -> None:
    """Ingest fences a Sphinx signature with tildes (`text.SIGNATURE_MARK`) so that the sentence
    before it is no lead-in; a plain text's own tilde fence is ordinary code, written with
    backticks, and keeps its lead-in."""
    from ragchat.answer.units import units
    from ragchat.params import DEFAULT
    from ragchat.text import is_signature

    notes = "Notes\n\nStart it with:\n\n~~~\nmake run\n~~~\n"
    text = load_document(write(tmp_path, "notes.txt", notes)).text
    assert "```\nmake run\n```" in text and "~~~" not in text
    (unit,) = [u for u in units(text, DEFAULT.answer) if "make run" in u.text]
    assert unit.text.startswith("Start it with:") and not is_signature(unit.text)
