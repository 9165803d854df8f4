"""A parsed document: the value a loader returns (loaders.py) and chunking, labels and release
notes read."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Section:
    """The body text under one heading path: `ParsedDocument.text[start:end]` (no heading line)."""

    heading_path: tuple[str, ...]
    start: int
    end: int


@dataclass(frozen=True)
class ParsedDocument:
    """A loaded file. `encoding` is "utf-8" (always for PDFs) unless a fallback was needed."""

    title: str
    text: str
    sections: tuple[Section, ...]
    encoding: str = "utf-8"
    pages: tuple[tuple[int, int], ...] = ()  # (offset in text, page number) where each page starts

    def page_range(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last page of text[start:end], for documents with pages (PDFs)."""
        if not self.pages:
            return None
        first = next((n for offset, n in reversed(self.pages) if offset <= start), self.pages[0][1])
        last = next((n for offset, n in reversed(self.pages) if offset < end), first)
        return first, max(first, last)
