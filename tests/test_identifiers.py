"""An identifier typed in one shape meets the documents' other shapes (issue 28, family 7): a typed
`camelCase` is the words "camel case" side by side, as the index holds `to_camel_case` and a
"Camel Case" heading; `click.prompt`, `list[int]` and `--dry-run` likewise. Only the identifier's
words together are evidence: its common words alone ("case", "list") are not made stronger."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ask_json, invoke
from test_common_terms import put_notes
from typer.testing import CliRunner

from ragchat.search.fts import match_terms
from ragchat.search.hybrid import fts_ranking
from ragchat.store.db import open_db
from ragchat.text import camel_words, identifier_phrases


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("keys in camelCase please", ["camel case"]),
        ("BaseConverter or HTTPResponse?", ["base converter", "http response"]),
        ("to_camel_case and click.prompt()", ["to camel case", "click prompt"]),
        ("my hook for list[int]", ["list int"]),
        ("run it with --dry-run first", ["dry run"]),
        ("e.g. 3.5 in the U.S., PDFs and URLs, NASA's, v1 and v2, read-only, yes/no", []),
        ("camelCase/snake_case", ["camel case", "snake case"]),
    ],
)
def test_identifier_phrases_are_the_words_of_each_identifier(text: str, phrases: list[str]) -> None:
    assert identifier_phrases(text) == phrases


def test_a_word_the_library_holds_as_typed_needs_no_other_shape() -> None:
    """The documents write "CalFresh": it is found as typed; "MontanaVA" they write apart."""
    known = {"calfresh"}.__contains__
    assert identifier_phrases("CalFresh or MontanaVA?", known) == ["montana va"]
    assert identifier_phrases("cal_fresh", known) == ["cal fresh"]


def test_camel_words_cut_where_a_capital_starts_a_word() -> None:
    assert camel_words("camelCase") == ["camel", "Case"]
    assert camel_words("HTTPResponse") == ["HTTP", "Response"]
    assert camel_words("OAuth2Bearer") == ["OAuth2", "Bearer"]
    assert camel_words("PDFs") == ["PDFs"]


def test_an_identifier_is_searched_as_its_phrase_not_as_its_common_words() -> None:
    terms = match_terms("how do I get camelCase keys?")
    assert '"camel case"' in terms and '"camelcase"' in terms
    assert '"case"' not in terms and '"camel"' not in terms


def test_a_typed_camel_case_word_finds_the_snake_case_function(tmp_path: Path) -> None:
    texts = [f"Each case {i} of the keys goes through the converter unchanged." for i in range(12)]
    texts[4] = "def to_camel_case(name): return the name with each word capitalised."
    texts[9] = "A camel is not a case: keys stay as they are written."
    db = open_db(tmp_path / "lib.db")
    put_notes(db, "/d", texts)
    found = fts_ranking(db, "how do I get camelCase keys?", 5)
    assert found[0] == 5, found  # chunk ids start at 1: the fifth note
    db.close()


PAGES = {
    "renaming.md": (
        "# Renaming fields\n\nTo send the fields of a model under other names, give the "
        "converter a function that renames each one:\n\n```python\ndef to_camel_case(name):\n"
        "    first, *rest = name.split('_')\n    return first + ''.join(w.title() for w in rest)"
        "\n\nconverter.register(rename=to_camel_case)\n```\n"
    ),
    "keys.md": (
        "# Keys\n\nThe keys of a dictionary are strings. A key that holds a number is turned "
        "into a string when the dictionary is written out.\n"
    ),
    "validation.md": (
        "# Validation\n\nEvery field is checked against its type when a record is read. "
        "Keys that the model does not declare raise an error.\n"
    ),
    "errors.md": (
        "# Errors\n\nA failed conversion raises an error that names the key and the "
        "value. Nested errors are grouped.\n"
    ),
}


def test_a_question_typing_camel_case_finds_the_page_of_to_camel_case(
    tmp_path: Path, runner: CliRunner
) -> None:
    """End to end on real embeddings: the page that writes `to_camel_case` answers "camelCase
    keys", which it never writes."""
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in PAGES.items():
        (folder / name).write_text(text)
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", folder, "--db", db).exit_code == 0
    trace = ask_json(runner, db, "s", "can the output use camelCase keys?")
    first = trace["chunks"][0]
    assert first["document"] == "renaming.md", [c["document"] for c in trace["chunks"]]
