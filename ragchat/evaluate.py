"""`ragchat eval`: replay conversation sets through the chat's own turn pipeline and score what
each turn retrieved, at file level, against gold files.

Every item is replayed in a fresh session per strategy with `Conversation.ask` (the same code the
chat runs). A turn's recorded `assistant` text is stored as the reply, with the lineage of what the
pipeline retrieved, so the next turn anchors as in a live chat. A turn without `assistant` stores
an empty reply: nothing was answered, so the next turn has no anchors from it.

Strategies:
- `ragchat` and its ablations (`-no-anchor`, `-no-keywords`, `-no-window`): the full pipeline;
- baselines (`last-turn`, `full-history`, `prev-turn`): a fixed query sent to the same hybrid
  search (vector and FTS alike), no anchoring, no reuse;
- `rewrite`: the oracle, a turn's human `rewrite` as the query; added whenever the set has one,
  scored only on turns that have one.

Scoring looks deeper than the chat shows: EVAL_DEPTH chunks a turn instead of `top_k`, so that
Recall@10 over distinct files means something. (The deeper list also feeds the support marking of
recorded answers, which picks the chunks most like the answer among all retrieved ones.)
"""

from __future__ import annotations

import contextlib
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from sqlite_utils import Database

from .config import Settings
from .conversation.models import Reformulation, ReformulationInput, TurnResult
from .conversation.plan import TurnOptions
from .conversation.reformulate import Reformulator
from .conversation.turn import Conversation
from .embed import Embedder
from .errors import RagchatError
from .ingest.pipeline import IngestReport, Progress, ingest
from .llm import ChatBackend
from .replay import REPLAYED, REPLY_FIELDS, ReplayServer, replay_server, reply_for
from .store import library, sessions

EVAL_DEPTH = 20  # chunks retrieved per turn for scoring (the chat's top_k is 8)
RANK_K = 10  # MRR and nDCG cut-off
OUT_FILES = 20  # ranked files written per --out row
DEFAULT_KS = (5, 10)

ProgressCallback = Callable[[int, int, str], None]  # (done, total, what is running)


# --- the conversation set ----------------------------------------------------------------------


@dataclass(frozen=True)
class EvalTurn:
    user: str
    assistant: str | None = None  # the recorded reply (None: store an empty one)
    gold: tuple[str, ...] = ()  # corpus-relative file names; non-empty = the turn is scored
    rewrite: str | None = None  # a human standalone rewrite (the oracle query)
    reference: str | None = None  # a reference answer (scored by --answers)
    llm_reply: Mapping[str, Any] | None = None  # a model's recorded reply to the reformulation request


@dataclass(frozen=True)
class EvalItem:
    id: str
    tags: Mapping[str, str]
    turns: tuple[EvalTurn, ...]

    @property
    def has_rewrite(self) -> bool:
        return any(t.gold and t.rewrite for t in self.turns)


