"""The heuristic's reading and a model's, combined (conversation/combine.py): pure, no model."""

from __future__ import annotations

import pytest
from test_stages import SETTINGS, turn_context

from ragchat.conversation.combine import Evidence, combine, repeats_the_user, same_query, trust
from ragchat.conversation.models import Reformulation
from ragchat.conversation.ollama_reformulator import ModelReading
from ragchat.conversation.plan import plan
from ragchat.params import DEFAULT

QUESTION = "what age must a witness be?"
REWRITE = "What age must a witness to a will be in South Africa?"
MODEL_LEAD, CUE_NEED = DEFAULT.combine.model_lead, DEFAULT.combine.cue_need
NEW_TOPIC_NEED = DEFAULT.followup.new_topic_need


def heuristic(
    need: float = 0.6, *, follow_up: bool = True, shift: bool = False, meta: bool = False
) -> Reformulation:
    return Reformulation(
        semantic_query=f"{QUESTION} (will)",
        keyword_query="witness, will",
        is_follow_up=follow_up,
        is_meta=meta,
        topic_shift=shift,
        reasoning="follow-up",
        reformulator="heuristic",
        context_need=need,
    )


def reading(
    query: str = REWRITE, *, follow_up: bool = True, meta: bool = False, shift: bool = False
) -> ModelReading:
    return ModelReading(query, follow_up, meta, shift, "ollama:m")


def test_same_query_ignores_case_and_punctuation_only() -> None:
    assert same_query("What age must a witness be?", "what age must a  witness be")
    assert not same_query("What age must a witness be?", "What age must a will's witness be?")


def test_trust_follows_how_much_closer_the_rewrite_comes() -> None:
    values = [
        trust(Evidence(0.5, best), params=DEFAULT.combine) for best in (0.3, 0.45, 0.5, 0.55, 0.7)
    ]
    assert values == sorted(values) and values[0] == 0.0 and values[-1] == 1.0
    assert trust(Evidence(0.5, None), params=DEFAULT.combine) == 0.0


def test_no_model_leaves_the_heuristic_alone() -> None:
    assert combine(heuristic(), None, Evidence(0.4, None), params=DEFAULT) == heuristic()


def test_an_echo_adds_nothing_and_changes_no_decision() -> None:
    """The question back with no flags (or any flags that need the question alone): the
    heuristic's reading stands, and no list of the model's joins."""
    combined = combine(
        heuristic(), reading(QUESTION, follow_up=False), Evidence(0.4, None), params=DEFAULT
    )
    assert combined.model_weight == 0.0 and combined.model_query == ""
    assert (
        combined.context_need,
        combined.is_follow_up,
        combined.topic_shift,
        combined.question_weight,
    ) == (0.6, True, False, 1.0)
    chosen = plan(turn_context(), combined, SETTINGS)
    assert not any(q.name.startswith("model/") for q in chosen.queries)
    assert chosen == plan(turn_context(), heuristic(), SETTINGS)


def test_a_rewrite_that_comes_much_closer_leads_and_carries_the_context() -> None:
    combined = combine(heuristic(), reading(), Evidence(0.3, 0.6), params=DEFAULT)
    assert combined.model_weight == MODEL_LEAD and combined.model_query == REWRITE
    assert (
        combined.context_need == 0.0
    )  # the rewrite carries the context: no heuristic lists, no anchoring
    chosen = plan(turn_context(best=0.3), combined, SETTINGS)
    weights = {q.name: q.weight for q in chosen.queries}
    assert (
        weights["model/vector"] > weights["question/vector"]
        and weights["model/fts"] > weights["question/fts"]
    )
    assert not any(name.startswith(("context/", "previous/")) for name in weights)
    assert chosen.anchoring.boost == 0.0


def test_a_rewrite_that_comes_less_close_counts_for_little() -> None:
    """A rewrite that drags an old subject in finds less than the question alone."""
    combined = combine(
        heuristic(0.2),
        reading(f"Is a will binding? {QUESTION}"),
        Evidence(0.7, 0.5),
        params=DEFAULT,
    )
    assert combined.model_weight == 0.0 and combined.context_need == pytest.approx(0.2)


def test_the_models_topic_shift_is_followed_unless_the_question_points_back() -> None:
    followed = combine(
        heuristic(0.4),
        reading(QUESTION, follow_up=False, shift=True),
        Evidence(0.6, None),
        params=DEFAULT,
    )
    assert (
        followed.topic_shift
        and not followed.is_follow_up
        and followed.context_need == NEW_TOPIC_NEED
    )
    assert plan(turn_context(best=0.6), followed, SETTINGS).kind == "search"  # no anchoring
    pointing = heuristic(
        CUE_NEED
    )  # "what age must its witness be?": a pointer back, or the conversation's terms
    kept = combine(
        pointing,
        reading(QUESTION, follow_up=False, shift=True),
        Evidence(0.3, None),
        params=DEFAULT,
    )
    assert not kept.topic_shift and kept.is_follow_up and kept.context_need == CUE_NEED


def test_the_models_meta_flag_needs_a_question_that_says_little_alone() -> None:
    weak = combine(
        heuristic(),
        reading("Summarize the rules for witnesses", meta=True),
        Evidence(0.2, 0.2),
        params=DEFAULT,
    )
    assert weak.is_meta and weak.is_follow_up
    strong = combine(
        heuristic(),
        reading("Summarize the rules for witnesses", meta=True),
        Evidence(0.8, 0.5),
        params=DEFAULT,
    )
    assert not strong.is_meta


@pytest.mark.parametrize(
    ("rewrite", "repeats"),
    [
        ("What age must a witness be", True),  # the question back
        (
            "Is a will binding? What age must a witness be?",
            True,
        ),  # the previous question put in front
        ("what age must a witness be? is a will binding", True),  # ... or behind
        ("What age must a witness to a will be?", False),  # a rewrite: resolved, not copied
        (
            "Is a will binding in law? What age must a witness be?",
            False,
        ),  # not a message the user typed
        ("Tell me about bees. What age must a witness be?", False),
    ],
)
def test_a_rewrite_that_only_repeats_the_user_adds_nothing(rewrite: str, repeats: bool) -> None:
    assert repeats_the_user(rewrite, QUESTION, ("Is a will binding?", "Why?")) is repeats
