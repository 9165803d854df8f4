"""The title index (`documents_fts`): each document's title and file name as words, written when
a document is stored or moved, so a question can name a document ("PEP 723", "the deployment
guide"; the matching is `search/titles.py`). rowid = documents.id.

A file name is indexed by its stem, split at '-', '_', '.' and between letters and digits; a
number is indexed as written and without its leading zeros, so "pep 8" finds pep-0008.rst.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from sqlite_utils import Database

from ..text import words

# between letters and digits: "pep0723" -> "pep 0723"
SPLIT = re.compile(r"(?<=[^\W\d_])(?=\d)|(?<=\d)(?=[^\W\d_])")


def number_form(word: str) -> str:
    return word.lstrip("0") or "0" if word.isdigit() else word


def name_words(path: str) -> str:
    """A file name as words: `pep-0723.rst` -> "pep 0723 723", `deployment_guide.md`
    -> "deployment guide"."""
    stem = PurePosixPath(path.replace("\\", "/")).stem
    return indexed_text(SPLIT.sub(" ", stem))


def indexed_text(text: str) -> str:
    """Text as indexed: each number also without its leading zeros."""
    out: list[str] = []
    for word in words(SPLIT.sub(" ", text)):
        out.append(word)
        if word.isdigit() and number_form(word) != word:
            out.append(number_form(word))
    return " ".join(out)


def index_title(db: Database, document_id: int, title: str, path: str) -> None:
    """A document's title and file name in `documents_fts`, for finding documents by name."""
    db.execute("DELETE FROM documents_fts WHERE rowid = ?", [document_id])
    db.execute(
        "INSERT INTO documents_fts(rowid, title, name) VALUES (?, ?, ?)",
        [document_id, indexed_text(title or ""), name_words(path)],
    )


def titled_documents(db: Database) -> int | None:
    """How many documents the title index holds (None: a database from before it)."""
    if not db["documents_fts"].exists():
        return None
    # FTS5 keeps one row a document in its `docsize` table: counting the FTS table itself reads
    # every row's text (14 ms a search at 71k documents)
    return db.execute("SELECT count(*) FROM documents_fts_docsize").fetchone()[0]


def titled(db: Database, match: str) -> bool:
    """Whether some document's title or file name matches an FTS5 MATCH expression."""
    if not db["documents_fts"].exists():
        return False
    found = db.execute("SELECT 1 FROM documents_fts WHERE documents_fts MATCH ? LIMIT 1", [match])
    return found.fetchone() is not None


def title_holders(db: Database, match: str) -> set[int]:
    """The ids of the documents whose title or file name matches an FTS5 MATCH expression."""
    rows = db.execute("SELECT rowid FROM documents_fts WHERE documents_fts MATCH ?", [match])
    return {row[0] for row in rows}
