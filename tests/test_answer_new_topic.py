"""What an earlier answer showed comes after what is new only on a follow-up (issue 30 point 2): a
question read as a new topic leads with its answer. Found on beanie's docs (never used here):
"how do I delete every product in a category?", a new question, opened with `delete_all()`, the
call that deletes every product, and showed the line asked for last (its lead-in "Many:" was
taken as said: an earlier answer had said "the class method insert_many:")."""

from __future__ import annotations

from pathlib import Path

from helpers import ask_json, ingested, pick

from ragchat.answer.extractive import Mode

MANY = """The category filter removes only the matching products:

```python
await Product.find(Product.category.name == "Chocolate").delete()
```"""
ALL = """To empty the whole collection, remove all products:

```python
await Product.delete_all()
```"""


def test_a_repeat_leads_a_new_question_and_follows_what_is_new_on_a_follow_up() -> None:
    said = pick("remove the products of a category", [MANY], count=1)
    assert "Product.category.name" in said
    asked = "remove the products of one category"
    new_topic = pick(asked, [MANY, ALL], Mode.QUESTION, said=said, follow_up=False)
    follow_up = pick(asked, [MANY, ALL], Mode.QUESTION, said=said, follow_up=True)
    for answer in (new_topic, follow_up):
        assert "Product.category.name" in answer and "delete_all()" in answer, answer
    assert new_topic.index("Product.category.name") < new_topic.index("delete_all()")
    assert follow_up.index("delete_all()") < follow_up.index("Product.category.name")


PAGES = {
    "insert.md": "# Inserting\n\nCreate a product and insert it: `await Product(name='Mars', "
    "price=1).insert()`.\n\n## Many\n\nTo insert several products at once, call the class "
    "method insert_many:\n\n```python\nawait Product.insert_many([tonybar, marsbar])\n```\n",
    "delete.md": "# Delete documents\n\nBeanie deletes one document, many or all of them.\n\n"
    '## Single\n\n```python\nawait Product.find_one(Product.name == "Milka").delete()\n```\n\n'
    '## Many\n\n```python\nawait Product.find(Product.category.name == "Chocolate").delete()\n'
    "```\n\n## All\n\n```python\nawait Product.delete_all()\n```\n",
}


def test_a_new_question_leads_with_its_answer_though_an_earlier_answer_said_it(
    tmp_path: Path, runner
) -> None:
    """ "Many:" over the category's delete() line counts as said ("insert_many:" holds it), and
    on a new question it still leads the answer, before `delete_all()`."""
    db = ingested(runner, tmp_path, PAGES)
    first = ask_json(runner, db, "s", "how do I insert many products at once?")
    assert "insert_many:" in first["answer"], first["answer"]
    second = ask_json(runner, db, "s", "new question: how do I delete every product in a category?")
    answer = second["answer"]
    many = answer.index('Product.find(Product.category.name == "Chocolate").delete()')
    assert "delete_all()" not in answer[:many], answer
