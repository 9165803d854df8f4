"""The built-in reformulator: no LLM, same output as the Ollama one.

Decision per turn (expanding blindly hurts, see RESEARCH.md):
- meta-request  -> reuse the last sources; the query stays the last one;
- explicit shift -> standalone query from what follows the shift phrase;
- follow-up cues (anaphora, ellipsis) -> follow-up, expanded with the last exchange's salient terms;
- otherwise the question's own terms decide: if most of their weight (idf) lies in terms that the
  corpus knows but neither the last exchange nor the anchor documents contain, it is an implicit
  topic shift; if not, it continues the conversation (anchored, lightly expanded).
"""

from __future__ import annotations

import numpy as np

import re

from ..text import QUESTION_WORDS, STOPWORDS, content_words, words
from .corpus import CorpusView
from .models import Reformulation, ReformulationInput
from .signals import Signals, read_signals

MAX_CONTEXT_TERMS = 10
MAX_KEYWORD_TERMS = 5
FOREIGN_SHARE = 0.25  # a term with less of its chunks in the anchor documents points elsewhere
SHIFT_WEIGHT = 0.6  # an implicit shift needs most of the question's weight pointing elsewhere...
SHIFT_SIMILARITY = 0.35  # ...and a question unlike the last one (cosine of the two)...
CONFIDENT = 0.5  # ...that finds a close chunk on its own (else it leans on the conversation)
MAX_ASKED_TERMS = 8
NAME = re.compile(r"(?<=[a-z,;:] )(?:[A-Z][\w'’-]+)(?: (?:[A-Z][\w'’-]+|of|de|van|von))*(?<! of)")


