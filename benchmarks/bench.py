"""`make bench`: ingest throughput, search latency and turn latency at 10k and 100k chunks.

Every phase runs in its own subprocess (so each has its own peak resident memory) and prints one
JSON line; the parent prints a rich table and writes benchmarks/results.json.

Phases:
  ingest     a generated corpus of ~2,000 chunks: `ingest()` chunks/s against the plain fastembed
             call on the same chunk texts (document order, batch 16; interleaved A/B/B/A to
             cancel load drift): `ingest_vs_plain`; unchanged re-ingest (library and CLI),
             real-vector recall of the vector index, query embedding time.
  search10k  10k generated chunks with synthetic unit vectors: hybrid / vector / FTS latency.
  search100k the same at 100k chunks, plus the NumPy brute-force floor and recall vs exact.
  turn10k    `Conversation.ask` without an LLM on the 10k library, 20 turns of history.
  startup    every command as a new process on the sample library (p50/p95 of --startup-runs runs,
             commands interleaved), next to the bare interpreter (`python -c pass`).
  search1m   opt-in (`--phases search1m`): 1M generated chunks (built once into --library-1m and
             reused: ~15 min, 5 GB), searched through the compact index: hybrid / vector / FTS, the
             first search of a process, peak RSS of the searching process; the NumPy float32 floor
             and recall vs exact in another process (the float matrix alone is 1.5 GB); a one-shot
             `ragchat ask` (model load included).
  vectors1m  opt-in, ~2 min: the compact index's stages alone on 1M synthetic vectors made in
             memory (no database): time against the NumPy float32 floor in the same process, and
             recall@10 vs exact.

Synthetic vectors (10k, 100k) are structured like real embeddings (a shared direction, topic,
document and section components, chunk noise), so neighbourhoods exist; queries are a chunk's
vector plus noise. Search latency uses precomputed query vectors (embedding reported apart).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

REPO = Path(__file__).resolve().parent.parent
RESULTS = Path(__file__).resolve().parent / "results.json"
PHASES = ("ingest", "search10k", "search100k", "turn10k", "startup")
OPT_IN = ("search1m", "vectors1m")  # not in the default run
DIM = 384
SEED = 20240605

# --- a corpus generator: prose from topic vocabularies ------------------------------------------

TOPICS: dict[str, list[str]] = {
    "water": "rainwater harvesting tank gutter filter irrigation drip catchment overflow pump "
    "cistern downpipe sediment chlorine borehole aquifer runoff roof mesh valve pressure litres "
    "drought greywater storage evaporation plumbing reservoir seepage inlet sump municipal".split(),
    "law": "will testator witness estate executor heir beneficiary codicil probate signature "
    "notary court affidavit inheritance guardian trust clause revocation deceased intestate "
    "master attorney bequest legacy competent jurisdiction statute registrar deed".split(),
    "energy": "insulation thermostat heat pump compressor refrigerant boiler radiator ducts "
    "draught kilowatt tariff solar panel inverter battery geyser efficiency audit glazing "
    "ventilation condensation loft meter appliance standby wattage circuit".split(),
    "baking": "sourdough starter flour dough crumb crust proofing gluten hydration levain oven "
    "yeast fermentation knead banneton scoring loaf rye wholemeal autolyse steam dutch culture "
    "bulk shaping preheat temperature salt".split(),
    "privacy": "personal information consent processing regulator breach data subject responsible "
    "party operator retention encryption notification lawful purpose minimisation access "
    "correction objection marketing cookies transfer safeguards audit compliance".split(),
    "medicine": "physician fee schedule reimbursement billing code telehealth practice expense "
    "relative value units malpractice anesthesia conversion factor payment claims outpatient "
    "therapy supervision modifier coding radiology specialty enrollment".split(),
    "homestead": "chickens coop compost garden seedlings mulch fence goats orchard pruning harvest "
    "preserving canning firewood well livestock pasture manure beehive honey greenhouse "
    "tillage soil fertility rotation grazing barn".split(),
    "networking": "router packet latency bandwidth firewall subnet gateway protocol switch "
    "ethernet wireless encryption certificate handshake dns address routing congestion "
    "throughput port vlan tunnel proxy socket timeout".split(),
    "astronomy": "telescope galaxy nebula orbit planet comet eclipse spectrum parallax magnitude "
    "supernova constellation meteor asteroid gravity redshift exoplanet observatory "
    "aperture eyepiece declination equinox quasar pulsar".split(),
    "finance": "budget interest mortgage pension dividend portfolio inflation savings loan credit "
    "equity bond tax deduction annuity premium liquidity volatility expense ledger invoice "
    "depreciation asset liability cashflow".split(),
}
COMMON = (
    "system process method result example level period practice approach condition season "
    "material structure sample pattern measure record range source factor feature value "
    "quality standard rule limit cost detail area amount surface section guide check step "
    "choose reduce increase prevent ensure require provide allow depend improve compare "
    "consider maintain replace measure install avoid follow recommend remain apply produce "
    "careful simple typical common important useful different several regular higher lower "
    "early later local annual small large"
).split()
FUNCTION = (
    "the the the of of and and to to a a in in is is that for it as with be on by this "
    "are was at from or an which can not should would may must have has but if when also "
    "more than each their its these most all other into only over such where then"
).split()
SYLLABLES = "ka lo mi ter ran sel vo din pra gen tu bel mor cas fin lex ul ner pol dav".split()


def _tail_words(count: int, rng: random.Random) -> list[str]:
    """Rare pseudo-words for a Zipf tail (names, jargon, typos of a real corpus)."""
    found: dict[str, None] = {}
    while len(found) < count:
        found["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(found)


class ProseGenerator:
    """Sentences, paragraphs and documents: function words, common words, a broad general
    vocabulary, a topic's words, a little of another topic, and a Zipf-distributed tail of rare
    words. A topic word is in ~75% of its topic's chunks, a common word in ~20% of all chunks, the
    commonest rare word in ~5%: like prose, if more token-heavy (pseudo-words split in pieces)."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        words = _tail_words(23_000, self.rng)
        self.general, self.tail = words[:3000], words[3000:]  # a broad vocabulary; rare words
        self.tail_weights = list(np.cumsum([1.0 / (rank + 50) for rank in range(len(self.tail))]))
        self.topics = list(TOPICS)

    def sentence(self, topic: str, other: str) -> str:
        rng, length = self.rng, self.rng.randint(8, 22)
        kinds = rng.choices("fcgTOt", weights=(48, 12, 9, 22, 3, 6), k=length)
        pools = {
            "f": FUNCTION,
            "c": COMMON,
            "g": self.general,
            "T": TOPICS[topic],
            "O": TOPICS[other],
        }
        tokens = [
            rng.choice(pools[k])
            if k != "t"
            else rng.choices(self.tail, cum_weights=self.tail_weights)[0]
            for k in kinds
        ]
        if length > 12 and rng.random() < 0.4:
            tokens[length // 2] += ","
        return (
            tokens[0].capitalize()
            + " "
            + " ".join(tokens[1:]).rstrip(",")
            + rng.choice("....?!")[0]
        )

    def paragraph(self, topic: str, other: str, sentences: int) -> str:
        return " ".join(self.sentence(topic, other) for _ in range(sentences))

    def heading(self, topic: str) -> str:
        first, second = self.rng.sample(TOPICS[topic], 2)
        return f"{first.capitalize()} and {second}"

    def pick_topics(self) -> tuple[str, str]:
        topic = self.rng.choice(self.topics)
        return topic, self.rng.choice([t for t in self.topics if t != topic])

    def markdown(self, sections: int) -> tuple[str, str]:
        """(topic, a markdown document with a title, sections and subsections)."""
        topic, other = self.pick_topics()
        parts = [f"# {self.heading(topic)} guide\n"]
        for _ in range(sections):
            parts.append(f"## {self.heading(topic)}\n")
            for _ in range(self.rng.randint(1, 3)):
                if self.rng.random() < 0.3:
                    parts.append(f"### {self.heading(topic)}\n")
                for _ in range(self.rng.randint(1, 3)):
                    parts.append(self.paragraph(topic, other, self.rng.randint(2, 6)) + "\n")
        return topic, "\n".join(parts)

    def question(self, topic: str) -> str:
        a, b = self.rng.sample(TOPICS[topic], 2)
        c = self.rng.choice(COMMON)
        return self.rng.choice(
            [
                f"How does {a} affect {b}?",
                f"What is the {c} of {a} in {b}?",
                f"Why should I {c} the {a}?",
                f"What should I know about {a} and {b}?",
                f"Which {c} matters most for {a}?",
                f"When is {a} {c} for {b}?",
                f"Explain {a} {c} in {b}",
            ]
        )

    def follow_up(self, topic: str) -> str:
        a = self.rng.choice(TOPICS[topic])
        c = self.rng.choice(COMMON)
        return self.rng.choice(
            [
                f"and what about the {a}?",
                f"how is that {c}?",
                f"does it need {a}?",
                f"what about {c} {a}?",
                f"is the {a} {c} then?",
            ]
        )


def write_corpus(folder: Path, target_chunks: int, seed: int, parts: int) -> list[Path]:
    """Markdown files in `parts` sub-folders holding about `target_chunks` chunks in total (as the
    default settings chunk them)."""
    from ragchat.config import Settings
    from ragchat.ingest.chunking import chunk_document
    from ragchat.ingest.loaders import load_document

    gen, settings = ProseGenerator(seed), Settings()
    folders = [folder / f"part{i}" for i in range(parts)]
    for sub in folders:
        sub.mkdir(parents=True, exist_ok=True)
    chunks, number = 0, 0
    while chunks < target_chunks:
        topic, text = gen.markdown(sections=gen.rng.randint(2, 6))
        path = folders[number % parts] / f"{number:04d}-{topic}.md"
        path.write_text(text, encoding="utf-8")
        parsed = load_document(path)
        chunks += len(
            chunk_document(parsed, settings.chunk_size, settings.chunk_max, settings.chunk_overlap)
        )
        number += 1
    return folders


# --- synthetic libraries: generated chunks, structured synthetic vectors ------------------------


@dataclass
class SyntheticDoc:
    title: str
    topic: int
    chunks: list[tuple[str, str]]  # (heading, text)
    sections: list[int]  # section index of each chunk


def synthetic_docs(total_chunks: int, seed: int) -> Iterator[SyntheticDoc]:
    gen = ProseGenerator(seed)
    made = 0
    while made < total_chunks:
        topic, other = gen.pick_topics()
        size = min(gen.rng.randint(4, 24), total_chunks - made)
        chunks, sections, section, heading = [], [], -1, ""
        for position in range(size):
            if position == 0 or gen.rng.random() < 0.3:
                section, heading = section + 1, gen.heading(topic)
            text = ""
            while len(text) < 800:
                text = (text + "\n\n" if text else "") + gen.paragraph(
                    topic, other, gen.rng.randint(2, 5)
                )
            chunks.append((heading, text[:1150].rsplit(" ", 1)[0] if len(text) > 1150 else text))
            sections.append(section)
        made += size
        yield SyntheticDoc(f"{gen.heading(topic)} guide", gen.topics.index(topic), chunks, sections)


class VectorFactory:
    """Unit vectors = shared direction + topic + document + section components + chunk noise.
    Cosine: ~0.65 within a section, ~0.5 within a document, ~0.25 within a topic, ~0.05 across."""

    WEIGHTS = {"shared": 0.05, "topic": 0.2, "document": 0.2, "section": 0.15, "noise": 0.4}

    def __init__(self, seed: int, topics: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.shared = self._unit(1)[0]
        self.topics = self._unit(topics)

    def _unit(self, count: int) -> np.ndarray:
        raw = self.rng.standard_normal((count, DIM)).astype(np.float32)
        return raw / np.linalg.norm(raw, axis=1, keepdims=True)

    def for_document(self, doc: SyntheticDoc) -> np.ndarray:
        w = {k: np.sqrt(v) for k, v in self.WEIGHTS.items()}
        sections = self._unit(max(doc.sections) + 1)
        vectors = (
            w["shared"] * self.shared
            + w["topic"] * self.topics[doc.topic]
            + w["document"] * self._unit(1)
            + w["section"] * sections[doc.sections]
            + w["noise"] * self._unit(len(doc.chunks))
        )
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)

    def queries(self, matrix: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
        """(chunk row each query was made from, unit query vectors near those chunks)."""
        rows = self.rng.choice(len(matrix), size=count, replace=False)
        noisy = matrix[rows] + 0.9 * self._unit(count)
        return rows, (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)


def build_synthetic_library(
    path: Path, total_chunks: int, seed: int, *, keywords: bool
) -> dict[str, Any]:
    """A library of generated chunks with synthetic vectors, written through library functions
    (so every table the write path keeps is filled); returns build timings."""
    from ragchat.embed import MINILM
    from ragchat.ingest.keywords import term_counts
    from ragchat.ingest.pipeline import refresh_keywords
    from ragchat.store import keywords, library, vectors
    from ragchat.store.db import open_db
    from ragchat.store.library import ChunkRecord, DocumentRecord
    from ragchat.store.transaction import write

    started = time.perf_counter()
    db = open_db(path)
    vectors.ensure_vector_table(db, MINILM, DIM)
    factory = VectorFactory(seed, len(TOPICS))
    count, documents = 0, 0
    with write(db):
        for number, doc in enumerate(synthetic_docs(total_chunks, seed)):
            records, offset = [], 0
            for ordinal, (heading, text) in enumerate(doc.chunks):
                records.append(ChunkRecord(ordinal, text, heading, offset, offset + len(text)))
                offset += len(text) + 2
            full = "\n\n".join(text for _, text in doc.chunks)
            record = DocumentRecord(
                source=f"/synthetic/{number:06d}.md",
                path=f"{number:06d}.md",
                root="/synthetic",
                title=doc.title,
                content_hash=f"{number:064x}",
                size=len(full),
                mtime=0.0,
                encoding="utf-8",
                term_counts=term_counts(full) if keywords else {},
            )
            library.replace_document(db, record, records, factory.for_document(doc))
            count, documents = count + len(records), documents + 1
    written = time.perf_counter() - started
    if keywords:
        refresh_keywords(db)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()
    return {
        "chunks": count,
        "documents": documents,
        "build_s": round(time.perf_counter() - started, 1),
        "write_s": round(written, 1),
        "db_bytes_per_chunk": round(path.stat().st_size / count),
    }


def load_matrix(db) -> tuple[np.ndarray, np.ndarray]:
    """(chunk ids, their vectors as one float32 matrix), straight from the vector table."""
    ids, rows = [], []
    for chunk_id, blob in db.execute(
        "SELECT chunk_id, embedding FROM chunk_vectors ORDER BY chunk_id"
    ):
        ids.append(chunk_id)
        rows.append(np.frombuffer(blob, dtype=np.float32))
    return np.asarray(ids), np.vstack(rows)


# --- measuring -----------------------------------------------------------------------------------


def percentiles(samples_s: Sequence[float]) -> dict[str, float]:
    ms = sorted(s * 1000 for s in samples_s)
    p95 = ms[min(len(ms) - 1, int(round(0.95 * (len(ms) - 1))))]
    return {"p50": round(statistics.median(ms), 2), "p95": round(p95, 2), "n": len(ms)}


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = fn()
    return time.perf_counter() - started, result


def peak_rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class NoEmbedder:
    """Search with precomputed query vectors must never embed."""

    model_id, dim = "none", DIM

    def embed(self, texts):  # pragma: no cover - a failure of the benchmark itself
        raise AssertionError("search embedded a query although a vector was given")

    embed_query = embed


class TimedEmbedder:
    """Wraps an embedder and records the time of every call (cache hits included,
    they are cheap)."""

    def __init__(self, inner) -> None:
        self.inner, self.durations = inner, []
        self.model_id, self.dim = inner.model_id, inner.dim

    def embed(self, texts):
        return self._time(lambda: self.inner.embed(texts))

    def embed_query(self, text):
        return self._time(lambda: self.inner.embed_query(text))

    def _time(self, fn):
        seconds, result = timed(fn)
        self.durations.append(seconds)
        return result


def bench_settings(db: Path, **changes):
    from ragchat.config import Settings

    return Settings(db=db, ollama="off").replace(**changes)


def overlap_at_10(found: Sequence[int], exact: Sequence[int]) -> float:
    return len(set(found[:10]) & set(exact[:10])) / max(1, min(10, len(exact)))


# --- phase: ingest -------------------------------------------------------------------------------


def chunk_texts(folder: Path, settings) -> list[str]:
    """The texts `ingest` embeds for this folder: embedding_text of every chunk, file order."""
    from ragchat.ingest.chunking import chunk_document, embedding_text
    from ragchat.ingest.loaders import load_document

    texts = []
    for path in sorted(folder.glob("*.md")):
        parsed = load_document(path)
        chunks = chunk_document(
            parsed, settings.chunk_size, settings.chunk_max, settings.chunk_overlap
        )
        texts.extend(embedding_text(parsed.title, chunk) for chunk in chunks)
    return texts


def plain_fastembed(settings):
    """The naive floor ingest is measured against: fastembed's TextEmbedding on the same model
    files, called on the texts in document order with batch 16, vectors collected."""
    from fastembed import TextEmbedding

    from ragchat.embed import locate_model

    location = locate_model(settings)
    options = {"specific_model_path": str(location.path)} if location.path else {}
    model = TextEmbedding(location.model_id, **options)
    return lambda texts: np.asarray(list(model.embed(list(texts), batch_size=16)), dtype=np.float32)


def phase_ingest(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Ingest the corpus part by part, each part's ingest next to the plain fastembed call on the
    same chunk texts, in the order P I I P P I I P (load drift on a shared machine hits both sides
    alike); then re-ingest it all unchanged."""
    from ragchat.embed import load_embedder
    from ragchat.ingest.pipeline import ingest
    from ragchat.store import library
    from ragchat.store.db import open_db

    corpus, db_path = work / "corpus", work / "ingest.db"
    parts = write_corpus(corpus, args.ingest_chunks, SEED, parts=4)
    settings = bench_settings(db_path)
    embedder = load_embedder(settings)
    texts = [chunk_texts(part, settings) for part in parts]
    embedder.embed(texts[0][:16])  # warm-up: ONNX session, allocator, caches
    db = open_db(db_path)
    direct, ingested = {"s": 0.0, "chunks": 0, "peak_rss_mb": 0.0}, {"s": 0.0, "chunks": 0}
    for number, part in enumerate(parts):
        for step in ("direct", "ingest") if number % 2 == 0 else ("ingest", "direct"):
            if step == "direct":  # in its own process, so each side's peak memory is its own
                plain = _plain_subprocess(part, db_path)
                assert plain["chunks"] == len(texts[number]), (plain["chunks"], len(texts[number]))
                direct["s"] += plain["s"]
                direct["chunks"] += plain["chunks"]
                direct["peak_rss_mb"] = max(direct["peak_rss_mb"], plain["peak_rss_mb"])
            else:
                seconds, report = timed(lambda: ingest(db, settings, [part], lambda: embedder))
                assert report.chunks == len(texts[number]), (report.chunks, len(texts[number]))
                ingested["s"] += seconds
                ingested["chunks"] += report.chunks
    db.close()
    files = sum(len(list(part.glob("*.md"))) for part in parts)
    reingest_s, again = timed(lambda: _reingest(db_path, settings, corpus))
    assert not again.added and not again.updated and len(again.unchanged) == files, again
    cli_s = _cli_reingest(db_path, corpus)
    db = open_db(db_path)
    recall, query_embed = _real_vector_checks(db, embedder, args.queries)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    chunks = library.chunk_count(db)
    db.close()
    direct_rate, ingest_rate = direct["chunks"] / direct["s"], ingested["chunks"] / ingested["s"]
    return {
        "files": files,
        "chunks": chunks,
        "plain_embedded_chunks": direct["chunks"],
        "plain_fastembed_chunks_per_s": round(direct_rate, 2),
        "ingest_chunks_per_s": round(ingest_rate, 2),
        "ingest_vs_plain": round(ingest_rate / direct_rate, 3),
        "ingest_s": round(ingested["s"], 1),
        "embed_batch": settings.embed_batch,
        "plain_fastembed_peak_rss_mb": direct["peak_rss_mb"],
        "reingest_s": round(reingest_s, 3),
        "reingest_cli_s": round(cli_s, 3),
        "db_bytes_per_chunk": round(db_path.stat().st_size / chunks),
        "recall_at_10_vs_exact_real_2k": recall,
        "query_embed_ms": query_embed,
        "peak_rss_mb": peak_rss_mb(),
    }


def _plain_subprocess(part: Path, db_path: Path) -> dict[str, Any]:
    command = [sys.executable, __file__, "--plain-embed", str(part), "--work", str(db_path)]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise RuntimeError(f"plain fastembed failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def plain_embed_part(part: Path, db_path: Path) -> dict[str, Any]:
    """The plain fastembed call on one part's chunk texts (model loaded and warmed up first)."""
    settings = bench_settings(db_path)
    plain = plain_fastembed(settings)
    texts = chunk_texts(part, settings)
    plain(texts[:16])
    seconds, _ = timed(lambda: plain(texts))
    return {"chunks": len(texts), "s": seconds, "peak_rss_mb": peak_rss_mb()}


def _reingest(db_path: Path, settings, corpus: Path):
    """An unchanged re-ingest as the CLI does it: open the database, ingest, close."""
    from ragchat.embed import load_embedder
    from ragchat.ingest.pipeline import ingest
    from ragchat.store.db import open_db

    db = open_db(db_path)
    try:
        return ingest(db, settings, [corpus], lambda: load_embedder(settings))
    finally:
        db.close()


def _cli_reingest(db_path: Path, corpus: Path) -> float:
    """Wall time of `ragchat ingest` in a fresh process (Python start-up and imports included)."""
    cli = Path(sys.executable).parent / "ragchat"
    command = [str(cli)] if cli.exists() else [sys.executable, "-m", "ragchat.cli"]
    env = {**os.environ, "RAGCHAT_OLLAMA": "off"}
    seconds, done = timed(
        lambda: subprocess.run(
            [*command, "ingest", str(corpus), "--db", str(db_path)],
            capture_output=True,
            text=True,
            env=env,
        )
    )
    if done.returncode != 0:
        raise RuntimeError(f"ragchat ingest failed: {done.stderr or done.stdout}")
    return seconds


def _real_vector_checks(db, embedder, count: int) -> tuple[dict, dict]:
    """Real questions embedded with the real model against the real vectors: recall of the vector
    index vs exact cosine, and the time to embed one query."""
    gen = ProseGenerator(SEED + 1)
    questions = list(
        dict.fromkeys(gen.question(gen.rng.choice(gen.topics)) for _ in range(count * 2))
    )[:count]
    samples, vectors = [], []
    for question in questions:
        seconds, vector = timed(lambda: embedder.embed([question])[0])
        samples.append(seconds)
        vectors.append(vector)
    ids, matrix = load_matrix(db)
    return _recall(db, ids, matrix, np.asarray(vectors)), percentiles(samples[5:])


def _recall(db, ids: np.ndarray, matrix: np.ndarray, queries: np.ndarray) -> dict[str, float]:
    """How often the vector index's top 10 (asked for 10, and for the 40 hybrid asks for) equals
    exact cosine search's top 10; and the mean overlap."""
    from ragchat.store import vectors

    same, overlap = {10: 0, 40: 0}, []
    for query in queries:
        exact = list(ids[np.argsort(-(matrix @ query))[:10]])
        for depth in same:
            found = [chunk_id for chunk_id, _ in vectors.vector_search(db, query, depth)][:10]
            same[depth] += set(found) == set(exact)
            if depth == 40:
                overlap.append(overlap_at_10(found, exact))
    return {
        "identical_top10": round(min(same.values()) / len(queries), 4),
        "identical_top10_k10": round(same[10] / len(queries), 4),
        "identical_top10_k40": round(same[40] / len(queries), 4),
        "mean_recall_at_10": round(float(np.mean(overlap)), 4),
        "queries": len(queries),
    }


# --- phases: search -------------------------------------------------------------------------------


def phase_search(work: Path, args: argparse.Namespace, size: int, label: str) -> dict[str, Any]:
    """Hybrid, vector and FTS search through `search()` (query order rotated), the bare
    `vectors.vector_search`, and the exact vec0 KNN that a one-shot process (`ragchat ask`) uses
    before the vectors are loaded into memory; then the NumPy floor and recall vs exact."""
    from ragchat.store import vectors
    from ragchat.store.db import open_db

    db_path = work / f"lib{label}.db"
    build = build_synthetic_library(db_path, size, SEED + size, keywords=label == "10k")
    db = open_db(db_path)
    settings = bench_settings(db_path)
    ids, matrix = load_matrix(db)
    factory = VectorFactory(SEED + 7, len(TOPICS))
    rows, queries = factory.queries(matrix, args.queries + args.warmup)
    requests = _requests(db, ids[rows], queries)
    depth = max(settings.candidates, settings.top_k)
    first_s = timed(lambda: vectors.vector_search(db, queries[0], depth))[0]
    load_s = timed(lambda: vectors.vector_search(db, queries[0], depth))[0]  # loads the vectors
    steps = ("hybrid", "vector", "fts", "knn", "vec0", "numpy")
    samples: dict[str, list[float]] = {name: [] for name in steps}
    for number, request in enumerate(requests):
        for step in steps[number % 6 :] + steps[: number % 6]:  # rotated: none always runs first
            samples[step].append(
                timed(lambda: _search_step(db, settings, request, step, depth, matrix))[0]
            )
    floor, floor_how = _numpy_floor(
        samples.pop("numpy"), matrix, [r.vector for r in requests], depth
    )
    cut = args.warmup
    recall = _recall(db, ids, matrix, queries[cut:])
    matched = _match_fraction(db, requests[cut:], len(ids))
    db.close()
    names = {"knn": "vector_knn", "vec0": "vector_vec0"}
    figures = {
        f"{names.get(step, step)}_{label}": percentiles(values[cut:])
        for step, values in samples.items()
    }
    figures[f"numpy_floor_{label}"] = {**percentiles(floor[cut:]), "measured": floor_how}
    return {
        "search_ms": figures,
        "recall_at_10_vs_exact": recall,
        "fts_match_fraction": matched,
        "build": build,
        "first_vector_search_ms": round(first_s * 1000, 1),
        "vectors_to_memory_s": round(load_s, 3),
        "peak_rss_mb": peak_rss_mb(),
    }


def _search_step(db, settings, request, step: str, depth: int, matrix: np.ndarray) -> Any:
    from dataclasses import replace

    from ragchat.search.hybrid import search
    from ragchat.store import vectors

    if step in ("hybrid", "vector", "fts"):
        return search(db, NoEmbedder(), settings, replace(request, mode=step))
    if step == "knn":
        return vectors.vector_search(db, request.vector, depth)
    if step == "numpy":
        return _numpy_top(matrix, request.vector, depth)
    return db.execute(
        f"SELECT chunk_id, distance FROM {vectors.VECTOR_TABLE} WHERE embedding MATCH ? AND k = ? "
        "ORDER BY distance",
        [vectors.to_blob(request.vector), depth],
    ).fetchall()


def _numpy_floor(
    interleaved: list[float], matrix: np.ndarray, queries: Sequence[np.ndarray], k: int
) -> tuple[list[float], str]:
    """Plain NumPy brute force (`matrix @ q`, argpartition, sort of the top k), timed interleaved
    with the searches and again in a tight loop of its own (warm caches, BLAS threads awake):
    the faster of the two is the floor."""
    tight = [timed(lambda: _numpy_top(matrix, q, k))[0] for q in queries]
    if statistics.median(tight) < statistics.median(interleaved):
        return tight, "tight loop"
    return interleaved, "interleaved"


def _numpy_top(matrix: np.ndarray, vector: np.ndarray, k: int) -> np.ndarray:
    scores = matrix @ vector
    top = np.argpartition(-scores, k)[:k]
    return top[np.argsort(-scores[top])]


def _requests(db, chunk_ids: np.ndarray, vectors: np.ndarray) -> list:
    """One request per query vector. Its keyword query is what the reformulator would send for
    a question about the chunk the vector was made from: two of its topic words, often one
    common word, sometimes a rare one; the semantic query is a question (only its text: the
    vector is given)."""
    from ragchat.search.hybrid import SearchRequest
    from ragchat.store import library
    from ragchat.text import content_words

    rng = random.Random(SEED)
    topical, common = {w for ws in TOPICS.values() for w in ws}, set(COMMON)
    chunks = library.chunks_by_ids(db, [int(i) for i in chunk_ids])
    requests = []
    for chunk_id, vector in zip(chunk_ids, vectors):
        present = list(dict.fromkeys(content_words(chunks[int(chunk_id)].text)))
        kinds = [
            [w for w in present if w in topical],
            [w for w in present if w in common],
            [w for w in present if w not in topical and w not in common],
        ]
        picked = rng.sample(kinds[0], min(2, len(kinds[0])))
        for pool, chance in ((kinds[1], 0.5), (kinds[2], 0.3)):
            if pool and rng.random() < chance:
                picked.append(rng.choice(pool))
        requests.append(
            SearchRequest(
                semantic_query=f"what about {' '.join(picked)}?",
                keyword_query=", ".join(picked),
                vector=vector,
            )
        )
    return requests


def _match_fraction(db, requests: Sequence, total: int) -> dict[str, float]:
    """Share of all chunks the FTS queries match (what FTS5 must score): median and p95."""
    from ragchat.search.fts import build_match
    from ragchat.store import library

    shares = sorted(
        library.fts_chunk_frequency(db, build_match(r.keyword_query) or '""') / total
        for r in requests
    )
    return {
        "p50": round(shares[len(shares) // 2], 3),
        "p95": round(shares[int(0.95 * (len(shares) - 1))], 3),
    }


# --- phase: search1m (opt-in) ---------------------------------------------------------------------


def phase_search1m(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Build (or reuse) the 1M library, then measure in separate processes: the searches (compact
    index), the float32 floor with exact ground truth, and one-shot `ragchat ask`."""
    library_path = Path(args.library_1m) if args.library_1m else work / "lib1m.db"
    build = None
    if not library_path.exists():
        build = build_synthetic_library(library_path, 1_000_000, SEED + 1_000_000, keywords=False)
    built = _child("search1m-build", work, args)  # as an ingest would: not in the searching one
    searched = _child("search1m-search", work, args)
    floor = _child("search1m-floor", work, args)
    ask_s = []
    for number in range(3):  # the first may find the page cache cold; report the median
        command = [str(Path(sys.executable).with_name("ragchat")), "ask", "--db"]
        question = f"how do I maintain the rainwater tank filter {number}?"
        env = {**os.environ, "RAGCHAT_OLLAMA": "off", "PYTHONPATH": str(REPO)}
        seconds, done = timed(
            lambda: subprocess.run(
                [*command, str(library_path), "--session", "bench1m", question],
                capture_output=True,
                text=True,
                env=env,
            )
        )
        if done.returncode != 0:
            raise SystemExit(f"ask failed: {done.stderr}")
        ask_s.append(seconds)
    search_ms = {**searched["search_ms"], "numpy_floor_1m": floor["numpy_floor_1m"]}
    return {
        "search_ms": search_ms,
        "recall_at_10_vs_exact": floor["recall"],
        "vector_vs_floor_1m": round(
            search_ms["vector_1m"]["p50"] / floor["numpy_floor_1m"]["p50"], 2
        ),
        "first_vector_search_ms": searched["first_vector_search_ms"],
        "compact_index_build_s": built["compact_index_build_s"],
        "build_peak_rss_mb": built["peak_rss_mb"],
        "fts_match_fraction": searched["fts_match_fraction"],
        "fts_same_as_whole_query": searched["fts_same_as_whole_query"],
        "ask_1m_s": round(statistics.median(ask_s), 2),
        "ask_1m_runs_s": [round(seconds, 2) for seconds in ask_s],
        "peak_rss_mb": searched["peak_rss_mb"],
        "floor_peak_rss_mb": floor["peak_rss_mb"],
        "build": build,
    }


def phase_vectors1m(args: argparse.Namespace, size: int = 1_000_000) -> dict[str, Any]:
    """The compact index without the database: quantise 1M structured vectors, then per query the
    bits and int8 stages and the exact rescoring (from the float matrix here, from vec0 in
    ragchat) against `matrix @ q`, interleaved."""
    from ragchat.params import SCALE
    from ragchat.store import compact

    factory = VectorFactory(SEED + size, len(TOPICS))
    blocks, made, rng = [], 0, random.Random(SEED + size)
    while made < size:  # documents shaped as synthetic_docs makes them, without their text
        count = min(rng.randint(4, 24), size - made)
        sections = [0]
        for _ in range(count - 1):
            sections.append(sections[-1] + (rng.random() < 0.3))
        doc = SyntheticDoc("", rng.randrange(len(TOPICS)), [("", "")] * count, sections)
        blocks.append(factory.for_document(doc))
        made += count
    matrix = np.vstack(blocks)
    del blocks
    ids = np.arange(1, len(matrix) + 1)
    parts = ((ids[s : s + 65536], matrix[s : s + 65536]) for s in range(0, len(ids), 65536))
    build_s, index = timed(lambda: compact.quantise("bench", parts, len(ids), DIM))
    assert index is not None
    _, queries = factory.queries(matrix, args.queries + args.warmup)
    depth, found, floor, overlap = 40, [], [], []
    for query in queries:
        seconds, top = timed(lambda: _compact_top(index, matrix, query, depth, SCALE.rescore))
        found.append(seconds)
        seconds, exact = timed(lambda: _numpy_top(matrix, query, depth))
        floor.append(seconds)
        overlap.append(overlap_at_10(list(top), list(exact)))
    cut = args.warmup
    return {
        "search_ms": {
            "compact_vectors_1m": percentiles(found[cut:]),
            "numpy_floor_vectors_1m": percentiles(floor[cut:]),
        },
        "compact_vs_floor_1m": round(
            statistics.median(found[cut:]) / statistics.median(floor[cut:]), 2
        ),
        "recall_at_10_vs_exact": round(float(np.mean(overlap[cut:])), 4),
        "index_mb": round(
            sum(getattr(index, n).nbytes for n in ("ids", "inverse_norms", "bits", "codes")) / 2**20
        ),
        "build_s": round(build_s, 1),
        "peak_rss_mb": peak_rss_mb(),
    }


def _compact_top(index, matrix: np.ndarray, query: np.ndarray, k: int, rescore: int) -> np.ndarray:
    rows = index.candidates(query, max(rescore, 2 * k))
    exact = matrix[rows] @ query
    return rows[np.lexsort((rows, -exact))][:k]


def _child(phase: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [sys.executable, __file__, "--phase", phase, "--work", str(work)]
    command += ["--queries", str(args.queries), "--warmup", str(args.warmup)]
    command += ["--library-1m", str(args.library_1m or work / "lib1m.db")]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"phase {phase} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _search1m_build(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The compact index file, built when missing or stale (as the end of an ingest does)."""
    from ragchat.store import compact, vectors
    from ragchat.store.db import open_db

    db = open_db(args.library_1m)
    index_file = compact.path_of(db)
    built_s = None
    stale = compact.load(index_file) if index_file else None
    if stale is None or stale.version != vectors.get_setting(db, "vectors_version"):
        built_s, _ = timed(lambda: vectors.index_of(db).refresh())
    db.close()
    return {
        "compact_index_build_s": round(built_s, 1) if built_s is not None else None,
        "peak_rss_mb": peak_rss_mb(),
    }


def _search1m_search(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """The ragchat side (the compact index file made beforehand): first search of the process,
    then hybrid / vector / FTS through `search()`."""
    from ragchat.store import vectors
    from ragchat.store.db import open_db

    db = open_db(args.library_1m)
    rng = np.random.default_rng(SEED + 7)
    ids = np.array([row[0] for row in db.execute("SELECT id FROM chunks")])
    picked = np.sort(rng.choice(ids, size=args.queries + args.warmup, replace=False))
    stored = vectors.vectors_of(db, [int(i) for i in picked])
    rows = np.vstack([stored[int(i)] for i in picked])
    noisy = rows + 0.9 * VectorFactory(SEED + 7, len(TOPICS))._unit(len(rows))
    queries = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    order = rng.permutation(len(picked))
    picked, queries = picked[order], queries[order]
    settings = bench_settings(Path(args.library_1m))
    depth = max(settings.candidates, settings.top_k)
    first_s = timed(lambda: vectors.vector_search(db, queries[0], depth))[0]
    requests = _requests(db, picked, queries)
    steps = ("hybrid", "vector", "fts")
    samples: dict[str, list[float]] = {name: [] for name in steps}
    for number, request in enumerate(requests):
        for step in steps[number % 3 :] + steps[: number % 3]:
            samples[step].append(
                timed(lambda: _search_step(db, settings, request, step, depth, queries))[0]
            )
    cut = args.warmup
    found = [[i for i, _ in vectors.vector_search(db, q, depth)][:10] for q in queries[cut:]]
    np.save(work / "search1m-queries.npy", queries[cut:])
    np.save(work / "search1m-found.npy", np.array(found, dtype=np.int64))
    matched = _match_fraction(db, requests[cut:], len(ids))
    fts_same = _fts_same_as_whole(db, requests[cut:][:100], depth)
    db.close()
    return {
        "search_ms": {f"{k}_1m": percentiles(v[cut:]) for k, v in samples.items()},
        "fts_same_as_whole_query": fts_same,
        "first_vector_search_ms": round(first_s * 1000, 1),
        "fts_match_fraction": matched,
        "peak_rss_mb": peak_rss_mb(),
    }


def _fts_same_as_whole(db, requests: Sequence, depth: int) -> dict[str, float]:
    """How often keyword search (which scores only the chunks of a query's rarer terms when its
    terms are held by many chunks) finds the same top 10 and top `depth`, in the same order, as
    BM25 over the whole OR query (every chunk holding any term scored)."""
    from ragchat.params import SCALE
    from ragchat.search.fts import match_terms, rarer_terms
    from ragchat.search.hybrid import _shares, fts_ranking
    from ragchat.store import library

    top10 = whole_depth = 0
    for request in requests:
        quoted = match_terms(request.keyword_query)
        kept = rarer_terms(quoted, _shares(db, quoted), SCALE.common_term_share)
        whole = [i for i, _ in library.fts_search(db, " OR ".join(kept), depth)]
        found = fts_ranking(db, request.keyword_query, depth)
        top10 += found[:10] == whole[:10]
        whole_depth += found == whole
    return {
        "identical_top10": round(top10 / len(requests), 4),
        f"identical_top{depth}": round(whole_depth / len(requests), 4),
        "queries": len(requests),
    }


def _search1m_floor(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Exact float32 search over the whole matrix: the floor, and the truth for recall@10."""
    from ragchat.store.db import open_db

    db = open_db(args.library_1m)
    ids, matrix = load_matrix(db)
    db.close()
    queries = np.load(work / "search1m-queries.npy")
    found = np.load(work / "search1m-found.npy")
    floor = [timed(lambda: _numpy_top(matrix, q, 40))[0] for q in queries]
    overlap, same = [], 0
    for query, top in zip(queries, found):
        exact = ids[_numpy_top(matrix, query, 10)]
        overlap.append(overlap_at_10(list(top), list(exact)))
        same += set(top.tolist()) == set(exact.tolist())
    return {
        "numpy_floor_1m": {**percentiles(floor), "measured": "tight loop"},
        "recall": {
            "mean_recall_at_10": round(float(np.mean(overlap)), 4),
            "identical_top10": round(same / len(queries), 4),
            "queries": len(queries),
        },
        "peak_rss_mb": peak_rss_mb(),
    }


# --- phase: turn ----------------------------------------------------------------------------------


def phase_turn(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """`Conversation.ask` (heuristic reformulation, extractive answer) on the 10k library, its
    vectors rebuilt in the real model's space so real questions find their chunks; every timed
    turn has 20 turns of history (each is deleted again after it is timed)."""
    from ragchat.app import App
    from ragchat.conversation.turn import Conversation
    from ragchat.store import keywords

    source = work / "lib10k.db"
    if not source.exists():
        build_synthetic_library(source, 10_000, SEED + 10_000, keywords=True)
    db_path = work / "turn10k.db"
    shutil.copyfile(source, db_path)
    app = App(bench_settings(db_path))
    prepare_s = timed(lambda: _real_space_vectors(app.db, app.embedder))[0]
    missing = keywords.keywords_without_vectors(app.db)
    keyword_s = timed(
        lambda: keywords.put_keyword_vectors(app.db, missing, app.embedder.embed(missing))
    )[0]
    embedder = TimedEmbedder(app.embedder)
    conversation = Conversation(app.db, embedder, app.settings, "bench")
    questions = _turn_questions(args.turns + 20 + args.warmup)
    for question in questions[:20]:
        conversation.ask(question)  # the 20 previous turns
    totals, calls, plans, weak = [], [], {}, 0
    for number, question in enumerate(questions[20:]):
        before = len(embedder.durations)
        seconds, result = timed(lambda: conversation.ask(question))
        _forget_turn(app.db, result)  # the history stays at 20 turns
        if number >= args.warmup:
            totals.append(seconds)
            calls.append(embedder.durations[before:])
            plans[result.lineage.plan] = plans.get(result.lineage.plan, 0) + 1
            weak += result.lineage.weak
    slow = _turns_with_slow_model(app, questions[20:], args)
    app.close()
    embedding = [sum(c) for c in calls]
    answer = [c[-1] for c in calls]  # the last call embeds the answer for the history window
    return {
        **slow,
        "turn_ms_10k": percentiles(totals),
        "turn_embedding_ms_10k": percentiles(embedding),
        "turn_answer_embedding_ms_10k": percentiles(answer),
        "turn_question_embedding_ms_10k": percentiles([sum(c[:-1]) for c in calls]),
        "turn_without_embedding_ms_10k": percentiles([t - e for t, e in zip(totals, embedding)]),
        "turn_without_answer_embedding_ms_10k": percentiles(
            [t - a for t, a in zip(totals, answer)]
        ),
        "turn_embedding_share": round(sum(embedding) / sum(totals), 3),
        "turn_embed_calls": round(statistics.mean(len(c) for c in calls), 2),
        "turn_plans": plans,
        "turn_weak_share": round(weak / len(totals), 3),
        "setup": {
            "vectors_s": round(prepare_s, 1),
            "keywords": len(missing),
            "keywords_embed_s": round(keyword_s, 1),
        },
        "peak_rss_mb": peak_rss_mb(),
    }


SLOW_MODEL_S = 0.3  # how long the replayed model thinks before its reformulation reply


def _turns_with_slow_model(
    app, questions: Sequence[str], args: argparse.Namespace
) -> dict[str, Any]:
    """Turns with a model that takes SLOW_MODEL_S to reformulate (the project's Ollama-protocol
    server on 127.0.0.1, the real client), taking turns with the same questions and no model:
    what the turn adds to the model's own time, against a turn without a model. Both store a
    recorded answer, so only reformulation and retrieval differ."""
    from ragchat.conversation.turn import Conversation
    from ragchat.llm import OllamaBackend

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from ollama_server import Content, FakeOllama, Slow  # the tests' server: real HTTP

    recorded = "Noted."
    count = max(args.turns // 4, 10)
    with FakeOllama("bench-model") as server:
        backend = OllamaBackend(server.url, "bench-model", timeout=10)
        with_model = Conversation(
            app.db,
            app.embedder,
            app.settings.replace(ollama="on"),
            "bench-slow",
            backend=backend,
            recorded_answer=recorded,
        )
        without = Conversation(
            app.db,
            app.embedder,
            app.settings.replace(ollama="off"),
            "bench-none",
            recorded_answer=recorded,
        )
        for question in questions[:3]:  # some history, so the model is asked
            with_model.ask(question)
            without.ask(question)
        totals, beyond, plain = [], [], []
        for question in questions[3 : 3 + count]:
            reply = {
                "semantic_query": f"{question} (rewritten)",
                "is_follow_up": True,
                "is_meta": False,
                "topic_shift": False,
            }
            server.default = lambda request, reply=reply: Slow(
                SLOW_MODEL_S, Content(json.dumps(reply))
            )
            seconds, result = timed(lambda: with_model.ask(question))
            _forget_turn(app.db, result)
            totals.append(seconds)
            beyond.append(seconds - result.lineage.timings_ms["model"] / 1000)
            seconds, result = timed(lambda: without.ask(question))
            _forget_turn(app.db, result)
            plain.append(seconds)
    return {
        "turn_slow_model_ms_10k": percentiles(totals),
        "turn_beyond_model_ms_10k": percentiles(beyond),
        "turn_recorded_answer_ms_10k": percentiles(plain),
        "slow_model_ms": SLOW_MODEL_S * 1000,
    }


def _real_space_vectors(db, embedder) -> None:
    """Replace the synthetic chunk vectors by vectors in the model's space: the mean of the real
    embeddings of the topic words a chunk holds (as often as it holds them), plus noise of its
    own; written with vectors.put_vectors like a re-embedding would."""
    from ragchat.store.vectors import put_vectors
    from ragchat.text import words

    vocabulary = sorted({w for ws in TOPICS.values() for w in ws})
    word_vectors = dict(zip(vocabulary, embedder.embed(vocabulary)))
    rng = np.random.default_rng(SEED)
    ids, vectors = [], []
    for chunk_id, _, _, heading, text in db.execute(
        "SELECT c.id, c.document_id, d.title, c.heading, c.text FROM chunks c "
        "JOIN documents d ON d.id = c.document_id ORDER BY c.id"
    ).fetchall():
        present = [word_vectors[w] for w in words(f"{heading} {text}") if w in word_vectors]
        mean = np.mean(present, axis=0) if present else np.zeros(DIM, dtype=np.float32)
        mean = mean / max(float(np.linalg.norm(mean)), 1e-9)
        noise = rng.standard_normal(DIM).astype(np.float32)
        vector = mean + 0.6 * noise / np.linalg.norm(noise)
        ids.append(chunk_id)
        vectors.append(vector / np.linalg.norm(vector))
    put_vectors(db, ids, np.asarray(vectors, dtype=np.float32))


def _turn_questions(count: int) -> list[str]:
    """A conversation: a question, a follow-up or two, now and then a new topic; all distinct
    (identical texts would hit the query-embedding cache)."""
    gen = ProseGenerator(SEED + 2)
    questions: list[str] = []
    topic = gen.rng.choice(gen.topics)
    while len(questions) < count:
        if gen.rng.random() < 0.3:
            topic = gen.rng.choice(gen.topics)
        text = gen.question(topic) if gen.rng.random() < 0.6 else gen.follow_up(topic)
        if text not in questions:
            questions.append(text)
    return questions


def _forget_turn(db, result) -> None:
    from ragchat.store.transaction import write

    with write(db):
        db.execute(
            "DELETE FROM messages WHERE id IN (?, ?)",
            [result.user_message_id, result.assistant_message_id],
        )


# --- phase: startup -------------------------------------------------------------------------------

STARTUP_COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "config": ["config"],
    "sessions": ["sessions"],
    "inspect": ["inspect", "last-turn"],
    "search": ["search", "who may witness a will"],
    "ask": ["ask", "what age must a witness be?", "--session", "bench"],
}


def phase_startup(work: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Wall time of each command as a new process on the sample library, as a user runs it (default
    settings: Ollama `auto`, so `ask` tries it; none listens here), and of `python -c pass`. The
    commands take turns, run after run, so load drift hits them alike."""
    cli = Path(sys.executable).parent / "ragchat"
    base = [str(cli)] if cli.exists() else [sys.executable, "-m", "ragchat.cli"]
    db = work / "startup" / "library.db"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("RAGCHAT_")},
        "XDG_CONFIG_HOME": str(work / "startup" / "config"),
        "RAGCHAT_DB": str(db),
    }
    setup = [
        ["ingest", str(REPO / "sample_docs")],
        ["ask", "who may witness a will?", "--session", "bench"],
    ]
    for command in setup:
        done = subprocess.run([*base, *command], capture_output=True, text=True, env=env)
        if done.returncode != 0:
            raise RuntimeError(f"ragchat {command[0]} failed: {done.stderr or done.stdout}")
    commands = {
        "python": [sys.executable, "-c", "pass"],
        **{k: [*base, *v] for k, v in STARTUP_COMMANDS.items()},
    }
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.startup_runs + 1):  # the first round warms the page cache, not counted
        for name, command in commands.items():
            seconds, done = timed(
                lambda command=command: subprocess.run(
                    command, capture_output=True, text=True, env=env
                )
            )
            if done.returncode != 0:
                raise RuntimeError(f"{name} failed: {done.stderr or done.stdout}")
            samples[name].append(seconds)
    return {
        "startup_s": {name: _seconds(values[1:]) for name, values in samples.items()},
        "peak_rss_mb": peak_rss_mb(),
    }


def _seconds(samples: Sequence[float]) -> dict[str, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {"p50": round(statistics.median(ordered), 3), "p95": round(p95, 3), "n": len(ordered)}


# --- running the phases and reporting -------------------------------------------------------------


def run_phase(name: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    if name == "ingest":
        return phase_ingest(work, args)
    if name == "search10k":
        return phase_search(work, args, 10_000, "10k")
    if name == "search100k":
        return phase_search(work, args, 100_000, "100k")
    if name == "turn10k":
        return phase_turn(work, args)
    if name == "startup":
        return phase_startup(work, args)
    if name == "search1m":
        return phase_search1m(work, args)
    if name == "vectors1m":
        return phase_vectors1m(args)
    if name in ("search1m-build", "search1m-search", "search1m-floor"):
        return {
            "search1m-build": _search1m_build,
            "search1m-search": _search1m_search,
            "search1m-floor": _search1m_floor,
        }[name](work, args)
    raise SystemExit(f"unknown phase {name}")


def machine() -> dict[str, Any]:
    import importlib.metadata as meta

    import sqlite_utils.utils

    def version(package: str) -> str:
        try:
            return meta.version(package)
        except meta.PackageNotFoundError:
            return "-"

    cpu = next(
        (
            line.split(":", 1)[1].strip()
            for line in _read_lines("/proc/cpuinfo")
            if line.startswith("model name")
        ),
        platform.processor(),
    )
    return {
        "platform": platform.platform(),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory_gb": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
        "python": platform.python_version(),
        "sqlite": sqlite_utils.utils.sqlite3.sqlite_version,
        "sqlite_driver": sqlite_utils.utils.sqlite3.__name__,
        "versions": {
            p: version(p)
            for p in ("ragchat", "sqlite-vec", "sqlite-utils", "fastembed", "onnxruntime", "numpy")
        },
    }


def _read_lines(path: str) -> list[str]:
    try:
        return Path(path).read_text().splitlines()
    except OSError:
        return []


def merge(results: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ingest, s10, s100, turn, startup = (results.get(p, {}) for p in PHASES)
    s1m = results.get("search1m", {})
    search_ms = {
        **s10.get("search_ms", {}),
        **s100.get("search_ms", {}),
        **s1m.get("search_ms", {}),
    }
    figures: dict[str, Any] = {
        "ingest_vs_plain": ingest.get("ingest_vs_plain"),
        "reingest_s": ingest.get("reingest_s"),
        "startup_s": startup.get("startup_s"),
        "search_ms": search_ms,
        "turn_ms_10k": turn.get("turn_ms_10k"),
        "recall_at_10_vs_exact": {
            "1m": s1m.get("recall_at_10_vs_exact"),
            "100k": s100.get("recall_at_10_vs_exact"),
            "10k": s10.get("recall_at_10_vs_exact"),
            "real_2k": ingest.get("recall_at_10_vs_exact_real_2k"),
        },
        "query_embed_ms": ingest.get("query_embed_ms"),
        "peak_rss_mb": {p: r.get("peak_rss_mb") for p, r in results.items()},
        "db_bytes_per_chunk": {
            "ingest_2k": ingest.get("db_bytes_per_chunk"),
            "10k": s10.get("build", {}).get("db_bytes_per_chunk"),
            "100k": s100.get("build", {}).get("db_bytes_per_chunk"),
        },
    }
    if "vector_100k" in search_ms and "numpy_floor_100k" in search_ms:
        floor = search_ms["numpy_floor_100k"]["p50"]
        figures["vector_vs_floor_100k"] = {
            "search": round(search_ms["vector_100k"]["p50"] / floor, 2),
            "knn": round(search_ms["vector_knn_100k"]["p50"] / floor, 2),
        }
    v1m = results.get("vectors1m")
    if v1m:
        figures["search_ms"].update(v1m["search_ms"])
        figures["compact_vs_floor_1m"] = v1m["compact_vs_floor_1m"]
        figures["recall_at_10_vs_exact"]["compact_vectors_1m"] = v1m["recall_at_10_vs_exact"]
    if s1m:
        figures["ask_1m_s"] = s1m.get("ask_1m_s")
        figures["vector_vs_floor_1m"] = s1m.get("vector_vs_floor_1m")
        figures["fts_same_as_whole_query_1m"] = s1m.get("fts_same_as_whole_query")
    return {**figures, "phases": results}


TARGETS: list[tuple[str, str, Callable[[dict], Any], Callable[[Any], bool]]] = [
    ("ingest() / plain fastembed", ">= 1.4", lambda f: f["ingest_vs_plain"], lambda v: v >= 1.4),
    (
        "peak RSS of the ingest phase, MB",
        "<= 1300",
        lambda f: f["peak_rss_mb"]["ingest"],
        lambda v: v <= 1300,
    ),
    *[
        (
            f"start-up p50 {name}, s",
            f"<= {limit}",
            (lambda f, n=name: f["startup_s"][n]["p50"]),
            (lambda v, limit=limit: v <= limit),
        )
        for name, limit in (
            ("help", 0.35),
            ("config", 0.35),
            ("sessions", 0.35),
            ("inspect", 0.35),
            ("search", 0.9),
            ("ask", 0.9),
        )
    ],
    ("unchanged re-ingest, s", "< 2", lambda f: f["reingest_s"], lambda v: v < 2),
    (
        "hybrid p50 @10k, ms",
        "<= 15",
        lambda f: f["search_ms"]["hybrid_10k"]["p50"],
        lambda v: v <= 15,
    ),
    (
        "hybrid p50 @100k, ms",
        "<= 40",
        lambda f: f["search_ms"]["hybrid_100k"]["p50"],
        lambda v: v <= 40,
    ),
    ("turn p50 @10k, ms", "<= 60", lambda f: f["turn_ms_10k"]["p50"], lambda v: v <= 60),
    (
        "vector / NumPy floor @100k",
        "<= 3 (stretch)",
        lambda f: f["vector_vs_floor_100k"]["search"],
        lambda v: v <= 3,
    ),
    (
        "top-10 identical to exact @100k",
        ">= 0.99 (stretch)",
        lambda f: f["recall_at_10_vs_exact"]["100k"]["identical_top10"],
        lambda v: v >= 0.99,
    ),
]


def render(figures: dict[str, Any], info: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    phases = figures["phases"]
    table = Table(
        title=f"ragchat bench: {info['cpu']}, {info['cores']} cores, "
        f"load {info['load_before']} -> {info['load_after']}, {info['total_s']} s"
    )
    for column, justify in (
        ("measure", "left"),
        ("p50 / value", "right"),
        ("p95", "right"),
        ("target", "left"),
    ):
        table.add_column(column, justify=justify)
    for section, rows in _sections(figures, phases):
        if rows:
            table.add_section()
            table.add_row(f"[bold]{section}[/]", "", "", "")
            for row in rows:
                table.add_row(*row)
    Console().print(table)
    Console().print(
        "10k/100k: generated text with synthetic structured unit vectors (not embedded); search is "
        "timed with precomputed query vectors. The turn's 10k library has vectors built in the "
        "model's space from its topic words; its questions are embedded for real."
    )


def _sections(
    figures: dict[str, Any], phases: dict[str, Any]
) -> list[tuple[str, list[tuple[str, ...]]]]:
    ingest, turn, search = phases.get("ingest"), phases.get("turn10k"), figures["search_ms"]
    targets = {name: (target, get, ok) for name, target, get, ok in TARGETS}
    rows_ingest = (
        []
        if not ingest
        else [
            (
                f"ingest() of {ingest['chunks']} chunks, chunks/s",
                str(ingest["ingest_chunks_per_s"]),
                "",
                "",
            ),
            (
                "plain fastembed (document order, batch 16) on the same "
                f"{ingest['plain_embedded_chunks']}, chunks/s",
                str(ingest["plain_fastembed_chunks_per_s"]),
                "",
                "",
            ),
            _target_row("ingest() / plain fastembed", figures, targets),
            _target_row("peak RSS of the ingest phase, MB", figures, targets),
            _target_row("unchanged re-ingest, s", figures, targets),
            ("unchanged re-ingest via CLI (new process), s", str(ingest["reingest_cli_s"]), "", ""),
            ("query embedding, ms", *_p(ingest["query_embed_ms"]), ""),
        ]
    )
    rows_search = [(f"{name}, ms", *_p(value), "") for name, value in search.items()]
    rows_search += [
        _target_row(name, figures, targets)
        for name in (
            "hybrid p50 @10k, ms",
            "hybrid p50 @100k, ms",
            "vector / NumPy floor @100k",
            "top-10 identical to exact @100k",
        )
    ]
    rows_turn = (
        []
        if not turn or "slow_model_ms" not in turn  # an earlier run's turns (--update) lack it
        else [
            _target_row("turn p50 @10k, ms", figures, targets),
            ("  embedding (question, query), ms", *_p(turn["turn_question_embedding_ms_10k"]), ""),
            (
                "  embedding (answer, for history), ms",
                *_p(turn["turn_answer_embedding_ms_10k"]),
                "",
            ),
            ("  everything but embedding, ms", *_p(turn["turn_without_embedding_ms_10k"]), ""),
            ("  embedding share of the turn", f"{turn['turn_embedding_share']:.0%}", "", ""),
            (
                f"turn with a {turn['slow_model_ms']:.0f} ms model, ms",
                *_p(turn["turn_slow_model_ms_10k"]),
                "",
            ),
            (
                "  the turn beyond the model's own time, ms",
                *_p(turn["turn_beyond_model_ms_10k"]),
                "",
            ),
            ("  the same turns without a model, ms", *_p(turn["turn_recorded_answer_ms_10k"]), ""),
        ]
    )
    startup = figures.get("startup_s") or {}
    rows_startup = [("python -c pass, s", *_p(startup.get("python")), "")] if startup else []
    rows_startup += [
        _target_row(f"start-up p50 {name}, s", figures, targets)
        for name in STARTUP_COMMANDS
        if name in startup
    ]
    rows_startup = [
        (r[0], r[1], str(startup[r[0].split()[2].rstrip(",")]["p95"]), r[3])
        if r and r[0].startswith("start-up")
        else r
        for r in rows_startup
    ]
    rows_size = [
        (f"peak RSS {phase}, MB", str(peak), "", "")
        for phase, peak in figures["peak_rss_mb"].items()
    ]
    if ingest:
        rows_size.insert(
            1,
            (
                "peak RSS of the plain fastembed baseline, MB",
                str(ingest["plain_fastembed_peak_rss_mb"]),
                "",
                "",
            ),
        )
    rows_size += [
        (f"database bytes per chunk ({size})", str(value), "", "")
        for size, value in figures["db_bytes_per_chunk"].items()
        if value
    ]
    return [
        ("ingest", [r for r in rows_ingest if r]),
        ("search", [r for r in rows_search if r]),
        ("turn (no LLM), 20 turns of history", [r for r in rows_turn if r]),
        ("start-up, new process on the sample library", [r for r in rows_startup if r]),
        ("memory and size", rows_size),
    ]


def _target_row(name: str, figures: dict[str, Any], targets: dict) -> tuple[str, ...] | None:
    target, get, ok = targets[name]
    try:
        value = get(figures)
    except (KeyError, TypeError):
        return None
    if value is None:
        return None
    mark = "[green]ok[/]" if ok(value) else "[red]off[/]"
    return (name, str(value), "", f"{target} {mark}")


def _p(value: dict | None) -> tuple[str, str]:
    return (str(value["p50"]), str(value["p95"])) if value else ("-", "-")


def parent(args: argparse.Namespace) -> None:
    info = machine()
    info["load_before"] = round(os.getloadavg()[0], 2)
    results: dict[str, dict[str, Any]] = {}
    work = Path(tempfile.mkdtemp(prefix="ragchat-bench-"))
    started = time.perf_counter()
    try:
        for name in args.phases:
            print(f"… {name}", file=sys.stderr, flush=True)
            seconds, results[name] = timed(lambda: _subprocess_phase(name, work, args))
            results[name]["phase_s"] = round(seconds, 1)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    info["load_after"] = round(os.getloadavg()[0], 2)
    info["total_s"] = round(time.perf_counter() - started, 1)
    if args.update and Path(args.out).exists():  # the other phases as an earlier run left them
        earlier = json.loads(Path(args.out).read_text(encoding="utf-8"))
        info["phases_run_now"] = list(results)
        info["earlier_run"] = earlier.get("machine", {}).get("earlier_run", earlier.get("machine"))
        results = {**earlier.get("phases", {}), **results}
    figures = merge(results)
    output = {"machine": info, **figures}
    Path(args.out).write_text(json.dumps(output, indent=2) + "\n", encoding="utf-8")
    render(figures, info)
    print(f"wrote {args.out} in {info['total_s']} s" + (f" (work dir {work})" if args.keep else ""))


def _subprocess_phase(name: str, work: Path, args: argparse.Namespace) -> dict[str, Any]:
    command = [
        sys.executable,
        __file__,
        "--phase",
        name,
        "--work",
        str(work),
        "--queries",
        str(args.queries),
        "--turns",
        str(args.turns),
        "--warmup",
        str(args.warmup),
        "--ingest-chunks",
        str(args.ingest_chunks),
        "--startup-runs",
        str(args.startup_runs),
    ]
    if args.library_1m:
        command += ["--library-1m", str(Path(args.library_1m).resolve())]
    done = subprocess.run(command, capture_output=True, text=True, cwd=REPO)
    if done.returncode != 0:
        raise SystemExit(f"phase {name} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--phases", nargs="+", default=list(PHASES), choices=PHASES + OPT_IN)
    parser.add_argument(
        "--library-1m", help="the 1M library of search1m: reused when it exists, else built there"
    )
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--work", help=argparse.SUPPRESS)
    parser.add_argument("--plain-embed", help=argparse.SUPPRESS)
    parser.add_argument("--queries", type=int, default=300, help="timed search queries per mode")
    parser.add_argument("--turns", type=int, default=120, help="timed turns")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--ingest-chunks", type=int, default=2000)
    parser.add_argument("--startup-runs", type=int, default=15, help="timed runs of each command")
    parser.add_argument("--out", default=str(RESULTS))
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    parser.add_argument(
        "--update",
        action="store_true",
        help="replace only the phases run now in --out, keeping the others from its earlier run",
    )
    args = parser.parse_args(argv)
    if args.plain_embed:
        print(json.dumps(plain_embed_part(Path(args.plain_embed), Path(args.work))))
    elif args.phase:
        print(json.dumps(run_phase(args.phase, Path(args.work), args)))
    else:
        parent(args)


if __name__ == "__main__":
    main()
