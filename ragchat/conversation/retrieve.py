"""Stage 4 of a turn: run the plan's queries, fuse them, and (for a meta-request) put the last
answer's chunks first."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

from sqlite_utils import Database

from ..answer.extractive import heading_levels, pool_size
from ..answer.units import units
from ..config import Settings
from ..ingest.releases import RELEASE_KINDS, asks_about_versions, names_release, versions_in
from ..params import FusionParams, Params
from ..search.fusion import Fused, RankedList, fuse
from ..search.repeats import repeated_in, says_only_its_title, yielding
from ..search.sections import placed, within_document
from ..search.titles import named_documents, named_exactly, title_ranking, typed_titles
from ..store import library
from ..store.library import Scope, StoredChunk
from ..text import content_words, identifiers
from .models import Index, QueryList, RetrievedChunk, Source
from .outline import asked_section
from .plan import RetrievalPlan
from .reading import TurnContext


@dataclass(frozen=True)
class Retrieval:
    chunks: tuple[RetrievedChunk, ...]
    best: float | None  # best cosine similarity among them (None: no vector ranked them)
    notices: tuple[str, ...] = ()
    extra: tuple[
        QueryList, ...
    ] = ()  # lists the retrieval added to the plan's (documents named by the question)
    stored: Mapping[int, StoredChunk] = field(
        default_factory=dict
    )  # the chunks, loaded: for coverage, the answer
    # the chunks in the fusion's own order when release notes were put last (else empty): whether
    # the library covers a question is judged on what it holds, release notes included
    judged: tuple[RetrievedChunk, ...] = ()


def _always_below(query: QueryList) -> bool:
    """The question's own vector list (as typed) and the model's rewrite rank the last answer's
    chunks below their top on every turn, anchored or not: a vote that far down keeps a follow-up
    the heuristic misreads as a new question near its sources. Measured on the shared sets
    against dropping it on un-anchored turns: clapnq nDCG@10 0.919 vs 0.918, switch after-switch
    one turn won and one lost, answer F1 one turn higher on govt and on clapnq."""
    return query.index is Index.VECTOR and (
        (query.source is Source.QUESTION and query.as_typed) or query.source is Source.LLM
    )


def _scope(query: QueryList, context: TurnContext) -> Scope | None:
    """Where a list searches: what the conversation adds, where the conversation stands."""
    carried = context.carried.scope
    return carried if query.within and carried is not None else context.within


def _rankings(
    plan: RetrievalPlan, context: TurnContext
) -> tuple[list[RankedList], dict[int, float]]:
    """The plan's lists, each asked of the turn's searches (the question's vector list is its
    probe, its keyword list the one searched while a model thought): the anchor chunks below a
    list's top when the turn is anchored, and below the vector lists of the question as typed and
    of the model's rewrite on every turn (`_always_below`); what the conversation adds searches
    where the conversation stands (`_scope`)."""
    search = context.searches()
    extra = context.anchors.chunk_ids if plan.anchoring.documents else ()
    similarity = dict(context.probe.similarity)
    lists = []
    for query in plan.queries:
        if query.source is Source.ANSWERED:  # a moved follow-up: the last answer's chunks
            found = search.like(tuple(int(i) for i in query.query.split()), _scope(query, context))
            lists.append(RankedList(query.name, query.index.value, found.ids, query.weight))
            continue
        if query.index is Index.VECTOR:
            below = context.anchors.chunk_ids if _always_below(query) else extra
            found = search.vector(query.query, below, within=_scope(query, context))
            if query.source is Source.CONTEXT and not plan.fusion:
                similarity = dict(found.similarity)  # the single-query path: its own query's
        else:
            found = search.fts(query.query, extra, within=_scope(query, context))
        lists.append(RankedList(query.name, query.index.value, found.ids, query.weight))
    return lists, similarity


def _named(
    db: Database, settings: Settings, plan: RetrievalPlan, context: TurnContext
) -> tuple[QueryList, RankedList] | None:
    """The documents the question names by title or file name, as a list of the fusion (the
    full pipeline only: the baselines' single-query path stays as it was)."""
    within = context.within.document_ids if context.within is not None else None
    named = named_documents(db, context.question, within) if plan.fusion else []
    if not named:
        return None
    query = QueryList(
        Source.QUESTION, Index.TITLE, context.question, settings.vector_weight, as_typed=True
    )
    ranking = tuple(title_ranking(db, named, context.vector))
    return query, RankedList(query.name, query.index.value, ranking, query.weight)


def _release_notes_last(
    db: Database,
    found: list[RetrievedChunk],
    context: TurnContext,
    titles: tuple[QueryList, RankedList] | None,
) -> list[RetrievedChunk]:
    """Release notes below the other pages, unless the question names a version or a date (then
    the release notes' sections whose headings or pages' titles name that version come first) or
    names the release notes themselves ("the changelog"): a changelog mentions every feature once
    per release and would crowd out the page that explains it. Only release notes' sections are
    lifted: a version a question names may be its own ("serve a v1 and a v2 of the API"), and a
    guide or proposal whose title holds "v1" is no release of the library (lifting them too put
    two such pages, fused 37th to 65th, above the page every list of the question ranked first)."""
    question = context.question
    notes = library.documents_of_kind(db, {c.document_id for c in found}, RELEASE_KINDS)
    if asks_about_versions(question):  # the release notes' sections of the versions it names
        versions = versions_in(question)
        return sorted(
            found,
            key=lambda c: (
                c.document_id not in notes
                or not names_release(versions, versions_in(f"{c.title} {c.heading}"))
            ),
        )
    if titles is not None:
        named = library.chunks_by_ids(db, titles[1].ids)  # the documents the question names
        notes -= {chunk.document_id for chunk in named.values()}
    if not notes or _only_notes_say(
        context.load(db, (c.chunk_id for c in found)), found, notes, question
    ):
        return found
    return [c for c in found if c.document_id not in notes] + [
        c for c in found if c.document_id in notes
    ]


def _only_notes_say(
    stored: Mapping[int, StoredChunk], found: list[RetrievedChunk], notes: set[int], question: str
) -> bool:
    """Whether the question names a thing of the code that, among the turn's chunks, release
    notes alone name ("which release restored pairwise?", "... added running_statistics?": the
    changelog's `pairwise()`, the reference being autodoc the library never read): the release
    notes then answer it and keep their fused places. Code names (`text.identifiers`, whole),
    not words: a plain word only a changelog happens to use ("it rejects CONV in caps") leaves
    them below."""
    asked = {_code_name(name) for name in identifiers(question)} | set(content_words(question))
    texts = [(c.document_id in notes, stored[c.chunk_id]) for c in found if c.chunk_id in stored]
    named = {
        part
        for in_notes, chunk in texts
        if in_notes
        for name in identifiers(chunk.text)
        for part in (_code_name(name), *_code_name(name).split("."))
    }
    others = " ".join(f"{c.title} {c.heading} {c.text}" for in_notes, c in texts if not in_notes)
    return any(
        not re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", others, re.IGNORECASE)
        for name in asked & named
    )


def _code_name(name: str) -> str:
    """An identifier as a name: "pairwise()" -> "pairwise", lower-case."""
    return name.removesuffix("()").strip("`").lower()


def _own_first(plan: RetrievalPlan, lists: list[RankedList]) -> set[int]:
    """The first chunk of each of the question's own lists (as typed, to the vector index and to
    FTS): the anchor boost never pushes these out of the top passages they held without it,
    however weakly the question finds them alone. A follow-up that finds little alone is exactly
    the turn the boost lifts the last answer's page on, and its own first hits were the ones
    left unprotected (Jinja's one-page templates.rst, boosted as a whole, took every place). On
    the shared sets the rule changes no scored turn (docs, held-out, MTRAG all identical); it
    used to wait for a confident cosine (`plan.confident`)."""
    return {ranked.ids[0] for ranked in _own_lists(plan, lists) if ranked.ids}


def _own_lists(plan: RetrievalPlan, lists: list[RankedList]) -> list[RankedList]:
    """The question's own lists as ranked (to the vector index and to FTS; not the title list)."""
    return [
        ranked
        for query, ranked in zip(plan.queries, lists, strict=False)
        if query.source is Source.QUESTION and query.index is not Index.TITLE
    ]


def _agreed_own(plan: RetrievalPlan, lists: list[RankedList]) -> int | None:
    """The chunk both of the question's own lists (to the vector index and to FTS) rank first,
    if they agree (`fusion.fuse`'s `agreed`), on a turn whose question does not point back (no
    cue; `plan.points_back`): "what does the job registries page say about removing jobs?"
    after questions on rq's jobs page only may go on with them, and both its lists rank the
    registries page's "Removing Jobs" first; "which release changed that?" points back, and the
    boost still turns it to the last answer's page over one that only shares its words."""
    own = _own_lists(plan, lists)
    firsts = _own_first(plan, lists)
    agree = len(own) == 2 and all(ranked.ids for ranked in own) and len(firsts) == 1
    return firsts.pop() if agree else None


def _lists(plan: RetrievalPlan, lists: list[RankedList], *sources: Source) -> list[RankedList]:
    """The keyword (FTS) lists of the plan's queries from `sources`, as ranked."""
    return [
        ranked
        for query, ranked in zip(plan.queries, lists, strict=False)
        if query.source in sources and query.index is Index.FTS
    ]


def _agreed_first(plan: RetrievalPlan, lists: list[RankedList]) -> int | None:
    """The question's own first keyword hit when the keyword lists of what the conversation
    adds (the context-expanded question, the previous question with this one) rank it first too:
    it keeps a top place (`fusion.protect_within`) as a confident vector hit does. The carried
    lists' vectors lean on the old subject (its words, the last question), while in the keyword
    lists the question's own rare words still decide; when all of them agree on one chunk, the
    question's new need and the conversation point at the same passage, and the vector lists and
    the anchor boost no longer push it out of the places a model reads ("what about asking for
    it when it's missing instead of erroring out?" after a required-option answer: Typer's
    `prompt=True` chunk, first in the three keyword lists, fused 11th). Only on an anchored turn
    (the boost is what pushes it out; on an un-anchored switch turn of the MTRAG switch set the
    rule lowered nDCG@10): a turn with no carried lists, or whose own first hit is already
    protected, is left as it was."""
    own = [ranked for ranked in _lists(plan, lists, Source.QUESTION) if ranked.ids]
    carried = _lists(plan, lists, Source.CONTEXT, Source.PREVIOUS)
    if not plan.anchoring.documents or len(own) != 1 or len(carried) < 2:
        return None
    first = own[0].ids[0]
    return first if all(ranked.ids[:1] == (first,) for ranked in carried) else None


def _beside_a_rewrite(plan: RetrievalPlan, context: TurnContext, settings: Settings) -> bool:
    """A model's rewrite leads, and the question alone finds something confidently (its best
    chunk as close as a protected hit's): its first hits keep places whatever the rewrite."""
    rewrite = any(q.source is Source.LLM and q.weight > 0 for q in plan.queries)
    return rewrite and context.probe.best >= settings.params.plan.confident


def _chunk(rank: int, item: Fused, stored: StoredChunk, similarity: float | None) -> RetrievedChunk:
    return RetrievedChunk(
        rank=rank,
        chunk_id=item.chunk_id,
        document_id=stored.document_id,
        document=stored.path,
        heading=stored.heading,
        vector_rank=item.vector_rank,
        fts_rank=item.fts_rank,
        similarity=None if similarity is None else round(similarity, 4),
        rrf=round(item.rrf, 4),
        boost=item.boost,
        score=round(item.score, 4),
        anchored=item.anchored,
        reused=False,
        page_start=stored.page_start,
        page_end=stored.page_end,
        title=stored.title or "",
        collection=stored.collection,
        absolute_path=stored.source,
    )


def _reused(db: Database, context: TurnContext) -> tuple[list[RetrievedChunk], tuple[str, ...]]:
    """The chunks the last searching turn's answer stood on (all of its chunks if none is
    marked)."""
    lineage = context.searching
    if lineage is None:
        return [], ()
    old = lineage.used_chunks or list(lineage.chunks)
    if context.within is not None:  # a scoped question reuses nothing from another collection
        old = [c for c in old if c.document_id in context.within.document_ids]
    alive = context.load(db, [c.chunk_id for c in old])
    notices = (
        (f"{len(old) - len(alive)} reused chunk(s) no longer exist (document changed or removed)",)
        if len(alive) < len(old)
        else ()
    )
    kept = [
        RetrievedChunk(
            rank=0,
            chunk_id=c.chunk_id,
            document_id=alive[c.chunk_id].document_id,
            document=alive[c.chunk_id].path,
            heading=alive[c.chunk_id].heading,
            vector_rank=c.vector_rank,
            fts_rank=c.fts_rank,
            similarity=c.similarity,
            rrf=c.rrf,
            boost=0.0,
            score=c.score,
            anchored=True,
            reused=True,
            page_start=alive[c.chunk_id].page_start,
            page_end=alive[c.chunk_id].page_end,
            title=alive[c.chunk_id].title or "",
            collection=alive[c.chunk_id].collection,
            absolute_path=alive[c.chunk_id].source,
        )
        for c in old
        if c.chunk_id in alive
    ]
    return kept, notices


def _with_reused(
    reused: list[RetrievedChunk], found: list[RetrievedChunk], plan: RetrievalPlan
) -> list[RetrievedChunk]:
    """The last answer's chunks and this turn's search, each chunk once. A bare request ("summarize
    it", "an example?") is about the last answer: its chunks lead. A request with words of its
    own ("summarize the settings that control the pagination defaults", "tell me more about the
    handlers it registers") names what it wants from the conversation's pages: a reused chunk
    stands where this turn's search ranks it (the search is anchored on the last answer's
    documents and carries its terms), the reused chunks it did not find after the ones it did.
    Put first whatever the search said, the last answer's three cursor sections held the places
    of the section that lists the pagination settings, found first by the request's keywords."""
    if plan.reuse_first:
        return _unique([*reused, *found])
    mine = {c.chunk_id: c for c in reused}
    placed = [mine.pop(c.chunk_id, c) for c in found]
    return _unique([*placed, *mine.values()])


def _new_first(
    ranked: list[RetrievedChunk], context: TurnContext, db: Database, params: FusionParams
) -> list[RetrievedChunk]:
    """Chunks that repeat better-ranked ones (overlaps, included pages, the same code twice) move
    below those that add something, marked with the chunk that holds their text; below them,
    chunks that say only their title (a reference page the site's build fills from the code)."""
    texts = {i: c.text for i, c in context.load(db, (c.chunk_id for c in ranked)).items()}
    order = [c.chunk_id for c in ranked]
    document_of = {c.chunk_id: c.document_id for c in ranked}
    repeats = repeated_in(order, texts, document_of, params)
    empty = {
        c.chunk_id
        for c in ranked
        if says_only_its_title(texts.get(c.chunk_id, ""), [c.title, *c.heading.split(" > ")])
    }
    by_id = {c.chunk_id: c for c in ranked}
    return [replace(by_id[i], repeats=repeats.get(i)) for i in yielding(order, repeats, empty)]


def retrieve(
    db: Database, settings: Settings, plan: RetrievalPlan, context: TurnContext
) -> Retrieval:
    lists, similarity = _rankings(plan, context)
    titles = _named(db, settings, plan, context)
    if titles is not None:
        lists.append(titles[1])
    stored = context.load(db, (i for item in lists for i in item.ids))
    lists = [
        RankedList(item.name, item.kind, tuple(i for i in item.ids if i in stored), item.weight)
        for item in lists
    ]
    fused = (
        fuse(
            lists,
            {i: c.document_id for i, c in stored.items()},
            k=settings.rrf_k,
            anchoring=plan.anchoring,
            protect=plan.protect if plan.protect is not None else _agreed_first(plan, lists),
            protect_within=settings.params.fusion.protect_within,
            own=_own_first(plan, lists),
            own_within=settings.params.fusion.own_within,
            own_firm=_beside_a_rewrite(plan, context, settings),
            agreed=None if plan.points_back else _agreed_own(plan, lists),
        )
        if any(item.ids for item in lists)
        else []
    )
    found = [
        _chunk(0, item, stored[item.chunk_id], similarity.get(item.chunk_id))
        for item in _asked(fused, context)
    ]
    named = frozenset(stored[i].document_id for i in titles[1].ids) if titles else frozenset()
    reused, notices = _reused(db, context) if plan.reuse else ([], ())
    ordered = _new_first(
        _with_reused(reused, _release_notes_last(db, found, context, titles), plan),
        context,
        db,
        settings.params.fusion,
    )
    near = _with_neighbours(ordered[: settings.top_k], context, db, settings.params)
    sections = _page_in_order(
        _with_sections(near, plan, context, db, settings, named), plan, context, db, settings
    )
    sections = _keyword_hits(sections, ordered, plan, lists, settings.params)
    sections = _section_leads(sections, ordered, plan, settings.params)
    sections = _section_parts(sections, ordered, plan, context, db, settings.params)
    # the sections brought in add places: the chunks they move down stay in the ranking
    chunks = _ranked(sections, settings, len(ordered) + len(sections) - len(near))
    judged = _ranked(_unique([*reused, *found]), settings)  # the fusion's own order: what the
    # library holds, for the coverage decision
    best = max((c.similarity for c in chunks if c.similarity is not None), default=None)
    extra = (titles[0],) if titles is not None else ()
    loaded = context.load(db, (c.chunk_id for c in (*chunks, *judged)))
    return Retrieval(chunks, best, notices, extra, loaded, judged if judged != chunks else ())


def _keyword_hits(
    ranked: list[RetrievedChunk],
    ordered: list[RetrievedChunk],
    plan: RetrievalPlan,
    lists: list[RankedList],
    params: Params,
) -> list[RetrievedChunk]:
    """The first chunks of the question's own keyword list (`fusion.keyword_places`) that lie in
    the first place's document but not among the places a model reads take the places of that
    document's own last chunks there, marked `beside` the first chunk; the chunks they replace
    come right after the places. Words the question types may sit in a chunk the embedding puts
    far from it: a list of operators whose one line says "concatenates" ("Other Operators", FTS
    2nd, vector 49th for "how do I concatenate a string and a variable"), a code block under a
    one-line lead-in. Only the leading page's own places, never another page's (taking the last
    place whatever its page pushed out the other page that answered: h03/3, h11/1 at three hits),
    and never one of the places before the extractive answer's pool (`answer.pool`, wider on a
    meta-request): the documents ranked and their order, that answer and the next turn's anchors
    stay as they were."""
    most = params.fusion.keyword_places
    places = params.answer.prompt_sources
    if most <= 0 or len(ranked) <= places:
        return ranked
    own = {
        chunk_id
        for found in _lists(plan, lists, Source.QUESTION)
        if found.weight > 0
        for chunk_id in found.ids[:most]
    }
    first = ranked[0]
    read = {c.chunk_id for c in ranked[:places]}
    new = [
        c
        for c in ordered
        if c.chunk_id in own
        and c.chunk_id not in read
        and c.document_id == first.document_id
        and c.repeats is None
    ]
    pool = pool_size(plan.reuse, params.answer)
    # the places they take: the last of the leading page's own among those after the pool
    own_places = (
        [
            i
            for i in range(pool, places)
            if i < len(ranked) and ranked[i].document_id == first.document_id
        ][-len(new) :]
        if new
        else []
    )
    if not own_places:
        return ranked
    brought = {
        own_places[j]: replace(c, beside=first.chunk_id)
        for j, c in enumerate(new[: len(own_places)])
    }
    moved = {c.chunk_id for c in brought.values()}
    out = [brought.get(i, c) for i, c in enumerate(ranked[:places])]
    displaced = [ranked[i] for i in own_places]
    rest = [c for c in ranked[places:] if c.chunk_id not in moved]
    return [*out, *displaced, *rest]


def _section_leads(
    ranked: list[RetrievedChunk],
    ordered: list[RetrievedChunk],
    plan: RetrievalPlan,
    params: Params,
) -> list[RetrievedChunk]:
    """Two or more subsections of one section among the places a model reads, the section's own
    text not: the section's best-ranked chunk of its own (its heading, no deeper) takes the place
    of the lower of them, marked `beside` the higher. A section's own text is what introduces its
    parts ("You can then install completion with: `typer --install-completion`" over "Run with
    Python" and "Run with the typer command"); two of its parts found say the question is about
    the section, and its lead ranks below them because the parts share more of the question's
    words. Only a lead some vector list found (a section over a whole page's catalogue, found by
    one keyword hit 55th, is no evidence: shared d20/1 lost)."""

    read = ranked[: params.answer.prompt_sources]

    def lead_of(lower: RetrievedChunk, out: list[RetrievedChunk]) -> RetrievedChunk | None:
        parent = heading_levels(lower.heading)[:-1]
        if not parent:
            return None
        higher = next(
            (
                c
                for c in out[: out.index(lower)]
                if c.document_id == lower.document_id
                and c.beside is None
                and heading_levels(c.heading)[:-1] == parent
                and c.heading != lower.heading
            ),
            None,
        )
        lead = _best_found(
            ordered, lower.document_id, lambda h: heading_levels(h) == parent, read, out
        )
        return replace(lead, beside=higher.chunk_id) if higher and lead else None

    return _swapped(ranked, plan, params, lead_of)


def _section_parts(
    ranked: list[RetrievedChunk],
    ordered: list[RetrievedChunk],
    plan: RetrievalPlan,
    context: TurnContext,
    db: Database,
    params: Params,
) -> list[RetrievedChunk]:
    """A section's own text that is one sentence introducing its parts ("The following parameters
    interact with how the OpenAPI schema (and docs) are generated.") holding a place a model reads
    with none of its parts: its best-ranked part some vector list found takes that place, marked
    `beside` it. The sentence says only that the answer is below it; the part the question is
    about ranks under it because the parts' own words are their parameters' names."""
    read = ranked[: params.answer.prompt_sources]
    texts = {
        i: c.text for i, c in context.load(db, (c.chunk_id for c in read if c.heading)).items()
    }

    def part_of(lead: RetrievedChunk, out: list[RetrievedChunk]) -> RetrievedChunk | None:
        if not lead.heading or lead.chunk_id not in texts:
            return None
        pieces = units(texts[lead.chunk_id], params.answer, True, True)
        if len(pieces) != 1 or pieces[0].block or pieces[0].kind != "sentence":
            return None
        below = lead.heading + " > "
        if any(c.document_id == lead.document_id and c.heading.startswith(below) for c in out):
            return None
        part = _best_found(ordered, lead.document_id, lambda h: h.startswith(below), read, out)
        return replace(part, beside=lead.chunk_id) if part else None

    return _swapped(ranked, plan, params, part_of)


def _best_found(
    ordered: list[RetrievedChunk],
    document: int,
    heading: Callable[[str], bool],
    read: list[RetrievedChunk],
    out: list[RetrievedChunk],
) -> RetrievedChunk | None:
    """The best-ranked chunk of `document` under a `heading` that a vector list found, not among
    the places (`read` as ranked, `out` as changed) and repeating none."""
    placed = {c.chunk_id for c in (*read, *out)}
    return next(
        (
            c
            for c in ordered
            if c.document_id == document
            and heading(c.heading)
            and c.chunk_id not in placed
            and c.repeats is None
            and c.vector_rank is not None
        ),
        None,
    )


def _swapped(
    ranked: list[RetrievedChunk],
    plan: RetrievalPlan,
    params: Params,
    swap: Callable[[RetrievedChunk, list[RetrievedChunk]], RetrievedChunk | None],
) -> list[RetrievedChunk]:
    """Each place a model reads after the extractive answer's pool (`answer.pool`, wider on a
    meta-request) held by a chunk the search ranked (none brought beside another) given to what
    `swap` says should hold it; the chunks replaced come right after the places. The documents
    ranked and their order, that answer and the next turn's anchors stay as they were."""
    places = params.answer.prompt_sources
    pool = pool_size(plan.reuse, params.answer)
    out = list(ranked[:places])
    displaced: list[RetrievedChunk] = []
    for i in range(pool, len(out)):
        if out[i].beside is not None:
            continue
        new = swap(out[i], out)
        if new is not None:
            displaced.append(out[i])
            out[i] = new
    if not displaced:
        return ranked
    moved = {c.chunk_id for c in out}
    return [*out, *displaced, *(c for c in ranked[places:] if c.chunk_id not in moved)]


def _asked(fused: list[Fused], context: TurnContext) -> list[Fused]:
    """The fused chunks of the collections a question names where it asks (`context.asked`,
    `collections.asked_in`), when the lists found any; else all of them."""
    asked = context.asked.document_ids if context.asked is not None else None
    kept = [item for item in fused if asked is None or item.document_id in asked]
    return kept or fused


def _unique(chunks: list[RetrievedChunk]) -> list[RetrievedChunk]:
    """Each chunk once, where it first stands (a reused chunk before the search's copy of it)."""
    kept: dict[int, RetrievedChunk] = {}
    for chunk in chunks:
        kept.setdefault(chunk.chunk_id, chunk)
    return list(kept.values())


def _ranked(
    chunks: list[RetrievedChunk], settings: Settings, most: int | None = None
) -> tuple[RetrievedChunk, ...]:
    """The first `top_k` chunks (`most`: as many as given, neighbours included), ranked."""
    return tuple(
        RetrievedChunk(**{**c.to_dict(), "rank": rank})
        for rank, c in enumerate(chunks[: settings.top_k if most is None else most], start=1)
    )


def _with_neighbours(
    ranked: list[RetrievedChunk], context: TurnContext, db: Database, params: Params
) -> list[RetrievedChunk]:
    """The best `section_neighbours` chunks each followed by the chunks right before and after it
    in its section (same document and heading), moved up or brought in: the sentence that answers
    is often beside the one the question matched (the table of loop variables just before the
    paragraph that names them, a configuration block before its explanation). They add to the
    ranking's places, never take one: the documents ranked and their order stay as they were,
    and joined into one passage with their neighbour they reach a model as one place. A neighbour
    already among the places a model reads stays where it is, unless the chunks brought beside
    the hits above it would push it out of those places: then it moves up beside its own hit."""
    hits = [c for c in ranked[: params.fusion.section_neighbours] if c.repeats is None]
    near = library.section_neighbours(db, (c.chunk_id for c in hits)) if hits else {}
    if not near:
        return ranked
    by_id = {c.chunk_id: c for c in ranked}
    stored = context.load(db, (i for ids in near.values() for i in ids if i not in by_id))
    places = params.answer.prompt_sources
    stay = {c.chunk_id for c in ranked[:places]}
    out = _neighbours_placed(ranked, hits, near, stay, by_id, stored)
    pushed = {c.chunk_id for c in out[places:]} & stay & {i for ids in near.values() for i in ids}
    return _neighbours_placed(ranked, hits, near, stay - pushed, by_id, stored) if pushed else out


def _neighbours_placed(
    ranked: list[RetrievedChunk],
    hits: list[RetrievedChunk],
    near: Mapping[int, tuple[int, ...]],
    stay: set[int],
    by_id: Mapping[int, RetrievedChunk],
    stored: Mapping[int, StoredChunk],
) -> list[RetrievedChunk]:
    """`ranked` with each hit's neighbours right after it, but those in `stay`."""
    out: list[RetrievedChunk] = []
    for chunk in ranked:
        if any(c.chunk_id == chunk.chunk_id for c in out):
            continue
        out.append(chunk)
        for neighbour in near.get(chunk.chunk_id, ()) if chunk in hits else ():
            if neighbour in stay or any(c.chunk_id == neighbour for c in out):
                continue
            if neighbour in by_id:
                out.append(replace(by_id[neighbour], beside=chunk.chunk_id))
            elif neighbour in stored:
                out.append(_beside(chunk, stored[neighbour]))
    return out


def _beside(hit: RetrievedChunk, stored: StoredChunk) -> RetrievedChunk:
    """A chunk no query ranked, brought in beside `hit`: no ranks, no score of its own."""
    found = Fused(stored.id, stored.document_id, None, None, 0.0, 0.0, 0.0, False)
    return replace(_chunk(0, found, stored, None), beside=hit.chunk_id)


def _leading(
    ranked: list[RetrievedChunk],
    context: TurnContext,
    db: Database,
    settings: Settings,
    named: frozenset[int],
) -> int | None:
    """The document of the first place when it clearly leads: the last answer's document a
    meta-request reuses, a document the question names, or the document of the question's own
    best chunk when that chunk is ahead of every other document's by the confident margin."""
    first = ranked[0]
    if first.reused or first.document_id in named:
        return first.document_id
    probe = context.probe
    if not probe.ids or probe.margin < settings.params.plan.confident_margin:
        return None
    best = context.load(db, probe.ids[:1]).get(probe.ids[0])
    return first.document_id if best is not None and best.document_id == first.document_id else None


def _page_in_order(
    ranked: list[RetrievedChunk],
    plan: RetrievalPlan,
    context: TurnContext,
    db: Database,
    settings: Settings,
) -> list[RetrievedChunk]:
    """A page named and asked about as a whole (the outline's shape: it leads, the question
    names it unmistakably and says nothing of its own besides one of its headings,
    `outline.asked_section`): the chunks of that section, or of the page, in reading order take
    the places a model reads, the lead first, so its passages are the page's lead and parts, not
    the chunks closest to the question's words; the other chunks follow in their order. Not on a
    meta-request reusing the last answer's page."""
    if not ranked or plan.reuse:
        return ranked
    lead = ranked[0].document_id
    if lead not in named_exactly(db, context.question):
        return ranked
    page = library.outline(db, lead)
    titles = list(typed_titles(db, context.question).values())
    section = asked_section(context.question, [heading for _, heading, _ in page], titles)
    if section is None:
        return ranked
    depth = heading_levels(section)
    inside = [i for i, heading, _ in page if heading_levels(heading)[: len(depth)] == depth]
    top = inside[: settings.params.answer.prompt_sources]
    by_id = {c.chunk_id: c for c in ranked}
    stored = context.load(db, [i for i in top if i not in by_id])
    first = ranked[0]
    placed_first = [
        by_id[i] if i in by_id else _beside(first, stored[i])
        for i in top
        if i in by_id or i in stored
    ]
    kept = {c.chunk_id for c in placed_first}
    return placed_first + [c for c in ranked if c.chunk_id not in kept]


def _with_sections(
    ranked: list[RetrievedChunk],
    plan: RetrievalPlan,
    context: TurnContext,
    db: Database,
    settings: Settings,
    named: frozenset[int],
) -> list[RetrievedChunk]:
    """The leading document's best sections, searched among its chunks alone with the question's
    vector and keywords, take the places of other documents' chunks among those a model reads
    (`fusion.leading_sections` at most), marked `beside` its first chunk. The answer to a
    question is often another section of the page its best chunk found (a code block under a
    short lead-in ranks below every page that shares the question's words); the documents ranked
    and their order stay as they were (the lead is first already)."""
    most = settings.params.fusion.leading_sections
    lead = _leading(ranked, context, db, settings, named) if ranked and most > 0 else None
    if lead is None:
        return ranked
    keywords = next(
        (q.query for q in plan.queries if q.source is Source.QUESTION and q.index is Index.FTS),
        context.question,
    )
    best = within_document(
        db,
        lead,
        context.vector,
        keywords,
        k=settings.rrf_k,
        vector_weight=settings.vector_weight,
        fts_weight=settings.fts_weight,
    )
    answer = settings.params.answer  # a meta-request's answer draws on a wider pool
    pool = pool_size(plan.reuse, answer)
    own = [c.chunk_id for c in ranked if c.beside is None][:pool]
    order, new = placed(
        [(c.chunk_id, c.document_id) for c in ranked],
        lead,
        best,
        settings.params.answer.prompt_sources,
        most,
        frozenset(own),  # the extractive answer's chunks keep their places: it stays the same
    )
    if not new:
        return ranked
    by_id = {c.chunk_id: c for c in ranked}
    stored = context.load(db, [i for i in new if i not in by_id])
    first = ranked[0]
    for chunk_id in new:
        if chunk_id in by_id:
            by_id[chunk_id] = replace(by_id[chunk_id], beside=first.chunk_id)
        elif chunk_id in stored:
            by_id[chunk_id] = _beside(first, stored[chunk_id])
    return [by_id[i] for i in order if i in by_id]
