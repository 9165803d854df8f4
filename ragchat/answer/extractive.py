"""The extractive answer (no model): units of the sources chosen for the request, in reading
order, each source's sentences ending in its [n].

One selector per mode. A question (and "tell me more", which ranks the same way and differs in
what it draws from and excludes, decided by the caller) takes the units that share the query's
words; an example request puts code and example sentences first; a summary takes the most
central units, one from each of the last answer's sources first."""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import TypeVar

from ..lexicon import DEMONSTRATIVES, DETERMINERS, REASON_CUES, REPLACEABLE, STOPWORDS
from ..store.library import StoredChunk
from ..text import code_names, content_words, is_fence, stem, words
from .blocks import ENDS_IN_CODE, LIST_ITEM
from .params import AnswerParams
from .prompt import CITATION, Source
from .units import Unit, cut_asked, is_boilerplate, units

NOT_COVERED = "The documents may not cover this question."
NOTHING_NEW = "The sources say nothing beyond the last answer."
SHOWN_AGAIN = "The sources hold no other example of this than the one already shown:"
NO_SENTENCES = "The sources hold no readable sentences."
EXAMPLE_CUES = re.compile(r"\b(for example|for instance|e\.g\.|such as|say,)", re.IGNORECASE)
SUMMARY_CUES = re.compile(r"\b(summar|sum up|recap|in short|tl;?dr|overview)", re.IGNORECASE)
EXAMPLE_REQUEST = re.compile(
    r"\b(example|sample|snippet|demo|show me how|illustrat)", re.IGNORECASE
)
CODE_REQUEST = re.compile(r"\bcode\b|^\W*(?:\w+\W+){0,3}?(?:show|write)\b", re.IGNORECASE)
_ITEM_MARK = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+")  # a list item's marker
INTRODUCES = re.compile(r"(:\s*$|\bas follows\b|\bthe following\b)", re.IGNORECASE)
HEAD_CHARS = 40  # the start of a unit's text that tells which chunk of a passage it starts in
T = TypeVar("T")
Idf = Callable[[str], float]


class Mode(Enum):
    QUESTION = "question"  # a question: the units that share its words
    MORE = "more"  # "tell me more": like a question, from the last sources and new ones
    EXAMPLE = "example"  # "give me an example": code and example sentences first
    SUMMARY = "summary"  # "summarize it" (about the last answer): the most central units


def mode_of(question: str, meta: bool) -> Mode:
    """A meta-request asking to sum up is a summary (even if it also says "example"); else any
    request for an example is one, and a meta-request for code or to be shown ("show me the
    code for that"); else a meta-request asks for more."""
    if meta and SUMMARY_CUES.search(question):
        return Mode.SUMMARY
    if EXAMPLE_REQUEST.search(question) or (meta and CODE_REQUEST.search(question)):
        return Mode.EXAMPLE
    return Mode.MORE if meta else Mode.QUESTION


@dataclass(frozen=True)
class Request:
    query: str  # the words units are ranked by
    sources: Sequence[Source]  # ranked; the first source's best unit is always in
    count: int = 4  # units to show (a block brought by its lead-in comes on top)
    weak: bool = False  # the sources match only weakly: the answer says so first
    priors: Mapping[int, float] = field(default_factory=dict)  # chunk similarity, by source number
    exclude: str = ""  # what earlier answers said: none of it is said again (a summary may)
    again: frozenset[str] = frozenset()  # stems whose units may be said again though excluded
    said: str = ""  # what earlier answers said: a question shows it again only when nothing new
    # in the sources shares the question's words (then it is the answer itself)
    cover: Sequence[int] = ()  # a summary: the last answer's source numbers, one unit from each
    subject: str = ""  # a meta-request's own subject ("in Python", "the python side of that")
    why: bool = False  # the question asks for a reason: a sentence that gives one ranks higher
    asked: str = ""  # the question's own words, when `query` also holds the conversation's
    reach: Sequence[Source] = ()  # the turn's other sources a model reads: their how-to code
    # (a lead-in with its block) may come beside the answer, or after the unit it goes on from
    # (the opening of a section's next chunk), nothing else of them
    last: str = ""  # a meta-request: the last answer itself (what "summarize that" sums up)
    follow_up: bool = True  # read as going on with the last answer: what is new leads; a new
    # topic shows what an earlier answer said in its place among the rest

    def by_number(self) -> dict[int, Source]:
        """The sources and the reach, by their numbers."""
        return {s.number: s for s in [*self.sources, *self.reach]}


@dataclass(frozen=True)
class Answer:
    text: str
    used: frozenset[int]  # source numbers the answer stands on


def extractive(mode: Mode, request: Request, idf: Idf, params: AnswerParams) -> Answer:
    return SELECTORS[mode](request, idf, params)


def pool_size(meta: bool, params: AnswerParams) -> int:
    """How many of the ranked sources an extractive answer draws from: `pool`, more for a
    meta-request (its first ones are the last answer's)."""
    return params.pool * (params.meta_pool_factor if meta else 1)


def answer_pool(sources: Sequence[T], meta: bool, params: AnswerParams) -> Sequence[T]:
    """The sources (ranked) an extractive answer draws from (`pool_size`)."""
    return sources[: pool_size(meta, params)]


# --- the selectors -----------------------------------------------------------------


def by_question(request: Request, idf: Idf, params: AnswerParams) -> Answer:
    """The units that best answer the query: ranked by its words (idf-weighted, stem-matched)
    and their chunk's relevance; the best unit of the first source always in; units sharing no
    word with the query only fill places the others leave."""
    candidates = _candidates(request.sources, request.exclude, params, again=request.again)
    if not candidates:
        return _nothing_usable(request, params)
    own = len(candidates)  # the units after these are the reach's how-to code only
    candidates += _reached(request, candidates, params)
    ranking = _Ranking.of(request, candidates, idf, params, own=own)
    scores = ranking.masked([ranking.relevance(i) for i in range(len(candidates))], bare=False)
    # its chunk's rank alone does not make a unit an answer ("... expensive, slow and uncertain"
    # must not push out the list of formalities)
    relevant = ranking.relevant()
    if (
        request.exclude
        and not any(relevant[:own])
        and _said_before_was_relevant(request, ranking, params)
    ):
        return Answer(NOTHING_NEW, frozenset())
    # what the session showed comes again only as the answer itself: when it still beats the
    # best new unit that shares the question's words by `repeat_penalty`, and after what is new
    said = _key(request.said)
    repeats = [bool(said) and _unit_key(u) in said for _, u in candidates]
    unsaid = scores  # before a repeat is held back: what was just asked may be one (`with_asked`)
    best_new = max(
        (s for s, r, rel in zip(scores[:own], repeats, relevant, strict=False) if rel and not r),
        default=-math.inf,
    )
    scores = [
        (s - params.repeat_penalty if s - params.repeat_penalty >= best_new else -math.inf)
        if r
        else s
        for s, r in zip(scores, repeats, strict=True)
    ]
    # the units that come again do not set the bar for what is new: a repeat scoring far above
    # the rest would otherwise leave it the whole answer ("So, with the following FilterSchema"
    # again, for a question that asks why)
    # the reach's code is offered only beside the answer (`with_asked`, `with_code`)
    reached, scores = scores, [s if i < own else -math.inf for i, s in enumerate(scores)]
    fresh = [s for s, r in zip(scores, repeats, strict=True) if not r and s > -math.inf]
    floor = max(fresh or scores) - params.score_margin
    chosen = ranking.filled(scores, ranking.first_source_best(scores), relevant, floor)
    chosen, steps = ranking.with_next_steps(chosen)
    chosen, steps = ranking.with_named_next(chosen, steps)
    chosen = ranking.with_asked(unsaid, chosen, relevant, floor)
    chosen = ranking.with_code(reached, chosen, ranking.under_asked_heading(relevant), floor)
    chosen, steps = ranking.with_section_code(chosen, steps)
    return ranking.answer(
        chosen,
        after={i for i, repeat in enumerate(repeats) if repeat} if request.follow_up else (),
        steps=steps,
    )


