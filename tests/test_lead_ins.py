"""A code block keeps the prose that introduces it (issue 30: no block without its lead-in): a
caption between them ("Custom collection name example", an admonition's or a code block's title)
names the block without cutting it from the sentence before; a lead-in that says only that a
block follows ("For example:") goes with the sentence before it, which says what the block shows.
"Check it:" over a console run is neither: it runs the code above it."""

from __future__ import annotations

from helpers import pick

from ragchat.answer import units
from ragchat.params import DEFAULT

CAPTIONED = """Each model is stored in its own collection, named after its class in snake_case.

It's possible to customize the collection name of a model by specifying the collection option in
the model_config class attribute.

Custom collection name example

```python
class CapitalCity(Model):
    name: str

    model_config = {"collection": "city"}
```

Now CapitalCity instances belong in the city collection instead of capital_city.
"""

EXAMPLE = """There are two ways to create indexes on a model. The first is the index argument of a
field.

The indexes generator of model_config defines compound indexes over several fields together.

For example:

```python
class Product(Model):
    name: str
    stock: int

    model_config = {"indexes": lambda: [Index(Product.name, Product.stock)]}
```
"""

CHECKED = """Then we can print the version and exit before anything else runs.

```python
def version_callback(value: bool):
    if value:
        print("0.1.0")
        raise Exit()
```

Check it:

```console
$ app --version
0.1.0
```
"""


def test_a_caption_between_a_sentence_and_its_code_does_not_cut_them_apart() -> None:
    unit = next(u for u in units(CAPTIONED, params=DEFAULT.answer) if u.block)
    assert unit.sentence.startswith("It's possible to customize the collection name")
    assert "Custom collection name example" in unit.sentence
    text = pick("how do I change the name of the collection a model is stored in?", [CAPTIONED])
    assert '"collection": "city"' in text


def test_for_example_goes_with_the_sentence_before_it() -> None:
    unit = next(u for u in units(EXAMPLE, params=DEFAULT.answer) if u.block)
    assert unit.sentence == (
        "The indexes generator of model_config defines compound indexes over several fields "
        "together. For example:"
    )
    text = pick("what about an index over two fields together?", [EXAMPLE])
    assert "compound indexes" in text and "Index(Product.name, Product.stock)" in text


def test_check_it_over_a_console_run_stays_a_lead_in_of_its_own() -> None:
    console = [u for u in units(CHECKED, params=DEFAULT.answer) if u.block][-1]
    assert console.sentence == "Check it:"
    assert console.is_console
