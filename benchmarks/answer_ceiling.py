"""How far can picking sentences go? A ceiling for the extractive answer, \
from `eval --answers` rows.

    python benchmarks/answer_ceiling.py govt-answers.jsonl --db /tmp/govt.db

For each answered turn of an `ragchat eval --answers --out FILE` run, the chunks the answer drew
from are read back from the eval's database and scored four ways against the reference (content
words, stemmed, as `eval --answers` scores them):
  ragchat   the stored answer;
  lead      the top chunk's first words, as many as ragchat's answer;
  ceiling-N the N sentences with the highest precision against the reference (a ranker that knows
            which sentence's words the reference uses, one sentence at a time), N = 1, 2, 3;
  oracle    greedy on F1 (the `eval --answers` upper bound).
and the share of the lead-to-oracle gap each closes. The ceiling rows say what a perfect
sentence ranker could reach: an extractive answer can close at most that share of the gap.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import Counter
from pathlib import Path

from ragchat.answer import units
from ragchat.evaluate.answers import answer_tokens, lead_answer, oracle_answer, overlap_scores
from ragchat.params import DEFAULT
from ragchat.store import library
from ragchat.store.db import open_db
from ragchat.text import words

SHOWN = ("title", "fragment")  # units an answer never shows


def ceiling_answer(chunk_texts: list[str], reference: str, count: int) -> str:
    wanted = Counter(answer_tokens(reference))
    pool = [
        u.text
        for text in chunk_texts
        for u in units(text, params=DEFAULT.answer)
        if u.kind not in SHOWN
    ]

    def precision(text: str) -> float:
        tokens = answer_tokens(text)
        return sum((Counter(tokens) & wanted).values()) / max(len(tokens), 1)

    return " ".join(sorted(pool, key=precision, reverse=True)[:count])


def group_of(row: dict) -> str:
    return "N/A" if row["tags"].get("multi_turn") == "N/A" else "Follow-up + Clarification"


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("rows", type=Path, help="the --out file of `ragchat eval --answers`")
    parser.add_argument("--db", type=Path, required=True, help="the database that eval used (--db)")
    args = parser.parse_args()
    db = open_db(args.db, migrate=False, create=False)
    systems = ("ragchat", "lead", "ceiling-1", "ceiling-2", "ceiling-3", "oracle")
    f1: dict[str, dict[str, list[float]]] = {}
    for line in args.rows.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        if "answer" not in row:
            continue
        stored = library.chunks_by_ids(db, row["answer_chunk_ids"])
        texts = [stored[i].text for i in row["answer_chunk_ids"] if i in stored]
        if not texts:
            continue
        reference, answer = row["reference"], row["answer"]
        candidates = {
            "ragchat": answer,
            "lead": lead_answer(texts[0], len(words(answer)), params=DEFAULT.answer),
            "oracle": oracle_answer(texts, reference, params=DEFAULT.answer),
        }
        candidates |= {f"ceiling-{n}": ceiling_answer(texts, reference, n) for n in (1, 2, 3)}
        for group in (group_of(row), "overall"):
            scores = f1.setdefault(group, {name: [] for name in systems})
            for name in systems:
                scores[name].append(
                    overlap_scores(answer_tokens(candidates[name]), answer_tokens(reference))[0]
                )
    print("group | turns | " + " | ".join(systems) + " (F1; closed = share of the lead-oracle gap)")
    for group, scores in f1.items():
        means = {name: statistics.mean(values) for name, values in scores.items()}
        gap = means["oracle"] - means["lead"] or 1e-9
        cells = [
            f"{means[name]:.3f}"
            + (
                ""
                if name in ("lead", "oracle")
                else f" ({(means[name] - means['lead']) / gap:.0%})"
            )
            for name in systems
        ]
        print(f"{group} | {len(scores['ragchat'])} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
