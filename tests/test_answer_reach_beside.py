"""A lower source's how-to code in a question's answer (issue 30, point 1), through a real library
and session: the chunk with the setting is fifth, below the four the extractive answer draws
from, and a model reads it; its lead-in and code now come beside the answer."""

from __future__ import annotations

from pathlib import Path

import test_section_neighbours as neighbours
from helpers import settings_for

from ragchat.app import App


def test_the_setting_a_lower_source_writes_comes_beside_the_answer(
    tmp_path: Path, embedder
) -> None:
    path = neighbours._library(tmp_path, embedder)
    app = App(settings_for(path, chunk_size=360, chunk_overlap=40))
    app.__dict__["embedder"] = embedder
    try:
        turn = app.conversation("s").ask(
            "how many jobs run at the same time on one node? is there a workers setting?"
        )
    finally:
        app.close()
    holder = next(c for c in turn.lineage.chunks if c.rank <= 6 and _holds(path, c))
    assert holder.rank > 4  # below the extractive answer's pool ...
    assert neighbours.SETTING in turn.answer  # ... its code comes beside the answer
    assert "Put this in the workers table" in turn.answer  # with its lead-in


def _holds(path: Path, chunk) -> bool:
    from ragchat.store import library
    from ragchat.store.db import open_db

    db = open_db(path)
    try:
        text = library.chunks_by_ids(db, [chunk.chunk_id])[chunk.chunk_id].text
        return "Put this in the workers table" in text
    finally:
        db.close()
