"""Cues: what a question's own words say of its need for the conversation. Each cue is a small
function returning typed `Cue`s; pure, no corpus access.

- meta: about the last answer itself ("summarize it", "tell me more", "why?");
- shift: an explicit change of subject ("now tell me about X", "different question: ...");
- anaphora: a pronoun or demonstrative without an antecedent in the question ("it", "this app");
- deixis: a noun that points at the conversation ("the document", "this answer");
- ellipsis: an elliptical opening ("and the Y?", "what about X?", "why?");
- what_about: "what about X?", with X's span;
- discourse: chat that points at nothing ("got it", "that's interesting"): no cue is read in it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from ...lexicon import (
    BE,
    CAPITALISED_INSIDE,
    DEFINITE_ARTICLE,
    DEICTIC_NOUNS,
    DETERMINERS,
    DISCOURSE,
    ELLIPSIS,
    EXISTENTIAL,
    EXPLETIVE,
    EXPLETIVE_PRONOUN,
    META_BARE,
    META_HEAD,
    META_NOUNS,
    META_PATTERNS,
    META_SOFTENERS,
    NAMING_DEMONSTRATIVES,
    PERSONAL,
    PLACES,
    POINTING_WORDS,
    QUESTION_WORDS,
    RELATIVE_PRONOUNS,
    STOPWORDS,
    TOPIC_SHIFT,
    WHAT_ABOUT,
)
from ...text import identifiers, words

CueKind = Literal["meta", "shift", "anaphora", "deixis", "ellipsis", "what_about", "discourse"]
# pointing words that stand alone ("it", "such"): not determiners (their noun may follow), not a
# place ("there" is existential or not by its neighbours)
LONE_POINTERS = POINTING_WORDS - DETERMINERS - PLACES


@dataclass(frozen=True)
class Cue:
    kind: CueKind
    text: str  # the cue's words, lower-cased ("this app", "the document", "what about ivanka")
    span: tuple[int, int]  # where in the question (start, end); (0, 0) when not found verbatim
    reason: str


@dataclass(frozen=True)
class Signals:
    is_meta: bool
    explicit_shift: bool
    shift_rest: str  # the question with the shift phrase removed
    anaphora: list[str]
    ellipsis: bool
    content: list[str]  # the question's own content words
    cues: tuple[Cue, ...] = field(default=())

    def follow_up_cues(self) -> list[str]:
        cues = (
            [f"refers back with {', '.join(repr(a) for a in self.anaphora)}"]
            if self.anaphora
            else []
        )
        if self.ellipsis:
            cues.append("elliptical opening")
        return cues


def _span(question: str, text: str, skip: tuple[tuple[int, int], ...] = ()) -> tuple[int, int]:
    """Where the words of a cue stand in the question: the first place (any case and spacing)
    outside the `skip` spans (chat discourse)."""
    pattern = r"\s+".join(re.escape(part) for part in text.split())
    for match in (
        re.finditer(rf"(?<!\w){pattern}(?!\w)", question, re.IGNORECASE) if pattern else ()
    ):
        if not any(start <= match.start() < end for start, end in skip):
            return match.span()
    return (0, 0)


def _cue(
    kind: CueKind, question: str, text: str, reason: str, skip: tuple[tuple[int, int], ...] = ()
) -> Cue:
    return Cue(kind=kind, text=text, span=_span(question, text, skip), reason=reason)


# --- meta-request ---------------------------------------------------------------------------------


def _strip_meta(text: str) -> str:
    stripped = text.lower()
    for pattern in META_PATTERNS:
        stripped = re.sub(pattern, " ", stripped)
    return stripped


def meta_subject(question: str) -> str | None:
    """A meta-request by its shape: a request head at the start ("give me an example", "show
    me", "summarize", "tell me more") and an optional subject after it ("in Python", "for
    that", "about the lazy loading"). The subject's words ("" when it has none); None when the
    question is no meta-request."""
    found = _meta_parts(question)
    if found is not None:
        return found[0]
    return "" if is_meta_request(question) else None


def meta_own_words(question: str) -> list[str]:
    """What a meta-request says besides its request: its subject and the words of its other
    clauses ("I study astronauts. Tell me more about her": 'study', 'astronauts')."""
    found = _meta_parts(question)
    return [] if found is None else [*found[0].split(), *found[1]]


def _meta_parts(question: str) -> tuple[str, list[str]] | None:
    flat = " ".join(question.lower().split())
    if META_BARE.match(flat):
        return "", []
    clauses = re.split(r"[,;:.!?]\s+|\s+-\s+", flat)  # "that page is long, summarize it"
    asked = re.split(r"\?\s+", flat)[:-1]  # clauses that end in a question mark
    for index, clause in enumerate(clauses):
        match = META_HEAD.match(clause.strip())
        if match is None:
            continue
        rest = match.group("rest")
        following = (words(rest) or [""])[0]
        if _noun_head(match.group("head")) and following and _subject_words(following):
            continue  # "code review tips": the noun is the start of a subject of its own
        if asked and not any(clause.strip() in question for question in asked):
            return None  # "what age must a witness be? please explain it": a question first
        others = [
            w for i, c in enumerate(clauses) if i != index for w in _subject_words(_strip_meta(c))
        ]
        return " ".join(dict.fromkeys(_subject_words(_strip_meta(rest)))), others
    return None


def _noun_head(head: str) -> bool:
    return bool(words(head)) and words(head)[-1] in META_NOUNS


def _subject_words(text: str) -> list[str]:
    return [
        w
        for w in words(text)
        if w not in STOPWORDS
        and w not in QUESTION_WORDS
        and w not in POINTING_WORDS
        and w not in DEICTIC_NOUNS
        and w not in META_SOFTENERS
        and w not in META_NOUNS
    ]


def is_meta_request(question: str) -> bool:
    """About the last answer itself: a meta phrase and nothing of its own subject besides."""
    flat = " ".join(question.lower().split())
    if META_BARE.match(flat):
        return True
    if not any(re.search(pattern, flat) for pattern in META_PATTERNS):
        return False
    return not _subject_words(_strip_meta(flat))


def meta_cue(question: str) -> Cue | None:
    if meta_subject(question) is None:
        return None
    flat = " ".join(question.split())
    return Cue(
        kind="meta",
        text=flat.lower(),
        span=(0, len(question)),
        reason="a request about the last answer",
    )


# --- explicit shift -------------------------------------------------------------------------------


def shift_cue(question: str) -> Cue | None:
    """The shift phrase of "now tell me about X" (the rest is the new subject)."""
    match = TOPIC_SHIFT.match(question)
    if not match or not match.group(0).strip():
        return None
    return Cue(
        kind="shift",
        text=" ".join(match.group(0).lower().split()),
        span=(0, match.end()),
        reason="an explicit change of subject",
    )


def explicit_shift(question: str) -> tuple[bool, str]:
    """(whether the question opens with a shift phrase, the question after it)."""
    cue = shift_cue(question)
    if cue is None:
        return False, question
    rest = question[cue.span[1] :].strip(" ,:-")
    return True, rest or question


# --- anaphora and deixis --------------------------------------------------------------------------


def _named_positions(question: str, tokens: list[str]) -> list[int]:
    """Token positions of capitalised words that do not start a sentence (names, acronyms) and
    of code identifiers (`click.prompt`, `user_name`): things the question names itself."""
    capitalised = {
        token for m in CAPITALISED_INSIDE.finditer(question) for token in words(m.group(0))
    }  # "U.S." -> "u", "s", as the question's tokens
    capitalised |= {token for name in identifiers(question) for token in words(name)}
    return [
        i
        for i, t in enumerate(tokens)
        if t in capitalised and t not in STOPWORDS and t not in PERSONAL
    ]


def _expletive(tokens: list[str], index: int) -> bool:
    """An "it" that points at nothing: "is it true that ...", "it is important to ..."."""
    return bool(
        EXPLETIVE.search(" ".join(tokens[index : index + 5]))
        or EXPLETIVE.search(" ".join(tokens[max(index - 1, 0) : index + 3]))
    )


def _relative(token: str, before: str, following: str) -> bool:
    """A relative pronoun after a noun ("the state that borders ..."), not a pointer. A clause
    follows a relative pronoun: one that ends the question points ("which release changed
    that?")."""
    return (
        token in RELATIVE_PRONOUNS
        and bool(before)
        and bool(following)
        and before not in STOPWORDS
        and before not in QUESTION_WORDS
    )


def _pointer_at(tokens: list[str], index: int) -> str | None:
    """The pointing phrase at a token ("it", "this app", "the document"), or None."""
    token = tokens[index]
    following = tokens[index + 1] if index + 1 < len(tokens) else ""
    before = tokens[index - 1] if index > 0 else ""
    if _relative(token, before, following):
        return None
    if token in NAMING_DEMONSTRATIVES and following and following not in STOPWORDS:
        return f"{token} {following}"  # "this app": a thing named before
    if token in DETERMINERS:
        if not following or following in STOPWORDS:
            return token
        return f"{token} {following}" if following in DEICTIC_NOUNS else None
    if token == DEFINITE_ARTICLE:
        return f"{token} {following}" if following in DEICTIC_NOUNS else None
    if token in LONE_POINTERS:
        return token
    if token in PLACES and index > 0 and before not in BE and following not in EXISTENTIAL:
        return token  # "what can I do there?"; not "is there", "when there isn't enough air"
    return None


def anaphora(question: str) -> list[str]:
    """Pronouns and demonstratives that point outside the question (no noun of its own follows
    'this/that/these/those', or 'the document/file/answer' style deixis)."""
    tokens = words(question)
    named = _named_positions(question, tokens)
    found: list[str] = []
    for index, token in enumerate(tokens):
        if token in PERSONAL and any(position < index for position in named):
            continue  # "What is HAART and how does it differ ...": the antecedent is in it
        if token == EXPLETIVE_PRONOUN and _expletive(tokens, index):
            continue
        pointer = _pointer_at(tokens, index)
        if pointer:
            found.append(pointer)
    return list(dict.fromkeys(found))


def is_deixis(pointer: str) -> bool:
    """A phrase whose noun points at the conversation: "the document", "this answer"."""
    return len(pointer.split()) > 1 and pointer.split()[1] in DEICTIC_NOUNS


def pointer_cues(question: str) -> list[Cue]:
    """Anaphora and deixis outside chat discourse ("got it" holds no pointer)."""
    chat = tuple(match.span() for match in DISCOURSE.finditer(question))
    return [
        _cue("deixis", question, pointer, "points at the conversation itself", chat)
        if is_deixis(pointer)
        else _cue("anaphora", question, pointer, "points outside the question", chat)
        for pointer in anaphora(DISCOURSE.sub(" ", question))
    ]


def without_deixis(question: str) -> str:
    """The question without its deictic nouns ("What is the document about?" -> "What is the
    about?"): words that point at the conversation name nothing to search for."""
    pointing = {
        word for cue in anaphora(question) for word in cue.split()[1:] if word in DEICTIC_NOUNS
    }
    if not pointing:
        return question
    return " ".join(w for w in question.split() if w.lower().strip("?.,!;:") not in pointing)


# --- ellipsis, "what about X?", discourse ---------------------------------------------------------


def ellipsis_cue(question: str) -> Cue | None:
    match = ELLIPSIS.search(DISCOURSE.sub(" ", question).strip())
    if not match:
        return None
    return _cue(
        "ellipsis", question, " ".join(match.group(0).lower().split()), "an elliptical opening"
    )


def what_about_cue(question: str) -> Cue | None:
    """In "what about X?", X is what the question brings (the cue's span is X's)."""
    match = WHAT_ABOUT.match(question)
    if not match:
        return None
    return Cue(
        kind="what_about",
        text=match.group(1).lower(),
        span=match.span(1),
        reason="asks the last question again of another subject",
    )


def what_about_subject(question: str) -> str | None:
    match = WHAT_ABOUT.match(question)
    return match.group(1) if match else None


def discourse_cues(question: str) -> list[Cue]:
    return [
        Cue(
            kind="discourse",
            text=" ".join(m.group(0).lower().split()),
            span=m.span(),
            reason="chat that points at nothing",
        )
        for m in DISCOURSE.finditer(question)
    ]


# --- all of them ---------------------------------------------------------------------------


def read_cues(question: str) -> list[Cue]:
    """Every cue of a question, in the order a reader takes them in. After an explicit shift
    the rest is a new question: no pointer, meta-request or ellipsis counts."""
    shift = shift_cue(question)
    if shift is not None:
        return [shift]
    found = [
        meta_cue(question),
        *discourse_cues(question),
        *pointer_cues(question),
        ellipsis_cue(question),
        what_about_cue(question),
    ]
    return [cue for cue in found if cue is not None]


def read_signals(question: str, content: list[str]) -> Signals:
    """What the question says of its need for context; `content` loses the words of its
    deictic phrases ("the document" is no subject of its own)."""
    shift, rest = explicit_shift(question)
    cues = read_cues(question)
    pointing = [cue.text for cue in cues if cue.kind in ("anaphora", "deixis")]
    deictic = {word for cue in pointing for word in cue.split()[1:] if word in DEICTIC_NOUNS}
    return Signals(
        is_meta=any(cue.kind == "meta" for cue in cues),
        explicit_shift=shift,
        shift_rest=rest,
        anaphora=pointing,
        ellipsis=any(cue.kind == "ellipsis" for cue in cues),
        content=[word for word in content if word not in deictic],
        cues=tuple(cues),
    )
