"""The question's own words (issue 30, round of 2026-11-28): on a follow-up the query also carries
the conversation's words, and the units holding those outscore the one that answers what was
just asked. The lead-in with its code holding the most of the question's own words comes beside
them when it holds more of them than every unit chosen. The ranking on small fixtures (no
retrieval is involved: the sources are given)."""

from __future__ import annotations

from helpers import flat_idf, source

from ragchat.answer import Mode, Request, extractive
from ragchat.params import DEFAULT

EXTENDS = """The extends tag can be used to extend one template from another. You can have multiple
extends tags in a file, but only one of them may be executed at a time.

For example, a child block calls the parent block:

```
{% extends "parent.html" %}
{% block body %}Hi from child. {{ super() }}{% endblock %}
```
"""

CHILD = """A child template overrides the blocks of its parent layout. The child fills the empty
blocks of the layout with content. Each block a child template overrides replaces the parent
block."""

OBJECTS = """Template objects can be passed to the template context. Note how extends is passed the
variable with the template object that was passed to render, instead of a file name:

```
{% extends layout_template %}
```
"""

PROSE = """Template objects can be passed to the template context. Note how extends is passed the
variable with the template object that was passed to render, instead of a file name."""

ASKED = "can extends take a variable instead of a file name?"
CARRIED = ASKED + " (child, block, override, layout, parent)"  # the conversation's words added


def answer(query: str, asked: str, third: str = OBJECTS) -> str:
    sources = [source(i, text) for i, text in enumerate([EXTENDS, CHILD, third], 1)]
    request = Request(query, sources, asked=asked)
    return extractive(Mode.QUESTION, request, flat_idf, DEFAULT.answer).text


def test_the_unit_holding_the_question_s_own_words_comes_beside_the_conversation_s() -> None:
    assert "template object" not in answer(CARRIED, asked="")  # ranked by the query alone
    shown = answer(CARRIED, asked=ASKED)
    assert "Note how extends is passed the variable with the template object" in shown
    assert "{% extends layout_template %}" in shown, "the lead-in with its code"
    assert "A child template overrides the blocks" in shown, "nothing chosen is taken away"


def test_a_plain_sentence_holding_the_question_s_words_is_not_added() -> None:
    # the how-to a follow-up asks for is code: a sentence alone lengthened MTRAG's prose answers
    # and lowered their F1 (govt Clarification, clapnq N/A)
    assert answer(CARRIED, asked=ASKED, third=PROSE) == answer(CARRIED, asked="", third=PROSE)


def test_a_question_whose_query_is_its_own_words_gets_no_extra_unit() -> None:
    # a first question: nothing was carried, so the ranking is the question's already
    assert answer(ASKED, asked=ASKED) == answer(ASKED, asked="")
