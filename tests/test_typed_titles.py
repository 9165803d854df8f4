"""A page named by its title typed without quotes (issues 28 and 30): "walk me through the One
File Per Command tutorial" names the page titled "One File Per Command", its page leads and a
question about it as a whole is told by its outline; a short title of common words ("First
Steps") names its page only when the question asks for the page, never when it reads as
ordinary words ("how do I take my first steps with the tool?")."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import library_app

from ragchat.app import App
from ragchat.search.titles import named_exactly, typed_titles
from ragchat.store import library

PAGES = {
    "one-file-per-command.md": """# One File Per Command

When a tool grows, each command can live in a module of its own and the main module adds them.

## The version module

The version module holds one command that prints the version and nothing else.

## The main module

The main module imports each command module and calls app.add_module(version_module) for it.
""",
    "first-steps.md": """# First Steps

Install the tool, then write a script with one function and run it from the shell.

## Run it

The first run prints the greeting; the first steps of any tool are the same.
""",
    "commands.md": """# Commands

A tool has commands; the first command declared is the default one. Each command has a name,
a help text and its own options, and the steps a command takes are its body.
""",
    "options.md": """# Options

An option is a named value given on the command line. The first option of a command is read
first; options have defaults, a help text and a type.
""",
}


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory, embedder) -> App:
    root = tmp_path_factory.mktemp("typed-titles")
    return library_app(root, PAGES, embedder, chunk_size=300, chunk_overlap=0)


def _paths(app: App, ids: set[int]) -> set[str]:
    return {Path(d["path"]).name for d in library.documents_by_ids(app.db, ids).values()}


@pytest.mark.parametrize(
    ("question", "page"),
    [
        ("walk me through the One File Per Command tutorial", "one-file-per-command.md"),
        ("how does one file per command work?", "one-file-per-command.md"),
        ("what does First Steps say?", "first-steps.md"),  # typed with its capitals
        ("summarize first steps", "first-steps.md"),  # asks for the page, nothing else
    ],
)
def test_a_title_typed_whole_names_its_page(tools: App, question: str, page: str) -> None:
    assert _paths(tools, named_exactly(tools.db, question)) == {page}


@pytest.mark.parametrize(
    "question",
    [
        "how do I take my first steps with the tool?",  # words of its own besides the title
        "what are the first steps?",  # neither asks for a page nor types it as a name
        "what are the commands?",  # a title of one word
        "which option is read first in one file?",  # part of a title is no title
    ],
)
def test_a_short_common_title_read_as_ordinary_words_names_nothing(
    tools: App, question: str
) -> None:
    assert named_exactly(tools.db, question) == set()


def test_the_longest_title_typed_wins(tools: App) -> None:
    named = typed_titles(tools.db, "summarize One File Per Command")
    assert set(named.values()) == {"one file per command"}


def test_a_page_named_by_its_typed_title_is_read_in_order_and_told_by_its_outline(
    tools: App,
) -> None:
    result = tools.conversation("typed").ask("summarize the One File Per Command page")
    assert result.lineage.chunks[0].document == "one-file-per-command.md"
    first = [(c.document, c.heading) for c in result.lineage.chunks[:3]]
    assert first == [  # its passages: the page in reading order
        ("one-file-per-command.md", ""),
        ("one-file-per-command.md", "The version module"),
        ("one-file-per-command.md", "The main module"),
    ]
    lines = result.answer.splitlines()
    assert lines[0].startswith("When a tool grows")  # the page's lead, then its parts
    parts = [line.split(":")[0] for line in lines[1:]]
    assert parts == ["- The version module", "- The main module"]
