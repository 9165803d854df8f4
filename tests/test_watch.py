"""`ingest --watch`: a real file change in a temporary folder is ingested, a removal pruned, a
file the ignore rules leave out stays out; the watch stops on its stop event."""

from __future__ import annotations

import queue
import threading
from pathlib import Path

import pytest
from helpers import settings_for

from ragchat.embed import FastEmbedder
from ragchat.ingest.pipeline import ingest
from ragchat.store import library
from ragchat.store.db import open_db
from ragchat.watch import Change, watch_library

WAIT = 120  # a bound, not a timing: the test fails instead of hanging


@pytest.mark.parametrize("where", ["lib/ragchat.db", "ragchat.db"])  # beside, or above
def test_watch_adds_updates_and_removes(tmp_path: Path, embedder: FastEmbedder, where: str) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / ".gitignore").write_text("secret.md\n")
    (folder / "first.md").write_text("# First\n\nThe first note is about apples.\n")
    db_path = tmp_path / where  # the folder above the watched one holds the library too
    db_path.parent.mkdir(exist_ok=True)
    settings = settings_for(db_path)
    db = open_db(db_path)
    ingest(db, settings, [folder], lambda: embedder)
    db.close()

    changes: queue.Queue[Change] = queue.Queue()
    ready, stop = threading.Event(), threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        own = open_db(db_path)  # SQLite connections stay in their thread
        try:
            watch_library(
                own, settings, [folder], lambda: embedder, changes.put, stop=stop,
                on_ready=ready.set,
            )  # fmt: skip
        except BaseException as exc:  # reported to the test below
            failure.append(exc)
        finally:
            own.close()

    watcher = threading.Thread(target=run, daemon=True)
    watcher.start()
    try:
        assert ready.wait(WAIT)
        (folder / "secret.md").write_text("# Secret\n\nLeft out by .gitignore.\n")
        (folder / "second.md").write_text("# Second\n\nThe second note is about pears.\n")
        assert changes.get(timeout=WAIT) == Change("added", "second.md")
        (folder / "first.md").write_text("# First\n\nThe first note is now about plums.\n")
        assert changes.get(timeout=WAIT) == Change("updated", "first.md")
        (folder / "second.md").unlink()
        assert changes.get(timeout=WAIT) == Change("removed", "second.md")
    finally:
        stop.set()
        watcher.join(WAIT)
    assert not watcher.is_alive() and not failure
    db = open_db(db_path)
    assert [row["path"] for row in library.documents(db)] == ["first.md"]
    text = " ".join(c.text for c in library.chunks_by_ids(db, range(1, 100)).values())
    assert "plums" in text and "apples" not in text and "Secret" not in text
    db.close()
