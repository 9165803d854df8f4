"""Parsing is bounded and interruptible (issue 22): small files that expand into huge work are
skipped with their reason, a slow file is stopped at the time budget, and Ctrl-C stops a parse at
once, keeping the documents written before it. The hostile files are generated here
(tests/bombs.py); benchmarks/bombs.py measures the time and memory of refusing them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from bombs import flate_bomb_pdf, nested_html, paragraphs_docx, text_node_docx
from helpers import settings_for

from ragchat.errors import UnreadableFile
from ragchat.ingest.limits import Limits
from ragchat.ingest.pipeline import ingest
from ragchat.ingest.worker import Parser
from ragchat.store.db import open_db

RAGCHAT = str(Path(sys.executable).parent / "ragchat")
NOTE = "# Notes\n\nA will needs two witnesses who sign in the presence of the testator.\n"


def nested_markdown(megabytes: float) -> str:
    """Quotes and lists nested on every line: markdown-it needs ~4.5 s a megabyte."""
    line = "> - " * 30 + "x\n"
    return line * int(megabytes * (1 << 20) / len(line))


def run_ingest(folder: Path, tmp_path: Path, embedder, **settings):
    db_path = tmp_path / "lib.db"
    db = open_db(db_path)
    try:
        return ingest(db, settings_for(db_path, **settings), [folder], lambda: embedder)
    finally:
        db.close()


def test_bombs_are_skipped_with_their_reason_and_the_rest_is_ingested(
    tmp_path: Path, embedder
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    paragraphs_docx(folder / "paragraphs.docx", 200)
    text_node_docx(folder / "text_node.docx", 1024)
    text_node_docx(folder / "lying.docx", 1024, declared=4096)  # the header says 4 KB
    flate_bomb_pdf(folder / "flate.pdf", 150)
    nested_html(folder / "nested.html", 40_000)
    (folder / "notes.md").write_text(NOTE)
    assert (
        max(path.stat().st_size for path in folder.iterdir()) < 1_200_000
    )  # small files, all of them

    report = run_ingest(folder, tmp_path, embedder)

    assert sorted(report.added) == [
        "nested.html",
        "notes.md",
    ]  # deep nesting parses, in linear time
    assert dict(report.skipped) == {
        "paragraphs.docx": ".docx expands to more than 32 MB (a compression bomb?)",
        "text_node.docx": ".docx expands to more than 32 MB (a compression bomb?)",
        "flate.pdf": "a PDF stream expands to more than 32 MB (a compression bomb?)",
        "lying.docx": "corrupt .docx: Bad CRC-32 for file 'word/document.xml'",
    }


def test_text_past_the_character_limit_is_refused(tmp_path: Path, embedder) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    paragraphs_docx(folder / "long.docx", 1)  # ~1 MB of XML, 140,000 characters of text
    (folder / "notes.md").write_text(NOTE)

    report = run_ingest(folder, tmp_path, embedder, max_file_mb=0.1)

    assert report.added == ["notes.md"]
    assert report.skipped == [
        ("long.docx", "more than 104,857 characters of text (the limit follows max_file_mb)")
    ]


def test_a_file_past_the_time_budget_is_stopped_and_the_next_parses(tmp_path: Path) -> None:
    parser = Parser(Limits(chars=10 << 20, expanded=32 << 20, seconds=0.5))
    try:
        started = time.monotonic()
        with pytest.raises(UnreadableFile, match=r"parsing took longer than 0.5 s \(stopped\)"):
            parser.parse(Path("slow.md"), nested_markdown(1).encode())
        assert time.monotonic() - started < 5
        parsed = parser.parse(Path("page.html"), b"<h1>Fine</h1><p>A page that parses at once.</p>")
        assert parsed.title == "Fine"
    finally:
        parser.stop()


def documents_in(db_path: Path) -> list[str]:
    if not db_path.exists():
        return []
    db = open_db(db_path)
    try:
        return sorted(row[0] for row in db.execute("SELECT path FROM documents"))
    except Exception:
        return []
    finally:
        db.close()


def test_ctrl_c_while_a_file_parses_stops_at_once_and_keeps_earlier_documents(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "a.md").write_text(NOTE)
    (folder / "b.md").write_text(NOTE.replace("will", "trust"))
    (folder / "c_slow.md").write_text(nested_markdown(4))  # ~18 s to parse
    db_path = tmp_path / "lib.db"
    process = subprocess.Popen(
        [RAGCHAT, "ingest", str(folder), "--db", str(db_path)],
        env={**os.environ, "RAGCHAT_OLLAMA": "off"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 60
    while documents_in(db_path) != ["a.md", "b.md"]:  # written while c_slow.md parses
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the documents before the slow file were not written"
        time.sleep(0.1)
    time.sleep(0.5)
    workers = children(process.pid)
    assert workers, "c_slow.md is parsed in a worker process"
    process.send_signal(signal.SIGINT)
    interrupted = time.monotonic()
    stdout, stderr = process.communicate(timeout=30)

    assert time.monotonic() - interrupted < 5, "Ctrl-C waited for the parse (~18 s)"
    assert process.returncode == 130, stdout + stderr
    assert stderr.strip() == "Error: interrupted"
    assert documents_in(db_path) == ["a.md", "b.md"]
    assert not [pid for pid in workers if Path(f"/proc/{pid}").exists()], (
        "the worker outlived the ingest"
    )


def children(parent: int) -> list[int]:
    """The processes whose parent is `parent` (read from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == parent:
            found.append(int(entry.name))
    return found
