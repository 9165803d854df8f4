"""The package's layers, read from its imports (the map in the README's architecture section): a
module imports only from its own row or the rows below, and no two modules import each other,
however far round. An import inside a function counts like any other."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "ragchat"

# top row first; a name is a module of ragchat/ or a folder of it
LAYERS = [
    {"cli"},
    {"repl"},
    {"runner"},
    {"render", "export", "mcp_server"},
    {"app", "evaluate"},
    {"conversation"},
    {"catalog", "watch", "doctor"},
    {"ingest", "search", "answer"},
    {"store", "embed"},
    {"config", "llm"},
    {"params", "text"},
    {"lexicon", "errors", "names", "lazy"},
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imported(name: str) -> set[str]:
    """The package's modules that `name` imports (a package's submodule when one is named)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[: len(package.split(".")) - node.level + 1]
            stem = ".".join(base) if node.level else ""
            target = ".".join(part for part in (stem, node.module or "") if part)
            found.add(target)
            found |= {f"{target}.{alias.name}" for alias in node.names}
    # `from . import render` names the package only to reach its module
    return {module for module in found if module in MODULES and module not in (name, "ragchat")}


def layer_of(name: str) -> int:
    room = name.split(".")[1] if "." in name else ""
    for index, row in enumerate(LAYERS):
        if room in row:
            return index
    raise AssertionError(f"{name} is on no layer: add it to LAYERS and the README's map")


GRAPH = {name: imported(name) for name in MODULES}


@pytest.mark.parametrize("name", sorted(n for n in MODULES if n != "ragchat"))
def test_imports_run_down(name: str) -> None:
    upward = [target for target in GRAPH[name] if layer_of(target) < layer_of(name)]
    assert not upward, f"{name} imports from a higher layer: {upward}"


def test_no_import_circle() -> None:
    done: set[str] = set()
    path: list[str] = []

    def visit(name: str) -> None:
        if name in path:
            raise AssertionError("import circle: " + " -> ".join(path[path.index(name) :] + [name]))
        if name in done:
            return
        path.append(name)
        for target in sorted(GRAPH[name]):
            # a package's face may import its own modules; they import its siblings, not it
            if not (MODULES[target].name == "__init__.py" and name.startswith(target + ".")):
                visit(target)
        path.pop()
        done.add(name)

    for name in sorted(GRAPH):
        visit(name)
