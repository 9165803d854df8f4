"""Does the library cover it? The not-covered decision (`Lineage.weak`) scored on unanswerable
items against the answerable ones."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from sqlite_utils import Database

from ..config import Settings
from ..conversation.models import TurnResult
from ..conversation.turn import Conversation
from ..embed import Embedder
from ..store import sessions
from .runs import CachingEmbedder, ScoredTurn, session_name
from .sets import EvalItem


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


def replay_unanswerable(
    db: Database, embedder: Embedder, settings: Settings, items: Sequence[EvalItem]
) -> list[TurnResult]:
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
            conversation.recorded_answer = "" if last else turn.assistant or ""
            result = conversation.ask(turn.user)
        results.append(result)
    return results


def coverage_score(
    answerable: Sequence[ScoredTurn], unanswerable: Sequence[TurnResult], strategy: str = "ragchat"
) -> CoverageScore:
    mine = [t for t in answerable if t.strategy == strategy]
    return CoverageScore(
        len(unanswerable),
        sum(r.lineage.weak for r in unanswerable),
        len(mine),
        sum(t.result.lineage.weak for t in mine),
    )
