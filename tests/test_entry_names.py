"""A reference page titles each entry by its name and its text leaves the name out ("[report]
fail_under" over "(float) A target coverage percentage ..."): the first sentence an extractive
answer shows from such a section says the name, unless it already does; a section titled in
words is shown as written."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import filler_pages, library_app

from ragchat.text import is_name

CONFIG = """Configuration reference
=======================

Settings are read from a configuration file with one section for each command.

[report]
--------

Settings for the reporting commands.

[report] fail_under
...................

(float) A target coverage percentage. If the total coverage measurement is under this value,
then exit with a status code of 2.

[report] precision
..................

(integer) The number of digits after the decimal point to display for reported coverage
percentages.

Reading the file
----------------

(float) values are read as written, and a missing file is not an error.
"""
PAGES = {"config.rst": CONFIG} | filler_pages("coverage")


def test_an_answer_from_an_entry_says_its_name(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=200, chunk_overlap=0)
    turn = app.conversation("s").ask("how do I fail when the total coverage percentage is too low?")
    app.close()
    assert "[report] fail_under: (float) A target coverage percentage." in turn.answer
    assert turn.answer.count("fail_under") == 1


def test_a_section_titled_in_words_gets_no_label(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=200, chunk_overlap=0)
    turn = app.conversation("s").ask("is a missing configuration file an error when reading it?")
    app.close()
    assert "a missing file is not an error" in turn.answer
    assert "Reading the file:" not in turn.answer


@pytest.mark.parametrize(
    "heading",
    [
        "[run] branch",
        "--keep",
        "site_name",
        "theme",
        "cattrs.Converter",
        ".route()",
        "to_base_units / ito_base_units",
        "max-line-length",
        "SessionMiddleware",
        "models.py",
    ],
)
def test_names(heading: str) -> None:
    assert is_name(heading)


@pytest.mark.parametrize(
    "heading",
    [
        "Installation",
        "Quick start",
        "Select with session.get()",
        "Third-party projects",
        "1.0.0",
        "The merge_threadlocal processor",
        "How default and flag_value interact",
        "API",
        "Built-in",
    ],
)
def test_titles_in_words(heading: str) -> None:
    assert not is_name(heading)
