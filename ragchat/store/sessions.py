"""Sessions and messages: the only SQL about conversations."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sqlite_utils import Database

from ..errors import SessionError
from ..lazy import lazy_module
from ..params import SCALE
from .library import now
from .transaction import write
from .vectors import to_blob

if TYPE_CHECKING:
    import numpy as np
else:
    np = lazy_module("numpy")  # imported on first use: not every command needs it


@dataclass(frozen=True)
class Message:
    id: int
    session_id: int
    role: str  # user | assistant
    content: str
    created_at: str
    lineage: dict[str, Any] | None
    embedding_blob: bytes | None = field(default=None, repr=False)
    turn: int = 0  # the number the database gave the turn (a question and its answer share it)

    @property
    def embedding(self) -> np.ndarray | None:
        """Decoded when used (zero-copy), so listing or showing turns needs no numpy."""
        return np.frombuffer(self.embedding_blob, dtype=np.float32) if self.embedding_blob else None


def _message(row: dict) -> Message:
    return Message(
        id=row["id"],
        session_id=row["session_id"],
        role=row["role"],
        content=row["content"] or "",
        created_at=row["created_at"],
        lineage=json.loads(row["lineage"]) if row.get("lineage") else None,
        embedding_blob=row.get("embedding") or None,
        turn=row.get("turn") or 0,
    )


def session_id(db: Database, name: str, *, create: bool = True) -> int:
    row = db.execute("SELECT id FROM sessions WHERE name = ?", [name]).fetchone()
    if row:
        return row[0]
    if not create:
        raise SessionError(f"no session named {name!r} (see `ragchat sessions`)")
    check_session_name(name)
    with write(db):
        stamp = now()
        db.execute(
            "INSERT INTO sessions(name, created_at, updated_at) VALUES (?, ?, ?) ON "
            "CONFLICT(name) DO NOTHING",
            [name, stamp, stamp],
        )
    return db.execute("SELECT id FROM sessions WHERE name = ?", [name]).fetchone()[0]


def check_session_name(name: str) -> None:
    """A new session's name is one line with something visible (a table row shows it)."""
    if not name.strip():
        raise SessionError("the session name is empty: give one with --session NAME")
    if "\n" in name or "\r" in name:  # other control characters are shown inert (text.printable)
        raise SessionError(f"the session name {name!r} has a line break: use one line of text")


def latest_session(db: Database) -> str | None:
    row = db.execute(
        "SELECT name FROM sessions ORDER BY updated_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return row[0] if row else None


def sessions(db: Database) -> list[dict]:
    """Every session, most recently used first, with its number of turns and first question."""
    return [
        dict(zip(("name", "created_at", "updated_at", "turns", "first_question"), row))
        for row in db.execute(
            "SELECT s.name, s.created_at, s.updated_at, (SELECT count(*) FROM messages m WHERE "
            "m.session_id = s.id AND m.role = 'user'), (SELECT m.content FROM messages m WHERE "
            "m.session_id = s.id AND m.role = 'user' ORDER BY m.id LIMIT 1) FROM sessions s "
            "ORDER BY s.updated_at DESC, s.id DESC"
        )
    ]


def session_names(db: Database) -> list[str]:
    return [row[0] for row in db.execute("SELECT name FROM sessions ORDER BY name")]


def delete_session(db: Database, name: str) -> int:
    """Delete a session and its messages; returns how many turns it had."""
    session = session_id(db, name, create=False)
    with write(db):
        turns = db.execute(
            "SELECT count(*) FROM messages WHERE session_id = ? AND role = 'user'", [session]
        ).fetchone()[0]
        db.execute("DELETE FROM messages WHERE session_id = ?", [session])
        db.execute("DELETE FROM sessions WHERE id = ?", [session])
    return turns


def rename_session(db: Database, old: str, new: str) -> None:
    if not new.strip():
        raise SessionError("the new session name is empty")
    check_session_name(new)
    session = session_id(db, old, create=False)
    if old == new:
        return
    with write(db):
        if db.execute("SELECT 1 FROM sessions WHERE name = ?", [new]).fetchone():
            raise SessionError(
                f"a session named {new!r} exists already (`ragchat sessions rm {new}` removes it)"
            )
        db.execute("UPDATE sessions SET name = ? WHERE id = ?", [new, session])


def add_message(
    db: Database,
    session: int,
    role: str,
    content: str,
    *,
    embedding: np.ndarray | None = None,
    lineage: dict | None = None,
    turn: int | None = None,
) -> int:
    """Append a message; a question without `turn` opens the next turn, an answer joins `turn`
    (default: the session's last)."""
    with write(db):
        if turn is None:
            turn = (
                _next_turn(db, session) if role == "user" else max(_next_turn(db, session) - 1, 1)
            )
        stamp = now()
        cursor = db.execute(
            "INSERT INTO messages(session_id, role, content, created_at, lineage, embedding, turn) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            [
                session,
                role,
                content,
                stamp,
                json.dumps(lineage) if lineage is not None else None,
                to_blob(embedding) if embedding is not None else None,
                turn,
            ],
        )
        db.execute("UPDATE sessions SET updated_at = ? WHERE id = ?", [stamp, session])
    assert cursor.lastrowid is not None  # an INSERT always sets it
    return cursor.lastrowid


