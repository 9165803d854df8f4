"""What Sphinx's roles and directives show a reader, shared by the reStructuredText reader and the
MyST Markdown reader (`{func}`len``, ```` ```{note} ````): one table of names, one set of rules.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

# directives whose content is navigation or machinery, not text
DROPPED_DIRECTIVES = frozenset(
    "toctree contents meta index highlight tabularcolumns sectionauthor moduleauthor "
    "codeauthor currentmodule py:currentmodule default-role default-domain raw autosummary "
    "testsetup testcleanup".split()  # sphinx.ext.doctest's setup and cleanup are never shown
)
# directives whose argument is a condition or a class, not text: their content is all a reader gets
CONDITION_DIRECTIVES = frozenset(
    "only ifconfig container rst-class cssclass tabs tab-set grid grid-item "
    "module py:module".split()
)
# a tab's argument is its label: a lead-in ("Windows:") before the tab's content
TAB_DIRECTIVES = frozenset("tab group-tab tab-item".split())
# Sphinx's object descriptions (`.. py:function:: name(args)`, `.. class::`, `.. option::`) and
# autodoc's (`.. autofunction:: pkg.mod.fn`): the signature is code, the body is text; an autodoc
# directive without a body (its text lives in docstrings ragchat never reads) shows nothing
API_OBJECTS = frozenset(
    "function class method classmethod staticmethod attribute property data exception "
    "decorator decoratormethod describe object option envvar confval type member var macro "
    "struct enum enumerator union namespace interface".split()
)
_CLI_OBJECTS = frozenset("option envvar confval".split())
_AUTODOC = re.compile(r"^auto\w+$")  # autofunction, autoclass, automodule, autopydantic_model...
INCLUDE_DIRECTIVES = frozenset("include literalinclude".split())
# a diagram's source (`.. mermaid::`, `.. graphviz::`, a ```mermaid fence) is drawn as a picture on
# the published page: a reader sees the picture and its caption, never the source
DIAGRAM_DIRECTIVES = frozenset(
    "mermaid graphviz graph digraph plantuml uml inheritance-diagram blockdiag seqdiag actdiag "
    "nwdiag packetdiag rackdiag kroki d2".split()
)
DIAGRAM_LANGUAGES = frozenset("mermaid plantuml puml dot graphviz d2 kroki".split())
DIAGRAM_CAPTIONS = ("caption", "alt")  # the options a diagram directive's text is in
CODE_DIRECTIVES = frozenset("code code-block sourcecode code-cell code-tab".split())
# sphinx.ext.doctest's blocks are code in a fixed language; their argument names test groups,
# which a reader never sees, and `:hide:` keeps a block off the published page
DOCTEST_LANGUAGES = {"doctest": "pycon", "testcode": "python", "testoutput": ""}


def code_language(name: str, argument: str, options: dict[str, str]) -> str | None:
    """The language a code directive shows its content in ("" for none given), or None when the
    directive does not show code (or hides it: `.. doctest::` with `:hide:`)."""
    lower = name.lower()
    if lower in DOCTEST_LANGUAGES:
        return None if "hide" in options else DOCTEST_LANGUAGES[lower]
    if lower in CODE_DIRECTIVES:
        return (argument.split() or [options.get("language", "")])[0]
    return None


def shows_code(name: str) -> bool:
    """Whether a directive's content is code (`.. code-block::`, `.. doctest::`)."""
    return name.lower() in CODE_DIRECTIVES or name.lower() in DOCTEST_LANGUAGES


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
# (sphinx-paramlinks' `paramref` names a parameter as `.Class.method.param`)
_PYTHON_ROLES = frozenset("mod func data const class meth attr exc obj type paramref".split())
_REFERENCE_ROLES = {"pep": "PEP", "rfc": "RFC"}
_PROSE_ROLES = frozenset("ref doc term abbr".split())
_TITLED = re.compile(r"^(.*?)\s*<([^<>]*)>$", re.S)
# an untitled `:ref:` becomes LABEL_OPEN label LABEL_CLOSE in the parsed text; ingest replaces it
# with the title of the section the label marks anywhere in the library (ingest/labels.py)
LABEL_OPEN, LABEL_CLOSE = "\ue000", "\ue001"


def untitled_link(target: str) -> str:
    """A Markdown link without text (MyST `[](page.md#anchor)`, `[](#anchor)`): Sphinx shows the
    title of the section the anchor marks, so the anchor is marked for ingest to resolve like an
    untitled `:ref:`; a link to a whole page shows the page's name."""
    path, _, anchor = target.partition("#")
    if anchor:
        return f"{LABEL_OPEN}{anchor}{LABEL_CLOSE}"
    name = path.rstrip("/").rsplit("/", 1)[-1]
    return name.rsplit(".", 1)[0].replace("-", " ").replace("_", " ") if name else ""


_INVENTORY = re.compile(r"^[A-Za-z][\w.-]*:(?=[^:\s])")


