"""Every tuning number of a turn, in one frozen value: the follow-up detector
(`conversation/followup/`), the plan, fusion, the combination with a model's reading, the
coverage decision and the answer (ranking and cutting units, text sent to a model or
embedder). Each is documented where it is declared: what it does, why this value.

`Settings.params` carries the default instance wherever settings flow; `ragchat eval --param
followup.decay=0.5` runs with another value (`with_values`), so a sweep needs no code change.
Not read from ragchat.toml: these are the code's calibration, not a user's preference.

The user-facing tuning numbers stay settings (ragchat.toml, RAGCHAT_*, flags): `rrf_k`,
`vector_weight`, `fts_weight`, `anchor_boost`, `candidates`, `top_k`, `history_window`,
`extractive_sentences`.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
from dataclasses import dataclass, fields
from typing import Any

from .errors import ConfigError


@dataclass(frozen=True)
class FollowupParams:
    """The heuristic reformulator: how much a question needs the conversation, and its queries."""

    # --- the conversation's terms (followup/terms.py) ---
    # a topic term's weight shrinks by this factor per turn since it was said; the topic's first
    # question never falls below one step (historical query expansion, RESEARCH.md)
    decay: float = 0.6
    # a word in most chunks carries no topic: terms need at least this idf
    min_idf: float = 1.0
    # an older message joins the history window (what the reformulators and the prompt read
    # beside the last exchange) when its cosine to the question is at least this
    window_similarity: float = 0.2
    # a name the questions hold outweighs its plain words by this factor (names are referents)
    name_weight: float = 1.2
    # the last answer's first sentences, where its subject is named
    lead_sentences: int = 2
    # names taken from the last answer's lead (referent candidates and context terms)
    answer_names: int = 3
    # the longest phrase looked up in the corpus, in words ("small claims court")
    max_phrase_words: int = 3

    # --- referents (followup/referents.py) ---
    # "he"/"she" stands for a name of at most this many words: "Andre Gunder Frank" is a person,
    # "California Integrated Water Quality System" a thing
    max_person_name_words: int = 3

    # --- the need for context (followup/heuristic.py) ---
    # a term with less than this share of its chunks in the anchor documents points elsewhere
    foreign_share: float = 0.25
    # this much of the question's idf weight in foreign terms makes it a new topic
    shift_weight: float = 0.6
    # a new topic keeps a little context, in case the guess is wrong...
    new_topic_need: float = 0.1
    # ...and up to this much more when the question alone finds nothing close (own_weakness)
    weak_need: float = 0.4
    # how much the share of foreign terms lowers the need of a question that may continue
    foreign_damping: float = 0.7
    # how much standing alone (own_closeness) lowers the need of a question with a follow-up cue:
    # 1 - 0.7 = 0.3 at the closest, some context stays
    cue_closeness_damping: float = 0.7
    # how much standing alone lowers the need of a question that may continue the conversation
    continue_closeness_damping: float = 0.5
    # ...and how much pointing elsewhere lowers it (own_elsewhere): the question alone finds one
    # other document clearly, and clearly closer than anything in the last answer's documents
    elsewhere_damping: float = 0.5
    # own_elsewhere: the lead of the question's best chunk over its best anchor chunk where
    # pointing elsewhere starts (0), and how far above it it is complete (1): 0.05 -> 0, 0.15 -> 1
    elsewhere_from: float = 0.05
    elsewhere_span: float = 0.1
    # own_closeness: cosine of the question's own best chunk where standing alone starts (0)...
    close_from: float = 0.4
    # ...and how far above it standing alone is complete (1): 0.4 -> 0, 0.7 -> 1
    close_span: float = 0.3
    # own_confidence: the lead of the best document over the next that makes the hit clear
    confident_margin: float = 0.1
    # own_weakness: cosine below which the question alone finds too little (full weakness at
    # weak_below - weak_span = 0.35, none from 0.45, a plausible match)
    weak_below: float = 0.45
    weak_span: float = 0.1
    # "what about X?": X is a new subject when the question alone finds one document this clearly
    new_subject_confidence: float = 0.5

    # --- the queries ---
    # context terms appended to the expanded question
    max_context_terms: int = 8
    # terms of the keyword query (2-5: a short FTS query in the corpus's words)
    max_keyword_terms: int = 5
    # fewer terms than this from the question and the conversation: the corpus's nearest keywords
    # join (a single term says too little to FTS)
    min_keyword_terms: int = 2
    # the question's own phrases in the keyword query, rarest first
    keyword_phrases: int = 3
    # context terms added to the keyword query of a follow-up
    keyword_context_terms: int = 2
    # corpus keywords nearest in meaning looked at when the user's words are not the corpus's...
    nearest_keywords: int = 3
    # ...and the cosine a keyword needs to the question to join ("doctors" -> "physicians")
    keyword_similarity: float = 0.45
    # --- corrections (conversation/correction.py) ---
    # "no, I meant X": an X with at least this many words of its own, and as many as the question
    # it corrects, restates the whole need and is run alone; a shorter X is a noun phrase ("the
    # query parameter", "the downtown of SF") and takes the place of what it corrects. Every
    # correction of the shared docs and held-out sets has 3 to 6 such words, every MTRAG one 1 or 2
    restated_words: int = 3


@dataclass(frozen=True)
class PlanParams:
    """The retrieval plan (conversation/plan.py)."""

    # an anchored chunk must rank within this in some query list to be boosted: the boost breaks
    # near-ties among found chunks, it cannot lift a chunk no query found
    anchor_reach: int = 10
    # the chunks the last answer used get no boost (a follow-up moves on to new text), unless the
    # question's un-anchored fusion ranks one within this (it asks about the same text again)
    said_keep: int = 1
    # the most the anchor boost adds to a chunk's fused score (normalised RRF, 1.0 = first in every
    # list): a boosted chunk passes only chunks this close below it, so it breaks near-ties and
    # never overturns a clear ranking (a page fused at 0.56 stays above the last answer's at 0.35;
    # on the shared docs set 0.1 and 0.15 lost two follow-ups the boost used to find, 0.2 none)
    anchor_margin: float = 0.2
    # cosine of the question's own best chunk that makes it a confident hit (kept in the top 3)...
    confident: float = 0.5
    # ...when its document leads the next by this much
    confident_margin: float = 0.05


@dataclass(frozen=True)
class FusionParams:
    """Weighted RRF (search/fusion.py); k is the `rrf_k` setting."""

    # a protected chunk (the question's confident first hit) keeps a place within this many
    protect_within: int = 3
    # the question's own first hits (the first chunk of its vector and of its FTS list) that rank
    # within this many without the anchor boost stay within it (the passages an answer draws on)
    own_within: int = 4
    # a chunk with this share of its 6-word runs already in the chunks ranked above it repeats
    # them (an overlap, an included page, the same example twice) and yields its place
    repeat_share: float = 0.6
    # the best this many chunks of a turn bring the chunks right before and after them in their
    # section (same document and heading) in just below them: the sentence that answers is often
    # next to the one the question matched, and joined passages reach the model as one place
    section_neighbours: int = 3
    # the leading document's best sections (searched among its chunks alone) that may take the
    # places of other documents' chunks among those a model reads: a page's answer is one section
    # and, as often, the example or lead-in of another; more would leave the other documents few
    # places when the lead is wrong (0: off)
    leading_sections: int = 2
    # the first this many chunks of the question's own keyword list that lie in the first
    # place's document take that document's own last places among those a model reads (never
    # the extractive answer's, never another page's): words the question types may sit in a
    # chunk the embedding puts far from it (0: off)
    keyword_places: int = 2


@dataclass(frozen=True)
class CombineParams:
    """The model's reading weighed in (conversation/combine.py)."""

    # weight of a fully trusted rewrite's lists, against the question's 1: a good rewrite leads
    model_lead: float = 2.0
    # trust grows from 0 (the rewrite's best chunk no closer than the question's) to 1 (this
    # much closer)
    trust_span: float = 0.1
    # a rewrite longer than this many times the question and the previous one together (and than
    # rewrite_floor characters) is absurd, not a reading: not trusted (6,800 characters were)
    rewrite_growth: float = 4.0
    rewrite_floor: int = 400
    # beside a fully trusted rewrite, a question that finds nothing close alone keeps 1 - this
    question_yield: float = 0.75
    # a heuristic follow-up this sure (a pointer back, or mostly the conversation's terms)
    # outweighs a model's topic shift
    cue_need: float = 0.5
    # the model's meta flag counts only for a question that comes no closer than this alone
    meta_closeness: float = 0.5


