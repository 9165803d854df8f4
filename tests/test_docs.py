"""The documentation stays true to the tool: docs/cli.md is every command's `--help` (commands and
options as the app has them), the README stays short and lists every command, and every link
between the pages leads to a page and a heading that exist."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from helpers import script_module

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
DOCS = ROOT / "docs"
README_MAX_LINES = 250


reference = script_module("tools/cli_reference.py")


def _documented_commands() -> dict[str, str]:
    """docs/cli.md's generated part: each `### ragchat ...` heading with the text under it."""
    _head, generated = reference.written()
    sections = re.split(r"^### (ragchat.*)$", generated, flags=re.M)
    return {name.strip(): body for name, body in zip(sections[1::2], sections[2::2], strict=True)}


def test_the_cli_reference_is_the_help_of_every_command() -> None:
    _head, generated = reference.written()
    assert generated == reference.reference(), "docs/cli.md differs: run tools/cli_reference.py"


def test_documented_commands_and_options_are_the_apps() -> None:
    documented = _documented_commands()
    commands = {" ".join(["ragchat", *path]): command for path, command in reference.commands()}
    assert set(documented) == set(commands)
    for name, command in commands.items():
        usage = documented[name].split("Options:")[-1]
        shown = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", usage))
        options = {
            opt
            for param in command.get_params(_context(command))
            if param.param_type_name == "option"
            for opt in (*param.opts, *param.secondary_opts)
        }
        assert options <= shown, (name, options - shown)


def _context(command: Any) -> Any:
    import click

    return click.Context(command, info_name="ragchat")


def test_the_readme_is_short_and_lists_every_command() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    listed = {m.group(1) for line in lines if (m := re.match(r"\| `ragchat ([a-z]+)[ `]", line))}
    top = {path[0] for path, _ in reference.commands() if len(path) == 1}
    assert listed == top


def _slug(heading: str) -> str:
    """A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as dashes."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.+)", line)):
            slug = _slug(m.group(1))
            count = sum(1 for a in found if a == slug or re.fullmatch(rf"{re.escape(slug)}-\d+", a))
            found.add(f"{slug}-{count}" if count else slug)
    return found


PAGES = [README, ROOT / "CHANGELOG.md", *sorted(DOCS.glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_every_link_leads_to_a_page_and_heading_that_exist(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(encoding="utf-8"), flags=re.S)
    text = re.sub(r"(`+)[^`\n].*?\1", "", text)  # a code span shows a link's syntax, not a link
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.is_file(), f"{page.name}: {target}"
        if anchor:
            assert anchor in _anchors(linked), f"{page.name}: {target}"


def test_every_docs_page_is_on_the_map() -> None:
    index = (DOCS / "index.md").read_text(encoding="utf-8")
    linked = set(re.findall(r"\]\(([\w-]+\.md)[#)]", index))
    assert linked == {p.name for p in DOCS.glob("*.md")} - {"index.md"}
    readme = README.read_text(encoding="utf-8")
    assert "](docs/index.md)" in readme
