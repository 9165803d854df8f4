"""A code block too long to show whole is cut where it says least of what the question asks
(issue 30: answers that carry the how-to): a many-to-many hook's 35-line example ends with the
line that adds the groups, and "how do I add groups to a user?" is answered with that line, the
cut moved before it; a question the block's tail says nothing of keeps its head, as before."""

from __future__ import annotations

from helpers import pick

from ragchat.answer import units
from ragchat.params import DEFAULT

MODELS = "\n".join(
    [
        "# models.py",
        "class Group(models.Model):",
        "    name = models.CharField()",
        "",
        "class User(models.Model):",
        "    name = models.CharField()",
        "    groups = models.ManyToManyField(Group)",
        "",
        "# factories.py",
        "class GroupFactory(factory.django.DjangoModelFactory):",
        "    class Meta:",
        "        model = models.Group",
        "",
        '    name = factory.Sequence(lambda n: "Group #%s" % n)',
        "",
        "class UserFactory(factory.django.DjangoModelFactory):",
        "    class Meta:",
        "        model = models.User",
        "",
        '    name = "John Doe"',
        "",
        "    @factory.post_generation",
        "    def groups(self, create, extracted, **kwargs):",
        "        if not create:",
        "            # Simple build, do nothing.",
        "            return",
        "",
        "        if extracted:",
        "            # A list of groups were passed in, use them",
        "            for group in extracted:",
        "                self.groups.add(group)",
    ]
)
HOOK = f"""The base building block for many-to-many relations is the post_generation hook:

```python
{MODELS}
```

When calling UserFactory() or UserFactory.build(), no group binding will be created.
"""


def test_a_long_block_is_cut_before_the_line_the_question_asks_for() -> None:
    block = next(u for u in units(HOOK, params=DEFAULT.answer) if u.block).block
    assert "self.groups.add(group)" not in block  # cut to max_block_lines, the tail gone
    text = pick("how do I add the groups of a user with the post_generation hook?", [HOOK])
    assert "self.groups.add(group)" in text
    assert "class UserFactory(factory.django.DjangoModelFactory):" in text
    lines = text.splitlines()
    assert lines.index("# …") < lines.index("                self.groups.add(group)")
    fence = lines.index("```python")
    assert len(lines[fence : lines.index("```", fence + 1) + 1]) == DEFAULT.answer.max_block_lines


def test_a_block_whose_tail_says_nothing_asked_keeps_its_head() -> None:
    text = pick("how do I declare the models for a many-to-many relation?", [HOOK])
    assert "class Group(models.Model):" in text
    assert "self.groups.add(group)" not in text
    assert "            return\n\n# …\n```" in text  # the tail cut, as every long block's


EXAMPLE = "\n".join(
    [
        "from tortoise import Tortoise, fields, run_async",
        "from tortoise.models import Model",
        "",
        *(
            line
            for name in ("Tournament", "Event", "Team", "Venue", "Sponsor")
            for line in (
                f"class {name}(Model):",
                "    id = fields.IntField(primary_key=True)",
                "    name = fields.TextField()",
                "",
            )
        ),
        "async def run():",
        '    await Tortoise.init(db_url="sqlite://:memory:", modules={"models": ["__main__"]})',
        "    await Tortoise.generate_schemas()",
        "    tournament = await Tournament.create(name='New Tournament')",
        "    await Event.create(name='Without participants', tournament=tournament)",
        "",
        "    counted = await Tournament.annotate(events_count=Count('events'))",
        "    print(counted[0].events_count)",
        "",
        *(f"    await Team.create(name='Team {n}')" for n in range(12)),
        *(f"    await Venue.create(name='Venue {n}')" for n in range(8)),
        "",
        'if __name__ == "__main__":',
        "    run_async(run())",
    ]
)
FILE = f"""The whole example:

```python
{EXAMPLE}
```
"""


def test_the_lines_asked_for_in_the_middle_of_a_long_file_are_shown_between_two_cuts() -> None:
    # a whole example file (Tortoise's functions.py): imports and models, then the query asked
    # for, then more: one cut kept the head and the tail, and the query was cut
    text = pick("how do I count the events of each tournament with annotate?", [FILE])
    assert "counted = await Tournament.annotate(events_count=Count('events'))" in text
    lines = text.splitlines()
    fence = lines.index("```python")
    block = lines[fence : lines.index("```", fence + 1) + 1]
    assert block[1] == "# …" and block[-2] == "# …"
    assert len(block) == DEFAULT.answer.max_block_lines
    # a question the file's middle says nothing of keeps its head, cut once
    head = pick("how do I declare a Tournament model?", [FILE])
    assert "from tortoise import Tortoise, fields, run_async" in head and head.count("# …") == 1


SETUP = """Bind the request's details in the view:

```python
{view}
```

```python
structlog.configure(processors=[structlog.contextvars.merge_contextvars])
```
"""


def test_a_cut_block_with_a_second_block_after_it_keeps_both() -> None:
    """A second block right after the first goes with the same lead-in; the unit shows both,
    each cut on its own as before: the question's cut of one would drop the other."""
    view = "\n".join(
        ["def view():", *(f"    step_{i}()" for i in range(40)), "    log.info('bound')"]
    )
    text = pick(
        "how do I bind the request details so every log line has them?", [SETUP.format(view=view)]
    )
    assert "structlog.contextvars.merge_contextvars" in text
    assert "    step_0()" in text
