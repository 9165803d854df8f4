"""Which files found while walking are documents of their own, by their structure (never by a
folder's name), and what ingest learns from reading them all first.

- A fragment: a file another document of the library includes (a Markdown snippet kept beside
  the included code, an RST file pulled in with `.. include::`). It is read where it is included,
  not again on its own. Only files reachable from a document nobody includes are fragments: two
  files including each other stay documents.
- An assembly: a page that is only the pages it includes (`{!docs/page.md!}` lines, a title at
  most): its pages are the documents, and it is none (`assembles`).
- A page template: an HTML file written in a template language (`{% extends %}`, `{% block %}`;
  Jinja, Django, Liquid, Nunjucks), outside its code examples; a theme's `overrides/main.html`;
  or one whose tags' attributes are template expressions (`href="{{ pathto('api') }}"`: a
  Sphinx theme's `_templates/sidebar.html`, which has no statement at all).
- Labels: every Sphinx cross-reference label the library defines (see labels.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence, Set
from dataclasses import dataclass, field
from pathlib import Path

from .ignore import Scope
from .includes import IncludeResolver, include_names
from .labels import collect_labels, heading_anchors, prolog_substitutions

FRAGMENT = "included by another document"
TEMPLATE = "a page template"
ASSEMBLY = "made only of the pages it includes, each read as a document"
_INCLUDING = (".md", ".markdown", ".rst")
_HTML = (".html", ".htm")
_CODE_ELEMENTS = re.compile(
    r"<(pre|code|script|style|textarea)\b.*?</\1\s*>|<!--.*?-->", re.S | re.I
)
_TEMPLATE_TAG = re.compile(r"\{%-?\s*[a-z_]+\b[^%]*-?%\}")
# an attribute of a tag whose value holds a template expression: `<a href="{{ pathto(doc) }}">`
_TEMPLATE_ATTRIBUTE = re.compile(
    r"""<[a-z][^<>]*\s[\w:-]+\s*=\s*(["'])[^"'<>]*\{\{[^{}]*\}\}""", re.I
)


# a directive the site's build fills with reference read from the code (autodoc's, autosummary,
# the command-line references of sphinx-argparse, sphinx-argparse-cli, sphinx-click and
# sphinxcontrib-typer, in RST or a MyST fence) or a mkdocstrings object (`::: pkg.module`,
# `::: mkdocs-click`): what the published page shows there is not in the file
_GENERATED = re.compile(
    r"^[ \t]*(?:\.\.[ \t]+|(?:`{3,}|:{3,})\{)(?:auto\w+|sphinx_argparse_cli|argparse|click|typer)"
    r"(?:::|\})|^[ \t]*:::[ \t]+(?:[A-Za-z_]\w*(?:\.\w+)+|mkdocs-click)[ \t]*$",
    re.M,
)


def generates_reference(text: str) -> bool:
    """The page has the site's build write reference from the code (`_GENERATED`): ingest reads
    the page's file, where that reference is not."""
    return bool(_GENERATED.search(text))


def is_surveyed(path: Path) -> bool:
    """Whether the survey reads the file: those that include others, define labels, or may be
    templates."""
    return path.suffix.lower() in _INCLUDING


def is_markup(path: Path) -> bool:
    """Whether the file's text says whether it is a document (a fragment's includers, a
    template's tags, references to labels): Markdown, RST and HTML."""
    return path.suffix.lower() in _INCLUDING + _HTML


def is_page_template(text: str) -> bool:
    """Template statements (`{% name ... %}`), or tag attributes holding template expressions
    (`href="{{ ... }}"`), outside code, preformatted text and comments. Not an expression in a
    page's text: a page about templates shows `{{ user.name }}` in its prose."""
    outside = _CODE_ELEMENTS.sub("", text)
    return bool(_TEMPLATE_TAG.search(outside) or _TEMPLATE_ATTRIBUTE.search(outside))


@dataclass
class Survey:
    """What every file found says about the others: which are fragments, which labels exist."""

    fragments: dict[Path, Path] = field(default_factory=dict)  # resolved fragment -> an includer
    labels: dict[str, str] = field(default_factory=dict)  # label -> section title
    assemblies: set[Path] = field(default_factory=set)  # pages made only of other pages


# a line a page made of other pages may hold besides its includes: a Markdown heading, an RST
# title's adornment, an HTML comment
_ASSEMBLY_LINE = re.compile(r"^(?:#{1,6}[ \t].*|([=\-~^\"'`#*+:.])\1{2,}|<!--.*-->)$")
_FRONT_MATTER = re.compile(r"\A---[ \t]*\n.*?\n---[ \t]*\n", re.S)


def assembles(text: str, targets: Sequence[Path], found: Set[Path]) -> bool:
    """Whether a page is only the pages it includes, one after the other (pendulum's index.md,
    seventeen `{!docs/page.md!}` lines): it says nothing of its own besides their includes (a
    title at most), includes two or more, and each is a page (Markdown or RST) the ingest reads
    on its own. Its pages are then the documents, each cited and anchored as itself; read in
    place, the whole site was one document. A page that includes parts into its own text
    (snippets, examples, a README below its introduction) reads them in place."""
    if len(targets) < 2 or not all(t.suffix.lower() in _INCLUDING and t in found for t in targets):
        return False
    lines = [line.strip() for line in _FRONT_MATTER.sub("", text).split("\n")]
    own = [line for line in lines if line and not include_names(line)]
    titles = {
        i for i, line in enumerate(own) if i + 1 < len(own) and _ASSEMBLY_LINE.match(own[i + 1])
    }
    return all(_ASSEMBLY_LINE.match(line) or i in titles for i, line in enumerate(own))


def survey(files: Sequence[tuple[Path, Scope, Path, str]], others: Sequence[Path] = ()) -> Survey:
    """`files`: (path as met, what the ingest reads, the folder it was found under, text) of every
    file that can include others; `others`: every other file found (a text file a page includes
    with `.. literalinclude::` or a snippet is a fragment as much as an included page is)."""
    result = Survey()
    includes: dict[Path, list[Path]] = {}
    anchors: dict[str, str] = {}  # Markdown headings' anchors: explicit labels come first
    for path, scope, root, text in files:
        if path.suffix.lower() not in _INCLUDING:
            continue
        for label, title in collect_labels(text).items():
            result.labels.setdefault(label, title)
        if path.suffix.lower() == ".rst":
            for name, shown in prolog_substitutions(text).items():
                result.labels.setdefault(name, shown)
        for anchor, title in heading_anchors(text).items():
            anchors.setdefault(anchor, title)
        resolver = IncludeResolver(path, scope, root)
        targets = (resolver.locate(name) for name in include_names(text))
        includes[_real(path)] = [
            t for t in targets if t is not None and t != _real(path) and _readable(t, resolver)
        ]
    for anchor, title in anchors.items():
        result.labels.setdefault(anchor, title)
    found = {_real(path) for path, _, _, _ in files} | {_real(path) for path in others}
    texts = {_real(path): text for path, _, _, text in files}
    for path, pages in list(includes.items()):
        if assembles(texts[path], pages, found):
            result.assemblies.add(path)
            includes[path] = []  # its pages are documents, not its fragments
    included = {target for targets in includes.values() for target in targets if target in found}
    stack = [path for path in includes if path not in included]  # the documents nobody includes
    while stack:
        path = stack.pop()
        for target in includes.get(path, []):
            if target in found and target not in result.fragments:
                result.fragments[target] = path
                stack.append(target)
    return result


def not_a_document(path: Path, text: str, found: Survey) -> str:
    """Why the file at `path` is not a document of its own ("" when it is one)."""
    if _real(path) in found.assemblies:
        return ASSEMBLY
    if _real(path) in found.fragments:
        return FRAGMENT
    if path.suffix.lower() in _HTML and is_page_template(text):
        return TEMPLATE
    return ""


def _readable(path: Path, resolver: IncludeResolver) -> bool:
    """Whether the includer reads the file in place (a file too large for it is named, not
    read: it stays a document of its own)."""
    try:
        return path.stat().st_size <= resolver.max_bytes
    except OSError:
        return False


def _real(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return path.absolute()