def _stem(word: str) -> str:
    """A crude stem, only to compare words across messages (FTS5 does the real stemming)."""
    for suffix in ("ations", "ation", "ings", "ing", "ies", "es", "s", "ed"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _names(text: str) -> list[str]:
    """Capitalised names inside sentences of a text ("Sportspark", "Andrew Carnegie"), most
    frequent first: what an answer is about, when pronouns point at it."""
    found: list[str] = []
    for match in NAME.finditer(text):
        name = match.group(0).lower()
        if not all(w in STOPWORDS or w in QUESTION_WORDS for w in name.split()):
            found.append(name)
    counts = {name: found.count(name) for name in found}
    return sorted(counts, key=lambda name: -counts[name])


def _stems(text: str) -> set[str]:
    return {_stem(w) for w in words(text)}


class HeuristicReformulator:
    name = "heuristic"

    def __init__(self, corpus: CorpusView) -> None:
        self.corpus = corpus

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        content = content_words(data.question)
        signals = read_signals(data.question, content)
        if not data.has_history:
            return self._standalone(data.question, content, question_vector, "first question of the session")
        if signals.explicit_shift:
            rest = signals.shift_rest
            return self._standalone(rest, content_words(rest), question_vector,
                                    "explicit topic shift", topic_shift=True)
        if signals.is_meta:
            return self._meta(data)
        cues = signals.follow_up_cues()
        if cues or not content:
            reason = "; ".join(cues) or "no subject of its own"
            return self._follow_up(data, signals, question_vector, reason, expand=True)
        elsewhere, where = self._points_elsewhere(data, content)
        known = [w for w in content if self.corpus.chunk_frequency(w) > 0]
        full_question = len(known) >= 3 and len(words(data.question)) >= 5
        if (elsewhere >= SHIFT_WEIGHT and full_question and data.last_user_similarity < SHIFT_SIMILARITY
                and self.corpus.best_similarity(question_vector) >= CONFIDENT):
            return self._standalone(data.question, content, question_vector,
                                    f"implicit topic shift: {where} not in the last exchange or its sources",
                                    topic_shift=True)
        vague = len(known) <= 2
        reason = "continues the last exchange" + (" (short question)" if vague else "")
        return self._follow_up(data, signals, question_vector, reason, expand=True)

    # --- decisions -------------------------------------------------------------------------

    def _points_elsewhere(self, data: ReformulationInput, content: list[str]) -> tuple[float, str]:
        """Share of the question's idf weight in corpus terms foreign to the conversation so far:
        absent from the last exchange, and living mostly outside the anchor documents."""
        seen = _stems(f"{data.last.user} {data.last.assistant}")
        anchors = list(data.anchor_chunk_ids)
        total, foreign, names = 0.0, 0.0, []
        for word in dict.fromkeys(content):
            if self.corpus.chunk_frequency(word) == 0:
                continue  # unknown to the corpus: says nothing about where the question points
            weight = self.corpus.idf(word)
            total += weight
            if _stem(word) not in seen and self.corpus.share_in(word, anchors) < FOREIGN_SHARE:
                foreign += weight
                names.append(repr(word))
        return (foreign / total if total else 0.0), ", ".join(names)

    # --- builders --------------------------------------------------------------------------

    def _standalone(self, question: str, content: list[str], vector: np.ndarray, reason: str,
                    topic_shift: bool = False) -> Reformulation:
        keywords = self._keyword_query(question, vector, [])
        return Reformulation(question.strip(), keywords, False, False, topic_shift, reason, self.name)

    def _meta(self, data: ReformulationInput) -> Reformulation:
        semantic = data.last_semantic_query or data.last.user
        keywords = data.last_keyword_query or " ".join(content_words(data.last.user))
        return Reformulation(semantic, keywords, True, True, False,
                             "meta-request about the last answer: reuse its sources", self.name)

    def _follow_up(self, data: ReformulationInput, signals: Signals, vector: np.ndarray, reason: str,
                   expand: bool) -> Reformulation:
        context = self._context_terms(data, signals.content, MAX_CONTEXT_TERMS if expand else 3)
        semantic = data.question.strip()
        if context:
            semantic = f"{semantic} ({', '.join(context)})"
        keywords = self._keyword_query(data.question, vector, context)
        return Reformulation(semantic, keywords, True, False, False, f"follow-up: {reason}", self.name)

    def _context_terms(self, data: ReformulationInput, content: list[str], limit: int) -> list[str]:
        """Salient terms of the last exchange, none the question already has: the anchor documents'
        keywords that the last question used, the subject of the last question (its content
        words, rarest first), the keywords the last answer used, then one rare term of the
        relevant older messages. Not the whole history: older turns pull in old sub-topics."""
        own = {_stem(w) for w in content}
        asked_text = data.last.user.lower()
        in_question = [k for k in data.anchor_keywords if k in asked_text]
        asked = sorted(dict.fromkeys(content_words(data.last.user)), key=lambda w: -self.corpus.idf(w))
        if data.anchor_chunk_ids:  # the last question's words that its answer's documents share
            anchors = list(data.anchor_chunk_ids)
            asked = [w for w in asked if self.corpus.share_in(w, anchors) > 0]
        in_answer = [k for k in data.anchor_keywords if k in data.last.assistant.lower()]
        named = _names(data.last.assistant)
        window = [w for text in data.window for w in content_words(text) if self.corpus.idf(w) > 2.0]
        picked: list[str] = []
        covered = set(own)
        for term in [*in_question, *named[:2], *asked[:MAX_ASKED_TERMS], *in_answer[:2], *window[:1]]:
            stems = _stems(term)
            if stems and not stems <= covered:
                picked.append(term)
                covered |= stems
        return picked[:limit]

    def _keyword_query(self, question: str, vector: np.ndarray, context: list[str]) -> str:
        """2-5 terms in the corpus's own words: the question's own phrases (runs of content
        words the corpus knows, rarest first), two context terms for a follow-up, and - when the
        user's words are not the corpus's (a word it never uses, or too little left) - the
        corpus keywords nearest in meaning to the question ("doctors" -> "physicians")."""
        phrases, unknown = self._phrases(question)
        phrases.sort(key=lambda p: -max(self.corpus.idf(w) for w in p.split()))
        terms = phrases[:3]
        covered = set().union(*(_stems(t) for t in terms)) if terms else set()
        for term in context[:2]:
            if not _stems(term) <= covered:
                terms.append(term)
                covered |= _stems(term)
        if unknown or len(terms) < 2:
            for keyword in self.corpus.nearest_keywords(vector, n=3):
                if len(terms) >= MAX_KEYWORD_TERMS:
                    break
                if not _stems(keyword) <= covered:
                    terms.append(keyword)
                    covered |= _stems(keyword)
        return ", ".join(terms[:MAX_KEYWORD_TERMS])

    def _phrases(self, question: str) -> tuple[list[str], bool]:
        """Runs of consecutive content words the corpus knows ("small claims court"), and
        whether the question used a word the corpus never does."""
        phrases, run, unknown = [], [], False
        for word in [*words(question), ""]:
            if word and word in set(content_words(word)):
                if self.corpus.chunk_frequency(word) > 0:
                    run.append(word)
                    continue
                unknown = True
            if run:
                phrases.append(" ".join(run[:3]))
            run = []
        return list(dict.fromkeys(phrases)), unknown
