"""Search: FTS query escaping against the real FTS5 table, RRF maths and anchoring by hand, and
hybrid retrieval on a real corpus finding what only one of its two retrievers can find."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import invoke, settings_for
from ragchat.ingest.pipeline import ingest
from ragchat.search.fts import build_match
from ragchat.search.fusion import Fused, fuse, rrf_scores
from ragchat.search.hybrid import SearchRequest, search
from ragchat.store import library
from ragchat.store.db import open_db

# --- FTS escaping ----------------------------------------------------------------------------

HOSTILE = [
    '"', '"unbalanced', "*", "wit*", "AND OR NOT", "NEAR(a b)", "-foo", "title:foo", "col:", "(", ")",
    "^", "'", ";DROP TABLE chunks;--", "Zürich", "日本語の文書", "🔥🎉", "", "   ", "?!...,;:",
    "the and of", 'witness" OR "*', "will AND", "NOT will", "heading:wills", "{text}: witness",
    "a - b", "O'Brien's will", "witness NEAR/2 will", "x" * 500, "will " * 60,
]

NOTHING_SEARCHABLE = ['"', "*", "AND OR NOT", "(", ")", "^", "'", "🔥🎉", "", "   ", "?!...,;:", "the and of"]


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
    assert result.exit_code == 0, result.output
    assert "Error" not in result.output


# --- RRF maths -------------------------------------------------------------------------------


def test_rrf_hand_computed() -> None:
    # normalised: (0.7/(60+rv) + 0.3/(60+rf)) / (1.0/61)
    scores = rrf_scores([1, 2, 3], [2, 1, 4])
    assert scores == pytest.approx({
        1: 0.7 + 0.3 * 61 / 62,
        2: 0.7 * 61 / 62 + 0.3,
        3: 0.7 * 61 / 63,  # only in the vector list
        4: 0.3 * 61 / 63,  # only in the FTS list
    })


def test_rank_one_in_both_lists_scores_exactly_one() -> None:
    assert rrf_scores([7], [7]) == pytest.approx({7: 1.0})
    assert rrf_scores([7, 8], [7], k=10, vector_weight=0.5, fts_weight=2.0)[7] == pytest.approx(1.0)


def test_rrf_other_k_and_weights() -> None:
    assert rrf_scores([1, 2], [], k=10, vector_weight=1.0, fts_weight=0.0) == pytest.approx(
        {1: 1.0, 2: 11 / 12}
    )
    assert rrf_scores([], [5, 6], vector_weight=0.0, fts_weight=1.0) == pytest.approx({5: 1.0, 6: 61 / 62})
    assert rrf_scores([], []) == {}


def test_duplicate_ids_keep_their_first_rank() -> None:
    scores = rrf_scores([5, 6, 5], [9, 9])
    assert scores == pytest.approx({5: 0.7, 6: 0.7 * 61 / 62, 9: 0.3})


@pytest.mark.parametrize("weights", [(0.0, 0.0), (-0.5, 0.5), (-1.0, 0.0)])
def test_rrf_needs_a_positive_weight(weights: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="weight"):
        rrf_scores([1], [1], vector_weight=weights[0], fts_weight=weights[1])


def test_fuse_orders_by_score_without_anchors() -> None:
    document_of = {1: 10, 2: 10, 3: 20, 4: 30}
    fused = fuse([1, 2, 3], [3, 4], document_of)
    assert [item.chunk_id for item in fused] == [3, 1, 2, 4]
    assert fused[0] == Fused(3, 20, 3, 1, pytest.approx(0.7 * 61 / 63 + 0.3), 0.0,
                             pytest.approx(0.7 * 61 / 63 + 0.3), False)
    assert all(item.boost == 0.0 and not item.anchored and item.score == item.rrf for item in fused)
    assert [(item.vector_rank, item.fts_rank) for item in fused] == [(3, 1), (1, None), (2, None), (None, 2)]


def test_anchor_boost_adds_exactly_the_boost() -> None:
    document_of = {1: 10, 2: 10, 3: 20, 4: 20, 5: 30}
    plain = {item.chunk_id: item for item in fuse([1, 2, 3, 5], [4, 1], document_of)}
    fused = fuse([1, 2, 3, 5], [4, 1], document_of, anchor_documents={20}, boost=0.3)
    by_id = {item.chunk_id: item for item in fused}
    for chunk_id in (3, 4):
        item = by_id[chunk_id]
        assert item.anchored and item.boost == 0.3
        assert item.rrf == plain[chunk_id].rrf
        assert item.score == item.rrf + 0.3
    for chunk_id in (1, 2, 5):
        assert by_id[chunk_id] == plain[chunk_id]
    # unboosted: 1 (0.995) > 2 (0.689) > 3 (0.678) > 5 (0.667) > 4 (0.3);
    # boosted, 3 (0.978) passes 2 and 4 (0.6) stays below 5: a nudge, not a takeover
    assert [item.chunk_id for item in plain.values()] == [1, 2, 3, 5, 4]
    assert [item.chunk_id for item in fused] == [1, 3, 2, 5, 4]
    assert by_id[3].score == pytest.approx(0.7 * 61 / 63 + 0.3)


def test_a_small_boost_does_not_lift_an_irrelevant_anchored_chunk() -> None:
    document_of = {1: 10, 2: 20}
    fused = fuse([1] + list(range(100, 140)) + [2], [1], {**document_of, **{i: 99 for i in range(100, 140)}},
                 anchor_documents={20}, boost=0.1)
    assert fused[0].chunk_id == 1
    assert [item.chunk_id for item in fused].index(2) > 1


def test_fuse_breaks_ties_by_chunk_id() -> None:
    document_of = {9: 1, 4: 1, 6: 2, 2: 3}
    fused = fuse([9, 6], [4, 2], document_of, vector_weight=0.5, fts_weight=0.5)
    assert [(item.chunk_id, round(item.score, 6)) for item in fused] == [
        (4, 0.5), (9, 0.5), (2, round(0.5 * 61 / 62, 6)), (6, round(0.5 * 61 / 62, 6))
    ]
    boosted = fuse([9, 6], [4, 2], document_of, vector_weight=0.5, fts_weight=0.5,
                   anchor_documents={2, 3}, boost=0.25)
    assert [item.chunk_id for item in boosted] == [2, 6, 4, 9]


# --- hybrid search on a real corpus ----------------------------------------------------------

CORPUS = {
    "beekeeping.md": (
        "# Beekeeping basics\n\nA healthy colony needs a dry hive, a laying queen and enough stores "
        "of honey for winter. Inspect the brood frames every week in spring and look for swarm cells. "
        "Smoke calms the bees before you open the hive. The replacement frame kit we use is catalogued "
        "as XQ-7793-B at the cooperative.\n"
    ),
    "parts_catalogue.md": (
        "# Spare parts catalogue\n\nPump housing: ZR-4410-K. Valve seal: PL-2281-Q. Drive belt: "
        "MV-5567-T. Filter cartridge: KT-9034-A. Gasket set: JD-1187-R.\n"
    ),
    "serial_numbers.txt": (
        "Serial numbers\n\nUnits shipped in March: SN-3321-C, SN-8876-D, SN-4409-F, TQ-6612-H and WB-2290-L.\n"
    ),
    "upkeep.txt": (
        "Automobile upkeep\n\nChange the engine oil of your automobile every ten thousand kilometres. "
        "Check the tyre pressure of the vehicle monthly and rotate the tyres each season.\n"
    ),
    "compost.md": (
        "# Composting at home\n\nCompost turns kitchen scraps into humus. A compost heap needs greens "
        "and browns. Turn the compost pile every week so it stays aerobic.\n"
    ),
    "bread.html": (
        "<html><head><title>Sourdough</title></head><body><h1>Sourdough</h1><p>Feed the starter with "
        "flour and water. Knead the dough and let it rise overnight before baking the loaf.</p></body></html>"
    ),
    "tax.md": (
        "# Filing income tax\n\nSubmit the annual return before the deadline. Keep receipts for "
        "deductible expenses such as medical costs and retirement contributions.\n"
    ),
    "hiking.md": (
        "# Mountain hiking\n\nPack water, a map and a warm layer. Start early to avoid afternoon storms "
        "on exposed ridges and tell someone your route.\n"
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
        hits = search(db, embedder, settings_for(db_path), SearchRequest(query, query, k=k, mode=mode))
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
        hits = search(db, embedder, settings_for(corpus_db), SearchRequest("XQ-7793-B", "XQ-7793-B", k=3))
        fts_only = search(db, None, settings_for(corpus_db), SearchRequest("compost", "compost", k=3, mode="fts"))
    finally:
        db.close()
    top = hits[0]
    assert (top.chunk.path, top.fts_rank) == ("beekeeping.md", 1)
    assert top.vector_rank is not None and top.vector_rank > 1
    assert top.score == pytest.approx((0.7 / (60 + top.vector_rank) + 0.3 / 61) * 61)
    assert -1.0 <= top.similarity <= 1.0
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert [(h.chunk.path, h.vector_rank, h.fts_rank, h.similarity, h.score) for h in fts_only] == [
        ("compost.md", None, 1, None, pytest.approx(1.0))
    ]


JSON_KEYS = {"rank", "score", "vector_rank", "fts_rank", "document", "heading", "snippet", "chunk_id"}


def test_cli_search_json_lines(corpus_db: Path, runner) -> None:
    result = invoke(runner, "search", "XQ-7793-B", "--json", "-k", "3", "--db", corpus_db)
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in result.stdout.splitlines()]
    assert len(rows) == 3
    assert all(JSON_KEYS <= set(row) for row in rows)
    assert [row["rank"] for row in rows] == [1, 2, 3]
    assert rows[0]["document"] == "beekeeping.md" and rows[0]["fts_rank"] == 1
    # the snippet is the chunk's opening (flattened, at most 200 characters), not the matched part
    assert len(rows[0]["snippet"]) <= 200 and rows[0]["snippet"].startswith("A healthy colony needs a dry hive")
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
    [(["--mode", "semantic"], "mode must be hybrid, vector or fts"), (["-k", "0"], "greater than or equal to 1"),
     (["--bogus"], "No such option: --bogus")],
)
def test_cli_search_usage_errors_exit_2(corpus_db: Path, runner, args: list[str], message: str) -> None:
    bad = invoke(runner, "search", "x", *args, "--db", corpus_db)
    assert bad.exit_code == 2, bad.output
    assert message in bad.output and "unexpected" not in bad.output


@pytest.mark.parametrize("mode", ["hybrid", "vector", "fts"])
def test_search_on_an_empty_library_says_to_ingest_first(tmp_path: Path, runner, embedder, mode: str) -> None:
    path = tmp_path / "empty.db"
    db = open_db(path)
    try:
        assert search(db, embedder, settings_for(path), SearchRequest("wills", "wills", mode=mode)) == []
    finally:
        db.close()
    for extra in ([], ["--json"]):
        result = invoke(runner, "search", "who may witness a will", "--mode", mode, *extra, "--db", path)
        assert result.exit_code == 1 and result.stdout == ""
        assert result.output.count("\n") == 1 and "the library is empty: run `ragchat ingest PATH` first" in result.output
