"""Check that a README's text was moved, not lost: every non-trivial line of README.md at a git
revision appears in README.md or docs/*.md of the working tree, in exactly one page.

    python tools/readme_moved.py main          # or any revision whose README.md was split

Lines are compared as word sequences (lower case, link targets, Markdown marks, quotes and line
breaks ignored), so a paragraph may be re-wrapped, a heading may change its level and a
cross-reference may become a link. Prints each line not found, or found in several pages, and
exits 1 when a line is missing.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MIN_WORDS = 4  # a line of fewer words (a table rule, a fence, "**govt**") says nothing alone
DOUBLED_WORDS = 8  # shorter lines (a heading, a command's start) may well recur in two pages


# old lines edited on purpose, found by a piece of their text: a cross-reference that now names
# the page it points to, and the README's terminal sample (re-captured from today's output)
EDITED = (
    "see *On the shared eval sets* under Formats",
    "rewrite (its own weight, see",
    "chunks written to /home/me/.local/share/ragchat/ragchat.db",
    "...answer with [n] citations, then a panel of sources...",
    "(binding, transactions act, electronic, electronic",
    "communications, legally, south africa, will) (follow-up",
    "› Who may witness a will     1.",
    "› Witnessing  0.930",
    "› Who may make a will        0.871",
    "› Child       0.851",
)


def words(text: str) -> str:
    """The text as one string of words: links reduced to their text, and "above"/"below" left
    out (a cross-reference to another page becomes a link)."""
    text = re.sub(r"\]\([^)]*\)", "]", text.lower())
    text = re.sub(r"\b(see )?(above|below)\b", " ", text)
    return " ".join(re.findall(r"\w+", text))


def pages() -> dict[str, str]:
    found = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    return {
        str(p.relative_to(ROOT)): " " + words(p.read_text(encoding="utf-8")) + " " for p in found
    }


def main(revision: str) -> int:
    old = subprocess.run(
        ["git", "show", f"{revision}:README.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    texts = pages()
    missing = doubled = checked = 0
    for number, line in enumerate(old, 1):
        key = words(line)
        if len(key.split()) < MIN_WORDS:
            continue
        if any(piece in line for piece in EDITED):
            print(f"edited   {number}: {line[:100]}")
            continue
        checked += 1
        where = [name for name, text in texts.items() if f" {key} " in text]
        if not where:
            missing += 1
            print(f"missing  {number}: {line[:100]}")
        elif len(where) > 1 and len(key.split()) >= DOUBLED_WORDS:
            doubled += 1
            print(f"in {len(where)}     {number}: {', '.join(where)}: {line[:60]}")
    print(f"{checked} lines checked: {missing} missing, {doubled} in more than one page")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "main"))
