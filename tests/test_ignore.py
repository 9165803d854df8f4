"""What an ingest leaves out, on real folders: ignore files (nested, with negation), hidden files,
`--exclude` remembered with the folder, and `--prune` removing what is now left out."""

from __future__ import annotations

from pathlib import Path

from helpers import invoke
from test_ingest import flat, make_corpus

from ragchat.ingest.ignore import Rules
from ragchat.ingest.loaders import SUPPORTED_SUFFIXES
from ragchat.store import library
from ragchat.store.db import open_db


def paths(db_path: Path) -> list[str]:
    db = open_db(db_path)
    try:
        return [d["path"] for d in library.documents(db)]
    finally:
        db.close()


def fts_hits(db_path: Path, word: str) -> int:
    db = open_db(db_path)
    try:
        return db.execute(
            "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", [word]
        ).fetchone()[0]
    finally:
        db.close()


def test_rules_follow_gitignore_semantics(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "sub" / "deep").mkdir(parents=True)
    (root / ".gitignore").write_text("*.log.md\ndrafts/\n/top.md\n")
    (root / "sub" / ".ragchatignore").write_text("!keep.log.md\nsecret*\n")
    rules = Rules(root)
    assert rules.reason(root / "a.log.md", False) == ".gitignore"
    assert (
        rules.reason(root / "sub" / "keep.log.md", False) is None
    )  # a deeper file's negation wins
    assert rules.reason(root / "sub" / "deep" / "keep.log.md", False) is None
    assert rules.reason(root / "sub" / "secret-plan.md", False) == ".ragchatignore"
    assert (
        rules.reason(root / "secret-plan.md", False) is None
    )  # the nested file rules its subtree only
    assert rules.reason(root / "drafts", True) == ".gitignore"
    assert rules.reason(root / "drafts", False) is None  # `drafts/` names folders only
    assert rules.reason(root / "top.md", False) == ".gitignore"
    assert rules.reason(root / "sub" / "top.md", False) is None  # anchored at its file's folder
    assert rules.reason(root / ".env.md", False) == "hidden"
    assert Rules(root, hidden=True).reason(root / ".env.md", False) is None
    assert (
        Rules(root, ("sub/deep/",)).reason_anywhere(root / "sub" / "deep" / "x.md") == "--exclude"
    )


def test_ignored_files_and_excluded_folders_never_reach_the_library(tmp_path: Path, runner) -> None:
    docs = make_corpus(tmp_path)
    (docs / "notes").mkdir()
    (docs / "notes" / "zebra.md").write_text(
        "# Zebras\n\nThe zebra grazes on the savanna at dawn.\n"
    )
    (docs / "release-notes.md").write_text("# Release notes\n\nAdd sponsor quokka. PR 9650.\n")
    (docs / "keep.md").write_text("# Keep\n\nThe okapi lives in the forest.\n")
    (docs / ".gitignore").write_text("release-*.md\n")
    (docs / ".secret.md").write_text("# Hidden\n\nThe narwhal is a hidden whale.\n")
    db = tmp_path / "lib" / "ragchat.db"

    first = invoke(runner, "ingest", docs, "--exclude", "notes/", "--db", db, "--verbose")
    assert first.exit_code == 0, first.output
    assert paths(db) == ["bread.html", "cars.txt", "garden/compost.md", "keep.md"]
    assert fts_hits(db, "quokka") == fts_hits(db, "zebra") == fts_hits(db, "narwhal") == 0
    out = flat(first.output)
    assert "3 left out (1 --exclude, 1 .gitignore, 1 hidden)" in out, out
    assert "left out release-notes.md: .gitignore" in out
    assert "left out notes/: --exclude" in out
    # the glob is remembered with the folder: a plain re-ingest leaves the folder out too
    again = invoke(runner, "ingest", docs, "--db", db)
    assert "notes/" not in " ".join(paths(db)) and "1 --exclude" in flat(again.output)


def test_a_later_exclude_with_prune_removes_what_is_now_left_out(tmp_path: Path, runner) -> None:
    docs = make_corpus(tmp_path)
    (docs / "changelog").mkdir()
    (docs / "changelog" / "v1.md").write_text("# Version 1\n\nThe wombat release.\n")
    (docs / "draft.md").write_text("# Draft\n\nA draft about the axolotl.\n")
    db = tmp_path / "lib" / "ragchat.db"
    assert invoke(runner, "ingest", docs, "--db", db).exit_code == 0
    assert {"changelog/v1.md", "draft.md"} <= set(paths(db))

    (docs / ".ragchatignore").write_text("draft.md\n")
    kept = invoke(runner, "ingest", docs, "--exclude", "changelog", "--db", db)
    assert kept.exit_code == 0 and {"changelog/v1.md", "draft.md"} <= set(
        paths(db)
    )  # no --prune: kept
    pruned = invoke(runner, "ingest", docs, "--prune", "--db", db)
    assert pruned.exit_code == 0, pruned.output
    assert paths(db) == ["bread.html", "cars.txt", "garden/compost.md"]
    assert fts_hits(db, "wombat") == fts_hits(db, "axolotl") == 0
    assert "2 removed" in flat(pruned.output)


def test_ingest_help_lists_every_format(runner) -> None:
    shown = flat(invoke(runner, "ingest", "--help").output)
    assert all(suffix in shown for suffix in SUPPORTED_SUFFIXES), shown
    assert "--exclude" in shown and "--hidden" in shown and "--verbose" in shown
