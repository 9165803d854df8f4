"""A chunk's text read into blocks (markdown-it plus ingest's own list and table lines) and into
the units an answer shows: whole sentences, whole fences, lists, tables; titles and cut sentences
kept apart."""

from __future__ import annotations

from dataclasses import replace

import pytest

from ragchat.answer import ANSWER_PARAMS, units
from ragchat.answer.blocks import blocks
from ragchat.params import DEFAULT


def kinds(text: str) -> list[tuple[str, tuple[str, ...]]]:
    return [(block.kind, block.lines) for block in blocks(text, ANSWER_PARAMS.title_words)]


def test_a_chunk_ending_inside_a_code_block_gets_its_closing_fence() -> None:
    text = "Create the client like this:\n\n```python\nclient = httpx.Client()\nclient.get(url)"
    assert kinds(text)[-1] == (
        "code",
        ("```python", "client = httpx.Client()", "client.get(url)", "```"),
    )
    (unit,) = units(text, params=DEFAULT.answer)
    assert unit.sentence == "Create the client like this:" and unit.has_code
    assert unit.block == "```python\nclient = httpx.Client()\nclient.get(url)\n```"


def test_a_fence_holds_blank_lines_and_a_longer_fence_inside_it_is_code() -> None:
    text = "Usage follows.\n\n````markdown\n```python\nx = 1\n\n```\n````\n\nAfter the block."
    assert kinds(text) == [
        ("prose", ("Usage follows.",)),
        ("code", ("````markdown", "```python", "x = 1", "", "```", "````")),
        ("prose", ("After the block.",)),
    ]


def test_a_hard_wrapped_paragraph_is_one_block_and_its_sentences_are_whole() -> None:
    text = (
        "For flowing long blocks of text with fewer structural restrictions (docstrings\n"
        "or comments), the line length should be limited to 72 characters. Limit all lines\n"
        "to a maximum of 79 characters."
    )
    assert [kind for kind, _ in kinds(text)] == ["prose"]
    assert [u.sentence for u in units(text, params=DEFAULT.answer)] == [
        "For flowing long blocks of text with fewer structural restrictions (docstrings or "
        "comments), the line length should be limited to 72 characters.",
        "Limit all lines to a maximum of 79 characters.",
    ]


def test_ingest_lists_nest_by_two_spaces_whatever_the_marker() -> None:
    """CommonMark would end "1." at the two-space "- " line (it nests by the marker's width)."""
    text = (
        "The factory does three things:\n"
        "1. app = Flask(__name__) creates the instance.\n"
        "  - __name__ is the name of the current module.\n"
        "2. app.config.from_mapping() sets the defaults."
    )
    assert kinds(text) == [
        ("prose", ("The factory does three things:",)),
        ("list", tuple(text.splitlines()[1:])),
    ]
    (unit,) = units(text, params=DEFAULT.answer)
    assert (
        unit.kind == "list"
        and unit.block.splitlines()[1] == "  - __name__ is the name of the current module."
    )


def test_a_chunk_beginning_inside_a_numbered_list_keeps_the_list() -> None:
    text = (
        "If there is no match, the error is stored to be handled later.\n6. The request_started "
        "signal is sent.\n7. Any url_value_preprocessor() functions are called."
    )
    assert [kind for kind, _ in kinds(text)] == ["prose", "list"]


def test_a_list_nobody_introduces_gives_its_items() -> None:
    text = "Steps\n\n- Download the installer for your system\n- Run it and follow the prompts"
    assert [(u.kind, u.sentence) for u in units(text, params=DEFAULT.answer)] == [
        ("title", "Steps"),
        ("item", "- Download the installer for your system"),
        ("item", "- Run it and follow the prompts"),
    ]


def test_ingest_tables_are_cell_lines_without_a_delimiter_row() -> None:
    text = (
        "The defaults are listed below.\n\nname | default\ntimeout | 5.0\nretries | "
        "3\n\nThat is all there is."
    )
    assert kinds(text)[1] == ("table", ("name | default", "timeout | 5.0", "retries | 3"))
    assert units(text, params=DEFAULT.answer)[0].kind == "table" and units(
        text, params=DEFAULT.answer
    )[0].block.endswith("retries | 3")


