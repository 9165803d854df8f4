"""A conversation set (conversations.jsonl): reading and validating it, and the library it is
searched in."""

from __future__ import annotations

import contextlib
import json
import tempfile
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlite_utils import Database

from ..config import Settings
from ..embed import Embedder
from ..errors import RagchatError
from ..ingest.pipeline import IngestReport, Progress, ingest
from ..store import library
from .replayed import REPLY_FIELDS


@dataclass(frozen=True)
class EvalTurn:
    user: str
    assistant: str | None = None  # the recorded reply (None: store an empty one)
    gold: tuple[str, ...] = ()  # corpus-relative file names; non-empty = the turn is scored
    rewrite: str | None = None  # a human standalone rewrite (the oracle query)
    reference: str | None = None  # a reference answer (scored by --answers)
    llm_reply: Mapping[str, Any] | None = (
        None  # a model's recorded reply to the reformulation request
    )


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
            raise RagchatError(
                f"{where}: not valid JSON ({exc.msg} at column {exc.colno})"
            ) from None
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
    return EvalTurn(
        user,
        assistant,
        tuple(dict.fromkeys(g.strip() for g in gold)),
        rewrite,
        reference or None,
        _parse_reply(data.get("llm_reply"), where),
    )


def _parse_reply(reply: object, where: str) -> Mapping[str, Any] | None:
    """A recorded `llm_reply`: the reformulation fields with their JSON types."""
    if reply is None:
        return None
    if not isinstance(reply, dict) or any(
        not isinstance(reply.get(k), t) for k, t in REPLY_FIELDS.items()
    ):
        raise RagchatError(f"{where}: 'llm_reply' must be an object with {', '.join(REPLY_FIELDS)}")
    return reply


# --- the library to search ---------------------------------------------------------------------


def prepare_library(
    db: Database,
    settings: Settings,
    corpus: Path,
    load_embedder: Callable[[], Embedder],
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest the corpus (incremental: a reused database finds everything unchanged). Refuses a
    database that also holds documents from elsewhere: they would be searched too."""
    if not corpus.is_dir():
        raise RagchatError(f"corpus folder not found: {corpus}")
    root = str(corpus.resolve())
    foreign = [d["path"] for d in library.documents(db) if d["root"] != root]
    if foreign:
        raise RagchatError(
            f"the database holds {len(foreign)} document(s) from outside {corpus} "
            f"(e.g. {foreign[0]}); use a fresh --db for this corpus"
        )
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
    known = {d["path"] for d in library.documents(db)} | set(library.shown_paths(db))
    return sorted({g for item in items for turn in item.turns for g in turn.gold} - known)
