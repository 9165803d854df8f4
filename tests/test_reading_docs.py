"""Issue 28, families 2-4, on small documentation trees written here: what Sphinx leaves behind
(object descriptions, `only`, tabs, `:ref:` labels across the library, intersphinx prefixes),
which files are documents (fragments included by other pages, page templates, front matter
titles), and release notes (recognised by shape, kept below ordinary pages unless a question
names a version or a date, their version kept in the section shown, a notice at ingest)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ask_json, invoke, settings_for

from ragchat.embed import FastEmbedder
from ragchat.ingest.loaders import load_document
from ragchat.ingest.pipeline import IngestReport, ingest
from ragchat.store.db import open_db


def write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


def parse(tmp_path: Path, name: str, text: str):
    return load_document(write(tmp_path, {name: text}) / name)


def run(db_path: Path, folder: Path, embedder: FastEmbedder, **kwargs) -> IngestReport:
    db = open_db(db_path)
    try:
        return ingest(db, settings_for(db_path), [folder], lambda: embedder, **kwargs)
    finally:
        db.close()


def stored_text(db_path: Path) -> dict[str, str]:
    """Each stored document's path -> its chunks' text, in order."""
    db = open_db(db_path)
    try:
        texts: dict[str, str] = {}
        for path, text in db.execute(
            "SELECT d.path, c.text FROM chunks c JOIN documents d ON d.id = c.document_id "
            "ORDER BY d.path, c.ordinal"
        ):
            texts[path] = f"{texts[path]}\n{text}" if path in texts else text
        return texts
    finally:
        db.close()


# --- 2. Sphinx leftovers ---------------------------------------------------------------------

API_RST = """\
Client reference
================

.. autofunction:: mypkg.transport.send_raw

.. py:function:: send(message, *, retries=3)

   Send *message*, trying again up to *retries* times.

.. autoclass:: mypkg.client.Client
   :members:

   A connection pool with a default timeout.

.. autosummary::
   :toctree: generated

   mypkg.transport.open_pool
"""


def test_object_descriptions_read_as_signatures_with_their_body(tmp_path: Path) -> None:
    doc = parse(tmp_path, "api.rst", API_RST)
    assert "~~~python\nsend(message, *, retries=3)\n~~~" in doc.text
    assert "Send message, trying again up to retries times." in doc.text
    assert "~~~python\nmypkg.client.Client\n~~~\n\nA connection pool" in doc.text
    # an autodoc line without a body is a dotted path and nothing else: it goes
    assert "send_raw" not in doc.text and "open_pool" not in doc.text


def test_myst_object_descriptions_read_like_their_rst_twins(tmp_path: Path) -> None:
    text = "# API\n\n```{py:function} fetch(url, timeout=10)\nFetch *url*.\n```\n"
    doc = parse(tmp_path, "api.md", text)
    assert "~~~python\nfetch(url, timeout=10)\n~~~\n\nFetch url." in doc.text


def test_an_attribute_shows_its_type_value_and_annotation_as_sphinx_does(tmp_path: Path) -> None:
    # Tortoise's Meta options: `.. attribute:: abstract` with `:annotation: = False` was a
    # one-word code block, "abstract"
    text = """\
The Meta class
==============

.. autoclass:: tortoise.models.Model.Meta

    .. attribute:: abstract
        :annotation: = False

        Set to ``True`` to indicate this is an abstract class

    .. py:attribute:: table
        :type: str
        :value: ""

        The table's name.
"""
    doc = parse(tmp_path, "models.rst", text)
    assert "~~~python\nabstract = False\n~~~\n\nSet to True to indicate" in doc.text
    assert '~~~python\ntable: str = ""\n~~~' in doc.text
    myst = (
        "# Data\n\n```{py:data} current_job\n:type: ~contextvars.ContextVar[Job]\n\nThe job.\n```\n"
    )
    text = parse(tmp_path, "m.md", myst).text
    assert "~~~python\ncurrent_job: ContextVar[Job]\n~~~\n\nThe job." in text


def test_ingest_names_the_pages_whose_reference_the_build_writes_from_the_code(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    # pipx's `reference/cli.rst`, MkDocs' `user-guide/cli.md` and its API pages: a title and a
    # directive; the published page's options and classes come from the code, never ingested
    docs = write(
        tmp_path / "docs",
        {
            "reference/cli.rst": "CLI reference\n=============\n\n.. sphinx_argparse_cli::\n"
            "   :module: pipx.main\n   :func: get_command_parser\n",
            "api.md": "# API\n\n::: mkdocs.structure.files.Files\n    options:\n"
            "      show_root_heading: true\n",
            "cli.md": "# Command Line Interface\n\n::: mkdocs-click\n    :module: mkdocs\n",
            "models.md": "# Models\n\n```{autoclass} shop.Product\n```\n\nProducts have a name.\n",
            # a pandoc div and sphinx-click's example directive fill nothing from the code
            "notes.md": "# Notes\n\n::: warning\nBack up first.\n:::\n",
            "usage.rst": "Usage\n=====\n\n.. click:example::\n\n   import click\n",
        },
    )
    report = run(tmp_path / "lib.db", docs, embedder)
    (note,) = [n for n in report.notes if "reference from the code" in n]
    assert note.startswith("4 page(s) have the site's build write reference from the code")
    assert note.endswith("api.md, cli.md, models.md and 1 more")
    assert "notes.md" not in note and "usage.rst" not in note
    # said when the pages are read: an ingest that finds them unchanged says nothing more
    again = run(tmp_path / "lib.db", docs, embedder)
    assert not [n for n in again.notes if "reference from the code" in n]


def test_only_content_is_kept_and_its_condition_is_not_text(tmp_path: Path) -> None:
    text = """\
