"""A chunk the search put among the places a model reads keeps a place there when the chunks
brought in beside better hits would push it out (issue 28: the passage that answers reaches the
model): the neighbour of the first hit, ranked sixth, moves up beside it instead of falling to
ninth behind the neighbours of the second and third hits (cattrs' `forbid_extra_keys=True`
example, after the sentence the question matched)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from helpers import settings_for

from ragchat.conversation.models import RetrievedChunk
from ragchat.conversation.reading import LoadedChunks
from ragchat.conversation.retrieve import _with_neighbours
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.store import library
from ragchat.store.db import open_db

PARAGRAPH = (
    "The {name} section says what the {name} setting does, how it is read at start and what "
    "the service does when the {name} value is missing from the file, with the reasons for "
    "each of the defaults it falls back to when nothing is given."
)


def _page(name: str, parts: int) -> str:
    return f"# {name.title()}\n\n## Using {name}\n\n" + "\n\n".join(
        PARAGRAPH.format(name=f"{name}{i}") for i in range(parts)
    )


class _Context:
    """What `_with_neighbours` asks of a turn: its chunks, loaded from the library."""

    def __init__(self, db) -> None:
        self.chunks = LoadedChunks(db)

    def load(self, db, ids):
        return self.chunks.get(ids)


def _chunk(rank: int, stored, score: float) -> RetrievedChunk:
    return RetrievedChunk(
        rank, stored.id, stored.document_id, stored.path, stored.heading, rank, rank, 0.5,
        score, 0.0, score, False, False,
    )  # fmt: skip


def test_a_read_neighbour_pushed_out_moves_up_beside_its_hit(tmp_path: Path, embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("alpha", "beta", "gamma", "delta"):
        (docs / f"{name}.md").write_text(_page(name, 3))
    settings = settings_for(tmp_path / "lib.db", chunk_size=240, chunk_overlap=0)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    chunks = sorted(library.chunks_by_ids(db, range(1, 200)).values(), key=lambda c: c.id)
    pages: dict[str, list] = {}
    for chunk in chunks:
        pages.setdefault(chunk.path, []).append(chunk)
    names = ("alpha", "beta", "gamma", "delta")
    alpha, beta, gamma, delta = (sorted(pages[f"{n}.md"], key=lambda c: c.ordinal) for n in names)
    for page in (alpha, beta, gamma):
        assert len(page) >= 3 and len({c.heading for c in page[1:]}) == 1
    # hits: alpha's, beta's and gamma's middle chunks; alpha's next chunk ranked sixth, among
    # the places a model reads; beta's and gamma's neighbours ranked far below
    order = [alpha[1], beta[1], gamma[1], delta[0], delta[-1], alpha[2]]
    ranked = [_chunk(r, c, 1.0 - r / 10) for r, c in enumerate(order, start=1)]
    out = _with_neighbours(ranked, _Context(db), db, DEFAULT)
    db.close()
    ids = [c.chunk_id for c in out]
    places = DEFAULT.answer.prompt_sources
    assert alpha[2].id in ids[:places]  # kept among the places a model reads...
    moved = out[ids.index(alpha[2].id)]
    # ...beside its hit, after the chunk before it (the one before first)
    assert ids[: ids.index(alpha[2].id)] == [alpha[1].id, alpha[0].id]
    assert moved.beside == alpha[1].id and moved.score == ranked[5].score  # its own score kept
    # the others' neighbours still come beside them, and nothing ranked is lost
    assert beta[0].id in ids and beta[2].id in ids and gamma[0].id in ids
    assert {c.chunk_id for c in ranked} <= set(ids)


def test_a_read_neighbour_that_keeps_its_place_stays_where_it_is(tmp_path: Path, embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("alpha", "delta"):
        (docs / f"{name}.md").write_text(_page(name, 3))
    settings = settings_for(tmp_path / "lib.db", chunk_size=240, chunk_overlap=0)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    chunks = library.chunks_by_ids(db, range(1, 200)).values()
    alpha = sorted((c for c in chunks if c.path == "alpha.md"), key=lambda c: c.ordinal)
    delta = sorted((c for c in chunks if c.path == "delta.md"), key=lambda c: c.ordinal)
    order = [alpha[1], delta[0], alpha[2]]
    ranked = [_chunk(r, c, 1.0 - r / 10) for r, c in enumerate(order, start=1)]
    out = _with_neighbours(ranked, _Context(db), db, DEFAULT)
    db.close()
    ids = [c.chunk_id for c in out]
    # alpha's next chunk was read at third and still is: not moved, not marked
    kept = next(c for c in out if c.chunk_id == alpha[2].id)
    assert kept.beside is None and ids.index(alpha[2].id) > ids.index(delta[0].id)
    assert replace(kept, rank=ranked[2].rank) == ranked[2]
