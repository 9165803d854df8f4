"""What every format parser shares: the outline it returns and the text clean-up rules."""

from __future__ import annotations

import ast
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ragchat.text import SIGNATURE_MARK

from ..releases import is_version_heading


@dataclass(frozen=True)
class Heading:
    level: int
    text: str
    shown: bool = True  # False sets the heading path without adding a line (PDF "Page N")


@dataclass(frozen=True)
class PageBreak:
    """Page `number` (1-based) starts here: its text is never merged with the page before."""

    number: int


class Links(str):
    """A list every item of which is only links ("- [Announcing X](https://...)", `* :doc:`page``):
    once the targets are gone, the titles of pages it points to. A parser marks it; the document
    keeps it unless it is the whole body of its section (`without_link_sections`)."""


Block = Heading | PageBreak | str


@dataclass
class Outline:
    blocks: list[Block] = field(default_factory=list)
    title: str = ""


CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f\ufeff]")
# soft hyphen, zero-width space/joiners, word joiner, invisible operators, BOM
INVISIBLE_CHARS = re.compile(r"[\u00ad\u200b-\u200d\u2060-\u2064\ufeff]")
_BLANK_RUNS = re.compile(r"\n{3,}")


# NFKC folds the information sign into a letter: "ℹ️ You can choose" would read "i️ You can choose"
_INFORMATION_SIGN = "\u2139"


def clean_chars(text: str) -> str:
    """NFKC (ligatures, full-width forms, no-break spaces), without invisible or control
    characters; the information sign stays a sign."""
    folded = _INFORMATION_SIGN.join(
        unicodedata.normalize("NFKC", part) for part in text.split(_INFORMATION_SIGN)
    )
    return CONTROL_CHARS.sub("", INVISIBLE_CHARS.sub("", folded))