def load_conversations(path: Path | str, *, scored: bool = True) -> list[EvalItem]:
    """Read and validate a conversations.jsonl (one item a line; blank lines are skipped);
    `scored=False` reads a set without gold (unanswerable.jsonl)."""
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise RagchatError(f"conversation set not found: {path}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise RagchatError(f"cannot read conversation set {path}: {exc}") from None
    items: list[EvalItem] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        where = f"{path.name} line {number}"
        try:
            data = json.loads(line)
        except json.JSONDecodeError as exc:
            raise RagchatError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
        item = _parse_item(data, where, scored)
        if item.id in seen:
            raise RagchatError(f"{where}: duplicate id {item.id!r}")
        seen.add(item.id)
        items.append(item)
    if not items:
        raise RagchatError(f"{path} holds no conversations")
    return items


def _parse_item(data: object, where: str, scored: bool = True) -> EvalItem:
    if not isinstance(data, dict):
        raise RagchatError(f"{where}: expected a JSON object with id, turns (and tags)")
    item_id = data.get("id")
    if not isinstance(item_id, (str, int)) or isinstance(item_id, bool) or not str(item_id).strip():
        raise RagchatError(f"{where}: missing field 'id'")
    tags = data.get("tags", {})
    if not isinstance(tags, dict):
        raise RagchatError(f"{where}: 'tags' must be an object of tag: value")
    turns = data.get("turns")
    if not isinstance(turns, list) or not turns:
        raise RagchatError(f"{where}: missing field 'turns' (a non-empty list)")
    parsed = tuple(_parse_turn(turn, f"{where}, turn {n}") for n, turn in enumerate(turns, start=1))
    if scored and not any(turn.gold for turn in parsed):
        raise RagchatError(f"{where}: no turn has 'gold' (nothing to score)")
    return EvalItem(str(item_id), {str(k): str(v) for k, v in tags.items()}, parsed)


def _parse_turn(data: object, where: str) -> EvalTurn:
    if not isinstance(data, dict):
        raise RagchatError(f"{where}: expected an object with 'user'")
    user = data.get("user")
    if not isinstance(user, str) or not user.strip():
        raise RagchatError(f"{where}: missing field 'user' (the question)")
    assistant = data.get("assistant")
    if assistant is not None and not isinstance(assistant, str):
        raise RagchatError(f"{where}: 'assistant' must be a string")
    gold = data.get("gold", [])
    if not isinstance(gold, list) or not all(isinstance(g, str) and g.strip() for g in gold):
        raise RagchatError(f"{where}: 'gold' must be a list of file names")
    if "gold" in data and not gold:
        raise RagchatError(f"{where}: 'gold' is empty")
    rewrite = data.get("rewrite")
    if rewrite is not None and (not isinstance(rewrite, str) or not rewrite.strip()):
        raise RagchatError(f"{where}: 'rewrite' must be a non-empty string")
    reference = data.get("reference")
    if reference is not None and not isinstance(reference, str):
        raise RagchatError(f"{where}: 'reference' must be a string")
    return EvalTurn(user, assistant, tuple(dict.fromkeys(g.strip() for g in gold)), rewrite, reference or None,
                    _parse_reply(data.get("llm_reply"), where))


def _parse_reply(reply: object, where: str) -> Mapping[str, Any] | None:
    """A recorded `llm_reply`: the reformulation fields with their JSON types."""
    if reply is None:
        return None
    if not isinstance(reply, dict) or any(not isinstance(reply.get(k), t) for k, t in REPLY_FIELDS.items()):
        raise RagchatError(f"{where}: 'llm_reply' must be an object with {', '.join(REPLY_FIELDS)}")
    return reply


# --- metrics (file level, pure) ----------------------------------------------------------------


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
    return next((1.0 / rank for rank, name in enumerate(ranked[:k], start=1) if name in wanted), 0.0)


def ndcg_at(ranked: Sequence[str], gold: Iterable[str], k: int = RANK_K) -> float:
    """Binary-relevance nDCG: DCG of the top k over the ideal DCG of min(|gold|, k) hits."""
    wanted = set(gold)
    if not wanted:
        return 0.0
    dcg = sum(1.0 / math.log2(rank + 1) for rank, name in enumerate(ranked[:k], start=1) if name in wanted)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def metric_names(ks: Sequence[int]) -> list[str]:
    return [*(f"R@{k}" for k in ks), f"MRR@{RANK_K}", f"nDCG@{RANK_K}"]


def score(ranked: Sequence[str], gold: Sequence[str], ks: Sequence[int]) -> dict[str, float]:
    values = [*(recall_at(ranked, gold, k) for k in ks), mrr_at(ranked, gold), ndcg_at(ranked, gold)]
    return dict(zip(metric_names(ks), values))


# --- strategies --------------------------------------------------------------------------------


QueryOf = Callable[[ReformulationInput], str]


def last_turn_query(data: ReformulationInput) -> str:
    return data.question


def full_history_query(data: ReformulationInput) -> str:
    return " ".join([*data.earlier_questions, data.question])


def prev_turn_query(data: ReformulationInput) -> str:
    return " ".join([*data.earlier_questions[-1:], data.question])


@dataclass(frozen=True)
class FixedQuery:
    """A baseline reformulator: one fixed query for both indexes; never a follow-up."""

    name: str
    query_of: QueryOf

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        query = self.query_of(data)
        return Reformulation(query, query, False, False, False, f"baseline {self.name}", self.name, 0.0)


def _rewrite_query(item: EvalItem) -> QueryOf:
    """The oracle: the turn's own rewrite (the session is fresh, so turn index = questions so far)."""
    def query(data: ReformulationInput) -> str:
        turn = item.turns[len(data.earlier_questions)]
        return turn.rewrite or data.question
    return query


def _reply_query(item: EvalItem) -> QueryOf:
    """The recorded model's rewrite alone (the question where the model was not asked)."""
    def query(data: ReformulationInput) -> str:
        reply = item.turns[len(data.earlier_questions)].llm_reply
        return str(reply["semantic_query"]) if reply else data.question
    return query


BASELINE = TurnOptions(source_anchoring=False, allow_reuse=False, fusion=False)


@dataclass(frozen=True)
class Strategy:
    name: str
    options: TurnOptions
    query_of: QueryOf | None = None  # baselines: the fixed query; None = ragchat's reformulation
    oracle: bool = False  # the rewrite strategy: only items and turns that have a rewrite
    model: str | None = None  # ragchat with a model: a replayed one (replay.REPLAYED) or "ollama" (--llm)
    recorded_query: bool = False  # reply-alone: the recorded reply's rewrite as the fixed query

    def reformulator(self, item: EvalItem) -> Reformulator | None:
        if self.oracle:
            return FixedQuery(self.name, _rewrite_query(item))
        if self.recorded_query:
            return FixedQuery(self.name, _reply_query(item))
        return FixedQuery(self.name, self.query_of) if self.query_of else None

    def applies_to(self, item: EvalItem) -> bool:
        return item.has_rewrite if self.oracle else True

    def scores(self, turn: EvalTurn) -> bool:
        return bool(turn.gold) and (bool(turn.rewrite) or not self.oracle)


STRATEGIES: dict[str, Strategy] = {
    strategy.name: strategy
    for strategy in (
        Strategy("ragchat", TurnOptions()),
        Strategy("last-turn", BASELINE, last_turn_query),
        Strategy("full-history", BASELINE, full_history_query),
        Strategy("prev-turn", BASELINE, prev_turn_query),
        Strategy("rewrite", BASELINE, oracle=True),
        Strategy("ragchat-no-anchor", TurnOptions(source_anchoring=False)),
        Strategy("ragchat-no-keywords", TurnOptions(use_keywords=False)),
        Strategy("ragchat-no-window", TurnOptions(use_window=False)),
        Strategy("ragchat-no-fusion", TurnOptions(fusion=False)),
        *(Strategy(f"ragchat+{model}", TurnOptions(), model=model) for model in REPLAYED),
        Strategy("reply-alone", BASELINE, recorded_query=True),
        Strategy("ragchat+ollama", TurnOptions(), model="ollama"),
    )
}
DEFAULT_STRATEGIES = ("ragchat", "last-turn", "full-history", "prev-turn")


def choose_strategies(names: Sequence[str] | None, items: Sequence[EvalItem], llm: bool = False) -> list[Strategy]:
    """The named strategies (default: ragchat and the baselines), plus `rewrite` when the set has
    rewrites, and `ragchat+ollama` (next to `ragchat`, no model) with `llm`."""
    wanted = list(dict.fromkeys(n.strip() for n in (names or DEFAULT_STRATEGIES) if n.strip()))
    unknown = [n for n in wanted if n not in STRATEGIES]
    if unknown:
        raise RagchatError(f"unknown strategy {unknown[0]!r} (known: {', '.join(STRATEGIES)})")
    if llm and "ragchat+ollama" not in wanted:
        wanted.insert(wanted.index("ragchat") + 1 if "ragchat" in wanted else 0, "ragchat+ollama")
    if "ragchat+ollama" in wanted and not llm:
        raise RagchatError("strategy 'ragchat+ollama' needs --llm (a reachable Ollama and model)")
    replies = any(turn.llm_reply for item in items for turn in item.turns)
    needing = [n for n in wanted if n in ("ragchat+recorded", "reply-alone")]
    if needing and not replies:
        raise RagchatError(f"strategy {needing[0]!r} needs turns with a recorded 'llm_reply'; this set has none")
    has_rewrites = any(item.has_rewrite for item in items)
    if "rewrite" in wanted and not has_rewrites:
        raise RagchatError("strategy 'rewrite' needs turns with both 'gold' and 'rewrite'; this set has none")
    if has_rewrites and "rewrite" not in wanted:
        wanted.append("rewrite")
    if not wanted:
        raise RagchatError("no strategy given")
    return [STRATEGIES[name] for name in wanted]


def parse_ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(dict.fromkeys(int(part) for part in text.split(",") if part.strip()))
    except ValueError:
        raise RagchatError(f"--k wants comma-separated whole numbers, e.g. 5,10 (got {text!r})") from None
    if not ks or min(ks) < 1:
        raise RagchatError(f"--k wants numbers of 1 or more (got {text!r})")
    return ks


# --- the library to search ---------------------------------------------------------------------


def prepare_library(db: Database, settings: Settings, corpus: Path, load_embedder: Callable[[], Embedder],
                    progress: Progress | None = None) -> IngestReport:
    """Ingest the corpus (incremental: a reused database finds everything unchanged). Refuses a
    database that also holds documents from elsewhere: they would be searched too."""
    if not corpus.is_dir():
        raise RagchatError(f"corpus folder not found: {corpus}")
    root = str(corpus.resolve())
    foreign = [d["path"] for d in library.documents(db) if d["root"] != root]
    if foreign:
        raise RagchatError(f"the database holds {len(foreign)} document(s) from outside {corpus} "
                           f"(e.g. {foreign[0]}); use a fresh --db for this corpus")
    return ingest(db, settings, [corpus], load_embedder, prune_missing=True, progress=progress)


@contextlib.contextmanager
def database_path(given: Path | None) -> Iterator[Path]:
    """The --db path, or a fresh temporary one removed afterwards."""
    if given is not None:
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="ragchat-eval-") as scratch:
        yield Path(scratch) / "eval.db"


