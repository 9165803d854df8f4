"""Corrections ("no, I meant X", /retry X), reading a whole section (/open N, `ragchat show`),
and Ctrl-C during the REPL's /ingest, on the sample library and real folders."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

import pytest
from helpers import invoke, settings_for
from test_repl import run_repl

from ragchat.app import App
from ragchat.conversation.correction import corrected, subject_of
from ragchat.store import library, sessions
from ragchat.store.db import open_db


@pytest.mark.parametrize(
    ("turn", "subject"),
    [
        ("no, I meant a codicil", "a codicil"),
        ("I mean the query parameter", "the query parameter"),
        ("not that, the Marriage Act", "the Marriage Act"),
        ("I mean, how does it work?", None),  # a new question, not a subject
        ("what is a codicil?", None),
        (
            "No, I meant if there is any point of those elements that trigger wildfire.",
            None,
        ),  # a clause
        ("I meant for the purchase loan", None),  # a qualifier: an elliptical follow-up
    ],
)
def test_corrections_are_recognised(turn: str, subject: str | None) -> None:
    assert subject_of(turn) == subject


def test_the_subject_takes_the_place_of_the_pronoun_or_the_first_noun_phrase() -> None:
    assert (
        corrected("how do I make it required?", "the query parameter")
        == "how do I make the query parameter required?"
    )
    assert corrected("how do I make a will valid?", "a codicil") == "how do I make a codicil valid?"
    assert corrected("Explain witnessing rules", "codicils") == "codicils: Explain witnessing rules"
    # the phrase sharing a word with X
    assert (
        corrected("How can I get to the library from the downtown hotel?", "the downtown of SF")
        == "How can I get to the library from the downtown of SF hotel?"
    )


def test_a_correction_turn_searches_for_the_new_subject(library_db: Path) -> None:
    app = App(settings_for(library_db))
    conversation = app.conversation("fix")
    conversation.ask("how do I make a will valid?")
    result = conversation.ask("no, I meant a codicil")
    assert result.lineage.question == "how do I make a codicil valid?"
    assert result.lineage.correction == "no, I meant a codicil"
    stored = library.chunks_by_ids(app.db, [c.chunk_id for c in result.lineage.chunks[:3]])
    assert any("codicil" in chunk.text for chunk in stored.values())
    again = app.conversation("fix").ask("", retry="an amendment")
    assert again.lineage.question == "how do I make an amendment valid?"
    assert again.lineage.correction == "/retry an amendment"


def test_open_shows_the_whole_section_and_retry_reruns(library_db: Path, capsys) -> None:
    run_repl(
        library_db,
        ["How do I change my will after signing it?", "/open 1", "/retry a codicil", "/open 99"],
    )
    captured = capsys.readouterr()
    out = captured.out
    db = App(settings_for(library_db)).db
    first = sessions.messages(db, sessions.session_id(db, "r1"))[1].lineage["chunks"][0]
    section = library.section(db, first["chunk_id"])
    assert section is not None and section.text.strip()
    flat = " ".join(out.split())
    assert " ".join(section.text.split()) in flat  # the whole section, not just the chunk
    assert section.path in flat
    assert "a correction" in flat
    assert "the last answer has no source 99" in " ".join(captured.err.split())


def test_show_prints_a_section_of_several_chunks(tmp_path: Path, runner, embedder) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    paragraphs = [
        f"Paragraph {n} about the lighthouse keeper and lamp number {n}, trimmed nightly."
        for n in range(12)
    ]
    (docs / "light.md").write_text("# Lighthouse\n\n## Duties\n\n" + "\n\n".join(paragraphs) + "\n")
    db_path = tmp_path / "lib" / "ragchat.db"
    db = open_db(db_path)
    from ragchat.ingest.pipeline import ingest

    ingest(
        db,
        settings_for(db_path, chunk_size=200, chunk_max=300, chunk_overlap=60),
        [docs],
        lambda: embedder,
    )
    ids = [row[0] for row in db.execute("SELECT id FROM chunks ORDER BY ordinal")]
    db.close()
    assert len(ids) >= 3
    result = invoke(runner, "show", ids[1], "--db", db_path)
    assert result.exit_code == 0, result.output
    flat = " ".join(result.output.split())
    assert all(
        p in flat for p in paragraphs
    )  # every chunk's text, overlaps cut: each paragraph once
    assert all(flat.count(p) == 1 for p in paragraphs)
    assert "light.md" in flat and "Duties" in flat
    missing = invoke(runner, "show", 999999, "--db", db_path)
    assert missing.exit_code == 1 and "Error: no chunk 999999" in missing.output


def test_ctrl_c_during_ingest_returns_to_the_prompt_and_keeps_written_documents(
    tmp_path: Path, capsys
) -> None:
    """A real SIGINT while /ingest embeds: the REPL goes on, finished documents stay, and the next
    /ingest does not redo them."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for n in range(60):
        (docs / f"note{n:02d}.md").write_text(
            f"# Note {n}\n\n" + f"Bird {n} sings at dawn near pond {n}. " * (8 + n % 30)
        )
    db_path = tmp_path / "lib.db"
    open_db(db_path).close()
    done = threading.Event()
    written: list[int] = []

    def interrupt_once_some_are_written() -> None:
        watch = open_db(db_path)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not done.is_set():
            count = watch.execute("SELECT count(*) FROM documents").fetchone()[0]
            if count >= 1:
                written.append(count)
                os.kill(os.getpid(), signal.SIGINT)
                break
            time.sleep(0.01)
        watch.close()

    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    watcher = threading.Thread(target=interrupt_once_some_are_written, daemon=True)
    watcher.start()
    try:
        run_repl(db_path, [f"/ingest {docs}", "/sessions"], embed_batch=1)
    finally:
        done.set()
        watcher.join(timeout=5)
        signal.signal(signal.SIGINT, previous if previous is not None else signal.SIG_DFL)
    out = " ".join(capsys.readouterr().out.split())
    assert written, "the ingest finished before any document was seen"
    assert "ingest interrupted" in out and "bye" in out
    db = open_db(db_path)
    kept = len(library.documents(db))
    db.close()
    assert 1 <= kept < 60
    run_repl(db_path, [f"/ingest {docs}"])
    again = " ".join(capsys.readouterr().out.split())
    assert f"{60 - kept} added" in again and f"{kept} unchanged" in again


