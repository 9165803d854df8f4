"""Retrieval on documentation nobody tuned to (issue 28, families 5-8 and 10): anchoring breaks
near-ties only, a model's rewrite keeps the question's own hits, documents named by identifiers,
file names and quoted titles (not by common words), repeated text yields its place, and a gold
file stored as a copy is scored as its original."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import fuse, settings_for

from ragchat.conversation.combine import Evidence, trust
from ragchat.conversation.corpus import MemoryCorpus
from ragchat.evaluate.sets import EvalItem, EvalTurn, missing_gold
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.search.fusion import Anchoring, RankedList
from ragchat.search.titles import named_documents
from ragchat.store import library
from ragchat.store.db import open_db

# --- 5. anchoring breaks near-ties, it does not overturn a clear ranking ------------------------


def _lists(vector: list[int], fts: list[int]) -> list[RankedList]:
    return [
        RankedList("question/vector", "vector", tuple(vector), 0.7),
        RankedList("question/fts", "fts", tuple(fts), 0.3),
    ]


def test_a_boosted_chunk_passes_only_chunks_within_the_margin() -> None:
    """The delete page leads clearly; the last answer's page (anchored, boost 0.28) ranks lower
    everywhere: its chunks may pass near-ties, never the clear leader."""
    others, anchored = [3, 4, 5, 6, 7], [10, 11, 12, 13, 14, 15]
    document_of = {1: 1, 2: 1, **{i: i for i in others}, **{i: 9 for i in anchored}}
    lists = _lists([1, 2, *others, *anchored], [1, 2, *others, *anchored])
    fused = fuse(lists, document_of, anchoring=Anchoring(frozenset({9}), 0.28))
    assert [f.chunk_id for f in fused[:2]] == [1, 2]
    for position, item in enumerate(fused):
        assert item.boost <= 0.2 + 1e-9
        passed = [f for f in fused[position + 1 :] if f.rrf > item.rrf]
        assert all(f.rrf - item.rrf <= item.boost for f in passed)


def test_anchoring_never_pushes_the_questions_own_first_hits_out() -> None:
    """Even a large boost (margin lifted) leaves the question's own first hits in the top
    `own_within` places they held."""
    document_of = {1: 1, 2: 2, **{i: 9 for i in range(10, 16)}}
    lists = _lists([1, 2, *range(10, 16)], [2, 1, *range(10, 16)])
    anchoring = Anchoring(frozenset({9}), 0.5, margin=1.0)
    pushed = [f.chunk_id for f in fuse(lists, document_of, anchoring=anchoring)]
    ranked = [f.chunk_id for f in fuse(lists, document_of, anchoring=anchoring, own={1, 2})]
    assert not {1, 2} & set(pushed[:4]) and {1, 2} <= set(ranked[:4])


def test_the_chunk_both_of_the_questions_own_lists_rank_first_stays_first() -> None:
    """rq's docs (never used here): "what does the job registries page say about removing
    jobs?" after questions on the jobs page. The question's vector and keyword lists both rank
    the registries page's "Removing Jobs" first, and so does the fusion without the boost; the
    boost lifted the last answer's "Canceling a Job" (4th and 2nd) over it, and the answer led
    with the wrong page's code. A clear ranking is no near-tie: the agreed first hit stays
    first; a boosted chunk still passes the others."""
    document_of = {1: 1, 2: 9, 3: 3, 4: 9, 5: 5}
    lists = _lists([1, 3, 5, 2, 4], [1, 2, 3, 4, 5])
    anchoring = Anchoring(frozenset({9}), 0.16)
    boosted = [f.chunk_id for f in fuse(lists, document_of, anchoring=anchoring)]
    agreed = [f.chunk_id for f in fuse(lists, document_of, anchoring=anchoring, agreed=1)]
    assert boosted[0] == 2 and agreed[:2] == [1, 2]
    # first by both lists, but not by the fusion without the boost: nothing to keep
    other = [f.chunk_id for f in fuse(lists, document_of, anchoring=anchoring, agreed=3)]
    assert other == boosted
    # within one document the boost still orders: the last answer's page, past what it used
    same = {**document_of, 1: 9}
    used = Anchoring(frozenset({9}), 0.16, exclude=frozenset({1}), keep=0)
    boosted = [f.chunk_id for f in fuse(lists, same, anchoring=used)]
    assert (
        boosted[0] == 2
        and [f.chunk_id for f in fuse(lists, same, anchoring=used, agreed=1)] == boosted
    )


def test_beside_a_rewrite_the_questions_own_first_hits_keep_places() -> None:
    """A trusted rewrite's lists outweigh the question's: its own first hit stays in the top 4."""
    lists = [
        RankedList("question/vector", "vector", (7, 1, 2), 0.2),
        RankedList("model/vector", "vector", (1, 2, 3, 4, 5, 6), 1.4),
        RankedList("model/fts", "fts", (1, 2, 3, 4, 5, 6), 0.6),
    ]
    document_of = {i: i for i in range(1, 8)}
    loose = [f.chunk_id for f in fuse(lists, document_of, own={7})]
    firm = [f.chunk_id for f in fuse(lists, document_of, own={7}, own_firm=True)]
    assert 7 not in loose[:4] and 7 in firm[:4]


# --- 6. a rewrite that drops the question's words, or an absurd one, is not trusted ------------


def test_a_rewrite_that_drops_the_questions_words_is_not_trusted() -> None:
    from ragchat.conversation.combine import fidelity

    question, previous = "and how do I delete one?", "how do I filter rows?"
    kept = fidelity("How do I delete a row?", question, previous, params=DEFAULT.combine)
    dropped = fidelity(
        "How do I filter rows by a column?", question, previous, params=DEFAULT.combine
    )
    assert kept == 1.0 and dropped == 0.0
    assert (
        trust(Evidence(0.3, 0.6, dropped), params=DEFAULT.combine) == 0.0
        and trust(Evidence(0.3, 0.6, kept), params=DEFAULT.combine) == 1.0
    )


def test_an_absurd_rewrite_is_refused() -> None:
    from ragchat.conversation.combine import fidelity

    question = "what about async?"
    assert (
        fidelity(
            "How do I delete rows using async? " * 200,
            question,
            "how to delete?",
            params=DEFAULT.combine,
        )
        == 0.0
    )
    assert (
        fidelity(
            "How do I delete rows using async?", question, "how to delete?", params=DEFAULT.combine
        )
        == 1.0
    )


# --- 7. documents named by identifiers, file names, quoted titles; not by common words ---------

LIBRARY = {
    "decisions/adr-0003.md": "# Storage choice\n\nWe chose PostgreSQL for the model store. "
    "Every model keeps its relationship rows in one database.\n",
    "decisions/adr-0004.md": "# Queue choice\n\nWe chose a queue for the model events. "
    "Each relationship change of a model is an event.\n",
    "project/guidelines.rst": "Contributing\n============\n\nOpen an issue first. Keep each "
    "model change small and describe the relationship it touches.\n",
    "guide/relationship-model.md": "# Relationship model\n\nA model declares a relationship to "
    "another model with a foreign key column.\n",
    "guide/configure-server.md": "# Configure the server\n\nSet the port and the model cache. "
    "A relationship between server and model is configured here.\n",
    "guide/build-options.md": "# Build options\n\nEach model build takes options; a relationship "
    "between builds and the model is described by options.\n",
    "guide/add-plugins.md": "# Add Plugins\n\nPlugins extend the model with hooks; each plugin "
    "declares its relationship to the model.\n",
}


@pytest.fixture(scope="module")
def titled(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    root = tmp_path_factory.mktemp("titled")
    for name, text in LIBRARY.items():
        (root / "docs" / name).parent.mkdir(parents=True, exist_ok=True)
        (root / "docs" / name).write_text(text)
    path = root / "lib.db"
    db = open_db(path)
    ingest(db, settings_for(path), [root / "docs"], lambda: embedder)
    db.close()
    return path


def _named(db_path: Path, question: str) -> list[str]:
    db = open_db(db_path)
    try:
        paths = {d["id"]: d["path"] for d in library.documents(db)}
        return [paths[n.document_id] for n in named_documents(db, question)]
    finally:
        db.close()


@pytest.mark.parametrize(
    ("question", "document"),
    [
        ("summarize the guidelines.rst document", "project/guidelines.rst"),
        ("What did ADR 3 decide?", "decisions/adr-0003.md"),
        ("what does the 'Add Plugins' page cover?", "guide/add-plugins.md"),
    ],
)
def test_identifiers_file_names_and_quoted_titles_name_a_document(
    titled: Path, question: str, document: str
) -> None:
    assert _named(titled, question) == [document]


def test_words_every_page_uses_name_no_document(titled: Path) -> None:
    """ "relationship" and "model" are in one title but in every page: no evidence of a name."""
    assert _named(titled, "relationship model?") == []
    assert _named(titled, "the server configuration") == ["guide/configure-server.md"]


# --- 8. repeated text yields its place ----------------------------------------------------------

CODE = "import app\n\nserver = app.Server(port=8080, workers=4)\nserver.run(debug=True)\n"


def test_a_chunk_mostly_inside_better_ranked_ones_yields_its_place() -> None:
    from ragchat.search.repeats import repeated_in, yielding

    texts = {
        1: f"Start the server like this:\n\n{CODE}\nThe port is where it listens.",
        2: f"{CODE}\nThe port is where it listens.",  # an overlap / an included page
        3: "Workers are processes; each one serves requests on its own.",
        4: "Set debug only while developing: it shows tracebacks to anyone.",
    }
    repeats = repeated_in([1, 2, 3, 4], texts, {1: 7, 2: 7, 3: 7, 4: 7}, params=DEFAULT.fusion)
    assert repeats == {2: 1}
    assert yielding([1, 2, 3, 4], repeats) == [1, 3, 4, 2]
    assert (
        repeated_in([1, 2, 3, 4], texts, {1: 7, 2: 8, 3: 7, 4: 7}, params=DEFAULT.fusion) == {}
    ), "another source"


def test_the_ranking_a_turn_returns_puts_repeats_last(tmp_path: Path, embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    body = (
        "The scheduler runs each job at its interval and retries a failed job three times "
        "with a growing delay between the attempts before it marks the job as failed."
    )
    # the page includes the same snippet in two sections: two chunks of one document
    (docs / "jobs.md").write_text(f"# Scheduler jobs\n\n{body}\n\n# Reference\n\n{body}\n")
    (docs / "retries.md").write_text(
        "# Retries\n\nA failed job is retried three times; the delay doubles each time.\n"
    )
    (docs / "other.md").write_text("# Logging\n\nLogs rotate daily and keep a week of files.\n")
    ranked = _ranked(tmp_path, docs, embedder, "how often does the scheduler retry a failed job?")
    assert ranked[-1].repeats == ranked[0].chunk_id
    assert all(c.repeats is None for c in ranked[:-1])


def _ranked(tmp_path: Path, docs: Path, embedder, question: str) -> tuple:
    """The chunks a first turn over the pages in `docs` ranks, in order."""
    from ragchat.app import App

    settings = settings_for(tmp_path / "lib.db")
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    db.close()
    app = App(settings)
    app.__dict__["embedder"] = embedder
    try:
        return app.conversation("s").ask(question).lineage.chunks
    finally:
        app.close()


def test_a_chunk_that_says_only_its_title_yields_its_place(tmp_path: Path, embedder) -> None:
    """A reference page whose text the site's build fills from the code is only its title
    ("rich.logging" over `.. automodule::`): its title matches the question, it holds nothing to
    answer from, and it goes below every chunk that adds something."""
    from ragchat.search.repeats import says_only_its_title

    assert says_only_its_title("rich.logging", ["rich.logging", ""])
    assert not says_only_its_title("rich.logging: the handler", ["rich.logging"])
    docs = tmp_path / "docs"
    (docs / "reference").mkdir(parents=True)
    (docs / "reference" / "logging.rst").write_text(
        "rich.logging\n============\n\n.. automodule:: rich.logging\n    :members:\n"
    )
    (docs / "logging.rst").write_text(
        "Logging Handler\n===============\n\nRich supplies a logging handler which will format "
        "and colorize text written by Python's logging module: pass a RichHandler to "
        "logging.basicConfig(handlers=[RichHandler()]).\n"
    )
    (docs / "other.rst").write_text("Tables\n======\n\nA table has columns and rows.\n")
    ranked = _ranked(tmp_path, docs, embedder, "what does rich.logging give me?")
    assert ranked[0].document == "logging.rst"
    assert ranked[-1].document == "reference/logging.rst"


# --- 10. a gold file stored as an identical copy is scored as its original ---------------------


def test_a_gold_copy_counts_as_its_original(tmp_path: Path, embedder) -> None:
    from ragchat.evaluate.runs import as_shown

    docs = tmp_path / "corpus"
    docs.mkdir()
    (docs / "a.txt").write_text("Witnesses must be fourteen years old or older.\n")
    (docs / "b.txt").write_text("Witnesses must be fourteen years old or older.\n")
    path = tmp_path / "lib.db"
    db = open_db(path)
    ingest(db, settings_for(path), [docs], lambda: embedder)
    shown = library.shown_paths(db)
    item = EvalItem("c1", {}, (EvalTurn("how old must a witness be?", gold=("b.txt",)),))
    assert missing_gold(db, [item]) == []
    db.close()
    assert as_shown(("b.txt",), shown) == ("a.txt (also b.txt)",)
    assert as_shown(("a.txt", "b.txt", "c.txt"), shown) == ("a.txt (also b.txt)", "c.txt")


# --- 9. "understood as": referents of the right kind, context terms of a term's shape ----------

ORM = MemoryCorpus(
    enumerate(
        [
            "A team has members; each member belongs to one team.",
            "Async queries run with await; async sessions share one engine.",
            "Look a row up by its primary key with session.get; two rows never share one.",
            "The 'Add Plugins' page lists hooks; python's import system loads each plugin.",
            "Hooks run in order; a plugin may add hooks of its own.",
        ]
    )
)


def test_a_possessive_whose_owner_the_question_names_stays() -> None:
    from test_stages import reformulate

    earlier = [("how do I run queries using async?", "Async queries run with await.")]
    r = reformulate("how do I load a team and its members?", earlier, corpus=ORM)
    assert r.semantic_query.split(" (")[0] == "how do I load a team and its members?"
    r = reformulate("how do I load a row by its primary key?", earlier, corpus=ORM)
    assert r.semantic_query.split(" (")[0] == "how do I load a row by its primary key?"
    pointed = reformulate(
        "how do I load its members?", [("what is a team?", "A team.")], corpus=ORM
    )
    assert pointed.semantic_query.split(" (")[0] == "how do I load team's members?"


TOOLS = MemoryCorpus(
    enumerate(
        [
            "Run a tool once with uvx; install a tool with uv tool install.",
            "A project holds its dependencies in pyproject.toml; uv sync installs them.",
            "Create a spider in the project with scrapy genspider.",
            "A download delay slows the spider down between requests.",
        ]
    )
)


def test_a_pronoun_whose_thing_the_question_names_in_another_clause_stays() -> None:
    """A pronoun in another clause than the thing the question names ("without installing
    it") stands for that thing, not the last question's project; in its own clause it points
    back ("create a spider inside it": not the spider)."""
    from test_stages import reformulate

    earlier = [("how do I sync my project?", "A project holds its dependencies; uv sync.")]
    held = [
        "how do I run a tool once without installing it?",
        "how do I slow the spider down so it doesn't hammer the site?",
        "can I install a tool, and run it once?",
    ]
    for question in held:
        r = reformulate(question, earlier, corpus=TOOLS)
        assert r.semantic_query.split(" (")[0] == question
    inside = reformulate("how do I create a spider inside it?", earlier, corpus=TOOLS)
    assert inside.semantic_query.split(" (")[0] == "how do I create a spider inside project?"


def test_a_question_holding_its_pronouns_thing_searches_two_terms_of_the_topic() -> None:
    """Its pronoun replaced by no term, the question still searches the topic's first two terms
    among its keywords, as a resolved one does (not the first twice, and one less)."""
    from test_stages import reformulate

    earlier = [("how do I sync my project dependencies?", "A project holds its dependencies.")]
    r = reformulate("how do I run a tool once without installing it?", earlier, corpus=TOOLS)
    assert (
        r.semantic_query == "how do I run a tool once without installing it? (sync, dependencies)"
    )
    keywords = r.keyword_query.split(", ")
    assert "sync" in keywords and "dependencies" in keywords


def test_context_terms_have_no_stray_quotes_or_possessive_endings() -> None:
    from test_stages import reformulate

    earlier = [("what does the 'Add Plugins' page say about python's hooks?", "Hooks run.")]
    r = reformulate("and in what order?", earlier, corpus=ORM)
    terms = r.semantic_query.split(" (", 1)[1]
    assert "'" not in terms and "python" in terms and "hooks" in terms


def test_adjacent_chunks_of_a_section_reach_the_model_as_one_passage() -> None:
    """Neighbours in one section join in reading order with their overlap said once; the
    passages then carry more chunks than places."""
    from ragchat.search.passages import passages
    from ragchat.store.library import StoredChunk

    def chunk(cid: int, ordinal: int, text: str, heading: str = "Setup") -> StoredChunk:
        return StoredChunk(cid, 1, "guide.md", "Guide", heading, text, ordinal)

    first = "Install the tool. Then run the setup command once to create the config file."
    second = "Then run the setup command once to create the config file. Edit it to add a key."
    ranked = [
        (1, chunk(11, 4, second)),
        (2, chunk(30, 0, "Another section entirely.", heading="Usage")),
        (3, chunk(10, 3, first)),
        (4, chunk(40, 9, "A far chunk of the same section.")),
    ]
    joined = passages(ranked, limit=2)
    assert [(p.number, p.ranks) for p in joined] == [(1, (3, 1)), (2, (2,))]
    text = joined[0].chunk.text
    assert text.count("Then run the setup command") == 1
    assert text.startswith("Install the tool.") and text.endswith("Edit it to add a key.")


def test_a_corrections_own_words_never_become_context_terms() -> None:
    """ "meant" (a form of "mean", already question scaffolding) is no term of the topic."""
    from ragchat.conversation.followup.terms import conversation_terms
    from ragchat.params import DEFAULT

    texts = ["A codicil amends a will.", "What a witness meant is for the court.", "Courts sit."]
    corpus = MemoryCorpus(enumerate(texts + [f"Wills and estates, part {n}." for n in range(9)]))
    topic = ("how do I make a will valid?", "no, I meant a codicil")
    terms = [t.text for t in conversation_terms(corpus, topic, "", DEFAULT.followup)]
    assert "codicil" in terms and "meant" not in terms
