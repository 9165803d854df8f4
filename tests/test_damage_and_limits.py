"""Issue 22, second half: numbers checked where they enter, exports private, no telemetry, and a
clear line (or `ragchat doctor`) for databases that are read-only, on a read-only filesystem,
damaged or on a full disk. Real mechanisms: chattr/chmod, a read-only tmpfs in a user namespace,
SQLite's own page limit, real subprocesses with a fresh HOME."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlite_utils
from helpers import MODEL_CACHE, SAMPLE_DOCS, ask_json, invoke
from test_hostile_db import WILLS, fingerprint
from test_hostile_ingest import RAGCHAT, library_problems

from ragchat import app as app_module
from ragchat.cli import app as cli_app
from ragchat.config import MAX_NEIGHBOURS
from ragchat.store import library, vectors
from ragchat.store.db import open_db


def one_error_line(result) -> str:
    lines = result.output.strip().splitlines()
    assert result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("Error: "), (
        result.output
    )
    assert "unexpected" not in lines[0] and "Traceback" not in result.output
    return lines[0]


def raw(path: Path) -> sqlite_utils.Database:
    """The file opened without any of ragchat's checks (to damage it the way a user might)."""
    db = sqlite_utils.Database(path)
    db.conn.isolation_level = None
    return db


# --- numbers -----------------------------------------------------------------------------------


@pytest.mark.parametrize("k", ["99999999999999999999999", "4097", "0"])
def test_search_k_beyond_sqlite_vecs_limit_is_a_usage_error(
    library_db: Path, runner, k: str
) -> None:
    result = runner.invoke(cli_app, ["search", "witness", "-k", k, "--db", str(library_db)])
    assert result.exit_code == 2 and f"must be from 1 to {MAX_NEIGHBOURS}" in result.output, (
        result.output
    )
    assert "OverflowError" not in result.output and "OperationalError" not in result.output


def test_the_largest_k_allowed_searches(library_db: Path, runner) -> None:
    result = invoke(runner, "search", "witness", "-k", MAX_NEIGHBOURS, "--json", "--db", library_db)
    assert result.exit_code == 0, result.output
    assert len(result.stdout.splitlines()) == library.chunk_count(open_db(library_db))


def test_vector_search_keeps_k_within_sqlite_vec_by_design(library_db: Path, embedder) -> None:
    db = open_db(library_db)
    vector = embedder.embed_query("witness")
    hits = vectors.vector_search(
        db, vector, 10 * MAX_NEIGHBOURS
    )  # sqlite-vec alone: "k value ... too large"
    assert len(hits) == library.chunk_count(db)


@pytest.mark.parametrize(
    "where, setting, value, expected",
    [
        (
            "env",
            "RAGCHAT_CANDIDATES",
            "1e9",
            "invalid value for candidates: '1e9' (expected an integer) in env RAGCHAT_CANDIDATES",
        ),
        (
            "env",
            "RAGCHAT_TOP_K",
            "5000",
            "invalid value for top_k: '5000' (expected an integer from 1 to 4,096)",
        ),
        (
            "env",
            "RAGCHAT_FTS_WEIGHT",
            "nan",
            "invalid value for fts_weight: 'nan' (expected a finite number)",
        ),
        ("toml", "top_k", "true", "invalid value for top_k: True (expected an integer) in "),
        ("toml", "top_k", "3.7", "invalid value for top_k: 3.7 (expected an integer) in "),
        (
            "toml",
            "chunk_size",
            "1e400",
            "invalid value for chunk_size: inf (expected an integer) in ",
        ),
        (
            "toml",
            "anchor_boost",
            "inf",
            "invalid value for anchor_boost: inf (expected a finite number) in ",
        ),
    ],
)
def test_a_bad_number_is_one_line_naming_the_setting_and_where(
    library_db: Path,
    runner,
    monkeypatch,
    tmp_path: Path,
    where: str,
    setting: str,
    value: str,
    expected: str,
) -> None:
    if where == "env":
        monkeypatch.setenv(setting, value)
    else:
        (tmp_path / "ragchat.toml").write_text(f"{setting} = {value}\n")
    for command in (["search", "witness", "--json"], ["ask", "witness"]):
        line = one_error_line(invoke(runner, *command, "--db", library_db))
        assert expected in line
        if where == "toml":
            assert str(tmp_path / "ragchat.toml") in line


# --- exports -----------------------------------------------------------------------------------


@pytest.fixture
def session_db(library_db: Path, runner) -> Path:
    ask_json(runner, library_db, "s", "Who may witness a will?")
    return library_db


@pytest.fixture
def open_umask() -> Iterator[None]:
    old = os.umask(0)
    yield
    os.umask(old)


