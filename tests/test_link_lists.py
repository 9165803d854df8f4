"""A list of links alone under its heading ("Articles", "See also", an index page's lists) is
navigation: once the links' targets are gone it is a list of bare titles that answers nothing,
yet its words (the project's name, its subject) drew it into the six passages of broad questions
(beanie's docs, never used here: "Index › Articles" second for "how do I connect it to my MongoDB
database?"). It is left out at parse time, like a Sphinx toctree; a link list a sentence leads in
("works with these servers:"), links with words of their own, and a page of nothing but links
stay."""

from __future__ import annotations

from pathlib import Path

from helpers import library_app

from ragchat.ingest.loaders import load_document
from ragchat.store import library

INDEX = """\
# Shelfdb

Shelfdb is an object mapper for the Quarry document database.

## Links

### Articles

- **[Announcing Shelfdb - a Quarry object mapper](https://blog.example.org/announcing)**
- **[Shelfdb and Quarry: connecting a web app to the database](https://blog.example.org/web)**
- [Quarry indexes with Shelfdb](https://blog.example.org/indexes)

### Resources

- [GitHub](https://github.com/example/shelfdb) - the project's repository
- [Changelog](changelog.md) - every release's changes

## Servers

Shelfdb works with these Quarry servers:

- [Quarry Cloud](https://quarry.example.org/cloud)
- [Quarry Community](https://quarry.example.org/community)
"""

CONNECT = """\
# Connecting

Call `init_shelf(url)` once when the application starts: it opens the connection to the
Quarry database and registers every model, so queries can run.

```python
await init_shelf("quarry://localhost:7000/shop", models=[Product])
```
"""

SEE_ALSO_RST = """\
Queries
=======

Find products with ``Product.find(Product.price < 10)``.

See also
--------

* :doc:`connecting`
* :ref:`Indexes <indexes>`
* `The Quarry manual <https://quarry.example.org/manual>`_

Backends
--------

You can run it on:

* `Quarry Cloud <https://quarry.example.org/cloud>`_
* `Quarry Community <https://quarry.example.org/community>`_

Limits
------

* **Pallet bays.**
* **Racks**
"""


def _page(tmp_path: Path, name: str, text: str) -> str:
    (tmp_path / name).write_text(text, encoding="utf-8")
    return load_document(tmp_path / name).text


def test_a_link_list_alone_under_its_heading_is_left_out(tmp_path: Path) -> None:
    text = _page(tmp_path, "index.md", INDEX)
    assert "Announcing Shelfdb" not in text and "Quarry indexes with Shelfdb" not in text
    assert "GitHub - the project's repository" in text  # links with words of their own
    assert "Shelfdb works with these Quarry servers:\n\n- Quarry Cloud" in text  # led in
    rst = _page(tmp_path, "queries.rst", SEE_ALSO_RST)
    assert "connecting" not in rst and "The Quarry manual" not in rst
    assert "You can run it on:\n\n- Quarry Cloud\n- Quarry Community" in rst
    assert "- Pallet bays.\n- Racks" in rst  # bold words are no links


def test_a_page_of_nothing_but_links_and_a_release_keep_them(tmp_path: Path) -> None:
    index = "# Guides\n\n- [Connecting](connecting.md)\n\n## Queries\n\n- [Find](find.md)\n"
    assert "- Connecting" in _page(tmp_path, "README.md", index)
    changelog = (
        "# Changelog\n\nEvery release.\n\n## [1.16.3] - 2022-12-19\n\n### Fix\n\n"
        "- [[BUG] revision_id saved on replace()](https://github.com/example/issues/420)\n"
    )
    assert "revision_id saved on replace()" in _page(tmp_path, "changelog.md", changelog)


def test_the_titles_of_a_link_list_take_no_place_among_the_passages(
    tmp_path: Path, embedder
) -> None:
    app = library_app(tmp_path, {"index.md": INDEX, "connecting.md": CONNECT}, embedder)
    try:
        lineage = (
            app.conversation("s")
            .ask("how do I connect Shelfdb to my Quarry database when the app starts?")
            .lineage
        )
        stored = library.chunks_by_ids(app.db, (c.chunk_id for c in lineage.chunks))
    finally:
        app.close()
    passages = [stored[c.chunk_id].text for c in lineage.chunks[:6]]
    assert any("init_shelf(" in text for text in passages)
    assert not any("Announcing Shelfdb" in text for text in passages), passages
