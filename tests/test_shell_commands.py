"""A block of shell commands alone is what the reader types, not a console run (issue 30: answers
that carry the how-to): "pass each group its queue on the command line:" with `$ worker app
--queues ui` under it is the answer to "how do I make a group of workers take one queue?", while
a block that shows what a command printed stays a console run, shown only when asked about; when
its lead-in says what the question asks and no code comes before it, its commands alone are shown
(the command is the how-to, the printed run is not)."""

from __future__ import annotations

from helpers import flat_idf, source

from ragchat.answer import Mode, Request, extractive, units
from ragchat.answer.units import is_console
from ragchat.params import DEFAULT

BINDING = """By default the workers take jobs from every queue declared, but a group of workers
can be bound to some queues to keep slow jobs from holding up the urgent ones, given these tasks:

```python
@tasks.task
def slow_report():
    ...

@tasks.task(queue="urgent")
def send_alert():
    ...
```

One group of workers then takes the default queue and another the urgent one. To do that, pass
each group its queue on the command line:

```bash
# only the "default" queue
$ worker tasks_app --queues default

# only the "urgent" queue
$ worker tasks_app \\
    --queues urgent
```

Jobs sent to slow_report always reach the workers of the default queue and jobs sent to
send_alert the workers of the urgent queue.
"""


def test_a_block_of_commands_alone_is_not_a_console_run() -> None:
    commands = [u for u in units(BINDING, params=DEFAULT.answer) if u.block][-1]
    assert "--queues urgent" in commands.block
    assert not commands.is_console
    assert not is_console("```\n$ pip install tasks\n```")


def test_a_block_that_shows_what_a_command_printed_stays_a_console_run() -> None:
    assert is_console("```console\n$ worker --version\nworker 2.1.0\n```")
    assert is_console("```\n# start it\n$ worker tasks_app\nstarted 4 processes\n```")
    assert is_console("```\n>>> import tasks\n```")  # an interpreter session, as before
    assert is_console("```\nTraceback (most recent call last):\n  ...\n```")


def answer(question: str, text: str) -> str:
    """The extractive answer to `question` from one source holding `text`."""
    request = Request(question, [source(1, text)])
    return extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text


def test_the_command_line_a_how_to_asks_for_is_shown_with_its_lead_in() -> None:
    text = answer("how do I make one group of workers only take the urgent queue?", BINDING)
    assert "pass each group its queue on the command line" in text
    assert "$ worker tasks_app --queues default" in text


MONITORING = """## Monitoring at the console

To see what queues exist and what workers are active, just type the info command:

```console
$ worker info
high       |██████████ 20
low        |████ 12
32 jobs total
```

You can also ask the workers for their count from Python.
"""


def test_a_console_run_a_lead_in_introduces_is_shown_as_its_command() -> None:
    """rq's docs (never used here): "how can I see which queues and workers exist from the
    command line?" was answered with a Python snippet from another page, while the passage
    ranked first says "just type rq info:" over a run of it, left out as output nobody asked
    about. Its command is the how-to: shown, its printed table not."""
    text = answer("how can I see which queues and workers exist?", MONITORING)
    assert "just type the info command" in text and "$ worker info" in text
    assert "32 jobs total" not in text and "██" not in text
    asked = answer("how many jobs are there in total?", MONITORING)
    assert "32 jobs total" in asked  # asked about what it printed: the whole run
