"""The `--json` outputs scripts read (`ask`, `inspect`, `search`, `documents`, `collections`,
`sessions`): every field, its name, its place and its value, built here from the records in the
library, so that moving the code that writes them cannot rename, drop or reorder one."""

from __future__ import annotations

import json
from pathlib import Path

from helpers import invoke, settings_for

from ragchat.app import App
from ragchat.search.hybrid import SearchRequest, search
from ragchat.store import sessions

QUESTIONS = ["What makes a will legally binding in South Africa?", "and who can witness it?"]

LINEAGE_KEYS = [
    "version",
    "question",
    "turn",
    "history_window",
    "reformulation",
    "plan",
    "context_weight",
    "queries",
    "anchor_document_ids",
    "anchor_documents",
    "missing_anchors",
    "chunks",
    "answer_mode",
    "answer_document_ids",
    "notices",
    "timings_ms",
    "coverage",
    "correction",
    "prompt",
    "scope",
]


def lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def stored_turns(db: Path, session: str) -> list[tuple[sessions.Message, sessions.Message]]:
    """The session's (question, answer) messages as stored."""
    app = App(settings_for(db))
    history = sessions.messages(app.db, sessions.session_id(app.db, session, create=False))
    app.close()
    answers = {m.turn: m for m in history if m.role == "assistant"}
    return [(m, answers[m.turn]) for m in history if m.role == "user"]


def trace(question: sessions.Message, answer: sessions.Message) -> dict:
    """A turn's trace: the stored lineage's keys in their order (but `weak`), the turn's number
    in its place, then the message, whether the documents cover it, the answer and whether it
    came."""
    stored = answer.lineage or {}
    expected = {key: stored[key] for key in LINEAGE_KEYS}
    expected["turn"] = question.turn
    expected["message_id"] = answer.id
    expected["weak_match"] = stored["weak"]
    expected["answer"] = answer.content
    expected["answered"] = stored["answer_mode"] not in ("pending", "unanswered") and bool(
        answer.content
    )
    return expected


def ordered(row: dict) -> list:
    return json.loads(json.dumps(list(row.items())))


def test_ask_and_inspect_json_keep_every_field_in_place(library_db: Path, runner) -> None:
    asked = []
    for question in QUESTIONS:
        result = invoke(runner, "ask", question, "-s", "shapes", "--json", "--db", library_db)
        assert result.exit_code == 0, result.output
        asked += lines(result.stdout)
    turns = stored_turns(library_db, "shapes")
    assert len(asked) == len(turns) == 2
    for row, (question, answer) in zip(asked, turns):
        assert ordered(row) == ordered(trace(question, answer))

    last = invoke(runner, "inspect", "last-turn", "-s", "shapes", "--json", "--db", library_db)
    first = invoke(runner, "inspect", "turn", "1", "-s", "shapes", "--json", "--db", library_db)
    for result, (question, answer) in ((last, turns[1]), (first, turns[0])):
        assert result.exit_code == 0, result.output
        expected = trace(question, answer)
        expected["session"] = "shapes"
        assert [ordered(row) for row in lines(result.stdout)] == [ordered(expected)]


def snippet(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rsplit(" ", 1)[0] + "…"


def source(path: str, start: int | None, end: int | None) -> str:
    if start is None:
        return path
    return f"{path} p. {start}" if end in (None, start) else f"{path} pp. {start}-{end}"


def test_search_json_keeps_every_field_in_place(library_db: Path, runner) -> None:
    query = "how many witnesses does a will need"
    result = invoke(runner, "search", query, "-k", "6", "--json", "--db", library_db)
    assert result.exit_code == 0, result.output
    app = App(settings_for(library_db))
    hits = search(app.db, app.embedder, app.settings, SearchRequest(query, query, k=6))
    app.close()
    expected = [
        {
            "rank": hit.rank,
            "chunk_id": hit.chunk.id,
            "score": round(hit.score, 4),
            "vector_rank": hit.vector_rank,
            "fts_rank": hit.fts_rank,
            "similarity": None if hit.similarity is None else round(hit.similarity, 4),
            "boost": hit.boost,
            "anchored": hit.anchored,
            "document": hit.chunk.path,
            "page_start": hit.chunk.page_start,
            "page_end": hit.chunk.page_end,
            "source": source(hit.chunk.path, hit.chunk.page_start, hit.chunk.page_end),
            "heading": hit.chunk.heading,
            "snippet": snippet(hit.chunk.text, 200),
            "document_id": hit.chunk.document_id,
            "collection": hit.chunk.collection,
            "absolute_path": hit.chunk.source,
        }
        for hit in hits
    ]
    assert len(expected) == 6
    assert [ordered(row) for row in lines(result.stdout)] == [ordered(row) for row in expected]


def test_pdf_hits_name_their_pages(library_db: Path, runner) -> None:
    result = invoke(
        runner, "search", "sourdough starter", "--mode", "fts", "--json", "--db", library_db
    )
    rows = [row for row in lines(result.stdout) if row["page_start"] is not None]
    assert rows and all(
        row["source"] == source(row["document"], row["page_start"], row["page_end"]) for row in rows
    )


def test_library_listings_json_keep_every_field_in_place(library_db: Path, runner) -> None:
    assert invoke(runner, "ask", QUESTIONS[0], "-s", "listed", "--db", library_db).exit_code == 0
    documents = invoke(runner, "documents", "--json", "--db", library_db)
    collections = invoke(runner, "collections", "--json", "--db", library_db)
    listed = invoke(runner, "sessions", "--json", "--db", library_db)
    app = App(settings_for(library_db))
    rows = app.db.execute(
        "SELECT d.id, k.name, d.path, coalesce(d.title, ''), d.chunk_count, (SELECT "
        "max(coalesce(c.page_end, c.page_start)) FROM chunks c WHERE c.document_id = d.id), "
        "d.ingested_at, d.source FROM documents d JOIN collections k ON k.root = d.root "
        "ORDER BY k.name, d.path"
    ).fetchall()
    kinds = app.db.execute(
        "SELECT k.name, k.root, k.created_at, count(d.id), coalesce(sum(d.chunk_count), 0) "
        "FROM collections k LEFT JOIN documents d ON d.root = k.root GROUP BY k.id ORDER BY k.name"
    ).fetchall()
    started = app.db.execute(
        "SELECT s.name, s.created_at, s.updated_at FROM sessions s ORDER BY s.updated_at DESC"
    ).fetchall()
    app.close()
    assert [ordered(row) for row in lines(documents.stdout)] == [
        ordered(
            {
                "collection": collection,
                "path": path,
                "title": title,
                "chunks": chunks,
                "pages": pages,
                "ingested_at": ingested,
                "document_id": doc_id,
                "absolute_path": absolute,
                "copy_of": None,
            }
        )
        for doc_id, collection, path, title, chunks, pages, ingested, absolute in rows
    ]
    assert [ordered(row) for row in lines(collections.stdout)] == [
        ordered(
            {"name": name, "folder": root, "documents": count, "chunks": chunks, "created_at": at}
        )
        for name, root, at, count, chunks in kinds
    ]
    assert [ordered(row) for row in lines(listed.stdout)] == [
        ordered(
            {
                "name": name,
                "created_at": created,
                "updated_at": updated,
                "turns": 1,
                "first_question": QUESTIONS[0],
            }
        )
        for name, created, updated in started
    ]
    assert rows and any(pages for *_, pages, _, _ in rows)  # a PDF among them
