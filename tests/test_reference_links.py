"""Reference links and indented blocks as mkdocs shows them (found on mkdocs-material's and
odmantic's docs, never used here, and in httpx's): an admonition's body is what is indented by
four more than its marker, so a line indented by one or two after it is the page's again, whole
("Non-file data fields ...", whose "Non-" was cut, and "  [venv]: https://..." a reference
definition, whose "[v" was cut and the rest shown); a reference link whose definition the page
does not hold (mkdocstrings' `[SyncEngine][odmantic.engine.SyncEngine]`, a site's auto-appended
`[MkDocs][mkdocs]`) reads as its text."""

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
[MkDocs][mkdocs] and [Python Markdown]; `matrix[i][j]` stays code.
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
