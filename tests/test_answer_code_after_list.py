"""Answer units that carry the how-to (issue 30 point 1, found on beanie's and msgspec's docs,
never used here): the code a list leads into comes with the list; "every instance" does not ask
for an example."""

from __future__ import annotations

from helpers import pick

from ragchat.answer.extractive import Mode, mode_of

INDEXES = """The indexes field of the inner Settings class declares compound indexes over fields.
It is a list where items can be:

- a field name, for an index over one field
- a list of (field, direction) pairs, for one index over several fields together

```python
class Sample(Document):
    class Settings:
        indexes = [[("name", pymongo.ASCENDING), ("price", pymongo.DESCENDING)]]
```"""


def test_the_code_right_after_a_chosen_list_comes_with_it() -> None:
    """The block follows the list with no sentence of its own: the list is its lead-in."""
    answer = pick("one index over several fields together", [INDEXES])
    assert "It is a list where items can be:" in answer, answer
    assert "indexes = [[" in answer, answer


def test_every_instance_is_not_a_request_for_an_example() -> None:
    assert mode_of("a default that is a new random UUID for every instance?", False) is (
        Mode.QUESTION
    )
    assert mode_of("give me an example", True) is Mode.EXAMPLE
    assert mode_of("show me a sample of that", True) is Mode.EXAMPLE