def without_inventory(target: str) -> str:
    """An intersphinx target without its inventory prefix: "otherdocs:some/page" -> "some/page"."""
    return _INVENTORY.sub("", target, count=1)


def visible(text: str, python: bool = False) -> tuple[str, bool]:
    """(shown text, whether the author titled it) of a role's text: `Title <target>` -> "Title",
    `~a.b.c` -> "c", `!name` -> "name"; a Python object's `.name` or `~.a.b` -> "name", "b",
    `python:Ellipsis` (intersphinx) -> "Ellipsis"."""
    if (match := _TITLED.match(text)) and match.group(1):
        return match.group(1), True
    text = text.lstrip("!")
    short = text.startswith("~")
    text = text.lstrip("~")
    if python:  # an object of another project's inventory: `python:Ellipsis` -> "Ellipsis"
        text = without_inventory(text).lstrip(".") or text
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
    if short == "ref" and not titled:  # the target section's title, once the library is read
        return f"{LABEL_OPEN}{' '.join(shown.split())}{LABEL_CLOSE}", False
    if short == "doc" and not titled:
        shown = without_inventory(shown).lstrip("/") or shown
    if short in _CALLABLE_ROLES and not titled and not shown.endswith(")"):
        shown += "()"
    return shown, short not in _PROSE_ROLES


def release_title(options: dict[str, str]) -> str:
    """The title of a release a directive's options name (the changelog extension's `..
    changelog::` with `:version: 1.19.1` and `:released: August 8, 2026`): "1.19.1 (August 8,
    2026)", a version heading as a changelog writes one; "" when they name no version."""
    version = " ".join(str(options.get("version") or "").split())
    if not version:
        return ""
    released = " ".join(str(options.get("released") or "").split())
    return f"{version} ({released})" if released else version


def holds_markup(name: str) -> bool:
    """Whether a directive's content is always text to parse (a condition's, a tab's), never
    code however many symbols it has (a simple table's `=====` lines)."""
    return name.lower() in CONDITION_DIRECTIVES | TAB_DIRECTIVES | VERSION_LABELS.keys()


def is_api_directive(name: str) -> bool:
    """`py:function`, `c:macro`, `method`, `autoclass`, `autodoc:automodule`..."""
    short = name.lower().rsplit(":", 1)[-1]
    return short in API_OBJECTS or bool(_AUTODOC.match(short))


# a type written "~contextvars.ContextVar[Job]": Sphinx shows the last part of the dotted name
_TILDE_NAME = re.compile(r"~([\w.]+)")


def _last_part(match: re.Match[str]) -> str:
    return match.group(1).rsplit(".", 1)[-1]


def api_signature(
    name: str, argument: str, has_body: bool, options: Mapping[str, str] | None = None
) -> tuple[str, str] | None:
    """(code, language) of an object description's signature(s) (`.. py:function:: get(url)` ->
    "get(url)"); None for an autodoc directive without a body (a dotted path alone is noise) and
    for `automodule`, whose argument only names where the objects live. One signature shows its
    `:type:`, `:value:` and `:annotation:` options as Sphinx does: `.. attribute:: abstract`
    with `:annotation: = False` is "abstract = False", not a lone name."""
    short = name.lower().rsplit(":", 1)[-1]
    lines = (line.strip().rstrip("\\").strip() for line in argument.split("\n"))
    signatures = [line for line in lines if line]
    if not signatures or (_AUTODOC.match(short) and not has_body) or short == "automodule":
        return None
    if len(signatures) == 1 and options:
        signatures[0] += "".join(
            f"{part}{_TILDE_NAME.sub(_last_part, ' '.join(value.split()))}"
            for part, key in ((": ", "type"), (" = ", "value"), (" ", "annotation"))
            if (value := options.get(key) or "").strip()
        )
    python = (":" not in name or name.lower().startswith("py:")) and short not in _CLI_OBJECTS
    return "\n".join(signatures), "python" if python else ""


def directive_title(name: str, argument: str) -> str:
    """What a directive's argument shows a reader: a version directive's sentence, a tab's
    label as a lead-in ("Windows:"), nothing for a condition (`.. only:: html`), else the
    argument itself (an admonition's title, an unknown directive's words)."""
    lower = name.lower()
    if lower in CONDITION_DIRECTIVES:
        return ""
    if lower in TAB_DIRECTIVES:
        label = " ".join(argument.split())
        return f"{label}:" if label and not label.endswith(":") else label
    return version_line(name, argument)


def version_line(name: str, argument: str) -> str:
    """A version directive's argument as a sentence: `versionadded` "3.10 The match statement"
    -> "Added in version 3.10: The match statement"; other directives keep their argument."""
    argument = " ".join(argument.split())
    label = VERSION_LABELS.get(name.lower())
    if not label or not argument:
        return argument
    version, _, rest = argument.partition(" ")
    return f"{label} {version}:" + (f" {rest}" if rest else "")
