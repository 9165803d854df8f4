"""Stage 3 of a turn: the retrieval plan. Pure: no store, no model.

Fuse, don't gamble. The question's own queries (to the vector index and to FTS) always count in
full; the context-expanded query and the keyword query join them with a weight from how much
the question needs the conversation (`context_need`), never more than the question's own. So a
question read wrongly as a follow-up still finds what it finds alone, and a true follow-up gets
its context. Anchoring is soft: the boost scales with the same weight and only reaches chunks
some query already ranks well. A confident first hit of the question itself keeps a top-3 place.
A meta-request reuses the last sources first, then adds a fresh anchored search.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..config import Settings
from ..params import PlanParams
from ..search.fusion import Anchoring
from .followup.cues import without_deixis
from .followup.referents import understood
from .models import Plan, QueryList, Reformulation
from .reading import TurnContext


@dataclass(frozen=True)
class TurnOptions:
    source_anchoring: bool = True
    use_window: bool = True
    use_keywords: bool = True  # False: the semantic query also goes to FTS (an ablation)
    allow_reuse: bool = True
    fusion: bool = True  # False: one query per index, as before fusion (an ablation, and the baselines)
    recorded_answer: str | None = None  # eval replays: store this instead of answering


@dataclass(frozen=True)
class RetrievalPlan:
    kind: Plan
    queries: tuple[QueryList, ...]
    context_weight: float
    anchoring: Anchoring
    protect: int | None  # chunk id of the question's confident first hit
    reuse: bool  # the last answer's chunks come first


def context_weight(reformulation: Reformulation) -> float:
    return min(max(reformulation.context_need, 0.0), 1.0)


def _queries(question: str, previous: str, reformulation: Reformulation, weight: float, settings: Settings,
             options: TurnOptions) -> tuple[QueryList, ...]:
    semantic, keywords = reformulation.semantic_query, reformulation.keyword_query
    if not options.fusion:  # one query per index
        return (QueryList("context/vector", semantic, settings.vector_weight),
                QueryList("keywords/fts", keywords if options.use_keywords else semantic, settings.fts_weight))
    own = reformulation.question_weight
    lists = [QueryList("question/vector", question, settings.vector_weight * own),
             QueryList("question/fts", without_deixis(question), settings.fts_weight * own)]
    if reformulation.model_weight > 0 and reformulation.model_query:  # a model's rewrite (combine.py)
        model = reformulation.model_query
        lists.append(QueryList("model/vector", model, settings.vector_weight * reformulation.model_weight))
        lists.append(QueryList("model/fts", model, settings.fts_weight * reformulation.model_weight))
    if weight <= 0:
        return tuple(lists)
    if semantic.strip() and semantic != question:
        lists.append(QueryList("context/vector", semantic, settings.vector_weight * weight))
    # FTS gets the expanded question and the corpus's own words for it (the eval: the keyword
    # query alone did worse than the expanded question; together they keep "doctors" -> "physicians")
    text = f"{semantic}, {keywords}" if options.use_keywords and keywords.strip() else semantic
    if text.strip() and text != question:
        lists.append(QueryList("context/fts", text, settings.fts_weight * weight))
    if previous and not reformulation.is_meta:  # the previous question with this one
        lists.append(QueryList("previous/vector", f"{previous} {question}", settings.vector_weight * weight))
        lists.append(QueryList("previous/fts", f"{previous} {question}", settings.fts_weight * weight))
    return tuple(lists)


def _previous(context: TurnContext) -> str:
    """The previous question as it was understood ("how does the state pay for Medi-Cal?"
    rather than "... for it?"), when its turn searched; else as it was typed."""
    last = context.last
    typed = context.window.last.user
    if last is None or last.question != typed or last.reformulation.is_meta:
        return typed
    return understood(last.reformulation.leading_query) or typed


def _protect(context: TurnContext, options: TurnOptions, params: PlanParams) -> int | None:
    probe = context.probe
    if not options.fusion or not probe.ids:
        return None
    confident = probe.best >= params.confident and probe.margin >= params.confident_margin
    return probe.ids[0] if confident else None


def plan(context: TurnContext, reformulation: Reformulation, settings: Settings, options: TurnOptions) -> RetrievalPlan:
    weight = context_weight(reformulation)
    reuse = (reformulation.is_meta and options.allow_reuse and context.searching is not None
             and not reformulation.topic_shift)
    follows = reformulation.is_follow_up and not reformulation.topic_shift and not reformulation.new_subject
    anchors = context.anchors
    anchoring = Anchoring()
    if follows and anchors.document_ids and options.source_anchoring and settings.source_anchoring:
        boost = settings.anchor_boost * (weight if options.fusion else 1.0)
        reach = settings.params.plan.anchor_reach if options.fusion else 10**9
        anchoring = Anchoring(anchors.document_ids, round(boost, 4), anchors.said, reach)
    kind: Plan = "reuse" if reuse else ("anchored_search" if anchoring.documents else "search")
    return RetrievalPlan(kind, _queries(context.question, _previous(context), reformulation, weight, settings, options),
                         weight, anchoring, _protect(context, options, settings.params.plan), reuse)
