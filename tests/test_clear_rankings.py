"""Anchoring breaks near-ties; it does not overturn a clear ranking (issue 28, found again on rq's
docs, never used here): the reading tells a question that points back at the conversation (a
cue) from one that only may go on with it, and on the latter the first hit both of the question's
own lists agree on is not passed by the anchor boost (`fusion.fuse`'s `agreed`; the fusion itself
is tested in test_retrieval_families.py, the pointer's side in test_pointer_at_the_end.py)."""

from __future__ import annotations

from pathlib import Path

from helpers import filler_pages, library_app

JOBS = """# Jobs

## Canceling a job

To prevent a queued job from running, cancel it with `job.cancel()`. Canceling a job removes it
from its queue and puts it in the canceled jobs registry; it does not delete the job itself.
Canceling a job will remove: its place in the queue, its dependents' wait.

```python
job = Job.fetch("my_job_id", connection=store)
job.cancel()
```

## Job status

A job's status is queued, started, finished, failed or canceled; `job.get_status()` reads it.
"""
REGISTRIES = """# Job registries

Each queue keeps registries of its jobs: started, finished, failed and deferred ones.

## Removing jobs

To remove a job from a registry, use `registry.remove(job_id)`; to delete the job as well, pass
`delete_job=True`.

```python
for job_id in registry.get_job_ids():
    registry.remove(job_id, delete_job=True)
```
"""
PAGES = {"jobs.md": JOBS, "registries.md": REGISTRIES} | filler_pages("jobs")


def test_a_question_that_only_may_go_on_does_not_point_back(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=300, chunk_overlap=0)
    conversation = app.conversation("s")
    conversation.ask("how do I cancel a queued job so it never runs?")
    conversation.ask("and how do I read a job's status?")
    turn = conversation.ask("what does the registries page say about removing jobs?")
    app.close()
    reading = turn.lineage.reformulation
    assert reading.is_follow_up and not reading.points_back  # it may go on, it points at nothing
    first = turn.lineage.chunks[0]
    assert Path(first.document).name == "registries.md"
    assert "registry.remove" in turn.answer
