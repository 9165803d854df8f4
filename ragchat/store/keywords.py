"""Each document's keywords (its most distinctive terms, chosen at ingest) and the vectors of
the corpus's keyword vocabulary."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from sqlite_utils import Database

from ..lazy import lazy_module
from .library import documents_by_ids
from .transaction import write
from .vectors import to_blob

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: not every command needs it


def set_keywords(db: Database, keywords: dict[int, list[str]]) -> None:
    with write(db):
        for document_id, words in keywords.items():
            db.execute(
                "UPDATE documents SET keywords = ? WHERE id = ?", [json.dumps(words), document_id]
            )


def keywords_of(db: Database, document_ids: Iterable[int]) -> dict[int, list[str]]:
    return {
        doc_id: json.loads(row.get("keywords") or "[]")
        for doc_id, row in documents_by_ids(db, document_ids).items()
    }


def all_keywords(db: Database) -> set[str]:
    found: set[str] = set()
    for (raw,) in db.execute("SELECT keywords FROM documents"):
        found.update(json.loads(raw or "[]"))
    return found


def keywords_without_vectors(db: Database) -> list[str]:
    have = {row[0] for row in db.execute("SELECT keyword FROM keyword_vectors")}
    return sorted(all_keywords(db) - have)


def clear_keyword_vectors(db: Database) -> None:
    with write(db):
        db.execute("DELETE FROM keyword_vectors")


def put_keyword_vectors(db: Database, keywords: Sequence[str], vectors: np.ndarray) -> None:
    with write(db):
        for keyword, vector in zip(keywords, vectors):
            db.execute(
                "INSERT OR REPLACE INTO keyword_vectors(keyword, embedding) VALUES (?, ?)",
                [keyword, to_blob(vector)],
            )


def keyword_vectors(db: Database) -> tuple[list[str], np.ndarray]:
    """The current keywords of the corpus with their vectors, as a matrix (one row each)."""
    names: list[str] = []
    rows: list[np.ndarray] = []
    if db.execute("SELECT 1 FROM keyword_vectors LIMIT 1").fetchone() is None:
        return names, np.zeros((0, 0), dtype=np.float32)  # none to filter: no scan
    # the documents' keyword lists are read in SQLite (json_each), not decoded one by one here:
    # a one-shot `ask` on a library of 71k documents spent 1.7 s in Python on them
    for keyword, blob in db.execute(
        "SELECT keyword, embedding FROM keyword_vectors WHERE keyword IN "
        "(SELECT j.value FROM documents d, json_each(coalesce(nullif(d.keywords, ''), '[]')) j) "
        "ORDER BY keyword"
    ):
        names.append(keyword)
        rows.append(np.frombuffer(blob, dtype=np.float32))
    return names, (np.vstack(rows) if rows else np.zeros((0, 0), dtype=np.float32))


def missing_keywords(db: Database) -> bool:
    """Whether some document has no keywords yet (an ingest that stopped before choosing them)."""
    return (
        db.execute("SELECT 1 FROM documents WHERE keywords = '[]' LIMIT 1").fetchone() is not None
    )
