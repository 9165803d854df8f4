"""A page named and asked about as a whole: "what's the 'Add Typer' page about?", "in 'Complex
Applications', what's the lazy loading part about?", "what's that tutorial/click.md page about?";
and a summary asked of a part of the last answer's page ("summarize the watch methods part").

The shape, not a phrase: the question names a document unmistakably (a file name, a path, a
quoted title or a title typed whole: `search.titles.named_exactly`), that document leads the
turn's sources, and the question's own words besides the name are at most one once the words of
one of the page's headings are taken out ("lazy loading" names "Lazily Loading Subcommands").
Its passages then are that section's chunks, or the page's, in reading order
(`retrieve._page_in_order`), and the answer is the summary of that section, or of the page
(`answer.extractive.outline_summary`): its lead sentences and the headings right under it. A
question that asks something of its own about the page ("in 'Complex Applications', how do I
share a settings object?") is answered as any other.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from ..answer.extractive import SUMMARY_CUES, heading_levels
from ..lexicon import DEICTIC_NOUNS, META_NOUNS
from ..search.titles import name_spans, typed_titles
from ..store import library
from ..text import stem, stems, subject_words
from .models import Lineage


@dataclass(frozen=True)
class Outline:
    """The named page's chunks in reading order (chunk id, heading path, text) and the section of
    it the question asks about ("" for the whole page)."""

    chunks: tuple[tuple[int, str, str], ...]
    section: str
    title: str = ""  # the page's title


def asked_outline(db: Database, lineage: Lineage, named: Collection[int]) -> Outline | None:
    """The page or section the question asks about as a whole, when it names the page that
    leads the turn's sources, or, asking for a summary of the last answer's page, one of its
    sections by its heading's words ("summarize the watch methods part"); None for any other
    question. `named`: the documents the question names (`search.titles.named_exactly`, read
    once per turn)."""
    if not lineage.chunks:
        return None
    first = min(lineage.chunks, key=lambda c: c.rank).document_id
    summary = lineage.reformulation.is_meta and bool(SUMMARY_CUES.search(lineage.question))
    if lineage.reformulation.is_meta and not summary:
        return None
    if not summary and first not in named:
        return None
    chunks = tuple(library.outline(db, first))
    typed = list(typed_titles(db, lineage.question).values())
    section = asked_section(lineage.question, [heading for _, heading, _ in chunks], typed)
    if section is None or (summary and not _has_parts(section, chunks)):
        return None  # "summarize it" is the answer's summary; a part with no headings under it
        # is summed up by its sentences, as any summary
    title = library.documents_by_ids(db, [first]).get(first, {}).get("title") or ""
    return Outline(chunks, section, title)


def asked_section(question: str, headings: Sequence[str], titles: Sequence[str] = ()) -> str | None:
    """The heading path the question's own words name (the shallowest heading that holds one of
    them, the one holding most among those as shallow: "watching signals" names "Watching
    signals", not "Sending signals"), "" for the page; None when more than one of its own words
    is left besides the page's name (its quoted spans, file names and the `titles` it types) and
    that heading: the question asks something of its own."""
    name = stems(" ".join([*name_spans(question), *titles]))
    own = {
        stem(w)
        for w in subject_words(question)
        if w not in DEICTIC_NOUNS and w not in META_NOUNS and stem(w) not in name
    }
    best, depth, hit = "", len(headings) + 99, set[str]()
    for heading in dict.fromkeys(headings):
        for level, title in enumerate(heading_levels(heading)):
            found = own & stems(title)
            if found:
                if level < depth or (level == depth and len(found) > len(hit)):
                    best = " > ".join(heading_levels(heading)[: level + 1])
                    depth, hit = level, found
                break
    return best if len(own - hit) <= 1 else None


def _has_parts(section: str, chunks: Sequence[tuple[int, str, str]]) -> bool:
    """The section (a heading path, not the page) has headings under it."""
    depth = len(heading_levels(section))
    return depth > 0 and any(
        len(heading_levels(h)) > depth and heading_levels(h)[:depth] == heading_levels(section)
        for _, h, _ in chunks
    )


def numbered(outline: Outline, lineage: Lineage) -> list[tuple[int, str, str]]:
    """The page's chunks with the source number each is cited by: its own rank when the turn
    retrieved it, else the rank of the page's first source (the page it is on)."""
    ranks = {c.chunk_id: c.rank for c in lineage.chunks}
    page = min(ranks[chunk_id] for chunk_id, _, _ in outline.chunks if chunk_id in ranks)
    return [(ranks.get(i, page), heading, text) for i, heading, text in outline.chunks]