def test_headings_are_left_out_and_short_capitalised_lines_are_titles() -> None:
    text = "## Installing\nWater tanks\nA tank stores rainwater for the dry months."
    assert [kind for kind, _ in kinds(text)] == ["heading", "title", "prose"]
    assert [(u.kind, u.sentence) for u in units(text, params=DEFAULT.answer)] == [
        ("title", "Water tanks"),
        ("sentence", "A tank stores rainwater for the dry months."),
    ]


def test_a_title_right_before_a_code_block_is_its_lead_in() -> None:
    # Tortoise's query page: "QuerySet also supports aggregation ... through .annotate() method"
    # then the Count example, at a chunk's start: the line, no full stop, read as a title, left
    # the block bare, and a bare block is never shown ("how do I count the events of each
    # tournament?" got the RawSQL section instead)
    text = (
        "QuerySet also supports aggregation through .annotate() method\n\n```python\n"
        "await Tournament.annotate(events_count=Count('events'))\n```\n\n"
        "Check the examples to see it all at work."
    )
    found = units(text, params=DEFAULT.answer)
    assert (found[0].kind, found[0].sentence) == (
        "code",
        "QuerySet also supports aggregation through .annotate() method",
    )
    assert "events_count=Count('events')" in found[0].block
    # a line that goes on with the sentence before it introduces nothing of its own
    going_on = units(
        "...and the following query parameters\n\n```\n/api/books?search=harry\n```",
        params=DEFAULT.answer,
    )
    assert [u.kind for u in going_on] == ["title", "code"]
    # a console run keeps its title apart: what it prints is no how-to
    console = units("Output\n\n```console\n$ inv build\nBuilding!\n```", params=DEFAULT.answer)
    assert [u.kind for u in console] == ["title", "code"]


def test_code_that_lost_its_fences_is_fenced_again() -> None:
    text = (
        "Open a client first.\nclient = httpx.Client()\nresponse = client.get(url)\nThen "
        "read the body."
    )
    unit = units(text, params=DEFAULT.answer)[0]
    assert unit.block == "```\nclient = httpx.Client()\nresponse = client.get(url)\n```"


def test_a_number_alone_on_its_line_is_not_a_list() -> None:
    text = "5.\nWhere do I get election results?\n\nThe polls close at 8 p.m. on Election Day."
    assert [kind for kind, _ in kinds(text)] == ["prose", "prose"]


def test_a_tab_indented_line_can_be_a_title() -> None:
    """CommonMark makes an indented line a paragraph's continuation; here it is a line like any."""
    text = "Open from 7:30 a.m.\n\tto\n\t4:30 p.m. every weekday."
    assert [kind for kind, _ in kinds(text)] == ["prose", "title", "prose"]


@pytest.mark.parametrize("most", [5, 30])
def test_long_blocks_are_cut_to_the_params_and_code_stays_fenced(most: int) -> None:
    code = "\n".join(f"value_{i} = {i}" for i in range(40))
    text = f"Set every value like this:\n```python\n{code}\n```"
    (unit,) = units(text, replace(ANSWER_PARAMS, max_block_lines=most))
    lines = unit.block.splitlines()
    assert (
        len(lines) == most and lines[0] == "```python" and lines[-1] == "```" and lines[-2] == "# …"
    )


def test_an_entry_description_is_no_lead_in_of_the_next_signature() -> None:
    """Sphinx shows an object's description after its signature (ingest fences a signature with
    tildes): the sentence before the next signature ends the entry before it, and a signature
    does not go on with the example code before it."""
    text = (
        "To make this easier, use this decorator:\n\n```python\n@closing_job()\ndef work():\n"
        "    pass\n```\n\n~~~python\nclosing_job(*args, **kwargs)\n~~~\n\n"
        "Equivalent to job(), but closes the connection when the job finishes.\n\n"
        "~~~python\nclosing_periodic_job(schedule, *args, **kwargs)\n~~~\n\n"
        "Equivalent to periodic_job()."
    )
    found = units(text, params=DEFAULT.answer)
    assert [(u.kind, u.sentence[:10], u.block.count("\n")) for u in found] == [
        ("code", "To make th", 4),
        ("signature", "", 2),
        ("sentence", "Equivalent", 0),
        ("signature", "", 2),
        ("sentence", "Equivalent", 0),
    ]