Limits
======

.. only:: html

   ========  =======
   Plan      Requests
   ========  =======
   Free      1000
   Team      50000
   ========  =======
"""
    doc = parse(tmp_path, "limits.rst", text)
    assert "Team | 50000" in doc.text
    assert "html" not in doc.text.split()


def test_a_tab_label_leads_into_its_content(tmp_path: Path) -> None:
    text = """\
Install
=======

.. tabs::

   .. tab:: Windows

      Run the installer.

   .. tab:: Linux

      Use the package manager.
"""
    doc = parse(tmp_path, "install.rst", text)
    assert "Windows:\n\nRun the installer." in doc.text
    assert "Linux:\n\nUse the package manager." in doc.text
    myst = parse(tmp_path, "setup.md", "# Setup\n\n:::{tab-item} macOS\nUse Homebrew.\n:::\n")
    assert "macOS:\n\nUse Homebrew." in myst.text


def test_intersphinx_targets_lose_their_inventory_prefix(tmp_path: Path) -> None:
    text = "Intro\n=====\n\nRead :doc:`otherdocs:guide/logging` and :ref:`python:tut-errors`.\n"
    doc = parse(tmp_path, "intro.rst", text)
    assert "Read guide/logging and tut-errors." in doc.text


def test_the_default_role_shows_what_sphinx_shows(tmp_path: Path) -> None:
    text = "Hooks\n=====\n\nUse `pre_load <pkg.decorators.pre_load>` or `~pkg.fields.Field`.\n"
    assert "Use pre_load or Field." in parse(tmp_path, "hooks.rst", text).text


LABELLED = """\
.. _install-guide:

Installing the tool
===================

Run the installer.
"""


def test_ref_labels_show_the_target_title_from_any_document(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    docs = write(
        tmp_path / "docs",
        {
            # the referring pages come first in walking order; the label lives in the last one
            "a_usage.rst": "Usage\n=====\n\nFirst see :ref:`install-guide`.\n",
            "b_faq.md": "# FAQ\n\nSee {ref}`Install-Guide` before asking.\n",
            "z_install.rst": LABELLED,
        },
    )
    db_path = tmp_path / "lib.db"
    run(db_path, docs, embedder)
    texts = stored_text(db_path)
    assert "First see Installing the tool." in texts["a_usage.rst"]
    assert "See Installing the tool before asking." in texts["b_faq.md"]
    # renaming the section re-reads the pages that refer to it, though their bytes are the same
    (docs / "z_install.rst").write_text(LABELLED.replace("Installing the tool", "Setting up   "))
    report = run(db_path, docs, embedder)
    assert "a_usage.rst" in report.updated
    assert "First see Setting up." in stored_text(db_path)["a_usage.rst"]


DOCTEST_MD = """\
# Strategies

Tag a union before you unstructure it.

```{testsetup} *
import hidden_setup_module
```

```{doctest} tagged_unions

# Unstructuring as a union.
>>> converter.unstructure(A(1), unstructure_as=A | B)
{'a': 1, '_type': 'A'}

# Unstructuring as just an A.
>>> converter.unstructure(A(1))
{'a': 1}
```

```{testcode} grouped
print(configure_tagged_union)
```

```{doctest}
:hide:

>>> hidden_check()
```

## Real-life case

Apple sends notifications.
"""

DOCTEST_RST = """\
Strategies
==========

.. testsetup:: *

   import hidden_setup_module

.. doctest:: tagged_unions

   # Unstructuring as a union.
   >>> converter.unstructure(A(1))
   {'a': 1}

