"""What a page says whole reaches an answer whole: the last sentence of a section that ends
without a full stop ("DB URL is typically in the form of mysql://user:pass@host/db") is a
sentence, not a fragment a chunk boundary cut; and an RST definition list whose terms carry
their own colon ("``host``:") reads "host: Network host ...", not "host:: ...".
"""

from __future__ import annotations

from pathlib import Path

from helpers import chunks_under_headings, flat_idf, ingested, invoke

from ragchat.answer import Mode, Request, Source, extractive
from ragchat.ingest.formats.rst import parse_rst
from ragchat.params import DEFAULT
from ragchat.store.library import StoredChunk

URL = "The address of a MySQL server is written as mysql://user:secret@db.host:3306/shop"


def answer_of(text: str, closes_section: bool) -> str:
    stored = StoredChunk(
        id=1, document_id=1, path="databases.rst", title="Databases",
        heading="Databases > MySQL", text=text, ordinal=2, closes_section=closes_section,
    )  # fmt: skip
    request = Request("how do I write the address of a mysql server?", [Source(1, stored)])
    return extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text


def test_the_last_sentence_of_a_section_is_whole_without_a_full_stop() -> None:
    assert answer_of(URL, closes_section=True) == f"{URL} [1]"
    # the same words where the chunk goes on under the same heading: a boundary may have cut it
    assert "mysql://user:secret" not in answer_of(URL, closes_section=False)


def test_the_last_chunk_under_each_heading_closes_its_section(tmp_path: Path, runner) -> None:
    long_section = "\n\n".join(
        f"Paragraph {n} explains one more detail of the connection pool, its size and its timeout."
        for n in range(60)
    )
    by_heading = chunks_under_headings(
        runner, tmp_path, f"# Guide\n\n## Pool\n\n{long_section}\n\n## Address\n\n{URL}\n"
    )
    pool = [chunk.closes_section for chunk in by_heading["Pool"]]
    assert len(pool) > 1 and pool[-1] and not any(pool[:-1]), by_heading
    assert [chunk.closes_section for chunk in by_heading["Address"]] == [True]


def test_a_section_ending_without_a_full_stop_is_answered_from_the_library(
    runner, tmp_path: Path
) -> None:
    page = (
        "Databases\n=========\n\nShop keeps its orders in a relational database.\n\n"
        f"MySQL\n-----\n\n{URL}\n\n"
        "Pool\n----\n\nThe pool keeps ten connections open and closes idle ones after a minute.\n"
    )
    db = ingested(runner, tmp_path, {"databases.rst": page})
    result = invoke(runner, "ask", "how do I write the address of a mysql server?", "--db", db)
    assert result.exit_code == 0, result.output
    assert "mysql://user:secret@db.host:3306/shop" in result.output, result.output


def test_an_rst_definition_term_with_its_own_colon_is_read_once() -> None:
    outline = parse_rst(
        "Parameters\n==========\n\n``host``:\n    Network host the database is available at.\n"
        "``port`` (defaults to ``3306``):\n    Network port of the database.\n"
        "timeout\n    Seconds to wait for a connection.\n"
    )
    text = "\n".join(block if isinstance(block, str) else block.text for block in outline.blocks)
    assert "host: Network host the database is available at." in text, text
    assert "port (defaults to 3306): Network port of the database." in text, text
    assert "timeout: Seconds to wait for a connection." in text, text
    assert "::" not in text, text


def answer_from(text: str, question: str, opens_section: bool = True) -> str:
    stored = StoredChunk(
        id=1, document_id=1, path="install.rst", title="Install", heading="Install",
        text=text, ordinal=0, opens_section=opens_section, closes_section=True,
    )  # fmt: skip
    request = Request(question, [Source(1, stored)])
    return extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text


LOWER = (
    "urllib3 keeps connections open in a pool and reuses them for every request to one host.\n\n"
    "Pools are created on demand and closed when the manager is cleared."
)


def test_a_lower_case_first_sentence_is_whole_where_its_section_opens() -> None:
    question = "does urllib3 reuse connections for requests to one host?"
    assert answer_from(LOWER, question).startswith("urllib3 keeps connections open in a pool")
    # where the chunk goes on with a section begun before, it may start mid-sentence
    assert "urllib3 keeps" not in answer_from(LOWER, question, opens_section=False)
