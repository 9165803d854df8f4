"""The schema, as sqlite-utils migrations. A change is a new migration; never edit one that ran.

The vec0 table of chunk vectors is not here: its dimension is only known once an embedding model
is chosen, so `vectors.ensure_vector_table` creates it (raw SQL: sqlite-utils cannot make vec0).
"""

from __future__ import annotations

from sqlite_utils import Database
from sqlite_utils.migrations import Migrations

from ..errors import StoreError
from .library import name_new_collections
from .titles import index_title

MIGRATIONS = Migrations("ragchat")


@MIGRATIONS()
def m001_library(db: Database) -> None:
    db.table("settings").create({"key": str, "value": str}, pk="key")
    db.table("documents").create(
        {
            "id": int,
            "source": str,  # absolute path of the file: the identity of a document
            "path": str,  # path relative to the ingest root, as shown to users
            "root": str,
            "title": str,
            "content_hash": str,
            "size": int,
            "mtime": float,
            "encoding": str,
            "keywords": str,  # JSON list, most characteristic first
            "term_counts": str,  # JSON {term: count} of keyword candidates, for corpus-wide tf-idf
            "chunk_count": int,
            "ingested_at": str,
        },
        pk="id",
        not_null={"source", "path", "content_hash"},
    )
    db.table("documents").create_index(["source"], unique=True)
    db.table("chunks").create(
        {
            "id": int,
            "document_id": int,
            "ordinal": int,
            "text": str,
            "heading": str,  # heading path joined with " > "
            "start_char": int,
            "end_char": int,
        },
        pk="id",
        foreign_keys=[("document_id", "documents", "id")],
    )
    db.table("chunks").create_index(["document_id", "ordinal"], unique=True)
    db.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5("
        "title, heading, text, tokenize = 'porter unicode61 remove_diacritics 2')"
    )


@MIGRATIONS()
def m002_conversation(db: Database) -> None:
    db.table("sessions").create(
        {"id": int, "name": str, "created_at": str, "updated_at": str}, pk="id", not_null={"name"}
    )
    db.table("sessions").create_index(["name"], unique=True)
    db.table("messages").create(
        {
            "id": int,
            "session_id": int,
            "role": str,  # user | assistant
            "content": str,
            "created_at": str,
            "lineage": str,  # JSON, assistant messages only
            "embedding": bytes,  # float32 vector of the content, for the history window
        },
        pk="id",
        foreign_keys=[("session_id", "sessions", "id")],
    )
    db.table("messages").create_index(["session_id", "id"])


@MIGRATIONS()
def m003_keyword_vectors(db: Database) -> None:
    # vectors of document keywords, to map a user's words onto the corpus's own vocabulary
    db.table("keyword_vectors").create({"keyword": str, "embedding": bytes}, pk="keyword")


@MIGRATIONS()
def m004_documents_version_index(db: Database) -> None:
    # library.library_version runs several times a turn: this covering index answers it
    # without reading the documents' rows (their term_counts spill onto overflow pages ahead
    # of these columns)
    db.table("documents").create_index(
        ["ingested_at", "chunk_count"], index_name="documents_version"
    )


@MIGRATIONS()
def m005_pages_and_parser_version(db: Database) -> None:
    # the first and last page of a chunk of a paged document (PDF); NULL for other formats
    db.table("chunks").add_column("page_start", int)
    db.table("chunks").add_column("page_end", int)
    # the loaders.PARSER_VERSION a document was parsed with (NULL: before versions were kept),
    # so `ingest` re-parses documents whose bytes are unchanged but whose parser improved
    db.table("documents").add_column("parser_version", int)


