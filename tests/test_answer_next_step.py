"""The next step of a section's how-to in a question's answer (issue 30, point 1): a section's
walk-through is cut across two chunks, the fixtures at the end of the first and the test that
uses them opening the second. The second ranks below the extractive answer's pool or is brought
in beside the first (`retrieve._with_neighbours`), so the answer never ranks its units on their
own; the step after the one it shows now comes with it (`extractive._Ranking.with_next_steps`)."""

from __future__ import annotations

from pathlib import Path

from helpers import flat_idf, settings_for

from ragchat.answer import Mode, Request, Source, extractive
from ragchat.app import App
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.store.db import open_db
from ragchat.store.library import StoredChunk

SIZE, OVERLAP = 420, 40
STEP = "queue.drain(send_report.queue)"
PAGE = f"""# Jobs guide

## Unit testing

Jobqueue provides a MemoryQueue that unit tests use, so you do not need a running Redis server
to test your jobs. Create it and a runner in pytest fixtures in your conftest.py:

```python
@pytest.fixture()
def queue():
    return MemoryQueue()

@pytest.fixture()
def runner(queue):
    return Runner(queue, timeout=100)
```

Then inject those fixtures where you need them:

```python
def test_send_report(queue, runner):
    send_report.send("weekly")
    {STEP}
    runner.join()
```

Each one is a plain function too, so you may also call it directly.

## Deploying

Run one runner process per machine behind your process supervisor; each runner takes jobs
from Redis until it is stopped, and a stopped runner finishes the job it holds first.
"""
OTHERS = {
    "redis": "# Redis\n\nJobqueue keeps its jobs in Redis: point it at your Redis server with "
    "the REDIS_URL setting before the first job is sent.",
    "hangs": "# Tests that hang\n\nA test that sends jobs and never returns usually waits for a "
    "runner that was not started: start one in the test, or the jobs are never run.",
    "retries": "# Retries\n\nA job that raises is run again later, up to ten times, with a "
    "longer pause each time; tests usually turn retries off.",
    "timeouts": "# Timeouts\n\nA job that runs longer than its timeout is stopped; unit tests "
    "use short timeouts so a stuck job fails fast.",
    "settings": "# Settings\n\nEvery setting of jobqueue can be given in pytest.ini for your tests "
    "or in the environment, and the environment wins.",
    "workers": "# Runners\n\nA runner without Redis cannot start: it waits for the server and "
    "logs a warning every second until Redis answers.",
    "mocks": "# Mocking\n\nTo test a job that calls a web service, mock the service in your "
    "test with pytest's monkeypatch, so no request leaves your machine.",
    "local": "# Local development\n\nWithout Docker you can still run Redis locally: most "
    "package managers have it, and jobqueue finds it on its default port.",
    "install": "# Install\n\nInstall jobqueue with pip, then run a Redis server on your machine "
    "to send and run jobs.",
}
QUESTION = "how do I unit test my jobs with pytest without running Redis?"


def _library(tmp_path: Path, embedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.md").write_text(PAGE)
    for name, text in OTHERS.items():
        (docs / f"{name}.md").write_text(text + "\n")
    settings = settings_for(tmp_path / "lib.db", chunk_size=SIZE, chunk_overlap=OVERLAP)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    db.close()
    return settings.db


def test_the_test_that_uses_the_fixtures_comes_after_them(tmp_path: Path, embedder) -> None:
    path = _library(tmp_path, embedder)
    app = App(settings_for(path, chunk_size=SIZE, chunk_overlap=OVERLAP))
    app.__dict__["embedder"] = embedder
    try:
        turn = app.conversation("s").ask(QUESTION)
    finally:
        app.close()
    step = next(c for c in turn.lineage.chunks if c.heading == "Unit testing" and c.rank > 1)
    assert step.rank > DEFAULT.answer.pool or step.beside is not None  # not in the answer's pool
    answer = " ".join(turn.answer.split())
    assert "pytest fixtures in your conftest.py" in answer  # the first chunk's how-to ...
    assert STEP in answer  # ... and the step that opens the next chunk of its section
    assert answer.index("def runner(queue)") < answer.index("Then inject those fixtures")


def _chunk(number: int, text: str, heading: str, ordinal: int) -> Source:
    chunk = StoredChunk(
        id=number, document_id=1, path="guide.md", title="", heading=heading, text=text,
        ordinal=ordinal,
    )  # fmt: skip
    return Source(number, chunk)


FIXTURES = """Create a MemoryQueue in a pytest fixture to unit test your jobs without Redis:

```python
@pytest.fixture()
def queue():
    return MemoryQueue()
```
"""
TEST = """Then inject that fixture where you need it:

```python
def test_send_report(queue):
    queue.drain("reports")
```
"""
OTHER = "Jobs are kept in Redis between runs; a runner takes them in the order they came."


def _answer(sources: list[Source], reach: list[Source], count: int = 4) -> str:
    request = Request(QUESTION, sources, count=count, reach=reach)
    return extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text


def test_only_the_opening_of_the_sections_next_chunk_goes_on_from_its_last_unit() -> None:
    first = _chunk(1, FIXTURES, "Unit testing", 3)
    assert 'queue.drain("reports")' in _answer([first], [_chunk(2, TEST, "Unit testing", 4)])
    # another section's chunk, or one that does not come right after, is no next step
    assert "queue.drain" not in _answer([first], [_chunk(2, TEST, "Deploying", 4)])
    assert "queue.drain" not in _answer([first], [_chunk(2, TEST, "Unit testing", 5)])
    # the unit the answer shows is not the chunk's last: the section goes on in the chunk
    ends = _chunk(1, FIXTURES + "\n" + OTHER + "\n", "Unit testing", 3)
    answer = _answer([ends], [_chunk(2, TEST, "Unit testing", 4)], count=1)
    assert "def queue():" in answer
    assert "queue.drain" not in answer


REFINEMENT = """If you would like to avoid passing the result of a job to the next one in line, set
pipe_ignore when you create the receiving message:

```python
fetch.message() | parse.message_with_options(pipe_ignore=True) | store.message()
```
"""
CHAIN = """You can chain jobs together like so:

```python
pipe = pipeline([fetch.message(url), parse.message()]).run()
```
"""


def test_a_section_shown_only_by_its_refinement_brings_the_code_that_names_it() -> None:
    question = "and passing each result to the next one?"
    shown = _chunk(1, REFINEMENT, "Composition > Pipelines", 5)
    request = Request(question, [shown], reach=[_chunk(2, CHAIN, "Composition > Pipelines", 4)])
    answer = extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text
    assert "pipeline([" in answer  # the section's own how-to ...
    assert answer.index("pipeline([") < answer.index("pipe_ignore=True")  # ... as the page reads
    # not another section's code that writes "pipeline", nor a chunk two before the shown one
    for reach in (
        _chunk(2, CHAIN, "Composition > Groups", 4),
        _chunk(2, CHAIN, "Composition > Pipelines", 3),
    ):
        other = Request(question, [shown], reach=[reach])
        assert "pipeline([" not in extractive(Mode.QUESTION, other, flat_idf, DEFAULT.answer).text


def test_a_section_the_answer_only_mentions_lends_it_no_code() -> None:
    mention = "Passing each result to the next job is what a pipeline does.\n"
    shown = _chunk(1, mention, "Composition > Pipelines", 5)
    request = Request(
        "passing each result to the next?",
        [shown],
        reach=[_chunk(2, CHAIN, "Composition > Pipelines", 4)],
    )
    assert "pipeline([" not in extractive(Mode.QUESTION, request, flat_idf, DEFAULT.answer).text
