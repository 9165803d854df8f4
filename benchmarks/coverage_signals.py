"""Which evidence separates the questions a library does not answer from those it does? \
Replays turns and scores candidate signals for the not-covered decision (docs/answers.md).

    python benchmarks/coverage_signals.py --db docs.db \
        --docs ../shared/eval/docs/conversations.jsonl
    python benchmarks/coverage_signals.py --db govt.db --mtrag ../shared/eval/mtrag/govt

The library must already hold the corpus (`ragchat ingest`, or the database `ragchat eval` built).
`--docs`: the docs conversations (`run_docs_chat.py`'s format), each held as one session; a turn
of kind "not-covered" is uncovered, every other turn covered. `--mtrag`: a set's folder; its
scored turns (`conversations.jsonl`, answered as `ragchat eval --answers` answers them) are
covered and the last turns of `unanswerable.jsonl` (replayed as `--unanswerable` does) are not.
Meta-requests are left out. Per signal it prints the AUC (how well it ranks the uncovered turns
below the covered ones: 0.5 is chance, 1.0 a perfect split), then what today's rule catches alone
and with an `unheld` clause added (`rule or unheld >= T`), so a candidate is read on every set
the same way. `--out` writes one row a turn.

The signals: the evidence every turn keeps (`Lineage.coverage`: subject, rare, margin, ...),
today's rule score, and `unheld`: how much closer the question comes to its best passage (the
top 4 the turn shows) once the words none of them holds are taken out of it, words the library
holds somewhere (a question that asks for a feature beside the one the passages explain: "can I
give click.prompt a timeout?" without "timeout" is what the passage answers). Measured without a
model (RAGCHAT_OLLAMA=off).

Library-relative signals (do the cosines a covered question reaches differ from library to
library?): `centroid`, the question's cosine with the library's mean chunk vector (how on-topic
it is for this library at all); `tenth`, its 10th best cosine over the library; `pseudo`, the
library's own scale: the first prose sentence of every n-th chunk (300 to 600 of them; all of a
smaller library) read as a question against the rest of the library, the 25th percentile of
their best cosines (once a library, about 10 s); `opening`, the question's (as read) cosine with
each top passage minus that passage's opening sentence's, the best of the 4 (each passage its own
scale). Printed as AUCs of the rule read relative to each (docs/answers.md: none helped). And
`soft`, `rare` with partial credit for a rarest term the passages lack, by how close the nearest
word they hold comes to it (single words embedded once a run).
"""

from __future__ import annotations

import argparse
import json
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ragchat.conversation.corpus import CorpusStats, CorpusView
from ragchat.conversation.coverage import rarest_terms
from ragchat.conversation.models import TurnResult
from ragchat.params import DEFAULT
from ragchat.store.vectors import vectors_of
from ragchat.text import content_words, stem, stems

TOP = 4  # the passages an answer stands on (CoverageParams.top)
THRESHOLDS = (0.04, 0.05, 0.06, 0.07, 0.08)


def unheld_words(question: str, texts: Sequence[str], corpus: CorpusStats) -> list[str]:
    """The question's content words that none of the texts holds but the library does."""
    held = set().union(*(stems(text) for text in texts)) if texts else set()
    words = dict.fromkeys(content_words(question))
    return [w for w in words if stem(w) not in held and corpus.chunk_frequency(w) > 0]


def without(question: str, words: Sequence[str]) -> str:
    for word in words:
        question = re.sub(rf"(?i)(?<!\w){re.escape(word)}(?!\w)", " ", question)
    return " ".join(question.split())


def unheld_gain(
    question: str,
    texts: Sequence[str],
    passages: np.ndarray,
    corpus: CorpusStats,
    embed: Callable[[str], np.ndarray],
) -> float:
    """How much closer (best cosine over the passages) the question comes without its unheld
    words; 0 when every word is held, or none is (nothing would be left to compare)."""
    missing = unheld_words(question, texts, corpus)
    if not missing or len(missing) == len(set(content_words(question))) or not len(passages):
        return 0.0
    before = float(np.max(passages @ embed(question)))
    return float(np.max(passages @ embed(without(question, missing)))) - before


def first_sentence(text: str) -> str | None:
    """The chunk's first prose sentence of five words or more (no code), as a pseudo-question."""
    text = re.sub(r"```.*?```", " ", text, flags=re.S)
    for line in text.splitlines():
        words = re.sub(r"[#*`>|_\[\]()]+", " ", line).split()
        if len(words) >= 5 and sum(w.isalpha() for w in words) >= 4:
            return " ".join(re.split(r"(?<=[.!?])\s", " ".join(words))[0].split()[:20])
    return None


