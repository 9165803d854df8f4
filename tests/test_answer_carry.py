"""Answers that carry the how-to (issue 30, round of 2026-11-27 evening): a sentence that goes on
about the one before it is as relevant as it is, a unit an earlier answer showed does not set the
bar for what is new, and a `# comment` in code is not a root shell's prompt."""

from __future__ import annotations

from helpers import pick

from ragchat.answer import units
from ragchat.params import DEFAULT

BASE = """The BaseConverter is a simpler and slower converter variant. It does no code generation,
so it may be faster on first use which can be useful in command line tools."""
CONVERTER = """The Converter is a converter variant that generates specialized hooks. The Converter
used to be called GenConverter, and that alias is still present. Each converter keeps its own
hooks for each class."""


def test_a_sentence_opening_with_a_pointer_goes_on_about_the_one_before() -> None:
    answer = pick("difference between Converter and BaseConverter?", [BASE, CONVERTER], count=3)
    assert "It does no code generation" in answer  # what the BaseConverter is, said on
    assert answer.startswith("The BaseConverter is a simpler")


EXPERIMENTS = """The BaseConverter is a simpler and slower converter variant. These earlier
experiments generated no code at all and were replaced after several years in production."""


def test_a_determiner_with_a_noun_of_its_own_names_its_own_subject() -> None:
    """ "These earlier experiments ..." says what it is about: not a pointer going on about the
    sentence before, so it gains nothing from it (it shares none of the question's words)."""
    answer = pick(
        "difference between Converter and BaseConverter?", [EXPERIMENTS, CONVERTER], count=3
    )
    assert "These earlier experiments" not in answer


SCHEMA = """So, with the following schema...

```python
class BookFilter(FilterSchema):
    search: Lookup(["name__icontains", "author__name__icontains"]) = None
```
"""
JOINED = """By default, the lookups of one field are joined with OR, the fields themselves with AND.
You can change how the lookups of a field are joined with a connector argument."""


def test_a_repeat_far_above_the_rest_does_not_leave_it_the_whole_answer() -> None:
    sources, priors = [SCHEMA, JOINED], {1: 0.9, 2: 0.1}  # the first source far more similar
    said = pick("why does search match books by name or author?", sources, priors=priors, count=1)
    assert said.startswith("So, with the following schema")
    again = pick(
        "why does search match books by name or author and not both?",
        sources,
        priors=priors,
        said=said,
    )
    assert "joined with OR" in again  # what is new comes, not the last answer alone


GOTCHA = """There is a common gotcha: querysets are lazily evaluated, so this will not work:

```python
all_blogs = await sync_to_async(Blog.objects.all)()
# it will throw an error later when you try to iterate over all_blogs
```

Instead, evaluate it with list first."""


def test_a_comment_in_code_is_not_a_shell_prompt() -> None:
    block = next(u for u in units(GOTCHA, DEFAULT.answer) if u.block)
    assert not block.is_console
    answer = pick("why does wrapping Blog.objects.all blow up later?", [GOTCHA])
    assert "lazily evaluated" in answer and "sync_to_async(Blog.objects.all)" in answer
