"""What is in the library, and taking it out: documents by collection, removing documents (by path
or glob) and collections, and the collections a question is scoped to."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field

from sqlite_utils import Database

from .errors import RagchatError
from .store import library, sessions
from .store.library import FileName, Listed, Scope

ALL = "all"  # `--in all`, `/in all`: every collection


def documents(db: Database, within: Sequence[str] = ()) -> list[Listed]:
    """Every document and copy, by collection and path; `within` names collections to keep."""
    names = set(within) if collection_ids(db, within) else set()  # checked; `all` is every one
    rows = library.listed_documents(db)
    return [row for row in rows if not names or row.collection in names]


def _has_glob(pattern: str) -> bool:
    return any(ch in pattern for ch in "*?[")


def _matches(row: Listed, pattern: str) -> bool:
    """A path as listed, `collection:path`, or the file's absolute path; a glob or exactly."""
    names = (row.path, f"{row.collection}:{row.path}", row.source)
    if _has_glob(pattern):
        return any(fnmatch.fnmatchcase(name, pattern) for name in names)
    return pattern in names


@dataclass
class Removed:
    removed: list[str] = field(default_factory=list)  # `collection:path` of each
    moved: list[tuple[str, str]] = field(default_factory=list)  # (removed, its copy that stays)
    chunks: int = 0


def remove_documents(db: Database, patterns: Sequence[str]) -> Removed:
    """Remove the documents and copies the patterns match (all, or none when one matches
    nothing): chunks, vectors, full-text and title rows go with them. A removed document whose
    copy stays moves to that copy (its content is still in a folder of the library)."""
    rows = library.listed_documents(db)
    unmatched = [p for p in patterns if not any(_matches(row, p) for row in rows)]
    if unmatched:
        raise RagchatError(
            f"no document matches {unmatched[0]!r} (`ragchat documents` lists them); "
            "nothing was removed"
        )
    for pattern in patterns:  # a bare path two collections hold is ambiguous, not both
        holders = sorted({row.collection for row in rows if _matches(row, pattern)})
        if not _has_glob(pattern) and len(holders) > 1:
            raise RagchatError(
                f"{pattern!r} is in {len(holders)} collections ({', '.join(holders)}): say "
                f"{holders[0]}:{pattern}, or use a glob for all of them; nothing was removed"
            )
    return _remove(db, [row for row in rows if any(_matches(row, p) for p in patterns)])


def _remove(db: Database, chosen: Sequence[Listed]) -> Removed:
    from .ingest.pipeline import refresh_keywords  # here: listing never loads the parsers

    done = Removed()
    sources = {row.source for row in chosen}
    for row in chosen:
        if row.copy_of is not None:
            library.delete_copy(db, row.source)
            done.removed.append(f"{row.collection}:{row.path}")
    staying: dict[int, dict] = {}
    for copy in library.copies(db):
        if copy["source"] not in sources:
            staying.setdefault(copy["document_id"], copy)
    for row in chosen:
        if row.copy_of is not None:
            continue
        shown = f"{row.collection}:{row.path}"
        kept = staying.get(row.document_id)
        if kept is not None:
            name = FileName(kept["source"], kept["source_bytes"], kept["path"], kept["root"])
            library.move_document(db, row.document_id, name, 0.0)
            done.moved.append((shown, kept["path"]))
        else:
            library.delete_document(db, row.document_id)
            done.chunks += row.chunks
        done.removed.append(shown)
    if done.removed:
        refresh_keywords(db)
    return done


def remove_collection(db: Database, name: str) -> Removed:
    """A collection with every document and copy under it."""
    found = library.collection_named(db, name)
    if found is None:
        raise RagchatError(f"no collection named {name!r} (`ragchat collections` lists them)")
    done = _remove(db, [row for row in library.listed_documents(db) if row.collection == name])
    library.forget_collection(db, found.id)
    return done


def collection_ids(db: Database, names: Sequence[str]) -> list[int]:
    """The ids of named collections (`all`: none, meaning every one); an unknown name says
    which exist."""
    if not names or ALL in names:
        return []
    known = {c.name: c.id for c in library.collections(db)}
    for name in names:
        if name not in known:
            shown = ", ".join(sorted(known)) or "none yet"
            raise RagchatError(f"no collection named {name!r} (collections: {shown})")
    return [known[name] for name in dict.fromkeys(names)]


def set_session_scope(db: Database, session: str, names: Sequence[str]) -> list[str]:
    """Scope a session's questions to the named collections (`all`: every one); returns the
    names kept."""
    ids = collection_ids(db, names)
    sessions.set_scope(db, session, ids)
    return session_scope_names(db, session)


def session_scope(db: Database, session: str) -> Scope | None:
    """The session's scope (None: every collection). A scope whose collections were all removed
    since is every collection again."""
    ids = sessions.scope_ids(db, session)
    if not ids:
        return None
    found = library.scope(db, ids)
    return found if found.names else None


def session_scope_names(db: Database, session: str) -> list[str]:
    found = session_scope(db, session)
    return list(found.names) if found else []


def scope_of(db: Database, names: Sequence[str]) -> Scope | None:
    """The scope of named collections for a single search (None: every collection)."""
    ids = collection_ids(db, names)
    return library.scope(db, ids) if ids else None
