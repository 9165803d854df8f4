"""The how-to code of a source the extractive answer does not draw from (issue 30, point 1):
a lower chunk or a section neighbour a model would read holds the lead-in and the code the
question asks for, while the answer's own sources only describe. That code comes beside the
answer; nothing else of those sources does."""

from __future__ import annotations

from types import SimpleNamespace

from helpers import pick, source

from ragchat.answer import Source
from ragchat.conversation import answering
from ragchat.params import DEFAULT
from ragchat.store.library import StoredChunk

DESCRIBES = [
    "Completion callbacks run every time the shell asks the program for completions.",
    "A callback that prints while the shell completes breaks completion for the user.",
    "Shell completion calls the program with a special environment variable set.",
    "Completion works in bash, zsh and fish once the script is installed.",
]
HOW_TO = """The context tells a callback whether it runs for completion.
Check it first and return early, so nothing prints while the shell completes:

```python
def name_callback(ctx, value):
    if ctx.resilient_parsing:
        return
    print("Validating name")
    return value
```
"""
PROSE = (
    "A callback that prints Validating name while the shell completes breaks completion, "
    "said the changelog of an old release."
)


def test_the_how_to_code_of_a_source_beyond_the_answers_comes_beside_it() -> None:
    question = "my callback prints Validating name and that breaks completion"
    assert "ctx.resilient_parsing" not in pick(question, DESCRIBES)  # main: only the four
    answer = pick(question, DESCRIBES, reach=[source(5, HOW_TO)])
    assert "if ctx.resilient_parsing:" in answer
    assert "Check it first and return early" in " ".join(answer.split())  # with its lead-in
    assert "Completion callbacks run every time" in answer  # the first source still leads


def test_nothing_but_a_lead_in_with_its_code_comes_from_beyond_the_answers_sources() -> None:
    question = "my callback prints Validating name and that breaks completion"
    answer = pick(question, DESCRIBES, reach=[source(5, PROSE)])
    assert "changelog" not in answer
    assert answer == pick(question, DESCRIBES)


CONSOLE = """Run it to see the message:

```console
$ python main.py --name Camila
Validating name
Hello Camila
```
"""


def test_a_console_beyond_the_answers_sources_stays_out() -> None:
    question = "my callback prints Validating name and that breaks completion"
    answer = pick(question, DESCRIBES, reach=[source(5, CONSOLE)])
    assert "$ python main.py" not in answer


def _source(number: int, document: int, heading: str) -> Source:
    chunk = StoredChunk(
        id=number, document_id=document, path=f"doc{document}.md", title="", heading=heading,
        text="Put this in the config:\n\n```toml\nsize = 1\n```\n", ordinal=number,
    )  # fmt: skip
    return Source(number, chunk)


def test_only_the_sections_the_answer_draws_on_lend_it_their_code() -> None:
    pool = [_source(1, 1, "Form Data"), _source(2, 2, "Install"), _source(4, 1, "JSON")]
    apart = _source(3, 4, "Logs")  # out of the pool, of no section it draws on
    beside = _source(5, 1, "Form Data")  # goes on with the first source's section
    other = _source(6, 1, "Files & Binary Data")  # the same page, another section
    below = _source(7, 1, "Form Data")  # below the passages a model reads
    inputs = SimpleNamespace(sources=(*pool, apart, beside, other, below))
    reach = answering._reach(inputs, pool, DEFAULT.answer)  # type: ignore[arg-type]
    assert [s.number for s in reach] == [5]