@MIGRATIONS()
def m006_i22a_turn_numbers(db: Database) -> None:
    # a turn's number, given by the database in the transaction that writes its question (so two
    # processes on one session never share or skip a number); the answer carries its question's
    db.table("messages").add_column("turn", int)
    db.execute(
        "UPDATE messages SET turn = (SELECT count(*) FROM messages u WHERE u.session_id = "
        "messages.session_id AND u.role = 'user' AND u.id <= messages.id)"
    )
    db.table("messages").create_index(["session_id", "turn"], index_name="messages_turn")


@MIGRATIONS()
def m007_i22a_document_identity(db: Database) -> None:
    # the file name's own bytes when `source` had to escape them (not UTF-8, control characters):
    # `source` stays readable and unique, the bytes find the file again
    db.table("documents").add_column("source_bytes", bytes)
    # more paths holding a document's exact content: embedded and shown once, found under each
    db.table("document_copies").create(
        {"source": str, "source_bytes": bytes, "document_id": int, "path": str, "root": str},
        pk="source",
        foreign_keys=[("document_id", "documents", "id")],
        not_null={"document_id", "path"},
    )
    db.table("document_copies").create_index(["document_id"])
    db.table("documents").create_index(["content_hash"], index_name="documents_content_hash")


@MIGRATIONS()
def m008_i21_document_titles(db: Database) -> None:
    # each document's title and file name as words, so a question can name a document ("PEP 723",
    # "the deployment guide"); rowid = documents.id (see store/titles.py)
    db.execute(
        "CREATE VIRTUAL TABLE documents_fts USING fts5("
        "title, name, tokenize = 'porter unicode61 remove_diacritics 2')"
    )
    for document_id, title, path in db.execute("SELECT id, title, path FROM documents").fetchall():
        index_title(db, document_id, title, path)


@MIGRATIONS()
def m009_i28_document_kind(db: Database) -> None:
    # what kind of document it is, by its shape: "release-notes" (ingest/releases.py) or NULL
    db.table("documents").add_column("kind", str)


@MIGRATIONS()
def m010_i32_collections(db: Database) -> None:
    # each ingested folder (a document's `root`) is a collection with a name the user can change;
    # a library from before gets one per folder it holds, named after the folder
    db.table("collections").create(
        {"id": int, "name": str, "root": str, "created_at": str},
        pk="id",
        not_null={"name", "root"},
    )
    db.table("collections").create_index(["name"], unique=True)
    db.table("collections").create_index(["root"], unique=True)
    db.table("documents").create_index(["root"], index_name="documents_root")
    # a path two documents share is shown with its collection (`docs:README.md`)
    db.table("documents").create_index(["path"], index_name="documents_path")
    db.table("document_copies").create_index(["path"], index_name="document_copies_path")
    db.table("document_copies").create_index(["root"], index_name="document_copies_root")
    # the collections a session's questions are scoped to (JSON list of ids; NULL: all)
    db.table("sessions").add_column("scope", str)
    name_new_collections(db, {})


# every migration's name, in order: on an empty database all of them are pending (public API)
KNOWN = [migration.name for migration in MIGRATIONS.pending(Database(memory=True))]
SCHEMA_VERSION = len(KNOWN)


def check_schema_version(db: Database) -> None:
    """Refuse a database written by a newer ragchat rather than guess at its schema."""
    if not db["_sqlite_migrations"].exists():
        return
    applied = {m.name for m in MIGRATIONS.applied(db)}
    newer = sorted(applied - set(KNOWN))
    version = (
        db.execute("SELECT value FROM settings WHERE key = 'schema_version'").fetchone()
        if db["settings"].exists()
        else None
    )
    if newer or (version and int(version[0]) > SCHEMA_VERSION):
        if version and int(version[0]) > SCHEMA_VERSION:
            found = f"schema version {version[0]}"
        else:  # the version setting lags; the unknown migrations say it all
            found = f"unknown migration(s) {', '.join(newer)}"
        raise StoreError(
            f"the database has {found}, newer than this ragchat understands "
            f"(schema version {SCHEMA_VERSION}); upgrade ragchat to use it"
        )