.. testcode:: grouped

   print(configure_tagged_union)

.. testoutput:: grouped
   :hide:

   hidden output
"""


@pytest.mark.parametrize(("name", "text"), [("s.md", DOCTEST_MD), ("s.rst", DOCTEST_RST)])
def test_doctest_blocks_are_code_and_their_groups_and_setup_are_not_text(
    tmp_path: Path, name: str, text: str
) -> None:
    parsed = parse(tmp_path, name, text)
    # a `# comment` inside a doctest block is code, never a heading of the page
    assert [s.heading_path for s in parsed.sections if s.heading_path][-1][-1] in (
        "Strategies",
        "Real-life case",
    )
    assert all("Unstructuring" not in " ".join(s.heading_path) for s in parsed.sections)
    assert "```pycon\n" in parsed.text and "# Unstructuring as a union." in parsed.text
    assert "```python\nprint(configure_tagged_union)" in parsed.text
    for hidden in ("hidden_setup_module", "hidden_check", "hidden output"):
        assert hidden not in parsed.text  # setup, cleanup and `:hide:` are off the page
    for group in ("tagged_unions", "grouped", "\n*\n"):
        assert group not in parsed.text  # test groups name nothing a reader sees


def test_a_fence_with_only_attributes_has_no_language(tmp_path: Path) -> None:
    parsed = parse(tmp_path, "r.md", '# Routers\n\n``` hl_lines="5 9"\nrouter = Router()\n```\n')
    assert "```\nrouter = Router()\n```" in parsed.text
    assert "hl_lines" not in parsed.text


def test_untitled_myst_links_show_the_heading_they_point_at(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    docs = write(
        tmp_path / "docs",
        {
            "a_hooks.md": (
                "# Hooks\n\nUnions are handled by [](b_unions.md#default-union-strategy).\n"
                "Untyped fields are treated as [](#typingany). See [](b_unions.md) too.\n\n"
                "## typing.Any\n\nAnything goes.\n"
            ),
            "b_unions.md": (
                "# Unions\n\n```python\n# Not a heading\n```\n\n"
                "## Default Union Strategy\n\nThe default disambiguates by unique fields.\n"
            ),
        },
    )
    db_path = tmp_path / "lib.db"
    run(db_path, docs, embedder)
    text = stored_text(db_path)["a_hooks.md"]
    assert "Unions are handled by Default Union Strategy." in text
    assert "Untyped fields are treated as typing.Any. See b unions too." in text


# --- 3. what is a document ---------------------------------------------------------------------


def test_included_fragments_and_templates_are_not_documents(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    docs = write(
        tmp_path / "docs",
        {
            "guide.md": '# Guide\n\nIntro.\n\n--8<-- "parts/tip.md"\n',
            "parts/tip.md": "Keep the cache warm between runs.\n",
            "overrides/main.html": '{% extends "base.html" %}\n{% block footer %}<p>Footer '
            "text shown on every page</p>{% endblock %}\n",
            "jinja.html": "<h1>Loops</h1><p>Write a loop like this:</p>"
            "<pre>{% for user in users %}{{ user }}{% endfor %}</pre>"
            "<p>Print a value with {{ user.name }} in the text.</p>",
            # a Sphinx theme's sidebar: expressions only, in its links' attributes
            "_templates/sidebar.html": '<p class="logo"><a href="{{ pathto(root_doc) }}">'
            "Home</a></p>\n<h3>{{ _('Useful Links') }}</h3>\n<ul><li><a href="
            "'{{ pathto(\"api\") }}'>{{ _('API Reference') }}</a></li></ul>\n",
            # two pages including each other: neither is only a part of the other
            "one.md": '# One\n\nFirst page.\n\n--8<-- "two.md"\n',
            "two.md": '# Two\n\nSecond page.\n\n--8<-- "one.md"\n',
        },
    )
    db_path = tmp_path / "lib.db"
    report = run(db_path, docs, embedder)
    texts = stored_text(db_path)
    assert sorted(texts) == ["guide.md", "jinja.html", "one.md", "two.md"]
    assert "Keep the cache warm between runs." in texts["guide.md"]
    assert ("parts/tip.md", "included by another document") in report.left_out
    assert ("overrides/main.html", "a page template") in report.left_out
    assert ("_templates/sidebar.html", "a page template") in report.left_out


def test_a_text_file_a_page_includes_is_not_a_document_of_its_own(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    # a worker's console output kept beside the page that shows it (`literalinclude`), and a
    # snippet of plain text: read where they are included, never a second time on their own
    docs = write(
        tmp_path / "docs",
        {
            "index.rst": "Workers\n=======\n\nStop a worker with Ctrl+C; you will see:\n\n"
            ".. literalinclude:: examples/shutdown.txt\n",
            "examples/shutdown.txt": "12:42:40: shutdown on SIGINT, 1 ongoing job cancelled\n",
            "guide.md": '# Guide\n\nThe limits:\n\n--8<-- "parts/limits.txt"\n',
            "parts/limits.txt": "At most four batch jobs run at once on one node.\n",
            "notes.txt": "A plain text page nobody includes stays a document.\n",
        },
    )
    db_path = tmp_path / "lib.db"
    report = run(db_path, docs, embedder)
    texts = stored_text(db_path)
    assert sorted(texts) == ["guide.md", "index.rst", "notes.txt"]
    assert "shutdown on SIGINT, 1 ongoing job cancelled" in texts["index.rst"]
    assert "At most four batch jobs run at once on one node." in texts["guide.md"]
    assert ("examples/shutdown.txt", "included by another document") in report.left_out
    assert ("parts/limits.txt", "included by another document") in report.left_out


SVG = """<svg width="527pt" height="90pt" xmlns="http://www.w3.org/2000/svg">
<g id="graph0" class="graph"><title>events</title>
<polygon fill="white" points="-4,4 -4,-86 523,-86 523,4 -4,4"/>
<text text-anchor="middle" x="61" y="-58">on_startup</text>
</g></svg>
"""


def test_a_picture_a_snippet_pastes_into_a_page_is_no_text_and_a_directive_heading_is_its_object(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    # mkdocs' plugin guide pastes its events diagram into an HTML card: 38 KB of SVG markup made
    # 40 of the page's 67 chunks; the same file in a code fence is shown as code. A heading that
    # is a mkdocstrings directive is titled by the object it documents
    docs = write(
        tmp_path / "docs",
        {
            "plugins.md": "# Plugins\n\n## Events\n\nThe events in the order they run.\n\n"
            '<details><summary>Diagram</summary>\n--8<-- "docs/img/events.svg"\n</details>\n\n'
            "#### ::: mkdocs.plugins.event_priority\n\nA decorator that sets an event's "
            "priority.\n\n## Drawing\n\nThe diagram's source:\n\n```xml\n"
            '--8<-- "docs/img/events.svg"\n```\n',
            "img/events.svg": SVG,
        },
    )
    db_path = tmp_path / "lib.db"
    run(db_path, docs, embedder)
    text = stored_text(db_path)["plugins.md"]
    events, drawing = text.split("The diagram's source:")
    assert "svg" not in events and "polygon" not in events and "events.svg" not in events
    assert '<text text-anchor="middle" x="61" y="-58">on_startup</text>' in drawing
    db = open_db(db_path)
    try:
        headings = [row[0] for row in db.execute("SELECT heading FROM chunks ORDER BY ordinal")]
    finally:
        db.close()
    assert any(h.endswith("mkdocs.plugins.event_priority") for h in headings)
    assert not any(":::" in h for h in headings)


def test_a_fragment_stored_earlier_leaves_the_library_once_a_page_includes_it(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    docs = write(tmp_path / "docs", {"parts/tip.md": "Keep the cache warm between runs.\n"})
    db_path = tmp_path / "lib.db"
    run(db_path, docs, embedder)
    assert list(stored_text(db_path)) == ["parts/tip.md"]
    write(docs, {"guide.md": '# Guide\n\n--8<-- "parts/tip.md"\n'})
    report = run(db_path, docs, embedder)
    assert list(stored_text(db_path)) == ["guide.md"] and report.removed == ["parts/tip.md"]


def test_a_page_made_only_of_other_pages_leaves_them_documents_of_their_own(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """pendulum's index.md is seventeen `{!docs/page.md!}` lines: read in place, the whole site
    was one document (every answer cited it, every turn was anchored on it). Its pages are the
    documents; it is none. A page with text of its own between its includes reads them in
    place, as before; so does one that includes a snippet."""
    pages = {
        "docs/parsing.md": "# Parsing\n\nThe library parses strings with `parse()`.\n",
        "docs/timezones.md": "# Timezones\n\nConvert between zones with `in_timezone()`.\n",
        "docs/tips.md": "# Tips\n\nCache the zone objects you use often.\n",
        "docs/limits.md": "At most four zones are cached at once.\n",
    }
    docs = write(
        tmp_path / "site",
        {
            **pages,
            "index.md": "<!-- the site -->\n{!docs/parsing.md!}\n\n{!docs/timezones.md!}\n",
            "guide.md": "# Guide\n\nRead this first.\n\n{!docs/tips.md!}\n\n{!docs/limits.md!}\n",
        },
    )
    db_path = tmp_path / "lib.db"
    report = run(db_path, docs, embedder)
    texts = stored_text(db_path)
    assert sorted(texts) == ["docs/parsing.md", "docs/timezones.md", "guide.md"]
    assert "parse()" in texts["docs/parsing.md"] and "in_timezone()" in texts["docs/timezones.md"]
    assert "Cache the zone objects" in texts["guide.md"] and "four zones" in texts["guide.md"]
    assert ("index.md", "made only of the pages it includes, each read as a document") in (
        report.left_out
    )
    # an RST page of a title and its includes is one too
    rst = write(
        tmp_path / "rst",
        {
            "index.rst": "Manual\n======\n\n.. include:: one.rst\n\n.. include:: two.rst\n",
            "one.rst": "One\n===\n\nThe first chapter explains the loader.\n",
            "two.rst": "Two\n===\n\nThe second chapter explains the writer.\n",
        },
    )
    run(tmp_path / "rst.db", rst, embedder)
    assert sorted(stored_text(tmp_path / "rst.db")) == ["one.rst", "two.rst"]


def test_a_prologs_substitutions_show_as_the_built_page_shows_them(
    tmp_path: Path, embedder: FastEmbedder
) -> None:
    """Sphinx's `rst_prolog` (conf.py reads prolog.rst into every page) defines `|@given|`; the
    file itself holds no text. A page shows what it defines; a name nobody defines shows its
    name, but for a value the build fills in (`|release|`), left as written."""
    docs = write(
        tmp_path / "docs",
        {
            "prolog.rst": ".. |@given| replace:: :func:`@given <hypothesis.given>`\n"
            ".. |assume| replace:: :func:`~hypothesis.assume`\n"
            "..  a comment\n.. |ellipsis| replace:: :obj:`python:Ellipsis`\n",
            "quickstart.rst": "Quickstart\n==========\n\nDecorate the test with |@given| and "
            "call |assume| inside it; pass |ellipsis| to infer. See |st.lists| for lists, "
            "new in |release|.\n",
        },
    )
    db_path = tmp_path / "lib.db"
    report = run(db_path, docs, embedder)
    text = stored_text(db_path)["quickstart.rst"]
    assert "Decorate the test with @given and call assume() inside it; pass Ellipsis" in text
    assert "See st.lists for lists, new in |release|." in text
    assert ("prolog.rst", "no text content") in report.skipped
    # a changed prolog re-reads the pages that use it
    write(docs, {"prolog.rst": ".. |@given| replace:: :func:`@hyp.given <hypothesis.given>`\n"})
    report = run(db_path, docs, embedder)
    assert report.updated == ["quickstart.rst"]
    assert (
        "Decorate the test with @hyp.given and call assume inside"
        in stored_text(db_path)["quickstart.rst"]
    )


def test_front_matter_title_wins_over_the_first_heading(tmp_path: Path) -> None:
    text = "---\ntitle: ADR 3: use PostgreSQL\nstatus: accepted\n---\n\n# Decision record\n"
    assert parse(tmp_path, "0003.md", text).title == "ADR 3: use PostgreSQL"


# --- 4. release notes --------------------------------------------------------------------------

CHANGELOG = "# Changelog\n\n" + "\n".join(
    f"## {version} ({date})\n\n### Bug Fixes\n\n- The request timeout is honoured when {what}.\n"
    f"- Timeouts raise TimeoutError with the timeout in seconds.\n"
    for version, date, what in [
        ("2.3.0", "2024-06-01", "redirects are followed"),
        ("2.2.0", "2024-03-01", "a proxy is set"),
        ("2.1.0", "2023-12-01", "streaming a request timeout"),
        ("2.0.0", "2023-09-01", "the pool is full"),
    ]
)
TIMEOUTS = """\
# Client guide

