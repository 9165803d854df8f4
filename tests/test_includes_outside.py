"""A Sphinx index often includes the project's README from above the docs folder (`.. include::
../README.md`: loguru's and structlog's docs, never used here): `ragchat ingest docs` reads
nothing outside the paths given, so each such include is one line naming it ("included page:
../README.md, not in the library"), and the ingest says so once, with the command that reads
them. Only the project's files are named (a hidden one never, nor one above the repository: a
page cannot talk its reader into ingesting `../../../../etc/passwd`); given the files too, the
pages hold their text, and a given file of a type ingest does not read is not "skipped" when a
page includes it."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from helpers import invoke

INDEX = """Widgets
=======

.. include:: ../README.md

.. include:: ../.env

.. include:: ../../notes-outside-the-project.txt
"""
GUIDE = """Guide
=====

How to turn a widget.

.. literalinclude:: ../examples/turn.py
"""
README = "# Widgets\n\nWidgets turn the crank twice per call with `widget.turn(times=2)`.\n"
SECRET = "AKIA-OUTSIDE-5521"


def test_ingest_names_the_files_pages_include_from_outside(
    tmp_path: Path, runner, monkeypatch
) -> None:
    monkeypatch.setenv("COLUMNS", "4000")  # the note is one line
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / "examples").mkdir()
    (project / "docs" / "index.rst").write_text(INDEX)
    (project / "docs" / "guide.rst").write_text(GUIDE)
    (project / "README.md").write_text(README)
    (project / ".env").write_text(f"KEY={SECRET}\n")
    (project / ".git").mkdir()  # the repository: a file above it is no file of the project
    (tmp_path / "notes-outside-the-project.txt").write_text(f"{SECRET}\n")
    (project / "examples" / "turn.py").write_text("widget.turn(times=2)\n")
    db = tmp_path / "lib.db"

    first = invoke(runner, "ingest", project / "docs", "--db", db)
    assert first.exit_code == 0, first.output
    notes = [line for line in first.output.splitlines() if "outside the paths given" in line]
    assert len(notes) == 1, first.output
    note = notes[0]
    assert "../README.md (in index.rst)" in note and "../examples/turn.py (in guide.rst)" in note
    assert ".env" not in note and "notes-outside" not in note and SECRET not in first.output
    command = shlex.split(note.split("to read them: ")[1])
    # the --db given goes with the advice: the command as printed reads into the same library
    assert command[:4] == ["ragchat", "ingest", "--db", str(db)]
    assert command[4:] == [str(project / "docs"), str(project / "README.md"),
                           str(project / "examples" / "turn.py")]  # fmt: skip
    text = (invoke(runner, "search", "widget turn crank", "--db", db, "--json")).output
    assert "included page: ../README.md, not in the library" in text

    again = invoke(runner, *command[1:])
    assert again.exit_code == 0, again.output
    assert "outside the paths given" not in again.output
    # turn.py, a type ingest does not read as a document, is read where guide.rst includes it:
    # not "skipped" for following the advice
    assert "unsupported file type" not in again.output and "0 skipped" in again.output
    assert "included by another document" in again.output
    found = invoke(runner, "search", "widget turn crank", "--db", db, "--json").output
    assert "turn the crank twice per call" in found
    assert not re.search(r"included page: \.\./README\.md", found)
    assert SECRET not in found


def _release_page(count: int) -> str:
    return "Changes\n=======\n\n" + "".join(
        f"Version 2.{n}.0\n-------------\n\n- Fixed crank {n}.\n- Added widget {n}.\n\n"
        for n in range(count, 0, -1)
    )


def test_the_release_notes_advice_keeps_the_files_pages_include(
    tmp_path: Path, runner, monkeypatch
) -> None:
    """webargs' docs (never used here before) include AUTHORS, CONTRIBUTING and LICENSE from
    above the folder, and their changelog is half the library: the ingest advised reading the
    included files, then leaving the release notes out with the folder alone, which dropped the
    included files again, so the first advice came back (four runs). Each advice now reads what
    the other does: typed one after the other, neither undoes the other."""
    monkeypatch.setenv("COLUMNS", "4000")
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "docs" / "index.rst").write_text("Widgets\n=======\n\n.. include:: ../AUTHORS.rst\n")
    (project / "docs" / "changelog.rst").write_text(_release_page(14))
    (project / "AUTHORS.rst").write_text("Authors\n=======\n\n- Ada Crank, who turned it twice\n")
    db = tmp_path / "lib.db"

    first = invoke(runner, "ingest", project / "docs", "--db", db)
    assert first.exit_code == 0, first.output
    release = next(line for line in first.output.splitlines() if "release notes are" in line)
    command = shlex.split(release.split("to leave them out: ")[1])
    assert command[:4] == ["ragchat", "ingest", "--db", str(db)]
    assert command[4:6] == [str(project / "docs"), str(project / "AUTHORS.rst")], command
    assert command[6:] == ["--exclude", "/changelog.rst", "--prune"], command

    again = invoke(runner, *command[1:])
    assert again.exit_code == 0, again.output
    assert "outside the paths given" not in again.output and "release notes" not in again.output
    found = invoke(runner, "search", "Ada Crank turned", "--db", db, "--json").output
    assert "Ada Crank, who turned it twice" in found and "included page" not in found
    documents = invoke(runner, "documents", "--db", db).output
    assert "changelog.rst" not in documents and "index.rst" in documents


def test_following_every_advice_ends_in_a_library_without_notes(
    tmp_path: Path, runner, monkeypatch
) -> None:
    """webargs' release notes are `../CHANGELOG.rst`, which `docs/changelog.rst` includes: read
    as the first advice says, the page is release notes; left out as the second says, with the
    included file still among the paths, the file came back as a document of release notes and a
    third advice asked to leave it out too. A file only the release notes include is not in the
    advice's command: each advice typed as printed, in turn, and the ingest has no more to say."""
    monkeypatch.setenv("COLUMNS", "4000")
    project = tmp_path / "project"
    (project / "docs").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "docs" / "index.rst").write_text("Widgets\n=======\n\n.. include:: ../AUTHORS.rst\n")
    (project / "docs" / "changelog.rst").write_text(".. include:: ../CHANGELOG.rst\n")
    (project / "CHANGELOG.rst").write_text(_release_page(14))
    (project / "AUTHORS.rst").write_text("Authors\n=======\n\n- Ada Crank, who turned it twice\n")
    db = tmp_path / "lib.db"

    output = invoke(runner, "ingest", project / "docs", "--db", db).output
    runs = 1
    while advice := re.search(r"(?:to read them|to leave them out): (ragchat ingest .*)", output):
        assert runs < 4, output
        output = invoke(runner, *shlex.split(advice.group(1))[1:]).output
        runs += 1
    assert runs == 3, output  # read the included files, then leave the release notes out
    documents = invoke(runner, "documents", "--db", db).output
    assert "CHANGELOG" not in documents and "changelog" not in documents, documents
    found = invoke(runner, "search", "Ada Crank turned", "--db", db, "--json").output
    assert "Ada Crank, who turned it twice" in found
