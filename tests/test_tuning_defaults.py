"""No tuning value waits in a function's signature: the numbers reach every function through the
parameters object (`ragchat/params.py`), so `eval --param` reaches them all. A default that is a
number, or that is read from the parameters, would be used silently whenever a caller forgot to
pass the run's value (the lead and oracle baselines once ignored `--param answer.*` so)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "ragchat"

# (module, function, parameter): why its default is no tuning value
ALLOWED = {
    ("cli.py", "eval_command", "depth"): "a command-line option's default, shown by --help",
    ("embed.py", "__init__", "batch_size"): "texts per model call: speed and memory, not results",
    ("evaluate/runs.py", "__init__", "limit"): "how many query vectors the eval cache keeps",
    ("ingest/formats/markdown.py", "parse_markdown", "nesting"): "where a recursion starts",
    ("ingest/formats/markdown.py", "__init__", "nesting"): "where a recursion starts",
    ("ingest/formats/pdf.py", "__init__", "extracted"): "a running count's start",
    ("mcp_server.py", "search", "k"): "the MCP tool's published argument default",
    ("store/repair.py", "integrity_check", "most"): "how many problems a report names",
    ("text.py", "sentence_spans", "start"): "the offset of the text in its document",
}


def params_names(tree: ast.Module) -> set[str]:
    """The names a module takes from a parameters module (`params.py`, `answer/params.py`)."""
    found = {"DEFAULT", "ANSWER_PARAMS", "SCALE"}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").endswith("params"):
            found |= {alias.asname or alias.name for alias in node.names}
    return found


def is_tuning(default: ast.expr, from_params: set[str]) -> bool:
    if isinstance(default, ast.UnaryOp):
        default = default.operand
    if isinstance(default, ast.Constant):
        return isinstance(default.value, int | float) and not isinstance(default.value, bool)
    return any(isinstance(n, ast.Name) and n.id in from_params for n in ast.walk(default))


def tuning_defaults() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        from_params = params_names(tree)
        module = path.relative_to(PACKAGE).as_posix()
        for function in ast.walk(tree):
            if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            arguments = function.args
            positional = arguments.posonlyargs + arguments.args
            pairs = list(
                zip(positional[len(positional) - len(arguments.defaults) :], arguments.defaults)
            )
            pairs += [(a, d) for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults) if d]
            for argument, default in pairs:
                if is_tuning(default, from_params):
                    found.append((module, function.name, argument.arg))
    return found


def test_no_function_takes_a_tuning_value_as_its_default() -> None:
    offending = [key for key in tuning_defaults() if key not in ALLOWED]
    assert not offending, f"tuning defaults in signatures (pass the params object): {offending}"


def test_every_allowance_is_still_needed() -> None:
    assert set(ALLOWED) <= set(tuning_defaults()), set(ALLOWED) - set(tuning_defaults())
