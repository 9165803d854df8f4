"""The question's own first keyword hits on the page found reach the places a model reads (issue
28: the page is found, but the chunk that answers ranks below the six places because the
embedding puts it far from the question: a list of operators whose one line holds the question's
word, a code block under a one-line lead-in). They take the last of the six places, marked beside
the first chunk; the documents, their order and the extractive answer stay as they were."""

from __future__ import annotations

from pathlib import Path

from helpers import asked_once, documents_as_found

from ragchat.conversation.models import Index, QueryList, RetrievedChunk, Source
from ragchat.conversation.plan import RetrievalPlan
from ragchat.conversation.retrieve import _keyword_hits
from ragchat.params import DEFAULT
from ragchat.search.fusion import Anchoring, RankedList

KEY = '{{ "Hello " ~ name }}'
SECTIONS = {
    "Variables": "Templates read variables passed in by the application. A variable may hold a "
    "string, a number or an object, and its attributes are read with a dot.",
    "Literals": "The simplest expressions are literals: a string is written between quotes, a "
    "number as typed, and a list between brackets. Strings and variables mix freely.",
    "Math": "Arithmetic works on numbers in expressions: plus adds two values, minus subtracts, "
    "a slash divides and two stars raise a value to a power.",
    "Comparisons": "Two expressions compare with double equals and exclamation equals; a string "
    "compares with a string and a number with a number.",
    "Logic": "The words and, or and not combine conditions in an expression, as in an if "
    "statement of the template where a variable is tested.",
    "Filters on a value": "A variable is changed by a filter after a pipe symbol; filters take "
    "arguments and can be chained one after another in one expression.",
    "Assignments": "Inside a block a variable is set with the set tag, and the value can be any "
    "expression of strings and variables, kept until the block ends.",
    "Printing a variable": "A variable is printed with double curly braces around it, and a "
    "string literal can be printed the same way, next to a variable or on its own.",
    "Undefined variables": "A variable the application did not pass is undefined: printing it "
    "gives an empty string, and testing it tells whether the variable exists.",
    "String methods": "A string variable keeps the methods of a Python string, so a variable "
    "holding a name can be upper-cased or stripped inside the expression.",
    "Global variables": "Some variables exist in every template: the loop variable inside a "
    "for loop, and any global the application adds to the environment.",
    "Formatting strings": "The format filter fills a string with values, as the percent operator "
    "does in Python, so a variable can be placed inside a longer string.",
    "Other Operators": "These operators fit no other group:\n\n"
    "- in: a containment test of a sequence or mapping.\n"
    "- is: performs a test on a value.\n"
    "- |: applies a filter.\n"
    f"- ~ (tilde): converts all operands into strings and concatenates them: `{KEY}`.\n"
    "- (): calls a callable with its arguments.\n"
    "- . and []: get an attribute of an object.\n"
    "- if/else: the inline conditional of an expression.\n"
    "- //: integer division, and %: the remainder.",
}
OTHERS = {
    "loaders": "Loaders find template source by name in folders, packages or dictionaries.",
    "caching": "Compiled templates are cached in memory and in an optional bytecode cache.",
    "sandbox": "The sandbox keeps untrusted templates from reaching unsafe attributes.",
    "extensions": "Extensions add tags to the parser and run code when the template compiles.",
    "async": "Templates can render asynchronously when the environment enables async support.",
    "debugging": "Errors point at the template line that failed, with the source shown.",
    "whitespace": "Block tags leave blank lines behind unless trimming is switched on.",
    "inheritance": "A child template extends a base layout and overrides its named blocks.",
    "i18n": "Translations mark text for gettext, with plural forms by count.",
    "autoescape": "Autoescaping protects HTML output from markup in the rendered values.",
}


def test_the_questions_own_keyword_hit_on_the_leading_page_reaches_the_passages(
    tmp_path: Path, embedder
) -> None:
    page = "# Expressions\n\n" + "\n\n".join(f"## {h}\n\n{t}\n" for h, t in SECTIONS.items())
    pages = {"expressions.md": page}
    pages |= {f"{name}.md": f"# {name.title()}\n\n{text}\n" for name, text in OTHERS.items()}
    chunks, texts = asked_once(
        tmp_path,
        pages,
        embedder,
        "how do I concatenate a string and a variable?",
        chunk_size=300,
        chunk_overlap=30,
    )
    places = DEFAULT.answer.prompt_sources
    holder = next(c for c in chunks if KEY in texts[c.chunk_id])
    # the question's words "concatenate", "string": its keyword list's first; the embedding's 13th
    assert holder.rank <= places  # among the places a model reads
    assert holder.beside == chunks[0].chunk_id  # brought beside the first chunk
    assert holder.fts_rank is not None and holder.fts_rank <= DEFAULT.fusion.keyword_places
    assert documents_as_found(chunks)


def _chunk(chunk_id: int, document: int) -> RetrievedChunk:
    return RetrievedChunk(
        0, chunk_id, document, f"{document}.md", "", 1, 1, 0.5, 0.5, 0.0, 0.5, False, False
    )


def _plan(reuse: bool = False) -> RetrievalPlan:
    question = QueryList(Source.QUESTION, Index.FTS, "q", 0.3, as_typed=True)
    return RetrievalPlan("search", (question,), 0.0, Anchoring(), None, reuse)  # type: ignore[arg-type]


def _hits(ranked, keyword_ids, reuse: bool = False) -> list[tuple[int, int | None]]:
    lists = [RankedList("question/fts", "fts", tuple(keyword_ids), 0.3)]
    out = _keyword_hits(ranked, ranked, _plan(reuse), lists, DEFAULT)
    return [(c.chunk_id, c.beside) for c in out]


def test_a_keyword_hit_takes_the_leading_pages_own_last_place_never_another_pages() -> None:
    # the lead (document 1) holds places 1-4 (the answer's pool) and 6; document 2 holds place 5
    ranked = [_chunk(i, 1) for i in (10, 11, 12, 13)] + [_chunk(20, 2), _chunk(14, 1)]
    ranked += [_chunk(21, 2), _chunk(15, 1)]
    # the keyword list's first two: 15 (the lead's, below the six) and 21 (another page's)
    assert _hits(ranked, [15, 21]) == [
        (10, None), (11, None), (12, None), (13, None), (20, None), (15, 10), (14, None),
        (21, None),
    ]  # fmt: skip
    # where the places after the pool are other pages', nothing moves
    other = [_chunk(i, 1) for i in (10, 11, 12, 13)] + [_chunk(20, 2), _chunk(30, 3)]
    assert _hits([*other, _chunk(15, 1)], [15]) == [(c.chunk_id, None) for c in [*other]] + [
        (15, None)
    ]
    # a meta-request's wider pool leaves no place
    assert _hits(ranked, [15], reuse=True) == [(c.chunk_id, None) for c in ranked]
    # a hit beyond the keyword list's first two stays where it is
    assert _hits(ranked, [30, 31, 15]) == [(c.chunk_id, None) for c in ranked]
