"""A small model of the conversation so far, for expanding a question that leans on it.

Historical query expansion (see RESEARCH.md): the *topic* terms of the current topic's first
question persist (with decay over the turns since), the *recent* terms come from the last
question. Every term is weighted by its corpus idf, and chat filler ("interesting", "oh",
"clear") never becomes a term.

*Referents* are what pronouns point at, chosen without idf (in a corpus all about bees, "bees" is
the commonest word and still what "they" means): the things the topic's questions name, in the
order said, the last question's own referent first, then names leading the last answer; a
pronoun takes the first that agrees with it in number and person. Pure: only corpus statistics
are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import QUESTION_WORDS, STOPWORDS, sentences, stem, stems, subject_words, words
from .corpus import CorpusStats
from .signals import DEICTIC_NOUNS

DECAY = 0.6  # a topic term's weight shrinks by this factor per turn since it was said
NAME = re.compile(r"(?:[A-Z][\w'’-]+)(?: (?:[A-Z][\w'’-]+|of|de|van|von))*(?<! of)")
MIN_IDF = 1.0  # a term in most chunks carries no topic


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
            parts = match.group(0).lower().split()
            while parts and (parts[0] in STOPWORDS or parts[0] in QUESTION_WORDS):
                parts = parts[1:]  # "In South Africa" at a sentence start names South Africa
            if parts:
                found.append(" ".join(parts))
    counts = {name: found.count(name) for name in found}
    return sorted(counts, key=lambda name: -counts[name])


def lead(text: str, count: int = 2) -> str:
    """The first sentences of an answer: where its subject is named."""
    return " ".join(sentences(text)[:count])


def conversation_terms(corpus: CorpusStats, topic_questions: tuple[str, ...], last_answer: str) -> list[Term]:
    """Weighted context terms of the current topic: every question since the topic began (the
    newest weighs most, older ones decay), the names they and the last answer's lead hold."""
    weights: dict[str, tuple[float, str]] = {}

    def add(term: str, weight: float, source: str) -> None:
        if weight > weights.get(term, (0.0, ""))[0]:
            weights[term] = (weight, source)

    newest = len(topic_questions) - 1
    for index, question in enumerate(topic_questions):
        decay = DECAY ** (newest - index)
        source = "recent" if index == newest else "topic"
        if index == 0:
            decay = max(decay, DECAY)  # the topic's first question stays in view
        for word in dict.fromkeys(subject_words(question)):
            idf = corpus.idf(word)
            if corpus.chunk_frequency(word) > 0 and idf >= MIN_IDF:
                add(word, idf * decay, source)
        for name in names(question):
            if corpus.chunk_frequency(name) > 0:
                add(name, corpus.idf(name) * decay * 1.2, "referent")
    for name in names(lead(last_answer), sentence_start=True)[:3]:
        if corpus.chunk_frequency(name) > 0:
            add(name, corpus.idf(name) * DECAY, "answer")
    ranked = sorted(weights.items(), key=lambda item: -item[1][0])
    return [Term(text, weight, source) for text, (weight, source) in ranked]


def pick_terms(terms: list[Term], question_words: list[str], limit: int, drop_names: bool = False) -> list[str]:
    """The best context terms the question does not already hold (each stem once)."""
    covered = {stem(w) for w in question_words}
    dropped = set().union(*(stems(t.text) for t in terms if t.source == "referent")) if drop_names else set()
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


# --- referents: what a pronoun points at --------------------------------------------------------

# the pointers a referent may replace ("such", "there", "same", "other" point too, but at no noun)
PRONOUNS = frozenset("it its they them their theirs he she him his her hers this that these those".split())
POSSESSIVE = frozenset("its their theirs his her hers".split())
PLURAL_POINTERS = frozenset("they them their theirs these those".split())
PERSON_POINTERS = frozenset("he she him his her hers".split())
MAX_PERSON_NAME_WORDS = 3  # "Andre Gunder Frank"; "California Integrated Water Quality System" is a thing
# a word right after these is no thing named: "how long", "how do I set a timeout", "can we merge"
NOT_A_NOUN_AFTER = frozenset("how i you we they he she".split())
PARENTHESIS = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True)
class Referent:
    text: str
    is_name: bool


