"""Release notes stay below the other pages unless the question names a version, or names a
thing of the code that, among the turn's chunks, only the release notes name ("which release
restored pairwise?", where the reference page is autodoc the library never read): then they keep
their fused places. A plain word only a changelog happens to use does not lift them."""

from __future__ import annotations

from pathlib import Path

from helpers import filler_pages, library_app

CHANGES = "# Version History\n\n" + "\n".join(
    f"## {major}.{minor}.0\n\n- {item}\n"
    for major, minor, item in [
        (4, 2, "This release restores `pairwise()`, which was removed by mistake in 4.1.0."),
        (4, 1, "`zip_equal()` was removed; use the standard library's zip with strict."),
        (4, 0, "Tools that rejected input in capitals now accept it."),
        (3, 9, "`chunked()` gained a strict argument."),
        (3, 8, "Type hints were improved for several tools."),
    ]
)
TOOLS = """# Tools

These tools combine several iterables into one. These tools yield windows of items from an
iterable, and these tools look ahead at an iterable's values without advancing it.

## Grouping

These tools split an iterable into pieces of a given size, and these tools reject input that
does not fit the pieces.
"""
PAGES = {"versions.md": CHANGES, "tools.md": TOOLS} | filler_pages("tools")


def test_a_code_name_only_the_release_notes_name_keeps_them_in_place(
    tmp_path: Path, embedder
) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=200, chunk_overlap=0)
    named = app.conversation("a").ask("which release restored pairwise?")
    plain = app.conversation("b").ask("why does it reject capitals?")
    app.close()
    assert Path(named.lineage.chunks[0].document).name == "versions.md"
    assert "4.2.0: This release restores pairwise()" in named.answer
    # "capitals" is a plain word, said by the changelog alone: the tools page stays first
    assert Path(plain.lineage.chunks[0].document).name == "tools.md"
