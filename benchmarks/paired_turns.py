"""What a change does to each turn itself, apart from what it does to the turns after it: two
versions of ragchat answer every turn of the docs conversations after the same history.

    python benchmarks/paired_turns.py ../shared/eval/docs/conversations.jsonl --db docs.db \
        --base .venv/bin/ragchat --new ../change/.venv/bin/ragchat --out paired.jsonl

`run_docs_chat.py` holds each conversation as one session, so a change that alters one answer
alters how the next turns are read (the last answer's words and pages are their context), and a
30-turn conversation moves turns the change never touched (docs/measuring.md, "The round of
2026-11-29, third"). Here BASE holds the conversation, turn after turn, in its own session; before
each turn the library's database is copied and NEW answers that turn on the copy, so both answer
after BASE's earlier turns and the copy is thrown away. Every turn is scored as `run_docs_chat.py`
scores it (its functions, imported from `--scorer`: gold page in the top 5, every key in the six
passages a model gets and in the answer, the "may not cover" notice). Prints, per figure, the
turns NEW wins and loses, and how many answers differ; `--out` writes one row a turn (both
versions' scores and answers). Without a model (RAGCHAT_OLLAMA=off).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SCORER = REPO.parent / "shared" / "eval" / "docs" / "run_docs_chat.py"
FIGURES = ("gold5", "context", "answer")


def load_scorer(path: Path) -> ModuleType:
    """`run_docs_chat.py`, whose scoring every row here follows."""
    spec = importlib.util.spec_from_file_location("run_docs_chat", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"paired_turns: cannot load the scorer {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ask(exe: str, db: Path, question: str) -> dict[str, Any]:
    """One turn of session "paired" in `db`, as `run_docs_chat.py` asks it."""
    env = {**os.environ, "RAGCHAT_DB": str(db), "RAGCHAT_OLLAMA": "off"}
    done = subprocess.run(
        [exe, "ask", "--session", "paired", "--json", question],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    if done.returncode != 0:
        raise SystemExit(f"paired_turns: {exe} failed: {(done.stderr or done.stdout).strip()}")
    return json.loads(done.stdout)


def copy_library(source: Path, target: Path) -> None:
    """The database with its write-ahead log: the session so far, as BASE left it."""
    for suffix in ("", "-wal", "-shm"):
        if Path(f"{source}{suffix}").exists():
            shutil.copyfile(f"{source}{suffix}", f"{target}{suffix}")


def scored(scorer: ModuleType, sources: dict, db: Path, trace: dict, turn: dict) -> dict:
    """The turn's figures as `run_docs_chat.py` records them, and its answer."""
    chunks = sorted(trace.get("chunks") or [], key=lambda c: c.get("rank", 99))
    shown = chunks[: scorer.PROMPT_SOURCES]
    texts = scorer.chunk_texts(str(db), [c["chunk_id"] for c in shown])
    context = scorer.norm("\n".join(texts.get(c["chunk_id"], "") for c in shown))
    answer = trace.get("answer") or ""
    top5 = list(dict.fromkeys(c["document_id"] for c in chunks))[:5]
    gold = turn.get("gold") or []
    keys = [scorer.norm(k) for k in turn.get("keys") or []]
    held = [scorer.is_gold(g, sources.get(d, [])) for g in gold for d in top5]
    return {
        "gold5": any(held) if gold else None,
        "context": all(k in context for k in keys) if keys else None,
        "answer": all(k in scorer.norm(answer) for k in keys) if keys else None,
        "notice": bool(trace.get("weak_match")),
        "text": answer,
    }


def paired(
    conversation: dict, db: Path, base: str, new: str, scorer: ModuleType, sources: dict
) -> Iterator[dict]:
    """Each turn answered by BASE in its session and by NEW on a copy taken just before."""
    with tempfile.TemporaryDirectory() as folder:
        held, trial = Path(folder) / "base.db", Path(folder) / "new.db"
        copy_library(db, held)
        for number, turn in enumerate(conversation["turns"], 1):
            copy_library(held, trial)
            changed = scored(scorer, sources, trial, ask(new, trial, turn["user"]), turn)
            kept = scored(scorer, sources, held, ask(base, held, turn["user"]), turn)
            yield {
                "id": conversation["id"],
                "turn": number,
                "kind": turn.get("kind", "?"),
                "base": kept,
                "new": changed,
            }


def differences(rows: list[dict]) -> dict[str, tuple[list[str], list[str]]]:
    """Per figure, the turns NEW wins and loses ("id/turn"); a notice is right on a not-covered
    turn and wrong on any other."""
    out: dict[str, tuple[list[str], list[str]]] = {}
    for figure in (*FIGURES, "notice"):
        won, lost = [], []
        for row in rows:
            if figure == "notice":
                want = row["kind"] == "not-covered"
                before, after = row["base"][figure] == want, row["new"][figure] == want
            else:
                before, after = row["base"][figure], row["new"][figure]
            if before is None:
                continue
            if after and not before:
                won.append(f"{row['id']}/{row['turn']}")
            elif before and not after:
                lost.append(f"{row['id']}/{row['turn']}")
        out[figure] = (won, lost)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("conversations", type=Path)
    parser.add_argument("--db", type=Path, required=True, help="the library (never written)")
    parser.add_argument("--base", required=True, help="the ragchat that holds the conversation")
    parser.add_argument("--new", required=True, help="the ragchat that answers each turn beside")
    parser.add_argument("--scorer", type=Path, default=SCORER, help="run_docs_chat.py")
    parser.add_argument("--only", default="", help="conversation ids, comma-separated")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    scorer = load_scorer(args.scorer)
    sources = scorer.document_sources(str(args.db))
    only = {i for i in args.only.split(",") if i}
    conversations = [json.loads(line) for line in args.conversations.open(encoding="utf-8")]
    rows = [
        row
        for conversation in conversations
        if not only or conversation["id"] in only
        for row in paired(conversation, args.db, args.base, args.new, scorer, sources)
    ]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    for figure, (won, lost) in differences(rows).items():
        print(f"{figure:8} won {len(won)} {' '.join(won)}".rstrip())
        print(f"{'':8} lost {len(lost)} {' '.join(lost)}".rstrip())
    changed = sum(r["base"]["text"] != r["new"]["text"] for r in rows)
    print(f"answers changed: {changed} of {len(rows)} turns")


if __name__ == "__main__":
    main()
