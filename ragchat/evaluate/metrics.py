"""File-level retrieval metrics (pure): Recall@k, MRR, nDCG over distinct files in rank order."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from ..errors import RagchatError

RANK_K = 10  # MRR and nDCG cut-off
DEFAULT_KS = (5, 10)


def distinct_files(paths: Iterable[str]) -> list[str]:
    """Files in rank order, each at its first position."""
    return list(dict.fromkeys(paths))


def recall_at(ranked: Sequence[str], gold: Iterable[str], k: int) -> float:
    """Share of the gold files among the top k ranked files."""
    wanted = set(gold)
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def mrr_at(ranked: Sequence[str], gold: Iterable[str], k: int = RANK_K) -> float:
    """1 / rank of the first gold file within the top k (0 when none)."""
    wanted = set(gold)
    return next(
        (1.0 / rank for rank, name in enumerate(ranked[:k], start=1) if name in wanted), 0.0
    )


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int = RANK_K) -> float:
    """Binary-relevance nDCG: DCG of the top k over the ideal DCG of min(|gold|, k) hits."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(
        1.0 / math.log2(rank + 1) for rank, name in enumerate(ranked[:k], start=1) if name in wanted
    )
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def metric_names(ks: Sequence[int]) -> list[str]:
    return [*(f"R@{k}" for k in ks), f"MRR@{RANK_K}", f"nDCG@{RANK_K}"]


def score(ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    values = [
        *(recall_at(ranked, gold, k) for k in ks),
        mrr_at(ranked, gold),
        ndcg_at(ranked, gold),
    ]
    return dict(zip(metric_names(ks), values))


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(dict.fromkeys(int(part) for part in text.split(",") if part.strip()))
    except ValueError:
        raise RagchatError(
            f"--k wants comma-separated whole numbers, e.g. 5,10 (got {text!r})"
        ) from None
    if not ks or min(ks) < 1:
        raise RagchatError(f"--k wants numbers of 1 or more (got {text!r})")
    return ks


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (ties dropped): how likely a split at least this uneven is
    when neither strategy is better."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)
