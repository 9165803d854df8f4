"""Structure-aware chunking: pure functions over ParsedDocument."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from helpers import chunk_document

from ragchat.ingest.chunking import Chunk, embedding_text
from ragchat.ingest.loaders import load_document
from ragchat.ingest.parsed import ParsedDocument, Section

# --- helpers ---------------------------------------------------------------------------------


def make_doc(*sections: tuple[tuple[str, ...], str], title: str = "Guide") -> ParsedDocument:
    """Lay sections out like the loaders do: heading line, blank line, body."""
    parts: list[str] = []
    spans: list[Section] = []
    length = 0
    for path, body in sections:
        for piece, is_body in ((path[-1] if path else "", False), (body, True)):
            if not piece:
                continue
            start = length + (2 if parts else 0)
            parts.append(piece)
            length = start + len(piece)
            if is_body:
                spans.append(Section(path, start, length))
    return ParsedDocument(title, "\n\n".join(parts), tuple(spans))


def sentences(count: int, seed: int = 0, words: tuple[int, int] = (6, 18)) -> str:
    """Deterministic prose: capitalised sentences of ordinary words ending in a period."""
    rng = random.Random(seed)
    vocabulary = "starter flour water oven crust crumb proof dough salt heat loaf rise bake".split()
    out = []
    for _ in range(count):
        body = " ".join(rng.choice(vocabulary) for _ in range(rng.randint(*words)))
        out.append(body[0].upper() + body[1:] + ".")
    return " ".join(out)


def paragraphs(count: int, per_paragraph: int = 4, seed: int = 0) -> str:
    return "\n\n".join(sentences(per_paragraph, seed + n) for n in range(count))


def at_word_boundary(text: str, position: int) -> bool:
    return position in (0, len(text)) or text[position - 1].isspace() or text[position].isspace()


def check_chunks(doc: ParsedDocument, chunks: list[Chunk], max_size: int = 1200) -> None:
    """The invariants every chunking must satisfy."""
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    for chunk in chunks:
        assert doc.text[chunk.start : chunk.end] == chunk.text
        assert chunk.text and chunk.text == chunk.text.strip()
        assert len(chunk.text) <= max_size
        assert at_word_boundary(doc.text, chunk.start) and at_word_boundary(doc.text, chunk.end)
        owners = [s for s in doc.sections if s.start <= chunk.start and chunk.end <= s.end]
        assert [s.heading_path for s in owners] == [chunk.heading_path]
    for before, after in zip(chunks, chunks[1:]):
        assert before.start < after.start and before.end < after.end
    covered = set().union(*(range(c.start, c.end) for c in chunks)) if chunks else set()
    for section in doc.sections:
        body = range(section.start, section.end)
        assert all(i in covered for i in body if not doc.text[i].isspace()), "text was lost"


def overlap_chars(first: Chunk, second: Chunk) -> int:
    return max(0, first.end - second.start)


# --- the invariants over many shapes ---------------------------------------------------------

SHAPES = {
    "short": make_doc((("Intro",), "One short paragraph.")),
    "many paragraphs": make_doc((("Long",), paragraphs(12))),
    "giant paragraph of sentences": make_doc((("Giant",), sentences(60, seed=3))),
    "giant paragraph without sentence breaks": make_doc(
        (("No breaks",), " ".join(["lowercase words run on without any full stop"] * 120))
    ),
    "giant lines without sentence breaks": make_doc(
        (("Lines",), "\n".join(f"item {n} of a long list without full stops" for n in range(150)))
    ),
    "several sections": make_doc(
        ((), "Preamble before any heading."),
        (("A",), paragraphs(5, seed=10)),
        (("A", "A.1"), "Tiny subsection."),
        (("B",), paragraphs(3, per_paragraph=12, seed=20)),
    ),
}


@pytest.mark.parametrize("shape", SHAPES, ids=list(SHAPES))
@pytest.mark.parametrize(
    ("target", "max_size", "overlap"), [(1000, 1200, 150), (300, 400, 80), (200, 200, 0)]
)
def test_invariants_hold(shape: str, target: int, max_size: int, overlap: int) -> None:
    doc = SHAPES[shape]
    check_chunks(doc, chunk_document(doc, target, max_size, overlap), max_size)


@pytest.mark.parametrize("seed", range(20))
def test_invariants_hold_on_random_documents(seed: int) -> None:
    rng = random.Random(seed)
    sections = [
        (
            (f"Heading {n}",),
            paragraphs(rng.randint(0, 8), rng.randint(1, 15), seed * 100 + n) or "Short.",
        )
        for n in range(rng.randint(1, 5))
    ]
    doc = make_doc(*sections)
    target = rng.randint(80, 1200)
    max_size = target + rng.randint(0, 400)
    overlap = rng.randint(0, 200)
    check_chunks(doc, chunk_document(doc, target, max_size, overlap), max_size)


# --- specific behaviour ----------------------------------------------------------------------


def test_short_document_is_one_chunk() -> None:
    doc = make_doc((("Intro",), "One short paragraph.\n\nAnd a second."))
    assert chunk_document(doc) == [
        Chunk(
            0,
            "One short paragraph.\n\nAnd a second.",
            ("Intro",),
            doc.sections[0].start,
            len(doc.text),
        )
    ]


def test_paragraphs_are_packed_whole_up_to_target() -> None:
    doc = make_doc((("Long",), paragraphs(12)))
    chunks = chunk_document(doc, target=1000, max_size=1200, overlap=0)
    paragraph_texts = doc.text[doc.sections[0].start :].split("\n\n")
    assert len(chunks) > 1
    for chunk in chunks:
        assert len(chunk.text) <= 1000
        assert all(p in paragraph_texts for p in chunk.text.split("\n\n"))  # no paragraph cut


def test_long_section_chunks_overlap_from_a_sentence_start() -> None:
    doc = make_doc((("Long",), paragraphs(12)))
    chunks = chunk_document(doc, target=1000, max_size=1200, overlap=150)
    assert len(chunks) > 2
    for before, after in zip(chunks, chunks[1:]):
        shared = overlap_chars(before, after)
        assert 50 <= shared <= 150
        assert after.text[:shared] == before.text[-shared:]
        assert re.match(r"[A-Z]", after.text)  # the overlap starts a sentence


def test_giant_paragraph_splits_at_sentence_ends() -> None:
    doc = make_doc((("Giant",), sentences(60, seed=3)))
    chunks = chunk_document(doc, target=500, max_size=600, overlap=0)
    assert len(chunks) > 3
    assert all(c.text.endswith(".") and c.text[0].isupper() for c in chunks)
    assert all(len(c.text) <= 600 for c in chunks)


def test_giant_paragraph_without_sentences_splits_between_words() -> None:
    words = " ".join(f"word{n}" for n in range(1500))
    doc = make_doc((("No breaks",), words))
    chunks = chunk_document(doc, target=400, max_size=500, overlap=60)
    assert len(chunks) > 10
    vocabulary = set(words.split())
    for chunk in chunks:
        assert len(chunk.text) <= 500
        assert set(chunk.text.split()) <= vocabulary  # every token is a whole word
    for before, after in zip(
        chunks, chunks[1:]
    ):  # no sentence or block start to begin an overlap at
        assert overlap_chars(before, after) == 0


def test_a_single_token_longer_than_max_size_is_the_only_cut_inside_a_word() -> None:
    blob = "x" * 2500
    doc = make_doc((("Data",), f"Before. {blob} after."))
    chunks = chunk_document(doc, target=1000, max_size=1200, overlap=150)
    assert all(len(c.text) <= 1200 for c in chunks)
    assert "".join(c.text for c in chunks if set(c.text) == {"x"}) == "x" * 2400


def test_chunks_never_cross_sections_or_overlap_into_the_previous_one() -> None:
    doc = make_doc(
        (("A",), sentences(4, seed=1)), (("A", "A.1"), sentences(4, seed=2)), (("B",), "End.")
    )
    chunks = chunk_document(doc, overlap=150)
    assert [c.heading_path for c in chunks] == [("A",), ("A", "A.1"), ("B",)]
    assert [c.start for c in chunks] == [s.start for s in doc.sections]
    assert [c.end for c in chunks] == [s.end for s in doc.sections]


def test_tiny_section_is_kept_and_blank_section_yields_nothing() -> None:
    doc = ParsedDocument(
        "Guide",
        "A\n\nOk.\n\nB\n\n   \n\nC\n\nFine.",
        (Section(("A",), 3, 6), Section(("B",), 11, 14), Section(("C",), 19, 24)),
    )
    chunks = chunk_document(doc)
    assert [(c.heading_path, c.text) for c in chunks] == [(("A",), "Ok."), (("C",), "Fine.")]


def test_tiny_trailing_piece_joins_the_previous_chunk() -> None:
    body = sentences(12, seed=5) + "\n\nShort tail."
    doc = make_doc((("S",), body))
    chunks = chunk_document(doc, target=len(body) - 20, max_size=len(body) + 10, overlap=0)
    assert len(chunks) == 1 and chunks[0].text.endswith("Short tail.")


def test_tiny_lead_in_joins_the_long_paragraph_after_it() -> None:
    body = "The conditions are:\n\n" + sentences(12, seed=5)
    doc = make_doc((("S",), body))
    chunks = chunk_document(doc, target=len(body) - 30, max_size=len(body) + 10, overlap=0)
    assert [c.text for c in chunks] == [body]


def test_tail_that_would_exceed_max_size_stays_separate() -> None:
    body = sentences(12, seed=5) + "\n\nShort tail."
    doc = make_doc((("S",), body))
    chunks = chunk_document(doc, target=len(body) - 20, max_size=len(body) - 5, overlap=0)
    assert [c.text for c in chunks][-1] == "Short tail."


def test_offsets_are_into_the_document_text() -> None:
    doc = make_doc(((), "Lead."), (("Part",), paragraphs(6)))
    for chunk in chunk_document(doc, target=300, max_size=400, overlap=80):
        assert doc.text[chunk.start : chunk.end] == chunk.text


@pytest.mark.parametrize(
    ("target", "max_size", "overlap"), [(0, 100, 10), (200, 100, 10), (100, 100, -1)]
)
def test_bad_sizes_are_rejected(target: int, max_size: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_document(make_doc((("A",), "x")), target, max_size, overlap)


def test_chunks_of_a_loaded_markdown_file(tmp_path: Path) -> None:
    path = tmp_path / "bread.md"
    path.write_text(
        f"# Bread\n\n{paragraphs(3)}\n\n## Starter\n\n{paragraphs(9, seed=7)}\n\n## Oven\n\nHot.\n"
    )
    doc = load_document(path)
    chunks = chunk_document(doc)
    check_chunks(doc, chunks)
    assert {c.heading_path for c in chunks} == {("Bread",), ("Bread", "Starter"), ("Bread", "Oven")}
    assert chunks[-1].text == "Hot."


# --- embedding text --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("title", "path", "expected_header"),
    [
        ("Wills", ("Making a will", "Who may witness"), "Wills > Making a will > Who may witness"),
        (
            "Making a Will",
            ("Making a will", "Witnesses"),
            "Making a Will > Witnesses",
        ),  # h1 == title
        ("Wills", (), "Wills"),
        ("", ("Only heading",), "Only heading"),
    ],
)
def test_embedding_text_reads_on_its_own(
    title: str, path: tuple[str, ...], expected_header: str
) -> None:
    chunk = Chunk(0, "Two witnesses must sign.", path, 0, 24)
    assert embedding_text(title, chunk) == f"{expected_header}\n\nTwo witnesses must sign."


def test_embedding_text_without_title_or_headings_is_the_chunk_text() -> None:
    assert embedding_text("  ", Chunk(0, "Body.", (), 0, 5)) == "Body."


def fences(text: str) -> int:
    return sum(1 for line in text.split("\n") if line.startswith("```"))


def test_overlap_starts_at_a_sentence_or_block_never_inside_code() -> None:
    code = (
        "```python\n" + "\n".join(f"value_{n} = compute(argument_{n})" for n in range(6)) + "\n```"
    )
    body = "\n\n".join(f"{sentences(3, seed=n)} Like this:\n\n{code}" for n in range(8))
    doc = make_doc((("Mixed",), body))
    chunks = chunk_document(doc, target=400, max_size=500, overlap=150)
    assert len(chunks) > 4
    for chunk in chunks:
        assert fences(chunk.text) % 2 == 0, chunk.text
        assert chunk.text.startswith("```") or re.match(r"[A-Z]", chunk.text), chunk.text
        assert doc.text[chunk.start : chunk.end] == chunk.text  # no block had to be re-fenced


def test_a_sentence_continuing_after_a_code_block_stays_with_it() -> None:
    lead = sentences(6, seed=2)
    rest = (
        "the second router wins, " + sentences(3, seed=4).lower()
    )  # one sentence, over 200 characters
    body = f"{lead}\n\nIf you import both, like:\n\n```python\nfrom a import router\n```\n\n{rest}"
    doc = make_doc((("Routers",), body))
    chunks = chunk_document(doc, target=150, max_size=600, overlap=0)
    assert chunks[-1].text.startswith("If you import both") and chunks[-1].text.endswith(rest)


def test_a_long_list_is_cut_between_items_never_after_an_item_number() -> None:
    steps = "\n".join(
        f"{n}. Step {n} happens here. If it fails, the error is stored and handled later "
        f"by step {n + 1}."
        for n in range(1, 26)
    )
    doc = make_doc((("Lifecycle",), f"Flask handles a request in these steps:\n\n{steps}"))
    chunks = chunk_document(doc, target=600, max_size=800, overlap=150)
    assert len(chunks) > 2
    for chunk in chunks:
        last_line = chunk.text.splitlines()[-1]
        assert not re.fullmatch(r"\d+\.", last_line), chunk.text  # no "7." cut from its item
        assert re.match(r"(\d+\. Step|Flask handles)", chunk.text), chunk.text  # starts at an item


def test_an_overlap_never_reaches_back_more_than_twice_the_window() -> None:
    # the last sentence of each paragraph is long: the sentence running into the 150-character
    # window starts 330 characters back, beyond twice the window, so there is no overlap
    long_tail = "The crumb " + " ".join(["keeps rising slowly"] * 16) + "."
    body = "\n\n".join(f"{sentences(8, seed=n)} {long_tail}" for n in range(6))
    chunks = chunk_document(make_doc((("Long",), body)), target=600, max_size=1400, overlap=150)
    assert len(chunks) > 2
    for before, after in zip(chunks, chunks[1:]):
        assert overlap_chars(before, after) <= 300
        assert re.match(r"[A-Z]", after.text)


def test_a_signature_fence_is_embedded_as_any_code_fence() -> None:
    """The tilde fence only marks a signature for the answer's units: the embedder reads the
    signature as ingest wrote code before the mark, so its vector does not move."""
    chunk = Chunk(0, "Entry.\n\n~~~python\nget(url)\n~~~\n\nFetches url.", ("API",), 0, 40)
    assert embedding_text("Client", chunk) == (
        "Client > API\n\nEntry.\n\n```python\nget(url)\n```\n\nFetches url."
    )
