"""Includes read what the walk reads and nothing else, within a budget, and one page's failure
skips that page only (issue 29, points 1-3 and 5); includes select the right lines (issue 28,
family 1). Every secret below sits where an ingest leaves it out; none may reach the index."""

from __future__ import annotations

import builtins
import io
import os
from pathlib import Path

import pytest
from helpers import settings_for
from test_repl import run_repl

from ragchat.ingest.ignore import Rules, Scope
from ragchat.ingest.includes import IncludeResolver
from ragchat.ingest.limits import DEFAULT_LIMITS, INCLUDE_CHARS
from ragchat.ingest.loaders import parse_document
from ragchat.ingest.pipeline import ingest
from ragchat.ingest.worker import Parser
from ragchat.store.db import open_db

SECRET = "AKIA-SECRET-7731"


def run_ingest(folders: list[Path], db_path: Path, embedder, **options):
    db = open_db(db_path)
    try:
        return ingest(db, settings_for(db_path), folders, lambda: embedder, **options)
    finally:
        db.close()


def indexed_text(db_path: Path) -> str:
    db = open_db(db_path)
    try:
        return "\n".join(row[0] for row in db.execute("SELECT text FROM chunks"))
    finally:
        db.close()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def page(body: str) -> str:
    return f"# Setup\n\nHow the project is configured, with its example:\n\n{body}\n\nThe end.\n"


def resolver_for(page_path: Path, root: Path) -> IncludeResolver:
    return IncludeResolver(page_path, Scope((Rules(root),)), root)


def test_includes_never_read_what_the_walk_leaves_out(tmp_path: Path, embedder) -> None:
    project = tmp_path / "project"
    write(project / ".env", f"AWS_KEY={SECRET}-env\n")
    write(project / ".git" / "config", f"url = https://me:{SECRET}-git@example.org/x\n")
    write(project / ".private" / "notes.md", f"password {SECRET}-hidden\n")
    write(project / ".gitignore", "credentials.txt\n")
    write(project / "credentials.txt", f"token {SECRET}-ignored\n")
    write(project / "private" / "key.py", f"KEY = '{SECRET}-excluded'\n")
    write(project / ".ragchat" / "chat_history", f"+{SECRET}-library\n")
    write(project / "example.py", "print('hello')\n")
    write(
        project / "docs" / "setup.md",
        page(
            '--8<-- "../.env"\n\n--8<-- "../credentials.txt"\n\n{* ../private/key.py *}\n\n'
            '```{include} ../.private/notes.md\n```\n\n--8<-- "../.ragchat/chat_history"\n\n'
            '--8<-- "../example.py"\n'
        ),
    )
    write(
        project / "docs" / "git.rst",
        "Git\n===\n\nThe remote:\n\n.. literalinclude:: ../.git/config\n\nDone here.\n",
    )
    db_path = tmp_path / "lib" / "lib.db"
    report = run_ingest([project], db_path, embedder, exclude=["private/"])
    assert sorted(report.added) == ["docs/git.rst", "docs/setup.md"]
    text = indexed_text(db_path)
    assert "print('hello')" in text  # an include the walk allows is read
    assert SECRET not in text
    assert "example: ../.env, not in the library" in text


def test_with_hidden_files_read_the_library_folder_still_is_not(tmp_path: Path, embedder) -> None:
    project = tmp_path / "project"
    write(project / ".ragchat" / "chat_history", f"+{SECRET}-library\n")
    write(project / "lib" / "chat_history", f"+{SECRET}-db-folder\n")
    write(
        project / "setup.md",
        page('--8<-- ".ragchat/chat_history"\n\n--8<-- "lib/chat_history"\n'),
    )
    db_path = project / "lib" / "lib.db"  # the database lives inside the folder ingested
    report = run_ingest([project], db_path, embedder, hidden=True)
    assert report.added == ["setup.md"]
    assert SECRET not in indexed_text(db_path)


def test_a_leading_slash_is_the_docs_root_not_any_folder_above(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write(home / ".ssh" / "id_rsa", f"-----BEGIN KEY-----{SECRET}\n")
    write(home / "notes" / "plan.py", f"PLAN = '{SECRET}-above'\n")
    downloaded = write(
        home / "notes" / "downloads" / "page.md",
        page('--8<-- "/.ssh/id_rsa"\n\n--8<-- "/plan.py"\n'),
    )
    parsed = parse_document(downloaded, downloaded.read_bytes(), resolver_for(downloaded, home))
    assert SECRET not in parsed.text
    # a Sphinx source folder (conf.py) is where "/name" starts
    write(home / "site" / "conf.py", "project = 'x'\n")
    write(home / "site" / "snippets" / "run.py", "run()\n")
    guide = write(home / "site" / "guide" / "intro.md", page('--8<-- "/snippets/run.py"\n'))
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, home))
    assert "run()" in parsed.text


