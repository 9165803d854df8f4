"""Ingest against a hostile file system, interrupted runs and changed files.

Real files, a real database, the real embedding model; the CLI runs as a real subprocess where the
process itself matters (exit codes, signals, file permissions).

Permission denied as root: root reads mode-000 files through CAP_DAC_OVERRIDE, so the ingest that
must meet an unreadable file runs behind a two-line launcher that drops CAP_DAC_OVERRIDE and
CAP_DAC_READ_SEARCH from its bounding set before exec. It stays uid 0, so it still reads the
root-owned interpreter, venv and model cache through their owner bits, but not a mode-000 file.
"""

from __future__ import annotations

import io
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from helpers import invoke, pdf_bytes
from pypdf import PdfReader, PdfWriter
from sqlite_utils.utils import sqlite3 as sqlite  # the SQLite library ragchat uses

from ragchat.store.db import open_db

RAGCHAT = str(Path(sys.executable).parent / "ragchat")

# Drops the capabilities that let root ignore file modes, then becomes the given command. Without
# CAP_SETPCAP (not root) prctl fails harmlessly: mode 000 already stops a non-root owner.
WITHOUT_READ_OVERRIDE = (
    "import ctypes, os, sys\n"
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH; 24 = PR_CAPBSET_DROP\n"
    "    libc.prctl(24, cap, 0, 0, 0)\n"
    "os.execv(sys.argv[1], sys.argv[1:])\n"
)


# --- helpers -----------------------------------------------------------------------------------


def run_cli(
    *args: object,
    env: dict[str, str] | None = None,
    timeout: float = 120,
    launcher: list[str] | None = None,
) -> subprocess.CompletedProcess[str]:
    command = [*(launcher or []), RAGCHAT, *map(str, args)]
    return subprocess.run(
        command, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})}
    )


def one_page_pdf(text: str) -> bytes:
    """A one-page PDF with a text layer."""
    return pdf_bytes([[(text, 12, 720)]])


def encrypted_pdf(data: bytes, password: str) -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password="owner-" + password)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def library_problems(db_path: Path) -> list[str]:
    """Everything that would betray a half-written document; [] for a sound library."""
    db = open_db(db_path)
    try:
        problems = [
            f"integrity_check: {row[0]}"
            for row in db.execute("PRAGMA integrity_check")
            if row[0] != "ok"
        ]
        db.execute(
            "INSERT INTO chunks_fts(chunks_fts) VALUES ('integrity-check')"
        )  # raises if corrupt
        has_vectors = db["chunk_vectors"].exists()
        vector_ids = (
            {row[0] for row in db.execute("SELECT chunk_id FROM chunk_vectors")}
            if has_vectors
            else set()
        )
        fts_ids = {row[0] for row in db.execute("SELECT rowid FROM chunks_fts")}
        chunk_ids: set[int] = set()
        for doc_id, path, declared in db.execute(
            "SELECT id, path, chunk_count FROM documents"
        ).fetchall():
            ids = {
                row[0]
                for row in db.execute("SELECT id FROM chunks WHERE document_id = ?", [doc_id])
            }
            chunk_ids |= ids
            counts = (len(ids), len(ids & fts_ids), len(ids & vector_ids), declared)
            if len(set(counts)) != 1 or not ids:
                problems.append(f"{path}: chunks/fts/vectors/chunk_count = {counts}")
        if fts_ids - chunk_ids or vector_ids - chunk_ids:
            problems.append(
                f"orphans: fts {sorted(fts_ids - chunk_ids)}, vectors "
                f"{sorted(vector_ids - chunk_ids)}"
            )
        return problems
    finally:
        db.close()


def chunk_ids_by_path(db_path: Path) -> dict[str, list[int]]:
    db = open_db(db_path)
    try:
        rows = db.execute(
            "SELECT d.path, c.id FROM documents d JOIN chunks c ON c.document_id = d.id ORDER BY "
            "c.id"
        )
        found: dict[str, list[int]] = {}
        for path, chunk_id in rows:
            found.setdefault(path, []).append(chunk_id)
        return found
    finally:
        db.close()


