"""A hyphenated compound of common words ("one-off", "read-only", "--no-force") is one search
term: its words alone are stop words or too common to search, the compound is as rare as itself."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from test_common_terms import put_notes

from ragchat.conversation.corpus import MemoryCorpus
from ragchat.conversation.followup.heuristic import HeuristicReformulator
from ragchat.params import DEFAULT
from ragchat.search.fts import match_terms, phrase_match
from ragchat.search.hybrid import fts_ranking
from ragchat.store.db import open_db
from ragchat.text import compounds


def test_compounds_are_the_hyphenated_words_with_a_common_part() -> None:
    text = "How do I run a one-off job, read-only, with --no-force? Not fail-fast or 3.12."
    assert compounds(text) == ["one-off", "read-only", "no-force"]


def test_a_compound_is_searched_as_its_phrase() -> None:
    assert match_terms("how do I run a one-off command?")[:1] == ['"one off"']
    assert '"read only"' in match_terms("read-only, mount")
    assert phrase_match("one-off") == '"one off"'
    assert phrase_match("one off") is None, "two stop words typed apart search nothing"


def test_the_chunk_holding_the_compound_comes_first(tmp_path: Path) -> None:
    texts = [
        f"Run the command {i} in an environment of its own, off the main one." for i in range(12)
    ]
    texts[5] = "Run a one-off command in an environment with the exec subcommand."
    db = open_db(tmp_path / "lib.db")
    put_notes(db, "/d", texts)
    query = " , ".join(match_terms("how do I run a one-off command in an environment?"))
    found = fts_ranking(db, "how do I run a one-off command in an environment?", 5)
    assert found[0] == 6, (query, found)  # chunk ids start at 1: the sixth note
    db.close()


def test_the_heuristic_keeps_a_compound_the_library_uses() -> None:
    """The keyword query of a question holds its compound, rarest first, when a chunk uses it."""
    texts = [f"Back up the database {n} every night to the backup volume." for n in range(9)]
    with_compound = MemoryCorpus(enumerate([*texts, "A one-off backup runs once, now."]))
    without = MemoryCorpus(enumerate(texts))
    question, vector = "how do I make a one-off backup?", np.zeros(4, dtype=np.float32)
    keywords = HeuristicReformulator(with_compound, DEFAULT.followup)._keyword_query
    assert keywords(question, vector, []).startswith("one-off, "), keywords(question, vector, [])
    plain = HeuristicReformulator(without, DEFAULT.followup)._keyword_query(question, vector, [])
    assert "one-off" not in plain, plain