## Timeouts

Give the client a `timeout` in seconds, `Client(timeout=5.0)`: a request that takes longer
stops waiting and raises an error.

## Cookies

Cookies set by the server are kept in the client's cookie jar between requests.
"""


@pytest.fixture
def release_library(tmp_path: Path, embedder: FastEmbedder) -> Path:
    docs = write(tmp_path / "docs", {"CHANGELOG.md": CHANGELOG, "guide.md": TIMEOUTS})
    path = tmp_path / "lib.db"
    run(path, docs, embedder)
    return path


def test_release_notes_are_recognised_by_shape_and_titled_by_their_file(tmp_path: Path) -> None:
    from ragchat.ingest.releases import is_release_notes

    rst = parse(
        tmp_path,
        "HISTORY.rst",
        "\n".join(f"Version {v}\n-------------\n\nFixed {v}.\n" for v in ("3.1.0", "3.0.1", "3.0")),
    )
    assert rst.title == "HISTORY" and is_release_notes(rst)
    assert is_release_notes(parse(tmp_path, "notes.md", CHANGELOG))
    guide = "# Upgrading\n\n## From 1.x to 2.0\n\nRename it.\n\n## New options\n\nMore.\n"
    assert not is_release_notes(parse(tmp_path, "upgrading.md", guide))
    assert not is_release_notes(parse(tmp_path, "guide.md", TIMEOUTS))
    numbered = "".join(f"## {n} Part\n\nText.\n\n" for n in ("1.1", "1.2", "2.1", "2.2", "3"))
    assert not is_release_notes(parse(tmp_path, "policy.md", "# Policy\n\n" + numbered))


def test_a_version_before_a_written_out_date_titles_a_release(tmp_path: Path) -> None:
    """Starlette's release notes title each release "0.47.3 (August 24, 2025)" (never used here):
    a date written out in words, in any language, is a date like "2025-08-24"; a section
    number's title is still no release."""
    from ragchat.ingest.releases import is_release_notes, is_version_heading, release_of

    dates = ("August 24, 2025", "24 juillet 2025", "June 21st, 2025", "24 de mayo de 2025")
    notes = "# Release Notes\n\n" + "".join(
        f"## 0.47.{n} ({date})\n\n#### Fixed\n\n* Fix the cookie jar {n}.\n\n"
        for n, date in zip((3, 2, 1, 0), dates, strict=True)
    )
    assert is_release_notes(parse(tmp_path, "release-notes.md", notes))
    assert release_of("Release Notes > 0.47.3 (August 24, 2025) > Fixed") == (
        "0.47.3 (August 24, 2025)"
    )
    assert not is_version_heading("1.2.0 Breaking changes to the client API")
    assert not is_version_heading("1.2 Eligibility (2024)")