def missing_gold(db: Database, items: Sequence[EvalItem]) -> list[str]:
    """Gold files that are not in the library (their turns can never reach full recall)."""
    known = {d["path"] for d in library.documents(db)}
    return sorted({g for item in items for turn in item.turns for g in turn.gold} - known)


# --- replay ------------------------------------------------------------------------------------


class CachingEmbedder:
    """Remembers query embeddings: strategies replay the same questions and recorded answers."""

    def __init__(self, inner: Embedder, limit: int = 50_000) -> None:
        self.inner, self.limit = inner, limit
        self.model_id, self.dim = inner.model_id, inner.dim
        self._cache: dict[str, np.ndarray] = {}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self.inner.embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        vector = self._cache.get(text)
        if vector is None:
            vector = self.inner.embed_query(text)
            vector.setflags(write=False)
            if len(self._cache) < self.limit:
                self._cache[text] = vector
        return vector


@dataclass(frozen=True)
class ScoredTurn:
    id: str
    turn: int
    strategy: str
    tags: Mapping[str, str]
    result: TurnResult = field(repr=False)
    ranked_files: tuple[str, ...]
    gold: tuple[str, ...]
    metrics: Mapping[str, float]
    answer: AnswerScore | None = None  # --answers: the answer and its scores

    def to_row(self) -> dict:
        r = self.result.reformulation
        return {
            "id": self.id, "turn": self.turn, "strategy": self.strategy, "question": self.result.question,
            "query": r.semantic_query, "keyword_query": r.keyword_query, "is_follow_up": r.is_follow_up,
            "is_meta": r.is_meta, "topic_shift": r.topic_shift, "reasoning": r.reasoning,
            "reformulator": r.reformulator, "plan": self.result.plan,
            "context_weight": self.result.lineage.context_weight, "model_query": r.model_query,
            "model_weight": r.model_weight, "anchor_files": self.result.anchor_paths,
            "ranked_files": list(self.ranked_files[:OUT_FILES]), "gold": list(self.gold),
            "metrics": {name: round(value, 4) for name, value in self.metrics.items()}, "tags": dict(self.tags),
        } | (self.answer.to_row() if self.answer else {})


