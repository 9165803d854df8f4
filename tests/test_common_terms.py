"""Keyword search on a library where a word is everywhere: the word is left out of the MATCH when
the query has rarer words (BM25 gives it almost nothing, scoring all its chunks costs the most),
kept when it is all the query has; frequencies come from the index's own tokenizer."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ragchat.search.fts import match_terms, rarer_terms
from ragchat.search.hybrid import _shares, fts_ranking
from ragchat.store import library, terms, vectors
from ragchat.store.db import open_db
from ragchat.store.library import ChunkRecord, DocumentRecord


def build(path: Path) -> None:
    db = open_db(path)
    vectors.ensure_vector_table(db, "generated", 4)
    texts = [f"Gardening notes {i}: the gardens need watering in summer." for i in range(30)]
    texts[7] = "Gardening notes: an espalier pear along the wall."
    texts[12] = "Espaliered trees need a wire frame, pruned in winter."
    for number, text in enumerate(texts):
        record = DocumentRecord(
            f"/g/{number}.md", f"{number}.md", "/g", f"note {number}", str(number), 1, 0.0,
            "utf-8", {},
        )  # fmt: skip
        chunk = ChunkRecord(0, text, "", 0, len(text))
        library.replace_document(db, record, [chunk], np.ones((1, 4), dtype=np.float32))
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
