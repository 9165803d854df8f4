"""Weighted RRF over several ranked lists, soft anchoring and the protected first hit (pure)."""

from __future__ import annotations

from functools import partial

import pytest
from helpers import fuse

from ragchat.search import fusion
from ragchat.search.fusion import Anchoring, Fused, RankedList

rrf_scores = partial(fusion.rrf_scores, k=20)


def lists(
    vector: list[int], fts: list[int], vector_weight: float = 0.7, fts_weight: float = 0.3
) -> list[RankedList]:
    return [
        RankedList("question/vector", "vector", tuple(vector), vector_weight),
        RankedList("question/fts", "fts", tuple(fts), fts_weight),
    ]


def test_rrf_hand_computed() -> None:
    scores = rrf_scores(lists([1, 2, 3], [2, 1, 4]))
    assert scores == pytest.approx(
        {
            1: 0.7 + 0.3 * 21 / 22,
            2: 0.7 * 21 / 22 + 0.3,
            3: 0.7 * 21 / 23,  # only in the vector list
            4: 0.3 * 21 / 23,  # only in the FTS list
        }
    )


def test_rank_one_in_every_list_scores_exactly_one() -> None:
    assert rrf_scores(lists([7], [7])) == pytest.approx({7: 1.0})
    assert rrf_scores(lists([7, 8], [7], 0.5, 2.0), k=10)[7] == pytest.approx(1.0)
    three = [*lists([7], [7]), RankedList("context/vector", "vector", (7, 1), 0.4)]
    assert rrf_scores(three)[7] == pytest.approx(1.0)


def test_other_k_and_weights_and_empty_lists() -> None:
    assert rrf_scores(lists([1, 2], [], 1.0, 0.0), k=10) == pytest.approx({1: 1.0, 2: 11 / 12})
    assert rrf_scores(lists([], [5, 6], 0.0, 1.0)) == pytest.approx({5: 1.0, 6: 21 / 22})
    assert rrf_scores(lists([], [])) == {}


def test_duplicate_ids_keep_their_first_rank() -> None:
    assert rrf_scores(lists([5, 6, 5], [9, 9])) == pytest.approx({5: 0.7, 6: 0.7 * 21 / 22, 9: 0.3})


@pytest.mark.parametrize("weights", [(0.0, 0.0), (-0.5, 0.0), (-1.0, -1.0)])
def test_rrf_needs_a_positive_weight(weights: tuple[float, float]) -> None:
    with pytest.raises(ValueError, match="weight"):
        rrf_scores(lists([1], [1], *weights))


def test_a_weighted_context_list_adds_in_proportion() -> None:
    base = lists([1, 2], [1, 2])
    context = RankedList(
        "context/vector", "vector", (2, 1), 0.35
    )  # half the question's vector weight
    scores = rrf_scores([*base, context])
    total = (0.7 + 0.3 + 0.35) / 21
    assert scores[2] == pytest.approx((0.7 / 22 + 0.3 / 22 + 0.35 / 21) / total)
    assert scores[1] > scores[2], (
        "a context list weighing less than the question's own cannot overturn it"
    )
    assert (
        fuse([*base, RankedList("context/vector", "vector", (2, 1), 0.0)], {1: 1, 2: 1})[0].chunk_id
        == 1
    )


def test_fuse_orders_by_score_and_reports_best_ranks_per_kind() -> None:
    document_of = {1: 10, 2: 10, 3: 20, 4: 30}
    fused = fuse(lists([1, 2, 3], [3, 4]), document_of)
    assert [item.chunk_id for item in fused] == [3, 1, 2, 4]
    assert fused[0] == Fused(
        3,
        20,
        3,
        1,
        pytest.approx(0.7 * 21 / 23 + 0.3),
        0.0,
        pytest.approx(0.7 * 21 / 23 + 0.3),
        False,
        {"question/vector": 3, "question/fts": 1},
    )
    assert all(item.boost == 0.0 and not item.anchored and item.score == item.rrf for item in fused)
    assert [(item.vector_rank, item.fts_rank) for item in fused] == [
        (3, 1),
        (1, None),
        (2, None),
        (None, 2),
    ]
    more = fuse(
        [*lists([1, 2, 3], [3, 4]), RankedList("context/vector", "vector", (4,), 0.1)], document_of
    )
    assert next(item for item in more if item.chunk_id == 4).vector_rank == 1


