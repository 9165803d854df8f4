"""Answer quality (`--answers`).

The scored turns of the ragchat strategies are answered (extractively without --llm) instead of
stored empty, and each answer is scored against the turn's `reference` on content words,
stemmed, as multisets. Two yardsticks from the same sources: `lead` (the top chunk from its
start, cut to the answer's length in words) and `oracle` (greedy: the sentence that raises F1
most, until none does; an upper bound for picking whole sentences).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from sqlite_utils import Database

from ..answer import answer_pool, lead_text, units
from ..conversation.models import TurnResult
from ..params import AnswerParams
from ..store import library
from ..text import WORD, content_words, stem, words

ANSWER_SYSTEMS = ("ragchat", "lead", "oracle")


def answer_tokens(text: str) -> list[str]:
    return [stem(w) for w in content_words(text)]


def overlap_scores(answer: Sequence[str], reference: Sequence[str]) -> tuple[float, float]:
    """(F1, recall) of answer tokens against reference tokens, counted with multiplicity."""
    common = sum((Counter(answer) & Counter(reference)).values())
    if not common:
        return 0.0, 0.0
    precision, recall = common / len(answer), common / len(reference)
    return 2 * precision * recall / (precision + recall), recall


def lead_answer(top_chunk_text: str, length: int, params: AnswerParams) -> str:
    """The first `length` words of the top chunk (its first sentences, the lead baseline)."""
    matches = list(WORD.finditer(lead_text(top_chunk_text, params)))
    text = lead_text(top_chunk_text, params)
    return text if len(matches) <= length else text[: matches[length - 1].end()] if length else ""


def oracle_answer(chunk_texts: Sequence[str], reference: str, params: AnswerParams) -> str:
    """Greedy on F1: from all sentences (and their blocks) of the chunks, add the one that raises
    F1 against the reference most, until none does; shown in reading order."""
    pool = [unit.text for text in chunk_texts for unit in units(text, params)]
    tokens = [answer_tokens(text) for text in pool]
    wanted = answer_tokens(reference)
    chosen: list[int] = []
    current: list[str] = []
    best = 0.0
    while True:
        trials = [
            (overlap_scores(current + tokens[i], wanted)[0], -i)
            for i in range(len(pool))
            if i not in chosen
        ]
        if not trials:
            break
        value, index = max(trials)
        if value <= best + 1e-9:
            break
        best, chosen, current = value, [*chosen, -index], current + tokens[-index]
    return " ".join(pool[i] for i in sorted(chosen))


@dataclass(frozen=True)
class AnswerScore:
    """One answered turn: the answer, the chunks it was built from, and the
    three systems' scores."""

    text: str
    chunk_ids: tuple[int, ...]  # ranked: the sources the answer could draw from
    reference: str
    scores: Mapping[str, tuple[float, float, int]]  # system -> (F1, recall, length in words)

    def to_row(self) -> dict:
        return {
            "answer": self.text,
            "answer_chunk_ids": list(self.chunk_ids),
            "reference": self.reference,
            "answer_scores": {
                name: {"f1": round(f1, 4), "recall": round(recall, 4), "words": length}
                for name, (f1, recall, length) in self.scores.items()
            },
        }


def score_answer(
    answer: str,
    chunk_texts: Sequence[str],
    chunk_ids: Sequence[int],
    reference: str,
    params: AnswerParams,
) -> AnswerScore:
    """Score an answer, the lead baseline and the oracle from the same ranked chunks."""
    wanted = answer_tokens(reference)
    length = len(words(answer))
    texts = {
        "ragchat": answer,
        "lead": lead_answer(chunk_texts[0], length, params) if chunk_texts else "",
        "oracle": oracle_answer(chunk_texts, reference, params),
    }
    scores = {
        name: (*overlap_scores(answer_tokens(text), wanted), len(words(text)))
        for name, text in texts.items()
    }
    return AnswerScore(answer, tuple(chunk_ids), reference, scores)


def answer_of(
    db: Database, result: TurnResult, reference: str, params: AnswerParams
) -> AnswerScore:
    """A turn's answer scored on the chunks it could draw from (as the extractive answer does:
    the search's own, not the chunks brought in beside them)."""

    ranked = sorted((c for c in result.lineage.chunks if c.beside is None), key=lambda c: c.rank)
    chunks = answer_pool(ranked, result.lineage.plan == "reuse", params)
    stored = library.chunks_by_ids(db, [c.chunk_id for c in chunks])
    kept = [c.chunk_id for c in chunks if c.chunk_id in stored]
    texts = [stored[i].text for i in kept]
    return score_answer(result.answer, texts, kept, reference, params)
