"""ragchat's English, on the ground floor: every word list, pattern and word-form rule the
follow-up detector (`conversation/followup/`) reads, each once, named for what it recognises.
To read another language, swap this file (and keep the names); nothing else holds a word of
English.

Stop words, question scaffolding and chat filler are also what keyword extraction, FTS query
building, title matching and extractive answers skip (`text.py`, `search/`, `ingest/keywords.py`,
`answer/extractive.py` import them here): this module imports nothing of ragchat.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# the Snowball stemmer's language (text.stem): compares word forms across messages as FTS5 does
STEMMER_LANGUAGE = "english"

# --- words that say nothing of a subject ---------------------------------------------------------

# function words: never a search term, never a subject
STOPWORDS = frozenset(
    """
    a about above after again against all almost also although always am among an and another any
    anybody anyone anything anyway anywhere are aren't around as at away be became because become
    been before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't done down during each either else enough etc even ever every everyone
    everything few for from further get gets getting give given go goes going got had hadn't has
    hasn't have haven't having he he'd he'll he's her here here's hers herself him himself his how
    how's however i i'd i'll i'm i've if in into is isn't it it's its itself just know let let's
    like made make makes many may me might mine more most much must mustn't my myself need needs no
    nor not nothing now of off often on once one only or other others otherwise ought our ours
    ourselves out over own per perhaps please put quite rather re really regarding said same say
    says see seem seems shall shan't she she'd she'll she's should shouldn't since so some somebody
    someone something sometimes still such sure take tell than that that's the their theirs them
    themselves then there there's these they they'd they'll they're they've thing things this those
    though through thus to too toward towards under until up upon us use used using very via was
    wasn't way we we'd we'll we're we've well were weren't what what's whatever when when's where
    where's whether which while who who's whom whose why why's with within without won't
    would wouldn't yes yet you you'd you'll you're you've your yours yourself yourselves
    """.split()
)

# words that make a question a question but say nothing about its subject
QUESTION_WORDS = frozenset(
    """
    explain describe define definition mean means meant meaning tell show give list summarize
    summarise
    summary elaborate detail details example examples want wanted wonder curious question questions
    answer okay ok thanks thank hi hello hey info information kind sort type types lot bit
    something anything work works working happen happens happened difference differences
    love like want wants wanted wish asking ask asked correct right sure exactly actually really
    maybe probably concrete specific specifically general generally basically true false
    """.split()
)

# discourse and filler: how people talk in a chat, never what they ask about
FILLER = frozenset(
    """
    oh ah uh um hmm wow cool nice great good interesting fascinating amazing awesome clear clearly
    okay ok alright fine gotcha got understand understood see sounds thanks thank appreciate
    helpful useful perfect wonderful excellent lol yeah yep yes no nope sure indeed anyway
    hey hi hello please kindly also again just still ever mention mentioned said told earlier
    """.split()
)

# softeners left in a meta-request that are no subject of its own ("could you explain a bit?")
META_SOFTENERS = frozenset({"can", "could", "would", "bit", "little"})

# --- pointing words: one table, the sets derived from it -----------------------------------------


@dataclass(frozen=True)
class Pointer:
    """What a pointing word says of what it points at."""

    personal: bool = False  # a personal pronoun: stands for a thing or person named before
    possessive: bool = False  # its, their, his: its referent takes "'s"
    plural: bool = False  # they, these: wants a plural referent
    person: bool = False  # he, she: wants a person's (short) name
    demonstrative: bool = False  # this, that, these, those
    determiner: bool = False  # may take a noun of its own ("this app", "the same one")
    place: bool = False  # there: a place pointed at (unless existential)


POINTERS: dict[str, Pointer] = {
    "it": Pointer(personal=True),
    "its": Pointer(personal=True, possessive=True),
    "it's": Pointer(),  # points back, but is no pronoun a referent replaces
    "they": Pointer(personal=True, plural=True),
    "them": Pointer(personal=True, plural=True),
    "their": Pointer(personal=True, plural=True, possessive=True),
    "theirs": Pointer(personal=True, plural=True, possessive=True),
    "he": Pointer(personal=True, person=True),
    "she": Pointer(personal=True, person=True),
    "him": Pointer(personal=True, person=True),
    "his": Pointer(personal=True, person=True, possessive=True),
    "her": Pointer(personal=True, person=True, possessive=True),
    "hers": Pointer(personal=True, person=True, possessive=True),
    "this": Pointer(demonstrative=True, determiner=True),
    "that": Pointer(demonstrative=True, determiner=True),
    "these": Pointer(demonstrative=True, determiner=True, plural=True),
    "those": Pointer(demonstrative=True, determiner=True, plural=True),
    "same": Pointer(determiner=True),
    "other": Pointer(determiner=True),
    "there": Pointer(place=True),
    "such": Pointer(),
    "former": Pointer(),
    "latter": Pointer(),
    "above": Pointer(),
    "aforementioned": Pointer(),
    "previous": Pointer(),
}


def _pointers(attribute: str) -> frozenset[str]:
    return frozenset(word for word, pointer in POINTERS.items() if getattr(pointer, attribute))


POINTING_WORDS = frozenset(POINTERS)  # every word that may point outside the question
PERSONAL = _pointers("personal")  # it, they, he, ...
POSSESSIVE = _pointers("possessive")  # its, their, his, ...
PLURAL = _pointers("plural")  # they, them, these, those, ...
PERSON = _pointers("person")  # he, she, him, his, her, hers
DEMONSTRATIVES = _pointers("demonstrative")  # this, that, these, those
DETERMINERS = _pointers("determiner")  # pointers that may take a noun of their own
PLACES = _pointers("place")  # there
REPLACEABLE = PERSONAL | DEMONSTRATIVES  # the pointers a referent may replace in the question

# what ends a clause: a pronoun after one may stand for a thing named before it ("run a tool once
# without installing it"); in the same clause it may not ("create a spider inside it")
CLAUSE_BOUNDARY = re.compile(
    r",|;|\b(?:and|or|but|so|without|while|when|whenever|if|because|before|after|until|unless|"
    r"then|than)\b",
    re.IGNORECASE,
)

# relative pronouns: "the state that borders ..." points at nothing outside the question
RELATIVE_PRONOUNS = frozenset({"that", "which"})
# demonstratives whose next word is their noun ("this app"); "that" + word is mostly a conjunction
NAMING_DEMONSTRATIVES = DEMONSTRATIVES - RELATIVE_PRONOUNS
DEFINITE_ARTICLE = "the"  # "the document": a deictic noun pointed at with the article
EXPLETIVE_PRONOUN = "it"  # the pronoun that can be a dummy subject ("is it true that")

# nouns that point at the conversation itself ("the document", "this answer"), not at a subject
DEICTIC_NOUNS = frozenset(
    "document doc file text article page passage answer source sources one thing".split()
)

# forms of "be": "is there", "was there" are existential, not a place pointed at
BE = frozenset("is are was were be been isn't aren't wasn't weren't".split())
# "there" before these is existential ("there isn't", "there may be"), not a place pointed at
EXISTENTIAL = BE | frozenset(
    "will would may might can could should must has have had seem seems appear "
    "appears exist exists won't can't".split()
)
# the expletive "it": "is it true that ...", "it is important to ..." points at nothing
EXPLETIVE = re.compile(
    r"^(?:is|was|isn't) it (?:\w+ )?(?:true|possible|necessary|safe|legal|required|okay|ok|better"
    r"|worth|normal|common|important|essential|advisable|wise)\b"
    r"|^it (?:is|was|'s) (?:\w+ )?(?:\w+ )(?:to|that|for)\b"
)
# a word right after these is no thing named: "how long", "how do I set a timeout", "can we merge"
NOT_A_NOUN_AFTER = frozenset("how i you we they he she".split())

# --- names -------------------------------------------------------------------------------------

# a capitalised word that does not start a sentence (a name, an acronym: "HAART", "U.S.")
CAPITALISED_INSIDE = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'’.-]*")
# a run of capitalised words, with the particles names hold ("University of Pennsylvania")
NAME = re.compile(r"(?:[A-Z][\w'’-]+)(?: (?:[A-Z][\w'’-]+|of|de|van|von))*(?<! of)")

# --- phrases that say what a question wants of the conversation ----------------------------------

# requests about the last answer itself: summarise, more, explain, example, rephrase, clarify
META_PATTERNS = [
    r"summari[sz]e|sum (it|this|that) up|sum up|recap|tl;?dr|in short|briefly",
    r"tell me more|more (details?|info(rmation)?|about (it|that|this))|go on|continue|keep going",
    r"explain (more|further|that|this|it|again|better|in detail)|explain\??$",
    r"elaborate|expand on|go deeper|more depth|in more detail|more detail",
    r"(give|show) (me )?(an |some )?examples?|for example\??$|such as\??$|like what\??$",
    r"in other words|rephrase|reword|simplify|simpler|plain (english|words)|eli5|explain like",
    r"what do you mean|meaning\??$|clarify",
]
# a question asking for a reason ("why is it off by default?", "but why not just use +?") and a
# sentence that gives one ("... to avoid showing a password", "The reason for this is that ..."):
# "since" and "as" are left out, they also tell time and compare
WHY_QUESTION = re.compile(
    r"^\W*(?:(?:and|but|so|then|ok(?:ay)?|hm+)[\s,]+)*(?:why|how come)\b", re.IGNORECASE
)
REASON_CUES = re.compile(
    r"\b(?:because|the reason|reasons?\b|so that|in order to|to (?:avoid|prevent|allow|ensure)"
    r"|due to|as a result|otherwise|that'?s why|this is why|therefore|thus)\b",
    re.IGNORECASE,
)
# the head of a meta-request with an optional subject after it ("give me an example [in Python]",
# "show me the code [for that]", "an example with Y?", "summarize [the X page]", "tell me more
# [about Z]"): a request verb or a bare request noun at the start, after chat openers
META_OPENERS = (
    r"(?:(?:please|ok(?:ay)?|so|now|and|but|then|just|quick(?:ly)?|(?:can|could|would) you)"
    r"[\s,]+)*"
)
META_HEAD = re.compile(
    rf"^{META_OPENERS}(?P<head>"
    r"(?:give|show|write|paste)(?: (?:me|us))?\b"
    r"|(?:an?|some|the|one|another|any)? ?(?:more )?(?:examples?|code|snippets?|samples?|demo)\b"
    r"|summari[sz]e|sum (?:it|this|that)? ?up|(?:a |the )?(?:quick |short |brief )?"
    r"(?:summary|recap|tl;?dr|overview)\b"
    r"|tell (?:me|us) more|(?:explain|elaborate|expand)(?: (?:more|further|on))?\b|more on\b)"
    r"(?P<rest>.*)$",
    re.IGNORECASE,
)
# words of a meta-request's tail that are no subject of their own ("an example of that please")
META_NOUNS = frozenset(
    "example examples code snippet snippets sample samples demo version summary recap overview "
    "part section bit side kind short shortest quick please".split()
)
# a bare reply that is a meta-request by itself: "why?", "ok", "go on"
META_BARE = re.compile(
    r"^(yes|yeah|yep|ok(ay)?|sure|why|how so|really|and|so|go on|more|continue|why not|how come)"
    r"[.!?]*$"
)
# an explicit change of subject at the start: "now tell me about X", "different question: X"
TOPIC_SHIFT = re.compile(
    r"^\s*(?:(?:ok(?:ay)?|alright|thanks|thank you|great)[,.!]?\s+)?"
    r"(?:now|next|moving on|switching (?:gears|topics?)|"
    r"on (?:a|another) (?:different|other|separate) (?:note|topic)|"
    r"(?:a |on a )?(?:different|new|another|separate|unrelated) (?:question|topic|subject)|"
    r"let'?s talk about|"
    r"let'?s (?:switch|move on) to|changing the subject)[:,.!]?\s*(?:,|:|-)?\s*"
    r"(?:(?:can you |could you |please )?"
    r"(?:tell me|talk|explain|ask|what about|how about)(?: about)?\s*)?",
    re.IGNORECASE,
)
# an elliptical question that continues the last one: "and the queen?", "what about X?", "why?"
ELLIPSIS = re.compile(
    r"^\s*(?:and|but|also|or|so|then)\b|^\s*(?:what|how) about\b|^\s*what if\b|^\s*same for\b"
    r"|^\s*(?:why|how)\s*\?*\s*$"
    r"|^\s*(?:anything|any other|what else|is there anything|something else)\b"
    r"|\bi (?:meant|mean)\b|^\s*no[,.!]|\b(?:as well|too|either)\s*[?.!]*\s*$",
    re.IGNORECASE,
)
# "what about X?": X, the subject the question brings
WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+)$", re.IGNORECASE)
# chat discourse that points at nothing in the documents: "got it", "that's interesting"
DISCOURSE = re.compile(
    r"\b(?:got it|i see|i get it|that'?s (?:it|all|great|interesting|helpful|good|clear|cool|nice"
    r"|useful|amazing)"
    r"|(?:it|this|that) (?:is|was|sounds|seems|makes sense)(?: (?:great|interesting|helpful|good"
    r"|clear|cool|nice|useful|amazing|fascinating|so|very|really)\b)+|makes sense"
    r"|thank(?:s| you)(?: for (?:that|this|it))?)\b[,.!]*"
    # a short reaction said as a statement: "That is fine.", "This is impressive!", "It's a pity."
    r"|(?:^|(?<=[.!?] ))(?:it|this|that)(?:'s| is| was| sounds| seems| looks)"
    r"(?: (?:so|very|really|quite|a|an))?"
    r" \w+(?: \w+)?[.!]+",
    re.IGNORECASE,
)

# --- word forms ---------------------------------------------------------------------------------


def looks_plural(phrase: str) -> bool:
    """A head noun in -s: "bees", "honey bees", "policies" (not "glass", "virus", "analysis")."""
    head = phrase.split()[-1]
    return len(head) > 3 and head.endswith("s") and not head.endswith(("ss", "us", "is", "'s"))


def looks_adverb(word: str) -> bool:
    """A word in -ly ("quickly"): says how something is done, names nothing."""
    return word.endswith("ly")


POSSESSIVE_ENDINGS = ("'s", "’s")  # "python's": the word "python" as a term


def possessive(noun: str) -> str:
    """The possessive of a noun: "honey" -> "honey's", "bees" -> "bees'"."""
    return f"{noun}'" if noun.endswith("s") else f"{noun}'s"