def test_an_export_is_private_even_under_umask_000(
    session_db: Path, runner, tmp_path: Path, open_umask
) -> None:
    target = tmp_path / "t.md"
    result = invoke(runner, "export", "s", "-o", target, "--db", session_db)
    assert result.exit_code == 0, result.output
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and "witness" in target.read_text()
    target.chmod(0o644)
    assert invoke(runner, "export", "s", "-o", target, "--force", "--db", session_db).exit_code == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600  # a rewritten transcript is private again


def test_an_export_never_writes_through_a_symlink(session_db: Path, runner, tmp_path: Path) -> None:
    victim, link, dangling = tmp_path / "victim.txt", tmp_path / "t.md", tmp_path / "d.md"
    victim.write_text("precious\n")
    link.symlink_to(victim)
    dangling.symlink_to(tmp_path / "would-be-created.txt")
    for name in (link, dangling):
        line = one_error_line(invoke(runner, "export", "s", "-o", name, "--db", session_db))
        assert f"{name} exists; add --force" in line
    assert not (tmp_path / "would-be-created.txt").exists()
    assert invoke(runner, "export", "s", "-o", link, "--force", "--db", session_db).exit_code == 0
    assert victim.read_text() == "precious\n"  # the link was replaced, its target left alone
    assert (
        not link.is_symlink()
        and "witness" in link.read_text()
        and stat.S_IMODE(link.stat().st_mode) == 0o600
    )
    assert sorted(p.name for p in tmp_path.glob(".ragchat-export-*")) == []  # no staging file left


# --- telemetry ---------------------------------------------------------------------------------


def files_under(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file()}


def test_embedding_commands_write_nothing_outside_the_library_and_the_model_cache(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    (home / "docs").mkdir(parents=True)
    (home / "docs" / "wills.md").write_text(WILLS)
    # ORT_DISABLE_TELEMETRY: this process set it; CI and its kin: onnxruntime writes nothing when it
    # sees them, which would make the control below (and so the test) say nothing
    ci = {
        "ORT_DISABLE_TELEMETRY",
        "CI",
        "CONTINUOUS_INTEGRATION",
        "GITHUB_ACTIONS",
        "TF_BUILD",
        "BUILD_NUMBER",
    }
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("RAGCHAT_", "XDG_")) and key not in ci
    }
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(home / ".cache"),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local/share"),
        XDG_STATE_HOME=str(home / ".local/state"),
        RAGCHAT_MODEL_CACHE=MODEL_CACHE,
        RAGCHAT_OLLAMA="off",
    )
    assert not Path(MODEL_CACHE).is_relative_to(home)
    # the control: onnxruntime on its own writes its telemetry store into this HOME
    subprocess.run([sys.executable, "-c", "import onnxruntime"], env=env, check=True, timeout=60)
    assert any("onnxruntime" in name for name in files_under(home)), files_under(home)
    shutil.rmtree(home / ".cache")
    before = files_under(home)
    for args in (
        ["ingest", "docs", "--db", "lib.db"],
        ["search", "witness", "--db", "lib.db"],
        ["ask", "who may witness a will", "--db", "lib.db"],
    ):
        result = subprocess.run(
            [RAGCHAT, *args], env=env, cwd=home, capture_output=True, text=True, timeout=120
        )
        assert result.returncode == 0, result.stderr
    assert files_under(home) - before == {
        "lib.db"
    }  # WAL files are gone once the last connection closes


# --- read-only databases and filesystems --------------------------------------------------------


@pytest.fixture
def read_only_file(library_db: Path) -> Iterator[Path]:
    """The library file made unwritable for real: chmod for a normal user; root ignores file modes,
    so for root the immutable attribute (which root's writes obey too)."""
    if os.geteuid() != 0:
        library_db.chmod(0o444)
        yield library_db
        library_db.chmod(0o644)
        return
    subprocess.run(["chattr", "+i", str(library_db)], check=True)
    try:
        yield library_db
    finally:
        subprocess.run(["chattr", "-i", str(library_db)], check=True)


def test_a_read_only_database_is_searched_and_a_write_says_why_not(
    read_only_file: Path, runner
) -> None:
    with pytest.raises(PermissionError):  # the mechanism is real
        read_only_file.open("r+b")
    before = fingerprint(read_only_file)[0]
    result = invoke(runner, "search", "witness", "--json", "--db", read_only_file)
    assert result.exit_code == 0 and "south_africa_witnesses_in_court.html" in result.stdout, (
        result.output
    )
    for command in (["ask", "Who may witness a will?"], ["ingest", SAMPLE_DOCS], ["chat"]):
        line = one_error_line(invoke(runner, *command, "--db", read_only_file))
        assert f"database {read_only_file} cannot be written" in line and "read-only" in line
    assert fingerprint(read_only_file)[0] == before