@dataclass(frozen=True)
class CoverageParams:
    """Do the documents cover the question? (conversation/coverage.py). The rule: not covered
    when subject + rare_weight * rare < threshold (subject: the best cosine of the question as
    the turn read it, with a follow-up's subject), fitted once on the MTRAG sets govt and clapnq
    (unanswerable against answerable turns) and checked on the docs conversations, the same for
    every library."""

    # the chunks an answer stands on
    top: int = 4
    # the question's rarest terms that must show up in them
    rare_terms: int = 3
    # a chunk "found by both" ranks within this in a vector and in a keyword list
    reach: int = 10
    rare_weight: float = 0.3
    threshold: float = 0.52


@dataclass(frozen=True)
class AnswerParams:
    """The answer (ragchat/answer/): what the extractive answer draws from, how it ranks and cuts
    units, and how much text reaches the model or the embedder."""

    # --- what an extractive answer draws from
    pool: int = 4  # ranked sources an answer draws from
    meta_pool_factor: int = 2  # a meta-request ("tell me more") draws from this many times `pool`
    meta_extra_units: int = 1  # ... and shows this many more units than a question
    # --- ranking units: idf-weighted query words over (stems ** length_damping), plus the chunk's
    # similarity and rank, minus a little for a late position in its chunk
    similarity_weight: float = 2.0  # times the chunk's similarity to the question
    rank_weight: float = 1.0  # over (1 + the chunk's rank among the sources)
    position_penalty: float = 0.01  # per unit before this one in its chunk
    length_damping: float = 0.7  # a unit's word weight is divided by (its stems ** this)
    min_unit_stems: int = 8  # ... counting at least this many stems (short units are not favoured)
    block_length_share: float = 0.2  # ... and this share of the stems of the block it introduces
    score_margin: float = 2.0  # units scoring this far below the best are left out
    repeat_penalty: float = 0.0  # a unit an earlier answer showed returns only when it beats every
    # new unit sharing the question's words by this much (after what is new); 1.0 dropped the
    # answer itself on a follow-up that asks for what the last answer showed ("and read it?")
    duplicate_overlap: float = 0.7  # a unit sharing this share of its stems with one in is a repeat
    code_bonus: float = 3.0  # an example request: added to a unit that holds code
    example_cue_bonus: float = 1.0  # ... and to a sentence saying "for example", "such as"
    summary_relevance: float = 0.5  # a summary ranks by centrality plus this times relevance
    reason_bonus: float = 1.0  # a "why" question: added to a sentence that gives a reason
    # --- a page or section named and asked about as a whole ("what's the 'X' page about?")
    outline_lead: int = 2  # the section's lead sentences shown
    outline_items: int = 6  # the headings right under it shown, each with its first sentence
    # --- which units are answers at all
    min_sentence_chars: int = 25  # a shorter sentence without a block says too little alone
    boilerplate_words: int = 8  # a sentence of at least this many words ...
    boilerplate_capitals: float = 0.6  # ... this share of them capitalised is navigation, not prose
    title_words: int = 10  # a line this short without end punctuation may be a heading
    # a longer block is cut (code: at a line; lists and tables: at an item)
    max_block_lines: int = 30
    # --- text sent on
    prompt_sources: int = 6  # sources in the model's prompt (fewer when its context is small)
    # the model's context (`ollama_num_ctx`) less this is the prompt's budget: room for the answer
    answer_reserve_tokens: int = 1024
    # characters per token until the server has counted one of ragchat's prompts
    # (prompt_eval_count): lower than English prose's ~4, as documentation holds code and names
    chars_per_token: float = 3.5
    min_source_chars: int = 400  # a first source cut to fit keeps at least this much
    min_history_chars: int = 200  # the last exchange cut to fit keeps at least this much
    # an earlier answer in the prompt, compacted to its sentences that cited sources, is cut here
    history_answer_chars: int = 600
    model_history_turns: int = 12  # answered exchanges a model is shown, newest kept
    scope_titles: int = 5  # titles of the last answer's documents in a model's reading prompt
    scope_keywords: int = 8  # ... and of their keywords
    history_chars: int = 2000  # each earlier message in the model's prompt is cut here
    embed_chars: int = 2000  # text embedded for a vector (a question, a reply) is cut here
    # --- text sent to the model's reading of a turn (conversation/ollama_reformulator.py)
    reading_answer_chars: int = 1500  # the last answer in its prompt is cut here
    reading_window_chars: int = 500  # each older message of the history window is cut here
    reading_query_chars: int = 1000  # its rewrite of the question is cut here
    # earlier exchanges in its prompt besides the last (a 15-turn conversation's reading prompt
    # grew to 5,500 characters with all of them; the answer's prompt keeps more)
    reading_turns: int = 5
    # --- which chunks an uncited model answer stands on (its vector against theirs)
    support_limit: int = 3  # at most this many chunks
    support_margin: float = 0.08  # within this cosine of the most similar one
    support_minimum: float = 0.4  # and at least this cosine


