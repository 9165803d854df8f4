"""Helpers shared by the tests (importable: pytest puts tests/ on the path)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

from typer.testing import CliRunner

from ragchat.answer import Mode, Request, Source, extractive
from ragchat.app import App
from ragchat.cli import app
from ragchat.config import Settings, user_cache_dir
from ragchat.ingest import chunking
from ragchat.ingest.parsed import ParsedDocument
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.search import fusion
from ragchat.search.fusion import Fused, RankedList
from ragchat.store import library, vectors
from ragchat.store.db import open_db
from ragchat.store.library import ChunkRecord, DocumentRecord, StoredChunk

REPO = Path(__file__).resolve().parent.parent
SAMPLE_DOCS = REPO / "sample_docs"
MODEL_CACHE = str(user_cache_dir() / "models")  # the offline model is assembled once per machine


def settings_for(db: Path, **changes) -> Settings:
    return Settings(db=db, model_cache=MODEL_CACHE, ollama="off").replace(**changes)


def invoke(runner: CliRunner, *args: object, input: str | None = None):
    """Run the CLI in-process; the click Result's output holds stdout and stderr."""
    return runner.invoke(app, [str(a) for a in args], input=input, catch_exceptions=False)


def ask_json(runner: CliRunner, db: Path, session: str, question: str) -> dict:
    """One `ragchat ask --json` turn; its trace as a dict."""
    result = invoke(runner, "ask", question, "--session", session, "--json", "--db", db)
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout.strip().splitlines()[-1])


def pdf_bytes(pages: list[list[tuple[str, float, float]]], title: str | None = None) -> bytes:
    """A minimal valid PDF: each page a list of (text, font size, baseline y) lines in Helvetica."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"",  # the page tree, filled in once the kids are known
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    kids = []
    for lines in pages:
        stream = b"\n".join(
            b"BT /F1 %g Tf 72 %g Td (%s) Tj ET" % (size, y, _pdf_string(text))
            for text, size, y in lines
        )
        objects.append(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(stream), stream))
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
            b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % len(objects)
        )
        kids.append(b"%d 0 R" % len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(kids))
    info = b""
    if title is not None:
        objects.append(b"<< /Title (%s) >>" % _pdf_string(title))
        info = b" /Info %d 0 R" % len(objects)
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R%s >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info,
        xref,
    )
    return bytes(out)


def _pdf_string(text: str) -> bytes:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)").encode("latin-1")


SIZES = Settings()  # the chunk sizes ingest passes unless ragchat.toml sets others


def chunk_document(
    doc: ParsedDocument,
    target: int = SIZES.chunk_size,
    max_size: int = SIZES.chunk_max,
    overlap: int = SIZES.chunk_overlap,
) -> list[chunking.Chunk]:
    """`chunking.chunk_document` with the sizes ingest passes by default."""
    return chunking.chunk_document(doc, target, max_size, overlap)


# fusion with the chat's values, passed as a turn passes them (fusion takes no defaults)
CHAT = {
    "k": 20,
    "protect_within": DEFAULT.fusion.protect_within,
    "own_within": DEFAULT.fusion.own_within,
}


def fuse(lists: list[RankedList], document_of: dict[int, int], **options: Any) -> list[Fused]:
    return fusion.fuse(lists, document_of, **(CHAT | options))


def source(number: int, text: str) -> Source:
    """The extractive answer's source [number]: one chunk of its own document, doc{number}.md."""
    chunk = StoredChunk(
        id=number, document_id=number, path=f"doc{number}.md", title="", heading="", text=text,
        ordinal=0,
    )  # fmt: skip
    return Source(number, chunk)


def flat_idf(term: str) -> float:
    """Every word equally rare: the answer's choice rests on the words alone."""
    return 1.0


def pick(query: str, texts: list[str], mode: Mode = Mode.QUESTION, **fields: object) -> str:
    """The extractive answer to `query` from `texts` (source [1], [2], ... in order), every word
    equally rare, default parameters; `fields` are the request's other fields (exclude, count)."""
    sources = [source(i, text) for i, text in enumerate(texts, 1)]
    request = Request(query, sources, **fields)  # type: ignore[arg-type]
    return extractive(mode, request, flat_idf, params=DEFAULT.answer).text


