"""Keyword search on a library where a word is everywhere: the word is left out of the MATCH when
the query has rarer words (BM25 gives it almost nothing, scoring all its chunks costs the most),
kept when it is all the query has; frequencies come from the index's own tokenizer. In a large
library, words held by many chunks are scored only in the chunks of the query's rarer words."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from sqlite_utils import Database

from ragchat.search import hybrid
from ragchat.search.fts import match_terms, rarer_terms, split_by_postings
from ragchat.search.hybrid import _shares, fts_ranking
from ragchat.store import library, terms, vectors
from ragchat.store.db import open_db
from ragchat.store.library import ChunkRecord, DocumentRecord


def put_notes(db: Database, folder: str, texts: list[str]) -> None:
    """Each text a one-chunk document in `folder`, on a library of 4-dimension vectors."""
    vectors.ensure_vector_table(db, "generated", 4)
    for number, text in enumerate(texts):
        record = DocumentRecord(
            f"{folder}/{number}.md", f"{number}.md", folder, f"note {number}", str(number), 1, 0.0,
            "utf-8", {},
        )  # fmt: skip
        chunk = ChunkRecord(0, text, "", 0, len(text))
        library.replace_document(db, record, [chunk], np.ones((1, 4), dtype=np.float32))


def build(path: Path) -> None:
    texts = [f"Gardening notes {i}: the gardens need watering in summer." for i in range(30)]
    texts[7] = "Gardening notes: an espalier pear along the wall."
    texts[12] = "Espaliered trees need a wire frame, pruned in winter."
    db = open_db(path)
    put_notes(db, "/g", texts)
    db.close()


def test_the_index_tokenizer_gives_the_terms_and_their_frequencies(tmp_path: Path) -> None:
    build(tmp_path / "lib.db")
    db = open_db(tmp_path / "lib.db")
    assert terms.index_terms(db, "Espaliered Gardens") == ["espali", "garden"]
    assert terms.chunk_frequencies(db, ["garden", "espali", "nowhere"]) == {
        "garden": 29,
        "espali": 2,
        "nowhere": 0,
    }
    quoted = match_terms("gardening, espalier")
    assert _shares(db, quoted) == {'"gardening"': 29 / 30, '"espalier"': 2 / 30}
    db.close()


def test_a_word_in_every_chunk_is_left_out_only_when_rarer_words_remain(tmp_path: Path) -> None:
    build(tmp_path / "lib.db")
    db = open_db(tmp_path / "lib.db")
    found = fts_ranking(db, "gardening, espalier", 10)
    assert sorted(found) == sorted(fts_ranking(db, "espalier", 10)), "only the rare word's chunks"
    assert len(fts_ranking(db, "gardening", 10)) == 10, "a common word alone still searches"
    db.close()


def test_rarer_terms_keeps_phrases_and_the_rarest_common_word() -> None:
    shares = {'"a b"': 0.0, '"a"': 0.9, '"b"': 0.6, '"c"': 0.01}
    assert rarer_terms(['"a b"', '"a"', '"b"', '"c"'], shares, 0.5) == ['"a b"', '"c"']
    assert rarer_terms(['"a"', '"b"'], shares, 0.5) == ['"b"']
    assert rarer_terms(['"c"'], shares, 0.5) == ['"c"']


def build_orchard(path: Path) -> dict[str, int]:
    """40 notes: "watering" in 15 (common, yet under half), "pear" in 3, "espalier" in 2; the
    chunk id of each note by a name."""
    texts = {f"plain {i}": f"Orchard diary {i}: the rows were mown." for i in range(22)}
    texts |= {f"watering {i}": f"Orchard diary {i}: watering the rows at dusk." for i in range(13)}
    texts["pear and watering"] = "A pear tree wants watering twice a week."
    texts["pear"] = "The pear by the gate fruited early."
    texts["pear again"] = "Another pear, grafted onto quince."
    texts["espalier and watering"] = "An espalier on the wall, watering it by hand."
    texts["espalier"] = "An espalier on the south wall, tied to wires."
    db = open_db(path)
    put_notes(db, "/o", list(texts.values()))
    ids = {
        name: db.execute("SELECT id FROM chunks WHERE text = ?", [text]).fetchone()[0]
        for name, text in texts.items()
    }
    db.close()
    return ids


def test_split_by_postings_scores_the_rarest_terms_within_the_budget() -> None:
    rows = {'"w"': 15.0, '"p"': 3.0, '"e"': 2.0, '"p e"': 0.0}
    assert split_by_postings(['"w"', '"p"', '"e"'], rows, 100) == (['"w"', '"p"', '"e"'], [])
    assert split_by_postings(['"w"', '"p"', '"e"'], rows, 6) == (['"p"', '"e"'], ['"w"'])
    assert split_by_postings(['"w"', '"p e"', '"p"'], rows, 2) == (['"p e"'], ['"w"', '"p"'])
    assert split_by_postings(['"w"', '"p"'], rows, 1) == (['"p"'], ['"w"']), "the rarest stays"


def test_a_large_librarys_common_words_score_only_the_chunks_of_its_rarer_words(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The library counts as large (budget 6 chunks): "watering" (15 chunks) is common next to
    "pear" and "espalier" (5 chunks): the chunks holding those are found with the same scores as
    the whole query gives them, "watering" still adding to theirs; a chunk holding only
    "watering" is not scored."""
    ids = build_orchard(tmp_path / "lib.db")
    db = open_db(tmp_path / "lib.db")
    query = "watering, pear, espalier"
    whole = library.fts_search(db, '"watering" OR "pear" OR "espalier"', 100)
    assert len(whole) == 18 and fts_ranking(db, query, 100) == [i for i, _ in whole]

    monkeypatch.setattr(hybrid, "SCALE", replace(hybrid.SCALE, fts_scored_rows=6))
    found = fts_ranking(db, query, 100)
    rare = {ids[n] for n in ("pear and watering", "pear", "pear again", "espalier")}
    rare.add(ids["espalier and watering"])
    assert found == [i for i, _ in whole if i in rare], "the whole query's order among them"
    assert found.index(ids["espalier and watering"]) < found.index(ids["espalier"])
    assert ids["espalier"] in found, "a rare word's chunk without the common word stays"
    assert ids["watering 0"] not in found, "common words alone find nothing"
    split = library.fts_search_holding(db, '"pear" OR "espalier"', '"watering"', 100)
    assert split == [hit for hit in whole if hit[0] in rare], "the same BM25 scores"
    db.close()