def by_example(request: Request, idf: Idf, params: AnswerParams) -> Answer:
    """Examples (code blocks, sentences with an example cue) and only examples while the sources
    hold some: the best code block, after the first source's best unit when that is an example
    too ("give me an example" after a list of converters opens with code, not another list).
    Code the session has shown comes back only when no other code is left on the subject: when
    the sections of the last answer's sources hold no new code, the example is the one they
    showed, said as such (`_shown_example`)."""
    again = _shown_example(request, params)
    candidates = (
        _in_language(request, params)
        or again
        or _candidates(request.sources, request.exclude, params, examples=True, again=request.again)
    )
    candidates += _shown_on_subject(request, candidates, idf, params)
    if not candidates:
        return _nothing_usable(request, params)
    ranking = _Ranking.of(request, candidates, idf, params)
    bonus = [ranking.example_bonus(i) for i in range(len(candidates))]
    scores = ranking.masked(
        [ranking.relevance(i) + bonus[i] for i in range(len(candidates))], bare=True
    )
    code = next(
        (
            i
            for i in ranking.by_score(scores)
            if _shows_code(candidates[i][1]) and scores[i] > -math.inf
        ),
        None,
    )
    chosen = [i for i in ranking.first_source_best(scores) if code is None or bonus[i] > 0]
    if code is not None and code not in chosen:
        chosen.append(code)
    if any(bonus):  # only examples fill the answer: "give me an example" is not "tell me more"
        scores = [score if extra > 0 else -math.inf for score, extra in zip(scores, bonus)]
    floor = max(scores) - params.score_margin
    chosen = ranking.filled(scores, chosen, [True] * len(candidates), floor)
    answer = ranking.answer(chosen)
    if again and any(_example_code(candidates[i][1]) for i in chosen):
        return replace(answer, text=f"{SHOWN_AGAIN}\n{answer.text}")
    return answer


def _shown_example(request: Request, params: AnswerParams) -> list[tuple[int, Unit]]:
    """For an example of the last answer's subject ("give me an example" after it, no subject of
    its own; `cover`: its sources), when the sections those sources stand in hold code the
    session showed and none it did not: those sections' units, the shown code included. The
    rest of the pool is off the subject: its new code is another section's example (the
    count_words actor and a middleware class for an example of scheduling a message, whose
    only example the last answer showed), and a follow-up shows what is already shown only
    when it is the answer itself. Empty otherwise (new code on the subject leads, as before)."""
    if request.subject or not request.cover or not request.exclude:
        return []
    subject = {_section(s) for s in request.sources if s.number in request.cover}
    on = [s for s in request.sources if any(_within(_section(s), h) for h in subject)]
    if any(_example_code(u) for _, u in _usable(on, request.exclude, params, False, request.again)):
        return []
    found = _usable(on, request.exclude, params, True, request.again)
    return found if any(_example_code(u) for _, u in found) else []


def _shown_on_subject(
    request: Request, found: Sequence[tuple[int, Unit]], idf: Idf, params: AnswerParams
) -> list[tuple[int, Unit]]:
    """For an example with a subject of its own ("give me an example of the decorator way",
    "... with the beta parameter"), the code the session showed that holds more of the subject's
    words (idf) than every new example of `found`: the example asked for may be one already
    shown ("give me a quick example of connecting and running a query" after the quickstart
    two turns before; SSL and pool options led instead), and a follow-up shows what is already
    shown when it is the answer itself; the ranking decides among them. Empty without a subject
    or an exclusion."""
    subject = {stem(w): idf(w) for w in content_words(request.subject)}
    if not subject or not request.exclude:
        return []
    keys = {_unit_key(unit) for _, unit in found}
    bar = max(
        (_weight_held(subject, _unit_stems(u)) for _, u in found if _example_code(u)), default=0.0
    )
    return [
        (number, unit)
        for number, unit in _usable(request.sources, request.exclude, params, True, request.again)
        if _unit_key(unit) not in keys
        and _example_code(unit)
        and _weight_held(subject, _unit_stems(unit)) > bar
    ]


def _weight_held(weights: Mapping[str, float], stems: Collection[str]) -> float:
    """The weight (idf) of the stems of `weights` that `stems` holds."""
    return sum(w for s, w in weights.items() if s in stems)


def _shows_code(unit: Unit) -> bool:
    """A unit that shows code of a use: not an object description's signature, which only names
    the call its entry's sentence describes (it heads the sentence, `_signature_before`)."""
    return unit.has_code and not unit.is_signature


def _example_code(unit: Unit) -> bool:
    """Code an example shows: not a console run (output), but a Python session a sentence
    introduces (a doctest: its `>>>` lines are the code, as `_allowed` shows it); not an object
    description's signature, which names a call and shows no use of it."""
    return _shows_code(unit) and (not unit.is_console or (unit.is_session and bool(unit.sentence)))


def _section(source: Source) -> tuple[int, str]:
    return source.chunk.document_id, source.chunk.heading


def _within(section: tuple[int, str], subject: tuple[int, str]) -> bool:
    """`section` is the `subject` section or one under it (same document; every section of a
    page is under its opening part, the one before its first heading)."""
    (document, heading), (of, under) = section, subject
    return document == of and (not under or heading == under or heading.startswith(f"{under} > "))


def _in_language(request: Request, params: AnswerParams) -> list[tuple[int, Unit]]:
    """An example asked for in a language the sources' code is tagged with ("give me an example
    in Python", "the python side of that": a fence's language tag among the request's own
    words): only code in that language, the code the session showed included (the Python side
    of the last answer may be the code it showed; the ranking decides), empty when the request
    names no language of the sources' code."""
    asked = set(words(request.subject))
    if not asked:
        return []
    return [
        (number, unit)
        for number, unit in _usable(request.sources, request.exclude, params, True)
        if unit.has_code and fence_language(unit.block) in asked
    ]


def fence_language(block: str) -> str:
    """The language tag of a fenced code block ("```python" -> "python"; "" untagged)."""
    opening = block.lstrip().split("\n", 1)[0].lstrip("`~").strip(" {}.")
    return (words(opening) or [""])[0]


