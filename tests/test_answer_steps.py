"""The unit that carries the how-to (issue 30, third round): a page's examples that grow one
step at a time are different units when their lead-ins say different things; a code block whose
lead-in ended the chunk before comes with the sentence after it that describes it."""

from __future__ import annotations

from helpers import flat_idf, source

from ragchat.answer import Mode, Request, extractive
from ragchat.params import DEFAULT


def pick(query: str, texts: list[str], **fields: object) -> str:
    sources = [source(i, text) for i, text in enumerate(texts, 1)]
    request = Request(query, sources, **fields)  # type: ignore[arg-type]
    return extractive(Mode.QUESTION, request, flat_idf, DEFAULT.answer).text


ENUM_STEP = """To take a value from a fixed set of choices, declare a standard Python enum class:

```python
from typing import Annotated
import typer

class Network(str, Enum):
    simple = "simple"
    conv = "conv"

app = typer.Typer()

@app.command()
def main(network: Annotated[Network, typer.Option()] = Network.simple):
    print(f"Training neural network of type: {network}")


if __name__ == "__main__":
    app()
```
"""

LITERAL_STEP = """You can also use Literal for the choices, without writing an enum class at all:

```python
from typing import Annotated
import typer

app = typer.Typer()

@app.command()
def main(network: Annotated[Literal["simple", "conv"], typer.Option()] = "simple"):
    print(f"Training neural network of type: {network}")


if __name__ == "__main__":
    app()
```
"""


def test_a_next_step_with_nearly_the_same_code_is_its_own_unit() -> None:
    """The second example differs from the first by one line of code, and that line is what
    the question asks for: its lead-in says something else, so it is no repeat of the first."""
    answer = pick("can I skip writing an enum class for the choices?", [ENUM_STEP, LITERAL_STEP])
    assert "class Network(str, Enum)" in answer
    assert 'Literal["simple", "conv"]' in answer


def test_the_same_lead_in_and_code_twice_is_still_a_repeat() -> None:
    copy = LITERAL_STEP.replace("at all", "at all here")
    answer = pick("can I skip writing an enum class for the choices?", [LITERAL_STEP, copy])
    assert answer.count("Literal[") == 1


PACKAGE_LOADER = """```python
from jinja2 import Environment, PackageLoader
env = Environment(loader=PackageLoader("yourapp"))
```

This will create a template environment with a loader that looks up templates in the templates
folder inside the yourapp Python package.

Different loaders are available to load templates in other ways or from other locations.

You can also write your own loader if your templates live in a database.
"""

CONSOLE_FIRST = """```console
$ python main.py
Loaded 3 templates from the templates folder
```

This shows how many templates were loaded from the folder of the package.

Different loaders are available to load templates in other ways or from other locations.
"""


def test_a_block_whose_lead_in_ended_the_last_chunk_comes_with_the_sentence_after_it() -> None:
    """The chunk starts with the code (its lead-in closed the chunk before); the sentence right
    after it says what it does: the code comes with it, not the sentence alone or nothing."""
    answer = pick(
        "how do I load templates from the templates folder of my package?", [PACKAGE_LOADER]
    )
    assert 'PackageLoader("yourapp")' in answer
    assert answer.index("PackageLoader") < answer.index("This will create")


def test_a_console_run_before_such_a_sentence_stays_out() -> None:
    answer = pick("how do I load templates from the folder of my package?", [CONSOLE_FIRST])
    assert "$ python main.py" not in answer
