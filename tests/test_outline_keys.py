"""A page asked about by name, and an example asked for, carry what the user came for (issue 30):
a summary tells each part by the sentence or list item holding most of the outline's own words
(the page's title and headings), not by the part's opening remark or a note box, and a sentence
whose chunk ended before the code it introduces gives way to the next chunk's copy with the
code."""

from __future__ import annotations

from pathlib import Path

from helpers import flat_idf, library_app, source

from ragchat.answer import Mode, Request, extractive, outline_summary
from ragchat.params import DEFAULT

PLUGINS = """# Mount Plugins

Note

This page is background reading; most users can skip it.

Plugins used to be loaded from a separate registry package.

Since release 4.2, plugins are mounted from the host directly into the worker.

## Registering

Every worker starts with an empty table of plugins.

Here is what a worker does at start:

- It reads the config file.
- It calls mount_plugins() to mount each plugin named there.
- It logs the names it found.

## Stopping

A worker lets go of its plugins when it stops.
"""


PLUGINS_PAGES = {"mount-plugins.md": PLUGINS} | {
    f"{name}.md": f"# {name.title()}\n\n{text}\n"
    for name, text in (
        ("queues", "A queue holds jobs in the order they came; a worker takes the oldest."),
        ("config", "The config file names the plugins, the queues and the log level."),
        ("logging", "Each worker logs what it does to the log file named in the config."),
    )
}


def test_a_named_page_is_told_by_the_sentences_and_items_naming_its_subject(
    tmp_path: Path, embedder
) -> None:
    app = library_app(tmp_path, PLUGINS_PAGES, embedder, chunk_size=400, chunk_overlap=0)
    answer = app.conversation("s").ask("what does the mount-plugins.md page cover?").answer
    app.close()
    # the lead: the sentence naming the page's subject, not only the note box that opens it
    assert "Since release 4.2, plugins are mounted" in answer
    # the part: the list item holding the title's words, not the part's opening remark
    assert "- Registering: It calls mount_plugins() to mount each plugin" in answer
    assert "- Stopping:" in answer  # each heading still comes, with a sentence of its own


def test_a_part_with_no_outline_words_is_told_by_its_first_sentence() -> None:
    parts = [
        (1, "", "The night shift runs the jobs nobody watches."),
        (2, "Timing", "Jobs start as soon as the queue opens. Each job is logged.\n\n- one\n- two"),
    ]
    shown = outline_summary(parts, "", DEFAULT.answer).text
    assert "- Timing: Jobs start as soon as the queue opens. [2]" in shown
    assert "- one" not in shown  # a list item comes only for the outline's words it holds


COMPLETION_A = """The simple version returns a list of the values:

```python
def complete(incomplete):
    return ["alpha", "beta"]
```

From the context you can read the values given so far."""
COMPLETION_B = """From the context you can read the values given so far.

```python
def complete(ctx, incomplete):
    yield from ctx.params
```"""


def test_a_sentence_cut_from_its_code_gives_way_to_the_copy_with_the_code() -> None:
    sources = [source(1, COMPLETION_A), source(2, COMPLETION_B)]
    shown = COMPLETION_A.split("\n\nFrom")[0]
    example = extractive(
        Mode.EXAMPLE,
        Request("values context complete", sources, exclude=shown),
        flat_idf,
        DEFAULT.answer,
    ).text
    assert "yield from ctx.params" in example
    answer = extractive(
        Mode.QUESTION,
        Request("read the values from the context", sources),
        flat_idf,
        DEFAULT.answer,
    ).text
    assert "From the context you can read the values given so far. [2]" in answer
    assert "yield from ctx.params" in answer


LOOPS = [
    "Templates can hold logic, for example loops and conditions over the values they are given.",
    "A loop over the rows of a table, the most common use of a template, looks like this:\n\n"
    "```\n{% for row in rows %}\n  {{ row }}\n{% endfor %}\n```",
    "Filters change a value before it is shown, one after another, left to right.",
    "As of version 2.10 more complex cases can be handled with namespace objects, which carry "
    "changes out of a scope:\n\n```\n{% set ns = namespace(found=false) %}\n"
    "{% for item in items %}\n  {% set ns.found = true %}\n{% endfor %}\n```",
]


def test_an_example_is_the_code_written_with_the_requests_names() -> None:
    # "I set a flag inside a loop and it's still false" then "example please": the code that
    # sets `found` in a namespace, though the loop over rows sits nearer the top source
    sources = [source(i, text) for i, text in enumerate(LOOPS, 1)]
    request = Request("set found flag inside loop", sources, count=2)
    example = extractive(Mode.EXAMPLE, request, flat_idf, DEFAULT.answer).text
    assert "{% set ns.found = true %}" in example
    assert "{% for row in rows %}" not in example


SIGNALS = """# Signals

Signals tell a program that something happened outside it, such as a key pressed.

## Sending signals

A process sends a signal to another with the kill command and the signal's number.

## Watching signals

A watcher is a function the program registers for one signal. The program calls it when \
that signal arrives.

### When are watchers called?

Watchers run between two steps of the program, never inside one step.

### Removing a watcher

Unregister a watcher with the remove call and the signal's number.
"""


def test_a_summary_of_a_part_of_the_last_answers_page_is_its_outline(
    tmp_path: Path, embedder
) -> None:
    pages = {
        "signals.md": SIGNALS,
        "processes.md": "# Processes\n\nA process runs one program at a time.\n",
        "keys.md": "# Keys\n\nA key press reaches the program as an event.\n",
    }
    app = library_app(tmp_path, pages, embedder, chunk_size=200, chunk_overlap=0)
    conversation = app.conversation("s")
    conversation.ask("how does a process send a signal to another?")
    answer = conversation.ask("summarize the watching signals part").answer
    app.close()
    assert answer.startswith("A watcher is a function the program registers for one signal.")
    assert "- When are watchers called?: Watchers run between two steps" in answer
    assert "- Removing a watcher:" in answer
    assert "kill command" not in answer  # another part of the page
