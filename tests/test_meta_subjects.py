"""Meta-requests that name their own subject, and summaries that summarize (issue 30): "tell me
more about Z" searches for Z beside the conversation's terms, not glued to the last question's
sentence; a request about an answer to a new question carries that question's own words, not
the terms it took from the talk before it; "summarize that" sums up the last answer's sources
in their sentences, without their code and without what the search for more found."""

from __future__ import annotations

import numpy as np
from helpers import pick
from test_stages import CORPUS

from ragchat.answer import Mode
from ragchat.conversation.followup.heuristic import HeuristicReformulator
from ragchat.conversation.models import Exchange, ReformulationInput
from ragchat.params import DEFAULT

VECTOR = np.zeros(4, dtype=np.float32)
BEES = ("Why do bees matter?", "Bees pollinate crops; honey bees live in hives with a queen.")


def reformulated(**fields: object) -> tuple[str, str]:
    data = ReformulationInput(**fields)  # type: ignore[arg-type]
    reading = HeuristicReformulator(CORPUS, DEFAULT.followup).reformulate(data, VECTOR)
    assert reading.is_meta
    return reading.semantic_query, reading.keyword_query


def test_a_meta_requests_subject_leads_with_the_last_turns_terms_not_its_sentence() -> None:
    semantic, keywords = reformulated(
        question="tell me more about the queen",
        last=Exchange(*BEES),
        anchor_chunk_ids=(1, 2, 3),
        earlier_questions=(BEES[0],),
        topic_questions=(BEES[0],),
        last_semantic_query=BEES[0],
        last_keyword_query="bees, matter",
    )
    assert semantic.startswith("queen")
    assert "Why do" not in semantic  # the last question's sentence is not glued to the subject
    assert "bees" in semantic and "bees" in keywords  # its terms stay beside it


def test_a_request_about_a_new_questions_answer_carries_that_questions_own_words() -> None:
    # the last turn was a new question that carried "witness" and "competent" from the talk
    # before it at a small weight; "give me an example" is about the new question
    question = "how do I feed the larvae?"
    semantic, keywords = reformulated(
        question="give me an example",
        last=Exchange(question, "The queen bee lays eggs; workers feed the larvae."),
        anchor_chunk_ids=(3,),
        earlier_questions=("what age must a witness be?", question),
        topic_questions=(question,),
        last_semantic_query=f"{question} (witness, competent)",
        last_keyword_query="larvae, feed, witness, competent",
        last_question=question,
        last_followed=False,
    )
    assert "larvae" in semantic and "larvae" in keywords
    assert "witness" not in semantic and "witness" not in keywords


STARTUP = """If you want to create something used in routes, store it on the app instead.
The pool is opened once when the app starts serving requests.
To use this functionality simply do the following:

```python
@app.before_serving
async def create_db_pool():
    app.db_pool = await connect()
```

The pool is closed once when the app stops serving requests.
"""
ELSEWHERE = "Background jobs run after the response is sent, started with the app's task method."


def test_a_summary_of_that_brings_no_code_and_nothing_the_search_for_more_found() -> None:
    summary = pick(
        "open a database pool when the app starts",
        [STARTUP, ELSEWHERE],
        Mode.SUMMARY,
        cover=[1],
        count=4,
    )
    assert "pool" in summary
    assert "async def" not in summary  # no code block brought along by its lead-in
    assert "Background jobs" not in summary  # [2] is no source of the answer summarized
    assert len(summary) < len(STARTUP)


DEFAULTS = """Validators can also give a setting a default value when it is missing:

```python
Validator("FOO", default="A default value for foo")
```

The default may be computed: pass a function and it is called with the settings when the value
is needed, so one setting can be made out of others.
The defaults are applied when the settings are validated, before the first value is read.
"""


def test_a_summary_keeps_the_one_line_of_code_a_section_says_its_point_in() -> None:
    summary = pick(
        "give a setting a default value",
        [DEFAULTS, STARTUP],
        Mode.SUMMARY,
        cover=[1, 2],
        count=4,
    )
    assert 'Validator("FOO", default=' in summary  # one line: how the section says it
    assert "async def" not in summary  # a block of several lines is a dump: never
