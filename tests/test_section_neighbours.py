"""The chunks beside a turn's best ones in their section come with them (issue 28: the passage
that answers reaches the model): the setting the question's words never name sits in the chunk
before the paragraph they match."""

from __future__ import annotations

from pathlib import Path

from helpers import settings_for

from ragchat.ingest.pipeline import ingest
from ragchat.store import library
from ragchat.store.db import open_db

SETTING = "pool_size = 12"
PAGE = f"""# Workers

## The worker pool

Put this in the workers table of service.toml before the first start:

```toml
[workers]
{SETTING}
queue = "default"
```

The service reads the table once, when it starts; a change needs a restart of every node, and
nodes that disagree log a warning naming the key that differs between them.

How many jobs run at the same time on one node is decided by the size of the worker pool: each
worker takes one job from the queue, runs it to the end and then takes the next, so twelve
workers run twelve jobs at once and a thirteenth job waits in the queue for a free worker.

## Logs

Every node writes its log to the journal; the log level is set per node and changes at once,
without a restart, and a debug level names each job as a worker takes it from the queue.
"""


def _library(tmp_path: Path, embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "workers.md").write_text(PAGE)
    (docs / "queues.md").write_text(
        "# Queues\n\nA queue holds jobs in the order they came; a job that fails goes back to "
        "the end of its queue after a delay.\n"
    )
    (docs / "batches.md").write_text(
        "# Batches\n\nAt most four batch jobs run at the same time on one node; the others "
        "wait until one of the four ends.\n"
    )
    for name, text in (
        ("joining", "A node joins the cluster when it starts and leaves it when it stops."),
        ("history", "Jobs are kept for a week after they end; older jobs are removed."),
        ("names", "Each node has a name and an address; a job's log names its node."),
        ("retries", "A job that fails is tried again on another node after a pause."),
        ("load", "A node's load shows how busy it is; a busy node takes fewer new jobs."),
        ("pauses", "A node can be paused: its running jobs end and no new job starts on it."),
    ):
        (docs / f"{name}.md").write_text(f"# {name.title()}\n\n{text}\n")
    (docs / "schedules.md").write_text(
        "# Schedules\n\nA scheduled job never runs twice at the same time on one node: a run "
        "that is due while the last one still runs is skipped.\n"
    )
    settings = settings_for(tmp_path / "lib.db", chunk_size=360, chunk_overlap=40)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    db.close()
    return settings.db


QUESTION = "how many jobs run at the same time on one node?"


def _asked(path: Path, embedder):
    """The question's turn in a fresh session of the library at `path`."""
    from ragchat.app import App

    app = App(settings_for(path, chunk_size=360, chunk_overlap=40))
    app.__dict__["embedder"] = embedder
    result = app.conversation("s").ask(QUESTION)
    app.close()
    return result


def test_the_chunk_before_the_best_one_in_its_section_comes_beside_it(
    tmp_path: Path, embedder
) -> None:
    path = _library(tmp_path, embedder)
    db = open_db(path)
    texts = {c.id: c.text for c in library.chunks_by_ids(db, range(1, 100)).values()}
    db.close()
    holder = next(i for i, text in texts.items() if SETTING in text)
    ranked = _asked(path, embedder).lineage.chunks
    ids = [c.chunk_id for c in ranked]
    assert holder in ids[:3]
    beside = ranked[ids.index(holder)]
    assert beside.beside is not None  # brought up beside the chunk the question matched...
    hit = ids.index(beside.beside)
    assert hit < 3 and ids.index(holder) == hit + 1  # ...right after it
    assert SETTING not in texts[ids[hit]]
    # the documents ranked and their order stay as the search found them
    found = [c.document for c in ranked if c.beside is None]
    assert list(dict.fromkeys(c.document for c in ranked)) == list(dict.fromkeys(found))


def test_neighbours_are_of_one_section(tmp_path: Path, embedder) -> None:
    path = _library(tmp_path, embedder)
    db = open_db(path)
    chunks = library.chunks_by_ids(db, range(1, 100))
    page = sorted(
        (c for c in chunks.values() if c.path.endswith("workers.md")), key=lambda c: c.ordinal
    )
    near = library.section_neighbours(db, [c.id for c in page])
    db.close()
    for chunk in page:
        expected = [
            other.id
            for other in page
            if abs(other.ordinal - chunk.ordinal) == 1 and other.heading == chunk.heading
        ]
        assert list(near.get(chunk.id, ())) == expected
    assert any(near.values())  # the pool's section has more than one chunk
    logs = next(c for c in page if c.heading.endswith("Logs"))
    assert logs.id not in {i for ids in near.values() for i in ids}


def test_a_chunk_beside_another_shows_its_score_in_the_sources_panel() -> None:
    from ragchat.conversation.models import RetrievedChunk
    from ragchat.render import panel_scores

    def chunk(chunk_id: int, rrf: float, beside: int | None = None) -> RetrievedChunk:
        return RetrievedChunk(
            chunk_id, chunk_id, 1, "a.md", "", None, None, None, rrf, 0.0, rrf, False, False,
            beside=beside,
        )  # fmt: skip

    # brought in with no score of its own, or moved up from below: neither lowers the rest
    shown = panel_scores([chunk(1, 0.9), chunk(2, 0.0, beside=1), chunk(3, 0.3, 1), chunk(4, 0.8)])
    assert shown == [0.9, 0.9, 0.9, 0.8]


def test_eval_scores_answers_on_the_chunks_the_extractive_answer_draws_from(
    tmp_path: Path, embedder
) -> None:
    from ragchat.evaluate.answers import answer_of
    from ragchat.params import DEFAULT

    path = _library(tmp_path, embedder)
    result = _asked(path, embedder)
    db = open_db(path)
    scored = answer_of(db, result, "twelve workers run twelve jobs at once", DEFAULT.answer)
    db.close()
    ranked = result.lineage.chunks
    assert any(c.beside is not None for c in ranked[: DEFAULT.answer.pool])
    own = [c.chunk_id for c in ranked if c.beside is None][: DEFAULT.answer.pool]
    assert list(scored.chunk_ids) == own