def unshare_script(script: str) -> subprocess.CompletedProcess[str]:
    """`script` run as root of a new user and mount namespace (no real privileges needed), where a
    tmpfs can be mounted read-only or small."""
    env = {**os.environ, "RAGCHAT_OLLAMA": "off"}
    return subprocess.run(
        ["unshare", "-rm", "sh", "-ec", script],
        capture_output=True,
        text=True,
        env=env,
        timeout=180,
    )


def test_a_database_on_a_read_only_filesystem_is_searched_and_none_is_created_there(
    library_db: Path, tmp_path: Path
) -> None:
    mount = tmp_path / "ro"
    mount.mkdir()
    result = unshare_script(f"""
        mount -t tmpfs -o size=20m tmpfs {mount}
        cp {library_db} {mount}/lib.db
        mount -o remount,ro {mount}
        if touch {mount}/probe 2>/dev/null; then echo "still writable"; exit 3; fi
        {RAGCHAT} search witness --json --db {mount}/lib.db > {tmp_path}/search.out
        {RAGCHAT} ask "Who may witness a will?" --db \
{mount}/lib.db 2> {tmp_path}/ask.err || echo "ask $?"
        {RAGCHAT} ingest {tmp_path} --db {mount}/new.db 2> {tmp_path}/ingest.err || echo "ingest $?"
    """)
    assert result.returncode == 0, result.stderr + result.stdout
    assert result.stdout.split() == ["ask", "1", "ingest", "1"]
    assert "south_africa_witnesses_in_court.html" in (tmp_path / "search.out").read_text()
    ask = (tmp_path / "ask.err").read_text().strip()
    assert ask.startswith("Error: ") and "cannot be written" in ask and "\n" not in ask
    ingest = (tmp_path / "ingest.err").read_text().strip()
    assert (
        ingest
        == f"Error: cannot create database {mount}/new.db: its folder {mount} is on a read-only "
        "filesystem (choose another --db)"
    )


# --- a full disk -------------------------------------------------------------------------------


def test_a_full_disk_says_which_documents_got_in(tmp_path: Path) -> None:
    """A real full filesystem: a 2 MB tmpfs; the sample documents need about 3 MB."""
    mount, out = tmp_path / "small", tmp_path / "out"
    mount.mkdir()
    out.mkdir()
    result = unshare_script(f"""
        mount -t tmpfs -o size=2000k tmpfs {mount}
        {RAGCHAT} ingest {SAMPLE_DOCS} --db {mount}/lib.db 2> {out}/ingest.err || echo "ingest $?"
        cp {mount}/lib.db* {out}/
    """)
    assert result.returncode == 0 and result.stdout.split() == ["ingest", "1"], (
        result.stderr + result.stdout
    )
    line = (out / "ingest.err").read_text().strip()
    assert line.startswith(
        f"Error: the disk is full: nothing more could be written to database {mount}/lib.db; "
    )
    assert "\n" not in line and "unexpected" not in line
    written = sorted(row[0] for row in raw(out / "lib.db").execute("SELECT path FROM documents"))
    total = len(list(SAMPLE_DOCS.iterdir()))
    assert len(written) < total
    if written:
        assert (
            f"{len(written)} document(s) of this run got in whole ({', '.join(written[:5])}" in line
        )
    else:
        assert line.endswith(
            "no document of this run got in (those already in the library are kept)"
        )
    assert library_problems(out / "lib.db") == []  # each document in whole or not at all


def test_sqlite_page_limit_during_ingest_keeps_whole_documents(
    tmp_path: Path, runner, monkeypatch
) -> None:
    """SQLite's own limit (max_page_count) fails like a full disk, sometimes inside sqlite-vec."""
    docs = tmp_path / "docs"
    docs.mkdir()
    for number in range(6):
        (docs / f"note{number:02}.md").write_text(
            f"# Note {number}\n\n" + f"Paragraph {number} about wills. " * 100
        )
    db_path = tmp_path / "lib.db"
    open_db(db_path).close()
    pages = raw(db_path).execute("PRAGMA page_count").fetchone()[0]
    real_open = app_module.open_db

    def small_disk(path, **kwargs):
        db = real_open(path, **kwargs)
        # sqlite-vec's first block of vectors takes ~400 pages (4 KB), each note a few more: some
        # notes fit
        db.execute(f"PRAGMA max_page_count = {pages + 402}")
        return db

    monkeypatch.setattr(app_module, "open_db", small_disk)
    line = one_error_line(invoke(runner, "ingest", docs, "--db", db_path))
    assert "the disk is full" in line or "the disk is probably full" in line
    written = sorted(row[0] for row in raw(db_path).execute("SELECT path FROM documents"))
    assert 0 < len(written) < 6, line
    assert f"{len(written)} document(s) of this run got in whole ({', '.join(written[:5])}" in line
    assert library_problems(db_path) == []
    monkeypatch.setattr(app_module, "open_db", real_open)
    again = invoke(runner, "ingest", docs, "--db", db_path)
    assert again.exit_code == 0 and f"{6 - len(written)} added" in again.output, again.output


