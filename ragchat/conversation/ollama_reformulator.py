"""Reformulation by a local Ollama model, with JSON-schema structured output, validated.

Any failure raises BackendUnavailable; the turn then falls back to the heuristic reformulator.
"""

from __future__ import annotations

import numpy as np

from ..errors import BackendUnavailable
from ..llm import ChatBackend
from .models import Reformulation, ReformulationInput

SCHEMA: dict = {
    "type": "object",
    "properties": {
        "semantic_query": {"type": "string"},
        "keyword_query": {"type": "string"},
        "is_follow_up": {"type": "boolean"},
        "is_meta": {"type": "boolean"},
        "topic_shift": {"type": "boolean"},
        "reasoning": {"type": "string"},
    },
    "required": ["semantic_query", "keyword_query", "is_follow_up", "is_meta", "topic_shift", "reasoning"],
}

SYSTEM = """You rewrite the user's latest message in a chat about their own documents into search queries.
Return JSON with these fields:
- semantic_query: one standalone question that can be understood without the conversation. Resolve
  pronouns ("it", "that", "they") and ellipsis ("what about X?") using the recent exchange. If the message
  is already standalone, or starts a new topic, keep it as it is. Never answer the question.
- keyword_query: 2 to 5 search terms separated by commas, taken from the KEYWORDS lists when they fit
  (the documents' own words: prefer "physicians" over "doctors" if the documents say physicians).
- is_follow_up: true if the message depends on the previous answer or continues its subject.
- is_meta: true if the message asks something about the previous answer itself (summarize it, tell me
  more, elaborate, give an example, rephrase, "why?") rather than a new question.
- topic_shift: true if the message moves to a different subject than the recent exchange.
- reasoning: one short sentence explaining the decision."""


def _keywords_line(title: str, words: tuple[str, ...]) -> str:
    return f"{title}: {', '.join(words) if words else '(none)'}"


def build_messages(data: ReformulationInput) -> list[dict[str, str]]:
    """The prompt: the recent exchange explicitly, the history window, and the keyword lists."""
    parts = []
    if data.window:
        parts.append("EARLIER RELEVANT MESSAGES:\n" + "\n".join(f"- {text[:500]}" for text in data.window))
    if data.has_history:
        parts.append(f"RECENT EXCHANGE:\nUser: {data.last.user}\nAssistant: {data.last.assistant[:1500]}")
    else:
        parts.append("RECENT EXCHANGE: (none: this is the first message)")
    parts.append(_keywords_line("KEYWORDS OF THE DOCUMENTS BEHIND THE LAST ANSWER", data.anchor_keywords[:30]))
    parts.append(_keywords_line("KEYWORDS OF THE CORPUS", data.corpus_keywords[:40]))
    parts.append(f"LATEST USER MESSAGE: {data.question}")
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "\n\n".join(parts)}]


def _validated(reply: dict, question: str) -> dict:
    semantic = reply["semantic_query"].strip()
    if not semantic:
        raise BackendUnavailable("empty semantic_query in reply")
    terms = [t.strip() for t in reply["keyword_query"].replace(";", ",").split(",") if t.strip()]
    if len(terms) == 1 and len(terms[0].split()) > 3:  # a list without commas: one term a word
        terms = terms[0].split()
    return {**reply, "semantic_query": semantic[:1000], "keyword_query": ", ".join(terms[:5]) or question}


def context_need(is_follow_up: bool, is_meta: bool, topic_shift: bool) -> float:
    """The model's flags as a weight for its rewrite next to the question itself."""
    if is_meta:
        return 1.0
    if topic_shift:
        return 0.0
    return 0.9 if is_follow_up else 0.3  # a standalone rewrite of a standalone question: a second opinion


class OllamaReformulator:
    def __init__(self, backend: ChatBackend) -> None:
        self.backend = backend
        self.name = f"ollama:{backend.model}"

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray | None = None) -> Reformulation:
        reply = _validated(self.backend.chat_json(build_messages(data), SCHEMA), data.question)
        is_meta = bool(reply["is_meta"]) and data.has_history
        follow_up = (bool(reply["is_follow_up"]) or is_meta) and data.has_history
        shift = bool(reply["topic_shift"]) and data.has_history
        return Reformulation(
            semantic_query=reply["semantic_query"], keyword_query=reply["keyword_query"],
            is_follow_up=follow_up, is_meta=is_meta, topic_shift=shift,
            reasoning=str(reply["reasoning"])[:300], reformulator=self.name,
            context_need=context_need(follow_up, is_meta, shift),
        )
