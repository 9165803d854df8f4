"""Fidelity: what the chunks of real-looking pages contain, and what markup never leaks into them.

The corpus: tests/fidelity/ (a mkdocs page, a texinfo HTML manual page, a Sphinx-style RST page,
a FastAPI-style mkdocs tree with snippet includes and pymdownx blocks, a PEP), a PDF built page by
page with helpers.pdf_bytes, and a .docx written with python-docx.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import chunk_document, pdf_bytes

from ragchat.ingest.chunking import Chunk
from ragchat.ingest.formats.rst import parse_rst
from ragchat.ingest.ignore import Rules, Scope
from ragchat.ingest.includes import IncludeResolver
from ragchat.ingest.loaders import load_document, parse_document

CORPUS = Path(__file__).parent / "fidelity"
NEVER = (
    "!!!",
    "???",
    "--8<--",
    "{*",
    "*}",
    ":::",
    ":docstring:",
    ":members:",
    "Next:",
    "Previous:",
    "- - ",
    "\u00ad",
    "\u200b",
    "man-\n",
    "[Contents]",
    "[Index]",
    ":ref:",
    ":linenos:",
)


def chunks_of(path: Path) -> list[Chunk]:
    return chunk_document(load_document(path))


def joined(chunks: list[Chunk]) -> str:
    return "\n\n".join(chunk.text for chunk in chunks)


def by_heading(chunks: list[Chunk]) -> dict[tuple[str, ...], str]:
    found: dict[tuple[str, ...], str] = {}
    for chunk in chunks:
        found[chunk.heading_path] = (
            found.get(chunk.heading_path, "") + "\n\n" + chunk.text
        ).strip()
    return found


def assert_clean(chunks: list[Chunk]) -> None:
    text = joined(chunks)
    for leak in NEVER:
        assert leak not in text, leak


# --- mkdocs Markdown -------------------------------------------------------------------------


def test_mkdocs_page_keeps_admonition_bodies_code_and_nested_lists() -> None:
    chunks = chunks_of(CORPUS / "timeouts.md")
    sections = by_heading(chunks)
    assert (
        "Default timeouts\n\nThe default behavior is to raise a TimeoutException after 5 seconds"
        in sections[("Timeouts",)]
    )
    setting = sections[("Timeouts", "Setting and disabling timeouts")]
    # the introducing sentence and the whole fence (blank line inside) in one
    # chunk, indentation intact
    assert (
        "You can set timeouts for an individual request:\n\n```python\n"
        "# Using the top-level API:\n"
        "httpx.get('http://example.com/api/v1/example', timeout=10.0)\n\n"
        "# Using a client instance:\n"
        "with httpx.Client() as client:\n"
        '    client.get("http://example.com/api/v1/example", timeout=10.0)\n```'
    ) in [
        chunk.text for chunk in chunks if chunk.heading_path[-1] == "Setting and disabling timeouts"
    ][0]
    assert "Tip\n\nTimeouts can also be set per client." in setting
    limits = sections[("Timeouts", "Pool limits")]
    assert limits.endswith(
        "which define:\n\n- max_connections, the maximum number of allowable connections.\n- "
        "keep-alive settings:\n  - max_keepalive_connections, the number of keep-alive "
        "connections.\n  - keepalive_expiry, the time limit on idle connections."
    )
    assert sections[("Timeouts", "API")] == "The client reference ends here."
    assert_clean(chunks)
    for leak in ("httpx.AsyncClient", "show_source", "description:", "hl["):
        assert leak not in joined(chunks)
    # without a library to read them from, includes are one line naming the file
    assert "example: docs_src/timeouts/tutorial001.py, not in the library" in joined(chunks)
    assert "included page: snippets/abbreviations.md, not in the library" in joined(chunks)


def test_front_matter_title_when_the_page_has_no_h1(tmp_path: Path) -> None:
    page = tmp_path / "limits.md"
    page.write_text(
        "---\ntitle: Resource limits\nsummary: x\n---\n\n## Pool\n\nSome text.\n", encoding="utf-8"
    )
    doc = load_document(page)
    assert doc.title == "Resource limits" and "summary" not in doc.text


def test_icon_shortcodes_and_attribute_lists_are_decoration_not_text(tmp_path: Path) -> None:
    page = tmp_path / "index.md"
    page.write_text(
        "# Home { #home }\n\n## [1.10.0](https://example.org) - 2022-09-18 ## {: #v1.10.0 }\n\n"
        "- :material-hammer-wrench:{ .lg .middle } Build system\n\n"
        '=== ":octicons-file-code-16: pyproject.toml"\n\n    Set the `name` key.\n\n'
        "![logo](logo.png){ width=300 } [Get started](intro.md){ .md-button } now.\n\n"
        "Kept: 10:30, {x}, {a: 1}, f-strings like `{name}`, roles like `:not-an-icon:`.\n",
        encoding="utf-8",
    )
    doc = load_document(page)
    text = doc.text
    assert [s.heading_path[-1] for s in doc.sections][-1] == "1.10.0 - 2022-09-18"
    assert "- Build system" in text and "pyproject.toml\n" in text, text
    assert "Get started now." in text, text
    assert "Kept: 10:30, {x}, {a: 1}, f-strings like {name}, roles like :not-an-icon:." in text
    for leftover in ("octicons", "material-", "{ .", "width=", "#home"):
        assert leftover not in text, (leftover, text)


def test_inline_hilite_marks_and_the_information_sign_are_not_text(tmp_path: Path) -> None:
    """dynaconf's docs: `#!bash export ENV_FOR_DYNACONF=development` (pymdownx InlineHilite) read
    as "#!bash export ..."; "> ℹ️ You can choose" read as "i️ You can choose" (NFKC)."""
    page = tmp_path / "settings_files.md"
    page.write_text(
        "# Settings files\n\n## Layered environments\n\n"
        '=== "program.py"\n\n    Switch with `#!bash export ENV_FOR_DYNACONF=development`\n\n'
        '    ```python\n    settings.name == "developer"\n    ```\n\n'
        "Call `:::python settings.setenv()` or run `#!/usr/bin/env python` scripts.\n\n"
        "> ℹ️ You can choose `toml|yaml|json|ini|py` on `dynaconf init -f <fileformat>`.\n",
        encoding="utf-8",
    )
    text = load_document(page).text
    assert "Switch with export ENV_FOR_DYNACONF=development" in text, text
    assert "Call settings.setenv() or run #!/usr/bin/env python scripts." in text, text
    assert "ℹ️ You can choose toml|yaml|json|ini|py" in text, text
    assert "#!bash" not in text and ":::python" not in text and "i\ufe0f" not in text, text


def library_chunks(path: Path, root: Path = CORPUS, target: int = 400) -> list[Chunk]:
    """Chunks of `path` as ingesting `root` makes them: includes read inside `root` only."""
    resolved = root.resolve()
    doc = load_document(path, includes=IncludeResolver(path, Scope((Rules(resolved),)), resolved))
    return chunk_document(doc, target=target, max_size=target + 100, overlap=100)


def fence_lines(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.lstrip().startswith(("```", "~~~")))


def assert_whole(chunks: list[Chunk]) -> None:
    """Every chunk holds whole fences, starts a sentence or block, and keeps no hard wrap."""
    for chunk in chunks:
        assert fence_lines(chunk.text) % 2 == 0, chunk.text
        assert not chunk.text[0].islower(), chunk.text
        without_code = re.sub(r"^```.*?^```$", "", chunk.text, flags=re.S | re.M)
        prose = [
            p for p in without_code.split("\n\n") if p.strip() and not p.startswith(("- ", "PEP "))
        ]
        assert all("\n" not in p.strip() for p in prose), chunk.text


FASTAPI_PAGE = CORPUS / "mkdocs" / "docs" / "tutorial" / "dependencies.md"


def test_mkdocs_includes_pymdownx_blocks_and_heading_ids() -> None:
    chunks = library_chunks(FASTAPI_PAGE)
    text = joined(chunks)
    steps = by_heading(chunks)[("Dependencies", "First steps")]
    # the included file, as code, right after the sentence that shows it
    assert "path operation like this:\n\n```python\nfrom fastapi import Depends, FastAPI\n" in steps
    assert "    return commons\n```" in steps
    assert (
        "Dependencies work the same way in every supported Python version." in steps
    )  # --8<-- via docs/
    assert (
        "Technical Details\n\nDependencies are called once per request, and their results are "
        "cached for" in steps
    )
    assert "Python 3.10+\n\n```python\ndef common(q: str | None = None):" in steps
    assert "example: ../../docs_src/dependencies/tutorial009.py, not in the library" in steps
    assert [c.heading_path[-1] for c in chunks][-1] == "Sharing dependencies"
    assert (
        "FastAPI has a very powerful but intuitive Dependency Injection system. It is designed"
        in text
    )
    for leak in ("{ #", "{#", "///", "hl[", "{*", "*}", "--8<--", "**"):
        assert leak not in text, leak
    assert_whole(chunks)


def test_includes_outside_the_library_are_named_not_read(tmp_path: Path) -> None:
    (tmp_path / "secret.py").write_text("TOKEN = 'do-not-read'\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    page = docs / "page.md"
    page.write_text(
        '# Page\n\nIt reads:\n\n--8<-- "../secret.py"\n\n{* /etc/hostname *}\n', encoding="utf-8"
    )
    text = joined(library_chunks(page, root=docs))
    assert "do-not-read" not in text
    assert "example: ../secret.py, not in the library" in text
    assert "example: /etc/hostname, not in the library" in text
    assert "do-not-read" in joined(library_chunks(page, root=tmp_path))  # inside the library: read


def test_a_braces_include_shows_only_its_ln_lines(tmp_path: Path) -> None:
    (tmp_path / "app.py").write_text(
        "import x\n\ndef main():\n    return x.run()\n\nmain()\n", encoding="utf-8"
    )
    page = tmp_path / "page.md"
    page.write_text("# Page\n\nThe function:\n\n{* app.py ln[3:4] hl[4] *}\n", encoding="utf-8")
    assert (
        joined(library_chunks(page, root=tmp_path))
        == "The function:\n\n```python\ndef main():\n    return x.run()\n```"
    )


def test_a_large_included_file_is_named_not_read(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_text("x = 1\n" * 60_000, encoding="utf-8")
    page = tmp_path / "page.md"
    page.write_text("# Page\n\n{* big.py *}\n", encoding="utf-8")
    assert joined(library_chunks(page, root=tmp_path)) == "example: big.py, not in the library"


def test_a_code_block_larger_than_a_chunk_is_split_and_refenced(tmp_path: Path) -> None:
    code = "\n\n".join(
        f"def handler_{n}(request):\n    return respond(request, {n})" for n in range(40)
    )
    page = tmp_path / "big.md"
    page.write_text(
        f"# Handlers\n\nThe handlers are:\n\n```python\n{code}\n```\n\nThat is all.\n",
        encoding="utf-8",
    )
    chunks = library_chunks(page, root=tmp_path)
    assert len(chunks) > 3
    for chunk in chunks:
        assert fence_lines(chunk.text) % 2 == 0
        if "def handler_" in chunk.text:
            assert chunk.text.startswith(
                ("The handlers are:\n\n```python\n", "```python\ndef handler_")
            )
            assert (
                chunk.text.count("```python") == 1 and "    return respond(request," in chunk.text
            )
    pieces = "".join(c.text for c in chunks)
    assert all(
        f"def handler_{n}(request):\n    return respond(request, {n})" in pieces for n in range(40)
    )


def test_a_piece_of_a_split_block_keeps_its_first_lines_indentation(tmp_path: Path) -> None:
    """A command's help cut between chunks: the piece after the cut starts with its line's
    indentation, in line with the lines under it (it showed "-c, --csv" against "  --tsv")."""
    options = "\n".join(f"  --option-{n:02d} TEXT      What option {n} does" for n in range(90))
    page = tmp_path / "cli.md"
    page.write_text(
        f"# Insert\n\nThe options are:\n\n```\nUsage: tool insert [OPTIONS]\n\n{options}\n```\n",
        encoding="utf-8",
    )
    chunks = library_chunks(page, root=tmp_path)
    pieces = [c.text for c in chunks if c.text.startswith("```\n")]
    assert pieces
    for piece in pieces:
        first = piece.split("\n")[1]
        assert first.startswith("  --option-"), first


def test_pep_header_roles_directives_and_hard_wraps() -> None:
    chunks = library_chunks(CORPUS / "pep-9999.rst")
    doc = load_document(CORPUS / "pep-9999.rst")
    assert doc.title == "PEP 9999 \u2013 Structural Pattern Matching for Examples"
    text = joined(chunks)
    abstract = by_heading(chunks)[("Abstract",)]
    assert abstract.startswith(
        "This PEP builds on PEP 634 and the message format of RFC 2822. It describes how"
    )
    assert (
        "why len() and str.split() keep their parentheses. See the specification and the Python "
        "website" in abstract
    )
    assert abstract.endswith("for details.")  # the footnote reference is gone, the sentence whole
    spec = by_heading(chunks)[("Specification",)]
    assert (
        "Note\n\nMatching is tried from top to bottom, and the first case that matches wins."
        in spec
    )
    assert (
        "A match statement looks like this:\n\n```\nmatch command.split():\n    case [action]:"
        in spec
    )
    assert '```python\nmatch point:\n    case (0, 0):\n        print("Origin")\n```' in spec
    assert "Unknown directives keep their content, which is still read as a paragraph." in spec
    assert "Added in version 3.10: The match statement and odd text." in spec
    # the header as one line of sentences an answer can quote, without the e-mail address
    assert text.startswith(
        "PEP 9999 \u2013 Structural Pattern Matching for Examples, by A. Writer "
        "(Final, Standards Track, created 01-Jan-2024, Python 3.12)."
    )
    for leak in (
        ":pep:",
        ":rfc:",
        ":func:",
        ":ref:",
        "634`",
        "[1]",
        "|tm|",
        "trademark",
        "comment never",
        "linenos",
        "caption",
        "colour",
        "frobnicate",
        "<https",
        "System Message",
        "Unknown directive type",
        "``match",
    ):
        assert leak not in text, leak
    assert_whole(chunks)


def test_rst_literalinclude_reads_inside_the_library_only(tmp_path: Path) -> None:
    (tmp_path / "example.py").write_text("one = 1\ntwo = 2\nthree = 3\n", encoding="utf-8")
    page = tmp_path / "page.rst"
    page.write_text(
        "Usage\n=====\n\nLike this:\n\n.. literalinclude:: example.py\n   :lines: 2-3\n\n"
        ".. literalinclude:: /etc/passwd\n",
        encoding="utf-8",
    )
    text = joined(library_chunks(page, root=tmp_path))
    assert (
        text
        == "Like this:\n\n```python\ntwo = 2\nthree = 3\n```\n\nexample: /etc/passwd, not in the "
        "library"
    )


# --- MyST (Sphinx's Markdown) and RST includes -------------------------------------------------

MYST = CORPUS / "myst"


def test_myst_page_reads_roles_directives_and_includes_as_its_reader_sees_them() -> None:
    page = MYST / "docs" / "guide.md"
    chunks = library_chunks(page, root=MYST)
    text = joined(chunks)
    assert load_document(page).title == "Options and arguments"
    assert (
        "Greet supports two kinds of parameters: options and arguments. An option is declared "
        "with the option() decorator and read from the Context; the format follows PEP 8 and "
        "RFC 2822." in text
    )
    names = by_heading(chunks)[("Options and arguments", "Option names")]
    assert (
        "Note\n\nNames are taken from the longest flag, with dashes turned into underscores."
        in (names)
    )
    assert "Prefer long names\n\nShort flags are easy to forget." in names
    assert "Added in version 2.0:\n\nOption names may start with a single dash." in names
    # a code directive is code with its language and without its options
    assert 'like this:\n\n```python\n@command()\n@option("--shout", is_flag=True)\n' in names
    # {literalinclude} reads the file inside the library, with the language asked for
    assert "program:\n\n```python\nfrom greet import command, echo, option\n" in names
    # {eval-rst} is RST: a directive nobody registered, holding code, stays code
    assert '```\n@command()\n@argument("name")\ndef hello(name):\n' in names
    assert "Run it with hello Ada; it prints one line." in names
    # {include} of Markdown reads it in place, hard wrap gone
    assert "Every command also accepts --help, which prints the options and arguments" in names
    for leak in (
        "{ref}",
        "{func}",
        "{pep}",
        "```{",
        ":::",
        "options-guide",
        "(option-names)=",
        "for the authors only",
        "+++",
        ":caption:",
        ":class:",
        ":depth:",
        "emphasize",
        "advanced",
        "html_meta",
    ):
        assert leak not in text, leak
    assert_whole(chunks)


def test_myst_directives_outside_the_library_or_nested_too_deep_lose_nothing(
    tmp_path: Path,
) -> None:
    nested = "\n".join(f"{'`' * (n + 3)}{{note}}" for n in range(12, 0, -1))
    closing = "\n".join(f"{'`' * (n + 3)}" for n in range(1, 13))
    page = tmp_path / "page.md"
    page.write_text(
        f"# Page\n\n```{{include}} ../outside.md\n```\n\n{nested}\nDeep text.\n{closing}\n",
        encoding="utf-8",
    )
    text = joined(library_chunks(page, root=tmp_path))
    assert "included page: ../outside.md, not in the library" in text
    assert "Deep text." in text


def test_rst_include_reads_a_file_inside_the_library_once() -> None:
    chunks = library_chunks(MYST / "docs" / "api.rst", root=MYST / "docs")
    text = joined(chunks)
    # read in place: its title is a section of the page, its hard wraps are gone
    assert by_heading(chunks)[("API", "Supported versions")].startswith(
        "Greet runs on every supported Python version."
    )
    assert text.count("Greet runs on every") == 1  # the file includes itself: read once
    assert "included page: ../../secret-outside.rst, not in the library" in text
    assert "Commands are plain functions." in text


@pytest.mark.parametrize(
    ("content", "code"),
    [
        ("@command()\n@argument('name')\ndef hello(name):\n    echo(name)", True),
        ("invoke(touch, args=['--help'])", True),
        ("Names are taken from the longest flag (its dashes become underscores).", False),
        ("Does foo to *a*.", False),
        ("has_request_context", False),  # a name, as `.. autofunction::` gives it
        (":ref:`python:stable` (user docs) and :ref:`devguide:c-api` (development docs)", False),
        ("Like this::\n\n    x = f(y)", False),  # RST of its own: parsed, not quoted
    ],
)
def test_unregistered_directive_content_is_code_only_when_it_reads_as_code(
    content: str, code: bool
) -> None:
    from ragchat.ingest.formats.common import looks_like_code

    assert looks_like_code(content) is code


def test_rst_docutils_never_reads_files_or_prints(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "secret.txt").write_text("do-not-read", encoding="utf-8")
    page = tmp_path / "page.rst"
    page.write_text(
        f"Title\n=====\n\n.. include:: {tmp_path / 'secret.txt'}\n\n.. raw:: html\n   :file: "
        "secret.txt\n\nBad *markup and `unclosed.\n\n.. csv-table::\n   :file: "
        "secret.txt\n\n:nosuchrole:`x` stays x.\n",
        encoding="utf-8",
    )
    text = load_document(page).text
    assert "do-not-read" not in text and "x stays x." in text
    captured = capfd.readouterr()
    assert captured.out == "" and captured.err == ""


def test_hard_wrapped_plain_text_is_unwrapped_but_lists_keep_their_lines(tmp_path: Path) -> None:
    import textwrap

    prose = textwrap.fill("Limit all lines to a maximum of 79 characters. " * 6, 72)
    page = tmp_path / "style.txt"
    page.write_text(
        f"Style\n\n{prose}\n\nYou need:\n- one thing\n- another thing\n", encoding="utf-8"
    )
    text = load_document(page).text
    assert ("Limit all lines to a maximum of 79 characters. " * 6).strip() in text
    assert "You need:\n- one thing\n- another thing" in text


# --- HTML manual ------------------------------------------------------------------------------


def test_html_manual_page_drops_navigation_and_keeps_pre_as_code() -> None:
    chunks = chunks_of(CORPUS / "manual.html")
    assert [chunk.heading_path for chunk in chunks] == [("3 Thread Safety",)]
    text = chunks[0].text
    assert text.startswith("Widgets are safe to share between threads once built with widget_new.")
    assert "The lock is taken automatically." in text  # soft hyphen and zero-width space removed
    assert "```\nwidget_t *w = widget_new();\n  widget_lock(w);\n```" in text
    assert (
        "Next: this sentence starts with Next but is real text." in text
    )  # prose is not navigation
    assert "Copyright" not in text and "color" not in text
    text_without_prose = text.replace("Next: this sentence", "")
    assert_clean([Chunk(0, text_without_prose, (), 0, 0)])


def test_html_main_element_limits_the_text(tmp_path: Path) -> None:
    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><div>Site banner text</div><main><article><header><h1>Guide"
        '<a class="headerlink" href="#guide">\u00b6</a></h1></header>'
        "<p>Body text.</p><pre><code class=\"language-python\">print('hi')\n    x = 1</code></pre>"
        "<aside>Related links</aside></article></main><div>Cookie notice</div></body></html>",
        encoding="utf-8",
    )
    doc = load_document(page)
    assert doc.text == "Guide\n\nBody text.\n\n```python\nprint('hi')\n    x = 1\n```"


# --- reStructuredText -------------------------------------------------------------------------


def test_rst_page_with_directives() -> None:
    chunks = chunks_of(CORPUS / "guide.rst")
    sections = by_heading(chunks)
    assert sections[("Backup Guide", "Introduction")] == (
        "Backups protect your data against loss.\n\nNote\n\nAlways test a restore before you "
        "need it.\n\n```bash\ntar -czf backup.tar.gz /home\n```"
    )
    assert (
        sections[("Backup Guide", "Rotation")]
        == "Keep seven daily copies. See restore-section and the faq."
    )
    assert_clean(chunks)
    assert "Table of Contents" not in joined(chunks) and "maxdepth" not in joined(chunks)
    assert ".. " not in joined(chunks) and "::" not in joined(chunks)


def test_a_row_of_rst_badges_is_no_text_but_an_image_in_a_sentence_keeps_its_words() -> None:
    page = """Widgets