def test_a_version_with_a_pre_release_titles_a_release(tmp_path: Path) -> None:
    """Black's change log (never used here) titles its early releases "Version 18.3a0" and
    "Version 19.10b0", PEP 440's pre-releases, beside "Version 22.1.0": they are releases too,
    so the log is release notes (before, 35 of its 90 distinct titles counted, and the log, half
    the library, was read as a page). SemVer's "1.0.0-beta.2" and a ".post1" likewise; a
    section numbered "3.2a" is no release."""
    from ragchat.ingest.releases import is_release_notes, is_version_heading, versions_in

    versions = ("26.1.0", "19.10b0", "18.6b4", "18.3a0")
    styles = ("Stable style", "Preview style", "Packaging", "Blackd", "Parser", "Output")
    log = "# Change Log\n\n" + "".join(
        f"## Version {version}\n\n### {style}\n\n- Fix the parser {n}.\n\n"
        for n, (version, style) in enumerate(zip(versions, styles, strict=False))
    )
    assert is_release_notes(parse(tmp_path, "CHANGES.md", log))
    for heading in ("Version 18.3a0", "2.0rc1", "1.0.0-beta.2", "1.4.post1 (2024-05-01)"):
        assert is_version_heading(heading), heading
    assert versions_in("what changed in 2.0rc1?") == {"2.0rc1"}
    assert not is_version_heading("3.2a Eligibility")


