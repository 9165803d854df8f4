"""The heuristic's reading and the model's, combined: the model adds, it never replaces.

The heuristic always runs (it costs milliseconds). A model's rewrite joins the fusion as its own
lists, with a weight from evidence, not from the model's say-so:

- a rewrite that only repeats the user (the question again: an echo, or "it stands alone"; or the
  question with an earlier message of theirs put in front: a drift) adds nothing, since the plan
  already runs those queries, and its follow-up flag changes nothing;
- any other rewrite is trusted by how well it retrieves on its own next to the question: its best
  chunk against the question's best (`trust`), not at all when it keeps none of the question's own
  words (`fidelity`: it answers another question) or is absurdly long. A rewrite that resolves what
  the question left open comes closer to some chunk than the question did; one that drags an old
  subject in mostly does not. Trusted fully, the rewrite leads the ranking (model_lead x the
  question's weight), the heuristic's context lists and anchoring step back, since the rewrite
  carries the context itself, and a question that finds little alone yields too; not trusted, it
  adds nothing;
- the model's topic shift is followed unless the heuristic read the question as leaning on the
  conversation (a pointer back, or mostly the conversation's own terms: need >= cue_need); a
  followed shift keeps only the context a new topic keeps and no anchoring;
- a meta-request needs the heuristic's cue, or the model's flag on a question that says little
  on its own.
A useless model (echoing, drifting, flipping flags) therefore costs little, and a good one leads.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from ..params import CombineParams, Params
from ..text import stem, subject_words, words
from .followup.heuristic import own_closeness, own_weakness
from .models import Reformulation
from .ollama_reformulator import ModelReading


@dataclass(frozen=True)
class Evidence:
    """How well the question and the rewrite retrieve on their own (cosine of the best chunk)."""

    question_best: float
    rewrite_best: float | None  # None: no distinct rewrite was searched
    fidelity: float = 1.0  # 0: the rewrite keeps none of the question's words, or is absurd


def same_query(a: str, b: str) -> bool:
    """The same words in the same order, whatever the case and punctuation."""
    return _normalised(a) == _normalised(b)


def repeats_the_user(rewrite: str, question: str, earlier: tuple[str, ...]) -> bool:
    """Whether a rewrite is only what the user typed: the question itself, or an earlier message
    of theirs put before or after it, word for word. The plan already searches those (the
    question's own lists, the previous question with this one), so such a rewrite adds nothing."""
    if same_query(rewrite, question):
        return True
    text, own = _normalised(rewrite), _normalised(question)
    if not own or own not in (text[: len(own)], text[-len(own) :]):
        return False
    rest = (text[len(own) :] if text.startswith(own) else text[: -len(own)]).strip()
    return any(rest == _normalised(message) for message in earlier)


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.casefold()))


def trust(evidence: Evidence, params: CombineParams) -> float:
    """0..1: how much closer the rewrite's best chunk comes than the question's (none: 0), times
    how much of the question it keeps."""
    if evidence.rewrite_best is None:
        return 0.0
    gain = evidence.rewrite_best - evidence.question_best
    return min(max(gain / params.trust_span, 0.0), 1.0) * evidence.fidelity


def fidelity(rewrite: str, question: str, previous: str, params: CombineParams) -> float:
    """1, or 0 for a rewrite that keeps none of the question's own words (content words and
    identifiers, by stem: it answers another question, "filter rows" for "and how do I delete
    one?") or is absurd, longer than `rewrite_growth` times the question and the previous one
    together (and than `rewrite_floor` characters). A short follow-up finds little alone, so
    nearly any fuller rewrite comes closer to some chunk than the question: closeness alone
    would trust these. A rewrite that keeps some of the words may paraphrase the rest ("tele
    number" -> "telephone number", a typo mended): on govt with the recorded replies, scaling
    trust by the share kept cost nDCG@10 0.927 -> 0.921."""
    if len(rewrite) > max(params.rewrite_floor, params.rewrite_growth * len(question + previous)):
        return 0.0
    own = {stem(word) for word in subject_words(question)}
    return 1.0 if not own or own & {stem(word) for word in words(rewrite)} else 0.0


def combine(
    heuristic: Reformulation,
    reading: ModelReading | None,
    evidence: Evidence,
    params: Params,
) -> Reformulation:
    """The turn's reformulation: the heuristic's, with the model's rewrite and flags weighed in."""
    if reading is None:
        return heuristic
    tuning, closeness = params.combine, own_closeness(evidence.question_best, params.followup)
    shift = _shift(heuristic, reading, evidence, params)
    meta = heuristic.is_meta or (
        reading.is_meta and not shift.topic_shift and closeness < tuning.meta_closeness
    )
    trusted = trust(evidence, tuning)
    weight = round(tuning.model_lead * trusted, 3) if evidence.rewrite_best is not None else 0.0
    need = 1.0 if meta and not heuristic.is_meta else shift.context_need * (1 - trusted)
    question = 1 - tuning.question_yield * trusted * (1 - closeness)
    return replace(
        shift,
        is_meta=meta,
        is_follow_up=shift.is_follow_up or meta,
        context_need=round(need, 3),
        question_weight=round(question, 3),
        model_query=reading.semantic_query if weight > 0 else "",
        model_weight=weight,
        reformulator=f"{heuristic.reformulator}+{reading.model}",
        reasoning=f"{shift.reasoning}; {reading.model}: {_verdict(reading)}, "
        f"{_rewrite_note(evidence, trusted)}",
    )


def _shift(
    heuristic: Reformulation, reading: ModelReading, evidence: Evidence, params: Params
) -> Reformulation:
    """The heuristic's reading with the model's topic shift followed, unless contradicted."""
    pointed_back = heuristic.is_follow_up and heuristic.context_need >= params.combine.cue_need
    if not reading.topic_shift or heuristic.topic_shift or heuristic.is_meta or pointed_back:
        return heuristic
    tuning = params.followup
    kept = tuning.new_topic_need + tuning.weak_need * own_weakness(evidence.question_best, tuning)
    return replace(
        heuristic,
        is_follow_up=False,
        topic_shift=True,
        new_subject=False,
        context_need=min(heuristic.context_need, kept),
    )


def _rewrite_note(evidence: Evidence, trusted: float) -> str:
    if evidence.rewrite_best is None:
        return "rewrite = the question"
    kept = ", drops the question's words or is absurd" if evidence.fidelity < 1 else ""
    return (
        f"rewrite trusted {trusted:.2f} (best chunk {evidence.rewrite_best:.2f}, "
        f"the question's {evidence.question_best:.2f}{kept})"
    )


def _verdict(reading: ModelReading) -> str:
    flags = [
        name
        for name, on in (
            ("follow-up", reading.is_follow_up),
            ("meta", reading.is_meta),
            ("topic shift", reading.topic_shift),
        )
        if on
    ]
    return ", ".join(flags) or "stands alone"
