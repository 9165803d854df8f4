"""The conversation's terms: what the topic so far is about, for expanding a question that leans
on it.

Historical query expansion (see RESEARCH.md): the *topic* terms of the current topic's first
question persist (with decay over the turns since), the *recent* terms come from the last
question. Every term is weighted by its corpus idf, and chat filler ("interesting", "oh",
"clear") never becomes a term. Pure: only corpus statistics are read.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lexicon import NAME, POSSESSIVE_ENDINGS, QUESTION_WORDS, STOPWORDS
from ...params import FollowupParams
from ...text import sentences, stem, stems, subject_words
from ..corpus import CorpusStats


@dataclass(frozen=True)
class Term:
    text: str
    weight: float
    source: str  # topic | recent | referent | answer


def names(text: str, sentence_start: bool = False) -> list[str]:
    """Capitalised names in a text ("Sportspark", "Andrew Carnegie"), most frequent first; a
    capital that only starts a sentence does not count unless `sentence_start`."""
    found: list[str] = []
    for sentence in sentences(text) or [text]:
        for match in NAME.finditer(sentence):
            if match.start() == 0 and not sentence_start:
                continue
            parts = [bare(part) for part in match.group(0).lower().split()]
            while parts and (parts[0] in STOPWORDS or parts[0] in QUESTION_WORDS):
                parts = parts[1:]  # "In South Africa" at a sentence start names South Africa
            if parts:
                found.append(" ".join(parts))
    counts = {name: found.count(name) for name in found}
    return sorted(counts, key=lambda name: -counts[name])


def bare(word: str) -> str:
    """A word as a term: without quotes around it (console output's 'Camila', 'Add Typer') and
    without a possessive ending ("python's" -> "python")."""
    word = word.strip("'’\"`")
    for ending in POSSESSIVE_ENDINGS:
        if word.endswith(ending) and len(word) > len(ending):
            return word[: -len(ending)]
    return word


def lead(text: str, count: int) -> str:
    """The first sentences of an answer: where its subject is named."""
    return " ".join(sentences(text)[:count])


def answer_names(corpus: CorpusStats, last_answer: str, params: FollowupParams) -> list[str]:
    """The names leading the last answer that the corpus holds."""
    found = names(lead(last_answer, params.lead_sentences), sentence_start=True)[
        : params.answer_names
    ]
    return [name for name in found if corpus.chunk_frequency(name) > 0]


def conversation_terms(
    corpus: CorpusStats, topic_questions: tuple[str, ...], last_answer: str, params: FollowupParams
) -> list[Term]:
    """Weighted context terms of the current topic: every question since the topic began (the
    newest weighs most, older ones decay), the names they and the last answer's lead hold."""
    weights: dict[str, tuple[float, str]] = {}

    def add(term: str, weight: float, source: str) -> None:
        if weight > weights.get(term, (0.0, ""))[0]:
            weights[term] = (weight, source)

    newest = len(topic_questions) - 1
    for index, question in enumerate(topic_questions):
        decay = params.decay ** (newest - index)
        source = "recent" if index == newest else "topic"
        if index == 0:
            decay = max(decay, params.decay)  # the topic's first question stays in view
        for word in dict.fromkeys(bare(w) for w in subject_words(question)):
            if not word:
                continue
            idf = corpus.idf(word)
            if corpus.chunk_frequency(word) > 0 and idf >= params.min_idf:
                add(word, idf * decay, source)
        for name in names(question):
            if corpus.chunk_frequency(name) > 0:
                add(name, corpus.idf(name) * decay * params.name_weight, "referent")
    for name in answer_names(corpus, last_answer, params):
        add(name, corpus.idf(name) * params.decay, "answer")
    ranked = sorted(weights.items(), key=lambda item: -item[1][0])
    return [Term(text=text, weight=weight, source=source) for text, (weight, source) in ranked]


def pick_terms(
    terms: list[Term], question_words: list[str], limit: int, drop_names: bool = False
) -> list[str]:
    """The best context terms the question does not already hold (each stem once)."""
    covered = {stem(w) for w in question_words}
    dropped = (
        set().union(*(stems(t.text) for t in terms if t.source == "referent"))
        if drop_names
        else set()
    )
    picked: list[str] = []
    for term in terms:
        if drop_names and (term.source == "referent" or stems(term.text) <= dropped):
            continue
        term_stems = stems(term.text)
        if term_stems and not term_stems <= covered:
            picked.append(term.text)
            covered |= term_stems
        if len(picked) >= limit:
            break
    return picked
