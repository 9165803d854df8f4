"""Corrections: "no, I meant X", "I mean X", "not that, X" (and the REPL's `/retry X`) re-run the
previous question with X as its subject.

This happens before reformulation, so the heuristic and the Ollama reformulator both receive
the corrected question ("how do I make a codicil valid?") as the turn's question, and the
lineage records the turn as a correction. The English openers are the one table below.

Where X goes: in place of the previous question's pronoun ("how do I make it required?" ->
"how do I make the query parameter required?"), else of its first determiner phrase ("how do
I make a will valid?" -> "how do I make a codicil valid?"); with neither, X leads the question.
"""

from __future__ import annotations

import re

# The one table of English correction openers (regular expressions, matched at the start of the
# turn, case-insensitive); what follows them is X.
CORRECTION_OPENERS = (
    r"(?:no[,.!]*\s+)?i\s+meant\s+to\s+(?:ask|say)(?:\s+about)?",
    r"(?:no|nope|sorry)[,.!]*\s+(?:i\s+)?(?:meant|mean)",
    r"i\s+(?:meant|mean)",
    r"(?:no[,.!]*\s+)?not\s+that[,.:;!-]*",
    r"(?:no[,.!]*\s+)?what\s+i\s+meant\s+(?:was|is)",
)
_OPENER = re.compile(rf"^\s*(?:{'|'.join(CORRECTION_OPENERS)})\s+(?P<subject>\S.*?)[\s.!?]*$", re.IGNORECASE)
# X is a new question, not a subject ("I mean, how does it work?"): the turn is no correction
_QUESTION = re.compile(r"^(?:what|how|why|when|where|which|who|whom|whose|is|are|do|does|did|can|could|should)\b",
                       re.IGNORECASE)
_PRONOUN = re.compile(r"\b(it|them|they|this|that|these|those)\b", re.IGNORECASE)
_DETERMINER = re.compile(
    r"\b(?:a|an|the|my|your|our|their|this|that)\s+(?:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*|[\w'-]+)")


def subject_of(turn: str) -> str | None:
    """X when the turn is a correction ("no, I meant a codicil" -> "a codicil"), else None."""
    found = _OPENER.match(turn)
    if not found:
        return None
    subject = found.group("subject").strip(" ,;:")
    return None if not subject or _QUESTION.match(subject) else subject


def corrected(previous: str, subject: str) -> str:
    """The previous question with `subject` as its subject."""
    question = previous.strip()
    for pattern in (_PRONOUN, _DETERMINER):
        found = pattern.search(question)
        if found:
            return question[: found.start()] + subject + question[found.end():]
    return f"{subject}: {question}"