def looks_plural(phrase: str) -> bool:
    """"bees", "honey bees", "policies" - a head noun in -s (not "glass", "virus", "analysis")."""
    head = phrase.split()[-1]
    return len(head) > 3 and head.endswith("s") and not head.endswith(("ss", "us", "is", "'s"))


def _known_phrase(corpus: CorpusStats, run: list[str]) -> str | None:
    """The longest stretch of a run of content words that the corpus holds as a phrase ("bees
    died" is not in the corpus; "bees" is): verbs glued to a noun fall away."""
    for size in range(min(len(run), 3), 0, -1):
        for start in range(len(run) - size + 1):
            phrase = " ".join(run[start: start + size])
            if corpus.chunk_frequency(phrase) > 0:
                return phrase
    return None


def noun_phrases(corpus: CorpusStats, text: str) -> list[Referent]:
    """The things a message names, in the order said (a question's subject comes early). A
    phrase is a run of subject words the corpus knows ("honey bees", "small claims court"); a
    word that only says how ("how long", "how much") or how something is done ("quickly"), and the
    verb after a subject pronoun ("how do I *set* a timeout?"), name nothing."""
    subject = set(subject_words(text))
    named = set(names(text))
    found: list[Referent] = []
    run: list[str] = []
    tokens = words(text)
    for index, word in enumerate([*tokens, ""]):
        if word and word in subject and not (index and tokens[index - 1] in NOT_A_NOUN_AFTER) and not word.endswith("ly"):
            run.append(word)
            continue
        if run:
            phrase = _known_phrase(corpus, run)
            if phrase:
                found.append(Referent(phrase, any(stems(phrase) == stems(n) for n in named)))
        run = []
    return list({r.text: r for r in found}.values())


def named_referent(anaphora: list[str], terms: list[Term]) -> tuple[str, str] | None:
    """A demonstrative with a noun of its own ("this county") and the conversation's term that
    names that noun ("ventura county"): what it points at, said in full."""
    for cue in anaphora:
        head, _, noun = cue.partition(" ")
        if head not in {"this", "that", "these", "those"} or not noun or noun in DEICTIC_NOUNS:
            continue
        for term in terms:
            if stem(noun) in stems(term.text) and len(words(term.text)) > 1:
                return cue, term.text
    return None


def understood(query: str) -> str:
    """A reformulated query without the context terms appended to it: the question as it was
    understood ("do bees make honey?" for "do they make honey?")."""
    return PARENTHESIS.sub("", query) if query else ""


def referent_candidates(corpus: CorpusStats, topic_questions: tuple[str, ...], last_query: str,
                        last_answer: str) -> list[Referent]:
    """What a pronoun may point at, most likely first: what the last question's own pronoun was
    understood as (the subject stays the subject: "how does the state pay for it?" -> Medi-Cal,
    not the state), the things the last question named, then earlier questions of the topic,
    newest first, then names leading the last answer."""
    questions = list(reversed(topic_questions))
    understood_last = understood(last_query)
    said = stems(questions[0]) if questions else set()
    found = [r for r in noun_phrases(corpus, understood_last) if not stems(r.text) <= said] if understood_last else []
    for text in questions:
        found.extend(noun_phrases(corpus, text))
    for name in names(lead(last_answer), sentence_start=True)[:3]:
        if corpus.chunk_frequency(name) > 0:
            found.append(Referent(name, True))
    return list({r.text: r for r in found}.values())


def agrees(pointer: str, referent: Referent) -> bool:
    """Whether a pronoun can stand for a referent: "they" for a plural ("bees", "the Beatles"),
    "it" for a singular or a name ("South Africa", "Windows"), "he"/"she" for a short name only."""
    if pointer in PERSON_POINTERS:
        return referent.is_name and len(referent.text.split()) <= MAX_PERSON_NAME_WORDS
    if pointer in PLURAL_POINTERS:
        return looks_plural(referent.text)
    return referent.is_name or not looks_plural(referent.text)


def pick_referent(pointer: str, candidates: list[Referent], question: str) -> str | None:
    """The most likely thing a pronoun points at that the question does not name itself."""
    own = stems(question)
    for candidate in candidates:
        if agrees(pointer, candidate) and not stems(candidate.text) <= own:
            return candidate.text
    return None