@dataclass(frozen=True)
class ScaleParams:
    """What keeps the cost of a search or a turn bounded as a library or a session grows: the
    compact vector index of a large library (store/compact.py), keyword search on common words
    (search/hybrid.py), the history a turn reads (store/sessions.py). Storage calibration, not
    turn tuning: not settable with --param."""

    # above this many bytes of float32 vectors (~350k chunks at 384 dimensions) search uses the
    # compact index instead of exact search over an in-memory float copy
    exact_max_bytes: int = 512 * 2**20
    # the bits stage keeps this share of the library (at least `hamming_least` rows) for int8
    # scoring: at 1M synthetic chunks, 4 % gave recall@10 0.998 against exact float, 2 % 0.985
    hamming_share: float = 0.04
    hamming_least: int = 4000
    # the int8 stage hands this many (or twice the asked-for count) to exact float rescoring; the
    # int8 order is near exact (recall@10 the same at 100 as at 400); each rescored vector is a
    # row read from the index file (200 rows ~1 ms warm)
    rescore: int = 100
    # vectors read and quantised at a time when the index is built
    build_block: int = 65536
    # a keyword term found in more than this share of the chunks (FTS5's own document
    # frequencies) is left out of the MATCH when the query has rarer terms: above half, FTS5's
    # BM25 clamps its idf to ~0 (no score changes), yet scoring every chunk it matches is the
    # cost of the query. A lower share (0.2) changed small-library rankings in tests: not taken
    common_term_share: float = 0.5
    # keyword search scores at most about this many chunks when the query has rarer terms: when
    # the chunks holding its terms add up to more, only the chunks holding its rarest terms (as
    # many as fit, at least the rarest) are scored, each with every term's BM25 (the same score
    # as the whole query's); a chunk holding only the common words is not found. FTS5's BM25
    # costs ~1 us a scored chunk: a 1M library's query words of 10-30 % of the chunks made it
    # 175 ms. An absolute count, a cost bound: below it (every library under ~50k chunks, all the
    # shared eval sets) nothing changes
    fts_scored_rows: int = 50_000
    # a search of a library of at least this many chunks runs its keyword search in a thread, on
    # a read-only connection of its own, while the vector search runs (store/readers.py): on 2
    # cores at 1M, hybrid 139 ms was the sum of FTS ~83 ms and vector ~32 ms. Below it the
    # thread's hand-over would cost more than it saves
    beside_rows: int = 20_000
    # a turn reads this many earlier turns of its session (the history window picks among them):
    # reading and parsing a whole session made each turn slower as a session grew
    history_turns: int = 100


