"""Two parts of one section among the places a model reads bring the section's own text (issue 28:
the page is found and two of its subsections hold places, but the lines that introduce them, the
section's own text above its first subsection, rank below the six because the parts share the
question's words more than their lead does: "You can then install completion with `typer
--install-completion`" over "Run with Python" and "Run with the typer command"). The lead takes
the lower part's place, marked beside the higher; the documents, their order and the extractive
answer's pool stay as they were."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from helpers import asked_once, documents_as_found

from ragchat.conversation.models import Index, QueryList, RetrievedChunk, Source
from ragchat.conversation.plan import RetrievalPlan
from ragchat.conversation.retrieve import _section_leads, _section_parts
from ragchat.params import DEFAULT
from ragchat.search.fusion import Anchoring

KEY = "shellctl --install-completion"
PAGE = f"""# The shellctl command

The shellctl command runs any script as a command line program, without packaging it first.

## Install completion

Once per shell:

```console
$ {KEY}
```

### Completion when running with Python

Running the script with the Python interpreter itself gives no completion for a quick script, since
the shell only offers completion for installed command names, never for python and a file path.

### Completion when running with the shellctl command

Running the quick script through shellctl gives the completion of its options and arguments in the
shell, for a script that was never packaged nor installed, as soon as completion is installed.

## Run other files

shellctl can also run a module of a package by its dotted name, or a plain file by its path.

## Generate docs

shellctl can write Markdown documentation for the commands of a script.
"""
OTHERS = {
    "packaging": "# Packaging a script\n\nPackaging a quick script as a wheel and installing it "
    "with pip gives its command name completion in the shell, without running it by path.\n",
    "completion": "# Completion of option values\n\nA quick script can offer completion of "
    "option values in the shell once it is packaged: the values come from a function.\n",
    "scripts": "# Quick scripts\n\nA quick script without packaging is a single file you run "
    "by its path; completion of its options needs the shell to know it.\n",
    "shells": "# Shells and completion\n\nEvery shell keeps completion scripts of its own; a "
    "quick script gets completion in bash, zsh, fish and PowerShell alike.\n",
    "arguments": "# Arguments\n\nArguments are read in order from the command line and can "
    "have defaults of their own.\n",
    "testing": "# Testing\n\nA test runner invokes the program in the same process and "
    "checks its output and exit code.\n",
    "printing": "# Printing\n\nPrint to the terminal with colours, and to standard error for "
    "messages about errors.\n",
    "prompts": "# Prompts\n\nAsk the user for a value in the terminal, hidden when it is a "
    "password.\n",
}


def _placed(
    tmp_path: Path,
    embedder,
    page: tuple[str, str],
    others: dict[str, str],
    question: str,
    key: str,
) -> tuple[tuple, object]:
    """The question's ranked chunks in a library of `page` and one page per entry of `others`,
    and the chunk holding `key`, checked to be among the places a model reads."""
    pages = {page[0]: page[1]} | {f"{name}.md": text for name, text in others.items()}
    chunks, texts = asked_once(tmp_path, pages, embedder, question, chunk_size=300, chunk_overlap=0)
    holder = next(c for c in chunks if key in texts[c.chunk_id])
    assert holder.rank <= DEFAULT.answer.prompt_sources  # among the places a model reads
    return chunks, holder


def test_two_parts_of_a_section_placed_bring_the_sections_own_text(
    tmp_path: Path, embedder
) -> None:
    question = "any way to get completion for a quick script without packaging it?"
    chunks, holder = _placed(tmp_path, embedder, ("shellctl.md", PAGE), OTHERS, question, KEY)
    places = DEFAULT.answer.prompt_sources
    assert holder.heading == "Install completion"
    parts = [c for c in chunks[:places] if c.heading.startswith("Install completion > ")]
    assert holder.beside in {c.chunk_id for c in parts}  # beside the part ranked higher
    assert documents_as_found(chunks)


def _chunk(chunk_id: int, document: int, heading: str, vector: int | None = 1) -> RetrievedChunk:
    return RetrievedChunk(
        0, chunk_id, document, f"{document}.md", heading, vector, 1, 0.5, 0.5, 0.0, 0.5, False,
        False,
    )  # fmt: skip


def _plan(reuse: bool = False) -> RetrievalPlan:
    question = QueryList(Source.QUESTION, Index.FTS, "q", 0.3, as_typed=True)
    return RetrievalPlan("search", (question,), 0.0, Anchoring(), None, reuse)  # type: ignore[arg-type]


def _leads(ranked, reuse: bool = False) -> list[tuple[int, int | None]]:
    out = _section_leads(ranked, ranked, _plan(reuse), DEFAULT)
    return [(c.chunk_id, c.beside) for c in out]


def test_the_lead_takes_the_lower_parts_place_after_the_answers_pool() -> None:
    pool = [_chunk(i, 9, "Other") for i in (1, 2, 3, 4)]  # the extractive answer's pool
    ranked = [*pool, _chunk(10, 1, "A > B"), _chunk(11, 1, "A > C"), _chunk(30, 2, "X")]
    ranked += [_chunk(12, 1, "A")]  # the section's own text, found, below the places
    assert _leads(ranked) == [
        (1, None), (2, None), (3, None), (4, None), (10, None), (12, 10), (11, None), (30, None),
    ]  # fmt: skip
    # one part alone brings nothing, nor do two chunks of one part
    one = [*pool, _chunk(10, 1, "A > B"), _chunk(30, 2, "X"), _chunk(12, 1, "A")]
    assert _leads(one) == [(c.chunk_id, None) for c in one]
    same = [*pool, _chunk(10, 1, "A > B"), _chunk(11, 1, "A > B"), _chunk(12, 1, "A")]
    assert _leads(same) == [(c.chunk_id, None) for c in same]
    # parts of two documents, a lead no vector list found, a meta-request's wider pool: nothing
    two = [*pool, _chunk(10, 1, "A > B"), _chunk(11, 2, "A > C"), _chunk(12, 1, "A")]
    assert _leads(two) == [(c.chunk_id, None) for c in two]
    unseen = [*ranked[:7], _chunk(12, 1, "A", vector=None)]
    assert _leads(unseen) == [(c.chunk_id, None) for c in unseen]
    assert _leads(ranked, reuse=True) == [(c.chunk_id, None) for c in ranked]


REF_KEY = "include_in_schema=False"
REFERENCE = f"""# Operation parameters