# --- damaged schemas and `ragchat doctor` --------------------------------------------------------


def test_a_schema_version_that_is_not_a_number(library_db: Path, runner) -> None:
    raw(library_db).execute("UPDATE settings SET value = 'abc' WHERE key = 'schema_version'")
    for command in (["search", "witness"], ["ask", "witness"], ["sessions"]):
        line = one_error_line(invoke(runner, *command, "--db", library_db))
        assert "is damaged: its schema_version is 'abc', not a number" in line
        assert f"`ragchat doctor --repair --db {library_db}`" in line
    doctor = invoke(runner, "doctor", "--db", library_db)
    assert (
        doctor.exit_code == 1 and "problem: schema_version is 'abc', not a number" in doctor.output
    )
    repaired = invoke(runner, "doctor", "--repair", "--db", library_db)
    assert repaired.exit_code == 0 and "repaired: schema_version set to" in repaired.output, (
        repaired.output
    )
    assert invoke(runner, "search", "witness", "--db", library_db).exit_code == 0


def message_count(path: Path) -> int:
    return raw(path).execute("SELECT count(*) FROM messages").fetchone()[0]


def test_a_dropped_full_text_index_is_refused_before_a_question_is_saved(
    library_db: Path, runner
) -> None:
    before = invoke(
        runner, "search", "witness will", "--mode", "fts", "--json", "--db", library_db
    ).stdout
    raw(library_db).execute("DROP TABLE chunks_fts")
    messages = message_count(library_db)
    for command in (["ask", "Who may witness a will?"], ["search", "witness"]):
        line = one_error_line(invoke(runner, *command, "--db", library_db))
        assert (
            "is damaged: table chunks_fts is missing" in line
            and "rebuilds it from the chunks" in line
        )
    assert message_count(library_db) == messages  # no unanswered question left behind
    doctor = invoke(runner, "doctor", "--db", library_db)
    assert (
        doctor.exit_code == 1
        and "the full-text index (table chunks_fts) is missing" in doctor.output
    )
    repaired = invoke(runner, "doctor", "--repair", "--db", library_db)
    assert (
        repaired.exit_code == 0 and "full-text index rebuilt from the chunks" in repaired.output
    ), repaired.output
    after = invoke(
        runner, "search", "witness will", "--mode", "fts", "--json", "--db", library_db
    ).stdout
    assert after == before  # the same index as ingest built
    assert library_problems(library_db) == []


def test_doctor_finds_counts_that_disagree_and_a_damaged_file(
    library_db: Path, runner, tmp_path: Path
) -> None:
    assert invoke(runner, "doctor", "--db", library_db).output.endswith("no problems found\n")
    db = raw(library_db)
    chunks = db.execute("SELECT count(*) FROM chunks").fetchone()[0]
    db.execute("DELETE FROM chunks_fts WHERE rowid IN (SELECT rowid FROM chunks_fts LIMIT 3)")
    db.conn.enable_load_extension(True)
    import sqlite_vec

    sqlite_vec.load(db.conn)
    db.execute(
        "DELETE FROM chunk_vectors WHERE chunk_id IN (SELECT chunk_id FROM chunk_vectors LIMIT 2)"
    )
    db.close()
    doctor = invoke(runner, "doctor", "--db", library_db)
    assert doctor.exit_code == 1
    assert f"{chunks} chunks but {chunks - 3} full-text rows" in doctor.output
    assert (
        f"{chunks} chunks but {chunks - 2} vectors" in doctor.output
        and "ingest --reembed" in doctor.output
    )
    repaired = invoke(runner, "doctor", "--repair", "--db", library_db)
    assert repaired.exit_code == 1  # the vectors need the user: re-embedding
    assert "full-text rows" not in repaired.output and "vectors" in repaired.output

    damaged = tmp_path / "damaged.db"
    shutil.copy(library_db, damaged)
    with damaged.open("r+b") as handle:  # scribble over the middle of the file (b-tree pages)
        handle.seek(damaged.stat().st_size // 2)
        handle.write(b"\xa5" * 8192)
    doctor = invoke(runner, "doctor", "--db", damaged)
    assert doctor.exit_code == 1 and ("damaged" in doctor.output), doctor.output
    assert "Traceback" not in doctor.output and "unexpected" not in doctor.output
