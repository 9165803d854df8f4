"""How common a keyword term is in the library, from FTS5's own index (an `fts5vocab` table over
`chunks_fts`, made per connection in the temp schema: no schema change, works read-only).

A query word is turned into the index's term by the index's own tokenizer (a temp FTS5 table with
the same `tokenize` option), so stemming and case folding match exactly in any language."""

from __future__ import annotations

from collections.abc import Sequence

from sqlite_utils import Database

from .db import get_setting
from .repair import FTS_DDL

_TOKENIZE = FTS_DDL[FTS_DDL.index("tokenize") :].rstrip(")")


def _prepare(db: Database) -> None:
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.chunks_fts_terms USING fts5vocab(main, "
        "chunks_fts, row)"
    )
    db.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_text USING fts5(text, {_TOKENIZE})")
    db.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.query_terms USING fts5vocab(temp, query_text, "
        "instance)"
    )


def index_terms(db: Database, text: str) -> list[str]:
    """The index terms `text` tokenizes into, in order."""
    _prepare(db)
    db.execute("DELETE FROM temp.query_text")
    db.execute("INSERT INTO temp.query_text(rowid, text) VALUES (1, ?)", [text])
    rows = db.execute("SELECT term FROM temp.query_terms ORDER BY offset").fetchall()
    db.execute("DELETE FROM temp.query_text")
    return [row[0] for row in rows]


def chunk_frequencies(db: Database, terms: Sequence[str]) -> dict[str, int]:
    """In how many chunks each index term occurs (absent terms: 0)."""
    _prepare(db)
    found = dict.fromkeys(terms, 0)
    for term in found:
        row = db.execute("SELECT doc FROM temp.chunks_fts_terms WHERE term = ?", [term]).fetchone()
        found[term] = int(row[0]) if row else 0
    return found


_COUNTS: dict[tuple[int, str], int] = {}  # by connection and vectors version


def chunk_count(db: Database) -> int:
    """The number of chunks, remembered per connection until the vectors change (every chunk
    write is a vector write: a count of a million rows took 10-30 ms a search)."""
    version = get_setting(db, "vectors_version")
    if not version:  # no vectors written yet: nothing marks a change
        return int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    key = (id(db.conn), str(version))
    if key not in _COUNTS:
        if len(_COUNTS) >= 8:  # a few connections' (a library's reader has its own), not every
            _COUNTS.clear()  # version ever seen
        _COUNTS[key] = int(db.execute("SELECT count(*) FROM chunks").fetchone()[0])
    return _COUNTS[key]
