"""An answer to a follow-up leads with what is new; what the session showed comes again only
when it is the answer itself (issue 30, points 2 and 3; found on dramatiq's docs, turns 13 and
20 of the new-user trial). "give me an example" right after the answer that showed the subject's
only example shows that example again, said as such, not another section's code; "summarize
that" says the point of the lead-in whose code the summary leaves out."""

from __future__ import annotations

from pathlib import Path

from helpers import ask_json, ingested, pick

from ragchat.answer import Mode
from ragchat.answer.extractive import SHOWN_AGAIN

SCHEDULING = """You can schedule messages to run some time in the future by calling
send_with_options on actors and providing a delay (in milliseconds):

```
>>> count_words.send_with_options(args=("https://example.com",), delay=10000)
Message(queue_name='default', actor_name='count_words', options={'eta': 1498560453548})
```

Keep in mind that your message broker is not a database.
"""
ACTORS = """To turn a function into an actor that runs in the background, decorate it:

```python
@dramatiq.actor
def count_words(url):
    print(len(requests.get(url).text.split()))
```
"""


def test_an_example_of_the_last_answer_is_its_shown_one_not_another_subjects_code() -> None:
    said = pick("schedule a message delay", [SCHEDULING], count=4)
    assert "delay=10000" in said
    example = pick(
        "schedule a message delay", [SCHEDULING, ACTORS], Mode.EXAMPLE, exclude=said, cover=[1]
    )
    assert example.startswith(SHOWN_AGAIN)
    assert "delay=10000" in example  # a Python session a sentence introduces is the example
    assert "@dramatiq.actor" not in example  # another section's code is off the subject


def test_new_code_on_the_subject_still_comes_before_the_shown_one() -> None:
    eta = "\nTo send it at a given time, pass an eta:\n\n```python\nsend(eta=t)\n```\n"
    more = SCHEDULING + eta
    said = pick("schedule a message delay", [SCHEDULING], count=4)
    example = pick(
        "schedule a message delay", [more, ACTORS], Mode.EXAMPLE, exclude=said, cover=[1]
    )
    assert "send(eta=t)" in example and "delay=10000" not in example
    assert SHOWN_AGAIN not in example


GUIDE = """# Guide

## Actors

Decorating a plain function with actor makes it an actor, processed by the workers:

```python
import dramatiq

@dramatiq.actor
def count_words(url):
    response = requests.get(url)
    print(f"There are {len(response.text.split())} words at {url!r}.")
```

## Scheduling Messages

You can schedule messages to run some time in the future by calling send_with_options on
actors and providing a delay (in milliseconds):

```
>>> count_words.send_with_options(args=("https://example.com",), delay=10000)
Message(queue_name='default', actor_name='count_words', options={'eta': 1498560453548})
```

Keep in mind that your message broker is not a database. Scheduled messages should represent a
small subset of all your messages.

## Prioritizing Messages

Messages with a lower numeric priority value are processed first when several wait in the
worker at the same time; the priority is set on the actor.
"""


def test_give_me_an_example_after_the_only_example_shows_it_again(runner, tmp_path: Path) -> None:
    db = ingested(runner, tmp_path, {"guide.md": GUIDE})
    first = ask_json(runner, db, "s", "how do I schedule a message to run 10 seconds from now?")
    assert "delay=10000" in first["answer"], first["answer"]
    example = ask_json(runner, db, "s", "give me an example")["answer"]
    assert example.startswith(SHOWN_AGAIN), example
    assert "delay=10000" in example, example
    assert "@dramatiq.actor" not in example, example


PIPELINES = """Or you can use pipe notation to achieve the same thing:

```
pipe = get_uri_contents.message(uri) | count_words.message(uri)
```

In both cases, the result of running get_uri_contents(uri) is passed as the last positional
argument to count_words.
If you would like to avoid passing the result of an actor to the next one in line, set the
pipe_ignore option to True when you create the "receiving" message:

```
(
    bust_caches.message() |
    prepare_codes.message_with_options(pipe_ignore=True) |
    launch_missiles.message()
)
```

Here, the result of bust_caches() will not be passed to prepare_codes(), but the result of
prepare_codes() will be passed to launch_missiles(codes).
"""


def test_a_summary_says_the_point_of_a_lead_in_without_its_code() -> None:
    summary = pick(
        "stop the result from being passed to the next step",
        [PIPELINES],
        Mode.SUMMARY,
        cover=[1],
        count=4,
    )
    assert "set the pipe_ignore option to True when you create the" in summary, summary
    assert '"receiving" message.' in summary  # a sentence of its own, no longer a lead-in
    assert "launch_missiles.message()" not in summary  # its code stays out