def test_a_symlink_swapped_in_after_the_check_reads_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "docs"
    write(tmp_path / "outside.py", f"KEY = '{SECRET}'\n")
    example = write(root / "example.py", "print('checked')\n")
    guide = write(root / "guide.md", page('--8<-- "example.py"\n'))
    checked = IncludeResolver.locate

    def locate_then_swap(self: IncludeResolver, name: str) -> Path | None:
        found = checked(self, name)
        example.unlink()
        example.symlink_to(tmp_path / "outside.py")  # between the check and the read
        return found

    monkeypatch.setattr(IncludeResolver, "locate", locate_then_swap)
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert SECRET not in parsed.text


# --- bounds ------------------------------------------------------------------------------------


def test_a_small_page_including_a_lot_stays_within_the_include_budget(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(
        root / "big.py", "".join(f"value_{n} = {n}  # a line of the example\n" for n in range(5000))
    )
    distinct = "".join(f"{{* big.py ln[{n}:5000] *}}\n\n" for n in range(1, 41))
    body = '--8<-- "big.py"\n\n' * 150 + distinct
    guide = write(root / "guide.md", page(body))
    assert guide.stat().st_size < 10_000
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert len(parsed.text) < INCLUDE_CHARS + 10_000
    assert "example: big.py, not read: one page's includes stop at" in parsed.text


def test_line_ranges_keep_their_order_and_a_thousand_repeats_are_refused(
    tmp_path: Path,
) -> None:
    root = tmp_path / "docs"
    write(root / "ex.py", "a = 1\nb = 2\nc = 3\n")
    repeated = ",".join(["1:99999"] * 1000)
    guide = write(
        root / "guide.md", page(f"{{* ex.py ln[3,1:2] *}}\n\n{{* ex.py ln[{repeated}] *}}")
    )
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert "```python\nc = 3\na = 1\nb = 2\n```" in parsed.text
    assert "example: ex.py, not read: more than 64 line ranges" in parsed.text


def test_every_page_is_parsed_in_the_bounded_worker(tmp_path: Path) -> None:
    parser = Parser(DEFAULT_LIMITS)
    try:
        parser.parse(Path("small.md"), page("Nothing included.").encode())
        assert parser._process is not None  # the worker's time, memory and Ctrl-C bounds apply
    finally:
        parser.stop()


def test_an_unchanged_page_is_recognised_without_reading_its_includes(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "docs"
    example = write(root / "example.py", "print('first')\n")
    write(root / "guide.md", page('--8<-- "example.py"\n'))
    db_path = tmp_path / "lib.db"
    assert run_ingest([root], db_path, embedder).added == ["guide.md"]
    opened: list[str] = []
    real_open, real_os_open = builtins.open, os.open

    def spy_open(file, *args, **kwargs):
        opened.append(str(file))
        return real_open(file, *args, **kwargs)

    def spy_os_open(path, *args, **kwargs):
        opened.append(str(path))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    monkeypatch.setattr(io, "open", spy_open)  # pathlib's
    monkeypatch.setattr(os, "open", spy_os_open)
    assert run_ingest([root], db_path, embedder).unchanged == ["guide.md"]
    monkeypatch.undo()
    assert str(example) not in opened
    example.write_text("print('second')\n")  # a write to the included file re-ingests the page
    assert run_ingest([root], db_path, embedder).updated == ["guide.md"]
    assert "print('second')" in indexed_text(db_path)


def test_an_include_changed_between_digest_and_parse_is_not_kept_stale(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "docs"
    example = write(root / "example.py", "print('original')\n")
    write(root / "guide.md", page('--8<-- "example.py"\n'))
    db_path = tmp_path / "lib.db"
    digest = IncludeResolver.digest

    def digest_then_edit(self: IncludeResolver, data: bytes) -> str:
        value = digest(self, data)
        example.write_text("print('edited')\n")  # the parse reads this
        return value

    monkeypatch.setattr(IncludeResolver, "digest", digest_then_edit)
    run_ingest([root], db_path, embedder)
    monkeypatch.undo()
    example.write_text("print('original')\n")  # back to what the digest saw
    assert run_ingest([root], db_path, embedder).updated == ["guide.md"]
    text = indexed_text(db_path)
    assert "print('original')" in text and "print('edited')" not in text


# --- one page's failure skips that page ------------------------------------------------------


def test_pages_whose_includes_are_malformed_never_stop_the_ingest(tmp_path: Path, embedder) -> None:
    root = tmp_path / "docs"
    write(root / "ex.py", "a = 1\nb = 2\nc = 3\n")
    write(root / "typo.md", page("{* ex.py ln[1 2] *}"))
    write(root / "myst.md", page("```{literalinclude} ex.py\n:lines: 1-2-3\n```"))
    write(root / "long.md", page(f'--8<-- "{"a" * 5000}.py"'))
    write(root / "notes.txt", f'Notes\n\n--8<-- "{"b" * 5000}"\n\nMore notes here.\n')
    nested = "".join("/" * (3 + n) + " note | T\n" for n in range(2000))
    write(root / "nested.md", page(nested + "deep\n"))
    write(root / "fine.md", page("Nothing included."))
    report = run_ingest([root], tmp_path / "lib.db", embedder)
    assert {"fine.md", "typo.md", "myst.md", "long.md", "notes.txt"} <= set(report.added)
    assert report.skipped == [("nested.md", "nested too deeply to parse")]
    text = indexed_text(tmp_path / "lib.db")
    assert "example: ex.py, not read: not a line range: 1-2-3" in text


def test_ingest_in_the_repl_never_leaves_the_repl(tmp_path: Path, capsys) -> None:
    root = tmp_path / "docs"
    write(root / "ex.py", "a = 1\n")
    write(root / "typo.md", page("{* ex.py ln[1 2] *}"))
    write(root / "long.md", page(f'--8<-- "{"a" * 5000}.py"'))
    open_db(tmp_path / "lib.db").close()
    commands = [f"/ingest {'n' * 5000}", f"/ingest {root}", "how is the project configured?"]
    run_repl(tmp_path / "lib.db", commands)
    out = capsys.readouterr().out
    assert "2 added" in out
    assert "with its example" in out.split("2 added", 1)[1]  # the REPL answered after /ingest


# --- includes read right (issue 28, family 1) ----------------------------------------------------


def test_line_ranges_select_the_files_real_lines(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(
        root / "app.py", "import x\n\n\ndef first():\n    pass\n\n\ndef second():\n    return 2\n"
    )
    guide = write(root / "guide.md", page("{* app.py ln[8:9] hl[9] *}"))
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert "```python\ndef second():\n    return 2\n```" in parsed.text
    assert "hl[" not in parsed.text and "ln[" not in parsed.text


def test_markdown_include_braces_are_read_through_the_same_rules(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root / "src" / "model.py", "class Hero:\n    name: str\n\n\n    age: int\n")
    write(root / ".env", f"KEY={SECRET}\n")
    guide = write(
        root / "guide.md",
        page(
            "```Python\n{!./src/model.py[ln:4-5]!}\n```\n\n```Python\n{!./src/model.py!}\n```\n\n"
            "{!.env!}"
        ),
    )
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert "```Python\n    age: int\n```" in parsed.text
    assert "```Python\nclass Hero:\n    name: str\n\n    age: int\n```" in parsed.text
    assert "{!" not in parsed.text and SECRET not in parsed.text


def test_snippet_line_suffixes_and_section_markers(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(
        root / "tool.py",
        "# --8<-- [start:setup]\nsetup()\n# --8<-- [end:setup]\nrun()\nstop()\n",
    )
    guide = write(root / "guide.md", page('--8<-- "tool.py:4:5"'))
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert "```python\nrun()\nstop()\n```" in parsed.text
    assert "8<" not in parsed.text


def test_an_ignore_pattern_of_many_stars_does_not_stall_the_walk(tmp_path: Path, embedder) -> None:
    root = tmp_path / "docs"
    write(root / ".gitignore", "*a" * 14 + "*b\n" + "secret*.md\n")
    write(root / ("a" * 60 + ".md"), page("A page with a long name."))  # backtracks in Python's re
    write(root / "secret-plan.md", page(SECRET))
    report = run_ingest([root], tmp_path / "lib.db", embedder)
    assert report.added == ["a" * 60 + ".md"]
    assert report.left_out == [("secret-plan.md", ".gitignore")]


def test_snippets_inside_code_fences_are_read_and_escaped_ones_shown(tmp_path: Path) -> None:
    root = tmp_path / "docs"
    write(root / "ex.py", "run()\n")
    body = '```python\n--8<-- "ex.py"\n```\n\nThe syntax:\n\n```\n;--8<-- "other.md"\n```'
    guide = write(root / "guide.md", page(body))
    parsed = parse_document(guide, guide.read_bytes(), resolver_for(guide, root))
    assert "```python\nrun()\n```" in parsed.text
    assert '```\n--8<-- "other.md"\n```' in parsed.text