def by_centrality(request: Request, idf: Idf, params: AnswerParams) -> Answer:
    """A summary: the units most like the others (shared idf-weighted stems), with a little of
    the query's relevance; the most central unit of each source in `cover` first. What earlier
    answers said may be said again."""
    summarized = set(request.cover) if not request.subject else set()
    own = [s for s in request.sources if s.number in summarized]
    # "summarize that": the last answer's sources, not what the search for more found
    candidates = _candidates(own or request.sources, "", params)
    if not candidates:
        return _nothing_usable(request, params)
    ranking = _Ranking.of(request, candidates, idf, params)
    scores = ranking.masked([ranking.centrality(i) for i in range(len(candidates))], bare=False)
    if own and request.last:
        scores = _led_by_the_last(candidates, scores, request)
    # a summary of the last answer ("summarize that") says again none of the code that answer
    # showed; one with a subject of its own may need the code that spells it ("--accept/--reject")
    code = bool(request.subject)
    stated: list[tuple[int, Unit]] = list(candidates)
    if any(not u.has_code and x > -math.inf for (_, u), x in zip(candidates, scores, strict=True)):
        # a summary says what the section says, in its sentences and items: no code dump (one
        # line of code, `Validator("FOO", default=...)`, is how the section says it, not a dump);
        # in a summary that brings no code, a lead-in that says a point of its own stands as a
        # sentence without it (one with a subject shows such a lead-in with its code, brought by
        # the sentence before it: stating it alone there lost d04/3's `--accept/--reject`)
        if not code:
            stated = [(n, _as_sentence(u, params)) for n, u in candidates]
        scores = [
            -math.inf if len(u.code_lines) > 1 else x
            for (_, u), x in zip(stated, scores, strict=True)
        ]
    by_score = ranking.by_score(scores)
    chosen: list[int] = []
    for number in request.cover:
        best = next(
            (i for i in by_score if candidates[i][0] == number and scores[i] > -math.inf), None
        )
        if best is not None and best not in chosen:
            chosen.append(best)
    everything = [True] * len(candidates)
    floor = min((x for x in scores if x > -math.inf), default=0.0)
    chosen = ranking.filled(scores, chosen, everything, floor, code=code)
    return replace(ranking, candidates=stated).answer(chosen)


