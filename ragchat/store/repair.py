"""The SQL of `ragchat doctor`: SQLite's integrity check, row counts, and rebuilding the
full-text index from the chunks (the findings and their wording are in `doctor.py`)."""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.utils import sqlite3

# the full-text index as migration m001 creates it; its rows are rebuilt from chunks and documents
FTS_DDL = (
    "CREATE VIRTUAL TABLE chunks_fts USING fts5("
    "title, heading, text, tokenize = 'porter unicode61 remove_diacritics 2')"
)
FTS_FILL = (
    "INSERT INTO chunks_fts(rowid, title, heading, text) SELECT c.id, d.title, c.heading, c.text "
    "FROM chunks c JOIN documents d ON d.id = c.document_id"
)


def integrity_check(db: Database, most: int = 5) -> list[str]:
    """SQLite's report on the file: ["ok"], or up to `most` problems."""
    return [row[0] for row in db.execute(f"PRAGMA integrity_check({int(most)})")]


def rebuild_fts(db: Database) -> int:
    """Drop and rebuild the chunks' full-text index; returns its rows."""
    db.execute("DROP TABLE IF EXISTS chunks_fts")
    db.execute(FTS_DDL)
    db.execute(FTS_FILL)
    return count(db, "chunks_fts")


def count(db: Database, table: str) -> int:
    return int(db.execute(f"SELECT count(*) FROM [{table}]").fetchone()[0])


def vector_problem(db: Database, table: str) -> str | None:
    """sqlite-vec's error when the vector index cannot be read whole or searched (a damaged
    shadow table), or a note when a search finds nothing among stored vectors; None when sound."""
    try:
        found = db.execute(f"SELECT count(*), max(length(embedding)) FROM [{table}]").fetchone()
        if not found[0]:
            return None
        probe = db.execute(f"SELECT embedding FROM [{table}] LIMIT 1").fetchone()[0]
        near = db.execute(
            f"SELECT chunk_id FROM [{table}] WHERE embedding MATCH ? AND k = 1", [probe]
        ).fetchall()
    except sqlite3.Error as exc:
        return str(exc)
    return None if near else "a search finds none of its vectors"