SPHINX_CHANGELOG = """\
Changelog
=========

.. changelog::
    :version: 1.19.2
    :include_notes_from: unreleased

""" + "".join(
    f"""\
.. changelog::
    :version: 1.{n}.0
    :released: August {n}, 2026

    .. change::
        :tags: bug, autogenerate
        :tickets: {1800 + n}

        Fixed the check constraint of part {n}, see :paramref:`.Context.configure.compare`.

"""
    for n in range(18, 14, -1)
)


def test_a_changelog_directive_titles_each_release_by_its_version_option(tmp_path: Path) -> None:
    """The changelog extension (alembic's docs/build/changelog.rst, never used here before this
    round) names each release in the options of a `.. changelog::` directive, with no section
    title: its version and date title the release, so the log is release notes (before, none of
    its 145 releases had a heading and the log, 38 % of the library, led ordinary answers). A
    change's tags and tickets are no text; a `:paramref:` shows no leading dot, as Sphinx."""
    from ragchat.ingest.releases import is_release_notes

    doc = parse(tmp_path, "changelog.rst", SPHINX_CHANGELOG)
    paths = list(dict.fromkeys(section.heading_path for section in doc.sections))
    assert [path[0] for path in paths] == ["Changelog"] * 4
    assert [path[-1] for path in paths] == [
        "1.18.0 (August 18, 2026)",
        "1.17.0 (August 17, 2026)",
        "1.16.0 (August 16, 2026)",
        "1.15.0 (August 15, 2026)",
    ]
    assert is_release_notes(doc)
    assert "part 18, see Context.configure.compare." in doc.text
    assert ":tags:" not in doc.text and "1818" not in doc.text and "unreleased" not in doc.text


