"""The model's reading of a turn: a local Ollama model asked, with JSON-schema structured output,
for a standalone rewrite and three flags; the reply validated.

The reading never replaces the heuristic's: `combine.py` weighs the two. Any failure raises
BackendUnavailable; the turn then goes on with the heuristic alone (and says why, once).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..answer.prompt import neutralised
from ..errors import BackendUnavailable
from ..llm import ChatBackend
from ..params import AnswerParams
from .history import _cut
from .models import ReformulationInput

# Small-model friendly: four fields, no free text. The heuristic supplies the keyword query.
SCHEMA: dict = {
    "type": "object",
    "properties": {
        "semantic_query": {"type": "string"},
        "is_follow_up": {"type": "boolean"},
        "is_meta": {"type": "boolean"},
        "topic_shift": {"type": "boolean"},
    },
    "required": ["semantic_query", "is_follow_up", "is_meta", "topic_shift"],
}

SYSTEM = """You rewrite the user's latest message in \
a chat about their own documents into a search query.
Return JSON with these fields:
- semantic_query: one standalone question that can be understood without the conversation. Resolve
  pronouns ("it", "that", "they") and ellipsis ("what \
about X?") using the recent exchange. A correction
  ("no, I meant X") is the previous question asked about X. If the message is already standalone, or
  starts a new topic, keep it as it is. Use the library's own words (its titles and keywords) where
  they name what the user means. A heuristic reading may be given: use it if it is right, never
  copy it if it is not. Never answer the question.
- is_follow_up: true if the message depends on the previous answer or continues its subject.
- is_meta: true if the message asks something about \
the previous answer itself (summarize it, tell me
  more, elaborate, give an example, rephrase, "why?") rather than a new question.
- topic_shift: true if the message moves to a different subject than the recent exchange."""


@dataclass(frozen=True)
class ModelReading:
    """What the model said of a turn, validated."""

    semantic_query: str
    is_follow_up: bool
    is_meta: bool
    topic_shift: bool
    model: str


def build_messages(data: ReformulationInput, params: AnswerParams) -> list[dict[str, str]]:
    """The prompt: the earlier conversation in order with its roles, the recent exchange, what
    the library holds there, the heuristic's reading, and the latest message as the user typed
    it (each text cut at a word at `params.reading_*_chars`)."""
    parts = []
    earlier, last = (data.turns[:-1], data.turns[-1]) if data.turns else ((), None)
    earlier = earlier[-params.reading_turns :] if params.reading_turns else ()
    if earlier:
        cut = params.reading_window_chars
        lines = [
            f"User: {_cut(asked, cut)}\nAssistant: {_cut(said, cut)}" for asked, said in earlier
        ]
        parts.append("EARLIER CONVERSATION (oldest first):\n" + "\n".join(lines))
    user, said = last if last else (data.last.user, data.last.assistant)
    answer = _cut(said, params.reading_answer_chars)
    parts.append(f"RECENT EXCHANGE:\nUser: {user}\nAssistant: {answer}")
    scope = []
    if data.scope:
        scope.append("The last answer drew on: " + "; ".join(data.scope))
    if data.anchor_keywords:
        scope.append("Their keywords: " + ", ".join(data.anchor_keywords))
    if scope:
        parts.append("THE LIBRARY:\n" + "\n".join(scope))
    typed = data.typed or data.question
    if data.hint.strip() and " ".join(data.hint.split()) != " ".join(typed.split()):
        parts.append(f"A HEURISTIC READ IT AS (may be wrong): {data.hint}")
    parts.append(f"LATEST USER MESSAGE: {typed}")
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": neutralised("\n\n".join(parts))},
    ]


def read_reply(reply: dict, model: str, max_chars: int) -> ModelReading:
    """The reply as a reading; a blank rewrite is no reading at all."""
    semantic = " ".join(str(reply["semantic_query"]).split())
    if not semantic:
        raise BackendUnavailable("empty semantic_query in reply")
    return ModelReading(
        semantic_query=semantic[:max_chars],
        is_follow_up=bool(reply["is_follow_up"]),
        is_meta=bool(reply["is_meta"]),
        topic_shift=bool(reply["topic_shift"]),
        model=model,
    )


class OllamaReformulator:
    """Asks the backend's model for its reading of a turn that has history."""

    def __init__(self, backend: ChatBackend, params: AnswerParams) -> None:
        self.backend = backend
        self.name = f"ollama:{backend.model}"
        self.params = params

    def read(self, data: ReformulationInput) -> ModelReading:
        reply = self.backend.chat_json(build_messages(data, self.params), SCHEMA)
        return read_reply(reply, self.name, self.params.reading_query_chars)
