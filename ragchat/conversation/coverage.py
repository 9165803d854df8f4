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

import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Protocol

from ..lexicon import QUESTION_WORDS
from ..params import CoverageParams
from ..text import WORD, content_words, is_content_word, stem, stems
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
    unknown: tuple[str, ...] = ()  # the question's names the library never mentions

    def to_dict(self) -> dict[str, float | list[str]]:
        found: dict[str, float | list[str]] = {
            name: round(value, 4)
            for name, value in asdict(self).items()
            if not isinstance(value, tuple)
        }
        if self.unknown:
            found["unknown"] = list(self.unknown)
        return found


# a word as typed: letters only, no capital after its first letter ("RabbitMQ", "UserProfile"
# are left out: a name with capitals inside is as often the user's own class as a product)
_PLAIN_NAME = re.compile(r"^[^\W\d_][^\W\d_A-Z]+$")


def unknown_names(
    question: str, corpus: CorpusStats, one_piece: Callable[[str], bool] | None
) -> tuple[str, ...]:
    """The words of the question that name something the library never mentions: no chunk,
    heading or title holds the word, nor a word it starts ("manytomany" starts ManyToManyField),
    and the embedding model does not know it as one piece of its vocabulary (`one_piece`), as
    it knows everyday words ("several", "french", "turn"): a product, a tool or a technique
    ("Datadog", "nginx", "websocket", "protobuf", "codemod"). Its documentation names what it
    works with; a question about a thing it never names asks past it. None without a model
    vocabulary to ask."""
    if one_piece is None:
        return ()
    found = []
    for match in WORD.finditer(question):
        word = match.group(0)
        lower = word.lower()
        if (
            _PLAIN_NAME.match(word)
            and is_content_word(lower)
            and lower not in QUESTION_WORDS
            and not one_piece(lower)
            and not corpus.mentions(lower)
        ):
            found.append(lower)
    return tuple(dict.fromkeys(found))


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
    one_piece: Callable[[str], bool] | None = None,
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
        unknown=unknown_names(question, corpus, one_piece),
    )


def not_covered(evidence: Evidence, params: CoverageParams) -> bool:
    """The documents do not cover the question: the question, read with its subject, comes only
    loosely close to any chunk, and the top chunks lack its distinctive words. A name the
    library never mentions (`unknown_names`) is said beside the answer (`never_mentioned`), not
    taken for this: as a decision it lowered MTRAG's precision (govt 0.80 -> 0.59, clapnq 0.76
    -> 0.53), whose users type "needies", "lactating", "demography" about pages that answer."""
    return evidence.subject + params.rare_weight * evidence.rare < params.threshold


def never_mentioned(unknown: Sequence[str]) -> str:
    """What the user is told of the question's names the library never mentions ("" if none):
    a product, a tool, or a word mistyped, which a search of these documents cannot find."""
    if not unknown:
        return ""
    named = ", ".join(f'"{word}"' for word in unknown)
    return f"nothing in the documents mentions {named}"


def search_evidence(
    db: Database,
    query: str,
    hits: Sequence[Hit],
    params: CoverageParams,
    one_piece: Callable[[str], bool] | None = None,
) -> Evidence:
    """The same evidence for one `ragchat search` (no conversation: the query is the question)."""
    from .corpus import CorpusView  # here: numpy loads only when a search is judged

    best = max((h.similarity for h in hits if h.similarity is not None), default=0.0)
    texts = [h.chunk.text for h in hits]
    return gather(query, best, best, 0.0, hits, texts, CorpusView(db), params, one_piece)
