"""Opening the one SQLite file: extension loading, pragmas, migrations, write transactions."""

from __future__ import annotations

import contextlib
import errno
import os
from collections.abc import Iterator
from pathlib import Path

import sqlite_utils
import sqlite_utils.utils
from sqlite_utils import Database

from ..errors import LibraryMissing, StoreError
from .schema import MIGRATIONS, SCHEMA_VERSION, check_schema_version

SQLITE_HEADER = b"SQLite format 3\x00"
BUSY_TIMEOUT_MS = 30_000


def _check_is_sqlite(path: Path) -> None:
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except OSError as exc:
        raise StoreError(f"cannot read database {path}: {exc.strerror}") from None
    if header != SQLITE_HEADER:
        raise StoreError(f"{path} is not a SQLite database; refusing to touch it (choose another --db)")


def _load_vec(db: Database) -> None:
    conn = db.conn
    driver = sqlite_utils.utils.sqlite3.__name__
    if not hasattr(conn, "enable_load_extension"):
        raise StoreError(
            f"this Python's {driver} cannot load SQLite extensions (needed for sqlite-vec); "
            "install pysqlite3-binary (`pip install pysqlite3-binary`) or use a Python built with "
            "--enable-loadable-sqlite-extensions"
        )
    try:
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception as exc:
        raise StoreError(f"cannot load the sqlite-vec extension with {driver}: {exc}") from None


def _check_exists(path: Path) -> None:
    """For commands that only read: a missing (or empty) file is an error, never created."""
    if not path.exists():
        raise LibraryMissing(f"no library at {path}: `ragchat ingest PATH` creates it (or choose another --db)")
    if path.is_file() and path.stat().st_size == 0:
        raise LibraryMissing(f"{path} is an empty file, not a library: `ragchat ingest PATH --db {path}` fills it")


def _check_is_ours(db: Database, path: Path) -> None:
    """A SQLite file that holds other tables but none of ours belongs to another program."""
    tables = set(db.table_names())
    if tables and not tables & {"documents", "_sqlite_migrations"}:
        raise StoreError(f"{path} is a SQLite database of another program; refusing to touch it (choose another --db)")


def _create_private(path: Path) -> None:
    """A new database (documents, chat history) and the folders made for it are the user's alone:
    0700 folders, a 0600 file (SQLite gives its -wal and -shm files the database's mode). An existing
    database or folder keeps the permissions it has."""
    missing: list[Path] = []
    for folder in (path.parent, *path.parent.parents):
        if folder.exists():
            if not folder.is_dir():  # a file in the way
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), str(folder))
            break
        missing.append(folder)
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)
    if not path.exists():
        with contextlib.suppress(FileExistsError):  # another process made it first: theirs stands
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))


def open_db(path: Path | str, *, migrate: bool = True, create: bool = True) -> Database:
    """Open the database with sqlite-vec loaded and the schema up to date. With `create=False` (every
    command but ingest) a missing database is a LibraryMissing error instead of a new file."""
    path = Path(path)
    if str(path) != ":memory:":
        if not create:
            _check_exists(path)
        _check_is_sqlite(path)
        try:
            _create_private(path)
        except OSError as exc:  # e.g. a file is in the way, or no permission
            folder = exc.filename or path.parent
            raise StoreError(f"cannot create folder {folder} for database {path}: {exc.strerror}") from None
    db: Database | None = None
    try:
        db = Database(path) if str(path) != ":memory:" else Database(memory=True)
        db.conn.isolation_level = None  # autocommit; writes group themselves with write()
        _load_vec(db)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        _check_is_ours(db, path)
        check_schema_version(db)  # before WAL: a refused database is left exactly as it was
        if str(path) != ":memory:":
            with db.ensure_autocommit_on():
                db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        if migrate:
            apply_migrations(db)
    except BaseException as exc:
        if db is not None:
            db.close()
        if isinstance(exc, sqlite_utils.utils.sqlite3.DatabaseError):
            raise StoreError(f"cannot open database {path}: {exc}") from None
        raise
    return db


def apply_migrations(db: Database) -> None:
    if not MIGRATIONS.pending(db):
        return
    with write(db):
        if MIGRATIONS.pending(db):  # another process may have migrated while we waited
            MIGRATIONS.apply(db)
            set_setting(db, "schema_version", str(SCHEMA_VERSION))


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
