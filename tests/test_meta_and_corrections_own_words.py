"""What a meta-request and a correction search with, by their own words: a request that says
nothing but the request ("example please", "code for that?") searches with the conversation's
lists only, since its words find pages about examples, not its subject; a correction whose X says
as much as the question it corrects is that question, alone, since put into the old question the
words the user has just turned down pull the search back to them."""

from __future__ import annotations

from pathlib import Path

from helpers import filler_pages, library_app

from ragchat.conversation.correction import restates
from ragchat.conversation.models import Source
from ragchat.params import DEFAULT

SCOPING = """# Loops

## Assignments in loops

A variable set inside a for loop is not seen after the loop ends: each loop has a scope of its
own, so a flag set in the loop body is still false once the loop is over.

To carry a value out of the loop, keep it on a namespace object and set its attribute:

```jinja
{% set ns = namespace(found=false) %}
{% for item in items %}{% if item.ok %}{% set ns.found = true %}{% endif %}{% endfor %}
{{ ns.found }}
```

## Loop variables

Inside a loop the special loop variable tells the index of the current item and whether it is
the first or the last one.
"""
EXAMPLES = """# Examples please

This page is a list of examples. Every example here is short, please copy any example you like;
each example comes with a sentence that says what the example shows.
"""
PAGES = {"loops.md": SCOPING, "examples.md": EXAMPLES} | filler_pages("loops")


def test_a_bare_request_searches_with_the_conversation_not_its_own_words(
    tmp_path: Path, embedder
) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=300, chunk_overlap=0)
    conversation = app.conversation("s")
    conversation.ask("I set a flag inside a for loop but after the loop it's still false, why?")
    meta = conversation.ask("example please")
    with_subject = conversation.ask("an example with the loop variable please")
    app.close()
    assert meta.lineage.plan == "reuse"
    documents = {Path(c.document).name for c in meta.lineage.chunks[:6]}
    assert "examples.md" not in documents  # "example please" as a query finds this page
    assert not [q for q in meta.lineage.queries if q.source is Source.QUESTION]
    assert [q for q in with_subject.lineage.queries if q.source is Source.QUESTION]


def test_a_correction_that_restates_the_need_is_the_question() -> None:
    least = DEFAULT.followup.restated_words
    said = "the environment variable that switches off the rich formatting of the help"
    assert restates("and turning the env var off in the help output?", said, least)
    # a noun phrase takes the place of what it corrects, however short the question
    assert not restates("how do I make it required?", "the query parameter", least)
    assert not restates("how do I make a will valid?", "a codicil", least)


def test_a_correction_with_words_of_its_own_restates_a_long_question() -> None:
    """However long the question it corrects, a subject bringing `least` words of its own is
    the need itself; put in place of "the rows", it garbled the question."""
    least = DEFAULT.followup.restated_words
    long = (
        "when I run the insert a second time it errors because the ids already exist. "
        "how do I just skip the rows that are already there?"
    )
    said = "update the existing rows with the new values rather than skipping them"
    assert restates(long, said, least)
    # a noun phrase naming the thing again, with one word more, still takes its place
    assert not restates("how do I add an index to the name column?", "the age column", least)


WILLS = {
    "envvars.md": "# Environment variables\n\nAn argument can read its value from an environment "
    "variable. To hide the environment variable in the help output, turn it off with "
    "show_envvar=False; the help output then leaves the env var out.\n",
    "rich.md": "# Rich formatting\n\nThe help is formatted with Rich when it is installed. Set the "
    "environment variable TYPER_USE_RICH=0 to switch the Rich formatting of the help off.\n",
}


def test_a_correction_that_restates_the_need_searches_it_alone(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, WILLS, embedder)
    conversation = app.conversation("s")
    conversation.ask("and turning the env var off in the help output?")
    fixed = conversation.ask(
        "no, I meant the environment variable that switches off the rich formatting of the help"
    )
    app.close()
    assert fixed.lineage.question == (
        "the environment variable that switches off the rich formatting of the help"
    )
    assert not [q for q in fixed.lineage.queries if q.source is Source.CORRECTION]  # no twice
    assert Path(fixed.lineage.chunks[0].document).name == "rich.md"


PAGINATION = """# Pagination

## Cursor pagination

Cursor pagination keeps a stable position in a feed where new rows are inserted while people
are paging: each page carries an encoded cursor token that points at the last row seen.

The cursor token is opaque to the client, which sends it back to get the next page of the feed.

## Page number pagination

Page number pagination splits the rows into numbered pages, so that a client asks for page 2
or page 3 of the list directly.

## Settings

The pagination defaults are controlled by two settings in settings.py: PAGINATION_PER_PAGE sets
how many rows a page holds, and PAGINATION_CLASS names the class used when none is given.
"""


def test_a_request_with_a_subject_of_its_own_is_ranked_by_it_not_by_the_last_sources(
    tmp_path: Path, embedder
) -> None:
    """A request that names what it wants ("summarize the settings that control the pagination
    defaults") after an answer about the cursor: the last answer's chunks are reused, but where
    the turn's search ranks them; the section the request names comes first. A bare request
    keeps the last sources first."""
    pages = {"pagination.md": PAGINATION} | {
        name: text for name, text in PAGES.items() if name.startswith("other")
    }
    app = library_app(tmp_path, pages, embedder, chunk_size=250, chunk_overlap=0)
    conversation = app.conversation("s")
    cursor = conversation.ask("how does cursor pagination keep its place in a feed?")
    named = conversation.ask("summarize the settings that control the pagination defaults")
    other = app.conversation("t")
    other.ask("how does cursor pagination keep its place in a feed?")
    bare = other.ask("summarize it")
    app.close()
    last = {c.chunk_id for c in cursor.lineage.used_chunks or cursor.lineage.chunks}
    assert named.lineage.plan == bare.lineage.plan == "reuse"
    assert named.lineage.chunks[0].heading == "Settings"
    assert {c.chunk_id for c in named.lineage.chunks if c.reused} == last  # reused all the same
    assert bare.lineage.chunks[0].chunk_id in last