def summary_counts(output: str) -> dict[str, int]:
    line = next(line for line in output.splitlines() if line.startswith("Ingest:"))
    return {
        name: int(count)
        for count, name in re.findall(r"(\d+) (added|updated|unchanged|removed|skipped)", line)
    }


# --- a tree of hostile files -------------------------------------------------------------------

GOOD_FILES = {
    "lighthouse.md": "# Lighthouse keeping\n\nThe keeper trims the lamp wick at dusk and logs "
    "the tide.\n",
    "sub/orchard.txt": "Orchard care\n\nPrune the apple trees in late winter, before the sap "
    "rises.\n",
    "dossier été/naïve résumé.md": "# Résumé naïf\n\nLe glacier recule de trente mètres chaque "
    "été.\n",
}
INVALID_UTF8 = b"Cr\xe8me br\xfbl\xe9e needs a caramel crust torched just before serving.\n"
GOOD_PDF_TEXT = "The quarry yields basalt for the harbour wall."


def hostile_tree(root: Path) -> dict[str, str]:
    """Writes the tree; returns the expected skipped entries as {display path: reason}."""
    for name, text in GOOD_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "dessert.txt").write_bytes(INVALID_UTF8)
    (root / "report.pdf").write_bytes(one_page_pdf(GOOD_PDF_TEXT))
    (root / "image.txt").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    (root / "empty.md").write_bytes(b"")
    (root / "zero.pdf").write_bytes(b"")
    (root / "corrupt.pdf").write_bytes(
        b"%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 9 0 R\ntruncated"
    )
    (root / "locked.pdf").write_bytes(
        encrypted_pdf(one_page_pdf("Secret minutes of the board."), "hunter2")
    )
    with (root / "huge.txt").open("w") as handle:  # 20 MB: a line repeated
        handle.write(("All work and no play makes Jack a dull boy. " * 2 + "\n") * 240_000)
    os.symlink("self.md", root / "self.md")  # a symlink to itself
    os.symlink("..", root / "sub" / "up")  # a folder symlink to its parent: a loop
    secret = root / "secret.md"
    secret.write_text("# Payroll\n\nNobody may read this.\n")
    secret.chmod(0)
    (root / "private").mkdir()
    (root / "private" / "diary.md").write_text("# Diary\n\nA folder nobody may list.\n")
    (root / "private").chmod(0)
    return {
        "image.txt": "binary file",
        "empty.md": "empty file",
        "zero.pdf": "empty file",
        "corrupt.pdf": "corrupt PDF",
        "locked.pdf": "encrypted PDF (password required)",
        "huge.txt": "larger than the 10 MB limit (max_file_mb)",
        "self.md": "symlink loop",
        "sub/up": "symlink loop",
        "secret.md": "permission denied",
        "private": "cannot list folder: Permission denied",
    }