@dataclass
class EvalRun:
    strategies: list[str]
    ks: tuple[int, ...]
    turns: list[ScoredTurn] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)  # replay time per strategy
    prompt_chars: list[int] = field(default_factory=list)  # characters of each replayed model request

    @property
    def metric_names(self) -> list[str]:
        return metric_names(self.ks)


def session_name(strategy: str, item_id: str) -> str:
    return f"eval:{strategy}:{item_id}"


def replay(db: Database, embedder: Embedder, settings: Settings, items: Sequence[EvalItem],
           strategies: Sequence[Strategy], *, ks: Sequence[int] = DEFAULT_KS, depth: int = EVAL_DEPTH,
           backend: ChatBackend | None = None, on_progress: ProgressCallback | None = None,
           on_notice: Callable[[str], None] = lambda message: None, answers: bool = False) -> EvalRun:
    """Replay every item with every strategy; one embedder and one connection for all. `backend`
    is the user's Ollama (the `ragchat+ollama` strategy); replayed models are served on loopback."""
    base = Conversation(db, CachingEmbedder(embedder), settings.replace(top_k=depth, ollama="off"), "eval",
                        on_notice=on_notice)
    base.corpus()  # built once; every per-item copy below shares it
    run = EvalRun([s.name for s in strategies], tuple(ks))
    total = sum(1 for s in strategies for item in items if s.applies_to(item))
    done = 0
    models = [s.model for s in strategies if s.model in REPLAYED]
    with replay_server(models, settings.ollama_timeout) if models else contextlib.nullcontext() as server:
        for strategy in strategies:
            started = time.perf_counter()
            model = _with_model(base, strategy, server, backend)
            for item in (i for i in items if strategy.applies_to(i)):
                if on_progress:
                    on_progress(done, total, f"{strategy.name} {item.id}")
                run.turns.extend(replay_item(model, strategy, item, ks, answers=answers, server=server))
                done += 1
            run.seconds[strategy.name] = round(time.perf_counter() - started, 2)
        if server is not None:
            server.flush()
            run.prompt_chars = server.prompt_chars
    if on_progress:
        on_progress(done, total, "done")
    return run