@dataclass(frozen=True)
class OpenedTurn:
    """A question written as the next turn of its session, and the session as of that write."""

    session_id: int
    number: int
    message_id: int
    history: tuple[Message, ...]  # the earlier turns' messages, each question before its answer


def open_turn(
    db: Database, name: str, question: str, *, embedding: np.ndarray | None = None
) -> OpenedTurn:
    """Write `question` as the session's next turn and read the history it follows (its last
    SCALE.history_turns turns: a turn's cost does not grow with its session), in one
    BEGIN IMMEDIATE transaction: concurrent writers on one session queue here and each gets its
    own number and a history that ends just before it."""
    with write(db):
        session = session_id(db, name)
        message_id = add_message(db, session, "user", question, embedding=embedding)
        number = db.execute("SELECT turn FROM messages WHERE id = ?", [message_id]).fetchone()[0]
        history = tuple(
            _message(row)
            for row in db.query(
                "SELECT * FROM messages WHERE session_id = ? AND turn < ? AND turn >= ? "
                f"ORDER BY {_TURN_ORDER}",
                [session, number, number - SCALE.history_turns],
            )
        )
    return OpenedTurn(session, number, message_id, history)


def _next_turn(db: Database, session: int) -> int:
    return db.execute(
        "SELECT coalesce(max(turn), 0) + 1 FROM messages WHERE session_id = ?", [session]
    ).fetchone()[0]


# a turn's question, then its answer, whatever order concurrent writers inserted them in
_TURN_ORDER = "turn, role = 'assistant', id"


def update_message(
    db: Database,
    message_id: int,
    *,
    content: str | None = None,
    lineage: dict | None = None,
    embedding: np.ndarray | None = None,
) -> None:
    changes: dict[str, Any] = {}
    if content is not None:
        changes["content"] = content
    if lineage is not None:
        changes["lineage"] = json.dumps(lineage)
    if embedding is not None:
        changes["embedding"] = to_blob(embedding)
    if changes:
        with write(db):
            assignments = ", ".join(f"{name} = ?" for name in changes)
            db.execute(
                f"UPDATE messages SET {assignments} WHERE id = ?", [*changes.values(), message_id]
            )


def messages(db: Database, session: int) -> list[Message]:
    """A session's messages turn by turn, each question followed by its answer."""
    return [
        _message(row)
        for row in db["messages"].rows_where("session_id = ?", [session], order_by=_TURN_ORDER)
    ]


def message_by_id(db: Database, message_id: int) -> Message | None:
    rows = list(db["messages"].rows_where("id = ?", [message_id]))
    return _message(rows[0]) if rows else None


def clear_session(db: Database, name: str) -> None:
    """Forget a session's messages and scope (the session itself stays)."""
    row = db.execute("SELECT id FROM sessions WHERE name = ?", [name]).fetchone()
    if row:
        with write(db):
            db.execute("DELETE FROM messages WHERE session_id = ?", [row[0]])
            db.execute("UPDATE sessions SET scope = NULL WHERE id = ?", [row[0]])


def set_scope(db: Database, name: str, collection_ids: list[int]) -> None:
    """The collections the session's questions search (empty: every one)."""
    session = session_id(db, name)
    with write(db):
        db.execute(
            "UPDATE sessions SET scope = ? WHERE id = ?",
            [json.dumps(sorted(collection_ids)) if collection_ids else None, session],
        )


def scope_ids(db: Database, name: str) -> list[int]:
    row = db.execute("SELECT scope FROM sessions WHERE name = ?", [name]).fetchone()
    try:
        ids = json.loads(row[0]) if row and row[0] else []
    except ValueError:
        return []
    return [int(i) for i in ids if isinstance(i, int)]