def test_a_hostile_tree_ingests_every_good_file_and_names_every_skipped_one(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    skipped = hostile_tree(tree)
    assert (tree / "huge.txt").stat().st_size > 20 * 1_048_576
    db_path = tmp_path / "db" / "lib.db"

    result = run_cli(
        "ingest",
        tree,
        "--db",
        db_path,
        launcher=[sys.executable, "-c", WITHOUT_READ_OVERRIDE],
        env={"COLUMNS": "80"},
    )  # as narrow as a pipe

    assert result.returncode == 0, result.stdout + result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    lines = [" ".join(line.split()) for line in result.stdout.splitlines()]
    for path, reason in skipped.items():
        shown = [line for line in lines if line.startswith(f"skipped {path}: ")]
        assert len(shown) == 1, f"{path}: {shown}\n{result.stdout}"
        assert shown[0].startswith(f"skipped {path}: {reason}"), shown[0]
    assert "warning dessert.txt: not valid UTF-8; read as cp1252" in lines
    good = {*GOOD_FILES, "dessert.txt", "report.pdf"}
    assert summary_counts(result.stdout) == {
        "added": len(good),
        "updated": 0,
        "unchanged": 0,
        "removed": 0,
        "skipped": len(skipped),
    }
    assert set(chunk_ids_by_path(db_path)) == good  # each once: the loop did not ingest sub/ twice
    assert library_problems(db_path) == []
    db = open_db(db_path)
    texts = " ".join(row[0] for row in db.execute("SELECT text FROM chunks"))
    db.close()
    assert "Crème brûlée" in texts and "glacier recule" in texts and "basalt" in texts


def test_raising_max_file_mb_admits_a_file_the_default_refuses(
    tmp_path: Path, runner, monkeypatch
) -> None:
    """The limit is a setting: a 24 KB file is refused at 0.02 MB and ingested at 0.03 MB (a 20 MB
    file stays refused at the default: embedding 20 MB of text is not a test-sized job)."""
    folder = tmp_path / "docs"
    folder.mkdir()
    paragraph = (
        "The ferry timetable changes with the tides and the season; check the harbour board. "
    )
    (folder / "timetable.txt").write_text("Ferry timetable\n\n" + paragraph * 285)
    (folder / "note.md").write_text("# Note\n\nA short note about the ferry.\n")
    size = (folder / "timetable.txt").stat().st_size
    assert 0.02 * 1_048_576 < size < 0.03 * 1_048_576
    db_path = tmp_path / "lib.db"

    monkeypatch.setenv("RAGCHAT_MAX_FILE_MB", "0.02")
    refused = invoke(runner, "ingest", folder, "--db", db_path)
    assert refused.exit_code == 0, refused.output
    assert "skipped timetable.txt: larger than the 0.02 MB limit (max_file_mb)" in " ".join(
        refused.output.split()
    )
    assert set(chunk_ids_by_path(db_path)) == {"note.md"}

    monkeypatch.setenv("RAGCHAT_MAX_FILE_MB", "0.03")
    started = time.monotonic()
    admitted = invoke(runner, "ingest", folder, "--db", db_path)
    assert admitted.exit_code == 0, admitted.output
    assert summary_counts(admitted.output) == {
        "added": 1,
        "updated": 0,
        "unchanged": 1,
        "removed": 0,
        "skipped": 0,
    }
    assert len(chunk_ids_by_path(db_path)["timetable.txt"]) > 10
    assert time.monotonic() - started < 60
    assert library_problems(db_path) == []


# --- interrupted ingest ------------------------------------------------------------------------

TOPICS = [
    "lighthouse",
    "orchard",
    "glacier",
    "quarry",
    "harbour",
    "falcon",
    "willow",
    "copper",
    "meadow",
    "lantern",
]


def write_corpus(folder: Path, count: int) -> None:
    """`count` documents of two short sections each, every one with its own words."""
    folder.mkdir(parents=True)
    for n in range(count):
        topic, other = TOPICS[n % len(TOPICS)], TOPICS[(n * 3 + 1) % len(TOPICS)]
        sections = [
            f"## {topic.title()} notes {n}\n\nRecord {n} describes the {topic} near the {other}; "
            f"the survey of {topic} number {n} lists its age, its owner and its repairs. " * 3
            for _ in range(2)
        ]
        (folder / f"doc{n:02d}.md").write_text(f"# Survey {n}: {topic}\n\n" + "\n\n".join(sections))


def documents_written(db_path: Path) -> int:
    """Documents committed so far, read with the SQLite library ragchat uses (two SQLite copies in
    one process break each other's POSIX locks on a shared file)."""
    try:
        conn = sqlite.connect(db_path, timeout=1)
        try:
            return conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        finally:
            conn.close()
    except sqlite.Error:  # not created yet
        return 0


def start_and_interrupt(
    folder: Path, db_path: Path, sig: signal.Signals
) -> subprocess.CompletedProcess[str]:
    """Start a real ingest; send `sig` once at least one document is in the database."""
    env = {
        **os.environ,
        "RAGCHAT_EMBED_BATCH": "2",
    }  # small batches: documents land one after another
    # a shell that starts the tests in the background hands them SIGINT ignored, and Python keeps
    # an ignored SIGINT ignored: the child gets the default back, as a terminal's ingest has it
    process = subprocess.Popen(
        [RAGCHAT, "ingest", str(folder), "--db", str(db_path)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 120
    while documents_written(db_path) == 0:
        assert process.poll() is None, f"ingest ended before the signal: {process.communicate()}"
        assert time.monotonic() < deadline, "no document written in 120 s"
        time.sleep(0.05)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=60)
    return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGKILL], ids=["sigint", "sigkill"])
