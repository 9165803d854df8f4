"""A damaged vector index: `ragchat doctor` finds it and names the repair, a search says the same
instead of sqlite-vec's raw words; a truncated library gets a way out that is not `doctor`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import sqlite_utils
import sqlite_vec
from helpers import invoke
from test_hostile_db import fingerprint


def damage(path: Path, statement: str) -> None:
    db = sqlite_utils.Database(path)
    db.conn.isolation_level = None
    db.conn.enable_load_extension(True)
    sqlite_vec.load(db.conn)
    db.execute(statement)
    db.close()


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE chunk_vectors_vector_chunks00 SET vectors = zeroblob(100)",  # a cut block
        "UPDATE chunk_vectors_rowids SET chunk_offset = chunk_offset + 5000",  # lost positions
        "DROP TABLE chunk_vectors_vector_chunks00",  # the vectors' table itself
        "DELETE FROM chunk_vectors_chunks",  # no block is searched any more
    ],
    ids=["cut-block", "offsets", "dropped", "no-blocks"],
)
def test_doctor_finds_a_damaged_vector_index_and_names_the_repair(
    library_db: Path, runner, statement: str
) -> None:
    damage(library_db, statement)
    doctor = invoke(runner, "doctor", "--db", library_db)
    assert doctor.exit_code == 1, doctor.output
    assert "the vector index is damaged" in doctor.output
    assert f"ingest --reembed PATH... --db {library_db}" in " ".join(doctor.output.split())
    searched = invoke(runner, "search", "who may witness a will", "--db", library_db)
    if searched.exit_code:  # a search that cannot read the vectors says what to do
        line = " ".join(searched.output.split())
        assert "vector index" in line and "ingest --reembed" in line, line
        assert "unexpected" not in line


def test_a_truncated_library_is_told_a_way_out_other_than_doctor(
    library_db: Path, runner, tmp_path: Path
) -> None:
    cut = tmp_path / "cut.db"
    shutil.copy(library_db, cut)
    with cut.open("r+b") as handle:
        handle.truncate(cut.stat().st_size // 2)
    for command in (["doctor"], ["search", "witness"], ["sessions"]):
        result = invoke(runner, *command, "--db", cut)
        line = " ".join(result.output.split())
        assert result.exit_code == 1 and "damaged" in line, line
        assert "ragchat doctor" not in line, "the doctor cannot read it either"
        assert "--db NEW" in line and ".recover" in line


def test_a_damaged_library_is_refused_before_anything_is_written_into_it(
    library_db: Path, runner
) -> None:
    """An older ragchat's library (a migration pending) whose full-text index was dropped: every
    command refuses it before migrating it or switching its journal, so the file stays as it was."""
    db = sqlite_utils.Database(library_db)
    db.conn.isolation_level = None
    db.execute("PRAGMA journal_mode = DELETE")
    db.execute("DROP TABLE chunks_fts")
    db.execute("DROP TABLE documents_fts")
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm008_i21_document_titles'")
    db.close()
    before = fingerprint(library_db)
    for command in (["search", "witness"], ["ask", "who may witness a will?"], ["sessions"]):
        result = invoke(runner, *command, "--db", library_db)
        assert result.exit_code == 1 and "chunks_fts is missing" in result.output, result.output
    assert fingerprint(library_db) == before, "nothing written into the damaged library"
