"""Which documents a follow-up turn is about (issue 28): a question that names another collection
carries the conversation's subject there; a correction's own words are searched as typed. Two
small libraries of one made-up tool each, in two collections, with the real embedding model."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import settings_for

from ragchat.conversation.collections import named_collections, without_names
from ragchat.conversation.models import Index, QueryList, Source
from ragchat.conversation.plan import RetrievalPlan
from ragchat.conversation.searching import TurnSearch
from ragchat.ingest.pipeline import ingest
from ragchat.search.fusion import Anchoring, RankedList
from ragchat.store import library
from ragchat.store.db import open_db

# each tool documents the same tasks in its own words; every page says the tool's name
TASKS = {
    "deadline": "A job that runs too long is stopped after the deadline given in seconds: "
    "{call}(seconds=30) ends the job and marks it as timed out.",
    "retries": "A job that fails is tried again up to three times, waiting longer each time.",
    "logging": "Every job writes its log lines to the journal with the level set per node.",
    "install": "Install it with pip; it needs Python 3.10 or newer and no other packages.",
    "plugins": "Plugins add commands; each plugin is a package with an entry point.",
    "config": "Settings are read from a TOML file in the project folder, then the environment.",
    "colours": "Output is coloured when the terminal supports it; NO_COLOR turns colours off.",
    "testing": "The test runner invokes a command in-process and returns its exit code and output.",
    "upgrading": "Each release lists what changed; read the notes before upgrading.",
    "shell": "Shell completion is installed for bash, zsh and fish with one command.",
    "paging": "Long output is shown through a pager when it does not fit the screen.",
    "required": "An option can be made required: when it is missing the command exits with an "
    "error that names the option.",
    "option-prompts": "An option can ask for its value when it is missing instead of failing: "
    "give the option prompt=True and the user is asked for the value.",
    "asking": "At any point in a command, ask the user a question and read the reply with "
    "{ask}(text); it is not tied to any option.",
}
WHAT = ("context", "previous")  # the lists of what the conversation adds to a question
TOOLS = {"brewer": ("brewer.timeout", "brewer.ask"), "kettle": ("kettle.deadline", "kettle.ask")}


def _library(tmp_path: Path, embedder) -> Path:
    for tool, (call, ask) in TOOLS.items():
        folder = tmp_path / tool
        folder.mkdir()
        for name, text in TASKS.items():
            body = text.format(call=call, ask=ask)
            title = name.replace("-", " ").title()
            (folder / f"{name}.md").write_text(f"# {title} in {tool.title()}\n\n{body}\n")
    settings = settings_for(tmp_path / "lib.db")
    db = open_db(settings.db)
    ingest(db, settings, [tmp_path / tool for tool in TOOLS], lambda: embedder)
    db.close()
    return settings.db


def _turns(path: Path, embedder, *questions: str, session: str = "s"):
    from ragchat.app import App

    app = App(settings_for(path))
    app.__dict__["embedder"] = embedder
    conversation = app.conversation(session)
    results = [conversation.ask(question) for question in questions]
    app.close()
    return results


def _documents(result) -> list[str]:
    """The turn's documents in rank order (`collection:path`: the two tools' pages read alike)."""
    return list(dict.fromkeys(c.document for c in result.lineage.chunks))


@pytest.fixture(scope="module")
def two_tools(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    return _library(tmp_path_factory.mktemp("tools"), embedder)


def test_a_question_naming_another_collection_carries_the_subject_there(
    two_tools: Path, embedder
) -> None:
    first, moved = _turns(
        two_tools,
        embedder,
        "how do I stop a brewer job that runs too long?",
        "same idea in kettle?",
    )
    assert _documents(first)[0] == "brewer:deadline.md"
    assert "kettle:deadline.md" in _documents(moved)[:3]
    # the last answer's page (in brewer) is not anchored, and what the conversation adds to the
    # question is searched in kettle, without the collections' names
    assert moved.lineage.plan != "anchored_search"
    assert not any(c.anchored for c in moved.lineage.chunks)
    carried = [q for q in moved.lineage.queries if q.source.value in WHAT]
    assert carried and all(q.within == ("kettle",) for q in carried)
    assert not any("brewer" in q.query or "kettle" in q.query for q in carried)


def test_a_follow_up_naming_no_collection_stays_where_the_conversation_is(
    two_tools: Path, embedder
) -> None:
    _, follow = _turns(
        two_tools,
        embedder,
        "in kettle, how do I stop a job that runs too long?",
        "and when it fails, is it tried again?",
    )
    documents = _documents(follow)
    assert all(q.within == ("kettle",) for q in follow.lineage.queries if q.source.value in WHAT)
    assert documents[0] == "kettle:retries.md"
    assert "brewer:retries.md" not in documents[:2]


def test_a_correction_searches_its_own_words_as_typed(two_tools: Path, embedder) -> None:
    correction = "asking the user something halfway through the command, not tied to an option"
    *_, corrected = _turns(
        two_tools,
        embedder,
        "in brewer, how do I make an option required?",
        "what about asking for it when it's missing instead of failing?",
        f"no, I mean {correction}",
    )
    searched = {(q.source.value, q.index.value): q.query for q in corrected.lineage.queries}
    # X restates the whole need (correction.restates): it runs as the question, searched once
    assert searched[("question", "vector")] == correction
    assert ("correction", "vector") not in searched
    assert "brewer:asking.md" in _documents(corrected)[:2]


@pytest.mark.parametrize(
    ("question", "named"),
    [
        ("same idea in click?", ["click"]),
        ("and how does Typer handle that?", ["typer"]),
        ("click's version?", ["click"]),
        ("what's that tutorial/click.md page about?", []),
        ("what is @click.pass_context passing?", ["click"]),
        ("see click/docs/options.md", ["click"]),
        ("how does click-completion work?", []),
        ("compare click and typer", ["click", "typer"]),
    ],
)
def test_a_collection_is_named_only_by_a_word_of_its_own(question: str, named: list[str]) -> None:
    assert named_collections(question, ["click", "jinja", "typer"]) == named


def test_collection_names_leave_the_carried_query() -> None:
    assert without_names("same idea in click? (quits, click, fails)", ["click"]) == (
        "same idea in? (quits, fails)"
    )
    assert without_names("idea, click, quits", ["click"]) == "idea, quits"
    assert without_names("see tutorial/click.md", ["click"]) == "see tutorial/click.md"


def test_a_first_question_naming_a_collection_is_asked_there(two_tools: Path, embedder) -> None:
    question = "how do I install shell completion for kettle in bash?"
    (first,) = _turns(two_tools, embedder, question, session="first")
    documents = _documents(first)
    assert documents[0] == "kettle:shell.md"
    # the other tool's pages, alike but for the name, no longer take the places
    assert all(d.startswith("kettle:") for d in documents)


# the last answer's subject lives in its passages, not in the questions' words: "same idea in
# beta?" after "my CI job hangs forever" asks for beta's deadline, which the questions never named
ALPHA = {
    "deadlines": "When a job takes too long, give it a deadline: alpha.deadline(seconds=30) "
    "stops the job after thirty seconds and marks it as timed out.",
    "plugins": "Plugins add commands; each plugin is a package with an entry point.",
}
BETA = {
    "time-limits": "A job is stopped once its time limit in seconds has passed: "
    "beta.limit(seconds=30) ends it and records it as timed out.",
    "ci-logs": "In CI every job writes its output to the CI console; a job that hangs shows "
    "its last lines there.",
    "services": "A job may run forever as a service: start it with --forever and it keeps going.",
    "plugins": "Plugins add commands; each plugin is a package with an entry point.",
    "colours": "Output is coloured when the terminal supports it; NO_COLOR turns colours off.",
}


@pytest.fixture(scope="module")
def alpha_beta(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    root = tmp_path_factory.mktemp("alphabeta")
    for tool, pages in {"alpha": ALPHA, "beta": BETA}.items():
        folder = root / tool
        folder.mkdir()
        for name, text in pages.items():
            (folder / f"{name}.md").write_text(f"# {name.replace('-', ' ').title()}\n\n{text}\n")
    settings = settings_for(root / "lib.db")
    db = open_db(settings.db)
    ingest(db, settings, [root / "alpha", root / "beta"], lambda: embedder)
    db.close()
    return settings.db


def test_a_moved_follow_up_asks_for_passages_like_the_last_answers(
    alpha_beta: Path, embedder
) -> None:
    first, moved = _turns(
        alpha_beta,
        embedder,
        "in alpha, my CI job hangs forever, what can I do?",
        "same idea in beta?",
        session="moved",
    )
    assert _documents(first)[0] == "deadlines.md"  # (a name only alpha holds)
    # the old questions' words ("CI", "hangs", "forever") name beta's other pages; the passage
    # like the last answer's is its time limits (no question said "limit" or "seconds")
    limits = next(c for c in moved.lineage.chunks if c.document == "time-limits.md")
    assert limits.vector_rank == 1  # first in the list of passages like the last answer's
    assert "time-limits.md" in _documents(moved)[:3]
    answered = [q for q in moved.lineage.queries if q.source.value == "answered"]
    assert len(answered) == 1 and answered[0].within == ("beta",)


def test_a_follow_up_that_stays_asks_for_no_passages_like_the_last_answers(
    alpha_beta: Path, embedder
) -> None:
    _, follow = _turns(
        alpha_beta,
        embedder,
        "in beta, my CI job hangs forever, what can I do?",
        "and how do I stop it after a while?",
        session="stays",
    )
    assert not [q for q in follow.lineage.queries if q.source.value == "answered"]


def test_the_passages_like_the_last_answers_are_searched_by_their_vectors(
    alpha_beta: Path, embedder
) -> None:
    """`TurnSearch.like`: the chunks nearest the mean vector of the given chunks, in a scope, run
    once a turn like every other search."""
    db = open_db(alpha_beta)
    try:
        path_of = {d["id"]: d["path"] for d in library.documents(db)}
        deadlines = [d for d, path in path_of.items() if path.endswith("deadlines.md")]
        answered = tuple(library.chunk_ids_of_documents(db, deadlines))
        beta = library.scope(db, [c.id for c in library.collections(db) if c.name == "beta"])
        search = TurnSearch(db, embedder, depth=5, embed_chars=2000)
        found = search.like(answered, beta)
        assert found.ids and set(found.ids) <= set(beta.chunk_ids)
        first = library.chunks_by_ids(db, found.ids[:1])[found.ids[0]]
        assert path_of[first.document_id].endswith("time-limits.md")
        assert search.like(answered, beta) == found
        assert [run.kind for run in search.runs] == ["like"]
    finally:
        db.close()


def _plan(
    *lists: tuple[Source, Index, tuple[int, ...]], anchored: bool = True
) -> tuple[RetrievalPlan, list[RankedList]]:
    queries = tuple(QueryList(source, index, f"{source.value}", 0.3) for source, index, _ in lists)
    ranked = [
        RankedList(q.name, q.index.value, ids, q.weight) for q, (*_, ids) in zip(queries, lists)
    ]
    anchoring = Anchoring(frozenset({9}), 0.2) if anchored else Anchoring()
    return RetrievalPlan("anchored_search", queries, 1.0, anchoring, None, False), ranked


def test_the_question_s_first_keyword_hit_is_kept_when_the_carried_keyword_lists_agree() -> None:
    """`retrieve._agreed_first`: the chunk the question's own keyword list and every keyword list
    of what the conversation adds rank first keeps a top place on an anchored turn; one list that
    disagrees, no carried lists (a first question) or no anchoring, and nothing is kept."""
    from ragchat.conversation.retrieve import _agreed_first  # the rule under test

    own, context, previous = (
        (Source.QUESTION, Index.FTS),
        (Source.CONTEXT, Index.FTS),
        (
            Source.PREVIOUS,
            Index.FTS,
        ),
    )
    vectors = (Source.CONTEXT, Index.VECTOR, (7, 1))
    assert (
        _agreed_first(*_plan((*own, (1, 2)), (*context, (1, 3)), (*previous, (1,)), vectors)) == 1
    )
    assert _agreed_first(*_plan((*own, (1, 2)), (*context, (1, 3)), (*previous, (2, 1)))) is None
    assert _agreed_first(*_plan((*own, (1, 2)), (*context, (1, 3)))) is None
    assert _agreed_first(*_plan((*own, (1, 2)))) is None
    assert _agreed_first(*_plan((*own, ()), (*context, ()), (*previous, ()))) is None
    # an un-anchored turn (a new topic, a switch) is left to the fusion
    agreed = ((*own, (1, 2)), (*context, (1, 3)), (*previous, (1,)))
    assert _agreed_first(*_plan(*agreed, anchored=False)) is None
