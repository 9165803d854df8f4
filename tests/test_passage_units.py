"""An extractive answer's units come from passages, not chunks (issue 30 point 1, issue 28 point
8): a chunk boundary between a lead-in and its code no longer keeps them apart. Adjacent chunks
of one section among the turn's sources are joined as the model's prompt joins them, the
overlap said once, and then cut into units."""

from __future__ import annotations

from pathlib import Path

from helpers import settings_for

from ragchat.app import App
from ragchat.ingest.pipeline import ingest
from ragchat.search.passages import joined_text, passages
from ragchat.store.db import open_db

RENAMING = """# Records

## Renaming fields

A record's attribute names are the names its messages use, unless a field says otherwise. A
service may want camel case names. Renaming applies to encoding and decoding alike.

To rename one attribute, pass the name argument of field; any field declared with it uses the
new name in messages.

```python
class Invoice(Record):
    order_id: int = field(name="orderId")
```

The attribute keeps its Python name in your code; only the messages change.
"""

OTHERS = {
    "styles": "# Styles\n\nCamel case names start each word after the first with a capital; "
    "snake case names join lower-case words with underscores.",
    "wire": "# Messages\n\nA message holds a record's values under their names, in the order "
    "the attributes are declared; names are case sensitive.",
    "services": "# Services\n\nA service reads messages from a queue; it may want its names "
    "in camel case, as most web services do.",
    "decoding": "# Decoding\n\nDecoding a message checks every name against the record's "
    "attributes and fails on a name the record does not have.",
    "encoding": "# Encoding\n\nEncoding writes every attribute of a record into the message, "
    "the names as they are declared.",
}


def _library(tmp_path: Path, embedder, pages: dict[str, str]) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in pages.items():
        (docs / f"{name}.md").write_text(text + "\n")
    settings = settings_for(tmp_path / "lib.db", chunk_size=360, chunk_overlap=150)
    db = open_db(settings.db)
    ingest(db, settings, [docs], lambda: embedder)
    db.close()
    return settings.db


def _asked(path: Path, embedder, question: str):
    app = App(settings_for(path, chunk_size=360, chunk_overlap=150))
    app.__dict__["embedder"] = embedder
    try:
        return app.conversation("s").ask(question)
    finally:
        app.close()


def test_a_lead_in_ending_one_chunk_comes_with_the_code_of_the_next(
    tmp_path: Path, embedder
) -> None:
    """The chunk that matches the question ends with the lead-in; the next one (brought in
    beside it) starts with that lead-in again and holds the code. Drawn from chunks, the lead-in
    was bare and the code's chunk out of the answer's pool; drawn from their passage, the
    lead-in and its code are one unit."""
    path = _library(tmp_path, embedder, {"records": RENAMING, **OTHERS})
    turn = _asked(path, embedder, "can the messages use camel case names for a record?")
    assert 'field(name="orderId")' in turn.answer
    assert "To rename one attribute, pass the name argument of field" in turn.answer
    assert turn.answer.count("To rename one attribute") == 1


def test_a_code_block_cut_between_two_chunks_is_said_once_whole() -> None:
    """A block too long for one chunk: its first piece ends the chunk with a fence of its own,
    the next chunk starts with the block whole (the overlap). Joined, the block is said once,
    whole, after its lead-in (before, the first piece and the whole block both, so the lead-in's
    unit was the piece: three import lines)."""
    from ragchat.store.library import StoredChunk

    before = "Here we define the hooks:\n\n```python\nimport struct\nfrom typing import Any\n```"
    after = (
        "```python\nimport struct\nfrom typing import Any\n\n"
        "def enc_hook(obj: Any) -> Any:\n    return struct.pack('dd', obj.real, obj.imag)\n```"
    )
    ranked = [
        (1, StoredChunk(1, 1, "ext.md", "Ext", "Hooks", before, 3)),
        (2, StoredChunk(2, 1, "ext.md", "Ext", "Hooks", after, 4)),
    ]
    (passage,) = passages(ranked, limit=6)
    assert passage.chunk.text == "Here we define the hooks:\n\n" + after


def test_the_code_opening_a_chunk_takes_no_lead_in_that_ends_only_the_chunk_before() -> None:
    """An API page: one entry's last sentence, then the next entry's signature, which opens the
    next chunk. Read in their passage, the signature is not that sentence's code: the chunk the
    question matched shows its own sentence, not the entry before it."""
    from helpers import flat_idf, source

    from ragchat.answer import Mode, Request, Source, extractive
    from ragchat.params import DEFAULT

    before = (
        "Installs the callables into the environment.\n\n"
        "Uninstall the environment's globally installed translation.\n\n"
        "```python\nEnvironment.extract_translations(source)\n```"
    )
    after = (
        "```python\nEnvironment.extract_translations(source)\n```\n\n"
        "Extract localizable strings from the given template source."
    )
    joined = source(1, joined_text(before, after))
    read = Source(1, joined.chunk, own=after, near=(before,))
    request = Request("extract localizable strings from a template", [read])
    text = extractive(Mode.QUESTION, request, flat_idf, DEFAULT.answer).text
    assert "Extract localizable strings" in text
    assert "Uninstall" not in text