def _with_model(base: Conversation, strategy: Strategy, server: ReplayServer | None,
                backend: ChatBackend | None) -> Conversation:
    """The conversation a strategy replays with: its model's backend, if it has one."""
    if strategy.model is None:
        return base
    chosen = backend if strategy.model == "ollama" else (server.backend(strategy.model) if server else None)
    if chosen is None:
        raise RagchatError(f"strategy {strategy.name!r} has no model to talk to")
    return replace(base, backend=chosen, settings=base.settings.replace(ollama="on"))


def replay_item(base: Conversation, strategy: Strategy, item: EvalItem, ks: Sequence[int], *,
                answers: bool = False, server: ReplayServer | None = None) -> list[ScoredTurn]:
    """One item in a fresh session: every turn through `Conversation.ask`, the scored ones scored
    (with `answers`, a ragchat strategy answers the scored turns that have a reference); a
    replayed model is told each turn's reply first."""
    name = session_name(strategy.name, item.id)
    sessions.clear_session(base.db, name)
    scored: list[ScoredTurn] = []
    conversation = replace(base, session=name, reformulator=strategy.reformulator(item))
    for index, turn in enumerate(item.turns):
        answering = answers and answers_strategy(strategy) and strategy.scores(turn) and bool(turn.reference)
        conversation.options = replace(strategy.options, recorded_answer=None if answering else turn.assistant or "")
        if server is not None and strategy.model in REPLAYED:
            questions = [t.user for t in item.turns[: index + 1]]
            server.answer_with(reply_for(str(strategy.model), questions, turn.llm_reply))
        result = conversation.ask(turn.user)
        if strategy.scores(turn):
            ranked = tuple(distinct_files(chunk.document for chunk in result.chunks))
            scored_answer = answer_of(base.db, result, turn.reference or "") if answering else None
            scored.append(ScoredTurn(item.id, result.turn, strategy.name, item.tags, result, ranked,
                                     turn.gold, score(ranked, turn.gold, ks), scored_answer))
    return scored


