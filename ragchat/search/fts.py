"""Turning user text into a safe FTS5 MATCH expression.

User text never reaches MATCH raw: it is cut into word tokens (so quotes, `*`, `:`, `-`, `(` and
`NEAR` lose any meaning), stop words are dropped, each token is quoted, and the terms are ORed
(an AND of many words finds nothing). Comma-separated parts of a keyword query of two or more
words also go in as a quoted phrase, so BM25 rewards chunks that hold the whole phrase.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from ..lexicon import STOPWORDS
from ..text import compounds, identifier_phrases, is_compound, known_nowhere, words

MAX_TERMS = 16


def quote(term: str) -> str:
    """A term as an FTS5 string: a phrase, never operators."""
    return '"' + term.replace('"', '""') + '"'


def match_terms(
    query: str, max_terms: int = MAX_TERMS, known: Callable[[str], bool] = known_nowhere
) -> list[str]:
    """The quoted terms and phrases of a query, most important (first mentioned) first (`known`:
    whether the library holds a word as typed)."""
    terms: list[str] = []
    for part in re.split(r"[,;\n]", query):
        tokens = [w for w in words(part) if w not in STOPWORDS]
        # a compound of common words ("one-off", "read-only") is searched as its phrase
        terms += [quote(" ".join(words(c))) for c in compounds(part)]
        if len(tokens) >= 2 and len(tokens) <= 4 and not is_compound(part):
            terms.append(quote(" ".join(tokens)))
        terms.extend(quote(token) for token in tokens)
        # an identifier also as the phrase of its words: typed `camelCase`, it meets the
        # documents' "camel case" and `to_camel_case`; its common words ("case") are no evidence
        terms += [quote(phrase) for phrase in identifier_phrases(part, known)]
    unique = list(dict.fromkeys(terms))
    return unique[:max_terms]


def rarer_terms(terms: list[str], shares: dict[str, float], most: float) -> list[str]:
    """`terms` without the single words found in more than `most` of the chunks (`shares`: share
    of chunks by quoted term; phrases and unknown terms stay), unless nothing rarer is left: then
    the rarest of them stays, so a query never loses its keyword search."""
    common = {term for term in terms if shares.get(term, 0.0) > most}
    kept = [term for term in terms if term not in common]
    if common and not kept:
        kept = [min(terms, key=lambda term: shares[term])]
    return kept


def split_by_postings(
    terms: list[str], rows: dict[str, float], budget: int
) -> tuple[list[str], list[str]]:
    """(scored, common): when the chunks holding `terms` (`rows`: chunks holding each quoted term;
    phrases and unknown terms count 0) add up to more than `budget`, the rarest terms whose chunks
    stay within it (always the rarest one) are scored and the rest are common; else all are
    scored and none is common."""
    if sum(rows.get(term, 0.0) for term in terms) <= budget:
        return list(terms), []
    ranked = sorted(terms, key=lambda term: rows.get(term, 0.0))
    scored, total = ranked[:1], rows.get(ranked[0], 0.0)
    for term in ranked[1:]:
        total += rows.get(term, 0.0)
        if total > budget:
            break
        scored.append(term)
    return [t for t in terms if t in scored], [t for t in terms if t not in scored]


BM25_K1 = 1.2  # FTS5's bm25() constant k1 (sqlite's fts5_aux.c), not a choice of ours


def score_bound(terms: list[str], rows: dict[str, float], total: float) -> float:
    """More than the BM25 score (as a magnitude: FTS5's bm25() is negative) that a chunk holding
    no term but `terms` can get from a query holding them (`rows`: chunks holding each quoted
    term; phrases and unknown terms count 0, the largest idf; `total`: chunks in the library).
    FTS5 adds, for each phrase, idf * f * (k1 + 1) / (f + k1 * (1 - b + b * length / average)),
    which stays below idf * (k1 + 1) whatever the phrase's frequency f and the chunk's length,
    with idf = log((total - rows + 0.5) / (rows + 0.5)) (at least 1e-6)."""
    bound = 0.0
    for term in terms:
        held = min(max(rows.get(term, 0.0), 0.0), total)
        bound += max(math.log((total - held + 0.5) / (held + 0.5)), 1e-6) * (BM25_K1 + 1)
    return bound * 1.01  # a margin for the rounding of the shares behind `rows`


def build_match(query: str, max_terms: int = MAX_TERMS) -> str | None:
    """A MATCH expression ORing the query's terms, or None when nothing searchable is left."""
    terms = match_terms(query, max_terms)
    return " OR ".join(terms) if terms else None


def phrase_match(term: str) -> str | None:
    """A MATCH expression for one term as a whole ("andre gunder frank" as a phrase, so that a
    name is as rare as the name, not as common as its most common word), or None when it holds
    nothing searchable."""
    tokens = words(term)
    if not is_compound(term) and not any(token not in STOPWORDS for token in tokens):
        return None
    return quote(" ".join(tokens))