class Library:
    """The library's vectors, their mean, and its pseudo-question scale."""

    def __init__(self, app) -> None:
        rows = app.db.execute("SELECT id, text FROM chunks ORDER BY id").fetchall()
        found = vectors_of(app.db, [r[0] for r in rows])
        ids = [r[0] for r in rows if r[0] in found]
        self.vectors = np.stack([found[i] for i in ids])
        mean = self.vectors.mean(axis=0)
        self.centroid = mean / np.linalg.norm(mean)
        place = {chunk: row for row, chunk in enumerate(ids)}
        sample = [(r[0], first_sentence(r[1])) for r in rows[:: max(1, len(rows) // 300)]]
        sample = [(c, s) for c, s in sample if s and c in place]
        cosines = app.embedder.embed([s for _, s in sample]) @ self.vectors.T
        for row, (chunk, _) in enumerate(sample):
            cosines[row, place[chunk]] = -1.0  # against the rest of the library
        self.pseudo = float(np.percentile(cosines.max(axis=1), 25))

    def relative(self, vector: np.ndarray) -> tuple[float, float]:
        cosines = self.vectors @ vector
        return float(self.centroid @ vector), float(np.sort(cosines)[-min(10, len(cosines))])


def auc(uncovered: Sequence[float], covered: Sequence[float]) -> float:
    """The chance that an uncovered turn scores above a covered one (ties count half)."""
    if not uncovered or not covered:
        return float("nan")
    wins = sum((u > c) + 0.5 * (u == c) for u in uncovered for c in covered)
    return wins / (len(uncovered) * len(covered))


def docs_turns(app, path: Path) -> Iterator[tuple[bool, TurnResult]]:
    from ragchat.store import sessions

    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        conversation = json.loads(line)
        name = f"signals:{conversation['id']}"
        sessions.clear_session(app.db, name)  # fresh: a second run must not resume the first's
        session = app.conversation(name)
        for turn in conversation["turns"]:
            yield turn.get("kind") == "not-covered", session.ask(turn["user"])


def mtrag_turns(app, folder: Path) -> Iterator[tuple[bool, TurnResult]]:
    from ragchat import evaluate

    items = evaluate.load_conversations(folder / "conversations.jsonl")
    strategies = evaluate.choose_strategies(["ragchat"], items)
    run = evaluate.replay(app.db, app.embedder, app.settings, items, strategies, answers=True)
    for scored in run.turns:
        yield False, scored.result
    unanswerable = evaluate.load_conversations(folder / "unanswerable.jsonl", scored=False)
    for result in evaluate.replay_unanswerable(app.db, app.embedder, app.settings, unanswerable):
        yield True, result


def row(
    app,
    corpus: CorpusStats,
    library: Library,
    words: WordVectors,
    uncovered: bool,
    result: TurnResult,
) -> dict:
    lineage = result.lineage
    ids = [c.chunk_id for c in lineage.chunks[:TOP]]
    found = vectors_of(app.db, ids)
    passages = np.stack([found[i] for i in ids if i in found]) if found else np.zeros((0, 0))
    texts = [r[0] for r in app.db.execute(_texts(len(ids)), ids).fetchall()] if ids else []
    gain = unheld_gain(lineage.question, texts, passages, corpus, app.embedder.embed_query)
    centroid, tenth = library.relative(app.embedder.embed_query(lineage.question))
    reach = opening_reach(app, ids, found, lineage.reformulation.semantic_query or lineage.question)
    soft = soft_rare(lineage.question, texts, corpus, words)
    return {
        "question": lineage.question,
        "uncovered": uncovered,
        "meta": lineage.reformulation.is_meta,
        "weak": lineage.weak,
        **{k: v for k, v in lineage.coverage.items() if not isinstance(v, list)},
        "unknown": len(lineage.unknown_names),
        "unheld": round(gain, 4),
        "centroid": round(centroid, 4),
        "tenth": round(tenth, 4),
        "pseudo": round(library.pseudo, 4),
        "opening": round(reach, 4),
        "soft": round(soft, 4),
    }


class WordVectors:
    """Single words embedded once a run (a library's vocabulary, as the passages bring it)."""

    def __init__(self, embedder) -> None:
        self.embedder = embedder
        self.known: dict[str, np.ndarray] = {}

    def of(self, words: Sequence[str]) -> np.ndarray:
        missing = [w for w in dict.fromkeys(words) if w not in self.known]
        if missing:
            for word, vector in zip(missing, self.embedder.embed(missing), strict=True):
                self.known[word] = vector
        return np.stack([self.known[w] for w in words]) if words else np.zeros((0, 0))


def soft_rare(
    question: str, texts: Sequence[str], corpus: CorpusStats, vectors: WordVectors, count: int = 3
) -> float:
    """`rare` with partial credit: a rarest term the passages do not hold counts by how close
    (cosine of the single words) the nearest word they do hold comes to it, so a paraphrase
    ("raptors" where the passage says "hawks") counts more than a word with no kin there."""
    weighted = rarest_terms(question, corpus, count)
    total = sum(weight for weight, _ in weighted)
    if total <= 0:
        return 1.0
    held = set().union(*(stems(text) for text in texts)) if texts else set()
    words = (
        sorted(set().union(*(set(content_words(text.lower())) for text in texts))) if texts else []
    )
    near = vectors.of(words) if words else None
    score = 0.0
    for weight, term in weighted:
        if stem(term) in held:
            score += weight
        elif near is not None:
            score += weight * max(0.0, float(np.max(near @ vectors.of([term.lower()])[0])))
    return score / total


def opening_reach(app, ids: Sequence[int], found: dict, question: str) -> float:
    """How close the question (as read) comes to each top passage, against how close the
    passage's own opening sentence comes to it (each passage its own scale: a long, mixed
    passage is reached less closely by anything); the best over the passages."""
    rows = dict(app.db.execute(_pairs(len(ids)), list(ids)).fetchall()) if ids else {}
    pairs = [(found[i], first_sentence(rows[i]) or rows[i][:120]) for i in ids if i in found]
    if not pairs:
        return 0.0
    vectors = np.stack([v for v, _ in pairs])
    own = np.sum(app.embedder.embed([o for _, o in pairs]) * vectors, axis=1)
    return float(np.max(vectors @ app.embedder.embed_query(question) - own))


def _pairs(count: int) -> str:
    return f"SELECT id, text FROM chunks WHERE id IN ({','.join('?' * count)})"


def _texts(count: int) -> str:
    return f"SELECT text FROM chunks WHERE id IN ({','.join('?' * count)})"


def report(rows: Sequence[dict]) -> None:
    rows = [r for r in rows if not r["meta"]]
    params = DEFAULT.coverage

    def rule(r: dict) -> float:
        return r["subject"] + params.rare_weight * r["rare"]

    score = {
        "rule": lambda r: -rule(r),
        "subject": lambda r: -r["subject"],
        "rare": lambda r: -r["rare"],
        "margin": lambda r: -r["margin"],
        "agreement": lambda r: -r["agreement"],
        "unheld": lambda r: r["unheld"],
        "rule - centroid/2": lambda r: -(rule(r) - r["centroid"] / 2),
        "rule - tenth": lambda r: -(rule(r) - r["tenth"]),
        "rule - pseudo": lambda r: -(rule(r) - r["pseudo"]),
        "opening": lambda r: -r["opening"],
        "opening + 0.3 rare": lambda r: -(r["opening"] + params.rare_weight * r["rare"]),
        "soft": lambda r: -r["soft"],
        "unknown names": lambda r: r.get("unknown", 0),
        "subject + 0.3 soft": lambda r: -(r["subject"] + params.rare_weight * r["soft"]),
    }
    uncovered = [r for r in rows if r["uncovered"]]
    covered = [r for r in rows if not r["uncovered"]]
    print(f"{len(uncovered)} uncovered, {len(covered)} covered turns (meta-requests left out)")
    for name, signal in score.items():
        value = auc([signal(r) for r in uncovered], [signal(r) for r in covered])
        print(f"AUC {name:18} {value:.3f}")
    for threshold in (None, *THRESHOLDS):
        fired = [r for r in rows if r["weak"] or (threshold and r["unheld"] >= threshold)]
        caught = sum(r["uncovered"] for r in fired)
        label = "rule alone" if threshold is None else f"rule or unheld >= {threshold}"
        precision = caught / len(fired) if fired else 0.0
        print(
            f"{label:24} caught {caught}/{len(uncovered)}, false {len(fired) - caught}"
            f"/{len(covered)}, precision {precision:.2f}, recall {caught / len(uncovered):.2f}"
        )


def main() -> None:
    import os

    from ragchat.cli import make_app

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", required=True)
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--docs", type=Path, help="docs conversations (run_docs_chat.py format)")
    which.add_argument("--mtrag", type=Path, help="an MTRAG set's folder")
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    os.environ["RAGCHAT_OLLAMA"] = "off"
    app = make_app(db=args.db)
    corpus = CorpusView(app.db)
    library = Library(app)
    turns = docs_turns(app, args.docs) if args.docs else mtrag_turns(app, args.mtrag)
    words = WordVectors(app.embedder)
    rows = [row(app, corpus, library, words, uncovered, result) for uncovered, result in turns]
    if args.out:
        args.out.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    report(rows)


if __name__ == "__main__":
    main()
