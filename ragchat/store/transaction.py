"""Write transactions and the settings table: what every store module writes through. It imports
nothing of the store, so the migrations (schema.py) may call the store's modules while db.py
applies them."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlite_utils import Database


@contextlib.contextmanager
def write(db: Database) -> Iterator[Database]:
    """A write transaction taken with BEGIN IMMEDIATE, so concurrent writers queue on the busy
    timeout instead of failing with 'database is locked' on a read-to-write upgrade."""
    if db.conn.in_transaction:
        with db.atomic():
            yield db
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
    except BaseException:
        db.rollback()
        raise
    db.execute("COMMIT")


def get_setting(db: Database, key: str) -> str | None:
    if not db["settings"].exists():
        return None
    row = db.execute("SELECT value FROM settings WHERE key = ?", [key]).fetchone()
    return row[0] if row else None


def set_setting(db: Database, key: str, value: str) -> None:
    db.execute(
        "INSERT INTO settings(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [key, value],
    )
