"""Word-level text helpers shared by keyword extraction, FTS query building and reformulation."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from .lexicon import FILLER, QUESTION_WORDS, STEMMER_LANGUAGE, STOPWORDS

WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*", re.UNICODE)


def words(text: str) -> list[str]:
    """Lower-cased word tokens; punctuation and operators vanish, non-Latin scripts stay."""
    return [match.group(0).lower().replace("’", "'") for match in WORD.finditer(text)]


def is_content_word(word: str) -> bool:
    if word in STOPWORDS or word.isdigit() and len(word) < 2:
        return False
    return len(word) >= 2 or not word.isascii()


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stop words, no bare question scaffolding."""
    return [w for w in words(text) if is_content_word(w) and w not in QUESTION_WORDS]


# --- sentences: the one splitter of the package -----------------------------------------------
# A sentence ends at ".", "!" or "?" (closing quotes or brackets may follow), then white space,
# then what can begin one: a capital or a digit, maybe after an opening quote or bracket. Decimals,
# versions and file names never split (no space after their dots). Answers, chunking and the
# follow-up heuristic differ only in the exceptions they make, named by a `SentenceRule`.

# Words ending in "." that do not end a sentence; initials ("U.S.", "J.") are recognised by shape.
ABBREVIATIONS = frozenset(
    "a.k.a. e.g. i.e. cf. vs. viz. approx. dr. mr. mrs. ms. prof. st. jr. sr. no. nos. fig. "
    "figs. vol. art. sec. ch. p. pp. ed. eds. inc. ltd. co. corp. dept. est. gen. gov. rev. mt. "
    "ft. jan. feb. mar. apr. jun. jul. aug. sep. sept. oct. nov. dec.".split()
)
INITIALS = re.compile(r"^[(\"']?(?:[A-Za-z]\.){1,4}$")


@dataclass(frozen=True)
class SentenceRule:
    """Which dots end no sentence, and which quotes may close or open one."""

    abbreviations: bool = True  # after "e.g.", "Dr." or initials ("U.S.", "J.") no sentence ends
    dotted: bool = False  # after the last dot of a dotted word ("a.k.a.", "v1.2.") none ends
    curly_quotes: bool = False  # "”" and "’" may close a sentence, "“" and "‘" open one


ANSWER_SENTENCES = SentenceRule()  # what an answer shows: known abbreviations and initials kept
# chunk boundaries: no sentence ends after a dotted word, "Dr." does. Chunking keeps its own rule:
# with the answer's, the chunks of 42 of the 1,494 documents of the shared eval sets change
CHUNK_SENTENCES = SentenceRule(abbreviations=False, dotted=True, curly_quotes=True)
PLAIN_SENTENCES = SentenceRule(abbreviations=False)  # the follow-up heuristic's light rule


@lru_cache(maxsize=8)
def _gap(rule: SentenceRule) -> re.Pattern[str]:
    """A sentence end: group 1 is the white space between two sentences."""
    closers = "\"')\\]" + ("\u201d\u2019" if rule.curly_quotes else "")
    openers = "\"'(\\[" + ("\u201c\u2018" if rule.curly_quotes else "")
    dotted = r"(?<!\.\w)" if rule.dotted else ""
    return re.compile(rf"{dotted}[.!?][{closers}]*(\s+)(?=[{openers}]?[A-Z0-9])")


def _abbreviation(piece: str) -> bool:
    """`piece` (a sentence up to its end punctuation) ends in a known abbreviation or initials."""
    before = piece.rsplit(None, 1)[-1]
    return before.endswith(".") and (
        before.lower() in ABBREVIATIONS or bool(INITIALS.match(before))
    )


def sentence_spans(
    text: str, start: int = 0, end: int | None = None, rule: SentenceRule = ANSWER_SENTENCES
) -> list[tuple[int, int]]:
    """The sentences of text[start:end] as (start, end) offsets into `text`, without the white
    space around them. Line breaks are white space like any other (one paragraph at a time)."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    begin = start
    for gap in _gap(rule).finditer(text, start, end):
        if rule.abbreviations and _abbreviation(text[begin : gap.start() + 1]):
            continue
        spans.append(_trimmed(text, begin, gap.start(1)))
        begin = gap.end(1)
    spans.append(_trimmed(text, begin, end))
    return [span for span in spans if span[0] < span[1]]


def _trimmed(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split_sentences(text: str, rule: SentenceRule = ANSWER_SENTENCES) -> list[str]:
    """Prose into sentences, each on one line; a blank line always ends one."""
    found: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text):
        found += [" ".join(paragraph[a:b].split()) for a, b in sentence_spans(paragraph, rule=rule)]
    return found


def sentences(text: str) -> list[str]:
    """The follow-up heuristic's sentences: no exception for abbreviations ("Dr. Smith" is two)."""
    return split_sentences(text, PLAIN_SENTENCES)


