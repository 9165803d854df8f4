"""Reference links and indented blocks as mkdocs shows them (found on mkdocs-material's and
odmantic's docs, never used here, and in httpx's): an admonition's body is what is indented by
four more than its marker, so a line indented by one or two after it is the page's again, whole
("Non-file data fields ...", whose "Non-" was cut, and "  [venv]: https://..." a reference
definition, whose "[v" was cut and the rest shown); a reference link whose definition the page
does not hold (mkdocstrings' `[SyncEngine][odmantic.engine.SyncEngine]`, a site's auto-appended
`[MkDocs][mkdocs]`, a code span's `[`ValidationError`][pydantic_core.ValidationError]`) reads as
its text."""

from __future__ import annotations

from ragchat.ingest.formats.markdown import parse_markdown

ADMONITION_THEN_DEFINITION = """# Customization

!!! warning "Virtual environments"

    Create a new [Python virtual environment][venv] and [activate][venv-activate] it.

  [venv]: https://docs.python.org/3/library/venv.html
  [venv-activate]: https://docs.python.org/3/library/venv.html#how-venvs-work

Then install the dependencies.
"""
ADMONITION_THEN_TYPO = """# Multipart

!!! tip
    It is safe to upload large files this way.

 Non-file data fields can be included in the multipart form by passing them to `data=...`.
"""
UNRESOLVED = """# Engine

The Sync ([SyncEngine][odmantic.engine.SyncEngine]) and Async ([AIOEngine][]) engines, with
[MkDocs][mkdocs] and [Python Markdown]; `matrix[i][j]` stays code. Rather than a
[`RecursionError`][] it raises a [`ValidationError`][pydantic_core.ValidationError].
"""


def text(markdown: str) -> str:
    return "\n".join(b for b in parse_markdown(markdown).blocks if isinstance(b, str))


def test_a_definition_after_an_admonition_is_the_pages_and_resolves_its_links() -> None:
    shown = text(ADMONITION_THEN_DEFINITION)
    assert "Create a new Python virtual environment and activate it." in shown
    assert "https://" not in shown and "env]" not in shown
    assert "Then install the dependencies." in shown


def test_a_line_indented_by_one_after_an_admonition_is_whole() -> None:
    shown = text(ADMONITION_THEN_TYPO)
    assert "Non-file data fields can be included in the multipart form" in shown


def test_a_reference_link_the_page_does_not_define_is_its_text() -> None:
    shown = text(UNRESOLVED)
    assert "The Sync (SyncEngine) and Async (AIOEngine) engines, with MkDocs" in shown
    assert "[Python Markdown]" in shown  # brackets alone may be the author's own
    assert "matrix[i][j]" in shown
    assert "Rather than a RecursionError it raises a ValidationError." in shown  # pydantic's docs


def test_an_admonition_with_more_class_words_or_quotes_in_its_title_is_one() -> None:
    """pydantic's docs (never used here): `!!! warning Polymorphic serialization ...` (the words
    after the type are classes, the title is the type's) and `!!! note "on the "jsonable" nature
    of JSON schema"` were shown as raw lines; mkdocs-material's `!!! note annotate "..."` too."""
    pages = {
        '!!! note "on the "jsonable" nature of JSON schema"\n    Regarding the body.\n': (
            'on the "jsonable" nature of JSON schema'
        ),
        "!!! warning Polymorphic serialization of dataclasses\n    Only models.\n": "Warning",
        '!!! note annotate "Phasellus posuere"\n\n    Body text.\n': "Phasellus posuere",
    }
    for page, title in pages.items():
        blocks = [b for b in parse_markdown("# T\n\n" + page).blocks if isinstance(b, str)]
        assert blocks[0] == title and "!!!" not in "\n".join(blocks), blocks