def write_rows(path: Path, run: EvalRun) -> None:
    with Path(path).open("w", encoding="utf-8") as handle:
        for turn in run.turns:
            handle.write(json.dumps(turn.to_row(), ensure_ascii=False) + "\n")


# --- aggregation -------------------------------------------------------------------------------


PAIRED_AGAINST = "last-turn"
PAIRED_METRIC = f"nDCG@{RANK_K}"


@dataclass(frozen=True)
class Paired:
    """Per-turn comparison with the reference strategy on PAIRED_METRIC."""

    wins: int
    losses: int
    ties: int

    @property
    def p_value(self) -> float:
        return sign_test(self.wins, self.losses)


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test (ties dropped): how likely a split at least this uneven is
    when neither strategy is better."""
    n = wins + losses
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(wins, losses) + 1)) / 2**n
    return min(1.0, 2 * tail)


def paired(mine: Sequence[ScoredTurn], reference: Sequence[ScoredTurn], metric: str = PAIRED_METRIC) -> Paired:
    theirs = {(t.id, t.turn): t.metrics[metric] for t in reference}
    diffs = [t.metrics[metric] - theirs[(t.id, t.turn)] for t in mine if (t.id, t.turn) in theirs]
    return Paired(sum(d > 1e-9 for d in diffs), sum(d < -1e-9 for d in diffs), sum(abs(d) <= 1e-9 for d in diffs))


@dataclass(frozen=True)
class GroupRow:
    strategy: str
    count: int  # scored turns
    metrics: Mapping[str, float]  # means over the scored turns
    versus: Paired | None = None  # against PAIRED_AGAINST (None for itself, or when it did not run)


@dataclass(frozen=True)
class GroupSummary:
    name: str  # "overall", "multi_turn: Follow-up", ...
    rows: tuple[GroupRow, ...]


def parse_group(text: str) -> tuple[str, frozenset[str]]:
    """`TAG=V1,V2`: a combined breakdown over several values of one tag."""
    tag, _, values = text.partition("=")
    chosen = frozenset(v.strip() for v in values.split(",") if v.strip())
    if not tag.strip() or not chosen:
        raise RagchatError(f"--group wants TAG=VALUE[,VALUE...], e.g. multi_turn=Follow-up,Clarification (got {text!r})")
    return tag.strip(), chosen


def summarize(run: EvalRun, groups: Sequence[tuple[str, frozenset[str]]] = ()) -> list[GroupSummary]:
    """Overall, then per value of each tag (a tag with one value for all turns is left out),
    then any combined groups asked for."""
    selections: list[tuple[str, Callable[[ScoredTurn], bool]]] = [("overall", lambda t: True)]
    tags = sorted({tag for t in run.turns for tag in t.tags})
    for tag in tags:
        seen = sorted({t.tags.get(tag, "") for t in run.turns})
        if len(seen) > 1:
            selections += [(f"{tag}: {value or '(none)'}", _tag_is(tag, {value})) for value in seen]
    for tag, chosen in groups:
        selections.append((f"{tag}: {' + '.join(sorted(chosen))}", _tag_is(tag, chosen)))
    return [GroupSummary(name, _rows(run, [t for t in run.turns if keep(t)])) for name, keep in selections]


def _tag_is(tag: str, values: Iterable[str]) -> Callable[[ScoredTurn], bool]:
    wanted = set(values)
    return lambda turn: turn.tags.get(tag, "") in wanted


def _rows(run: EvalRun, turns: list[ScoredTurn]) -> tuple[GroupRow, ...]:
    rows = []
    reference = [t for t in turns if t.strategy == PAIRED_AGAINST]
    for strategy in run.strategies:
        mine = [t for t in turns if t.strategy == strategy]
        means = {name: (sum(t.metrics[name] for t in mine) / len(mine) if mine else 0.0) for name in run.metric_names}
        versus = paired(mine, reference) if reference and strategy != PAIRED_AGAINST else None
        rows.append(GroupRow(strategy, len(mine), means, versus))
    return tuple(rows)


# --- answer quality (`--answers`) --------------------------------------------------------------
#
# The scored turns of the ragchat strategies are answered (extractively without --llm) instead of
# stored empty, and each answer is scored against the turn's `reference` on content words,
# stemmed, as multisets. Two yardsticks from the same sources: `lead` (the top chunk from its
# start, cut to the answer's length in words) and `oracle` (greedy: the sentence that raises F1
# most, until none does; an upper bound for picking whole sentences).

ANSWER_SYSTEMS = ("ragchat", "lead", "oracle")


def answer_tokens(text: str) -> list[str]:
    from .text import content_words, stem

    return [stem(w) for w in content_words(text)]


def overlap_scores(answer: Sequence[str], reference: Sequence[str]) -> tuple[float, float]:
    """(F1, recall) of answer tokens against reference tokens, counted with multiplicity."""
    from collections import Counter

    common = sum((Counter(answer) & Counter(reference)).values())
    if not common:
        return 0.0, 0.0
    precision, recall = common / len(answer), common / len(reference)
    return 2 * precision * recall / (precision + recall), recall


def lead_answer(top_chunk_text: str, length: int) -> str:
    """The first `length` words of the top chunk (its first sentences, the lead baseline)."""
    from .answer import lead_text
    from .text import WORD

    matches = list(WORD.finditer(lead_text(top_chunk_text)))
    text = lead_text(top_chunk_text)
    return text if len(matches) <= length else text[: matches[length - 1].end()] if length else ""


def oracle_answer(chunk_texts: Sequence[str], reference: str) -> str:
    """Greedy on F1: from all sentences (and their blocks) of the chunks, add the one that raises
    F1 against the reference most, until none does; shown in reading order."""
    from .answer import units

    pool = [unit.text for text in chunk_texts for unit in units(text)]
    tokens = [answer_tokens(text) for text in pool]
    wanted = answer_tokens(reference)
    chosen: list[int] = []
    current: list[str] = []
    best = 0.0
    while True:
        trials = [(overlap_scores(current + tokens[i], wanted)[0], -i) for i in range(len(pool)) if i not in chosen]
        if not trials:
            break
        value, index = max(trials)
        if value <= best + 1e-9:
            break
        best, chosen, current = value, [*chosen, -index], current + tokens[-index]
    return " ".join(pool[i] for i in sorted(chosen))


@dataclass(frozen=True)
class AnswerScore:
    """One answered turn: the answer, the chunks it was built from, and the three systems' scores."""

    text: str
    chunk_ids: tuple[int, ...]  # ranked: the sources the answer could draw from
    reference: str
    scores: Mapping[str, tuple[float, float, int]]  # system -> (F1, recall, length in words)

    def to_row(self) -> dict:
        return {"answer": self.text, "answer_chunk_ids": list(self.chunk_ids), "reference": self.reference,
                "answer_scores": {name: {"f1": round(f1, 4), "recall": round(recall, 4), "words": length}
                                  for name, (f1, recall, length) in self.scores.items()}}


