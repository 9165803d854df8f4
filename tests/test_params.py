"""ragchat/params.py: the tuning numbers as one value, replaced by name, and reaching every stage
that reads them (the heuristic, the plan, the combination with a model, the coverage decision).
No database, no model; `ragchat eval --param` itself is tested in test_evaluate.py."""

from __future__ import annotations

import pytest
from test_combine import heuristic, reading
from test_stages import CORPUS, SETTINGS, VECTOR, reformulation, turn_context

from ragchat.config import FIELD_TYPES, Settings
from ragchat.conversation import combine as combination
from ragchat.conversation.coverage import Evidence, not_covered
from ragchat.conversation.followup.heuristic import HeuristicReformulator
from ragchat.conversation.models import Exchange, ReformulationInput
from ragchat.conversation.plan import Ablations, plan
from ragchat.errors import ConfigError
from ragchat.params import DEFAULT, Params, names, with_values


def test_every_parameter_is_a_number_with_a_dotted_name() -> None:
    known = names(DEFAULT)
    assert len(known) >= 40 and all("." in name for name in known)
    assert all(type(value) in (int, float) for value in known.values())
    assert known["followup.decay"] == 0.6 and known["plan.anchor_reach"] == 10


def test_with_values_replaces_what_is_named_and_keeps_the_rest() -> None:
    changed = with_values(DEFAULT, ["followup.decay=0.5", "plan.anchor_reach=5"])
    assert changed.followup.decay == 0.5 and changed.plan.anchor_reach == 5
    assert isinstance(changed.plan.anchor_reach, int)
    assert DEFAULT.followup.decay == 0.6  # the default is a frozen value: untouched
    rest = {
        name: value
        for name, value in names(changed).items()
        if name not in {"followup.decay", "plan.anchor_reach"}
    }
    assert rest == {name: value for name, value in names(DEFAULT).items() if name in rest}
    assert with_values(DEFAULT, []) == DEFAULT == Params()
    with pytest.raises(ConfigError, match="unknown parameter 'plan.reach'"):
        with_values(DEFAULT, ["plan.reach=3"])


def test_settings_carry_the_defaults_and_no_file_sets_them() -> None:
    assert Settings().params == DEFAULT
    assert "params" not in FIELD_TYPES  # not read from ragchat.toml or RAGCHAT_*, not in `config`


def tuned(*assignments: str) -> Params:
    return with_values(DEFAULT, list(assignments))


def test_the_plan_reads_its_numbers() -> None:
    context = turn_context(best=0.6, margin=0.1)
    assert plan(context, reformulation(1.0), SETTINGS, Ablations()).protect == 31
    stricter = SETTINGS.replace(params=tuned("plan.confident=0.7"))
    assert plan(context, reformulation(1.0), stricter, Ablations()).protect is None
    reach = SETTINGS.replace(params=tuned("plan.anchor_reach=3"))
    assert plan(context, reformulation(1.0), reach, Ablations()).anchoring.reach == 3


def test_the_combination_reads_its_numbers() -> None:
    evidence = combination.Evidence(0.3, 0.6)  # the rewrite comes much closer: fully trusted
    assert combination.combine(heuristic(), reading(), evidence, params=DEFAULT).model_weight == 2.0
    assert (
        combination.combine(
            heuristic(), reading(), evidence, tuned("combine.model_lead=1.5")
        ).model_weight
        == 1.5
    )


def test_the_coverage_decision_reads_its_numbers() -> None:
    evidence = Evidence(best=0.5, subject=0.5, margin=0.0, retrieved=0.5, rare=0.0, agreement=0.0)
    assert not_covered(evidence, params=DEFAULT.coverage)  # 0.5 < 0.52
    assert not not_covered(evidence, tuned("coverage.threshold=0.4").coverage)


def test_the_heuristic_reads_its_numbers() -> None:
    """A follow-up cue on a question that comes close alone: need 1 - damping x closeness."""
    data = ReformulationInput(
        question="what age must its witness be?",
        last=Exchange("Is a will binding?", "Yes."),
        topic_questions=("Is a will binding?",),
        own_best=0.7,
    )
    assert HeuristicReformulator(CORPUS, params=DEFAULT.followup).reformulate(
        data, VECTOR
    ).context_need == pytest.approx(0.3)
    softer = tuned("followup.cue_closeness_damping=0.5").followup
    assert HeuristicReformulator(CORPUS, softer).reformulate(
        data, VECTOR
    ).context_need == pytest.approx(0.5)