@lru_cache(maxsize=1)
def _english() -> Any:
    # here: the stemmer loads on the first word compared
    import snowballstemmer

    return snowballstemmer.stemmer(STEMMER_LANGUAGE)


@lru_cache(maxsize=1 << 16)
def stem(word: str) -> str:
    """The English (Porter2) stem, to compare words across messages and sentences the way FTS5's
    porter tokenizer does: "formality"/"formalities", "service"/"services", "policy"/"policies"
    meet ("formalit" vs "formality", "servic" vs "service" with the earlier suffix stripping)."""
    return _english().stemWord(word)


# a compound joined by hyphens ("one-off", "read-only", "built-in"): one term, even when its parts
# are words too common to search alone
_COMPOUND = re.compile(r"[^\W_]+(?:-[^\W_]+)+", re.UNICODE)


def compounds(text: str) -> list[str]:
    """The hyphenated compounds of a text, lower-cased, whose parts are not all content words
    ("one-off", "read-only"; not "fail-fast", whose words already search as a phrase)."""
    found = (m.group(0).lower() for m in _COMPOUND.finditer(text))
    return list(dict.fromkeys(c for c in found if not all(is_content_word(w) for w in words(c))))


def is_compound(term: str) -> bool:
    return bool(_COMPOUND.fullmatch(term.strip()))


# a code identifier as typed: dotted (`click.prompt`, `cli.py`; each part after a dot starts
# lower-case and has two characters or more, so "U.S." and a missing space, "bad.I", are none),
# snake_case, camelCase, a call (`run()`) or anything in backticks. Code, not English: the shape
# is the same in any language.
_IDENTIFIER = re.compile(
    r"`[^`\n]+`"
    r"|[^\W\d_]\w*(?:\.[a-z_]\w+)+"
    r"|\w*[^\W\d_]_\w+"
    r"|\b[a-z]+[A-Z]\w*"
    r"|\b\w+\(\)",
    re.UNICODE,
)


def identifiers(text: str) -> list[str]:
    """The code identifiers a text types, in order (`click.prompt`, `user_name`, `camelCase`)."""
    return [m.group(0).strip("`") for m in _IDENTIFIER.finditer(text)]


_LONG_OPTION = re.compile(r"(?<![\w./-])--[a-z][\w-]*")


def code_names(text: str) -> set[str]:
    """The names a text tells the reader to type as code, lower-cased: its identifiers
    (`_IDENTIFIER`) that only code writes so, an underscore in them (`pool_recycle`,
    `SQLALCHEMY_BINDS`) or a call's parenthesis after them (`fetch()`,
    `DATABASE_URL.replace(...)`), and long options (`--include-apps`). A host name
    ("nasa.gov"), a product's name ("iPhone") or a file's is an identifier, not a thing to type."""
    found = {
        m.group(0).strip("`").removesuffix("()").casefold()
        for m in _IDENTIFIER.finditer(text)
        if "_" in m.group(0) or m.group(0).endswith("()") or text[m.end() : m.end() + 1] == "("
    }
    return found | set(_LONG_OPTION.findall(text))


# a heading that is a name, not a phrase: at most three words, each a name as code writes it
# ("[run] branch", "--print-full-tree", "to_base_units / ito_base_units", ".route()",
# "cattrs.Converter", "site_name") or one lower-case word ("theme", "asyncio"). A reference page
# titles each entry so, and the entry's text then leaves the name out ("(boolean, default False)
# Whether to measure branch coverage ..."). The shape, not the language, tells it.
_NAME_WORD = re.compile(r"\[[^\]\s]+\]|--?\w[\w-]*|\.?\w+(?:[._:-]\w+)*(?:\(\))?|/|,|\.\.\.")
_NAME_SIGN = re.compile(r"^[\[.-]|[\w\]][_.(\[]|[a-z][A-Z]")


def is_name(heading: str) -> bool:
    """Whether a heading is a name (see above), not a title in words: every word holds a letter
    ("1.0.0" is a version), none is plain capitalised text ("Select with session.get()",
    "Third-party projects" are titles), and one is code-shaped, or the heading is one lower-case
    word."""
    parts = [p for p in heading.split() if p not in ("/", ",", "...")]
    if not parts or len(parts) > 3:
        return False
    for part in parts:
        if not _NAME_WORD.fullmatch(part) or not any(c.isalpha() for c in part):
            return False
        if not _NAME_SIGN.search(part) and not part.islower():
            return False
    return len(parts) == 1 or any(_code_shaped(p) for p in parts)


