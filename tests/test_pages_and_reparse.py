"""PDF pages stored with chunks and shown as "file.pdf p. N"; documents parsed by an older parser
are re-parsed by `ingest` even when their bytes did not change."""

from __future__ import annotations

import json
import re
from pathlib import Path

from helpers import invoke, pdf_bytes

from ragchat.ingest.loaders import PARSER_VERSION
from ragchat.store import library
from ragchat.store.db import open_db
from ragchat.store.transaction import get_setting
from ragchat.text import source_label


def lines(texts: list[str], top: float = 700) -> list[tuple[str, float, float]]:
    return [(text, 11, top - 14 * n) for n, text in enumerate(texts)]


def write_corpus(folder: Path) -> None:
    folder.mkdir()
    (folder / "trusts.pdf").write_bytes(
        pdf_bytes(
            [
                [("Trusts", 16, 740)] + lines(["A trust holds property for beneficiaries."]),
                [("Trustees", 16, 740)]
                + lines(["A trustee must keep accounts of the trust property."]),
            ]
        )
    )
    (folder / "notes.md").write_text("# Notes\n\nTrustees meet once a year.\n", encoding="utf-8")


def test_source_label() -> None:
    assert source_label("notes.md") == "notes.md"
    assert source_label("a.pdf", 12, 12) == "a.pdf p. 12"
    assert source_label("a.pdf", 12, None) == "a.pdf p. 12"
    assert source_label("a.pdf", 12, 13) == "a.pdf pp. 12-13"


def test_search_shows_pdf_pages_in_table_and_json(tmp_path: Path, runner) -> None:
    write_corpus(tmp_path / "docs")
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", tmp_path / "docs", "--db", db).exit_code == 0
    conn = open_db(db)
    pages = {(row["heading"], row["page_start"], row["page_end"]) for row in conn["chunks"].rows}
    assert pages == {("", 1, 1), ("Trustees", 2, 2), ("", None, None)}
    conn.close()

    result = invoke(runner, "search", "trustee keep accounts", "--json", "--db", db)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    by_source = {row["source"]: row for row in rows}
    assert (
        by_source["trusts.pdf p. 2"]["page_start"] == 2
        and by_source["trusts.pdf p. 2"]["page_end"] == 2
    )
    assert "notes.md" in by_source and by_source["notes.md"]["page_start"] is None

    table = invoke(runner, "search", "trustee keep accounts", "--db", db)
    assert "trusts.pdf p. 2" in " ".join(table.output.split())


def test_documents_from_an_older_parser_are_reparsed(tmp_path: Path, runner) -> None:
    write_corpus(tmp_path / "docs")
    db = tmp_path / "lib.db"
    assert invoke(runner, "ingest", tmp_path / "docs", "--db", db).exit_code == 0
    conn = open_db(db)
    assert get_setting(conn, "parser_version") == str(PARSER_VERSION)
    assert {d["parser_version"] for d in library.documents(conn)} == {PARSER_VERSION}
    # a database written before parser versions: the column is NULL, the chunks lack pages
    conn.execute("UPDATE documents SET parser_version = NULL WHERE path = 'trusts.pdf'")
    conn.execute("UPDATE chunks SET page_start = NULL, page_end = NULL")
    conn.close()

    again = invoke(runner, "ingest", tmp_path / "docs", "--db", db)
    assert again.exit_code == 0, again.output
    flat = " ".join(again.output.split())
    assert re.search(r"0 added, 0 updated, 1 unchanged, 0 removed, 0 skipped, 1 re-parsed", flat), (
        flat
    )
    conn = open_db(db)
    assert {d["path"]: d["parser_version"] for d in library.documents(conn)} == {
        "notes.md": PARSER_VERSION,
        "trusts.pdf": PARSER_VERSION,
    }
    assert {row["page_start"] for row in conn["chunks"].rows_where("page_start IS NOT NULL")} == {
        1,
        2,
    }
    conn.close()

    third = invoke(runner, "ingest", tmp_path / "docs", "--db", db)
    assert "0 added, 0 updated, 2 unchanged" in " ".join(third.output.split())


def test_sources_panel_shows_pages() -> None:
    from rich.console import Console

    from ragchat.conversation.models import RetrievedChunk
    from ragchat.render import sources_panel

    chunk = RetrievedChunk(
        rank=1,
        chunk_id=7,
        document_id=1,
        document="trusts.pdf",
        heading="Trustees",
        vector_rank=1,
        fts_rank=None,
        similarity=0.5,
        rrf=0.1,
        boost=0.0,
        score=0.1,
        anchored=False,
        reused=False,
        page_start=2,
        page_end=3,
    )
    console = Console(width=100, record=True, color_system=None)
    console.print(sources_panel([chunk], [], []))
    assert "trusts.pdf pp. 2-3" in console.export_text()
    assert RetrievedChunk.from_dict(chunk.to_dict()) == chunk
