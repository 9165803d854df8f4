"""Release notes (changelogs, "what's new" histories) recognised by their shape: most of their
section titles are versions or dates ("Version 3.1.0", "0.27.1 (2026-08-03)", "3.18.x series",
"2024-05-01"), whatever the language or the file name. Pure.

Such documents answer questions about versions and changes, and crowd out the pages that answer
everything else (a long changelog mentions every feature once per release): retrieval keeps them
below ordinary pages unless the question names a version or a date (`asks_about_versions`), and
ingest says when they are a large share of the library.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .parsed import ParsedDocument

RELEASE_NOTES = "release-notes"  # documents.kind: one document holding many releases
RELEASE_SERIES = "release-series"  # documents.kind: one page a release, in a folder of such pages
RELEASE_KINDS = (RELEASE_NOTES, RELEASE_SERIES)

# a version (two or more dotted parts, "v2", "3.18.x"), with a pre- or post-release after it
# as PEP 440 and SemVer write one ("18.3a0", "2.0rc1", "1.0.0-beta.2", "1.4.post1"), or a date
# (ISO, or a year on its own)
_PRE_RELEASE = r"(?:[-.]?(?:a|b|c|rc)\d+|[-.]?(?:alpha|beta|pre|preview|dev|post)(?:\.?\d+)?)"
_VERSION = re.compile(
    rf"(?<![\w.])v?\d+(?:\.(?:\d+|x|\*))+{_PRE_RELEASE}?(?![\w])|(?<![\w.])v\d+(?![\w.])", re.I
)
_DATE = re.compile(r"(?<!\d)(?:1[89]|20)\d{2}(?:[-/.]\d{1,2}(?:[-/.]\d{1,2})?)?(?!\d)")
_MIN_VERSIONS = 3  # a page with two version headings is a migration guide, not a history
_MIN_SHARE = 0.5  # "most" of its distinct section titles
_MIN_HISTORY = 10  # versions at its top level alone that make a history: a migration guide or a
# "what's new" page walks through a few releases (cattrs' 3, dynaconf's 4), a changelog lists
# them all (beanie's 140, mkdocs' 50)
NOTICE_SHARE = 0.2  # ingest says so when release notes are this share of the library's chunks


def names_version(text: str) -> bool:
    """Whether `text` holds a version number or a date."""
    return bool(_VERSION.search(text) or _DATE.search(text))


_ISO_DATE = re.compile(r"(?<!\d)(?:1[89]|20)\d{2}[-/.](?:0?[1-9]|1[0-2])[-/.]\d{1,2}(?!\d)")
_LEADING_NUMBER = re.compile(r"^\W*(\d+(?:\.\d+)*)\.?(?:\s+(.*))?$")
_DATE_PARTS = re.compile(r"[\s,.()/-]+")


def is_version_heading(heading: str) -> bool:
    """A release's title: a date ("2024-05-01"), a version after a word ("Version 3.1",
    "pytest 8.0.0", "v2"), or a version alone or before a date ("0.27.1 (2026-08-03)", "0.47.3
    (August 24, 2025)", "3.18.x series"). A section number before its title ("1.2 Eligibility",
    "3 Results") is not one: only three-part numbers ("3.1.0") are read as versions at the start
    of a heading."""
    if _ISO_DATE.search(heading):
        return True
    match = _VERSION.search(heading)
    if match is None:
        return False
    if not _LEADING_NUMBER.match(heading[: match.start()] + "0"):
        return True  # a word before it
    rest = heading[match.end() :].strip(" .:-\u2013\u2014()[]")
    return not rest or (
        (match.group(0).count(".") >= 2 or "x" in match.group(0).lower())
        and (len(rest.split()) <= 1 or _written_date(rest))
    )


def _written_date(text: str) -> bool:
    """`text` is a date written out, in any language: a year, at most one other number (the
    day) and at most three words ("August 24, 2025", "24 août 2025", "24 de agosto de 2025")."""
    parts = [part for part in _DATE_PARTS.split(text) if part]
    numbers = [part for part in parts if part.isdigit()]
    return bool(_DATE.search(text)) and len(numbers) <= 2 and len(parts) - len(numbers) <= 3


def is_release_notes(document: ParsedDocument) -> bool:
    """Whether most of the document's distinct section titles (below its own title) are versions
    or dates, with at least _MIN_VERSIONS of them: over its whole outline, or at its top level.
    Repeated titles ("Bug Fixes" under every version) count once. A changelog whose releases
    each list their changes under titles of their own ("## [2.1.0] - 2026-03-20", then "###
    Fix: handle BackLink types in fetch_link" and a hundred more) has most of its titles below
    the versions, and its versions are still most of its top level: that is enough when they
    are at least _MIN_HISTORY (a migration guide's few versioned sections explain, and rank as a
    page). Deeper levels alone say nothing: "Before (0.284.x)" / "After (0.285.0+)" under one
    breaking change are not releases."""
    title = document.title.strip().casefold()
    every: set[str] = set()
    top: set[str] = set()
    for section in document.sections:
        path = [h for h in (h.strip().casefold() for h in section.heading_path) if h != title]
        every.update(path)
        top.update(path[:1])
    return _mostly_versions(every, _MIN_VERSIONS) or _mostly_versions(top, _MIN_HISTORY)


def _mostly_versions(headings: set[str], least: int) -> bool:
    versions = sum(is_version_heading(heading) for heading in headings)
    return versions >= least and versions >= _MIN_SHARE * len(headings)


def release_series(documents: Iterable[tuple[int, str, str]]) -> set[int]:
    """Of `documents` (id, source path, title), the release announcements published one page a
    release ("Hatch v1.17.0", "Django 4.2 release notes", "What's new in 3.12"): pages titled by
    a version in a folder where at least _MIN_VERSIONS pages are, and they are most of its
    pages. A lone page titled by a version ("Migrating to 2.0") is not one: the folder of pages
    is the sign, whatever the language or the file names."""
    folders: dict[str, list[tuple[int, bool]]] = {}
    for document_id, source, title in documents:
        folder = source.replace("\\", "/").rpartition("/")[0]
        folders.setdefault(folder, []).append((document_id, is_version_heading(title or "")))
    series: set[int] = set()
    for pages in folders.values():
        versioned = [document_id for document_id, titled in pages if titled]
        if len(versioned) >= _MIN_VERSIONS and len(versioned) >= _MIN_SHARE * len(pages):
            series.update(versioned)
    return series


def versions_in(text: str) -> set[str]:
    """The version numbers `text` names ("v2.1.0" and "2.1.0" alike)."""
    return {match.group(0).lower().lstrip("v") for match in _VERSION.finditer(text)}


def names_release(asked: set[str], named: set[str]) -> bool:
    """Whether versions `named` (a heading's, a page title's) include one of the versions
    `asked` about, a shorter version standing for its releases ("1.10" for "1.10.0", "1.10.2",
    "1.10.x")."""
    return any(
        version == wanted or version.startswith(wanted + ".")
        for wanted in asked
        for version in named
    )


def asks_about_versions(question: str) -> bool:
    """The language-neutral sign that a question is about releases: it names a version or a
    date ("what changed in 3.1?", "since 2023")."""
    return names_version(question)


def section_label(heading: str) -> str:
    """A chunk's section as a short label: its last heading, from the deepest heading that names
    a version or a date ("0.27.1 (2026-08-03) > Features" -> "0.27.1 (2026-08-03) › Features"), so
    the "Bug Fixes" of one release is never shown as anyone's."""
    crumbs = _crumbs(heading)
    versioned = [i for i, crumb in enumerate(crumbs) if names_version(crumb)]
    return " \u203a ".join(crumbs[versioned[-1] :] if versioned else crumbs[-1:])


def release_of(heading: str) -> str:
    """The release a chunk's section belongs to: the deepest title of its heading path that is
    a version or a date ("25.2.0" for "25.2.0 > Sequences structuring into tuples"), else ""."""
    return next((crumb for crumb in reversed(_crumbs(heading)) if is_version_heading(crumb)), "")


def _crumbs(heading: str) -> list[str]:
    """A chunk's heading path ("Changelog > 2.2.0 > Bug Fixes") as its titles."""
    return [crumb for crumb in heading.split(" > ") if crumb]