SCALE = ScaleParams()


@dataclass(frozen=True)
class Params:
    followup: FollowupParams = FollowupParams()
    plan: PlanParams = PlanParams()
    fusion: FusionParams = FusionParams()
    combine: CombineParams = CombineParams()
    coverage: CoverageParams = CoverageParams()
    answer: AnswerParams = AnswerParams()


DEFAULT = Params()


def names(params: Params) -> dict[str, Any]:
    """Every parameter by its dotted name ("followup.decay") with its value."""
    return {
        f"{area.name}.{item.name}": getattr(getattr(params, area.name), item.name)
        for area in fields(params)
        for item in fields(getattr(params, area.name))
    }


def with_values(params: Params, assignments: list[str]) -> Params:
    """`params` with `name=value` assignments applied; a ConfigError names an unknown parameter
    (and the close ones) or a value that is not a number of the parameter's kind."""
    for assignment in assignments:
        name, value = _parsed(assignment)
        area, _, item = name.partition(".")
        group = getattr(params, area)
        params = dataclasses.replace(params, **{area: dataclasses.replace(group, **{item: value})})
    return params


def _parsed(assignment: str) -> tuple[str, int | float]:
    name, equals, text = assignment.partition("=")
    name = name.strip()
    known = names(DEFAULT)  # the names and kinds: the same in every Params
    if not equals:
        raise ConfigError(f"--param {assignment!r}: expected NAME=VALUE, e.g. followup.decay=0.5")
    if name not in known:
        close = _close(name, list(known))
        hint = f" (did you mean {', '.join(close)}?)" if close else " (see ragchat/params.py)"
        raise ConfigError(f"unknown parameter {name!r}{hint}")
    return name, _number(name, text.strip(), integer=isinstance(known[name], int))


def _close(name: str, known: list[str]) -> list[str]:
    """The known names a mistyped one may mean: those whose last part starts with its last part
    first ("decay" -> "followup.decay"), then the closest spellings."""
    leaf = name.rpartition(".")[2]
    same = [known_name for known_name in known if known_name.rpartition(".")[2].startswith(leaf)]
    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    return list(dict.fromkeys([*same, *close]))[:3]


def _number(name: str, text: str, *, integer: bool) -> int | float:
    try:
        number = int(text) if integer else float(text)
    except ValueError:
        kind = "an integer" if integer else "a number"
        raise ConfigError(
            f"invalid value for parameter {name}: {text[:40]!r} (expected {kind})"
        ) from None
    if not math.isfinite(number):
        raise ConfigError(
            f"invalid value for parameter {name}: {text[:40]!r} (expected a finite number)"
        )
    return number


# --- the library's own tools (not a turn's tuning) ----------------------------------------------

# `ingest --watch`: file events are gathered until none came for this long, then ingested in one
# run (an editor's save is several events; a `git checkout` is hundreds)
WATCH_DEBOUNCE_MS = 1600
