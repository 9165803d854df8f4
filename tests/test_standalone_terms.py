"""A question that stands on its own, asked mid-conversation (issue 28, family 9): a pronoun whose
antecedent the question itself types as a code identifier ("can I give click.prompt a timeout so
it doesn't hang?") points at nothing in the conversation.

A made-up tool's manual, small enough to read: the pure tests read it as corpus statistics in
memory; the last one ingests it and runs real turns (real SQLite, FTS5, sqlite-vec and the real
embedding model)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers import settings_for

from ragchat.conversation.corpus import MemoryCorpus
from ragchat.conversation.followup.cues import anaphora
from ragchat.conversation.followup.heuristic import HeuristicReformulator
from ragchat.conversation.followup.referents import understood
from ragchat.conversation.models import Exchange, ReformulationInput
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.store.db import open_db
from ragchat.text import identifiers

# a manual of a made-up task runner ("brewer"): one section a page
PAGES = {
    "posargs.md": (
        "Passing arguments",
        "Extra arguments after a double dash reach the test command: `brewer run -- -k slow` "
        "passes `-k slow` on. Alternatively set `default_args` in the recipe. Notice that "
        "quoting follows the shell.",
    ),
    "platform.md": (
        "Platform filters",
        "Skip an environment on some operating systems with `platform = linux|darwin`: "
        "elsewhere brewer marks it skipped.",
    ),
    "timeouts.md": (
        "Timeouts",
        "A step that runs longer than `step_timeout` seconds is stopped and reported as hung.",
    ),
    "matrix.md": (
        "Test matrix",
        "Run the suite against several interpreters with a matrix: list each interpreter "
        "under `interpreters` and brewer builds one isolated environment for each.",
    ),
}
FIRST = "how do I pass extra arguments to the test command?"
ANSWER = (
    "Alternatively set default_args in the recipe. [1] Notice that quoting follows the shell. [1]"
)
CHUNKS = {number: f"{title}. {text}" for number, (title, text) in enumerate(PAGES.values())}
MANUAL = MemoryCorpus(CHUNKS.items())
VECTOR = np.zeros(4, dtype=np.float32)


def _reading(question: str, best: float):
    data = ReformulationInput(
        question=question,
        last=Exchange(FIRST, ANSWER),
        anchor_chunk_ids=(0,),
        earlier_questions=(FIRST,),
        topic_questions=(FIRST,),
        own_best=best,
    )
    return HeuristicReformulator(MANUAL, DEFAULT.followup).reformulate(data, VECTOR)


def test_identifiers_are_code_shapes_not_abbreviations() -> None:
    assert identifiers("can I give click.prompt a timeout?") == ["click.prompt"]
    assert identifiers("my user_name parameter, camelCase keys, run() and `--name`") == [
        "user_name",
        "camelCase",
        "run()",
        "--name",
    ]
    # initials, a missing space after a full stop, abbreviations and versions are no code
    assert identifiers("How did the U.S. state get it? Too bad.I said e.g. version 2.0.1") == []


@pytest.mark.parametrize(
    "question",
    [
        "can I give click.prompt a timeout so it doesn't hang forever in CI?",
        "the function is cli_create_user but I want it called create",
    ],
)
def test_a_pronoun_after_an_identifier_of_the_question_points_at_it(question: str) -> None:
    assert anaphora(question) == []
    # typed after the pronoun, the identifier is no antecedent: the pronoun still points back
    assert anaphora("I run it as python cli.py and nothing completes") == ["it"]


def test_a_question_that_types_its_own_antecedent_keeps_its_words() -> None:
    """Read against a conversation about test arguments, the question's "it" is its own
    `brewer.step`: no referent of the conversation replaces it."""
    question = "can I give brewer.step a limit so it doesn't hang forever?"
    reading = _reading(question, best=0.5)
    assert understood(reading.semantic_query) == question
    assert "refers back" not in reading.reasoning


@pytest.fixture(scope="module")
def manual(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    folder = tmp_path_factory.mktemp("brewer") / "brewer"
    folder.mkdir()
    for name, (title, text) in PAGES.items():
        (folder / name).write_text(f"# {title}\n\n{text}\n")
    settings = settings_for(folder.parent / "lib.db")
    db = open_db(settings.db)
    ingest(db, settings, [folder], lambda: embedder)
    db.close()
    return settings.db


def test_a_question_that_types_its_own_antecedent_is_read_as_typed(manual: Path, embedder) -> None:
    """Real turns: "so it doesn't hang" after a talk about test arguments is the step of the
    question's own `brewer.step`, not a thing of the conversation."""
    from ragchat.app import App

    app = App(settings_for(manual))
    app.__dict__["embedder"] = embedder
    conversation = app.conversation("s")
    conversation.ask(FIRST)
    turn = conversation.ask("can I give brewer.step a limit so it doesn't hang forever?")
    app.close()
    reformulation = turn.lineage.reformulation
    assert understood(reformulation.semantic_query) == (
        "can I give brewer.step a limit so it doesn't hang forever?"
    )
    assert "refers back" not in reformulation.reasoning
    assert turn.lineage.chunks[0].document == "timeouts.md"