def test_anchor_boost_adds_exactly_the_boost_within_reach() -> None:
    document_of = {1: 10, 2: 10, 3: 20, 4: 20, 5: 30}
    plain = {item.chunk_id: item for item in fuse(lists([1, 2, 3, 5], [4, 1]), document_of)}
    fused = fuse(
        lists([1, 2, 3, 5], [4, 1]),
        document_of,
        anchoring=Anchoring(frozenset({20}), 0.3, margin=1.0),
    )
    by_id = {item.chunk_id: item for item in fused}
    for chunk_id in (3, 4):
        assert by_id[chunk_id].anchored and by_id[chunk_id].boost == 0.3
        assert (
            by_id[chunk_id].score == by_id[chunk_id].rrf + 0.3
            and by_id[chunk_id].rrf == plain[chunk_id].rrf
        )
    for chunk_id in (1, 2, 5):
        assert by_id[chunk_id] == plain[chunk_id]
    assert [item.chunk_id for item in fused] == [1, 3, 2, 5, 4]


def test_the_boost_cannot_lift_a_chunk_no_list_ranks_well() -> None:
    document_of = {1: 10, 2: 20, **{i: 99 for i in range(100, 140)}}
    far = fuse(
        lists([1, *range(100, 140), 2], [1]),
        document_of,
        anchoring=Anchoring(frozenset({20}), 5.0, reach=10),
    )
    assert not next(item for item in far if item.chunk_id == 2).anchored
    assert [item.chunk_id for item in far][-1] == 2, (
        "ranked 42nd, it stays last despite a huge boost"
    )
    near = fuse(
        lists([1, *range(100, 105), 2], [1]),
        document_of,
        anchoring=Anchoring(frozenset({20}), 0.3, reach=10),
    )
    assert next(item for item in near if item.chunk_id == 2).anchored


def test_chunks_the_last_answer_used_get_no_boost() -> None:
    fused = fuse(
        lists([1, 2], [1, 2]),
        {1: 5, 2: 5},
        anchoring=Anchoring(frozenset({5}), 0.3, exclude=frozenset({1}), keep=0),
    )
    assert [(item.chunk_id, item.anchored) for item in fused] == [(2, True), (1, False)]


def test_a_used_chunk_the_question_ranks_first_keeps_the_boost() -> None:
    """The question asks about the text the last answer used: it stays first; a used chunk
    further down still gets no boost."""
    anchoring = Anchoring(frozenset({5}), 0.3, exclude=frozenset({1, 3}))
    fused = fuse(lists([1, 2, 3], [1, 3, 2]), {1: 5, 2: 5, 3: 5}, anchoring=anchoring)
    assert [(item.chunk_id, item.anchored) for item in fused] == [
        (1, True),
        (2, True),
        (3, False),
    ]
    assert anchoring.keep == 1, "the default"


@pytest.mark.parametrize(("position", "expected"), [(0, [7, 1, 2, 3]), (3, [1, 2, 7, 3])])
def test_the_questions_confident_hit_keeps_a_top_three_place(
    position: int, expected: list[int]
) -> None:
    ranked = [1, 2, 3]
    ranked.insert(position, 7)
    context = RankedList("context/vector", "vector", tuple(ranked), 0.7)
    question = RankedList("question/vector", "vector", (7,), 0.01)
    fused = fuse([context, question], {i: i for i in ranked}, protect=7)
    assert [item.chunk_id for item in fused] == expected


def test_ties_break_by_chunk_id() -> None:
    document_of = {9: 1, 4: 1, 6: 2, 2: 3}
    fused = fuse(lists([9, 6], [4, 2], 0.5, 0.5), document_of)
    assert [(item.chunk_id, round(item.score, 6)) for item in fused] == [
        (4, 0.5),
        (9, 0.5),
        (2, round(0.5 * 21 / 22, 6)),
        (6, round(0.5 * 21 / 22, 6)),
    ]
