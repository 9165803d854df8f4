"""A line of documentation that ends in code (a call, a subscript) is a sentence whose full
stop the code pushed out, not a title: "The request body, parsed as JSON: await request.json()"
answers "how do I read the JSON body?", and "Signature: BackgroundTask(func, *args, **kwargs)"
introduces the example under it (before, both were read as headings, never shown, and the
example lost its lead-in). Shown, such a line ends its line: the next sentence does not run on
after the code."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import filler_pages, library_app

from ragchat.answer.blocks import is_title
from ragchat.answer.params import ANSWER_PARAMS
from ragchat.answer.units import units

REQUESTS = """# Requests

## Body

There are a few different interfaces for returning the body of the request:

The request body as bytes: `await request.body()`

The request body, parsed as form data: `async with request.form() as form:`

The request body, parsed as JSON: `await request.json()`

You can also access the request body as a stream, using the `async for` syntax:

```python
async for chunk in request.stream():
    body += chunk
```

If you access `.stream()` then the byte chunks are not stored in memory.
"""
BACKGROUND = """# Background

Tasks can run once the response has been sent.

## Background Task

Used to add a single background task to a response.

Signature: `BackgroundTask(func, *args, **kwargs)`

```python
async def signup(request):
    task = BackgroundTask(send_welcome_email, to_address=email)
    return JSONResponse({'status': 'ok'}, background=task)
```
"""
PAGES = {"requests.md": REQUESTS, "background.md": BACKGROUND} | filler_pages("web requests")


def test_a_line_that_ends_in_a_call_is_a_sentence_and_a_heading_is_not() -> None:
    assert not is_title("The request body, parsed as JSON: await request.json()", "", 10)
    assert not is_title("Signature: BackgroundTask(func, *args, **kwargs)", "```python", 10)
    assert not is_title("For example: request.path_params['username']", "", 10)
    assert is_title("Footnote[1]", "", 10)  # a footnote's mark, no subscript
    assert is_title("Important", "The tasks are executed in order.", 10)
    assert is_title("Examples (advanced)", "", 10)
    assert is_title("Impaired waterbodies, Integrated Report, 303(d)", "", 10)  # not a call
    assert is_title("The exact date and time that you received the call(s)", "", 10)
    chunk = "Used to add a task.\n\nSignature: BackgroundTask(func)\n\n```python\nx = 1\n```"
    found = units(chunk, ANSWER_PARAMS, whole_start=True, whole_end=True)
    assert [(u.sentence, u.kind) for u in found] == [
        ("Used to add a task.", "sentence"),
        ("Signature: BackgroundTask(func)", "code"),
    ]


def test_the_line_that_answers_is_shown_and_ends_its_line(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder)
    turn = app.conversation("s").ask("how do I read the JSON body of a request?")
    app.close()
    shown = [line for line in turn.answer.splitlines() if "await request.json()" in line]
    assert shown, turn.answer
    ended = r"The request body, parsed as JSON: await request\.json\(\) \[\d+\]"
    assert re.fullmatch(ended, shown[0])


def test_a_signature_line_brings_the_example_under_it(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder)
    turn = app.conversation("s").ask("how do I send a welcome email after the response is sent?")
    app.close()
    assert "BackgroundTask(send_welcome_email, to_address=email)" in turn.answer
    assert "Signature: BackgroundTask(func, *args, **kwargs)" in turn.answer
