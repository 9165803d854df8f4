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

import math
from dataclasses import dataclass

from ..config import Settings
from ..params import PlanParams
from ..search.fusion import Anchoring
from .collections import Carried, without_names
from .followup.cues import meta_own_words, meta_subject, without_deixis
from .followup.referents import understood
from .models import Index, Plan, QueryList, Reformulation, Source
from .reading import TurnContext


@dataclass(frozen=True)
class Ablations:
    """Parts of the pipeline `ragchat eval` switches off to measure what they bring (the chat
    switches off none: every field's default is the live pipeline)."""

    source_anchoring: bool = True  # False: no anchoring on the last answer's documents
    use_window: bool = True  # False: no history window
    use_keywords: bool = True  # False: the semantic query also goes to FTS
    allow_reuse: bool = True  # False: a meta-request searches afresh
    fusion: bool = True  # False: one query per index, as before fusion (and the baselines)


@dataclass(frozen=True)
class RetrievalPlan:
    kind: Plan
    queries: tuple[QueryList, ...]
    context_weight: float
    anchoring: Anchoring
    protect: int | None  # chunk id of the question's confident first hit
    reuse: bool  # the last answer's chunks join the passages
    fusion: bool = True  # the question's own lists and the documents it names count (False: one
    # query per index, the ablation and the baselines; the context list reports its similarity)
    reuse_first: bool = True  # the reused chunks lead (a bare request); False: a request with
    # words of its own, where this turn's search places them (`retrieve._with_reused`)
    points_back: bool = True  # the reading found the question pointing back (a cue): the boost
    # may pass the first hit both of its own lists agree on; False: it only may continue the talk


def context_weight(reformulation: Reformulation) -> float:
    return min(max(reformulation.context_need, 0.0), 1.0)


def _queries(
    question: str,
    previous: str,
    reformulation: Reformulation,
    weight: float,
    settings: Settings,
    ablations: Ablations,
    carried: Carried,
    correction: str,
    answered: tuple[int, ...] = (),
    bare: bool = False,
) -> tuple[QueryList, ...]:
    """The turn's query lists; `bare`: a request that says nothing of its own (`request_only`)."""
    semantic, keywords = reformulation.semantic_query, reformulation.keyword_query
    vector, fts = settings.vector_weight, settings.fts_weight
    if not ablations.fusion:  # one query per index
        return (
            QueryList(
                Source.CONTEXT, Index.VECTOR, semantic, vector, as_typed=semantic == question
            ),
            QueryList(
                Source.KEYWORDS, Index.FTS, keywords if ablations.use_keywords else semantic, fts
            ),
        )
    own = reformulation.question_weight
    lists = [
        QueryList(Source.QUESTION, Index.VECTOR, question, vector * own, as_typed=True),
        QueryList(Source.QUESTION, Index.FTS, without_deixis(question), fts * own),
    ]
    if (
        reformulation.model_weight > 0 and reformulation.model_query
    ):  # a model's rewrite (combine.py)
        model, model_weight = reformulation.model_query, reformulation.model_weight
        lists.append(
            QueryList(
                Source.LLM, Index.VECTOR, model, vector * model_weight, as_typed=model == question
            )
        )
        lists.append(QueryList(Source.LLM, Index.FTS, model, fts * model_weight))
    if correction.strip() and correction != question:  # "no, I meant X": X as typed, beside
        # the question it corrects (an X that restates the whole need is the question itself)
        lists.append(QueryList(Source.CORRECTION, Index.VECTOR, correction, vector))
        lists.append(QueryList(Source.CORRECTION, Index.FTS, correction, fts))
    if weight <= 0:
        return tuple(lists)
    if bare:  # the conversation's lists search for it
        lists = [q for q in lists if q.source is not Source.QUESTION]

    def conversational(source: Source, index: Index, text: str, share: float) -> QueryList:
        """A list of what the conversation adds: searched where the conversation stands."""
        said = without_names(text, carried.unsaid)
        return QueryList(source, index, said, share * weight, within=carried.names)

    if semantic.strip() and semantic != question:
        lists.append(conversational(Source.CONTEXT, Index.VECTOR, semantic, vector))
    # FTS gets the expanded question and the corpus's own words for it (the eval: the keyword query
    # alone did worse than the expanded question; together they keep "doctors" -> "physicians")
    text = f"{semantic}, {keywords}" if ablations.use_keywords and keywords.strip() else semantic
    if text.strip() and text != question:
        lists.append(conversational(Source.CONTEXT, Index.FTS, text, fts))
    if previous and not reformulation.is_meta:  # the previous question with this one
        both = f"{previous} {question}"
        lists.append(conversational(Source.PREVIOUS, Index.VECTOR, both, vector))
        lists.append(conversational(Source.PREVIOUS, Index.FTS, both, fts))
    if carried.moved and answered:  # the passages like the last answer's, where it moves to
        ids = " ".join(str(i) for i in answered)
        lists.append(
            QueryList(Source.ANSWERED, Index.VECTOR, ids, vector * weight, within=carried.names)
        )
    return tuple(lists)


