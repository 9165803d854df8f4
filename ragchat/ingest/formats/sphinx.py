"""What Sphinx's roles and directives show a reader, shared by the reStructuredText reader and the
MyST Markdown reader (`{func}`len``, ```` ```{note} ````): one table of names, one set of rules.
"""

from __future__ import annotations

import re

# directives whose content is navigation or machinery, not text
DROPPED_DIRECTIVES = frozenset(
    "toctree contents meta index only highlight tabularcolumns sectionauthor moduleauthor "
    "codeauthor currentmodule default-role default-domain raw".split()
)
INCLUDE_DIRECTIVES = frozenset("include literalinclude".split())
CODE_DIRECTIVES = frozenset("code code-block sourcecode code-cell".split())
MEDIA_DIRECTIVES = frozenset("image figure".split())  # the argument is a file, not text
VERSION_LABELS = {
    "versionadded": "Added in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "versionremoved": "Removed in version",
}
# the admonitions docutils knows, with the title a reader sees when the author gives none
ADMONITION_TITLES = {
    name: name.capitalize()
    for name in "attention caution danger error hint important note tip warning".split()
} | {"seealso": "See also"}
_CALLABLE_ROLES = frozenset("func meth".split())
# Python-domain roles: a leading "." asks Sphinx to search, the reader never sees it
_PYTHON_ROLES = frozenset("mod func data const class meth attr exc obj type".split())
_REFERENCE_ROLES = {"pep": "PEP", "rfc": "RFC"}
_PROSE_ROLES = frozenset("ref doc term abbr".split())
_TITLED = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.S)


def visible(text: str, python: bool = False) -> tuple[str, bool]:
    """(shown text, whether the author titled it) of a role's text: `Title <target>` -> "Title",
    `~a.b.c` -> "c", `!name` -> "name"; a Python object's `.name` or `~.a.b` -> "name", "b"."""
    if (match := _TITLED.match(text)) and match.group(1):
        return match.group(1), True
    text = text.lstrip("!")
    short = text.startswith("~")
    text = text.lstrip("~")
    if python:
        text = text.lstrip(".") or text
    return (text.rsplit(".", 1)[-1] if short else text), False


def reference_text(prefix: str, text: str) -> str:
    """`:pep:`634`` -> "PEP 634"; `:pep:`the spec <634#section>`` -> "the spec"."""
    shown, titled = visible(text)
    return shown if titled else f"{prefix} {shown.split('#')[0].strip()}"


def role_text(name: str, text: str) -> tuple[str, bool]:
    """(what the reader sees, whether it is code) of a role such as `:py:func:`~a.len`` ->
    ("len()", True), `{ref}`Text <label>`` -> ("Text", False), `{pep}`8`` -> ("PEP 8", False)."""
    short = name.rsplit(":", 1)[-1].lower()
    if short in _REFERENCE_ROLES:
        return reference_text(_REFERENCE_ROLES[short], text), False
    shown, titled = visible(text, python=short in _PYTHON_ROLES)
    if short == "doc" and not titled:
        shown = shown.lstrip("/") or shown
    if short in _CALLABLE_ROLES and not titled and not shown.endswith(")"):
        shown += "()"
    return shown, short not in _PROSE_ROLES


def version_line(name: str, argument: str) -> str:
    """A version directive's argument as a sentence: `versionadded` "3.10 The match statement"
    -> "Added in version 3.10: The match statement"; other directives keep their argument."""
    argument = " ".join(argument.split())
    label = VERSION_LABELS.get(name.lower())
    if not label or not argument:
        return argument
    version, _, rest = argument.partition(" ")
    return f"{label} {version}:" + (f" {rest}" if rest else "")
