"""Definition lists, glossaries and footnotes, as a reader of the built page sees them: a term
stays with its definition ("format_exc_info(): Formats it ..."), so no chunk opens with a
definition whose term is gone (": Formats it ..."); a MyST glossary is a section per term (its
definitions prose, not code blocks holding raw roles); footnote marks (`[^win]`) go and the notes
stay; a directive's argument shows its roles' text ("return a {any}`dict`" -> "return a dict")."""

from __future__ import annotations

from pathlib import Path

from helpers import chunk_document

from ragchat.ingest.formats.rst import parse_rst
from ragchat.ingest.loaders import load_document

DEFINITIONS = """# Exceptions

The most common cases are covered by the following processors:

`tools.format_exc_info()`

: Formats it to a flat string like the console would.

  It is the default.

`tools.dict_tracebacks`
: Gives you a structured exception key.

Console renderers
: ```python
  renderer = Console(colors=True)
  ```
"""

GLOSSARY = """# Glossary

:::{glossary}

Event Dictionary
    Often abbreviated as *event dict*.

    It is passed through the {term}`processor` chain, one {class}`tools.Processor` at a time[^one].

Bound Logger
Logger
    An instance returned by {func}`tools.get_logger`.

    :::{seealso}
    {doc}`loggers`
    :::
:::

[^one]: Processors never run in parallel.
"""

NOTES = """# Output

The renderer offers colorful[^win] console output.

:::{versionchanged} 2.0 Allow the final processor to return a {any}`dict`.
:::

[^win]: Requires the colour package on Windows.
"""


def text_of(tmp_path: Path, name: str, source: str) -> str:
    page = tmp_path / name
    page.write_text(source, encoding="utf-8")
    chunks = chunk_document(load_document(page), target=120, max_size=200, overlap=0)
    return "\n\n".join(chunk.text for chunk in chunks)


def test_a_definition_keeps_its_term(tmp_path: Path) -> None:
    page = tmp_path / "exceptions.md"
    page.write_text(DEFINITIONS, encoding="utf-8")
    chunks = chunk_document(load_document(page), target=60, max_size=120, overlap=0)
    text = "\n\n".join(chunk.text for chunk in chunks)
    assert "tools.format_exc_info(): Formats it to a flat string like the console would." in text
    assert "tools.dict_tracebacks: Gives you a structured exception key." in text
    assert "It is the default." in text
    # a definition that opens with code keeps its term as a line of its own before the code
    assert "Console renderers\n\n```python\nrenderer = Console(colors=True)\n```" in text
    assert not [c.text for c in chunks if c.text.lstrip().startswith(":")]


def test_a_glossary_is_a_section_per_term(tmp_path: Path) -> None:
    page = tmp_path / "glossary.md"
    page.write_text(GLOSSARY, encoding="utf-8")
    chunks = chunk_document(load_document(page), target=120, max_size=200, overlap=0)
    sections = {c.heading_path: c.text for c in chunks}
    assert sections[("Glossary", "Event Dictionary")].startswith(
        "Often abbreviated as event dict.\n\nIt is passed through the processor chain, one "
        "tools.Processor at a time."
    )
    assert sections[("Glossary", "Bound Logger, Logger")].startswith(
        "An instance returned by tools.get_logger()."
    )
    text = "\n\n".join(chunk.text for chunk in chunks)
    assert "Processors never run in parallel." in text
    for leak in ("```", "{term}", "{class}", "{func}", "{doc}", ":::", "[^"):
        assert leak not in text, leak


def test_footnote_marks_go_and_the_notes_stay(tmp_path: Path) -> None:
    text = text_of(tmp_path, "output.md", NOTES)
    assert "The renderer offers colorful console output." in text
    assert "Requires the colour package on Windows." in text
    assert "Changed in version 2.0: Allow the final processor to return a dict." in text
    for leak in ("[^", "{any}", "`dict`"):
        assert leak not in text, leak


def test_rst_and_markdown_definitions_read_alike() -> None:
    rst = parse_rst("Title\n=====\n\n``host``:\n   Network host to bind.\n").blocks
    assert "host: Network host to bind." in rst
