"""Per-document keywords: the terms and short phrases most characteristic of a document against
the whole corpus (tf-idf over candidate words and noun-ish word pairs). Pure functions.

Each document keeps the counts of its candidate terms (`term_counts`), so keywords of every
document can be re-ranked cheaply when the corpus changes, without re-reading any text.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping

from ..lexicon import QUESTION_WORDS, STOPWORDS
from ..text import words

MAX_CANDIDATES = 300
KEYWORDS_PER_DOCUMENT = 12  # the terms kept per document (the keyword index, set at ingest)
CLAUSE = re.compile(r"[.,;:!?()\[\]{}\"“”]|\s[-–—]\s|\n\s*\n")


def _is_candidate(word: str) -> bool:
    return (
        len(word) >= 3
        and word not in STOPWORDS
        and word not in QUESTION_WORDS
        and not any(ch.isdigit() for ch in word)
    )


def term_counts(text: str, limit: int = MAX_CANDIDATES) -> dict[str, int]:
    """Counts of candidate words and two-word phrases (runs of candidates inside one clause)."""
    counts: Counter[str] = Counter()
    for clause in CLAUSE.split(text):
        run: list[str] = []
        for word in [w.removesuffix("'s") for w in words(clause)] + [""]:
            if word and _is_candidate(word):
                run.append(word)
                counts[word] += 1
                if len(run) >= 2:
                    counts[f"{run[-2]} {run[-1]}"] += 1
            else:
                run = []
    # a phrase seen once is noise; keep words and repeated phrases
    kept = {term: n for term, n in counts.items() if " " not in term or n >= 2}
    return dict(sorted(kept.items(), key=lambda item: (-item[1], item[0]))[:limit])


def _singular_word(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")) and len(word) > 3:
        return word[:-1]
    return word


def _singular(term: str) -> str:
    """'competent witnesses' and 'competent witness' are one keyword."""
    return " ".join(_singular_word(w) for w in term.split())


def select_keywords(
    documents: Mapping[int, Mapping[str, int]], per_document: int
) -> dict[int, list[str]]:
    """The `per_document` best tf-idf terms of each document, phrases favoured, no repeats of a
    word already inside a chosen phrase."""
    total = len(documents)
    frequency: Counter[str] = Counter()
    for counts in documents.values():
        frequency.update(counts.keys())
    chosen: dict[int, list[str]] = {}
    for document_id, counts in documents.items():

        def score(term: str, counts: Mapping[str, int] = counts) -> float:
            idf = math.log((total + 1) / (frequency[term] + 0.5)) + 1.0
            phrase_bonus = 1.5 if " " in term else 1.0
            return (1 + math.log(counts[term])) * idf * phrase_bonus

        ranked = sorted(counts, key=lambda term: (-score(term), term))
        picked: list[str] = []
        seen_forms: set[str] = set()
        for term in ranked:
            if len(picked) >= per_document:
                break
            inside = any(term in phrase.split() for phrase in picked if " " in phrase)
            form = _singular(term)
            if not inside and form not in seen_forms:
                picked.append(term)
                seen_forms.add(form)
        chosen[document_id] = picked
    return chosen