def test_an_enumerated_list_keeps_the_kind_of_marker_its_author_wrote(tmp_path: Path) -> None:
    """webargs' AUTHORS (never used here before): "* F. Moukayed" is a bullet holding a list
    that starts at "F." for docutils, as for Sphinx; it read "6. Moukayed". Letters, roman
    numerals and their brackets are shown as written."""
    text = (
        "Steps\n=====\n\n* F. Moukayed\n\na) first\nb) second\n\n(iv) four\n(v) five\n\n3. three\n"
    )
    doc = parse(tmp_path, "steps.rst", text)
    assert "F. Moukayed" in doc.text and "6. Moukayed" not in doc.text
    assert "a) first\nb) second" in doc.text and "(iv) four\n(v) five" in doc.text
    assert "3. three" in doc.text


def test_a_changelog_that_titles_each_change_is_release_notes_by_its_top_level(
    tmp_path: Path,
) -> None:
    """Each release lists its changes under titles of their own, so the versions are a quarter
    of the titles but the whole of the top level (beanie's docs/changelog.md, never used here)."""
    from ragchat.ingest.releases import is_release_notes

    titles = ("Speed up init", "Fix count ignoring options", "Add handshake")
    releases = [(f"2.{n}.0", f"2025-{n:02}-01", chr(96 + n)) for n in range(12, 0, -1)]
    changelog = "# Changelog\n\nThe project's changes.\n\n" + "".join(
        f"## [{version}] - {date}\n"
        + "".join(f"### {title}, part {part}\n- Author - someone\n" for title in titles)
        + "\n"
        for version, date, part in releases
    )
    assert is_release_notes(parse(tmp_path, "changelog.md", changelog))
    # a migration guide walks through a few releases, each explained under a title of its own
    guide = "# Migrations\n\n" + "".join(
        f"## {version}\n\n### {change}\n\nText.\n\n### Restoring the old way\n\nMore.\n\n"
        for version, change in (("25.3.0", "Sets"), ("25.2.0", "Tuples"), ("25.1.0", "Hooks"))
    )
    assert not is_release_notes(parse(tmp_path, "migrations.md", guide))


def test_release_notes_rank_below_pages_unless_the_question_names_a_version(
    release_library: Path, runner
) -> None:
    plain = ask_json(runner, release_library, "a", "how do I set a request timeout?")
    top = [c["document"] for c in plain["chunks"][:3]]
    assert top[0] == "guide.md" and "CHANGELOG.md" not in top[:2], top
    versioned = ask_json(runner, release_library, "b", "what was fixed about timeouts in 2.1.0?")
    first = versioned["chunks"][0]
    assert first["document"] == "CHANGELOG.md" and "2.1.0 (" in first["heading"], first
    other = ask_json(runner, release_library, "c", "what was fixed about timeouts in 2.2.0?")
    assert "2.2.0 (" in other["chunks"][0]["heading"], "the version the question names first"


def test_the_sources_show_the_version_of_a_release_notes_section(
    release_library: Path, runner
) -> None:
    result = invoke(runner, "ask", "timeouts fixed in 2.2.0?", "--db", release_library)
    assert result.exit_code == 0, result.output
    panel = " ".join(result.output.replace("\u2502", " ").split())  # without the panel's sides
    assert "CHANGELOG.md · Changelog › 2.2.0 (2024-03-01) ›" in panel, panel  # then "Bug Fixes"


def test_ingest_says_when_release_notes_dominate(tmp_path: Path, runner) -> None:
    docs = write(tmp_path / "docs", {"CHANGELOG.md": CHANGELOG, "guide.md": TIMEOUTS})
    result = invoke(runner, "ingest", docs, "--db", tmp_path / "lib.db")
    assert result.exit_code == 0, result.output
    line = " ".join(result.output.split())
    assert "release notes are" in line and "of the library's chunks (1 document(s))" in line
    assert "--exclude /CHANGELOG.md --prune" in line, line
    # the advice goes into the library the ingest wrote, not the default one
    assert f"to leave them out: ragchat ingest --db {tmp_path / 'lib.db'} {docs}" in line, line


