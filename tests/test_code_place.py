"""The code place of a question's answer (issue 30, point 1): the code a lower source writes with
the question's names comes beside an install line or a directory tree the first source shows,
and a Python interpreter session (a doctest) a sentence introduces is the example's code, not a
console run nobody asked about."""

from __future__ import annotations

from helpers import pick

from ragchat.answer import units
from ragchat.params import DEFAULT

INTRO = """Since version 2.0, the framework comes with background tasks support. This lets you
run slow work after the response is sent:

```
pip install framework>=2.0
```

Background tasks work well for sending mail and for cleaning files. The framework takes full
advantage of background tasks and makes them easy to use."""
HOW_TO = """You can mix plain views and background tasks, and the framework will schedule them
for you:

```python
@app.post("/signup")
def signup(request, tasks: Tasks):
    tasks.background(send_welcome_mail, request.user)
    return {"ok": True}
```
"""


def test_code_with_the_questions_names_comes_beside_an_install_line() -> None:
    answer = pick("does the framework support background tasks?", [INTRO, HOW_TO])
    assert "tasks.background(" in answer  # the lower source's how-to code
    assert answer.startswith("Since version 2.0")  # the first source still leads
    assert "pip install" in answer  # nothing the answer showed is taken away


OMIT = """Fields can be left out of the unstructured output. Using the omit override will skip the
attribute completely when generating an unstructuring function:

```pycon
>>> from cattrs.gen import make_dict_unstructure_fn, override
>>> c = Converter()
>>> hook = make_dict_unstructure_fn(Example, c, secret=override(omit=True))
>>> c.unstructure(Example("a", "b"))
{'name': 'a'}
```
"""


def test_an_interpreter_session_a_sentence_introduces_is_the_examples_code() -> None:
    block = next(u for u in units(OMIT, DEFAULT.answer) if u.block)
    assert block.is_console and block.is_session
    answer = pick("how do I skip an attribute completely?", [OMIT])
    assert "override(omit=True)" in answer


SHELL = """The program takes a name:

```python
def main(name: str):
    print(f"Hello {name}")
```

Run the program to check it:

```console
$ python main.py --name Camila
Hello Camila
```

The program greets the name it is given."""


def test_a_shell_run_is_still_left_out_unless_asked_about_what_it_printed() -> None:
    """A run of the code above it shows what the code printed: it stays out, its command too
    (`test_shell_commands` has a run no code comes before, whose command is the how-to)."""
    block = [u for u in units(SHELL, DEFAULT.answer) if u.block][-1]
    assert block.is_console and not block.is_session
    answer = pick("what does the program do with the name?", [SHELL])
    assert "$ python main.py" not in answer and "Hello Camila" not in answer
