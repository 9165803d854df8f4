"""Opening the one SQLite file: extension loading, pragmas, migrations (write transactions and
settings: transaction.py)."""

from __future__ import annotations

import contextlib
import errno
import os
import re
import urllib.parse
from pathlib import Path

import sqlite_utils
import sqlite_utils.utils
from sqlite_utils import Database

from ..errors import LibraryMissing, StoreError
from .schema import MIGRATIONS, SCHEMA_VERSION, check_schema_version
from .transaction import get_setting, set_setting, write

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
        raise StoreError(
            f"{path} is not a SQLite database; refusing to touch it (choose another --db)"
        )


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
        # here: after the checks above, which need no extension
        import sqlite_vec

        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.enable_load_extension(False)
    except Exception as exc:
        raise StoreError(f"cannot load the sqlite-vec extension with {driver}: {exc}") from None


def _check_exists(path: Path) -> None:
    """For commands that only read: a missing (or empty) file is an error, never created."""
    if not path.exists():
        raise LibraryMissing(
            f"no library at {path}: `ragchat ingest PATH` creates it (or choose another --db)"
        )
    if path.is_file() and path.stat().st_size == 0:
        raise LibraryMissing(
            f"{path} is an empty file, not a library: `ragchat ingest PATH --db {path}` fills it"
        )


def _check_is_ours(db: Database, path: Path) -> None:
    """A SQLite file that holds other tables but none of ours belongs to another program."""
    tables = set(db.table_names())
    if tables and not tables & {"documents", "_sqlite_migrations"}:
        raise StoreError(
            f"{path} is a SQLite database of another program; refusing to touch it (choose "
            "another --db)"
        )


def _create_private(path: Path) -> None:
    """A new database (documents, chat history) and the folders made for it are the user's alone:
    0700 folders, a 0600 file (SQLite gives its -wal and -shm files the database's mode). An
    existing database or folder keeps the permissions it has."""
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


def _on_read_only_filesystem(path: Path) -> bool:
    try:
        return bool(os.statvfs(path).f_flag & os.ST_RDONLY)
    except (OSError, AttributeError):  # no statvfs (Windows): the file's own access decides
        return False


def access_mode(path: Path) -> str:
    """How an existing database can be opened: "rw"; "ro" when its file (or folder, where SQLite
    keeps the -wal and -shm files) cannot be written; "immutable" on a read-only filesystem, where
    nothing can change it and SQLite cannot make its -shm file (so it is read without locking)."""
    if str(path) == ":memory:" or not path.is_file() or path.stat().st_size == 0:
        return "rw"
    if _on_read_only_filesystem(path):
        return "immutable"
    return "rw" if os.access(path, os.W_OK) and os.access(path.parent, os.W_OK) else "ro"


def _connect(path: Path, mode: str) -> Database:
    if str(path) == ":memory:":
        return Database(memory=True)
    if mode == "rw":
        return Database(path)
    if (
        mode == "immutable"
        and Path(f"{path}-wal").is_file()
        and Path(f"{path}-wal").stat().st_size > 0
    ):
        raise StoreError(
            f"{path} is on a read-only filesystem with unsaved changes in {path}-wal; "
            "mount it writable once so SQLite can finish writing them"
        )
    location = urllib.parse.quote(
        os.fsencode(path.absolute())
    )  # any byte of a file name, `?` and `#` too
    uri = f"file:{location}?{'immutable=1' if mode == 'immutable' else 'mode=ro'}"
    return Database(sqlite_utils.utils.sqlite3.connect(uri, uri=True))


def _prepare_file(path: Path, create: bool) -> None:
    if not create:
        _check_exists(path)
    _check_is_sqlite(path)
    try:
        _create_private(path)
    except OSError as exc:  # e.g. a file is in the way, no permission, a read-only filesystem
        if exc.errno == errno.EROFS:
            raise StoreError(
                f"cannot create database {path}: its folder {path.parent} is on a read-only "
                "filesystem (choose another --db)"
            ) from None
        if exc.filename and Path(exc.filename) == path:
            raise StoreError(f"cannot create database {path}: {exc.strerror}") from None
        folder = exc.filename or path.parent
        raise StoreError(
            f"cannot create folder {folder} for database {path}: {exc.strerror}"
        ) from None


def open_db(
    path: Path | str, *, migrate: bool = True, create: bool = True, check: bool = True
) -> Database:
    """Open the database with sqlite-vec loaded and the schema up to date. With `create=False`
    (every command but ingest) a missing database is a LibraryMissing error instead of a new file. A
    database that cannot be written is opened read-only (search and inspect work; a write says why
    it fails). `check=False` (the doctor) opens a damaged one as it is."""
    path = Path(path)
    mode = access_mode(path)
    if str(path) != ":memory:" and mode == "rw":
        _prepare_file(path, create)
    elif str(path) != ":memory:":
        _check_is_sqlite(path)
    db: Database | None = None
    try:
        db = _connect(path, mode)
        db.conn.isolation_level = None  # autocommit; writes group themselves with write()
        _load_vec(db)
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        db.execute("PRAGMA foreign_keys = ON")
        _check_is_ours(db, path)
        if check:
            check_intact(db, path)
        if _version_is_number(db):  # the doctor opens one whose version is damaged, to repair it
            check_schema_version(db)  # before WAL: a refused database is left exactly as it was
        if check:  # so is a damaged one: no WAL switch, no migration written into it
            check_tables(db, path)
        if str(path) != ":memory:" and mode == "rw":
            with db.ensure_autocommit_on():
                db.execute("PRAGMA journal_mode = WAL")
            db.execute("PRAGMA synchronous = NORMAL")
        if migrate:
            _migrate(db, path, mode)
    except BaseException as exc:
        if db is not None:
            db.close()
        if isinstance(exc, sqlite_utils.utils.sqlite3.DatabaseError):
            explained = explain(exc, path)
            raise StoreError(
                explained if explained != str(exc) else f"cannot open database {path}: {exc}"
            ) from None
        raise
    _OPENED[:] = [path]
    return db


