"""Documents found by their title and file name: "What is PEP 723 about?" names pep-0723.rst,
"the deployment guide" names deployment-guide.md.

Every document's title and file name are indexed in `documents_fts` (`store/titles.py`), a number
as written and without its leading zeros; a question's numbers are searched without them, so
"pep 8" finds pep-0008.rst.

A question names a document when the document's title and name hold most of the question's
words, each word weighted by its rarity among the titles (idf): "pep" is in every PEP's name and
weighs nothing, "723" is in one and decides; a word no title holds weighs most, so a question
about something else ("what age must a witness be?") names no document even when one title
shares a word with it. The documents it names become one more ranked list for the fusion (each
document's chunks closest to the question first), a signal that does not depend on the language.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from sqlite_utils import Database

from ..lexicon import DEICTIC_NOUNS, FILLER, META_NOUNS, QUESTION_WORDS, STOPWORDS
from ..store import library
from ..store import terms as terms_store
from ..store import titles as title_index
from ..store.titles import SPLIT, number_form
from ..store.vectors import vectors_of
from ..text import words
from .fts import phrase_match, quote

NAMES_COVERAGE = 0.6  # share of the question's idf weight a document's title and name must hold
NAME_RARITY = 0.05  # the words a title shares with a question must be together as rare as one
# word found in this share of the library's chunks: words every page uses name nothing
MAX_DOCUMENTS = 3  # documents a question may name
CHUNKS_PER_DOCUMENT = 2  # each named document's chunks closest to the question, in the list
TITLE_WORDS = 4  # a title typed whole with this many words names its page whatever its words:
# "One File Per Command"; a shorter one ("First Steps", "Using the CLI") reads as ordinary words
MAX_QUESTION_WORDS = 60  # the words of a question searched for typed titles (a pasted text is long)
# the words that say nothing of a question's subject: a question made of these and a title asks
# about the page ("summarize First Steps", "what does First Steps say?")
NO_SUBJECT = STOPWORDS | QUESTION_WORDS | FILLER | DEICTIC_NOUNS | META_NOUNS
ASKING = QUESTION_WORDS | DEICTIC_NOUNS | META_NOUNS  # "summarize", "page", "overview"


def question_terms(question: str) -> list[str]:
    """The words of a question that can name a document (numbers without leading zeros)."""
    found = [
        number_form(w)
        for w in words(SPLIT.sub(" ", question))
        if w not in STOPWORDS and w not in QUESTION_WORDS and (len(w) > 1 or w.isdigit())
    ]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Named:
    document_id: int
    coverage: float  # share of the question's idf weight its title and name hold (1: by identifier)


# a file name or path as typed: "guidelines.rst", "tutorial/click.md" (an extension of letters)
_FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,4})(?![\w/])")
# a quoted span: 'Add Typer', "Switching from other engines", `click.md`
_QUOTED = re.compile(
    r"""(?:^|(?<=\W))['"`\u2018\u201c]([^'"`\u2019\u201d\n]{2,80})['"`\u2019\u201d]"""
)


def named_documents(
    db: Database, question: str, within: frozenset[int] | None = None
) -> list[Named]:
    """The documents a question names, best first (empty for most questions): by a file name or
    path, by a quoted title, by an identifier (a word with its number: "ADR 3", "PEP 8"), else by
    the rare words of its title and name; among the documents `within` only, when given (a
    scoped question)."""
    total = title_index.titled_documents(db)
    if total is None:
        return []
    exact = _by_identifier(db, question, total)
    if within is not None:
        exact &= within
    if exact:
        return [Named(d, 1.0) for d in sorted(exact)][:MAX_DOCUMENTS]
    return _by_words(db, question, total, within)


def named_exactly(db: Database, question: str) -> set[int]:
    """The documents a question names by a file name, a path, a quoted title or a title typed
    whole (`typed_titles`; no guess from its words), and nothing when the library has no
    titles."""
    return set() if title_index.titled_documents(db) is None else _by_identifier(db, question, 0)


def name_spans(question: str) -> list[str]:
    """The file names, paths and quoted spans a question names documents with."""
    return [*_FILE.findall(question), *_QUOTED.findall(question)]


def typed_titles(db: Database, question: str) -> dict[int, str]:
    """The documents whose whole title the question types without quotes, with that title:
    "walk me through the One File Per Command tutorial" names the page titled "One File Per
    Command". The title's words must be a run of the question's words (any case, in order), the
    longest such run wins, at most MAX_DOCUMENTS documents may hold it, and the title must be
    distinctive: TITLE_WORDS words or more, or words each rare in the library's text
    (`NAME_RARITY`, the bar of a name guessed from words). A shorter title of common words
    ("First Steps") names its page only when the question says nothing else of its own (its
    other words ask, point or fill: `NO_SUBJECT`) and either asks for the page ("summarize first
    steps") or types the title with its capitals ("what does First Steps say?"): "what are the
    first steps?" names nothing. A title of one word never does unquoted."""
    if title_index.titled_documents(db) is None:
        return {}
    typed = words(SPLIT.sub(" ", question))[:MAX_QUESTION_WORDS]
    pairs = {
        f"{a} {b}"
        for a, b in zip(typed, typed[1:], strict=False)
        if a not in STOPWORDS or b not in STOPWORDS
    }
    if not pairs:
        return {}
    match = " OR ".join(f"title : {quote(pair)}" for pair in sorted(pairs))
    holders = title_index.title_holders(db, match)
    spans: dict[tuple[str, ...], set[int]] = {}
    for document_id, row in library.documents_by_ids(db, holders).items():
        title = tuple(words(SPLIT.sub(" ", row.get("title") or "")))
        if len(title) >= 2 and _run_at(typed, title) is not None:
            spans.setdefault(title, set()).add(document_id)
    longest = sorted(spans, key=len, reverse=True)
    found: dict[int, str] = {}
    taken: list[tuple[int, int]] = []
    for title in longest:
        start = _run_at(typed, title)
        assert start is not None
        end = start + len(title)
        if any(s <= start and end <= e for s, e in taken) or len(spans[title]) > MAX_DOCUMENTS:
            continue
        rest = typed[:start] + typed[end:]
        if _distinctive(db, title) or _asks_for_page(question, rest, spans[title], db):
            taken.append((start, end))
            found |= {document_id: " ".join(title) for document_id in spans[title]}
    return found


def _run_at(typed: Sequence[str], title: Sequence[str]) -> int | None:
    """Where the title's words start as a run of the question's words, if they do."""
    n = len(title)
    return next(
        (i for i in range(len(typed) - n + 1) if tuple(typed[i : i + n]) == tuple(title)), None
    )


def _distinctive(db: Database, title: Sequence[str]) -> bool:
    """A title long enough to be typed only as a name, or of two words or more (besides stop
    words) each as rare in the library's text as a word found in `NAME_RARITY` of its chunks:
    "first" of "First Steps" is in 9 % of a docs library's chunks, so "how do I take my first
    steps with typer" names no page."""
    if len(title) >= TITLE_WORDS:
        return True
    terms = [number_form(w) for w in dict.fromkeys(title) if w not in STOPWORDS]
    if len(terms) < 2:
        return False
    chunks = max(terms_store.chunk_count(db), 1)
    enough = _idf(chunks, round(NAME_RARITY * chunks))
    return all(_idf(chunks, _library_frequency(db, term)) >= enough for term in terms)


def _asks_for_page(question: str, rest: Sequence[str], documents: set[int], db: Database) -> bool:
    """The question's words besides a title say nothing of their own, and it asks for the page
    or types the title with its capitals past its first word."""
    if any(w not in NO_SUBJECT for w in rest):
        return False
    if any(w in ASKING for w in rest):
        return True
    titles = {row.get("title") or "" for row in library.documents_by_ids(db, documents).values()}
    for title in titles:
        parts = [re.escape(part) for part in title.split()]
        if not any(c.isupper() for c in title):
            continue
        typed = re.search(r"(?<=\W)" + r"\W+".join(parts) + r"(?!\w)", question)
        if typed is not None and question[: typed.start()].strip(" \t\"'`([{"):
            return True
    return False


def _by_identifier(db: Database, question: str, total: int) -> set[int]:
    """Documents the question names unmistakably: its file names and paths, a quoted span that
    is a title or name, a number with the word before it ("ADR 3") that few names hold, a
    distinctive title typed whole (`typed_titles`)."""
    found: set[int] = set()
    for name in _FILE.findall(question):
        found |= library.documents_at(db, name.lstrip("./"))
    for span in _QUOTED.findall(question):
        terms = question_terms(span)
        held = _holding_all(db, terms) if terms else set()
        if 0 < len(held) <= MAX_DOCUMENTS:
            found |= held
    for pair in _numbered(question):
        held = _holding_all(db, pair)
        if 0 < len(held) <= MAX_DOCUMENTS:
            found |= held
    return found | set(typed_titles(db, question))


def _numbered(question: str) -> list[list[str]]:
    """Each number of the question with the word before it: "ADR 3" -> ["adr", "3"]."""
    tokens = question_terms(question)
    return [
        [before, token]
        for before, token in zip(tokens, tokens[1:], strict=False)
        if token.isdigit() and not before.isdigit()
    ]


def _holding_all(db: Database, terms: list[str]) -> set[int]:
    """Documents whose title or name holds every term, each within two words of the next
    ("adr 0003 3" holds "adr 3"; "Special needs of a 6 year old" does not hold "special 6")."""
    return title_index.title_holders(db, f"NEAR({' '.join(quote(term) for term in terms)}, 2)")


def _by_words(
    db: Database, question: str, total: int, within: frozenset[int] | None
) -> list[Named]:
    """Documents whose title and name hold most of the question's weight (each word weighted by
    its rarity among the titles), with words that are rare in the library's text too: a word
    every page uses ("model", "option") is no evidence of a name, however few titles hold it."""
    terms = question_terms(question)
    if not terms:
        return []
    chunks = max(terms_store.chunk_count(db), 1)
    holders = {term: title_index.title_holders(db, quote(term)) for term in terms}
    weight = {term: _idf(total, len(found)) for term, found in holders.items()}
    mass = sum(weight.values())
    if mass <= 0:
        return []
    share: dict[int, float] = {}
    for term, found in holders.items():
        for document_id in found:
            share[document_id] = share.get(document_id, 0.0) + weight[term] / mass
    covered = [
        d for d, s in share.items() if s >= NAMES_COVERAGE and (within is None or d in within)
    ]
    # the library's text is counted only for the words of a title that covers the question (most
    # questions have none): counting a word in a million chunks is ~10-25 ms
    rare: dict[str, float] = {}
    enough = _idf(chunks, round(NAME_RARITY * chunks))  # as rare as one word of 5% of chunks
    named = []
    for document_id in covered:
        held = [term for term, found in holders.items() if document_id in found]
        for term in held:
            if term not in rare:
                rare[term] = _idf(chunks, _library_frequency(db, term))
        if sum(rare[term] for term in held) >= enough:
            named.append(Named(document_id, round(share[document_id], 4)))
    return sorted(named, key=lambda n: (-n.coverage, n.document_id))[:MAX_DOCUMENTS]


def _idf(total: int, frequency: int) -> float:
    return max(math.log((total + 1) / (frequency + 0.5)), 0.0)


def _library_frequency(db: Database, term: str) -> int:
    """In how many chunks' text the term occurs (not their title column, which repeats a
    document's title on each of its chunks: a long document's title would count as common)."""
    match = phrase_match(term)
    return library.fts_chunk_frequency(db, f"text : {match}") if match else 0


def title_ranking(db: Database, named: Sequence[Named], vector: np.ndarray) -> list[int]:
    """The named documents' chunks: each document's closest to the question first, documents in
    order, CHUNKS_PER_DOCUMENT each."""
    ranked: list[int] = []
    for item in named:
        ids = library.chunk_ids_of_documents(db, [item.document_id])
        vectors = vectors_of(db, ids)
        ids.sort(
            key=lambda chunk_id: -float(vectors[chunk_id] @ vector) if chunk_id in vectors else 0.0
        )
        ranked += ids[:CHUNKS_PER_DOCUMENT]
    return ranked
