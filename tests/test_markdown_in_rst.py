"""A Sphinx page that includes a Markdown file with MyST's parser (`.. include:: ../README.md`,
`:parser: myst_parser.sphinx_`: loguru's index and overview, never used here) shows it as
Markdown: its headings are sections under the page's, its paragraphs text, its raw HTML gone.
`:start-after:` and `:end-before:` select the part each page shows, so two pages that include
one README show two parts, not the whole twice. Before, the file was one code block holding its
Markdown and HTML, the whole file on both pages."""

from __future__ import annotations

from pathlib import Path

from helpers import invoke

from ragchat.store.db import open_db

README = """<p align="center"><img alt="Widgets logo" src="logo.png"></p>

**Widgets** turn cranks for you.

<!-- end-of-intro -->

## Installation

```
pip install widgets
```

## Take the tour

### Turning twice

Call `widget.turn(times=2)` to turn the crank twice.

<!-- end-of-usage -->

## License

MIT.
"""
INDEX = """Widgets
=======

.. include:: README.md
   :parser: myst_parser.sphinx_
   :end-before: <!-- end-of-intro -->
"""
OVERVIEW = """Overview
========

.. include:: README.md
   :parser: myst_parser.sphinx_
   :start-after: <!-- end-of-intro -->
   :end-before: <!-- end-of-usage -->
"""
LITERAL = """Raw
===

.. include:: README.md
   :literal:
   :start-after: <!-- end-of-usage -->
"""


def chunks_of(db_path: Path) -> dict[str, list[tuple[str, str]]]:
    db = open_db(db_path)
    try:
        rows = db.execute(
            "SELECT d.path, c.heading, c.text FROM chunks c"
            " JOIN documents d ON d.id = c.document_id ORDER BY c.id"
        ).fetchall()
    finally:
        db.close()
    found: dict[str, list[tuple[str, str]]] = {}
    for path, heading, text in rows:
        found.setdefault(path, []).append((heading, text))
    return found


def test_an_rst_page_shows_the_markdown_it_includes_as_markdown(tmp_path: Path, runner) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in {
        "README.md": README,
        "index.rst": INDEX,
        "overview.rst": OVERVIEW,
        "raw.rst": LITERAL,
    }.items():
        (docs / name).write_text(text)
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", docs, "--db", db).exit_code == 0
    chunks = chunks_of(db)

    index = "\n".join(text for _, text in chunks["index.rst"])
    assert "Widgets turn cranks for you." in index
    assert "<p" not in index and "```" not in index and "Installation" not in index

    overview = chunks["overview.rst"]
    text = "\n".join(t for _, t in overview)
    assert "Call widget.turn(times=2) to turn the crank twice." in text
    assert "```\npip install widgets\n```" in text
    assert "cranks for you" not in text and "MIT" not in text and "<!--" not in text
    headings = {h for h, _ in overview}
    assert any(h.endswith("Take the tour > Turning twice") for h in headings), headings

    raw = "\n".join(t for _, t in chunks["raw.rst"])
    assert raw.startswith("```") and raw.endswith("## License\n\nMIT.\n```")  # `:literal:`
    assert "Take the tour" not in raw  # ... from its marker on


def test_a_myst_include_shows_the_part_between_its_markers(tmp_path: Path, runner) -> None:
    """structlog's index.md includes two parts of its README (`:start-after: <!-- begin-short
    -->`, `:end-before: <!-- pause-short -->`, never used here); attrs' changelog.md the part of
    CHANGELOG.md after its towncrier marker."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "README.md").write_text(README)
    page = "# Start\n\n```{include} README.md\n:start-after: <!-- end-of-intro -->\n"
    page += ":end-before: <!-- end-of-usage -->\n```\n"
    (docs / "start.md").write_text(page)
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", docs, "--db", db).exit_code == 0
    text = "\n".join(t for _, t in chunks_of(db)["start.md"])
    assert "Call widget.turn(times=2) to turn the crank twice." in text
    assert "cranks for you" not in text and "MIT" not in text