ANNOUNCEMENT = """\
---
date: 2024-0{n}-01
---

# Widget v{version}

Widget v{version} brings faster {what} and a new `widget {what}` command.

## Upgrading

Run `pip install -U widget` to get the {what} changes.
"""
TIMEOUT_GUIDE = """\
# Timeouts

Give the client a `timeout` in seconds, `Client(timeout=5.0)`: a request that takes longer
stops waiting and raises a timeout error.
"""
MIGRATING = "# Migrating to 2.0\n\nRename `Client.timeout_s` to `Client.timeout`.\n"


@pytest.fixture
def series_library(tmp_path: Path, embedder: FastEmbedder) -> Path:
    posts = {
        f"blog/posts/widget-{n}.md": ANNOUNCEMENT.format(n=n, version=f"1.{n}.0", what=what)
        for n, what in [(1, "timeouts"), (2, "timeout retries"), (3, "request timeouts")]
    }
    docs = write(tmp_path / "docs", {**posts, "blog/index.md": "# Blog\n\nNews.\n"})
    write(docs, {"guide/timeouts.md": TIMEOUT_GUIDE, "guide/migrating.md": MIGRATING})
    path = tmp_path / "lib.db"
    run(path, docs, embedder)
    return path


def test_release_announcements_one_page_a_release_are_recognised_by_their_folder() -> None:
    from ragchat.ingest.releases import release_series

    pages = [
        (1, "/d/blog/posts/a.md", "Widget v1.1.0"),
        (2, "/d/blog/posts/b.md", "What's new in Widget 1.2"),
        (3, "/d/blog/posts/c.md", "Widget 1.3 release notes"),
        (4, "/d/blog/posts/d.md", "Our new logo"),
        (5, "/d/guide/migrating.md", "Migrating to 2.0"),  # a lone page titled by a version
        (6, "/d/guide/timeouts.md", "Timeouts"),
    ]
    assert release_series(pages) == {1, 2, 3}
    assert release_series(pages[:2] + pages[3:]) == set(), "two pages are not a series"


def test_release_announcements_rank_below_pages_unless_the_question_names_a_version(
    series_library: Path, runner
) -> None:
    plain = ask_json(runner, series_library, "a", "how do I change the request timeout?")
    top = [c["document"] for c in plain["chunks"][:2]]
    assert top[0] == "guide/timeouts.md" and all("blog/posts" not in d for d in top), top
    versioned = ask_json(runner, series_library, "b", "what came with widget 1.2.0?")
    assert versioned["chunks"][0]["document"] == "blog/posts/widget-2.md", versioned["chunks"][0]
    shorter = ask_json(runner, series_library, "c", "what came with widget 1.3?")  # 1.3 = 1.3.0
    assert shorter["chunks"][0]["document"] == "blog/posts/widget-3.md", shorter["chunks"][0]


VERSIONING = """\
# Versioning

## Several API versions

Mount each version of the API at its own prefix: `api_v1 = API(version="1.0.0")` and
`api_v2 = API(version="2.0.0")`, then add both to the project's URL list, one under `/v1/`
and one under `/v2/`. Both versions are served by the same project at once.
"""
PROPOSAL = """\
# Ideas for v2

## Planned for v2

Routers may lose their automatic prefix and the settings module may be renamed; please leave
your thoughts on the issue tracker.
"""


def test_a_version_the_question_names_lifts_only_release_notes(
    tmp_path: Path, embedder: FastEmbedder, runner
) -> None:
    """A question may name versions of its own ("a v1 and a v2 of the API"): a page whose title
    or heading holds that version but is no release notes keeps its fused place, below the page
    the question's lists rank first (a changelog's sections of the version still come first:
    the tests above)."""
    docs = write(
        tmp_path / "docs",
        {"versioning.md": VERSIONING, "proposals/v2.md": PROPOSAL, "guide.md": TIMEOUTS},
    )
    path = tmp_path / "lib.db"
    run(path, docs, embedder)
    found = ask_json(runner, path, "v", "how do I serve a v1 and a v2 of my API from one project?")
    assert found["chunks"][0]["document"] == "versioning.md", found["chunks"][0]


def test_a_release_series_is_marked_again_when_its_folder_changes(
    series_library: Path, tmp_path: Path, embedder: FastEmbedder
) -> None:
    def kinds() -> dict[str, str | None]:
        db = open_db(series_library)
        try:
            return dict(db.execute("SELECT path, kind FROM documents").fetchall())
        finally:
            db.close()

    assert kinds()["blog/posts/widget-1.md"] == "release-series"
    assert kinds()["guide/migrating.md"] is None and kinds()["blog/index.md"] is None
    docs = tmp_path / "docs"
    for n in (1, 2):
        (docs / f"blog/posts/widget-{n}.md").unlink()
    run(series_library, docs, embedder, prune_missing=True)
    assert kinds()["blog/posts/widget-3.md"] is None, "one page left is no longer a series"
