"""The leading document's other sections reach the passages (issue 28: the page is found, but the
section that answers does not reach the six passages). Its chunks are searched again among
themselves, and its best sections take places of other documents' chunks, never of its own and
never moving one document before another."""

from __future__ import annotations

from pathlib import Path

from helpers import settings_for

from ragchat.ingest.pipeline import ingest
from ragchat.search.sections import placed, within_document
from ragchat.store import library
from ragchat.store.db import open_db

KEY = "--gzip-level 9"
PAGE = f"""# Exports

An export writes a finished report to a file that other people can open without the tool.

## Formats

A report exports as a spreadsheet, as a web page or as a printable document; the format follows
the ending of the file name, and every format keeps the tables, charts and notes in order.

## Where exports go

Exports are written to the project's exports folder unless the command names another folder; an
export never overwrites an older file but adds a number to the new file's name.

## Level

Pass it on the command line:

```console
$ tool save sales.xlsx {KEY}
saved sales.xlsx.gz (212 KB)
```
"""
OTHERS = {
    "images": "Images are stored at full resolution; many photographs make a big report file.",
    "mail": "Large files are refused by many mail servers, so send a link to big reports.",
    "downloads": "A big report file downloads slowly from the web view on a slow line.",
}


def _library(tmp_path: Path, embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "exports.md").write_text(PAGE)
    for name, text in OTHERS.items():
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n")
    settings = settings_for(tmp_path / "lib.db", chunk_size=300, chunk_overlap=30)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    db.close()
    return settings.db


def test_the_section_that_answers_comes_first_among_its_documents_chunks(
    tmp_path: Path, embedder
) -> None:
    db = open_db(_library(tmp_path, embedder))
    chunks = library.chunks_by_ids(db, range(1, 100))
    page = {c.id: c for c in chunks.values() if c.path.endswith("exports.md")}
    holder = next(c.id for c in page.values() if KEY in c.text)
    question = "how do I set the gzip level of an export?"
    order = within_document(
        db,
        next(iter(page.values())).document_id,
        embedder.embed_query(question),
        question,
        k=20,
        vector_weight=0.7,
        fts_weight=0.3,
    )
    db.close()
    assert set(order) <= set(page)  # the document's chunks only
    assert order[0] == holder


def test_leading_sections_take_other_documents_places_only() -> None:
    # (chunk, document): the lead document 1 holds places 1, 3 and 5 of six
    order = [(10, 1), (20, 2), (11, 1), (30, 3), (12, 1), (40, 4), (50, 5), (13, 1)]
    new_order, new = placed(order, 1, best=[10, 14, 15, 16], places=6, most=2)
    assert new == [14, 15]  # its best sections not yet among the places
    # they come in where the last two other documents' chunks stood, which move below the places
    assert new_order == [10, 20, 11, 14, 15, 12, 30, 40, 50, 13]
    # the documents' order is unchanged: each document's first place keeps its rank among them
    documents = {10: 1, 11: 1, 12: 1, 13: 1, 14: 1, 15: 1, 20: 2, 30: 3, 40: 4, 50: 5}
    firsts = list(dict.fromkeys(documents[c] for c in new_order))
    assert firsts == list(dict.fromkeys(d for _, d in order))


def test_no_place_is_taken_when_the_lead_holds_every_place() -> None:
    order = [(10, 1), (11, 1), (12, 1), (20, 2)]
    assert placed(order, 1, best=[13, 10], places=3, most=2) == ([10, 11, 12, 20], [])
    # and never more places than other documents hold among them
    _, new = placed(order, 1, best=[13, 14], places=4, most=2)
    assert new == [13]


def test_a_named_documents_section_reaches_the_passages(tmp_path: Path, embedder) -> None:
    from ragchat.app import App
    from ragchat.params import DEFAULT

    path = _library(tmp_path, embedder)
    for name in ("archive", "backups", "printing", "history", "locks", "names"):
        (tmp_path / "docs" / f"{name}.md").write_text(
            f"# {name.title()}\n\nA report file can be {name} kept, sent and made smaller.\n"
        )
    settings = settings_for(path, chunk_size=300, chunk_overlap=30)
    db = open_db(path)
    ingest(db, settings, [tmp_path / "docs"], lambda: embedder)
    texts = {c.id: c.text for c in library.chunks_by_ids(db, range(1, 100)).values()}
    db.close()
    app = App(settings)
    app.__dict__["embedder"] = embedder
    ranked = app.conversation("s").ask("in exports.md, how do I send a smaller report?")
    app.close()
    chunks = ranked.lineage.chunks
    read = [texts[c.chunk_id] for c in chunks[: DEFAULT.answer.prompt_sources]]
    assert any(KEY in text for text in read)
    found = [c.document for c in chunks if c.beside is None]
    assert list(dict.fromkeys(c.document for c in chunks)) == list(dict.fromkeys(found))


def test_the_chunks_an_answer_draws_on_keep_their_places() -> None:
    # documents 2 and 3 hold places 2 and 4; the chunk of 2 is in the extractive answer's pool
    order = [(10, 1), (20, 2), (11, 1), (30, 3), (12, 1), (13, 1), (40, 4)]
    new_order, new = placed(order, 1, best=[14, 15], places=6, most=2, keep={10, 20, 11})
    assert new == [14]  # only the chunk of document 3 gives its place
    assert new_order == [10, 20, 11, 14, 12, 13, 30, 40]
