"""Stage 4 of a turn: run the plan's queries, fuse them, and (for a meta-request) put the last
answer's chunks first."""

from __future__ import annotations

from dataclasses import dataclass

from sqlite_utils import Database

from ..config import Settings
from ..embed import Embedder
from ..search.fusion import Fused, RankedList, fuse
from ..search.hybrid import fts_ranking, vector_ranking
from ..search.titles import named_documents, title_ranking
from ..store import library
from ..store.library import StoredChunk
from .models import QueryList, RetrievedChunk
from .plan import RetrievalPlan
from .reading import TurnContext


@dataclass(frozen=True)
class Retrieval:
    chunks: tuple[RetrievedChunk, ...]
    best: float | None  # best cosine similarity among them (None: no vector ranked them)
    notices: tuple[str, ...] = ()
    extra: tuple[QueryList, ...] = ()  # lists the retrieval added to the plan's (documents named by the question)


def _rankings(db: Database, embedder: Embedder, plan: RetrievalPlan, context: TurnContext,
              depth: int) -> tuple[list[RankedList], dict[int, float]]:
    extra = context.anchors.chunk_ids if plan.anchoring.documents else ()
    similarity = dict(context.probe.similarity)
    lists = []
    for query in plan.queries:
        kind = query.name.split("/")[1]
        if kind == "vector":
            if query.name == "question/vector" and query.query == context.question:
                ids = list(context.probe.ids)
            elif query.name == "model/vector" and context.rewrite_probe.ids:
                ids = list(context.rewrite_probe.ids)
            else:
                vector = context.vector if query.query == context.question else embedder.embed_query(query.query)
                ids, found = vector_ranking(db, vector, depth, extra)
                if query.name == "context/vector" and "question/vector" not in {q.name for q in plan.queries}:
                    similarity = found  # the single-query path reports the similarity to its own query
        elif context.keyword_ranking is not None and query.query == context.keyword_ranking.query:
            ids = context.keyword_ranking.with_anchors(bool(extra))  # searched while the model thought
        else:
            ids = fts_ranking(db, query.query, depth, extra)
        lists.append(RankedList(query.name, kind, tuple(ids), query.weight))
    return lists, similarity


def _named(db: Database, settings: Settings, plan: RetrievalPlan, context: TurnContext) -> RankedList | None:
    """The documents the question names by title or file name, as a list of the fusion (the
    full pipeline only: the baselines' single-query path stays as it was)."""
    if "question/vector" not in {q.name for q in plan.queries}:
        return None
    named = named_documents(db, context.question)
    if not named:
        return None
    return RankedList("question/title", "title", tuple(title_ranking(db, named, context.vector)),
                      settings.vector_weight)


def _chunk(rank: int, item: Fused, stored: StoredChunk, similarity: float | None) -> RetrievedChunk:
    return RetrievedChunk(
        rank=rank, chunk_id=item.chunk_id, document_id=stored.document_id, document=stored.path,
        heading=stored.heading, vector_rank=item.vector_rank, fts_rank=item.fts_rank,
        similarity=None if similarity is None else round(similarity, 4), rrf=round(item.rrf, 4),
        boost=item.boost, score=round(item.score, 4), anchored=item.anchored, reused=False,
        page_start=stored.page_start, page_end=stored.page_end, title=stored.title or "",
    )


def _reused(db: Database, context: TurnContext) -> tuple[list[RetrievedChunk], tuple[str, ...]]:
    """The chunks the last searching turn's answer stood on (all of its chunks if none is marked)."""
    lineage = context.searching
    if lineage is None:
        return [], ()
    old = lineage.used_chunks or list(lineage.chunks)
    alive = library.chunks_by_ids(db, [c.chunk_id for c in old])
    notices = ((f"{len(old) - len(alive)} reused chunk(s) no longer exist (document changed or removed)",)
               if len(alive) < len(old) else ())
    kept = [
        RetrievedChunk(rank=0, chunk_id=c.chunk_id, document_id=alive[c.chunk_id].document_id,
                       document=alive[c.chunk_id].path, heading=alive[c.chunk_id].heading,
                       vector_rank=c.vector_rank, fts_rank=c.fts_rank, similarity=c.similarity,
                       rrf=c.rrf, boost=0.0, score=c.score, anchored=True, reused=True,
                       page_start=alive[c.chunk_id].page_start, page_end=alive[c.chunk_id].page_end,
                       title=alive[c.chunk_id].title or "")
        for c in old if c.chunk_id in alive
    ]
    return kept, notices


def retrieve(db: Database, embedder: Embedder, settings: Settings, plan: RetrievalPlan, context: TurnContext) -> Retrieval:
    depth = max(settings.candidates, settings.top_k)
    lists, similarity = _rankings(db, embedder, plan, context, depth)
    titles = _named(db, settings, plan, context)
    if titles is not None:
        lists.append(titles)
    stored = library.chunks_by_ids(db, {i for item in lists for i in item.ids})
    lists = [RankedList(item.name, item.kind, tuple(i for i in item.ids if i in stored), item.weight) for item in lists]
    fused = fuse(lists, {i: c.document_id for i, c in stored.items()}, k=settings.rrf_k,
                 anchoring=plan.anchoring, protect=plan.protect) if any(item.ids for item in lists) else []
    found = [_chunk(0, item, stored[item.chunk_id], similarity.get(item.chunk_id)) for item in fused]
    reused, notices = _reused(db, context) if plan.reuse else ([], ())
    taken = {c.chunk_id for c in reused}
    ranked = [*reused, *(c for c in found if c.chunk_id not in taken)][: settings.top_k]
    chunks = tuple(RetrievedChunk(**{**c.to_dict(), "rank": rank}) for rank, c in enumerate(ranked, start=1))
    best = max((c.similarity for c in chunks if c.similarity is not None), default=None)
    extra = (QueryList(titles.name, context.question, titles.weight),) if titles is not None else ()
    return Retrieval(chunks, best, notices, extra)
