"""Referents: what a pronoun points at, and the question with it said in full.

Chosen without idf (in a corpus all about bees, "bees" is the commonest word and still what
"they" means): the things the topic's questions name, in the order said, the last question's own
referent first, then names leading the last answer; a pronoun takes the first that agrees with it
in number and person (`lexicon.POINTERS`). Pure: only corpus statistics are read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...lexicon import (
    CLAUSE_BOUNDARY,
    DEFINITE_ARTICLE,
    DEICTIC_NOUNS,
    DEMONSTRATIVES,
    DISCOURSE,
    NOT_A_NOUN_AFTER,
    PERSON,
    PERSONAL,
    PLURAL,
    POSSESSIVE,
    looks_adverb,
    looks_plural,
    possessive,
)
from ...params import FollowupParams
from ...text import stem, stems, subject_words, words
from ..corpus import CorpusStats
from .terms import Term, answer_names, names

PARENTHESIS = re.compile(r"\s*\([^()]*\)\s*$")  # the context terms appended to a query


@dataclass(frozen=True)
class Referent:
    text: str
    is_name: bool


def _known_phrase(corpus: CorpusStats, run: list[str], longest: int) -> str | None:
    """The longest stretch of a run of content words that the corpus holds as a phrase ("bees
    died" is not in the corpus; "bees" is): verbs glued to a noun fall away."""
    for size in range(min(len(run), longest), 0, -1):
        for start in range(len(run) - size + 1):
            phrase = " ".join(run[start : start + size])
            if corpus.chunk_frequency(phrase) > 0:
                return phrase
    return None


def _names_a_thing(tokens: list[str], index: int, subject: set[str]) -> bool:
    """Whether the word at `index` may name a thing: a subject word, not right after a word that
    makes it a verb or a manner ("how long", "how do I *set* a timeout"), not an adverb."""
    word = tokens[index]
    return (
        word in subject
        and not (index and tokens[index - 1] in NOT_A_NOUN_AFTER)
        and not looks_adverb(word)
    )


def noun_phrases(corpus: CorpusStats, text: str, params: FollowupParams) -> list[Referent]:
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
        if word and _names_a_thing(tokens, index, subject):
            run.append(word)
            continue
        if run:
            phrase = _known_phrase(corpus, run, params.max_phrase_words)
            if phrase:
                is_name = any(stems(phrase) == stems(n) for n in named)
                found.append(Referent(text=phrase, is_name=is_name))
        run = []
    return list({r.text: r for r in found}.values())


def named_referent(anaphora: list[str], terms: list[Term]) -> tuple[str, str] | None:
    """A demonstrative with a noun of its own ("this county") and the conversation's term that
    names that noun ("ventura county"): what it points at, said in full."""
    for cue in anaphora:
        head, _, noun = cue.partition(" ")
        if head not in DEMONSTRATIVES or not noun or noun in DEICTIC_NOUNS:
            continue
        for term in terms:
            if stem(noun) in stems(term.text) and len(words(term.text)) > 1:
                return cue, term.text
    return None


def understood(query: str) -> str:
    """A reformulated query without the context terms appended to it: the question as it was
    understood ("do bees make honey?" for "do they make honey?")."""
    return PARENTHESIS.sub("", query) if query else ""


def referent_candidates(
    corpus: CorpusStats,
    topic_questions: tuple[str, ...],
    last_query: str,
    last_answer: str,
    params: FollowupParams,
) -> list[Referent]:
    """What a pronoun may point at, most likely first: what the last question's own pronoun was
    understood as (the subject stays the subject: "how does the state pay for it?" -> Medi-Cal,
    not the state), the things the last question named, then earlier questions of the topic,
    newest first, then names leading the last answer."""
    questions = list(reversed(topic_questions))
    understood_last = understood(last_query)
    said = stems(questions[0]) if questions else set()
    found = (
        [r for r in noun_phrases(corpus, understood_last, params) if not stems(r.text) <= said]
        if understood_last
        else []
    )
    for text in questions:
        found.extend(noun_phrases(corpus, text, params))
    named = answer_names(corpus, last_answer, params)
    found.extend(Referent(text=name, is_name=True) for name in named)
    return list({r.text: r for r in found}.values())


def agrees(pointer: str, referent: Referent, params: FollowupParams) -> bool:
    """Whether a pronoun can stand for a referent: "they" for a plural ("bees", "the Beatles"),
    "it" for a singular or a name ("South Africa", "Windows"), "he"/"she" for a short name only."""
    if pointer in PERSON:
        return referent.is_name and len(referent.text.split()) <= params.max_person_name_words
    if pointer in PLURAL:
        return looks_plural(referent.text)
    return referent.is_name or not looks_plural(referent.text)


def pick_referent(
    pointer: str, candidates: list[Referent], question: str, params: FollowupParams
) -> str | None:
    """The most likely thing a pronoun points at that the question does not name itself."""
    own = stems(question)
    for candidate in candidates:
        if agrees(pointer, candidate, params) and not stems(candidate.text) <= own:
            return candidate.text
    return None


def held_by_question(
    corpus: CorpusStats, question: str, pointer: str, params: FollowupParams
) -> bool:
    """Whether a pronoun points at a thing the question itself introduces before it, so its
    referent is in the question, not in the conversation. A possessive anywhere after its owner:
    "a team and its members", "look a row up by its primary key". Not after a definite owner
    ("who were the song's writers and its performers?"): "the song" itself points back, and the
    conversation's referent ("Grenade") is what a search needs (clapnq lost a follow-up when such
    owners were kept). A personal pronoun only from another clause (`CLAUSE_BOUNDARY`), after a
    definite thing too: "how do I run ruff once without installing it?", "how do I slow the
    spider down so it doesn't hammer the website?"; in its own clause it stands for something
    else ("how do I create a spider inside it?": not the spider)."""
    lowered = pointer.lower()
    if lowered not in POSSESSIVE and lowered not in PERSONAL - PERSON:
        return False
    match = re.search(rf"\b{re.escape(pointer)}\b", question, re.IGNORECASE)
    text = question[: match.start()] if match else ""
    if lowered not in POSSESSIVE:
        boundaries = list(CLAUSE_BOUNDARY.finditer(text))
        text = text[: boundaries[-1].start()] if boundaries else ""
    before = words(text)
    # a personal pronoun's thing is the one the question names, whatever its article
    definite = {DEFINITE_ARTICLE} | DEMONSTRATIVES | POSSESSIVE if lowered in POSSESSIVE else set()
    for referent in noun_phrases(corpus, " ".join(before), params):
        head = words(referent.text)[0]
        at = before.index(head) if head in before else 0
        if agrees(pointer, referent, params) and not (at and before[at - 1] in definite):
            return True
    return False


def resolved(question: str, pointer: str, referent: str) -> str:
    """The question with its first pointing phrase (outside chat discourse such as "got it")
    replaced by what it points at: "its genre" -> "the novel's genre"."""
    chat = [m.span() for m in DISCOURSE.finditer(question)]
    for match in re.finditer(rf"\b{re.escape(pointer)}\b", question, re.IGNORECASE):
        if not any(start <= match.start() < end for start, end in chat):
            said = possessive(referent) if pointer.lower() in POSSESSIVE else referent
            return question[: match.start()] + said + question[match.end() :]
    return f"{question} ({referent})"
