"""A turn reads a bounded stretch of its session: its cost does not grow with the session."""

from __future__ import annotations

from pathlib import Path

from ragchat.params import SCALE
from ragchat.store import sessions
from ragchat.store.db import open_db


def test_a_turn_reads_only_the_last_turns_of_a_long_session(tmp_path: Path) -> None:
    db = open_db(tmp_path / "lib.db")
    total = SCALE.history_turns + 30
    for number in range(1, total + 1):
        opened = sessions.open_turn(db, "long", f"question {number}")
        assert opened.number == number
        sessions.add_message(db, opened.session_id, "assistant", f"answer {number}", turn=number)
    opened = sessions.open_turn(db, "long", "the last question")
    turns = [m.turn for m in opened.history]
    assert len(opened.history) == 2 * SCALE.history_turns, "bounded, whatever the session's length"
    assert turns[0] == total + 1 - SCALE.history_turns and turns[-1] == total, "the latest ones"
    assert [m.content for m in opened.history[-2:]] == [f"question {total}", f"answer {total}"]
    assert len(sessions.messages(db, opened.session_id)) == 2 * total + 1, "nothing is lost"
    db.close()
