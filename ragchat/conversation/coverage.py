"""Do the documents cover the question? One decision, in one place, from evidence the turn
already has; calibrated on the MTRAG sets' unanswerable items against their answerable ones
(docs/answers.md: "Does the library cover it?"), the same rule for every library.

The evidence:
- `best`: the question's own best cosine (its probe), and `margin`, how far that chunk's
  document leads the next document;
- `subject`: the best cosine of the question as the turn read it (a follow-up with its subject
  from the conversation: "can I stop it early?" as "... stop the loop early"; a model's
  rewrite): a follow-up whose subject the library covers is judged on that, not on its few
  own words ("best" when the turn read the question as typed);
- `retrieved`: the best cosine among the chunks the turn retrieved (with its context);
- `rare`: the share of the question's rarest terms (by corpus idf) that the top chunks hold: a
  question whose distinctive words appear in none of them asks about something else;
- `agreement`: the share of the top chunks that both the vector and the keyword lists found
  (shown in `inspect`; it did not separate covered from uncovered once `subject` was in).

`not_covered` turns it into the yes/no the answer and the lineage carry (`Lineage.weak`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from ..params import CoverageParams
from ..text import content_words, stem, stems
from .corpus import CorpusStats

if TYPE_CHECKING:
    from sqlite_utils import Database

    from ..search.hybrid import Hit

# The rule and its numbers: ragchat/params.py (CoverageParams). The margin, the retrieved
# similarity and the agreement did not separate unanswerable from answerable turns further.


class Ranked(Protocol):
    """A retrieved chunk as the evidence needs it (a turn's RetrievedChunk, a search's Hit)."""

    @property
    def similarity(self) -> float | None: ...
    @property
    def vector_rank(self) -> int | None: ...
    @property
    def fts_rank(self) -> int | None: ...


@dataclass(frozen=True)
class Evidence:
    best: float
    subject: float
    margin: float
    retrieved: float
    rare: float
    agreement: float

    def to_dict(self) -> dict[str, float]:
        return {name: round(value, 4) for name, value in asdict(self).items()}


def rarest_terms(question: str, corpus: CorpusStats, count: int) -> list[tuple[float, str]]:
    """The question's `count` rarest terms, each with its idf, rarest first."""
    terms = list(dict.fromkeys(content_words(question)))
    return sorted(((corpus.idf(term), term) for term in terms), reverse=True)[:count]


def rare_share(question: str, texts: Sequence[str], corpus: CorpusStats, count: int) -> float:
    """Which share (by idf) of the question's `count` rarest terms the texts hold (1.0 when it
    has none: nothing to miss)."""
    weighted = rarest_terms(question, corpus, count)
    total = sum(weight for weight, _ in weighted)
    if total <= 0:
        return 1.0
    held = set().union(*(stems(text) for text in texts)) if texts else set()
    return sum(weight for weight, term in weighted if stem(term) in held) / total


def agreement(chunks: Sequence[Ranked], params: CoverageParams) -> float:
    top = list(chunks[: params.top])
    if not top:
        return 0.0
    reach = params.reach
    both = [
        c
        for c in top
        if c.vector_rank is not None
        and c.vector_rank <= reach
        and c.fts_rank is not None
        and c.fts_rank <= reach
    ]
    return len(both) / len(top)


def gather(
    question: str,
    best: float,
    subject: float,
    margin: float,
    chunks: Sequence[Ranked],
    texts: Sequence[str],
    corpus: CorpusStats,
    params: CoverageParams,
) -> Evidence:
    top = params.top
    retrieved = max((c.similarity for c in chunks[:top] if c.similarity is not None), default=0.0)
    rare = rare_share(question, texts[:top], corpus, params.rare_terms)
    return Evidence(
        best=best,
        subject=max(best, subject),
        margin=margin,
        retrieved=retrieved,
        rare=rare,
        agreement=agreement(chunks, params),
    )


def not_covered(evidence: Evidence, params: CoverageParams) -> bool:
    """The documents do not cover the question: the question, read with its subject, comes only
    loosely close to any chunk, and the top chunks lack its distinctive words."""
    return evidence.subject + params.rare_weight * evidence.rare < params.threshold


def search_evidence(
    db: Database, query: str, hits: Sequence[Hit], params: CoverageParams
) -> Evidence:
    """The same evidence for one `ragchat search` (no conversation: the query is the question)."""
    from .corpus import CorpusView  # here: numpy loads only when a search is judged

    best = max((h.similarity for h in hits if h.similarity is not None), default=0.0)
    return gather(
        query, best, best, 0.0, hits, [h.chunk.text for h in hits], CorpusView(db), params
    )