def score_answer(answer: str, chunk_texts: Sequence[str], chunk_ids: Sequence[int], reference: str) -> AnswerScore:
    """Score an answer, the lead baseline and the oracle from the same ranked chunks."""
    from .text import words

    wanted = answer_tokens(reference)
    length = len(words(answer))
    texts = {"ragchat": answer, "lead": lead_answer(chunk_texts[0], length) if chunk_texts else "",
             "oracle": oracle_answer(chunk_texts, reference)}
    scores = {name: (*overlap_scores(answer_tokens(text), wanted), len(words(text))) for name, text in texts.items()}
    return AnswerScore(answer, tuple(chunk_ids), reference, scores)


def answers_strategy(strategy: Strategy) -> bool:
    """The strategies whose scored turns `--answers` answers: ragchat and its ablations."""
    return strategy.name.startswith("ragchat")


@dataclass(frozen=True)
class AnswerRow:
    system: str
    count: int
    f1: float
    recall: float
    words: float


@dataclass(frozen=True)
class AnswerGroup:
    name: str
    strategy: str
    rows: tuple[AnswerRow, ...]

    @property
    def closes_a_third(self) -> bool:
        """ragchat's F1 >= lead + (oracle - lead) / 3."""
        f1 = {row.system: row.f1 for row in self.rows}
        return f1["ragchat"] >= f1["lead"] + (f1["oracle"] - f1["lead"]) / 3 - 1e-9


