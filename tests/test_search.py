"""Search: FTS query escaping against the real FTS5 table, RRF maths and anchoring by hand, and
hybrid retrieval on a real corpus finding what only one of its two retrievers can find."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import invoke, settings_for

from ragchat.conversation.corpus import CorpusView
from ragchat.ingest.pipeline import ingest
from ragchat.search.fts import build_match
from ragchat.search.hybrid import SearchRequest, search
from ragchat.store import library
from ragchat.store.db import open_db

# --- FTS escaping ----------------------------------------------------------------------------

HOSTILE = [
    '"',
    '"unbalanced',
    "*",
    "wit*",
    "AND OR NOT",
    "NEAR(a b)",
    "-foo",
    "title:foo",
    "col:",
    "(",
    ")",
    "^",
    "'",
    ";DROP TABLE chunks;--",
    "Zürich",
    "日本語の文書",
    "🔥🎉",
    "",
    "   ",
    "?!...,;:",
    "the and of",
    'witness" OR "*',
    "will AND",
    "NOT will",
    "heading:wills",
    "{text}: witness",
    "a - b",
    "O'Brien's will",
    "witness NEAR/2 will",
    "x" * 500,
    "will " * 60,
]

NOTHING_SEARCHABLE = [
    '"',
    "*",
    "AND OR NOT",
    "(",
    ")",
    "^",
    "'",
    "🔥🎉",
    "",
    "   ",
    "?!...,;:",
    "the and of",
]


@pytest.mark.parametrize("query", HOSTILE)
def test_build_match_is_safe_against_the_real_fts_table(corpus_db: Path, query: str) -> None:
    match = build_match(query)
    if query in NOTHING_SEARCHABLE:
        assert match is None
        return
    assert match is not None
    db = open_db(corpus_db)
    try:
        hits = library.fts_search(db, match, 10)  # raises on an FTS5 syntax error
    finally:
        db.close()
    assert all(isinstance(chunk_id, int) and isinstance(score, float) for chunk_id, score in hits)


@pytest.mark.parametrize(
    "query, expected",
    [
        ('"unbalanced', '"unbalanced"'),
        ("wit*", '"wit"'),  # no prefix queries: * is dropped
        ("-foo", '"foo"'),  # no NOT
        ("title:foo", '"title foo" OR "title" OR "foo"'),  # no column filters
        ("NEAR(a b)", '"near b" OR "near" OR "b"'),
        (";DROP TABLE chunks;--", '"drop table chunks" OR "drop" OR "table" OR "chunks"'),
        ("Zürich", '"zürich"'),
        ("日本語の文書", '"日本語の文書"'),
        ("sourdough starter, dough", '"sourdough starter" OR "sourdough" OR "starter" OR "dough"'),
        # "will" is no stop word: in a library of wills it is the subject (BM25's idf weighs it)
        ("who may witness a will", '"witness will" OR "witness" OR "will"'),
        ('witness" OR "*', '"witness"'),
    ],
)
def test_build_match_exact_expressions(query: str, expected: str) -> None:
    assert build_match(query) == expected


def test_build_match_caps_the_number_of_terms() -> None:
    match = build_match(" ".join(f"term{n}x" for n in range(40)))
    assert match is not None and match.count(" OR ") == 15


def test_hostile_queries_still_find_what_they_name(corpus_db: Path) -> None:
    db = open_db(corpus_db)
    try:
        plain = library.fts_search(db, build_match("hive"), 5)
        hostile = library.fts_search(db, build_match('"hive*" AND NOT (title:'), 5)
        found = [chunk.path for chunk in library.chunks_by_ids(db, [i for i, _ in plain]).values()]
    finally:
        db.close()
    assert plain and hostile == plain
    assert found == ["beekeeping.md"]


@pytest.mark.parametrize("query", HOSTILE)
def test_cli_fts_search_survives_hostile_queries(corpus_db: Path, runner, query: str) -> None:
    # `--` so that a query starting with "-" is a query, as a user would have to type it too
    result = invoke(runner, "search", "--mode", "fts", "--db", corpus_db, "--", query)
    if not query.strip():  # an empty query is refused like `ask ""` (tests/test_cli_conventions.py)
        assert result.exit_code == 1 and result.output.startswith("Error: empty query")
        return
    assert result.exit_code == 0, result.output
    assert "Error" not in result.output


# --- RRF maths -------------------------------------------------------------------------------


# --- hybrid search on a real corpus ----------------------------------------------------------

CORPUS = {
    "beekeeping.md": (
        "# Beekeeping basics\n\nA healthy colony needs a dry hive, a laying queen and enough "
        "stores of honey for winter. Inspect the brood frames every week in spring and look for "
        "swarm cells. Smoke calms the bees before you open the hive. The replacement frame kit "
        "we use is catalogued as XQ-7793-B at the cooperative.\n"
    ),
    "parts_catalogue.md": (
        "# Spare parts catalogue\n\nPump housing: ZR-4410-K. Valve seal: PL-2281-Q. Drive belt: "
        "MV-5567-T. Filter cartridge: KT-9034-A. Gasket set: JD-1187-R.\n"
    ),
    "serial_numbers.txt": (
        "Serial numbers\n\nUnits shipped in March: SN-3321-C, SN-8876-D, SN-4409-F, TQ-6612-H "
        "and WB-2290-L.\n"
    ),
    "upkeep.txt": (
        "Automobile upkeep\n\nChange the engine oil of your automobile every ten thousand "
        "kilometres. Check the tyre pressure of the vehicle monthly and rotate the tyres each "
        "season.\n"
    ),
    "compost.md": (
        "# Composting at home\n\nCompost turns kitchen scraps into humus. A compost heap needs "
        "greens and browns. Turn the compost pile every week so it stays aerobic.\n"
    ),
    "bread.html": (
        "<html><head><title>Sourdough</title></head><body><h1>Sourdough</h1><p>Feed the starter "
        "with flour and water. Knead the dough and let it rise overnight before baking the "
        "loaf.</p></body></html>"
    ),
    "tax.md": (
        "# Filing income tax\n\nSubmit the annual return before the deadline. Keep receipts for "
        "deductible expenses such as medical costs and retirement contributions.\n"
    ),
    "hiking.md": (
        "# Mountain hiking\n\nPack water, a map and a warm layer. Start early to avoid afternoon "
        "storms on exposed ridges and tell someone your route.\n"
    ),
}


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    root = tmp_path_factory.mktemp("search")
    docs = root / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text)
    path = root / "db" / "ragchat.db"
    db = open_db(path)
    ingest(db, settings_for(path), [docs], lambda: embedder)
    db.close()
    return path


def paths(db_path: Path, embedder, query: str, mode: str, k: int) -> list[str]:
    db = open_db(db_path)
    try:
        hits = search(
            db, embedder, settings_for(db_path), SearchRequest(query, query, k=k, mode=mode)
        )
    finally:
        db.close()
    assert [hit.rank for hit in hits] == list(range(1, len(hits) + 1))
    return [hit.chunk.path for hit in hits]


def test_an_identifier_only_fts_can_find(corpus_db: Path, embedder) -> None:
    query = "XQ-7793-B"
    assert "beekeeping.md" not in paths(corpus_db, embedder, query, "vector", k=2)
    assert paths(corpus_db, embedder, query, "fts", k=2) == ["beekeeping.md"]
    assert paths(corpus_db, embedder, query, "hybrid", k=2)[0] == "beekeeping.md"


def test_a_paraphrase_only_the_vectors_can_find(corpus_db: Path, embedder) -> None:
    query = "motor car servicing"
    assert "upkeep.txt" not in paths(corpus_db, embedder, query, "fts", k=3)
    assert paths(corpus_db, embedder, query, "vector", k=3)[0] == "upkeep.txt"
    assert paths(corpus_db, embedder, query, "hybrid", k=3)[0] == "upkeep.txt"


def test_hits_carry_their_ranks_and_similarity(corpus_db: Path, embedder) -> None:
    db = open_db(corpus_db)
    try:
        hits = search(
            db, embedder, settings_for(corpus_db), SearchRequest("XQ-7793-B", "XQ-7793-B", k=3)
        )
        fts_only = search(
            db, None, settings_for(corpus_db), SearchRequest("compost", "compost", k=3, mode="fts")
        )
    finally:
        db.close()
    top = hits[0]
    assert (top.chunk.path, top.fts_rank) == ("beekeeping.md", 1)
    assert top.vector_rank is not None and top.vector_rank > 1
    assert top.score == pytest.approx((0.7 / (20 + top.vector_rank) + 0.3 / 21) * 21)  # rrf_k = 20
    assert -1.0 <= top.similarity <= 1.0
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert [(h.chunk.path, h.vector_rank, h.fts_rank, h.similarity, h.score) for h in fts_only] == [
        ("compost.md", None, 1, None, pytest.approx(1.0))
    ]


JSON_KEYS = {
    "rank",
    "score",
    "vector_rank",
    "fts_rank",
    "document",
    "heading",
    "snippet",
    "chunk_id",
}


def test_cli_search_json_lines(corpus_db: Path, runner) -> None:
    result = invoke(runner, "search", "XQ-7793-B", "--json", "-k", "3", "--db", corpus_db)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    assert all(JSON_KEYS <= set(row) for row in rows)
    assert [row["rank"] for row in rows] == [1, 2, 3]
    assert rows[0]["document"] == "beekeeping.md" and rows[0]["fts_rank"] == 1
    # the snippet is the chunk's opening (flattened, at most 200 characters), not the matched part
    assert len(rows[0]["snippet"]) <= 200 and rows[0]["snippet"].startswith(
        "A healthy colony needs a dry hive"
    )
    assert rows[0]["heading"] == ""
    assert [row["score"] for row in rows] == sorted((row["score"] for row in rows), reverse=True)
    db = open_db(corpus_db)
    try:
        stored = library.chunks_by_ids(db, [row["chunk_id"] for row in rows])
    finally:
        db.close()
    assert [stored[row["chunk_id"]].path for row in rows] == [row["document"] for row in rows]


def test_cli_search_table(corpus_db: Path, runner) -> None:
    result = invoke(runner, "search", "sourdough starter", "-k", "2", "--db", corpus_db)
    assert result.exit_code == 0, result.output
    assert "bread.html" in result.output


@pytest.mark.parametrize(
    "args, message",
    [
        (["--mode", "semantic"], "'semantic' is not one of 'hybrid', 'vector', 'fts'"),
        (["-k", "0"], "must be from 1 to 4096, not 0"),
        (["--bogus"], "No such option: --bogus"),
    ],
)
def test_cli_search_usage_errors_exit_2(
    corpus_db: Path, runner, args: list[str], message: str
) -> None:
    bad = invoke(runner, "search", "x", *args, "--db", corpus_db)
    assert bad.exit_code == 2, bad.output
    assert message in bad.output and "unexpected" not in bad.output


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fts"])
def test_search_on_an_empty_library_says_to_ingest_first(
    tmp_path: Path, runner, embedder, mode: str
) -> None:
    path = tmp_path / "empty.db"
    db = open_db(path)
    try:
        assert (
            search(db, embedder, settings_for(path), SearchRequest("wills", "wills", mode=mode))
            == []
        )
    finally:
        db.close()
    for extra in ([], ["--json"]):
        result = invoke(
            runner, "search", "who may witness a will", "--mode", mode, *extra, "--db", path
        )
        assert result.exit_code == 1 and result.stdout == ""
        assert (
            result.output.count("\n") == 1
            and "the library is empty: run `ragchat ingest PATH` first" in result.output
        )


def test_corpus_statistics_count_a_term_as_a_phrase_in_the_real_fts_table(corpus_db: Path) -> None:
    """The store-backed corpus view counts "laying queen" where the words stand together, as the
    in-memory one does: a name is as rare as the name, not as common as its most common word."""
    db = open_db(corpus_db)
    try:
        view = CorpusView(db)
        assert view.chunk_frequency("laying queen") == 1
        assert view.chunk_frequency("queen laying") == 0  # both words in one chunk, not as a phrase
        assert view.chunk_frequency("compost") >= view.chunk_frequency("compost heap") == 1
        assert view.idf("compost heap") >= view.idf("compost")
        assert view.chunk_frequency("the of") == 0  # nothing searchable
    finally:
        db.close()