def test_panel_scores_are_in_0_1_and_never_rise_down_the_ranks() -> None:
    from ragchat.conversation.models import RetrievedChunk
    from ragchat.render import expected_chunks, panel_scores

    def chunk(rank: int, rrf: float, boost: float) -> RetrievedChunk:
        return RetrievedChunk(
            rank, rank, 1, "a.md", "", 1, 1, 0.5, rrf, boost, rrf + boost, bool(boost), False
        )

    shown = panel_scores(
        [chunk(1, 0.6, 0.0), chunk(2, 0.9, 0.3), chunk(3, 0.5, 0.3), chunk(4, 0.55, 0.0)]
    )
    assert shown == [0.6, 0.6, 0.5, 0.5]
    assert expected_chunks(500, 25, 100) == 2000 and expected_chunks(2137, 100, 100) == 0


def test_the_ingest_summary_wraps_at_spaces_on_an_80_column_terminal(monkeypatch) -> None:
    import io

    from rich.console import Console

    from ragchat import render
    from ragchat.ingest.pipeline import IngestReport

    screen = io.StringIO()
    monkeypatch.setattr(
        render, "console", Console(file=screen, force_terminal=True, width=80, color_system=None)
    )
    report = IngestReport(
        added=["a.md"] * 12,
        unchanged=["b.md"] * 3,
        chunks=2137,
        left_out=[("x.md", ".gitignore"), (".y", "hidden")],
    )
    render.ingest_report(
        report, Path("/home/someone/.local/share/ragchat/a-rather-long-folder/ragchat.db")
    )
    lines = screen.getvalue().splitlines()
    assert len(lines) >= 2 and all(len(line) <= 80 for line in lines)
    words = set(
        "12 added, 0 updated, 3 unchanged, 0 removed, 0 skipped, 2 left out (1 .gitignore, 1 "
        "hidden); 2137 chunks written to "
        "/home/someone/.local/share/ragchat/a-rather-long-folder/ragchat.db Ingest:".split()
    )
    assert all(word in words for line in lines for word in line.split()), lines


def test_ollama_reformulates_the_corrected_question(library_db: Path) -> None:
    from ollama_server import FakeOllama

    with FakeOllama() as server:

        def reply(request: dict):
            if request.get("format"):
                prompt = request["messages"][-1]["content"]
                latest = prompt.split("LATEST USER MESSAGE: ")[-1]
                hint = (
                    prompt.split("(may be wrong): ")[-1].split("\n")[0]
                    if "wrong)" in prompt
                    else ""
                )
                return {  # a good model: the correction resolved, as the hint has it
                    "semantic_query": hint or latest,
                    "keyword_query": "",
                    "is_follow_up": False,
                    "is_meta": False,
                    "topic_shift": False,
                    "reasoning": "standalone",
                }
            return "A codicil is signed like a will [1]."

        server.default = reply
        app = App(settings_for(library_db, ollama="on", ollama_host=server.url, ollama_timeout=5.0))
        conversation = app.conversation("llm-fix")
        conversation.ask("how do I make a will valid?")
        result = conversation.ask("no, I meant a codicil")
        asked = [r["messages"][-1]["content"] for r in server.requests if r.get("format")]
    # the model reads the user's words as typed, and the corrected question as the heuristic's hint
    assert asked[-1].endswith("LATEST USER MESSAGE: no, I meant a codicil")
    assert "(may be wrong): how do I make a codicil valid?" in asked[-1]
    assert result.lineage.reformulation.reformulator != "heuristic"
    assert result.lineage.correction == "no, I meant a codicil"
