"""A second, read-only connection to a library's file, so that keyword search (SQLite) can run in
a thread while the vector search (NumPy) runs in the caller's: both release the GIL, and one
connection cannot serve two threads at once.

Opened on first use, once per connection of the library, and closed with it (`close_reader`, from
`App.close()`; or when the library's `Database` is collected). A library in memory has none."""

from __future__ import annotations

import os
import threading
import urllib.parse
import weakref
from pathlib import Path

import sqlite_utils.utils
from sqlite_utils import Database

from .db import BUSY_TIMEOUT_MS, access_mode

_READERS: weakref.WeakKeyDictionary[Database, Database | None] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def _file_of(db: Database) -> Path | None:
    for _, name, file in db.execute("PRAGMA database_list").fetchall():
        if name == "main":
            return Path(file) if file else None
    return None


def _open(path: Path) -> Database:
    mode = "immutable=1" if access_mode(path) == "immutable" else "mode=ro"
    location = urllib.parse.quote(os.fsencode(path.absolute()))  # any byte of a file name
    conn = sqlite_utils.utils.sqlite3.connect(
        f"file:{location}?{mode}", uri=True, check_same_thread=False
    )
    conn.isolation_level = None
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    return Database(conn)


def reader_of(db: Database) -> Database | None:
    """The library's read-only connection (None: a library in memory). Only one thread may use
    it at a time (the caller's own discipline: keyword search runs in one worker thread)."""
    with _LOCK:
        if db in _READERS:
            return _READERS[db]
        path = _file_of(db)
        reader = _open(path) if path is not None else None
        _READERS[db] = reader
        if reader is not None:
            weakref.finalize(db, reader.close)
        return reader


def close_reader(db: Database) -> None:
    """Close the library's read-only connection, if it has one."""
    with _LOCK:
        reader = _READERS.pop(db, None)
    if reader is not None:
        reader.close()