=======

|PyPI| |CI|

.. |PyPI| image:: https://img.shields.io/pypi/v/widgets.svg
   :alt: PyPI version
   :target: https://pypi.org/project/widgets/

.. |CI| image:: https://example.com/ci.svg
   :alt: Build status

Press the |save| button to keep the widget.

.. |save| image:: save.png
   :alt: save
"""
    text = "\n".join(str(block) for block in parse_rst(page).blocks)
    assert "PyPI version" not in text and "Build status" not in text
    assert "Press the save button to keep the widget." in text


# --- PDF --------------------------------------------------------------------------------------


def body(
    texts: list[str], top: float = 700, size: float = 11, step: float = 14
) -> list[tuple[str, float, float]]:
    return [(text, size, top - step * n) for n, text in enumerate(texts)]


HANDBOOK_PDF = pdf_bytes(
    [
        [("Estate Planning Handbook", 20, 740)]
        + body(
            [
                "Contents",
                "1. Introduction .......... 2",
                "2. Risk Management . . . . . 3",
                "3. Witnesses 3",
            ]
        ),
        [("1. Introduction", 16, 740)]
        + body(
            [
                "An estate plan needs careful man-",
                "agement of assets and a will that is",
                "Self-evidently valid and co-signed.",
            ]
        ),
        [("2. Risk Management", 16, 740)] + body(["Insurance covers the rest of the risk."]),
    ],
    title="Estate Planning",
)


def test_pdf_hyphenation_joined_and_table_of_contents_is_not_headings() -> None:
    doc = parse_document(Path("estate.pdf"), HANDBOOK_PDF)
    chunks = chunk_document(doc)
    headings = {heading for chunk in chunks for heading in chunk.heading_path}
    assert headings == {"Estate Planning Handbook", "1. Introduction", "2. Risk Management"}
    text = joined(chunks)
    assert "careful management of assets" in text
    assert "and co-signed." in text and "Self-evidently" in text  # real hyphens stay
    assert "1. Introduction .......... 2" in text  # the contents stay text, not headings
    assert_clean(chunks)


def test_pdf_chunks_record_their_pages() -> None:
    chunks = chunk_document(parse_document(Path("estate.pdf"), HANDBOOK_PDF))
    pages = {chunk.heading_path[-1]: (chunk.page_start, chunk.page_end) for chunk in chunks}
    assert pages == {
        "Estate Planning Handbook": (1, 1),
        "1. Introduction": (2, 2),
        "2. Risk Management": (3, 3),
    }


def test_pdf_chunk_across_a_page_break_records_both_pages() -> None:
    data = pdf_bytes(
        [
            [("Trusts", 16, 740)] + body(["A trust holds property for beneficiaries."]),
            body(["The trustee manages it with care."]),
        ]
    )
    chunks = chunk_document(parse_document(Path("trusts.pdf"), data))
    assert [(chunk.text, chunk.page_start, chunk.page_end) for chunk in chunks] == [
        ("A trust holds property for beneficiaries.\n\nThe trustee manages it with care.", 1, 2)
    ]


def test_plain_text_pdf_table_of_contents_lines_are_not_headings() -> None:
    toc = [("1. Scope ..... 1", 11, 700), ("2. Terms ..... 2", 11, 660), ("3. Duties 3", 11, 620)]
    data = pdf_bytes([toc, body(["The duties of a trustee are set out here."])])
    doc = parse_document(Path("trust.pdf"), data)
    assert all(section.heading_path in ((), ("Page 1",), ("Page 2",)) for section in doc.sections)
    assert "1. Scope ..... 1" in doc.text


# --- all formats ------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".md", ".txt", ".rst", ".html"])
def test_nfkc_soft_hyphens_and_zero_width_characters(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"note{suffix}"
    path.write_text(
        "Heading\n\nThe \ufb01rst e\u00adxam\u200bple\u00a0costs \uff15 euros.\n", encoding="utf-8"
    )
    text = load_document(path).text
    assert "The first example costs 5 euros." in text


# --- .docx ------------------------------------------------------------------------------------


def budget_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.core_properties.title = "Budget (properties)"
    document.add_heading("Household Budget", 0)
    document.add_paragraph("Our plan for the year.")
    document.add_heading("Income", 1)
    document.add_paragraph("Salaries are paid monthly.")
    document.add_heading("Savings", 2)
    document.add_paragraph("We save in two ways:")
    document.add_paragraph("Pension", style="List Bullet")
    document.add_paragraph("Private pension", style="List Bullet 2")
    document.add_paragraph("Emergency fund", style="List Bullet")
    table = document.add_table(rows=2, cols=2)
    for (row, column), text in {
        (0, 0): "Item",
        (0, 1): "Amount",
        (1, 0): "Rent",
        (1, 1): "900",
    }.items():
        table.cell(row, column).text = text
    document.save(str(path))
    return path


def test_docx_headings_from_styles_lists_and_tables(tmp_path: Path) -> None:
    doc = load_document(budget_docx(tmp_path / "budget.docx"))
    assert doc.title == "Household Budget"
    sections = by_heading(chunk_document(doc))
    assert sections == {
        ("Household Budget",): "Our plan for the year.",
        ("Household Budget", "Income"): "Salaries are paid monthly.",
        ("Household Budget", "Income", "Savings"): (
            "We save in two ways:\n- Pension\n  - Private pension\n- Emergency fund\n\nItem | "
            "Amount\nRent | 900"
        ).replace(":\n-", ":\n\n-"),
    }


def test_damaged_docx_is_skipped_with_a_reason(tmp_path: Path) -> None:
    from ragchat.errors import UnreadableFile

    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(UnreadableFile, match="corrupt .docx"):
        load_document(path)


def test_long_paragraphs_are_not_split_inside_abbreviations() -> None:
    from ragchat.ingest.chunking import _sentences

    text = (
        "The keep-alive pool, a.k.a. Connection reuse, is on. It saves time, e.g. TLS "
        "handshakes. Done."
    )
    spans = _sentences(text, (0, len(text)))
    assert [text[a:b] for a, b in spans] == [
        "The keep-alive pool, a.k.a. Connection reuse, is on.",
        "It saves time, e.g. TLS handshakes.",
        "Done.",
    ]


@pytest.mark.parametrize(
    ("page_name", "include"),
    [
        ("page.md", "{* ../docs_src/app.py *}"),
        ("page.md", "```{literalinclude} ../docs_src/app.py\n```"),
        ("page.rst", ".. literalinclude:: ../docs_src/app.py"),
    ],
    ids=["mkdocs", "myst", "rst"],
)
def test_changing_an_included_file_reingests_the_page_that_includes_it(
    tmp_path: Path, embedder, page_name: str, include: str
) -> None:
    from helpers import settings_for

    from ragchat.ingest.pipeline import ingest
    from ragchat.store.db import open_db

    docs, src = tmp_path / "site" / "docs", tmp_path / "site" / "docs_src"
    docs.mkdir(parents=True)
    src.mkdir()
    (src / "app.py").write_text("answer = 41\n", encoding="utf-8")
    title = "# Page" if page_name.endswith(".md") else "Page\n===="
    (docs / page_name).write_text(
        f"{title}\n\nThe app is like this:\n\n{include}\n", encoding="utf-8"
    )
    (docs / "other.md").write_text("# Other\n\nNothing included here.\n", encoding="utf-8")
    db_path = tmp_path / "lib.db"

    def run() -> list[str]:
        db = open_db(db_path)
        try:
            report = ingest(db, settings_for(db_path), [docs, src], lambda: embedder)
            return sorted(report.added + report.updated)
        finally:
            db.close()

    assert run() == sorted(["other.md", page_name])  # docs_src, given too, is in the library
    assert run() == []
    (src / "app.py").write_text("answer = 42\n", encoding="utf-8")
    assert run() == [page_name]
    db = open_db(db_path)
    texts = [row["text"] for row in db.query("SELECT text FROM chunks")]
    db.close()
    assert any("like this:\n\n```python\nanswer = 42\n```" in text for text in texts)


def test_diagram_sources_give_way_to_their_captions(tmp_path: Path) -> None:
    """A diagram is drawn as a picture on the published page: its caption is text, its source is
    not (RST directives, MyST directive fences and plain Markdown fences alike)."""
    rst = tmp_path / "hooks.rst"
    rst.write_text(
        "Hooks\n=====\n\nThe hooks fire in this order:\n\n.. mermaid::\n   :caption: Hook order\n\n"
        "   flowchart TD\n       start --> register[tox_register]\n\n"
        ".. graphviz::\n\n   digraph g { a -> b }\n\nThen the environments run.\n",
        encoding="utf-8",
    )
    md = tmp_path / "flow.md"
    md.write_text(
        "# Flow\n\nA request goes through:\n\n"
        "```mermaid\nsequenceDiagram\n    A->>B: hello\n```\n\n"
        "```{mermaid}\n:alt: Client and server\ngraph LR\n  C --> S\n```\n\n"
        "```python\nprint('kept')\n```\n",
        encoding="utf-8",
    )
    rst_text, md_text = load_document(rst).text, load_document(md).text
    assert "The hooks fire in this order:" in rst_text and "Hook order" in rst_text, rst_text
    assert "Then the environments run." in rst_text, rst_text
    assert "print('kept')" in md_text and "Client and server" in md_text, md_text
    for source in ("flowchart", "-->", "digraph", "sequenceDiagram", "->>", "graph LR"):
        assert source not in rst_text + md_text, (source, rst_text, md_text)


def test_an_rst_link_docutils_cannot_resolve_shows_its_text() -> None:
    # polyfactory's SQLAlchemy page names a target twice (the second an alias of the first), and
    # a page can point at a target another file defines: Sphinx shows the link's text
    page = (
        "Factory\n=======\n\nUse `relationship() <https://example.org/rel>`_ here.\n\n"
        "All fields with the SQLAlchemy `relationship() <relationship()_>`_ are built, and\n"
        "`Association Proxy <Association Proxy_>`_ fields too; see `Other Page`_.\n"
    )
    text = " ".join(str(block) for block in parse_rst(page).blocks)
    assert "All fields with the SQLAlchemy relationship() are built" in text
    assert "Association Proxy fields too; see Other Page." in text
    assert "`" not in text and "_>" not in text