def _migrate(db: Database, path: Path, mode: str) -> None:
    if mode != "rw" and MIGRATIONS.pending(db):
        raise StoreError(
            f"{path} was written by an older ragchat and needs an upgrade, but it cannot be "
            f"written ({READ_ONLY_WHY[mode]}); open it once where it is writable"
        )
    if mode == "rw":
        apply_migrations(db)


# --- damage and errors that say what happened ---------------------------------------------------
READ_ONLY_WHY = {
    "ro": "its file or folder is read-only",
    "immutable": "it is on a read-only filesystem",
}
REQUIRED_TABLES = ("documents", "chunks", "chunks_fts", "settings")
_OPENED: list[Path] = []  # the databases this process opened, for errors raised far from open_db


def _version_is_number(db: Database) -> bool:
    value = get_setting(db, "schema_version")
    return value is None or str(value).strip().isdigit()


def check_intact(db: Database, path: Path) -> None:
    """A schema_version that is not a number is damage, not a newer ragchat."""
    if not _version_is_number(db):
        row = [get_setting(db, "schema_version")]
        raise StoreError(
            f"{path} is damaged: its schema_version is {str(row[0])[:40]!r}, not a number; "
            f"`ragchat doctor --repair --db {path}` restores it"
        )


def check_tables(db: Database, path: Path) -> None:
    """Every table a command needs exists (a dropped one would fail half-way through a turn)."""
    if not db["_sqlite_migrations"].exists():
        return
    tables = set(db.table_names())
    missing = [name for name in REQUIRED_TABLES if name not in tables]
    if missing:
        fix = "rebuilds it from the chunks" if missing == ["chunks_fts"] else "says how to recover"
        raise StoreError(
            f"{path} is damaged: table {', '.join(missing)} is missing; "
            f"`ragchat doctor --repair --db {path}` {fix}"
        )


VECTOR_DAMAGE = re.compile(
    r"vector data|vectors blob|vector chunk \d|blob size doesn't match", re.IGNORECASE
)


def explain(exc: BaseException, path: Path | None = None) -> str:
    """A SQLite error as the user needs to read it: what happened to which file, and what to do."""
    path = path or (_OPENED[-1] if _OPENED else None)
    where = f"database {path}" if path else "the database"
    text = str(exc)
    if "readonly database" in text or "read-only" in text:
        return (
            f"{where} cannot be written (its file, folder or filesystem is read-only): reading "
            "commands (search, inspect, sessions, export) work; ask, chat and ingest need write "
            "access"
        )
    if "database or disk is full" in text:
        return (
            f"the disk is full: nothing more could be written to {where}; free some space "
            "and try again"
        )
    if (
        "Could not insert a new vector chunk" in text
    ):  # sqlite-vec hides SQLITE_FULL behind its own error
        return (
            f"sqlite-vec could not add a block of vectors to {where}: the disk is probably "
            "full; free some space"
        )
    if "not a database" in text:  # the header is gone: nothing for the doctor to read
        return (
            f"{where} is damaged ({text}): ingest your folders again into a new database (--db NEW)"
        )
    if VECTOR_DAMAGE.search(text):  # sqlite-vec's own words for a damaged vector index
        return (
            f"the vector index of {where} is damaged ({text}): `ragchat ingest --reembed "
            f"PATH... --db {path}` rebuilds it from your folders"
        )
    if "malformed" in text or "blob read error" in text or "sqlite-vec error" in text:
        # the doctor itself cannot open such a file: the ways out that need no ragchat
        return (
            f"{where} is damaged ({text}): ingest your folders again into a new database "
            f"(`ragchat ingest PATH... --db NEW`), or copy out what SQLite can still read "
            f"(`sqlite3 {path} .recover | sqlite3 NEW`)"
        )
    if "no such table" in text or "no such column" in text:
        return f"{where} is damaged ({text}): `ragchat doctor --repair` rebuilds what it can"
    if "unable to open database file" in text:
        return f"SQLite cannot open {where} ({text}): check that its folder exists and can be read"
    return text


def apply_migrations(db: Database) -> None:
    if not MIGRATIONS.pending(db):
        return
    with write(db):
        if MIGRATIONS.pending(db):  # another process may have migrated while we waited
            MIGRATIONS.apply(db)
            set_setting(db, "schema_version", str(SCHEMA_VERSION))