Every path operation decorator takes the parameters below.

## Response options

by_alias, exclude_unset, exclude_defaults and exclude_none tune the response's output.

## Schema related

The following parameters interact with how the schema is generated.

### tags

Groups the operation under tags in the interactive docs: `tags=["items"]`.

### summary

A short human readable summary of the operation: `summary="Create an item"`.

### deprecated

Marks an operation as deprecated in the docs without removing it: `deprecated=True`.

### include_in_schema

A route decorated with `{REF_KEY}` still answers, unlisted.

## url_name

Gives the route a name for reversing its address.
"""
REF_OTHERS = {
    "hiding": "# Hiding the docs\n\nTo hide the interactive docs viewer and the whole schema, "
    "pass docs_url=None when you create the API: the endpoints keep working.\n",
    "disabling": "# Disabling the schema endpoint\n\nThe whole schema endpoint can be left out "
    "of the API: openapi_url=None turns off the schema and the docs together.\n",
    "docs": "# Docs display settings\n\nThe interactive docs viewer can be changed or left out "
    "for the whole API with a setting of its own.\n",
    "body": "# Request body\n\nThe body of a request is read into a schema and shown in the "
    "automatic docs of the endpoint.\n",
    "address": "# The schema's address\n\nThe schema of every endpoint is served at one "
    "address, /openapi.json, which a setting can move or leave out.\n",
    "routers": "# Routers\n\nSplit the endpoints of a large API into routers, each with tags "
    "and auth of its own.\n",
}


def test_a_one_sentence_lead_alone_among_the_places_yields_to_its_best_part(
    tmp_path: Path, embedder
) -> None:
    question = "how can a single endpoint stay out of the schema?"
    page = ("operations.md", REFERENCE)
    chunks, holder = _placed(tmp_path, embedder, page, REF_OTHERS, question, REF_KEY)
    places = DEFAULT.answer.prompt_sources
    lead = next(c for c in chunks if c.heading == "Schema related")
    assert holder.beside == lead.chunk_id and lead.rank == places + 1  # right after the places
    assert documents_as_found(chunks)


class _Context:
    def __init__(self, texts: dict[int, str]) -> None:
        self.texts = texts

    def load(self, db, ids):
        return {i: SimpleNamespace(text=self.texts[i]) for i in ids if i in self.texts}


def _parts(ranked, texts, reuse: bool = False) -> list[tuple[int, int | None]]:
    out = _section_parts(ranked, ranked, _plan(reuse), _Context(texts), None, DEFAULT)  # type: ignore[arg-type]
    return [(c.chunk_id, c.beside) for c in out]


def test_a_one_sentence_lead_yields_its_place_to_its_best_part_after_the_answers_pool() -> None:
    pool = [_chunk(i, 9, "Other") for i in (1, 2, 3, 4)]
    lead = _chunk(10, 1, "A")
    ranked = [*pool, lead, _chunk(30, 2, "X"), _chunk(11, 1, "A > C"), _chunk(12, 1, "A > B")]
    one = {10: "The following parameters change how it is built."}
    assert _parts(ranked, one) == [
        (1, None), (2, None), (3, None), (4, None), (11, 10), (30, None), (10, None), (12, None),
    ]  # fmt: skip
    # a lead with more than one sentence, or with a block, keeps its place
    two = {10: "The following parameters change it. Each is optional."}
    assert _parts(ranked, two) == [(c.chunk_id, None) for c in ranked]
    code = {10: "Set them so:\n\n```python\nop(tags=['a'])\n```\n"}
    assert _parts(ranked, code) == [(c.chunk_id, None) for c in ranked]
    # a part already placed, a part no vector list found, a meta-request's wider pool: nothing
    placed = [*pool, lead, _chunk(11, 1, "A > C"), _chunk(12, 1, "A > B")]
    assert _parts(placed, one) == [(c.chunk_id, None) for c in placed]
    unseen = [*pool, lead, _chunk(30, 2, "X"), _chunk(11, 1, "A > C", vector=None)]
    assert _parts(unseen, one) == [(c.chunk_id, None) for c in unseen]
    assert _parts(ranked, one, reuse=True) == [(c.chunk_id, None) for c in ranked]
