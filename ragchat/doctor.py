"""`ragchat doctor`: what is wrong with a library and how to recover; `--repair` fixes what can be
rebuilt from what is left (the full-text index from the chunks, the schema version)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sqlite_utils import Database

from .errors import BackendUnavailable
from .llm import OllamaBackend, _same_model
from .store.db import REQUIRED_TABLES
from .store.repair import count, integrity_check, rebuild_fts, vector_problem
from .store.schema import MIGRATIONS, SCHEMA_VERSION
from .store.transaction import get_setting, set_setting, write
from .store.vectors import VECTOR_TABLE


@dataclass(frozen=True)
class Finding:
    problem: str
    fix: str
    repair: str | None = None  # the name of the repair `--repair` runs; None: the user must act


def diagnose(db: Database, path: Path) -> list[Finding]:
    """Every problem found, most fundamental first; an empty list means the library is sound."""
    damaged = _integrity(db, path)
    if damaged:
        return damaged
    return [*_schema(db), *_tables(db, path), *_counts(db, path)]


def repair(db: Database, findings: list[Finding]) -> list[str]:
    """Run the repairs the findings name; returns what was done."""
    done = []
    for name in dict.fromkeys(f.repair for f in findings if f.repair):
        with write(db):
            if name == "schema_version":
                set_setting(db, "schema_version", str(SCHEMA_VERSION))
                done.append(f"schema_version set to {SCHEMA_VERSION}")
            elif name == "fts":
                done.append(f"full-text index rebuilt from the chunks ({rebuild_fts(db)} rows)")
    return done


def _integrity(db: Database, path: Path) -> list[Finding]:
    rows = integrity_check(db)
    if rows == ["ok"]:
        return []
    found = " ".join("; ".join(rows).split())  # one line, however SQLite laid its report out
    return [
        Finding(
            f"the file is damaged (integrity_check: {found[:200]})",
            f"copy out what SQLite can still read (`sqlite3 {path} .recover | sqlite3 "
            "recovered.db`) or ingest your folders again into a new database (`ragchat ingest "
            "PATH --db NEW`)",
        )
    ]


def _schema(db: Database) -> list[Finding]:
    if not db["settings"].exists():
        return []
    version = get_setting(db, "schema_version")
    pending = MIGRATIONS.pending(db) if db["_sqlite_migrations"].exists() else []
    if version is not None and not version.strip().isdigit():
        return [
            Finding(
                f"schema_version is {version[:40]!r}, not a number",
                "--repair sets it again",
                "schema_version" if not pending else None,
            )
        ]
    if pending:
        return [
            Finding(
                f"{len(pending)} schema upgrade(s) not applied yet",
                "any other command applies them",
            )
        ]
    if version is not None and int(version) < SCHEMA_VERSION:
        return [
            Finding(
                f"schema_version {version} lags the schema ({SCHEMA_VERSION})",
                "--repair sets it",
                "schema_version",
            )
        ]
    return []


def _tables(db: Database, path: Path) -> list[Finding]:
    tables = set(db.table_names())
    findings = []
    for name in REQUIRED_TABLES:
        if name in tables:
            continue
        if name == "chunks_fts" and {"chunks", "documents"} <= tables:
            findings.append(
                Finding(
                    "the full-text index (table chunks_fts) is missing",
                    "--repair rebuilds it from the chunks",
                    "fts",
                )
            )
        else:
            findings.append(
                Finding(
                    f"table {name} is missing",
                    f"ingest your folders again into a new database "
                    f"(`ragchat ingest PATH --db NEW`); {path} cannot be repaired in place",
                )
            )
    return findings


def _counts(db: Database, path: Path) -> list[Finding]:
    tables = set(db.table_names())
    if not {"chunks", "chunks_fts"} <= tables:
        return []
    chunks = count(db, "chunks")
    findings = []
    fts = count(db, "chunks_fts")
    if fts != chunks:
        findings.append(
            Finding(
                f"{chunks} chunks but {fts} full-text rows",
                "--repair rebuilds the full-text index from the chunks",
                "fts",
            )
        )
    problem = vector_problem(db, VECTOR_TABLE) if VECTOR_TABLE in tables else None
    if problem is not None:
        findings.append(
            Finding(
                f"the vector index is damaged ({' '.join(problem.split())[:160]})",
                f"`ragchat ingest --reembed PATH... --db {path}` rebuilds it from your folders",
            )
        )
        return findings
    vectors = count(db, VECTOR_TABLE) if VECTOR_TABLE in tables else 0
    if vectors != chunks and (chunks or vectors):
        findings.append(
            Finding(
                f"{chunks} chunks but {vectors} vectors",
                f"`ragchat ingest --reembed PATH... --db {path}` embeds every chunk again",
            )
        )
    return findings


def ollama(backend: OllamaBackend, num_ctx: int) -> tuple[list[Finding], str]:
    """The Ollama server, the model (pulled or not) and its context: the problems found, each
    with the command that fixes it, and a line saying what works."""
    host = backend.host
    try:
        names = backend.models()
    except BackendUnavailable as exc:
        if exc.reason.startswith("connection refused"):
            return [
                Finding(
                    f"no Ollama server answers at {host}",
                    "start it with `ollama serve` (install it from https://ollama.com/download), "
                    "or set ollama_host to where it runs, or ollama = off",
                )
            ], ""
        return [Finding(f"the Ollama server at {host} failed: {exc.reason}", _SERVE_FIX)], ""
    model = backend.model
    if not any(_same_model(name, model) for name in names):
        have = ", ".join(names[:8]) or "none"
        return [
            Finding(
                f"model '{model}' is not pulled on {host} (it has: {have})",
                f"`ollama pull {model}`, or set ollama_model to a model it has",
            )
        ], ""
    try:
        trained = backend.context_length()
    except BackendUnavailable as exc:
        return [Finding(f"the server could not describe '{model}': {exc.reason}", _SERVE_FIX)], ""
    if trained is not None and num_ctx > trained:
        return [
            Finding(
                f"ollama_num_ctx {num_ctx:,} is more than {model}'s context ({trained:,} tokens)",
                f"set ollama_num_ctx = {trained} (prompts are budgeted to it)",
            )
        ], ""
    of = f" of its {trained:,}" if trained else ""
    return [], (
        f"Ollama at {host}: model {model} pulled; each request asks for {num_ctx:,} tokens of "
        f"context{of}"
    )


_SERVE_FIX = "check that `ollama serve` runs there (`ollama ps` lists what it has loaded)"
