"""docs/measuring.md's replay table from `ragchat eval --out` rows: per strategy and group,
R@5 / nDCG@10 and the paired win/loss count on nDCG@10 against the strategy each one must not
fall below.

    python benchmarks/replay_table.py govt.jsonl [more.jsonl ...]

Rows of several files are pooled (a strategy's rows may come from separate runs); groups are
`all`, Follow-up + Clarification, N/A and, where tagged, the switch set's `kind`.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Sequence
from pathlib import Path

# strategy -> (label, the strategy it is paired with)
ROWS: dict[str, tuple[str, str | None]] = {
    "ragchat": ("no LLM (heuristic)", "last-turn"),
    "ragchat+echo": ("*echo* model", "ragchat"),
    "ragchat+drift": ("*drift* model", "last-turn"),
    "ragchat+flip": ("*flip* model", "last-turn"),
    "ragchat+recorded": ("**recorded replies**", "reply-alone"),
    "reply-alone": ("the reply's rewrite alone", None),
    "last-turn": ("last turn", None),
}
GROUPS: dict[str, Callable[[dict], bool]] = {
    "switch turn": lambda tags: tags.get("kind") == "switch turn",
    "after switch": lambda tags: tags.get("kind") == "after switch",
    "Follow-up + Clarification": lambda tags: (
        tags.get("multi_turn") in ("Follow-up", "Clarification")
    ),
    "N/A": lambda tags: tags.get("multi_turn") == "N/A",
    "all": lambda tags: True,
}


def read_rows(paths: Sequence[Path]) -> dict[str, dict[tuple[str, int], dict]]:
    """strategy -> (item id, turn) -> row; a later file's row replaces an earlier one."""
    found: dict[str, dict[tuple[str, int], dict]] = {}
    for path in paths:
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            found.setdefault(row["strategy"], {})[(row["id"], row["turn"])] = row
    return found


def cell(
    mine: dict[tuple[str, int], dict],
    theirs: dict[tuple[str, int], dict] | None,
    keep: Callable[[dict], bool],
) -> str:
    keys = [k for k, row in mine.items() if keep(row["tags"])]
    if not keys:
        return "-"
    r5 = sum(mine[k]["metrics"]["R@5"] for k in keys) / len(keys)
    ndcg = sum(mine[k]["metrics"]["nDCG@10"] for k in keys) / len(keys)
    text = f"{r5:.3f} / {ndcg:.3f}"
    if theirs is not None:
        paired = [
            (mine[k]["metrics"]["nDCG@10"], theirs[k]["metrics"]["nDCG@10"])
            for k in keys
            if k in theirs
        ]
        wins = sum(a > b + 1e-9 for a, b in paired)
        losses = sum(a < b - 1e-9 for a, b in paired)
        text += f" · {wins}/{losses}"
    return text


def table(rows: dict[str, dict[tuple[str, int], dict]]) -> str:
    groups = [
        name
        for name, keep in GROUPS.items()
        if any(keep(row["tags"]) for row in next(iter(rows.values())).values())
    ]
    if any(name in groups for name in ("switch turn", "after switch")):
        groups = [g for g in groups if g != "all"] + ["all"]
    counts = {
        g: sum(
            GROUPS[g](row["tags"])
            for row in rows.get("last-turn", next(iter(rows.values()))).values()
        )
        for g in groups
    }
    lines = [
        "| strategy (W/L on nDCG@10 against) | "
        + " | ".join(f"{g} ({counts[g]})" for g in groups)
        + " |",
        "|---" * (len(groups) + 1) + "|",
    ]
    for strategy, (label, against) in ROWS.items():
        if strategy not in rows:
            continue
        theirs = rows.get(against) if against else None
        name = f"{label} (vs {against})" if theirs is not None else label
        lines.append(
            f"| {name} | "
            + " | ".join(cell(rows[strategy], theirs, GROUPS[g]) for g in groups)
            + " |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", nargs="+", type=Path, help="`ragchat eval --out` files")
    print(table(read_rows(parser.parse_args(argv).rows)))


if __name__ == "__main__":
    main()