def summarize_answers(run: EvalRun, groups: Sequence[tuple[str, frozenset[str]]] = ()) -> list[AnswerGroup]:
    """Per answered strategy: overall, per value of each tag (when it varies) and the combined
    groups asked for; mean F1, recall and length of ragchat, lead and oracle."""
    answered = [t for t in run.turns if t.answer is not None]
    selections: list[tuple[str, Callable[[ScoredTurn], bool]]] = [("overall", lambda t: True)]
    for tag in sorted({tag for t in answered for tag in t.tags}):
        seen = sorted({t.tags.get(tag, "") for t in answered})
        if len(seen) > 1:
            selections += [(f"{tag}: {value or '(none)'}", _tag_is(tag, {value})) for value in seen]
    for tag, chosen in groups:
        selections.append((f"{tag}: {' + '.join(sorted(chosen))}", _tag_is(tag, chosen)))
    found = []
    for strategy in dict.fromkeys(t.strategy for t in answered):
        for name, keep in selections:
            mine = [t.answer for t in answered if t.strategy == strategy and keep(t) and t.answer is not None]
            if not mine:
                continue
            rows = tuple(AnswerRow(system, len(mine), *(sum(a.scores[system][k] for a in mine) / len(mine)
                                                        for k in range(3))) for system in ANSWER_SYSTEMS)
            found.append(AnswerGroup(name, strategy, rows))
    return found


def answer_of(db: Database, result: TurnResult, reference: str) -> AnswerScore:
    """A turn's answer scored on the chunks it could draw from (as the extractive answer does)."""
    from .answer import answer_pool

    chunks = answer_pool(sorted(result.chunks, key=lambda c: c.rank), result.plan == "reuse")
    stored = library.chunks_by_ids(db, [c.chunk_id for c in chunks])
    kept = [c.chunk_id for c in chunks if c.chunk_id in stored]
    return score_answer(result.answer, [stored[i].text for i in kept], kept, reference)


# --- does the library cover it? (the weak-match rule, on unanswerable items) -----------------


@dataclass(frozen=True)
class CoverageScore:
    """The not-covered decision (`Lineage.weak`) on the last turns of unanswerable items (the
    documents do not answer them) and on the scored turns of answerable ones."""

    unanswerable: int
    caught: int  # unanswerable turns it fired on
    answerable: int
    false_alarms: int  # answerable turns it fired on

    @property
    def precision(self) -> float:
        fired = self.caught + self.false_alarms
        return self.caught / fired if fired else 0.0

    @property
    def recall(self) -> float:
        return self.caught / self.unanswerable if self.unanswerable else 0.0


def replay_unanswerable(db: Database, embedder: Embedder, settings: Settings,
                        items: Sequence[EvalItem]) -> list[TurnResult]:
    """Each unanswerable item through the full pipeline without a model (earlier turns with their
    recorded replies), as the `ragchat` strategy runs; the result of its last turn, the one the
    documents do not answer."""
    base = Conversation(db, CachingEmbedder(embedder), settings.replace(ollama="off"), "eval")
    results = []
    for item in items:
        name = session_name("unanswerable", item.id)
        sessions.clear_session(db, name)
        conversation = replace(base, session=name)
        for number, turn in enumerate(item.turns, start=1):
            last = number == len(item.turns)
            conversation.options = TurnOptions(recorded_answer="" if last else turn.assistant or "")
            result = conversation.ask(turn.user)
        results.append(result)
    return results


def coverage_score(answerable: Sequence[ScoredTurn], unanswerable: Sequence[TurnResult],
                   strategy: str = "ragchat") -> CoverageScore:
    mine = [t for t in answerable if t.strategy == strategy]
    return CoverageScore(len(unanswerable), sum(r.lineage.weak for r in unanswerable),
                         len(mine), sum(t.result.lineage.weak for t in mine))
