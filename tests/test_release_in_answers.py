"""A line of release notes means nothing without its release: the first sentence an extractive
answer shows from a section under a version title says the version ("4.2.0: Sequence fields are
now structured into tuples ..."), once per source, not when the sentence names it already; a
section under no version title is shown as written."""

from __future__ import annotations

from pathlib import Path

from helpers import filler_pages, library_app

from ragchat.answer.extractive import _format
from ragchat.answer.units import Unit
from ragchat.ingest.releases import release_of

MIGRATIONS = """# Migrations

Upgrading sometimes changes behaviour in ways that break code. This page lists each change with
the way to restore the old behaviour.

## 4.2.0

### Sequences structure into tuples

Sequence fields are now structured into tuples instead of lists. Register the list factory for
sequence fields to get lists back.

## 4.1.0

### Sets structure into frozensets

Set fields are now structured into frozensets instead of sets.
"""
PAGES = {"migrations.md": MIGRATIONS} | filler_pages("fields")


def test_an_answer_from_a_release_section_says_the_release(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=200, chunk_overlap=0)
    turn = app.conversation("s").ask("why do my sequence fields come back as tuples now?")
    app.close()
    assert "4.2.0: Sequence fields are now structured into tuples instead of lists." in turn.answer
    assert turn.answer.count("4.2.0") == 1


def test_the_release_is_said_once_and_never_twice() -> None:
    assert release_of("Migrations > 4.2.0 > Sequences structure into tuples") == "4.2.0"
    assert release_of("History > 25.2.0 (2025-08-31)") == "25.2.0 (2025-08-31)"
    assert release_of("Guide > 1.2 Eligibility") == ""
    units = [
        (1, Unit(0, "- Potentially breaking: sequences are tuples.", kind="item")),
        (1, Unit(1, "- Sets are frozensets.", kind="item")),
        (2, Unit(0, "As of 3.0, hooks run first.")),
        (3, Unit(0, "Nothing versioned here.")),
    ]
    shown = _format(units, {1: "25.2.0 (2025-08-31)", 2: "3.0", 3: ""})
    assert shown.split("\n") == [
        "- 25.2.0 (2025-08-31): Potentially breaking: sequences are tuples. [1]",
        "- Sets are frozensets. [1]",
        "As of 3.0, hooks run first. [2]",
        "Nothing versioned here. [3]",
    ]
