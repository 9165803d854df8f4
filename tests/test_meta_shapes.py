"""Meta-requests and "why" answered by their shape (issue 30): an example asked in a language is
that language's code; "show me the code for that" is the code of the section the last answer
came from, in the chunk beside it; "why ...?" is answered by the sentence that gives the reason."""

from __future__ import annotations

from pathlib import Path

from helpers import library_app, pick

from ragchat.answer import Mode
from ragchat.app import App
from ragchat.conversation.models import TurnResult

PYTHON_CODE = """```python
layout = env.get_template("layout.html")
page = env.get_template("page.html")
return page.render(layout=layout)
```"""
TEMPLATES = f"""The extends tag can take a variable that holds a template.

A layout can be chosen at render time and passed in like this:

{PYTHON_CODE}

The page then extends whatever it was given:

```jinja
{{% extends layout %}}
```

A block may be marked as required, so that every child must fill it:

```jinja
{{% block body required %}}{{% endblock %}}
```
"""


def test_an_example_in_a_named_language_is_that_languages_code() -> None:
    # "show me the python side of that": the Python block, though the last answer showed it,
    # since it is the only code in that language; not the template blocks that are new
    said = f"A layout can be chosen at render time and passed in like this:\n{PYTHON_CODE}"
    answer = pick(
        "extends variable template layout",
        [TEMPLATES],
        Mode.EXAMPLE,
        exclude=said,
        subject="python",
    )
    assert 'env.get_template("layout.html")' in answer
    assert "{% block body required %}" not in answer


def test_a_language_is_read_from_the_fence_tag() -> None:
    from ragchat.answer.extractive import fence_language

    assert fence_language("```python\nx = 1\n```") == "python"
    assert fence_language("~~~ {.jinja}\n{{ x }}\n~~~") == "jinja"
    assert fence_language("```\nplain\n```") == ""


REASONS = [
    "By default, included templates are passed the current context and imported templates are "
    "not. Imported templates do not see the variables of the template that imports them. "
    "Included templates see the variables of the template that includes them. "
    "The context of the template is passed to included templates as it is. "
    "The reason for this is that imports are cached, as they are mostly used as modules. "
    "This behaviour can be changed with the with context modifier."
]


def test_a_why_question_is_answered_by_the_sentence_that_gives_the_reason() -> None:
    query = "why are imported templates not passed the context of included templates"
    shown = pick(query, REASONS, Mode.QUESTION, count=2, why=True)
    assert "imports are cached" in shown


def test_a_why_question_is_told_by_its_opening() -> None:
    from ragchat.lexicon import WHY_QUESTION

    for question in ("why is it off by default?", "but why not just use +?", "How come it fails?"):
        assert WHY_QUESTION.match(question), question
    for question in ("what does why.md say?", "is there a reason to override it?"):
        assert not WHY_QUESTION.match(question), question


COMPLETION = """# Completion

## Help text for each value

Some shells can show a help text next to each completion value, beside the value itself.
To give one, the completion function returns a pair for each value instead of a plain string:
the first item of the pair is the value and the second is the help text the shell shows.
Shells that cannot show a help text still complete the value, and they drop the text.

```python
def complete_name(incomplete: str):
    for name, help_text in VALUES:
        if name.startswith(incomplete):
            yield (name, help_text)
```

## Completion in tests

A test can ask for the completion values of a word without a shell.
"""


COMPLETION_OTHERS = (
    ("install", "Install the completion for your shell once; the shell then completes values."),
    ("colors", "The help text of a command can be colored when the shell shows colors."),
    ("config", "A completion value can come from a settings file read by the shell."),
    ("bash", "Bash completes the values of an option but does not show help text for them."),
    ("zsh", "Zsh shows the completion values in columns, with their help text next to each."),
    ("fish", "Fish shows a help text beside every completion value it offers."),
    ("powershell", "PowerShell completes values and may show a help text next to each."),
    ("options", "Each option can have a help text, shown by --help next to its name."),
    ("commands", "Every command has a help text; the shell can show it on completion."),
    ("values", "Completion values are offered by the shell when the user presses tab."),
    ("menus", "Some shells show completion values in a menu with a help text per value."),
)
COMPLETION_PAGES = {"completion.md": COMPLETION} | {
    f"{name}.md": f"# {name.title()}\n\n{text}\n" for name, text in COMPLETION_OTHERS
}


def _conversation(
    root: Path, pages: dict[str, str], embedder, questions: list[str], chunk_size: int
) -> list[TurnResult]:
    """`questions` asked in order in one session of a library of `pages` (no chunk overlap)."""
    app = library_app(root, pages, embedder, chunk_size=chunk_size, chunk_overlap=0)
    try:
        conversation = app.conversation("s")
        return [conversation.ask(question) for question in questions]
    finally:
        app.close()