def test_an_interrupted_ingest_leaves_whole_documents_and_a_rerun_completes(
    tmp_path: Path, sig
) -> None:
    folder, db_path, total = tmp_path / "corpus", tmp_path / "db" / "lib.db", 30
    write_corpus(folder, total)

    stopped = start_and_interrupt(folder, db_path, sig)

    if sig == signal.SIGINT:
        assert stopped.returncode == 130, stopped
        assert stopped.stderr.strip() == "Error: interrupted", stopped.stderr
        assert "Traceback" not in stopped.stdout
    else:
        assert stopped.returncode == -signal.SIGKILL
    assert library_problems(db_path) == []
    before = chunk_ids_by_path(db_path)
    assert 0 < len(before) < total, "interrupted mid-run"

    rerun = run_cli("ingest", folder, "--db", db_path)
    assert rerun.returncode == 0, rerun.stdout + rerun.stderr
    assert summary_counts(rerun.stdout) == {
        "added": total - len(before),
        "updated": 0,
        "unchanged": len(before),
        "removed": 0,
        "skipped": 0,
    }
    after = chunk_ids_by_path(db_path)
    assert set(after) == {f"doc{n:02d}.md" for n in range(total)}
    assert {path: after[path] for path in before} == before  # not re-embedded: same chunk rows
    assert library_problems(db_path) == []


# --- a changed document ------------------------------------------------------------------------

OLD_VERSION = """# Ferry rules

## Boarding

Passengers board the ferry through the zanzibarite \
gate on the east quay, ten minutes before sailing.

## Luggage

Each passenger may bring two bags; bicycles travel on the lower deck for a small fee.

## Pets

Dogs travel on a lead on the open deck; cats travel in a closed basket.
"""

NEW_VERSION = """# Ferry rules

## Boarding

Passengers board the ferry at the west quay turnstile five minutes before sailing.
"""


def test_a_changed_document_keeps_no_stale_chunks_fts_rows_or_vectors(
    tmp_path: Path, runner, monkeypatch
) -> None:
    monkeypatch.setenv("RAGCHAT_CHUNK_SIZE", "150")
    monkeypatch.setenv("RAGCHAT_CHUNK_MAX", "200")
    monkeypatch.setenv("RAGCHAT_CHUNK_OVERLAP", "0")
    folder, db_path = tmp_path / "docs", tmp_path / "lib.db"
    folder.mkdir()
    (folder / "ferry.md").write_text(OLD_VERSION)
    (folder / "other.md").write_text("# Tides\n\nSpring tides follow the full and the new moon.\n")
    assert invoke(runner, "ingest", folder, "--db", db_path).exit_code == 0
    old_ids = chunk_ids_by_path(db_path)["ferry.md"]
    assert len(old_ids) >= 3

    (folder / "ferry.md").write_text(NEW_VERSION)
    result = invoke(runner, "ingest", folder, "--db", db_path)

    assert result.exit_code == 0, result.output
    assert summary_counts(result.output)["updated"] == 1
    db = open_db(db_path)
    try:
        marks = ",".join("?" * len(old_ids))
        assert (
            db.execute(f"SELECT count(*) FROM chunks WHERE id IN ({marks})", old_ids).fetchone()[0]
            == 0
        )
        assert (
            db.execute(
                f"SELECT count(*) FROM chunks_fts WHERE rowid IN ({marks})", old_ids
            ).fetchone()[0]
            == 0
        )
        assert (
            db.execute(
                f"SELECT count(*) FROM chunk_vectors WHERE chunk_id IN ({marks})", old_ids
            ).fetchone()[0]
            == 0
        )
        for gone in ("zanzibarite", "bicycles", "basket"):
            assert (
                db.execute(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [gone]
                ).fetchone()[0]
                == 0
            )
        assert (
            db.execute(
                "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH 'turnstile'"
            ).fetchone()[0]
            == 1
        )
        assert (
            db.execute("SELECT chunk_count FROM documents WHERE path = 'ferry.md'").fetchone()[0]
            == 1
        )
    finally:
        db.close()
    assert library_problems(db_path) == []
    search = invoke(
        runner, "search", "zanzibarite gate", "--mode", "fts", "--json", "--db", db_path
    )
    assert search.exit_code == 0 and search.output.strip() == ""