def request_only(question: str, reformulation: Reformulation) -> bool:
    """A meta-request that says nothing of its own besides the request ("example please", "code
    for that?", "why?"): its words name what to do with the last answer, not what it is about,
    and searched as a query they find the pages that talk about examples or code. It searches
    with what the conversation gives (the last question, its subject) only. A request with
    words of its own, after it or in another clause ("an example with a list", "summarize the
    precedence part", "I study astronauts. Tell me more about her"), keeps its own lists."""
    return (
        reformulation.is_meta
        and meta_subject(question) == ""  # a request by its shape (a model may read a question
        # with a subject of its own as meta: its own lists stay)
        and not meta_own_words(question)
    )


def _previous(context: TurnContext) -> str:
    """The previous question as it was understood ("how does the state pay for Medi-Cal?"
    rather than "... for it?"), when its turn searched; else as it was typed."""
    last = context.last
    typed = context.window.last.user
    if last is None or last.question != typed or last.reformulation.is_meta:
        return typed
    return understood(last.reformulation.leading_query) or typed


def _answered(context: TurnContext) -> tuple[int, ...]:
    """The chunks the last answer stood on (all of its chunks if none is marked)."""
    last = context.last
    if last is None:
        return ()
    return tuple(c.chunk_id for c in (last.used_chunks or list(last.chunks)))


def _protect(
    context: TurnContext, bare: bool, ablations: Ablations, params: PlanParams
) -> int | None:
    probe = context.probe
    if not ablations.fusion or not probe.ids or bare:
        return None
    confident = probe.best >= params.confident and probe.margin >= params.confident_margin
    return probe.ids[0] if confident else None


def plan(
    context: TurnContext,
    reformulation: Reformulation,
    settings: Settings,
    ablations: Ablations = Ablations(),
) -> RetrievalPlan:
    weight = context_weight(reformulation)
    moved = bool(context.carried.moved)  # asked in a collection the last answer stood outside
    reuse = (
        reformulation.is_meta
        and ablations.allow_reuse
        and context.searching is not None
        and not reformulation.topic_shift
        and not moved
    )
    follows = reformulation.goes_on and not reformulation.new_subject and not moved
    anchors = context.anchors
    anchoring = Anchoring()
    # a library the last answer's documents make up whole (one page) has nothing to lean toward:
    # the boost would lift every chunk but the sections the last answer used, and a follow-up
    # about those would lose them to the rest of the page
    if (
        follows
        and anchors.document_ids
        and not anchors.whole
        and ablations.source_anchoring
        and settings.source_anchoring
    ):
        boost = settings.anchor_boost * (weight if ablations.fusion else 1.0)
        reach = settings.params.plan.anchor_reach if ablations.fusion else 10**9
        keep = settings.params.plan.said_keep
        margin = settings.params.plan.anchor_margin if ablations.fusion else math.inf
        anchoring = Anchoring(
            anchors.document_ids, round(boost, 4), anchors.said, reach, keep, margin
        )
    kind: Plan = "reuse" if reuse else ("anchored_search" if anchoring.documents else "search")
    bare = request_only(context.question, reformulation)  # read once: lists, protect, reuse order
    queries = _queries(
        context.question,
        _previous(context),
        reformulation,
        weight,
        settings,
        ablations,
        context.carried if ablations.fusion else Carried(),
        context.correction,
        _answered(context),
        bare,
    )
    protect = _protect(context, bare, ablations, settings.params.plan)
    return RetrievalPlan(
        kind,
        queries,
        weight,
        anchoring,
        protect,
        reuse,
        ablations.fusion,
        reuse_first=bare,
        points_back=reformulation.points_back,
    )