def test_show_me_the_code_for_that_shows_the_code_beside_the_last_answer(
    tmp_path: Path, embedder
) -> None:
    first, second = _conversation(
        tmp_path,
        COMPLETION_PAGES,
        embedder,
        [
            "can the shell show a help text next to each completion value?",
            "show me the code for that",
        ],
        chunk_size=360,
    )
    assert "yield (name, help_text)" not in first.answer  # the code sits in the next chunk
    assert "yield (name, help_text)" in second.answer


WORKERS = """# Running Workers

Workers run the jobs of a queue, one job at a time each.

## Deferred Loading of Plugins

Large setups with slow plugins may defer loading them until a job needs one.
The worker then reads a plugin's module the first time a job names it.

### Declaring the PluginRegistry

The registry maps each plugin name to the module that holds it, and loads nothing at first.

### What triggers a load?

A job that names a plugin, a status report and the help listing each load the plugins they show.

## Stopping Workers

A worker stops after its current job when it receives the stop signal.
"""


WORKERS_PAGES = {
    "workers.md": WORKERS,
    "queues.md": "# Queues\n\nA queue holds jobs in the order they came.\n",
    "plugins.md": (
        "# Plugins\n\nA plugin adds job types; install it with pip and name it in the config.\n"
    ),
}


def _ask(app: App, question: str) -> str:
    return app.conversation("s").ask(question).answer


def test_a_named_pages_part_asked_about_as_a_whole_is_its_lead_and_headings(
    tmp_path: Path, embedder
) -> None:
    app = library_app(tmp_path, WORKERS_PAGES, embedder, chunk_size=200, chunk_overlap=0)
    answer = _ask(app, "in 'Running Workers', what's the deferred loading part about?")
    assert answer.startswith("Large setups with slow plugins may defer loading them")
    assert "- Declaring the PluginRegistry" in answer  # the headings under the part, in order
    assert answer.index("PluginRegistry") < answer.index("- What triggers a load?")
    assert "Stopping Workers" not in answer  # another part of the page
    # a question of its own about the named page is answered as any other
    other = _ask(app, "in workers.md, when does a worker stop after the stop signal?")
    app.close()
    assert "after its current job" in other
    assert "- Deferred Loading of Plugins" not in other


THREADS_PAGES = {
    "threads.md": (
        "# Worker threads\n\nRun blocking code in a worker thread with"
        " `to_thread.run_sync(func)`.\n\n"
        "## Thread limit\n\nAt most 40 worker threads run at once; a capacity limiter sets another"
        " number.\n\n## Portals\n\nA blocking portal lets a worker thread call back into the"
        " event loop.\n"
    ),
    "topics.md": "# Topics\n\nA new topic starts a fresh page of notes; each topic has a title.\n",
    "tasks.md": "# Tasks\n\nA task group starts several tasks at the same time.\n",
}


def test_the_shift_phrase_is_no_subject_of_the_topic_it_begins(tmp_path: Path, embedder) -> None:
    *_, third = _conversation(
        tmp_path,
        THREADS_PAGES,
        embedder,
        [
            "how do I start several tasks at the same time?",
            "new topic: how do I run blocking code in a worker thread?",
            "how many threads can it start at most?",
        ],
        chunk_size=400,
    )
    understood = third.lineage.reformulation.semantic_query
    assert "new" not in understood.lower().split()  # "it" is not "new", nor is "topic" a term
    assert "topic" not in understood.lower()
    assert "40 worker threads" in third.answer


LOOP_PAGES = {
    "basics.md": (
        "# Running\n\nRun the main function with `run(main)`.\n\n"
        "## Backend options\n\n"
        "Options exclusive to a backend are passed with the backend_options argument:\n\n"
        "```python\nrun(main, backend_options={'debug': True})\n```\n\n"
        "The event loop takes these options:\n\n"
        "- debug (bool): run the event loop in debug mode\n"
        "- use_uvloop (bool): use the faster uvloop event loop when it is installed\n"
        "- loop_factory (callable): a function that creates the event loop\n"
    ),
    "migration.md": (
        "# Migration\n\n## Loop factories\n\nEvent loop policies are replaced by factories;"
        " pass loop_factory in the backend options instead of event_loop_policy.\n"
    ),
    "threads.md": "# Threads\n\nA worker thread runs blocking code outside the event loop.\n",
}


def test_a_correction_may_show_again_the_line_of_the_corrected_answer_it_names(
    tmp_path: Path, embedder
) -> None:
    first, second = _conversation(
        tmp_path,
        LOOP_PAGES,
        embedder,
        ["can I pass extra options to the event loop?", "no, I meant making it use uvloop"],
        chunk_size=600,
    )
    assert "use_uvloop" in first.answer
    assert "use_uvloop (bool)" in second.answer