def normalise(text: str) -> str:
    """Unix newlines, clean characters, no trailing spaces, at most one blank line in a row."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").replace("\f", "\n\n")
    text = clean_chars(text)
    text = "\n".join(line.rstrip() for line in text.split("\n"))
    return _BLANK_RUNS.sub("\n\n", text).strip("\n")


def has_letters(line: str) -> bool:
    return sum(c.isalpha() for c in line) >= 2


def code_fence(code: str, language: str = "", mark: str = "```") -> str:
    """Code as a Markdown fence with its language, indentation intact (answers show it as code);
    `mark`: the fence's marks (`SIGNATURE_MARK` for an object description's signature)."""
    body = code.rstrip("\n")
    ticks = mark + mark[0] if mark in body else mark
    return f"{ticks}{language}\n{body}\n{ticks}"


_NOT_A_PARAGRAPH = re.compile(r"(?:```|~~~|[-*] |\d+\. )|.*\n", re.S)  # code, a list, lines


def definition(term: str, body: list[Block]) -> list[Block]:
    """A definition list's entry (RST, Markdown's `Term` / `: definition`, a glossary) as a reader
    sees it: "term: its first paragraph", then the rest; a term written with its own colon
    ("``host``:") shows it once. A definition that opens with code or a list keeps the term as a
    line of its own, so a chunk never starts with a definition whose term is gone."""
    term = term.rstrip().removesuffix(":").rstrip()
    first = body[0] if body else None
    if not term:
        return body
    if (
        isinstance(first, str)
        and not isinstance(first, Links)
        and not _NOT_A_PARAGRAPH.match(first)
    ):
        return [f"{term}: {first}", *body[1:]]
    return [term, *body]


def signature_fence(code: str, language: str = "") -> str:
    """An object description's signature as a fence of its own marks: Sphinx shows the entry's
    description after its signature, so the text before it (the entry before's) is no lead-in."""
    return code_fence(code, language, SIGNATURE_MARK)


_CODE_SYMBOLS = frozenset("()[]{}=<>_@:;'\"/\\|")
_PROSE_LINE = re.compile(r"[^\s.][.!?]$")
_NESTED_MARKUP = re.compile(
    r"^\s*\.\. |::\s*$|^\s*(?:`{3,}|~{3,})|(?:^|\s)[:{][\w:+.-]+[:}]`", re.M
)


def looks_like_code(text: str) -> bool:
    """Whether the content of a directive nobody registered (`.. click:example::`) reads as
    code: dense in the symbols code is written with, few lines ending a sentence, and no markup
    of its own (nested directives, `::` literal blocks, fences, roles). Language-neutral; prose in a
    documentation page has about 2 such symbols in 100 characters, code 10 or more."""
    if _NESTED_MARKUP.search(text):
        return False
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    visible = [c for c in text if not c.isspace()]
    if not lines or not visible:
        return False
    density = sum(c in _CODE_SYMBOLS for c in visible) / len(visible)
    sentences = sum(bool(_PROSE_LINE.search(line)) and line.count(" ") >= 2 for line in lines)
    calls = any(c in "()[]{}=;" for c in visible)  # an identifier alone is a name, not code
    return calls and density >= 0.08 and sentences < 0.3 * len(lines)


@dataclass(frozen=True)
class Included:
    """A file named by an include (`--8<-- "name"`, `{* name *}`, `literalinclude`)."""

    name: str  # as the document writes it
    text: str | None  # None: outside the library, missing, unreadable or too large
    language: str = ""  # from the suffix, for code
    markdown: bool = False  # .md: included as text, not as code
    why: str = "not in the library"  # when text is None


class Includes(Protocol):
    """Reads the file a page names (`lines`: line ranges of it, "1:3,8" or "1-3")."""

    def __call__(self, name: str, lines: str = "") -> Included: ...


def python_object(text: str, dotted: str) -> str | None:
    """The source lines of the class or function `dotted` names in Python `text` ("UserFactory",
    "UserFactory.build"), its decorators included, as Sphinx's `literalinclude :pyobject:` shows
    it; None when the text does not parse or holds no such object. A file made to break the
    parser ("x = ------...1" runs CPython's parser out of stack: MemoryError) is one that does
    not parse: the include shows it whole, and the ingest goes on."""
    try:
        body = ast.parse(text).body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef | None = None
    for name in dotted.split("."):
        found = next(
            (
                node
                for node in body
                if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                and node.name == name
            ),
            None,
        )
        if found is None:
            return None
        body = found.body
    if found is None or found.end_lineno is None:
        return None
    start = min([found.lineno, *(d.lineno for d in found.decorator_list)])
    return "\n".join(text.splitlines()[start - 1 : found.end_lineno]) + "\n"


def included_part(text: str, options: Mapping[str, object]) -> str:
    """The part of an included file its options select: `:pyobject:` (a Python class or
    function, `python_object`; the whole file when it holds none), then `:start-after:` and
    `:end-before:` (`between_markers`)."""
    dotted = str(options.get("pyobject") or "").strip()
    part = python_object(text, dotted) if dotted else None
    return between_markers(part if part is not None else text, options)


def between_markers(text: str, options: Mapping[str, object]) -> str:
    """The part of an included file after `:start-after:` and before `:end-before:` (docutils',
    Sphinx's and MyST's options: a README's "<!-- end-of-readme-intro -->" markers), each taken
    at its first place; a marker the file does not hold selects nothing away."""
    after, before = str(options.get("start-after") or ""), str(options.get("end-before") or "")
    if after and after in text:
        text = text.split(after, 1)[1]
    if before and before in text:
        text = text.split(before, 1)[0]
    return text


_PAGE_SUFFIXES = (".md", ".markdown", ".rst", ".txt")


def not_in_library(name: str, why: str = "not in the library") -> str:
    """The one line an include that cannot be read becomes: an included page ("README.md") is
    no example."""
    what = "included page" if name.lower().endswith(_PAGE_SUFFIXES) else "example"
    return f"{what}: {name}, {why}"


_SUFFIX_LANGUAGES = {
    ".py": "python",
    ".pyi": "python",
    ".sh": "bash",
    ".bash": "bash",
    ".js": "javascript",
    ".ts": "typescript",
    ".toml": "toml",
    ".json": "json",
    ".yaml": "yaml",
    ".yml": "yaml",
    ".ini": "ini",
    ".cfg": "ini",
    ".html": "html",
    ".css": "css",
    ".sql": "sql",
    ".rs": "rust",
    ".go": "go",
    ".c": "c",
    ".h": "c",
    ".java": "java",
    ".rb": "ruby",
    ".dockerfile": "dockerfile",
    ".xml": "xml",
    ".rst": "rst",
}


def language_of(name: str) -> str:
    """A code fence's language from a file name's suffix ("tutorial001.py" -> "python")."""
    suffix = name[name.rfind(".") :].lower() if "." in name.rsplit("/", 1)[-1] else ""
    return _SUFFIX_LANGUAGES.get(suffix, "")


def without_link_sections(blocks: list[Block]) -> list[Block]:
    """The blocks without the link lists that are the whole body of their section (a "See also",
    an "Articles" list, an index page's lists between headings): a reader follows them elsewhere,
    and as bare titles they answer nothing, like a Sphinx toctree (dropped too). A link list led
    in by a sentence of its section ("works with these servers:") says something and stays; so
    do a release's (under a version or a date, "### Fix" then an issue's title is what changed)
    and the lists of a page that holds nothing else."""
    if all(isinstance(b, Links) or not isinstance(b, str) for b in blocks):
        return blocks
    kept: list[Block] = []
    body: list[Block] = []  # the blocks since the last heading
    path: list[Heading] = []  # the headings above them
    for block in [*blocks, Heading(0, "")]:
        if not isinstance(block, Heading):
            body.append(block)
            continue
        headed = bool(kept) and isinstance(kept[-1], Heading)
        links = bool(body) and all(isinstance(b, Links) for b in body)
        if not (headed and links) or any(is_version_heading(h.text) for h in path):
            kept += body
        kept.append(block)
        body = []
        path = [h for h in path if h.level < block.level] + [block]
    return kept[:-1]
