"""The tuning numbers of answers: what the extractive answer draws from, how it ranks and cuts
units, and how much text reaches the model or the embedder. One frozen value, so a sweep changes
one field (`dataclasses.replace(ANSWER_PARAMS, score_margin=1.5)`) and no code."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnswerParams:
    """Every number the answer package tunes, with what it does where it is declared."""

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
    score_margin: float = 2.0  # units scoring this far below the best are left out
    duplicate_overlap: float = 0.7  # a unit sharing this share of its stems with one in is a repeat
    code_bonus: float = 3.0  # an example request: added to a unit that holds code
    example_cue_bonus: float = 1.0  # ... and to a sentence saying "for example", "such as"
    summary_relevance: float = 0.5  # a summary ranks by centrality plus this times relevance
    # --- which units are answers at all
    min_sentence_chars: int = 25  # a shorter sentence without a block says too little alone
    boilerplate_words: int = 8  # a sentence of at least this many words ...
    boilerplate_capitals: float = 0.6  # ... this share of them capitalised is navigation, not prose
    title_words: int = 10  # a line this short without end punctuation may be a heading
    max_block_lines: int = (
        30  # a longer block is cut (code: at a line; lists and tables: at an item)
    )
    # --- text sent on
    prompt_sources: int = 6  # sources in the model's prompt
    history_chars: int = 2000  # each earlier message in the model's prompt is cut here
    embed_chars: int = 2000  # text embedded for a vector (a question, a reply) is cut here
    # --- which chunks an uncited model answer stands on (its vector against theirs)
    support_limit: int = 3  # at most this many chunks
    support_margin: float = 0.08  # within this cosine of the most similar one
    support_minimum: float = 0.4  # and at least this cosine


ANSWER_PARAMS = AnswerParams()