def _led_by_the_last(
    candidates: list[tuple[int, Unit]], scores: list[float], request: Request
) -> list[float]:
    """A summary of "that" sums up the last answer: the most central of the units it said, half
    the summary at most, rank above the rest, which the summary's other places take by
    centrality (a short answer does not come back whole; the section's points it left out may
    come)."""
    said = _key(request.last)
    shown = [
        i
        for i, (_, unit) in enumerate(candidates)
        if scores[i] > -math.inf and _unit_key(unit) in said
    ]
    lead = sorted(shown, key=lambda i: -scores[i])[: max(1, request.count // 2)]
    top = max((x for x in scores if x > -math.inf), default=0.0) + 1.0
    return [x + top if i in lead else x for i, x in enumerate(scores)]


def _as_sentence(unit: Unit, params: AnswerParams) -> Unit:
    """A lead-in of a code block of several lines, as a summary may say it: its sentence alone,
    ending in a full stop, when it says a point of its own ("... set the pipe_ignore option to
    True when you create the "receiving" message:"), not when it only points at its code ("To
    use this functionality simply do the following:", "... like this:", "Here's our model:"),
    which it is without the code. Else the unit as it is (a summary masks its code)."""
    sentence = unit.sentence.rstrip()
    if len(unit.code_lines) <= 1 or not sentence.endswith(":"):
        return unit
    said = sentence[:-1].rstrip()
    first, last = (words(said) or [""])[0], (words(said) or [""])[-1]
    if (
        len(said) < params.min_sentence_chars
        or INTRODUCES.search(said)
        or last in STOPWORDS
        or first.startswith("here")
        or _opens_with_pointer(said)
    ):
        return unit
    return Unit(unit.position, f"{said}.")


def outline_summary(
    parts: Sequence[tuple[int, str, str]],
    section: str,
    params: AnswerParams,
    title: str = "",
    idf: Idf | None = None,
) -> Answer:
    """A page or one of its sections as a whole ("what's the 'X' page about?", "in 'X', what's
    the Y part about?"): the section's lead sentences, then each heading right under it as an
    item with the sentence or list item that stands for its part (the heading alone when its
    part has none that stands alone). `parts`: the document's chunks in reading order as
    (source number, heading path, text); `section`: the heading path summarised ("" for the
    whole page); `title`: the page's title. The sentences chosen are those that hold most of the
    outline's own words (the page's title and the headings of the section, by idf), the first
    on a tie: a page about "Add Typer" is told by "Use app.add_typer() to include ...", not by
    the part's opening remark, and a note box that opens the page ("This is historical
    information ...") gives way to the sentence that names its subject. No code: a summary says
    what the section says."""
    depth = len(heading_levels(section))
    inside = [p for p in parts if heading_levels(p[1])[:depth] == heading_levels(section)]
    weights = _outline_weights(title, section, [heading for _, heading, _ in inside], idf)
    lines: list[str] = []
    used: set[int] = set()
    first = next((p for p in inside if p[1] == section and _plain_sentences(p[2], params)), None)
    if first is not None:
        lead = _telling(_plain_sentences(first[2], params), weights, params.outline_lead)
        lines.append(" ".join(lead) + f" [{first[0]}]")
        used.add(first[0])
    seen: list[str] = []
    for number, heading, _ in inside:
        levels = heading_levels(heading)
        if len(levels) <= depth or levels[depth] in seen or len(seen) >= params.outline_items:
            continue
        seen.append(levels[depth])
        own = [
            (n, unit)
            for n, h, text in inside
            if heading_levels(h) == levels[: depth + 1]
            for unit in _standing_units(text, params)
        ]
        best = _telling([unit for _, unit in own], weights, 1, items=True)
        where = next((n for n, unit in own if best and unit == best[0]), number)
        lines.append(f"- {levels[depth]}" + (f": {best[0]}" if best else "") + f" [{where}]")
        used.add(where)
    return Answer("\n".join(lines), frozenset(used))


def _outline_weights(
    title: str, section: str, headings: Sequence[str], idf: Idf | None
) -> dict[str, float]:
    """The outline's own words (the page's title, the section and the headings under it) as
    stems with their idf: what the page says it is about."""
    names = " ".join([title, section, *headings])
    return {stem(w): (idf(w) if idf else 1.0) for w in dict.fromkeys(content_words(names))}


def _outline_share(text: str, weights: Mapping[str, float]) -> float:
    """The outline's words a sentence holds (idf), over the square root of its own stem count:
    a long sentence does not tell a part just by holding more words."""
    held = _stems(text)
    return sum(weights.get(s, 0.0) for s in held) / math.sqrt(max(len(held), 1))


def _telling(
    found: Sequence[str], weights: Mapping[str, float], count: int, items: bool = False
) -> list[str]:
    """The `count` sentences that hold most of the outline's words, in reading order; the first
    ones when none holds any. A list item (`items`: a part's units may be "- " items) is taken
    only for the words it holds: it never stands for a part just by coming first."""
    score = [_outline_share(text, weights) for text in found]
    sentences = [i for i, text in enumerate(found) if not (items and text.startswith("- "))]
    if not any(score):
        return [found[i] for i in sentences[:count]]
    ranked = sorted(range(len(found)), key=lambda i: (-score[i], i))[:count]
    return [found[i].removeprefix("- ") for i in sorted(ranked)]


def heading_levels(heading: str) -> list[str]:
    return [level for level in heading.split(" > ") if level] if heading else []


def _standing_units(text: str, params: AnswerParams) -> list[str]:
    """A chunk's sentences that stand alone and the items of its lists ("- " each, those a
    lead-in introduces too: "Here's what we do: - Use app.add_typer() ...")."""
    found: list[str] = []
    for unit in units(text, params):
        if unit.kind == "list":
            found += [
                "- " + _ITEM_MARK.sub("", line).strip()
                for line in unit.block.splitlines()
                if LIST_ITEM.match(line)
            ]
        elif unit.kind == "item" and _answerable(unit, _key(unit.sentence), params):
            found.append("- " + _ITEM_MARK.sub("", unit.sentence).strip())
        elif not unit.block and _answerable(unit, _key(unit.sentence), params):
            found.append(unit.sentence)
    return found


def _plain_sentences(text: str, params: AnswerParams) -> list[str]:
    """A chunk's sentences that stand alone (no block, no lead-in, no title or cut sentence)."""
    return [
        unit.sentence
        for unit in units(text, params)
        if not unit.block and _answerable(unit, _key(unit.sentence), params)
    ]


Selector = Callable[[Request, Idf, AnswerParams], Answer]
SELECTORS: dict[Mode, Selector] = {
    Mode.QUESTION: by_question,
    Mode.MORE: by_question,
    Mode.EXAMPLE: by_example,
    Mode.SUMMARY: by_centrality,
}


def _nothing_usable(request: Request, params: AnswerParams) -> Answer:
    if request.exclude and _candidates(request.sources, "", params):
        return Answer(NOTHING_NEW, frozenset())
    return Answer(NOT_COVERED if request.weak or not request.sources else NO_SENTENCES, frozenset())


def _said_before_was_relevant(request: Request, ranking: _Ranking, params: AnswerParams) -> bool:
    """Some unit an earlier answer showed shares a word with the query."""
    return any(
        ranking.weights.keys() & _unit_stems(u) for _, u in _candidates(request.sources, "", params)
    )


# --- ranking -----------------------------------------------------------------


def _opens_with_pointer(sentence: str) -> bool:
    """The sentence's subject is a pointer alone ("It does no code generation", "These are
    ..."), not a determiner with a noun of its own ("These earlier experiments used ...", which
    names what it is about)."""
    first, second = ([*words(sentence), "", ""])[:2]
    if first not in REPLACEABLE:
        return False
    return first not in DETERMINERS or not second or second in STOPWORDS


@dataclass(frozen=True)
class _Ranking:
    """The candidates of a request and what scoring them needs."""

    request: Request
    candidates: list[tuple[int, Unit]]  # (source number, unit)
    stems: list[set[str]]
    weights: dict[str, float]  # the query's stems and their idf
    order: dict[int, int]  # source number -> its rank among the sources
    idf: Idf
    params: AnswerParams
    lengths: list[float]  # what a unit's word weight is divided by (before damping)
    allowed: list[bool]  # may be shown for this query (a console only when asked about)
    own: int  # the candidates of the request's sources; those after them are the reach's code

    @classmethod
    def of(
        cls,
        request: Request,
        candidates: list[tuple[int, Unit]],
        idf: Idf,
        params: AnswerParams,
        own: int | None = None,
    ) -> _Ranking:
        """`own`: the candidates of the request's sources, those after it the reach's code."""
        weights = {stem(w): idf(w) for w in dict.fromkeys(content_words(request.query))}
        candidates = [
            (n, _cut_for(unit, weights, params) if unit.whole else unit) for n, unit in candidates
        ]
        order = {s.number: i for i, s in enumerate([*request.sources, *request.reach])}
        unit_stems = [_unit_stems(unit) for _, unit in candidates]
        own = len(candidates) if own is None else own
        # a console in the reach is never shown: it is offered as code only
        allowed = _allowed(candidates[:own], unit_stems[:own], weights.keys()) + [
            not unit.is_console or unit.is_session for _, unit in candidates[own:]
        ]
        # a console run nobody asked about, whose lead-in says what the question asks and that
        # follows no code of its chunk, is shown as what it has the reader type: the command is
        # the how-to, the printed run is not (`Unit.typed`). A run after the chunk's code runs
        # that code ("And then we get those values when using completion:" under the example):
        # what it shows is what it printed; "Check it:" says nothing asked. Both stay out.
        for i, (number, unit) in enumerate(candidates[:own]):
            typed = None if allowed[i] else unit.typed()
            if typed is None or not _stems(unit.sentence) & weights.keys():
                continue
            after_code = any(
                n == number and u.position < unit.position and u.has_code and not u.is_console
                for n, u in candidates[:own]
            )
            if not after_code:
                candidates[i] = (number, typed)
                unit_stems[i] = _unit_stems(typed)
                allowed[i] = True
        # the error a sentence says its code raises, when the question asks what that sentence
        # says ("If the value is changed, ... unsigning will raise a BadSignature exception:")
        for i, (_, unit) in enumerate(candidates[:own]):
            if not allowed[i] and unit.raises and _stems(unit.sentence) & weights.keys():
                allowed[i] = True
        return cls(
            request,
            candidates,
            unit_stems,
            weights,
            order,
            idf,
            params,
            [_length(unit, params) for _, unit in candidates],
            allowed,
            own,
        )

    def relevance(self, i: int) -> float:
        """The query's words in the unit, over its length, plus its chunk's similarity and rank."""
        p = self.params
        number, unit = self.candidates[i]
        lexical = sum(weight for s, weight in self.weights.items() if s in self.stems[i])
        prior = p.similarity_weight * self.request.priors.get(number, 0.0) + p.rank_weight / (
            1 + self.order[number]
        )
        return (
            lexical / max(self.lengths[i], p.min_unit_stems) ** p.length_damping
            + prior
            - p.position_penalty * unit.position
            + (p.reason_bonus if self.request.why and REASON_CUES.search(unit.sentence) else 0.0)
        )

    def masked(self, scores: list[float], bare: bool) -> list[float]:
        """The scores with units this query may not show at -inf: a console nobody asked about,
        code without the sentence that introduces it (unless `bare`; a bare table, often a page
        title's "Site | Section" line, stays: masking it cost govt N/A 0.202 -> 0.190 F1). All of
        them stay when nothing else is left."""
        keep = [
            self.allowed[i] and (bare or bool(unit.sentence) or not unit.has_code)
            for i, (_, unit) in enumerate(self.candidates)
        ]
        if not any(keep[: self.own]):  # the reach's code is only ever shown as it may be
            keep[: self.own] = [True] * self.own
        return [score if ok else -math.inf for score, ok in zip(scores, keep, strict=True)]

    def example_bonus(self, i: int) -> float:
        """Example code (`_example_code`), more for code that holds the request's words as its
        own identifiers; a sentence saying "for example"."""
        unit = self.candidates[i][1]
        code = _example_code(unit)
        return (self.params.code_bonus * (1.0 + self.code_match(i)) if code else 0.0) + (
            self.params.example_cue_bonus if EXAMPLE_CUES.search(unit.sentence) else 0.0
        )

    def code_match(self, i: int) -> float:
        """The share of the query's weight (idf) that the unit's code holds among its own
        words: the example that matches the subject is the code written with its names
        (`set` and `false` in `{% set ns = namespace(found=false) %}`), whatever its lead-in."""
        mass = sum(self.weights.values())
        code = _stems(self.candidates[i][1].block)
        return sum(w for s, w in self.weights.items() if s in code) / mass if mass else 0.0

    def centrality(self, i: int) -> float:
        """The idf of the stems the unit shares with each other one, plus a little relevance;
        a unit without words is central to nothing."""
        mine = self.stems[i]
        if not mine:
            return 0.0
        shared = sum(
            sum(self.idf(s) for s in mine & other) / math.sqrt(len(mine) * max(len(other), 1))
            for j, other in enumerate(self.stems)
            if j != i
        )
        return shared + self.params.summary_relevance * self.relevance(i)

    def shares_query_words(self, i: int) -> bool:
        return bool(self.weights.keys() & self.stems[i])

    def relevant(self) -> list[bool]:
        """Which units share the query's words, a sentence that goes on about the one before it
        included: one that opens with a pointer ("It does no code generation, so ..." after "The
        BaseConverter is a simpler and slower converter variant.") says its words through its
        antecedent, so it is as relevant as the sentence it follows."""
        found: list[bool] = []
        for i in range(len(self.candidates)):
            found.append(self.shares_query_words(i) or (self._continues(i) and found[i - 1]))
        return found

    def under_asked_heading(self, relevant: list[bool]) -> list[bool]:
        """`relevant`, and a lead-in with its code whose section heading holds the query's
        words: a section's how-to often says none of them ("run the following command:" +
        `mkdocs gh-deploy` under "GitHub Pages"), its heading names what it does."""
        by_number = self.request.by_number()

        def named(i: int) -> bool:
            number, unit = self.candidates[i]
            if not (unit.has_code and unit.sentence) or number not in by_number:
                return False
            levels = heading_levels(by_number[number].chunk.heading)
            said = {stem(w) for level in levels for w in content_words(level)}
            return bool(said & self.weights.keys())

        return [r or named(i) for i, r in enumerate(relevant)]

    def _follows(self, i: int) -> bool:
        """Candidate `i` comes right after candidate `i - 1` in the same chunk."""
        if i <= 0 or i >= len(self.candidates):
            return False
        (number, unit), (before_number, before) = self.candidates[i], self.candidates[i - 1]
        return number == before_number and before.position == unit.position - 1

    def _continues(self, i: int) -> bool:
        """Unit `i` is a sentence opening with a pronoun or demonstrative right after a sentence
        of the same chunk (no block between: after a block, the pointer may mean the block)."""
        if not self._follows(i):
            return False
        unit, before = self.candidates[i][1], self.candidates[i - 1][1]
        return (
            before.kind == "sentence"
            and not before.block
            and unit.kind in ("sentence", "code", "list", "table")
            and bool(unit.sentence)
            and _opens_with_pointer(unit.sentence)
        )

    def by_score(self, scores: list[float]) -> list[int]:
        return sorted(range(len(self.candidates)), key=lambda i: -scores[i])

    def first_source_best(self, scores: list[float]) -> list[int]:
        """The best unit of the first source, as the answer's first choice (none if it has none)."""
        first = self.request.sources[0].number
        best = next(
            (
                i
                for i in self.by_score(scores)
                if self.candidates[i][0] == first and scores[i] > -math.inf
            ),
            None,
        )
        return [] if best is None else [best]

    def filled(
        self,
        scores: list[float],
        chosen: list[int],
        relevant: list[bool],
        floor: float,
        code: bool = True,
    ) -> list[int]:
        """`chosen`, then the best-scoring units up to the count: relevant ones first, none below
        `floor`, none a near-repeat of one in; then each lead-in's block (not a code block when
        `code` is off: a summary brings no code along, its lead-in stays out)."""
        chosen = list(chosen)
        for only_relevant in (True, False):
            for i in self.by_score(scores):
                if len(chosen) >= self.request.count or scores[i] < floor:
                    break
                if (
                    i not in chosen
                    and (relevant[i] or not chosen or not only_relevant)
                    and not any(self._similar(i, j) or self._same_block(i, j) for j in chosen)
                ):
                    chosen.append(i)
        # a lead-in's block ("... In summary, a will is valid only if:" + the list), then the code
        # right after a unit ("It is a list where items can be:" + the list, then its code)
        for following_of in (self._leads_into_block, self._block_after, self._signature_before):
            for i in list(chosen):
                following = following_of(i)
                if following is not None and self._may_bring(following, chosen, code):
                    chosen.append(following)
        for i in [i for i in chosen if self._points_at_unshown_block(i, chosen)]:
            may_bring = code or not self.candidates[i - 1][1].has_code
            if may_bring and (scores[i - 1] > -math.inf or self._described_after(i - 1)):
                chosen.append(i - 1)  # the block it points at comes along ...
            elif len(chosen) > 1:  # ... or, one the answer may not show, it stays out
                chosen.remove(i)
        return chosen

    def asked_weights(self) -> dict[str, float]:
        """The question's own stems and their idf, when the query also holds words the
        conversation brought (empty otherwise: then the query is the question)."""
        own = {stem(w): self.idf(w) for w in dict.fromkeys(content_words(self.request.asked))}
        own = {s: w for s, w in own.items() if s in self.weights}
        return own if own and self.weights.keys() - own.keys() else {}

    def with_asked(
        self, scores: list[float], chosen: list[int], relevant: list[bool], floor: float
    ) -> list[int]:
        """`chosen`, and the lead-in with its code that holds the most of the question's own
        words when it holds more of them (idf) than every chosen unit: on a follow-up the query
        also carries the conversation's words, and units holding those outscore the how-to of
        what was just asked ("and if I declare only -n, is --user-name still there?" after a
        question about option names: the `typer.Option("--user-name", "-n")` example; "and
        skipping an attribute entirely?": the `override(omit=True)` one). Only a unit not below
        `floor`, relevant, and no repeat of a chosen one. Code only: a plain sentence added so
        lengthened MTRAG's prose answers and lowered their F1 (govt Clarification, clapnq N/A)."""
        own = self.asked_weights()
        if not own:
            return chosen

        def held(i: int) -> float:
            return _weight_held(own, self.stems[i])

        bar = max((held(i) for i in chosen), default=0.0)
        eligible = [
            i
            for i in self._led_code(scores, chosen, relevant, floor)
            if scores[i] > -math.inf
            and held(i) > bar
            and not any(self._similar(i, j) for j in chosen)
        ]
        if not eligible:
            return chosen
        best = max(eligible, key=lambda i: (held(i), scores[i]))
        return [*chosen, best]

    def with_code(
        self, scores: list[float], chosen: list[int], relevant: list[bool], floor: float
    ) -> list[int]:
        """`chosen`, and the how-to code of a lower source when the code `chosen` shows is not
        the code of the question: among the units sharing the query's words (not below `floor`),
        the code a sentence introduces whose own words hold the largest share of the query's
        weight (`code_match`), when that share is above every shown block's. So the how-to line
        of a lower source ("Here's how to use sqlite-utils to enable full-text search ..." with
        its command) comes beside sentences that only describe, and the code written with the
        question's names (`async def` for "async views?") beside an install line or a directory
        tree that holds fewer of them. When `chosen` shows no code, the lead-in with its code right
        after a chosen unit of its chunk comes even below `floor` if its code holds the question's
        words: the sentence that sets up a section's how-to is chosen and the how-to itself,
        longer, scores under a short sentence of a higher source ("If you plan on executing
        queries ..., close the connection" and then "huey provides a special decorator ..." with
        the `@db_task()` example)."""
        shown = [self.code_match(i) for i in chosen if _shows_code(self.candidates[i][1])]
        bar = max(shown, default=-1.0)
        eligible = self._led_code(scores, chosen, relevant, floor if shown else -math.inf)
        if not shown:
            eligible = [
                i
                for i in eligible
                if scores[i] >= floor or (self._goes_on(i, chosen) and self.code_match(i) > 0)
            ]
        if shown:  # code is shown: only a block holding more of the question's names comes
            eligible = [i for i in eligible if self.code_match(i) > bar]
        code = max(eligible, key=lambda i: self.code_match(i) if shown else 0.0, default=None)
        return chosen if code is None else [*chosen, code]

    def _goes_on(self, i: int, chosen: list[int]) -> bool:
        """Unit `i` comes right after a chosen unit of its chunk."""
        return i - 1 in chosen and self._follows(i)

    def with_next_steps(self, chosen: list[int]) -> tuple[list[int], dict[int, tuple[int, float]]]:
        """`chosen`, and for each chosen unit that ends its chunk, the lead-in with its code that
        opens the next chunk of its section when only the reach holds that chunk (a chunk brought
        in beside, `_next_step`); and which unit each step goes on from. A section's walk-through
        goes on across a chunk boundary ("... use it with pytest fixtures:" + the fixtures, then
        "Then you can inject and use those fixtures in your tests:" + the test): the step after
        the one shown is part of its how-to, while the next chunk's units never compete (scored
        on their own words, the chunk brought beside lost answers, `answering._pool`)."""
        out, steps = list(chosen), {}
        for i in chosen:
            j = self._next_step(i)
            if j is not None and self._may_bring(j, out, True):
                out.append(j)
                steps[j] = (i, 0.5)
        return out, steps

    def with_named_next(
        self, chosen: list[int], steps: dict[int, tuple[int, float]]
    ) -> tuple[list[int], dict[int, tuple[int, float]]]:
        """`chosen`, and the sentence right after a chosen sentence of its chunk when it names
        something in code's shape that no chosen unit names (`code_names`: `pool_recycle`,
        `DATABASE_URL.replace(dialect="pymysql")`, `--include-apps`): the sentence that says
        what to write often follows the one that says why, and holds none of the question's
        words ("For MySQL you'll probably need to explicitly specify the pymysql dialect ..."
        and then "... you can obtain this using `DATABASE_URL.replace(dialect="pymysql")`")."""
        out, steps = list(chosen), dict(steps)
        named = set().union(*(code_names(self.candidates[i][1].sentence) for i in chosen))
        for i in chosen:
            unit, j = self.candidates[i][1], i + 1
            if i >= self.own or unit.block or not unit.sentence or j >= self.own:
                continue
            following = self.candidates[j][1]
            new = code_names(following.sentence) - named
            if self._follows(j) and not following.block and new and self._may_bring(j, out, False):
                out.append(j)
                steps[j] = (i, 0.5)
                named |= new
        return out, steps

    def with_section_code(
        self, chosen: list[int], steps: dict[int, tuple[int, float]]
    ) -> tuple[list[int], dict[int, tuple[int, float]]]:
        """`chosen`, and the code that writes the name of a section the answer shows code of (its
        heading's words among the code's own: `pipeline([...])` under "Pipelines") when none of
        the section's code it shows does and the chunk right before the shown one holds it, with
        its lead-in, only in the reach (brought in beside): a refinement (`pipe_ignore`) builds
        on the section's how-to, which comes before it. One at most. Not for a shown sentence
        (a section an answer only mentions lends it nothing) nor from the chunk after (the next
        step is `with_next_steps`'): those brought off-subject code on held-out and shared."""
        by_number = self.request.by_number()

        def chunk(i: int) -> StoredChunk:
            return by_number[self.candidates[i][0]].chunk

        def section(i: int) -> tuple[int, str]:
            return chunk(i).document_id, chunk(i).heading

        def names(i: int) -> bool:
            levels = heading_levels(chunk(i).heading)
            name = {stem(w) for w in content_words(levels[-1])} if levels else set()
            return bool(name) and name <= _stems(self.candidates[i][1].block)

        for i in [i for i in chosen if i < self.own and _shows_code(self.candidates[i][1])]:
            shown = [j for j in chosen if section(j) == section(i)]
            if any(self.candidates[j][1].has_code and names(j) for j in shown):
                continue
            for j in range(self.own, len(self.candidates)):
                if (
                    section(j) == section(i)
                    and chunk(j).ordinal == chunk(i).ordinal - 1
                    and names(j)
                    and self._may_bring(j, chosen, True)
                ):
                    return [*chosen, j], {**steps, j: (i, -0.5)}
        return chosen, steps

    def _next_step(self, i: int) -> int | None:
        """The reach's unit that opens the next chunk of unit `i`'s section (same document and
        heading, the next ordinal), when `i` is the last unit of its chunk and that opening, the
        first of its units the chunk before does not also hold (their overlap), is a lead-in
        with its code."""
        if i >= self.own:
            return None
        by_number = self.request.by_number()
        number, unit = self.candidates[i]
        here = _units_of(by_number[number], self.params)
        if not here or here[-1].position != unit.position:
            return None
        chunk = by_number[number].chunk
        held = {_unit_key(u) for u in here}
        for j in range(self.own, len(self.candidates)):
            other = by_number[self.candidates[j][0]]
            if (other.chunk.document_id, other.chunk.heading, other.chunk.ordinal) != (
                chunk.document_id,
                chunk.heading,
                chunk.ordinal + 1,
            ):
                continue
            opening = next(
                (u for u in _units_of(other, self.params) if _unit_key(u) not in held),
                None,
            )
            if opening is not None and opening.position == self.candidates[j][1].position:
                return j
        return None

    def _led_code(
        self, scores: list[float], chosen: list[int], relevant: list[bool], floor: float
    ) -> list[int]:
        """By score: the relevant units not below `floor` that are code with its lead-in, not
        chosen and not showing a chosen unit's block (what `with_code` and `with_asked` add)."""
        return [
            i
            for i in self.by_score(scores)
            if scores[i] >= floor
            and relevant[i]
            and self.candidates[i][1].has_code
            and self.candidates[i][1].sentence
            and i not in chosen
            and not any(self._same_block(i, j) for j in chosen)
        ]

    def _described_after(self, i: int) -> bool:
        """A code block with no lead-in of its own (its chunk starts with it: the sentence that
        introduced it ended the chunk before) is introduced by the sentence right after it that
        points back at it ("This will create a template environment ..."), unless it is a
        console nobody asked about."""
        unit = self.candidates[i][1]
        return unit.has_code and not unit.sentence and self.allowed[i]

    def _may_bring(self, following: int, chosen: list[int], code: bool) -> bool:
        """Whether a chosen unit may bring the unit `following` it: not in yet, shown for this
        query, code only when `code` is on, and no block a chosen unit shows."""
        return (
            following not in chosen
            and self.allowed[following]
            and (code or not self.candidates[following][1].has_code)
            and not any(self._same_block(following, j) for j in chosen)
        )

    def _signature_before(self, i: int) -> int | None:
        """The signature of the entry sentence `i` belongs to: the nearest one before it in the
        same chunk. An object description's text follows its signature (its fields, then what it
        does), so the signature names what the sentence describes: "rollback(begin=True)" over
        "Roll back the current transaction.", shown before it as its heading."""
        number, unit = self.candidates[i]
        if unit.block or not unit.sentence:
            return None
        j = i - 1
        while j >= 0 and self.candidates[j][0] == number:
            if self.candidates[j][1].is_signature:
                return j
            j -= 1
        return None

    def _block_after(self, i: int) -> int | None:
        """The code block on its own right after unit `i` in the same chunk (no sentence between:
        the text before it, unit `i`, is its lead-in); not a console run, which shows output, nor
        a signature, which the text before it does not introduce (`units.units`)."""
        if i + 1 >= self.own or not self._follows(i + 1):
            return None
        following = self.candidates[i + 1][1]
        if _shows_code(following) and not following.is_console and not following.sentence:
            return i + 1
        return None

    def _points_at_unshown_block(self, i: int, chosen: list[int]) -> bool:
        """ "This example would output ...", "These two lines show ...": a sentence that opens
        with a demonstrative right after a block the answer does not show."""
        unit = self.candidates[i][1]
        first = (words(unit.sentence) or [""])[0]
        if unit.block or first not in DEMONSTRATIVES or not self._follows(i):
            return False
        return bool(self.candidates[i - 1][1].block) and i - 1 not in chosen

    def answer(
        self,
        chosen: list[int],
        after: Collection[int] = (),
        steps: Mapping[int, tuple[int, float]] | None = None,
    ) -> Answer:
        """The chosen units in reading order, those in `after` (shown before) last; a next step
        (`steps`: its index -> the unit it goes with, and after (+) or before (-) it) beside it."""

        def place(i: int) -> tuple[bool, int, float]:
            j, shift = (steps or {}).get(i, (i, 0.0))
            number, unit = self.candidates[j]
            return (j in after, self.order[number], unit.position + shift)

        chosen = sorted(chosen, key=place)
        picked = [self.candidates[i] for i in chosen]
        head = f"{NOT_COVERED} The closest passages say:\n" if self.request.weak else ""
        labels = {s.number: s.label for s in [*self.request.sources, *self.request.reach]}
        return Answer(head + _format(picked, labels), frozenset(number for number, _ in picked))

    def _same_block(self, i: int, j: int) -> bool:
        """Two units showing the same block: never twice in one answer."""
        a, b = self.candidates[i][1].block, self.candidates[j][1].block
        return bool(a) and _key(a) == _key(b)

    def _similar(self, i: int, j: int) -> bool:
        """Nearly the same unit: most of the shorter one's words are in the other, part by part.
        Sentences are compared with sentences and blocks with blocks: two lead-ins that say
        different things are two units even when their code is nearly the same (a page's
        examples grow one step at a time, and the step is what was asked: `is_eager=True`
        added, `Literal[...]` in place of an Enum class). Unit `i`, a lead-in with its block, is
        no repeat of unit `j`, a sentence without one: its few words ("To remove a dependency:")
        are nearly always in a longer sentence beside it, and its block is what that sentence
        only talks about. The other way round, the sentence repeats the lead-in when most of
        its own words are the lead-in's: "--global is not supported on Windows." says more than
        "On Windows:" though it holds the lead-in's every word."""
        a, b = self.candidates[i][1], self.candidates[j][1]
        if a.sentence and b.sentence and a.block and not b.block:
            return False
        if a.sentence and b.sentence and b.block and not a.block:
            # the sentence repeats the lead-in when most of its own words are the lead-in's
            mine = _stems(a.sentence)
            share = len(mine & _stems(b.sentence)) / max(len(mine), 1)
            return share >= self.params.duplicate_overlap
        parts = [(_stems(a.sentence), _stems(b.sentence))] if a.sentence and b.sentence else []
        if a.block and b.block:
            parts.append((_stems(a.block), _stems(b.block)))
        if not parts:  # a sentence beside a bare block: their words
            parts = [(self.stems[i], self.stems[j])]
        return all(
            bool(x and y) and len(x & y) / min(len(x), len(y)) >= self.params.duplicate_overlap
            for x, y in parts
        )

    def _leads_into_block(self, i: int) -> int | None:
        """The candidate right after sentence `i` in the same chunk when it is the lead-in of a
        list, table or code block ("In summary, a will is valid only if:" + the list): a sentence
        that announces what follows brings it along, even across one more sentence."""
        if self.candidates[i][1].block or not self._follows(i + 1):
            return None
        following = self.candidates[i + 1][1]
        if following.block and INTRODUCES.search(following.sentence):
            return i + 1
        return None


# --- candidates -----------------------------------------------------------------


def _key(text: str) -> str:
    return " ".join(CITATION.sub(" ", text).lower().replace("- ", " ").split())


def _unit_key(unit: Unit) -> str:
    """What a unit says, as an answer's text is compared with it: its sentence, else its block."""
    return _key(unit.sentence or unit.block)


def _candidates(
    sources: Sequence[Source],
    exclude: str,
    params: AnswerParams,
    examples: bool = False,
    again: frozenset[str] = frozenset(),
) -> list[tuple[int, Unit]]:
    """(source number, unit) of every usable unit, without repeats or what `exclude` already said
    (unless it holds a stem of `again`: what a correction names may be said again).
    When `examples` are asked for, code already said comes back only when no other code is left:
    the example then is the one shown (never a repeat while there is another)."""
    found = _usable(sources, exclude, params, keep_said_code=False, again=again)
    if examples and not any(unit.has_code for _, unit in found):
        return _usable(sources, exclude, params, keep_said_code=True, again=again)
    return found


def _reached(
    request: Request, found: Sequence[tuple[int, Unit]], params: AnswerParams
) -> list[tuple[int, Unit]]:
    """The reach's how-to code: its units that are a lead-in with its code block, none saying
    again a unit of `found` or what `exclude` said (a block shown by the request's own sources
    is never shown twice: `_same_block`)."""
    if not request.reach:
        return []
    keys = {_unit_key(unit) for _, unit in found}
    mine = {source.number for source in request.reach}
    return [
        (number, unit)
        for number, unit in _usable(
            [*request.sources, *request.reach], request.exclude, params, False, request.again
        )
        if number in mine and unit.has_code and unit.sentence and _unit_key(unit) not in keys
    ]


def _usable(
    sources: Sequence[Source],
    exclude: str,
    params: AnswerParams,
    keep_said_code: bool,
    again: frozenset[str] = frozenset(),
) -> list[tuple[int, Unit]]:
    said = _key(exclude)
    seen: set[str] = set()
    read = [(source.number, unit) for source in sources for unit in _units_of(source, params)]
    # a block without its lead-in when some chunk has it with one (a chunk's overlap may repeat
    # a block without the sentence that introduced it); which of those shows is `filled`'s choice
    led = {_key(unit.block) for _, unit in read if unit.block and unit.sentence}
    # likewise a sentence without the block it introduces (its chunk ended there) when another
    # chunk has it with its block: the copy with the code is the unit ("And from that context
    # you can get the current values ..." + the code, in the chunk after)
    leading = {_key(unit.sentence) for _, unit in read if unit.block and unit.sentence}
    found = []
    for number, unit in read:
        if unit.block and not unit.sentence and _key(unit.block) in led:
            continue
        if not unit.block and unit.sentence and _key(unit.sentence) in leading:
            continue
        key = _unit_key(unit)
        if (
            not _answerable(unit, key, params)
            or key in seen
            or (
                said
                and key in said
                and not (keep_said_code and unit.has_code)
                and not again & _unit_stems(unit)
            )
        ):
            continue
        seen.add(key)
        found.append((number, unit))
    return found


def _units_of(source: Source, params: AnswerParams) -> list[Unit]:
    """A source's units; a code block that opens its section (a heading right over it, no
    sentence: a cheat sheet's "Cookies" over its code) has the heading as its lead-in; the
    first sentence of a chunk that opens its section and the last of one that closes it are
    whole, whatever their case and punctuation."""
    chunk = source.chunk
    found = units(
        chunk.text, params, whole_start=chunk.opens_section, whole_end=chunk.closes_section
    )
    first = found[0] if found else None
    heading = heading_levels(chunk.heading)
    if first is not None and heading and chunk.opens_section:
        if first.has_code and not first.sentence:
            found[0] = replace(first, sentence=f"{heading[-1]}:", kind="code")
    return _own_units(found, source) if source.own else found


def _own_units(found: list[Unit], source: Source) -> list[Unit]:
    """The units of a source's passage that are its chunk's: those whose sentence or block
    starts in its own text (one that starts in none of the passage's chunks, a sentence the
    reading changed, stays), numbered from its first. A lead-in that ends the chunk brings the
    code the next chunk holds, and a block cut between them is whole; the code that starts the
    chunk is bare when its lead-in is only in the chunk before (as before: a sentence that
    ends one chunk may close what came before the block that opens the next, an API entry's
    last line before the next entry's signature). A sentence and a block that no one chunk
    holds together are one unit only when the sentence introduces it ("... as follows:")."""
    texts = [_spaced(source.own), *(_spaced(text) for text in source.near)]

    def held(head: str) -> set[int]:
        return {i for i, text in enumerate(texts) if head and head in text}

    kept: list[Unit] = []
    for unit in _parted(found, held):
        sentence, block = held(_head(unit.sentence)), held(_head(_code_body(unit.block)))
        if 0 in (sentence or block) or not (sentence or block):
            kept.append(unit)
        elif 0 in block:  # its lead-in ends the chunk before, which does not repeat it
            kept.append(Unit(unit.position, "", unit.block, unit.kind))
    first = kept[0].position if kept else 0
    return [replace(unit, position=unit.position - first) for unit in kept]


def _parted(found: list[Unit], held: Callable[[str], set[int]]) -> list[Unit]:
    """`found` with each sentence parted from its block when no chunk holds both and the
    sentence does not introduce it."""
    out: list[Unit] = []
    for unit in found:
        sentence, block = held(_head(unit.sentence)), held(_head(_code_body(unit.block)))
        if (
            unit.sentence
            and unit.block
            and sentence
            and block
            and not sentence & block
            and not INTRODUCES.search(unit.sentence)
        ):
            out.append(Unit(unit.position, unit.sentence))
            out.append(Unit(unit.position, "", unit.block, unit.kind))
        else:
            out.append(unit)
    return out


def _spaced(text: str) -> str:
    return " ".join(text.split())


def _head(text: str) -> str:
    """The start of a unit's text, to find where it starts."""
    return _spaced(text)[:HEAD_CHARS]


def _code_body(block: str) -> str:
    """A block's lines after its opening fence (a cut piece is fenced again in its chunk)."""
    lines = block.strip().splitlines()
    return "\n".join(lines[1:]) if lines and is_fence(lines[0]) else block


def _answerable(unit: Unit, key: str, params: AnswerParams) -> bool:
    """Not a title or a cut sentence, not navigation or a notice, not a lead-in without its
    block (a sentence ending in ":" says nothing without what follows), not too short alone."""
    if unit.kind in ("title", "label", "fragment") or not key:
        return False
    if unit.block:
        return True
    short = len(unit.sentence) < params.min_sentence_chars and unit.kind != "item"
    return not (short or is_boilerplate(unit.sentence, params) or unit.sentence.endswith(":"))


def _cut_for(unit: Unit, weights: Mapping[str, float], params: AnswerParams) -> Unit:
    """A cut code block cut again where it holds least of the query's words (`cut_asked`)."""

    def asked(line: str) -> float:
        return sum(weights.get(s, 0.0) for s in _stems(line))

    return replace(unit, block=cut_asked(unit.whole, asked, params))


def _unit_stems(unit: Unit) -> set[str]:
    return _stems(unit.text)


def _stems(text: str) -> set[str]:
    return {stem(w) for w in words(text)}


def _format(chosen: list[tuple[int, Unit]], labels: Mapping[int, str] | None = None) -> str:
    """Sentences of one source run together as a paragraph ending in [n]; blocks on their own
    lines after the sentence that brings them; list items as "- " lines. The first sentence
    shown from a source with a label says it unless it already does: a release's ("25.2.0:
    Sequences were changed ...": a changelog's line means nothing without it) or an entry's
    name ("[run] branch: (boolean, default False) Whether to measure ..."); the heading that
    holds it is not shown."""
    parts: list[str] = []
    run: list[str] = []
    number_of_run = 0
    unsaid = {n: label for n, label in (labels or {}).items() if label}

    def said(number: int, sentence: str) -> str:
        label = unsaid.pop(number, "") if sentence else ""
        if not label or _version_key(label).casefold() in sentence.casefold():
            return sentence
        marker = _ITEM_MARKER.match(sentence)  # "- 25.2.0: Potentially breaking ..."
        at = marker.end() if marker else 0
        return f"{sentence[:at]}{label}: {sentence[at:]}"

    def close() -> None:
        if run:
            parts.append(" ".join(run) + f" [{number_of_run}]")
            run.clear()

    for number, unit in chosen:
        if number != number_of_run:
            close()
            number_of_run = number
        if unit.kind == "item":
            close()
            item = unit.sentence if LIST_ITEM.match(unit.sentence) else f"- {unit.sentence}"
            parts.append(f"{said(number, item)} [{number}]")
        elif unit.block:
            if unit.sentence:
                run.append(said(number, unit.sentence))
            close()
            parts.append(unit.block)
        else:
            run.append(said(number, unit.sentence))
            if ENDS_IN_CODE.search(unit.sentence):  # its code ends it: no sentence runs on
                close()
    close()
    return "\n".join(parts)


_ITEM_MARKER = re.compile(r"\s*(?:[-*+\u2022]|\d{1,3}[.)])\s+")


def _version_key(release: str) -> str:
    """The part of a release title a sentence that names it says ("25.2.0" of "25.2.0
    (2025-08-31)")."""
    return release.split(" (")[0].strip()


def _length(unit: Unit, params: AnswerParams) -> float:
    """A unit's length for its word weight: its sentence's stems and a share of its block's
    (a lead-in with the code it introduces is not a long sentence: its code is what it says)."""
    sentence = {stem(w) for w in words(unit.sentence)}
    block = {stem(w) for w in words(unit.block)} - sentence
    return len(sentence) + params.block_length_share * len(block)


def _allowed(
    candidates: list[tuple[int, Unit]], stems: list[set[str]], query: Collection[str]
) -> list[bool]:
    """A console session or traceback is shown only when the question asks about what it
    printed: the question shares a word with its output that no other unit holds. A Python
    interpreter session a sentence introduces (a doctest: `>>> converter.structure(...)`) is
    the example's code, shown as any code is."""
    elsewhere = set().union(
        *(s for (_, unit), s in zip(candidates, stems, strict=True) if not unit.is_console)
    )
    asked = set(query) - elsewhere
    return [
        not unit.is_console
        or (unit.is_session and bool(unit.sentence))
        or bool(asked & {stem(w) for w in words(unit.output)})
        for _, unit in candidates
    ]
