"""What an ingest leaves out of a folder, like ripgrep: hidden files and folders (unless asked
for), the patterns of `.gitignore`, `.ignore` and `.ragchatignore` files met inside the folder
(each applies to its own subtree; a deeper file and a later line win, so `!keep.md` works), and
the `--exclude` globs remembered with the folder. Matching is gitignore's own (the `pathspec`
library's gitwildmatch), never a hand-written matcher.

The ingest's walk asks `reason(path)` for each entry; `--prune` asks `reason_anywhere(path)` for
each stored document under the folder, so what is now left out leaves the library too."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".ragchatignore")  # read in this order: a later file wins
HIDDEN = "hidden"
EXCLUDED = "--exclude"


def _spec(lines: Iterable[str]) -> pathspec.PathSpec | None:
    patterns = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    return pathspec.GitIgnoreSpec.from_lines(patterns) if patterns else None


@dataclass
class Rules:
    """The rules for one ingested folder (`root`); caches each folder's ignore files."""

    root: Path
    exclude: tuple[str, ...] = ()
    hidden: bool = False  # True: hidden files and folders are read like any other
    _folders: dict[Path, list[tuple[str, pathspec.PathSpec]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._excluded = _spec(self.exclude)

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


def summary(left_out: Iterable[tuple[str, str]]) -> dict[str, int]:
    """How many paths each reason left out, most first."""
    counts: dict[str, int] = {}
    for _, why in left_out:
        counts[why] = counts.get(why, 0) + 1
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))