def _code_shaped(word: str) -> bool:
    """Written as code: a sign of code in it, or lower-case words joined by hyphens (an option or
    a package: "max-line-length", "httpx-caching")."""
    return bool(_NAME_SIGN.search(word)) or (word.islower() and "-" in word.strip("-"))


# an identifier as code writes it: words joined by "_", "::" or brackets ("to_camel_case",
# "list[int]"), by dots when each side is a word of two letters or more ("click.prompt"; not
# "e.g." or "3.5"), by hyphens after a leading "-" or "--" ("--dry-run"); or run together with
# capitals ("camelCase", "BaseConverter", "HTTPResponse", see `camel_words`)
_JOINED = re.compile(r"[^\W_](?:_|::|\[|\]\[)[^\W_]|[^\W\d_]{2}\.[^\W\d_]{2}|^--?[^\W_]")
_EDGES = "\"'`“”‘’()<>{},;:!?."


def camel_words(word: str) -> list[str]:
    """A word run together with capitals, cut where a capital starts a new word ("camelCase" ->
    camel, Case; "HTTPResponse" -> HTTP, Response; "OAuth2Bearer" -> OAuth2, Bearer)."""
    cuts = [0]
    for i in range(1, len(word)):
        before, char = word[i - 1], word[i]
        if not char.isupper():
            continue
        after_lower = before.islower() or before.isdigit()
        # "HTTPResponse": the capital before a lower-case run ends an acronym ("PDFs" is one)
        following = word[i + 1 : i + 3]  # two lower-case letters ("NASA's" is one word)
        acronym_ends = before.isupper() and word[i - 2 : i].isupper() and len(following) == 2
        acronym_ends = acronym_ends and following.isalpha() and following.islower()
        if after_lower or acronym_ends:
            cuts.append(i)
    return [word[a:b] for a, b in zip(cuts, [*cuts[1:], len(word)], strict=True)]


def known_nowhere(word: str) -> bool:
    return False


def identifier_phrases(text: str, known: Callable[[str], bool] = known_nowhere) -> list[str]:
    """The identifiers of a text as the phrase of their words, lower-cased, in order ("camelCase"
    -> "camel case", "to_camel_case" -> "to camel case", "click.prompt" -> "click prompt"): the
    way a document that writes the identifier in another shape is indexed (`to_camel_case`,
    "Camel Case", `camel_case` all hold the words "camel case" side by side). A word run together
    with capitals that the library `known`s as it is typed ("CalFresh") needs no other shape."""
    found = []
    for run in re.split(r"[\s/,;]+", text):
        run = run.strip(_EDGES)
        cased = [m.group(0) for m in WORD.finditer(run)]
        parts = [w.lower() for token in cased for w in camel_words(token)]
        camel = [token.lower() for token in cased if len(camel_words(token)) > 1]
        if len(parts) < 2 or not _JOINED.search(run) and all(known(word) for word in camel):
            continue
        found.append(" ".join(parts))
    return list(dict.fromkeys(found))


def stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def subject_words(text: str) -> list[str]:
    """Content words without chat filler: what a message is about."""
    return [w for w in content_words(text) if w not in FILLER]


FENCE_MARKS = ("```", "~~~")  # what opens (and, alone on its line, closes) a fenced code block
# the fence ingest writes around an object description's signature (`.. py:function:: get(url)`):
# Markdown code like any other, told apart by its marks alone (ingest writes every other fence
# with backticks), so no word is added to what is searched
SIGNATURE_MARK = "~~~"


def is_fence(line: str) -> bool:
    """Whether `line` (or a block's first line) opens or closes a fenced code block."""
    return line.lstrip().startswith(FENCE_MARKS)


def is_signature(block: str) -> bool:
    """Whether a fenced block is an object description's signature (`SIGNATURE_MARK`)."""
    return block.lstrip().startswith(SIGNATURE_MARK)


_TILDE_FENCE = re.compile(r"^([ \t]*)(~{3,})", re.M)


def backtick_fences(text: str) -> str:
    """`text` with every fence of tildes written with backticks: a plain text's own fences
    (tildes mark a signature alone) and, for the embedder, a signature's (read as any code)."""
    return _TILDE_FENCE.sub(lambda m: m.group(1) + "`" * len(m.group(2)), text)