def script_module(path: str) -> ModuleType:
    """A script of the repository that is no package module (`benchmarks/paired_turns.py`,
    `tools/cli_reference.py`), loaded by its path."""
    spec = importlib.util.spec_from_file_location(Path(path).stem, REPO / path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ingested(runner: CliRunner, root: Path, pages: dict[str, str]) -> Path:
    """`pages` ({file name: text}) written under root/docs and ingested into root/lib.db through
    the CLI; the database's path."""
    docs = root / "docs"
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    db_path = root / "lib.db"
    assert invoke(runner, "ingest", docs, "--db", db_path).exit_code == 0
    return db_path


def chunks_under_headings(
    runner: CliRunner, root: Path, guide: str
) -> dict[str, list[StoredChunk]]:
    """`guide` ingested as root/docs/guide.md into root/lib.db through the CLI; its stored chunks
    in reading order, by heading."""
    db = open_db(ingested(runner, root, {"guide.md": guide}))
    ids = [row[0] for row in db.execute("SELECT id FROM chunks ORDER BY ordinal")]
    stored = library.chunks_by_ids(db, ids)
    db.close()
    found: dict[str, list[StoredChunk]] = {}
    for chunk_id in ids:
        found.setdefault(stored[chunk_id].heading, []).append(stored[chunk_id])
    return found


def filler_pages(unrelated_to: str) -> dict[str, str]:
    """Five short pages about other things ("A page about caching, which has nothing to do with
    loops."), so a small test library has a corpus around the pages a test is about."""
    return {
        f"other{i}.md": f"# Topic {i}\n\nA page about {word}, which has nothing to do with "
        f"{unrelated_to}.\n"
        for i, word in enumerate(["caching", "logging", "signals", "uploads", "sessions"])
    }


def library_app(root: Path, pages: dict[str, str], embedder: Any, **changes: Any) -> App:
    """`pages` ({file name: text}) written under root/docs and ingested into root/lib.db by the
    real pipeline (with `embedder`), and an App over that library (`changes`: settings, e.g.
    chunk_size) that embeds with the same model."""
    docs = root / "docs"
    for name, text in pages.items():
        (docs / name).parent.mkdir(parents=True, exist_ok=True)
        (docs / name).write_text(text, encoding="utf-8")
    settings = settings_for(root / "lib.db", **changes)
    handle = open_db(settings.db)
    try:
        ingest(handle, settings, [docs], lambda: embedder)
    finally:
        handle.close()
    app = App(settings)
    app.__dict__["embedder"] = embedder
    return app


def asked_once(
    root: Path, pages: dict[str, str], embedder: Any, question: str, **changes: Any
) -> tuple[tuple[Any, ...], dict[int, str]]:
    """`question` asked in a new session of a `library_app` of `pages`: the turn's ranked chunks
    and every stored chunk's text by id."""
    app = library_app(root, pages, embedder, **changes)
    try:
        texts = {c.id: c.text for c in library.chunks_by_ids(app.db, range(1, 100)).values()}
        chunks = app.conversation("s").ask(question).lineage.chunks
    finally:
        app.close()
    return chunks, texts


def documents_as_found(chunks: Any) -> bool:
    """Whether the documents ranked, in their order, are those of the chunks the search ranked
    (the chunks brought in `beside` another add none and move none)."""
    found = [c.document for c in chunks if c.beside is None]
    return list(dict.fromkeys(c.document for c in chunks)) == list(dict.fromkeys(found))


def memory_library(documents: dict[str, tuple[str, list[tuple[str, str]]]], embedder: Any) -> Any:
    """An in-memory library of `documents` ({path: (title, [(heading, text), ...])}, a chunk per
    section) embedded by `embedder` (a fake of tests/fakes.py): real SQLite, FTS5 and sqlite-vec."""
    db = open_db(":memory:")
    vectors.ensure_vector_table(db, embedder.model_id, embedder.dim)
    for path, (title, sections) in documents.items():
        record = DocumentRecord(
            source=f"/docs/{path}", path=path, root="/docs", title=title, content_hash=path,
            size=1, mtime=0.0, encoding="utf-8", term_counts={},
        )  # fmt: skip
        chunks = [
            ChunkRecord(n, text, heading, 0, len(text))
            for n, (heading, text) in enumerate(sections)
        ]
        library.replace_document(db, record, chunks, embedder.embed([c.text for c in chunks]))
    return db
