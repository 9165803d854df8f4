"""A `literalinclude` with `:pyobject:` shows that class or function of the file, as Sphinx does
(factory_boy's internals page, never used here: `:pyobject: UserFactory` of a 131-line test
module; before, the whole module, licence header and other classes, was the page's example)."""

from __future__ import annotations

from pathlib import Path

from ragchat.ingest.formats.common import python_object
from ragchat.ingest.ignore import Rules, Scope
from ragchat.ingest.includes import IncludeResolver
from ragchat.ingest.loaders import load_document

MODULE = """# Copyright: the project's authors; licensed under the MIT license.
import factory


class User:
    pass


class UserFactory(factory.Factory):
    class Meta:
        model = User

    username = factory.Faker("user_name")

    @factory.post_generation
    def groups(self, create, extracted, **kwargs):
        self.groups.add(*extracted)


def unrelated_helper():
    return 42
"""
RST = """Internals
=========

The factory this page walks through:

.. literalinclude:: factories.py
    :pyobject: UserFactory
"""
MYST = """# Internals

Its post-generation hook:

```{literalinclude} factories.py
:pyobject: UserFactory.groups
```
"""


def read(tmp_path: Path, name: str, text: str) -> str:
    for file, content in ((name, text), ("factories.py", MODULE)):
        (tmp_path / file).write_text(content, encoding="utf-8")
    page = tmp_path / name
    return load_document(
        page, includes=IncludeResolver(page, Scope((Rules(tmp_path),)), tmp_path)
    ).text


def test_a_pyobject_include_shows_that_class_only(tmp_path: Path) -> None:
    text = read(tmp_path, "internals.rst", RST)
    assert "class UserFactory(factory.Factory):" in text and "self.groups.add(*extracted)" in text
    assert "Copyright" not in text and "unrelated_helper" not in text and "class User:" not in text


def test_a_method_is_named_through_its_class_with_its_decorators(tmp_path: Path) -> None:
    text = read(tmp_path, "internals.md", MYST)
    method = "    @factory.post_generation\n    def groups(self, create, extracted, **kwargs):"
    assert method in text and "self.groups.add(*extracted)" in text
    assert "username = factory.Faker" not in text


def test_an_object_the_file_does_not_hold_leaves_the_whole_file() -> None:
    assert python_object(MODULE, "Missing") is None
    assert python_object("def broken(:\n", "broken") is None
    assert python_object("x = " + "-" * 200_000 + "1\n", "x") is None  # the parser's stack, run out
    assert python_object(MODULE, "unrelated_helper") == "def unrelated_helper():\n    return 42\n"
