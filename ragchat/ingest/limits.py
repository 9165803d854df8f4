"""How much one file may cost to parse: the bounds that make a small hostile file (a zip or flate
bomb, nesting without end) a skipped file instead of a hung ingest.

The byte limit (`max_file_mb`) bounds what is read from disk; these bound what it turns into. Each
refusal is an UnreadableFile whose message is the reason shown in the ingest summary.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import UnreadableFile

MB = 1 << 20
EXPANDED_MB = 32  # what a compressed file may expand to: a .docx's members, a PDF stream inflated
PARSE_SECONDS = 30.0  # the time one file may take to parse; longer and its worker is stopped
WORKER_MEMORY_MB = 384  # the parsing worker's data limit: past it a file is refused, not swapped
# A page's includes (includes.py): past these an include is one line naming it. A documentation
# page includes at most a few dozen example files of a few KB (FastAPI's largest page: 60); the
# budget keeps 150 copies of one 250 KB file from becoming 37 MB of text to parse.
INCLUDE_COUNT = 256
INCLUDE_CHARS = 2_000_000


@dataclass(frozen=True)
class Limits:
    chars: int  # characters of text one file may give
    expanded: int  # bytes one file may decompress to
    seconds: float = PARSE_SECONDS

    @classmethod
    def for_file_mb(cls, max_file_mb: float) -> Limits:
        """The character limit follows `max_file_mb` (a text file of that size fits, one character
        per byte); the expansion limit is fixed, at least the file limit."""
        size = int(max_file_mb * MB)
        return cls(chars=size, expanded=max(EXPANDED_MB * MB, size))

    def check_chars(self, count: int) -> None:
        if count > self.chars:
            raise UnreadableFile(
                f"more than {self.chars:,} characters of text (the limit follows max_file_mb)"
            )

    def check_expanded(self, size: int, what: str) -> None:
        if size > self.expanded:
            raise UnreadableFile(
                f"{what} expands to more than {self.expanded // MB} MB (a compression bomb?)"
            )


DEFAULT_LIMITS = Limits.for_file_mb(10.0)
