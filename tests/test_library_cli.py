"""What is in the library and taking it out (`documents`, `collections`), questions scoped to
collections (`--in`, `/in`), places shown as `collection:path` where two documents read the same,
and the REPL's session verbs (`/export`, `/history`, `/documents`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from helpers import ask_json, invoke, settings_for
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from ragchat import catalog
from ragchat.app import App
from ragchat.conversation.corpus import CorpusView
from ragchat.repl import Repl
from ragchat.store import sessions
from ragchat.store.db import open_db

ALPHA = {
    "README.md": "# Alpha\n\nAlpha installs with `pip install alpha-tool`. Run `alpha init` to "
    "create the configuration file alpha.toml in your project folder.\n\n## Configuration\n\n"
    "The alpha.toml file sets the cache folder and the number of worker threads.\n",
    "guide/deploy.md": "# Deploying Alpha\n\nAlpha deploys to a server with `alpha deploy`; "
    "it copies the build folder over SSH.\n",
}
BETA = {
    "README.md": "# Beta\n\nBeta installs with `pip install beta-tool`. Run `beta init` to "
    "create the configuration file beta.toml in your project folder.\n\n## Configuration\n\n"
    "The beta.toml file sets the log level and the port of the web server.\n",
}


def _write(folder: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


@pytest.fixture
def two_projects(tmp_path: Path, runner) -> Path:
    """Two folders with similar READMEs: `alpha` (named after its folder) and `beta-docs`."""
    db = tmp_path / "lib" / "ragchat.db"
    alpha = _write(tmp_path / "alpha", ALPHA)
    beta = _write(tmp_path / "beta", BETA)
    assert invoke(runner, "ingest", alpha, "--db", db).exit_code == 0
    result = invoke(runner, "ingest", beta, "--name", "beta-docs", "--db", db)
    assert result.exit_code == 0, result.output
    return db


def _json_lines(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


def test_documents_lists_collection_path_title_chunks(two_projects: Path, runner) -> None:
    rows = _json_lines(invoke(runner, "documents", "--json", "--db", two_projects).stdout)
    assert [(r["collection"], r["path"], r["title"]) for r in rows] == [
        ("alpha", "README.md", "Alpha"),
        ("alpha", "guide/deploy.md", "Deploying Alpha"),
        ("beta-docs", "README.md", "Beta"),
    ]
    assert all(r["chunks"] >= 1 and r["ingested_at"] and r["pages"] is None for r in rows)
    assert rows[2]["absolute_path"].endswith("/beta/README.md")
    scoped = _json_lines(
        invoke(runner, "documents", "--in", "beta-docs", "--json", "--db", two_projects).stdout
    )
    assert [r["path"] for r in scoped] == ["README.md"]
    table = invoke(runner, "documents", "--db", two_projects).output
    assert "guide/deploy.md" in table and "beta-docs" in table and "3 document(s)" in table
    unknown = invoke(runner, "documents", "--in", "gamma", "--db", two_projects)
    assert unknown.exit_code == 1
    assert unknown.output.startswith("Error: no collection named 'gamma' (collections: alpha")


def test_documents_rm_takes_everything_of_a_document_and_leaves_doctor_clean(
    two_projects: Path, runner
) -> None:
    missing = invoke(runner, "documents", "rm", "alpha:*.md", "nothing/*.txt", "--db", two_projects)
    assert missing.exit_code == 1 and "no document matches 'nothing/*.txt'" in missing.output
    assert len(_json_lines(invoke(runner, "documents", "--json", "--db", two_projects).stdout)) == 3

    both = invoke(runner, "documents", "rm", "README.md", "--db", two_projects)
    assert both.exit_code == 1 and "is in 2 collections (alpha, beta-docs)" in both.output
    result = invoke(runner, "documents", "rm", "alpha:*", "--db", two_projects)
    assert result.exit_code == 0, result.output
    assert "removed alpha:README.md" in result.output
    assert "removed alpha:guide/deploy.md" in result.output
    left = _json_lines(invoke(runner, "documents", "--json", "--db", two_projects).stdout)
    assert [(r["collection"], r["path"]) for r in left] == [("beta-docs", "README.md")]
    db = sqlite3.connect(two_projects)
    titles = db.execute("SELECT count(*) FROM documents_fts").fetchone()[0]
    assert titles == 1
    db.close()
    doctor = invoke(runner, "doctor", "--db", two_projects)
    assert doctor.exit_code == 0 and "no problems found" in doctor.output
    found = invoke(runner, "search", "alpha init", "--json", "--db", two_projects)
    hits = _json_lines(found.stdout)
    assert hits and all(h["collection"] == "beta-docs" for h in hits)


def test_collections_rename_rm_and_names(two_projects: Path, runner, tmp_path: Path) -> None:
    rows = _json_lines(invoke(runner, "collections", "--json", "--db", two_projects).stdout)
    assert [(r["name"], r["documents"]) for r in rows] == [("alpha", 2), ("beta-docs", 1)]
    assert rows[1]["folder"] == str((tmp_path / "beta").resolve())
    taken = invoke(runner, "collections", "rename", "alpha", "beta-docs", "--db", two_projects)
    assert taken.exit_code == 1 and "exists already" in taken.output
    reserved = invoke(runner, "collections", "rename", "alpha", "all", "--db", two_projects)
    assert reserved.exit_code == 1 and "reserved" in reserved.output
    alpha = tmp_path / "alpha"
    other = invoke(runner, "ingest", alpha, "--name", "beta-docs", "--db", two_projects)
    assert other.exit_code == 1 and "another folder's" in other.output
    renamed = invoke(runner, "collections", "rename", "alpha", "tool", "--db", two_projects)
    assert renamed.exit_code == 0 and "Renamed collection alpha to tool." in renamed.output
    # the next ingest of the folder keeps the name the user gave it
    assert invoke(runner, "ingest", tmp_path / "alpha", "--db", two_projects).exit_code == 0
    removed = invoke(runner, "collections", "rm", "beta-docs", "--db", two_projects)
    assert removed.exit_code == 0 and "removed beta-docs:README.md" in removed.output
    rows = _json_lines(invoke(runner, "collections", "--json", "--db", two_projects).stdout)
    assert [r["name"] for r in rows] == ["tool"]
    assert invoke(runner, "doctor", "--db", two_projects).exit_code == 0


def test_two_folders_of_one_name_get_telling_collection_names(tmp_path: Path, runner) -> None:
    db = tmp_path / "lib" / "ragchat.db"
    for project in ("one", "two"):
        folder = _write(
            tmp_path / project / "docs", {"index.md": f"# {project}\n\nAbout {project}.\n"}
        )
        assert invoke(runner, "ingest", folder, "--db", db).exit_code == 0
    rows = _json_lines(invoke(runner, "collections", "--json", "--db", db).stdout)
    assert [r["name"] for r in rows] == ["docs", "two-docs"]  # the parent's name, not "docs-2"
    listed = _json_lines(invoke(runner, "documents", "--json", "--db", db).stdout)
    assert [(r["collection"], r["path"]) for r in listed] == [
        ("docs", "index.md"),
        ("two-docs", "index.md"),
    ]


def test_an_existing_library_gets_its_collections_by_migration(two_projects: Path) -> None:
    db = sqlite3.connect(two_projects)
    db.execute("DELETE FROM _sqlite_migrations WHERE name = 'm010_i32_collections'")
    for index in ("documents_root", "documents_path", "document_copies_path"):
        db.execute(f"DROP INDEX {index}")
    db.execute("DROP INDEX document_copies_root")
    db.execute("DROP TABLE collections")
    db.execute("ALTER TABLE sessions DROP COLUMN scope")
    db.commit()
    db.close()
    upgraded = open_db(two_projects)
    names = sorted(row[0] for row in upgraded.execute("SELECT name FROM collections"))
    assert names == ["alpha", "beta"]  # each named after its folder
    upgraded.close()


def test_a_scoped_question_never_cites_another_collection(two_projects: Path, runner) -> None:
    everywhere = ask_json(runner, two_projects, "open", "How do I create the configuration file?")
    assert {c["collection"] for c in everywhere["chunks"]} == {"alpha", "beta-docs"}

    result = invoke(
        runner,
        "ask",
        "How do I create the configuration file?",
        "--in",
        "beta-docs",
        "-s",
        "scoped",
        "--json",
        "--db",
        two_projects,
    )
    first = json.loads(result.stdout.strip().splitlines()[-1])
    follow = ask_json(runner, two_projects, "scoped", "and what does it set?")
    for turn in (first, follow):
        assert turn["scope"] == ["beta-docs"]
        assert turn["chunks"] and {c["collection"] for c in turn["chunks"]} == {"beta-docs"}
        # the fields scripts read are all still there
        assert {"chunk_id", "rank", "document_id", "document"} <= set(turn["chunks"][0])
        assert {"answer", "weak_match", "reformulation"} <= set(turn)
    assert follow["reformulation"]["semantic_query"]
    assert "log level" in follow["answer"] or "port" in follow["answer"]
    assert first["chunks"][0]["document"] == "beta-docs:README.md"  # two README.md: placed
    assert first["chunks"][0]["absolute_path"].endswith("/beta/README.md")
    assert follow["anchor_documents"] == ["beta-docs:README.md"]
    inspected = invoke(runner, "inspect", "last-turn", "-s", "scoped", "--db", two_projects)
    assert "scope           beta-docs" in inspected.output
    # `--in all` lifts the scope
    wide = invoke(
        runner, "ask", "How do I create the configuration file?", "--in", "all", "-s", "scoped",
        "--json", "--db", two_projects,
    )  # fmt: skip
    assert json.loads(wide.stdout.strip().splitlines()[-1])["scope"] == []


def test_a_scoped_question_maps_words_onto_its_collections_vocabulary(
    two_projects: Path, embedder
) -> None:
    db = open_db(two_projects)
    within = catalog.scope_of(db, ["beta-docs"])
    assert within is not None
    own = set(CorpusView(db).keywords_of(sorted(within.document_ids)))
    vector = embedder.embed_query("deploy the alpha build over SSH")
    everywhere = set(CorpusView(db).nearest_keywords(vector, 100, -1.0))
    scoped = set(CorpusView(db, within.document_ids).nearest_keywords(vector, 100, -1.0))
    assert scoped and scoped <= own and everywhere - own  # the other collection's words are out
    db.close()


def test_a_copy_reads_as_its_own_collection_in_a_scope(
    two_projects: Path, runner, tmp_path: Path
) -> None:
    mirror = _write(tmp_path / "mirror", {"README.md": ALPHA["README.md"]})  # alpha's, exactly
    assert invoke(runner, "ingest", mirror, "--db", two_projects).exit_code == 0
    hits = _json_lines(
        invoke(
            runner, "search", "configuration file", "--in", "mirror", "--json", "--db", two_projects
        ).stdout
    )
    assert hits and {h["collection"] for h in hits} == {"mirror"}
    assert hits[0]["document"] == "mirror:README.md (also alpha:README.md)"
    assert hits[0]["absolute_path"] == str((mirror / "README.md").resolve())
    turn = json.loads(
        invoke(
            runner, "ask", "How do I create the configuration file?", "--in", "mirror",
            "-s", "m", "--json", "--db", two_projects,
        ).stdout.strip().splitlines()[-1]
    )  # fmt: skip
    assert {c["collection"] for c in turn["chunks"]} == {"mirror"}


def test_search_scoped_and_places(two_projects: Path, runner) -> None:
    table = invoke(runner, "search", "configuration file", "--db", two_projects).output
    assert "alpha:README.md" in table and "beta-docs:README.md" in table
    assert "alpha:guide/deploy.md" not in table  # only a path two documents share is placed
    hits = _json_lines(
        invoke(
            runner, "search", "configuration file", "--in", "alpha", "--json", "--db", two_projects
        ).stdout
    )
    assert hits and {h["collection"] for h in hits} == {"alpha"}
    assert {"rank", "chunk_id", "document", "source", "score"} <= set(hits[0])


def test_show_an_impossible_chunk_id_is_one_clear_line(library_db: Path, runner) -> None:
    result = invoke(runner, "show", "99999999999999999999999", "--db", library_db)
    assert result.exit_code == 1
    assert result.output.startswith("Error: no chunk 99999999999999999...")
    assert "unexpected" not in result.output and len(result.output.splitlines()) == 1


def test_an_unanswered_question_stays_in_export_inspect_and_history(
    library_db: Path, runner, capsys
) -> None:
    ask_json(runner, library_db, "cut", "What makes a will legally binding in South Africa?")
    app = App(settings_for(library_db))
    opened = sessions.open_turn(app.db, "cut", "what age must a witness be?")  # never answered
    assert opened.number == 2
    app.close()
    markdown = invoke(runner, "export", "cut", "--db", library_db).stdout
    assert "## 2. what age must a witness be?" in markdown and "unanswered" in markdown
    inspected = invoke(runner, "inspect", "turn", "2", "-s", "cut", "--json", "--db", library_db)
    data = json.loads(inspected.stdout)
    assert data["question"] == "what age must a witness be?"
    assert data["answer_mode"] == "unanswered" and data["answered"] is False
    run_repl(library_db, ["/history"], "cut")
    out = capsys.readouterr().out
    assert "what age must a witness be?  (unanswered)" in out


def run_repl(db: Path, lines: list[str], session: str) -> None:
    app = App(settings_for(db))
    with create_pipe_input() as keyboard:
        for line in lines:
            keyboard.send_text(line + "\r")
        keyboard.close()
        Repl(app, session, input=keyboard, output=DummyOutput()).run()
    app.close()


def test_repl_session_verbs(two_projects: Path, tmp_path: Path, capsys) -> None:
    target = tmp_path / "out.md"
    target.write_text("keep me")
    run_repl(
        two_projects,
        [
            "/in beta-docs",
            "How do I create the configuration file?",
            "/documents",
            "/history",
            "/history 1",
            f"/export {target}",
            f"/export {tmp_path / 'new.md'}",
            "/in gamma",
            "/in all",
            "/history 7",
        ],
        "verbs",
    )
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert "questions search beta-docs" in out
    assert "beta-docs:README.md" in out  # the sources panel
    assert "guide/deploy.md" in out  # /documents
    assert "  1  How do I create the configuration file?" in out  # /history
    assert "Turn 1" in out and "beta init" in out  # /history 1: the whole turn
    assert "exists; /export" in out and target.read_text() == "keep me"
    written = (tmp_path / "new.md").read_text()
    assert written.startswith("# Session verbs") and "beta-docs:README.md" in written
    assert "no collection named 'gamma'" in out
    assert "questions search all collections" in out
    assert "has no turn 7" in out
