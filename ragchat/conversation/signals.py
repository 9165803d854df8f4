"""Reading a question for what it needs from the conversation. Pure functions, no corpus access.

- meta-request: about the last answer itself ("summarize it", "tell me more", "why?");
- explicit topic shift: "now tell me about X", "different question: ...";
- follow-up cues: anaphora/deixis without an antecedent, ellipsis ("what about X?", "and the Y?").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..text import QUESTION_WORDS, STOPWORDS, words

ANAPHORA = frozenset(
    "it its it's this that these those they them their theirs there he she him her his hers such "
    "same other former latter above aforementioned previous".split()
)
DEICTIC_NOUNS = frozenset("document doc file text article page passage answer source sources one thing".split())

META_PATTERNS = [
    r"summari[sz]e|sum (it|this|that) up|sum up|recap|tl;?dr|in short|briefly",
    r"tell me more|more (details?|info(rmation)?|about (it|that|this))|go on|continue|keep going",
    r"explain (more|further|that|this|it|again|better|in detail)|explain\??$",
    r"elaborate|expand on|go deeper|more depth|in more detail|more detail",
    r"(give|show) (me )?(an |some )?examples?|for example\??$|such as\??$|like what\??$",
    r"in other words|rephrase|reword|simplify|simpler|plain (english|words)|eli5|explain like",
    r"what do you mean|meaning\??$|clarify",
]
META_BARE = re.compile(r"^(yes|yeah|yep|ok(ay)?|sure|why|how so|really|and|so|go on|more|continue|why not|how come)[.!?]*$")
SHIFT_PATTERNS = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|alright|thanks|thank you|great)[,.!]?\s+)?"
    r"(?:now|next|moving on|switching (?:gears|topics?)|on (?:a|another) (?:different|other|separate) (?:note|topic)|"
    r"(?:a |on a )?(?:different|new|another|separate|unrelated) (?:question|topic|subject)|let'?s talk about|"
    r"let'?s (?:switch|move on) to|changing the subject)[:,.!]?\s*(?:,|:|-)?\s*"
    r"(?:(?:can you |could you |please )?(?:tell me|talk|explain|ask|what about|how about)(?: about)?\s*)?",
    re.IGNORECASE,
)
ELLIPSIS = re.compile(
    r"^\s*(?:and|but|also|or|so|then)\b|^\s*(?:what|how) about\b|^\s*what if\b|^\s*same for\b"
    r"|^\s*(?:why|how)\s*\?*\s*$|^\s*(?:anything|any other|what else|is there anything|something else)\b"
    r"|\bi (?:meant|mean)\b|^\s*no[,.!]|\b(?:as well|too|either)\s*[?.!]*\s*$",
    re.IGNORECASE,
)


# Chat discourse that points at nothing in the documents: "got it", "that's interesting".
DISCOURSE = re.compile(
    r"\b(?:got it|i see|i get it|that'?s (?:it|all|great|interesting|helpful|good|clear|cool|nice|useful|amazing)"
    r"|(?:it|this|that) (?:is|was|sounds|seems|makes sense)(?: (?:great|interesting|helpful|good|clear|cool|"
    r"nice|useful|amazing|fascinating|so|very|really)\b)+|makes sense|thank(?:s| you)(?: for (?:that|this|it))?)\b[,.!]*"
    # a short reaction said as a statement: "That is fine.", "This is impressive!", "It's a pity."
    r"|(?:^|(?<=[.!?] ))(?:it|this|that)(?:'s| is| was| sounds| seems| looks)(?: (?:so|very|really|quite|a|an))?"
    r" \w+(?: \w+)?[.!]+",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Signals:
    is_meta: bool
    explicit_shift: bool
    shift_rest: str  # the question with the shift phrase removed
    anaphora: list[str]
    ellipsis: bool
    content: list[str]  # the question's own content words

    def follow_up_cues(self) -> list[str]:
        cues = [f"refers back with {', '.join(repr(a) for a in self.anaphora)}"] if self.anaphora else []
        if self.ellipsis:
            cues.append("elliptical opening")
        return cues


def _strip_meta(text: str) -> str:
    stripped = text.lower()
    for pattern in META_PATTERNS:
        stripped = re.sub(pattern, " ", stripped)
    return stripped


def is_meta_request(question: str) -> bool:
    """About the last answer itself: a meta phrase and nothing of its own subject besides."""
    flat = " ".join(question.lower().split())
    if META_BARE.match(flat):
        return True
    if not any(re.search(pattern, flat) for pattern in META_PATTERNS):
        return False
    rest = [w for w in words(_strip_meta(flat)) if w not in STOPWORDS and w not in QUESTION_WORDS
            and w not in ANAPHORA and w not in DEICTIC_NOUNS and w not in {"can", "could", "would", "bit", "little"}]
    return not rest


def explicit_shift(question: str) -> tuple[bool, str]:
    match = SHIFT_PATTERNS.match(question)
    if not match or not match.group(0).strip():
        return False, question
    rest = question[match.end():].strip(" ,:-")
    return True, rest or question


BE = frozenset("is are was were be been isn't aren't wasn't weren't".split())
# "there" before these is existential ("there isn't", "there may be"), not a place pointed at
EXISTENTIAL = BE | frozenset("will would may might can could should must has have had seem seems appear "
                             "appears exist exists won't can't".split())
PERSONAL = frozenset("it its they them their theirs he she him her his hers".split())
EXPLETIVE = re.compile(
    r"^(?:is|was|isn't) it (?:\w+ )?(?:true|possible|necessary|safe|legal|required|okay|ok|better|worth|normal"
    r"|common|important|essential|advisable|wise)\b"
    r"|^it (?:is|was|'s) (?:\w+ )?(?:\w+ )(?:to|that|for)\b"
)


def _named_positions(question: str, tokens: list[str]) -> list[int]:
    """Token positions of capitalised words that do not start a sentence (names, acronyms)."""
    capitalised = {token for m in re.finditer(r"(?<=[\w,;:)] )[A-Z][\w'’.-]*", question)
                   for token in words(m.group(0))}  # "U.S." -> "u", "s", as the question's tokens
    return [i for i, t in enumerate(tokens) if t in capitalised and t not in STOPWORDS and t not in PERSONAL]


def anaphora(question: str) -> list[str]:
    """Pronouns and demonstratives that point outside the question (no noun of its own follows
    'this/that/these/those', or 'the document/file/answer' style deixis)."""
    tokens = words(question)
    named = _named_positions(question, tokens)
    found: list[str] = []
    for index, token in enumerate(tokens):
        if token in PERSONAL and any(position < index for position in named):
            continue  # "What is HAART and how does it differ ...": its antecedent is in the question
        if token == "it" and (EXPLETIVE.search(" ".join(tokens[index: index + 5]))
                              or EXPLETIVE.search(" ".join(tokens[max(index - 1, 0): index + 3]))):
            continue  # "is it true that ...", "it is important to ...": points at nothing
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        before = tokens[index - 1] if index > 0 else ""
        if token in {"that", "which"} and before and before not in STOPWORDS and before not in QUESTION_WORDS:
            continue  # "the state that borders ...": a relative pronoun, not a pointer
        if token in {"this", "these", "those"} and following and following not in STOPWORDS:
            found.append(f"{token} {following}")  # "this app": a thing named before
        elif token in {"this", "that", "these", "those", "same", "other"}:
            if not following or following in STOPWORDS or following in DEICTIC_NOUNS:
                found.append(token if not following or following in STOPWORDS else f"{token} {following}")
        elif token == "the" and following in DEICTIC_NOUNS:
            found.append(f"the {following}")
        elif token in ANAPHORA and token not in {"this", "that", "these", "those", "same", "other", "there"}:
            found.append(token)
        elif token == "there" and index > 0 and tokens[index - 1] not in BE and following not in EXISTENTIAL:
            found.append(token)  # "what can I do there?"; not "is there", "when there isn't enough air"
    return list(dict.fromkeys(found))


def read_signals(question: str, content: list[str]) -> Signals:
    """What the question says of its need for context; `content` loses the words of its
    deictic phrases ("the document" is no subject of its own)."""
    shift, rest = explicit_shift(question)
    pointing = anaphora(DISCOURSE.sub(" ", question)) if not shift else []
    deictic = {word for cue in pointing for word in cue.split()[1:] if word in DEICTIC_NOUNS}
    return Signals(
        is_meta=is_meta_request(question) and not shift,
        explicit_shift=shift,
        shift_rest=rest,
        anaphora=pointing,
        ellipsis=bool(ELLIPSIS.search(DISCOURSE.sub(" ", question).strip())) and not shift,
        content=[word for word in content if word not in deictic],
    )


def without_deixis(question: str) -> str:
    """The question without its deictic nouns ("What is the document about?" -> "What is the
    about?"): words that point at the conversation name nothing to search for."""
    pointing = {word for cue in anaphora(question) for word in cue.split()[1:] if word in DEICTIC_NOUNS}
    if not pointing:
        return question
    return " ".join(w for w in question.split() if w.lower().strip("?.,!;:") not in pointing)
