"""Corrections: "no, I meant X", "I mean X", "not that, X" (and the REPL's `/retry X`) re-run the
previous question with X as its subject.

This happens before reformulation, so the heuristic and the Ollama reformulator both receive
the corrected question ("how do I make a codicil valid?") as the turn's question, and the
lineage records the turn as a correction. The English openers are the one table below.

Where X goes: in place of the previous question's pronoun ("how do I make it required?" ->
"how do I make the query parameter required?"), else of its first determiner phrase ("how do
I make a will valid?" -> "how do I make a codicil valid?"), preferring a phrase that shares a word
with X ("the downtown hotel" for "the downtown of SF"); with none of these, X leads the question.
An X with as many words of its own as the previous question, and more than a noun phrase holds,
restates the whole need and is the question, alone (`restates`).
A clause or a qualifier ("I meant if ...", "I meant for the purchase loan") is no correction: the
turn is read as typed, as an elliptical follow-up.
"""

from __future__ import annotations

import re

from ..text import stem, subject_words

# The one table of English correction openers (regular expressions, matched at the start of the
# turn, case-insensitive); what follows them is X.
CORRECTION_OPENERS = (
    r"(?:no[,.!]*\s+)?i\s+meant\s+to\s+(?:ask|say)(?:\s+about)?",
    r"(?:no|nope|sorry)[,.!]*\s+(?:i\s+)?(?:meant|mean)",
    r"i\s+(?:meant|mean)",
    r"(?:no[,.!]*\s+)?not\s+that[,.:;!-]*",
    r"(?:no[,.!]*\s+)?what\s+i\s+meant\s+(?:was|is)",
)
_OPENER = re.compile(
    rf"^\s*(?:{'|'.join(CORRECTION_OPENERS)})\s+(?P<subject>\S.*?)[\s.!?]*$", re.IGNORECASE
)
# X is a new question, a clause or a qualifier, not a subject ("I mean, how does it work?", "I
# meant if there is ...", "I meant for the purchase loan"): the turn is no correction. It is
# read as typed, an elliptical follow-up, which the reformulators handle (on the govt and
# switch sets, putting a qualifier into the previous question lost a gold passage of "I meant
# for the purchase loan")
_NOT_A_SUBJECT = re.compile(
    r"^(?:what|how|why|when|where|which|who|whom|whose|is|are|do|does|did|can|could|should"
    r"|if|whether|that|because|for|of|in|on|at|about|with|from|to|during|under|without)\b",
    re.IGNORECASE,
)
_PRONOUN = re.compile(r"\b(it|them|they|this|that|these|those)\b", re.IGNORECASE)
_DETERMINER = re.compile(
    r"\b(?:a|an|the|my|your|our|their|this|that)\s+(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*|[\w'-]+)"
)


def subject_of(turn: str) -> str | None:
    """X when the turn is a correction ("no, I meant a codicil" -> "a codicil"), else None."""
    found = _OPENER.match(turn)
    if not found:
        return None
    subject = found.group("subject").strip(" ,;:")
    return None if not subject or _NOT_A_SUBJECT.match(subject) else subject


def corrected(previous: str, subject: str) -> str:
    """The previous question with `subject` as its subject: in place of the noun phrase that shares
    a word with it, else of the pronoun, else of the first noun phrase."""
    question = previous.strip()
    said = {word.lower() for word in re.findall(r"\w+", subject)}
    phrases = list(_DETERMINER.finditer(question))
    sharing = [m for m in phrases if said & {w.lower() for w in re.findall(r"\w+", m.group(0))[1:]}]
    found = next(iter(sharing), None) or _PRONOUN.search(question) or next(iter(phrases), None)
    if found:
        return question[: found.start()] + subject + question[found.end() :]
    return f"{subject}: {question}"


def restates(previous: str, subject: str, least: int) -> bool:
    """The subject restates the whole need rather than naming a thing: it has as many words of
    its own as the previous question, and at least `least` (a noun phrase, "the query parameter",
    "the downtown of SF", rarely holds more than two); or at least `least` words the previous
    question does not hold, however long that question was ("update the existing rows with the
    new values rather than skipping them" after a two-sentence question about skipping them).
    Such a subject is the question, alone ("the environment variable that switches off the rich
    formatting of the help" after "and turning the env var off in the help output?"): put into
    the previous question, the words the user has just turned down would pull the search back to
    them, and a clause put in place of a noun phrase garbles both."""
    own = set(subject_words(subject))
    before = set(subject_words(previous))
    held = {stem(word) for word in before}
    new = {word for word in own if stem(word) not in held}
    return (len(own) >= least and len(own) >= len(before)) or len(new) >= least


RETRY = "/retry"  # how a turn records the REPL's `/retry X` as typed


def subject_typed(typed: str) -> str:
    """X of a correction as a turn records it ("no, I meant X" or "/retry X"); "" for none."""
    if typed.startswith(RETRY):
        return typed[len(RETRY) :].strip()
    return subject_of(typed) or ""
