"""Documents found by their title and file name: "What is PEP 723 about?" names pep-0723.rst,
"the deployment guide" names deployment-guide.md.

Every document's title and file name (its stem, split at '-', '_', '.' and between letters and
digits) are indexed in `documents_fts`; a number is indexed as written and without its leading
zeros, and a question's numbers are searched without them, so "pep 8" finds pep-0008.rst.

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
from pathlib import PurePosixPath

import numpy as np
from sqlite_utils import Database

from ..conversation.followup.lexicon import QUESTION_WORDS, STOPWORDS
from ..store import library
from ..store.vectors import vectors_of
from ..text import words
from .fts import _quote

NAMES_COVERAGE = 0.6  # share of the question's idf weight a document's title and name must hold
MAX_DOCUMENTS = 3  # documents a question may name
CHUNKS_PER_DOCUMENT = 2  # each named document's chunks closest to the question, in the list
_SPLIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")


def _number(word: str) -> str:
    return word.lstrip("0") or "0" if word.isdigit() else word


def name_words(path: str) -> str:
    """A file name as words: `pep-0723.rst` -> "pep 0723 723", `deployment_guide.md`
    -> "deployment guide"."""
    stem = PurePosixPath(path.replace("\\", "/")).stem
    return indexed_text(_SPLIT.sub(" ", stem))


def indexed_text(text: str) -> str:
    """Text as indexed: each number also without its leading zeros."""
    out: list[str] = []
    for word in words(_SPLIT.sub(" ", text)):
        out.append(word)
        if word.isdigit() and _number(word) != word:
            out.append(_number(word))
    return " ".join(out)


def question_terms(question: str) -> list[str]:
    """The words of a question that can name a document (numbers without leading zeros)."""
    found = [
        _number(w)
        for w in words(_SPLIT.sub(" ", question))
        if w not in STOPWORDS and w not in QUESTION_WORDS and (len(w) > 1 or w.isdigit())
    ]
    return list(dict.fromkeys(found))


@dataclass(frozen=True)
class Named:
    document_id: int
    coverage: float  # share of the question's idf weight its title and name hold


def named_documents(
    db: Database, question: str, within: frozenset[int] | None = None
) -> list[Named]:
    """The documents a question names, best first (empty for most questions); among the
    documents `within` only, when given (a scoped question)."""
    terms = question_terms(question)
    total = library.titled_documents(db) if terms else None
    if total is None:
        return []
    holders = {term: library.title_holders(db, _quote(term)) for term in terms}
    weight = {term: math.log((total + 1) / (len(found) + 0.5)) for term, found in holders.items()}
    mass = sum(weight.values())
    if mass <= 0:
        return []
    scores: dict[int, float] = {}
    for term, found in holders.items():
        for document_id in found:
            scores[document_id] = scores.get(document_id, 0.0) + weight[term] / mass
    named = [
        Named(d, round(s, 4))
        for d, s in scores.items()
        if s >= NAMES_COVERAGE and (within is None or d in within)
    ]
    return sorted(named, key=lambda n: (-n.coverage, n.document_id))[:MAX_DOCUMENTS]


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
