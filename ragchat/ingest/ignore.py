"""What an ingest leaves out of a folder, like ripgrep: hidden files and folders (unless asked
for), the patterns of `.gitignore`, `.ignore` and `.ragchatignore` files met inside the folder
(each applies to its own subtree; a deeper file and a later line win, so `!keep.md` works), and
the `--exclude` globs remembered with the folder. Matching is gitignore's own (the `pathspec`
library's gitwildmatch, run by RE2: linear time, so a pattern of many stars cannot stall the walk),
never a hand-written matcher.

`Scope` is what one ingest may read: its walk asks `Scope.entry_reason` for each entry, and the
includes of a page ask `Scope.reason_anywhere` of the file they name (each folder on the way is
asked the walk's question), so a page can include exactly the files the walk would read.
`--prune` asks `Rules.reason_anywhere(path)` for each stored document under the folder, so what
is now left out leaves the library too."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

import pathspec

from ..config import LIBRARY_DIR

IGNORE_FILES = (".gitignore", ".ignore", ".ragchatignore")  # read in this order: a later file wins
HIDDEN = "hidden"
EXCLUDED = "--exclude"
LIBRARY = "a library's own folder"
SYMLINK_OUTSIDE = "symlink outside the ingested folders"
OUTSIDE = "outside the ingested folders"
MISSING = "no such file"


def _spec(lines: Iterable[str]) -> pathspec.PathSpec | None:
    patterns = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    # RE2: gitwildmatch's regexes backtrack exponentially on many stars in Python's re
    return pathspec.GitIgnoreSpec.from_lines(patterns, backend="re2") if patterns else None


@dataclass
class Rules:
    """The rules for one ingested folder (`root`); caches each folder's ignore files."""

    root: Path
    exclude: tuple[str, ...] = ()
    hidden: bool = False  # True: hidden files and folders are read like any other
    _folders: dict[Path, list[tuple[str, pathspec.PathSpec]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._excluded = _spec(self.exclude)

    def __getstate__(self) -> dict[str, Any]:  # sent to the parsing worker: patterns, not regexes
        return {"root": self.root, "exclude": self.exclude, "hidden": self.hidden}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(**state)  # type: ignore[misc]

    def _specs_of(self, folder: Path) -> list[tuple[str, pathspec.PathSpec]]:
        """The ignore files directly in `folder`, as (file name, spec)."""
        if folder not in self._folders:
            found = []
            for name in IGNORE_FILES:
                try:
                    spec = _spec(
                        (folder / name).read_text(encoding="utf-8", errors="replace").splitlines()
                    )
                except OSError:
                    continue
                if spec is not None:
                    found.append((name, spec))
            self._folders[folder] = found
        return self._folders[folder]

    def reason(self, path: Path, is_dir: bool) -> str | None:
        """Why `path` (inside root) is left out, given that its folders are not; None to keep it."""
        if not self.hidden and path.name.startswith("."):
            return HIDDEN
        if is_dir and path.name == LIBRARY_DIR:  # never documents, even with hidden files read
            return LIBRARY
        relative = path.relative_to(self.root).as_posix() + ("/" if is_dir else "")
        verdict: str | None = None
        for folder in [self.root, *reversed(path.relative_to(self.root).parents[:-1])]:
            base = folder if folder == self.root else self.root / folder
            inner = path.relative_to(base).as_posix() + ("/" if is_dir else "")
            for name, spec in self._specs_of(base):
                result = spec.check_file(inner).include
                if result is not None:
                    verdict = name if result else None
        if self._excluded is not None and self._excluded.match_file(relative):
            return EXCLUDED
        return verdict

    def reason_anywhere(self, path: Path) -> str | None:
        """Why `path` is left out, its folders included (a file in an ignored folder is ignored)."""
        try:
            parts = path.relative_to(self.root).parts
        except ValueError:
            return None
        current = self.root
        for depth, part in enumerate(parts):
            current = current / part
            why = self.reason(current, is_dir=depth < len(parts) - 1)
            if why:
                return why
        return None


@dataclass
class Scope:
    """What one ingest reads: the folders given (each with its rules) and the files given; never
    the library's own folder; symlinks only when they resolve inside the paths given (like
    ripgrep), or any with `follow_all`."""

    folders: tuple[Rules, ...]
    files: tuple[Path, ...] = ()  # resolved
    excluded: frozenset[Path] = frozenset()  # resolved folders never read (the library's own)
    follow_all: bool = False

    @cached_property
    def given(self) -> tuple[Path, ...]:
        """Every path given, resolved."""
        return tuple(_resolved(rules.root) for rules in self.folders) + self.files

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k not in _CACHES}

    def link_allowed(self, link: Path) -> bool:
        if self.follow_all:
            return True
        try:
            target = link.resolve()
        except (OSError, RuntimeError):  # a loop (RuntimeError before Python 3.13): reading says so
            return True
        return any(target == given or target.is_relative_to(given) for given in self.given)

    def entry_reason(self, rules: Rules, path: Path, is_dir: bool, is_link: bool) -> str | None:
        """Why the walk of `rules.root` leaves out `path` (its folders are not); None: read it."""
        if why := rules.reason(path, is_dir):
            return why
        if is_link and not self.link_allowed(path):
            return SYMLINK_OUTSIDE
        if is_dir and self.excluded and _resolved(path) in self.excluded:
            return LIBRARY
        return None

    def reason_anywhere(self, path: Path) -> str | None:
        """Why the walk would not read the file `path` (absolute, without `..`), asking the walk's
        question of each folder on the way from the folder given that holds it; None: it would.
        Folders' answers are kept for the ingest (what decides them is their names and links)."""
        for rules, roots in self._roots:
            for root in roots:
                if path == root or not path.is_relative_to(root):
                    continue
                parts = path.relative_to(root).parts
                current = rules.root
                for depth, part in enumerate(parts):
                    current = current / part
                    last = depth == len(parts) - 1
                    if last or current not in self._folders:
                        why = self._entry_reason_now(rules, current, not last)
                        if last:
                            return why
                        self._folders[current] = why
                    if self._folders[current]:
                        return self._folders[current]
                return None
        return None if _resolved(path) in self.files else OUTSIDE

    @cached_property
    def _folders(self) -> dict[Path, str | None]:
        return {}

    @cached_property
    def _roots(self) -> list[tuple[Rules, tuple[Path, ...]]]:
        """Each folder given with its absolute and resolved paths."""
        return [
            (rules, tuple(dict.fromkeys((_absolute(rules.root), _resolved(rules.root)))))
            for rules in self.folders
        ]

    def _entry_reason_now(self, rules: Rules, path: Path, is_dir: bool) -> str | None:
        try:
            mode = os.lstat(path).st_mode
        except (OSError, ValueError):
            return MISSING
        return self.entry_reason(rules, path, is_dir, stat.S_ISLNK(mode))


_CACHES = ("given", "_folders", "_roots")


def _absolute(path: Path) -> Path:
    return Path(os.path.normpath(path.absolute()))


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError, ValueError):
        return _absolute(path)


def summary(left_out: Iterable[tuple[str, str]]) -> dict[str, int]:
    """How many paths each reason left out, most first."""
    counts: dict[str, int] = {}
    for _, why in left_out:
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