def holds_code(text: str) -> bool:
    """Whether `text` holds a fenced code block (a line that is a fence)."""
    return any(is_fence(line) for line in text.splitlines())


def source_label(path: str, page_start: int | None = None, page_end: int | None = None) -> str:
    """ "guide.pdf p. 12", "guide.pdf pp. 12-13", or just the path when the chunk has no pages."""
    if page_start is None:
        return path
    if page_end is None or page_end == page_start:
        return f"{path} p. {page_start}"
    return f"{path} pp. {page_start}-{page_end}"


def one_line(text: str, limit: int | None = None) -> str:
    """The text on one line (whitespace runs become one space), cut to `limit` with an ellipsis."""
    line = " ".join(text.split())
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"


def some_of(names: Sequence[str], shown: int, between: str = ", ") -> str:
    """The first `shown` names, then how many more there are: "a.md, b.md, c.md and 4 more"."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return between.join(names[:shown]) + more


def snippet(text: str, width: int) -> str:
    """The text on one line, cut at a word with an ellipsis past `width` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


# --- making untrusted text printable ----------------------------------------------------------
# File names, document text, session names, model output and error messages reach the terminal;
# none of them may move the cursor, clear the screen, set the title or write the clipboard.

_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI (ESC [ params final), e.g. ESC[2J
    r"|\x9b[0-?]*[ -/]*[@-~]"  # CSI, single-character form
    # OSC, DCS, SOS, PM, APC with their payload, ended by BEL or ST (e.g. OSC 52 writes the
    # clipboard)
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])(?:[^\x07\x1b\x9c]|\x1b(?!\\))*?(?:\x07|\x1b\\|\x9c)"
    # any other escape (ESC c resets the terminal; an unended OSC loses its ESC ])
    r"|\x1b[ -/]*[0-~]",
)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")  # C0 but tab and newline, DEL, C1
# The unfinished end of a piece of a stream that may still become an escape sequence.
_UNFINISHED = re.compile(
    r"(?:\x1b(?:\[[0-?]*[ -/]*|[\]PX^_](?:[^\x07\x1b\x9c]|\x1b(?!\\))*\x1b?|[ -/]*)"
    r"|\x9b[0-?]*[ -/]*|[\x90\x98\x9d\x9e\x9f](?:[^\x07\x1b\x9c]|\x1b(?!\\))*\x1b?)\Z"
)


# Invisible characters that reorder or hide what is shown (Unicode Cf: bidi overrides and isolates
# U+202A-202E and U+2066-2069, zero-width spaces, the BOM, tag characters; surrogates left by
# undecodable bytes; line and paragraph separators): `rtl\u202etxt.md` would display as "rtldm.txt".
# They are shown escaped (`\u202e`), inert. The zero-width (non-)joiners stay: scripts and emoji
# need them.
_INERT_CATEGORIES = frozenset({"Cf", "Cs", "Zl", "Zp"})
_JOINERS = frozenset("\u200c\u200d")


def inert_char(char: str) -> str | None:
    """How an invisible formatting character is shown (`\u202e`), or None for any other
    character."""
    if char in _JOINERS or unicodedata.category(char) not in _INERT_CATEGORIES:
        return None
    code = ord(char)
    return f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"


def inert(text: str) -> str:
    """`text` with every invisible formatting character escaped (the rest untouched)."""
    if text.isprintable():
        return text
    return "".join(inert_char(char) or char if not char.isprintable() else char for char in text)


def printable(text: str) -> str:
    """`text` without terminal control: escape sequences (with an OSC/DCS payload) and control
    characters other than newline and tab are dropped, invisible formatting characters are escaped
    (`\u202e`); every other character is kept."""
    if text.isprintable():  # the common case: nothing to do
        return text
    return inert(_CONTROL.sub("", _SEQUENCE.sub("", text)))


class PrintableStream:
    """`printable` for text that arrives in pieces (streamed model tokens): an escape sequence split
    across pieces is held back until it is complete, then dropped whole."""

    LIMIT = 4096  # an unfinished sequence longer than this is given up on (its introducer dropped)

    def __init__(self) -> None:
        self._pending = ""

    def feed(self, piece: str) -> str:
        text = self._pending + piece
        unfinished = _UNFINISHED.search(text)
        cut = (
            unfinished.start()
            if unfinished and len(text) - unfinished.start() <= self.LIMIT
            else len(text)
        )
        self._pending = text[cut:]
        return printable(text[:cut])

    def flush(self) -> str:
        """What is held back, once the stream has ended."""
        text, self._pending = self._pending, ""
        return printable(text)
