"""The built-in reformulator: no LLM, same output as the Ollama one.

It does not decide *whether* to use the conversation so much as *how much*: `context_need`
(0..1) sets the weight of the context-expanded queries in the fusion, next to the question's own
queries, which always count in full (see `plan.py`). A wrong guess therefore costs little.

- meta-request ("summarize it", "why?") -> the last sources first, then a search with the last
  query (need 1);
- explicit shift ("now tell me about X") -> X stands alone (need 0);
- follow-up cues (a pronoun or "the document" pointing back, an elliptical opening, no subject
  of its own) -> a follow-up: need 1, less when the question alone comes close to some chunk;
- a question whose own rare terms the conversation and its sources lack -> a new topic, however
  short: it keeps only a little context (NEW_TOPIC_NEED, 0.1), in case the guess is wrong, and
  more (up to WEAK_NEED more) when the question alone finds nothing close: new words that say
  too little to stand alone ("Major characters", "What kind of food should I eat?") lean on the
  conversation after all;
- otherwise it may continue the conversation: need falls with the share of its terms that are
  foreign to the conversation and with how close the question alone comes.
Pointers that point at nothing in the conversation are not cues: a pronoun after a name in the
same question ("What is HAART and how does it differ ..."), an expletive "it" ("is it true
that"), a relative "that", a demonstrative whose noun the conversation never mentioned ("this
novel" after a talk about taxes), chat discourse ("got it", "that's interesting").
"""

from __future__ import annotations

import re
from dataclasses import replace

import numpy as np

from ..text import content_words, stem, stems, subject_words, words
from .context import (
    POSSESSIVE,
    PRONOUNS,
    conversation_terms,
    named_referent,
    names,
    pick_referent,
    pick_terms,
    referent_candidates,
)
from .corpus import CorpusStats
from .models import Reformulation, ReformulationInput
from .signals import DEICTIC_NOUNS, DISCOURSE, Signals, read_signals

MAX_CONTEXT_TERMS = 8
MAX_KEYWORD_TERMS = 5
FOREIGN_SHARE = 0.25  # a term with less of its chunks in the anchor documents points elsewhere
SHIFT_WEIGHT = 0.6  # most of the question's weight in terms foreign to the conversation: new topic
NEW_TOPIC_NEED = 0.1  # a new topic keeps a little context, in case the guess is wrong...
WEAK_NEED = 0.4  # ...and this much more when the question alone finds nothing close (see own_weakness)
FOREIGN_DAMPING = 0.7  # how much a question's terms foreign to the conversation lower its need
WHAT_ABOUT = re.compile(r"^\s*(?:and\s+)?(?:what|how)\s+about\s+(.+)$", re.IGNORECASE)


def own_closeness(best: float) -> float:
    """0..1: how close the question alone comes to some chunk (cosine 0.4 -> 0, 0.7 -> 1): how
    well it stands alone, whether one document or several answer it."""
    return min(max((best - 0.4) / 0.3, 0.0), 1.0)


def own_confidence(best: float, margin: float) -> float:
    """0..1: how clearly the question alone finds *one* document (a close chunk, well ahead of
    the next document): what it takes to name a new subject."""
    return own_closeness(best) * min(max(margin / 0.1, 0.0), 1.0)


def own_weakness(best: float) -> float:
    """0..1: how little the question alone finds: 1 when its best chunk is barely related
    (cosine <= 0.35), 0 from a plausible match (>= 0.45) up."""
    return min(max((0.45 - best) / 0.1, 0.0), 1.0)


def _possessive(referent: str) -> str:
    """"honey" -> "honey's", "bees" -> "bees'"."""
    return f"{referent}'" if referent.endswith("s") else f"{referent}'s"


def _resolved(question: str, pointer: str, referent: str) -> str:
    """The question with its first pointing phrase (outside chat discourse such as "got it")
    replaced by what it points at: "its genre" -> "the novel's genre"."""
    chat = [m.span() for m in DISCOURSE.finditer(question)]
    for match in re.finditer(rf"\b{re.escape(pointer)}\b", question, re.IGNORECASE):
        if not any(start <= match.start() < end for start, end in chat):
            said = _possessive(referent) if pointer.lower() in POSSESSIVE else referent
            return question[: match.start()] + said + question[match.end():]
    return f"{question} ({referent})"


class HeuristicReformulator:
    name = "heuristic"

    def __init__(self, corpus: CorpusStats) -> None:
        self.corpus = corpus

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        signals = read_signals(data.question, subject_words(data.question))
        own = signals.content
        if not data.has_history:
            return self._standalone(data.question, question_vector, "first question of the session")
        if signals.explicit_shift:
            return self._standalone(signals.shift_rest, question_vector, "explicit topic shift", topic_shift=True)
        if signals.is_meta:
            return self._meta(data)
        foreign, where = self.foreign_share(data, own)
        # how much the question stands alone lowers its need; the margin (which document) does not
        # enter: a question that several documents answer closely stands alone just as well
        closeness = own_closeness(data.own_best)
        signals = self._grounded(signals, data)
        cues = signals.follow_up_cues() + ([] if own else ["no subject of its own"])
        if cues:  # it points at the conversation, whatever its own words
            need = 1.0 if not own else 1.0 - 0.7 * closeness
            return self._follow_up(data, signals, question_vector, "; ".join(cues), need)
        need = (1 - FOREIGN_DAMPING * foreign) * (1 - 0.5 * closeness)
        if foreign >= SHIFT_WEIGHT:
            weakness = own_weakness(data.own_best)
            why = f"new topic: {where} not in the conversation or its sources" + (
                "; the question alone finds little, so some context stays" if weakness > 0 else "")
            return self._follow_up(data, signals, question_vector, why, min(need, NEW_TOPIC_NEED) + WEAK_NEED * weakness,
                                   topic_shift=True)
        return self._follow_up(data, signals, question_vector, "may continue the conversation", need)

    # --- decisions -------------------------------------------------------------------------

    def foreign_share(self, data: ReformulationInput, own: list[str]) -> tuple[float, str]:
        """Share of the question's idf weight in corpus terms foreign to the conversation so far:
        absent from the topic's questions and the last answer, and living mostly outside the
        anchor documents."""
        seen = stems(" ".join([*data.topic_questions, data.last.user, data.last.assistant]))
        anchors = list(data.anchor_chunk_ids)
        total, foreign, found = 0.0, 0.0, []
        for word in dict.fromkeys(own):
            if self.corpus.chunk_frequency(word) == 0:
                continue  # unknown to the corpus: says nothing about where the question points
            weight = self.corpus.idf(word)
            total += weight
            if stem(word) not in seen and self.corpus.share_in(word, anchors) < FOREIGN_SHARE:
                foreign += weight
                found.append(repr(word))
        return (foreign / total if total else 0.0), ", ".join(found)

    def _grounded(self, signals: Signals, data: ReformulationInput) -> Signals:
        """Drop demonstratives whose noun the conversation never mentioned: "this novel" after
        a talk about tax forms points at something new, not back."""
        seen = stems(" ".join([*data.topic_questions, data.last.user, data.last.assistant]))
        anchors = list(data.anchor_chunk_ids)
        kept = []
        for cue in signals.anaphora:
            head, _, noun = cue.partition(" ")
            if (noun and head in {"this", "that", "these", "those"} and noun not in DEICTIC_NOUNS
                    and self.corpus.chunk_frequency(noun) > 0 and stem(noun) not in seen
                    and self.corpus.share_in(noun, anchors) < FOREIGN_SHARE):
                continue
            kept.append(cue)
        return replace(signals, anaphora=kept)

    # --- builders --------------------------------------------------------------------------

    def _standalone(self, question: str, vector: np.ndarray, reason: str, topic_shift: bool = False) -> Reformulation:
        keywords = self._keyword_query(question, vector, [])
        return Reformulation(question.strip(), keywords, False, False, topic_shift, reason, self.name, 0.0)

    def _meta(self, data: ReformulationInput) -> Reformulation:
        semantic = data.last_semantic_query or data.last.user
        keywords = data.last_keyword_query or " ".join(content_words(data.last.user))
        return Reformulation(semantic, keywords, True, True, False,
                             "meta-request about the last answer: its sources, and a search for more", self.name, 1.0)

    def _follow_up(self, data: ReformulationInput, signals: Signals, vector: np.ndarray, reason: str,
                   need: float, topic_shift: bool = False) -> Reformulation:
        subject = WHAT_ABOUT.match(data.question)
        # "what about X?" with X found confidently outside the last answer's sources: X is the new subject
        new_subject = bool(subject and subject_words(subject.group(1)) and not data.own_best_anchored
                           and own_confidence(data.own_best, data.own_margin) >= 0.5)
        new_name = bool(subject and names(subject.group(1), sentence_start=True))  # "what about Ivanka?": a new subject
        topic = data.topic_questions or ((data.last.user,) if data.last.user else ())
        terms = conversation_terms(self.corpus, topic, data.last.assistant)
        context = pick_terms(terms, [*signals.content, *words(data.question)], MAX_CONTEXT_TERMS, drop_names=new_name)
        sources = {t.text: t.source for t in terms}
        semantic = data.question.strip()
        pointer = next((a for a in signals.anaphora if len(a.split()) == 1 or a.split()[1] in DEICTIC_NOUNS), None)
        named = named_referent(signals.anaphora, terms)
        referent: str | None = None
        if named:  # "in this County" -> "in ventura county"
            pointer, referent = named
        elif pointer in PRONOUNS:  # "what would happen if they died out?" -> "... if bees died out?"
            candidates = referent_candidates(self.corpus, topic, data.last_semantic_query, data.last.assistant)
            referent = pick_referent(pointer, candidates if not new_name else [], data.question)
        elif pointer and " " in pointer:  # "the document", "this article": the topic's best term
            referent = next((t for t in context if sources.get(t) != "answer"), None)
        if pointer and referent:
            semantic = _resolved(semantic, pointer, referent)
            context = [t for t in context if not stems(t) <= stems(referent)]
        else:
            referent = next((t for t in context if sources.get(t) != "answer"), None)
        if context:
            semantic = f"{semantic} ({', '.join(context)})"
        keywords = self._keyword_query(data.question, vector, [*([referent] if referent else []), *context],
                                       subject=signals.content)
        why = reason if topic_shift else f"follow-up: {reason}" + (" (a new subject replaces the last one)" if new_subject else "")
        return Reformulation(semantic, keywords, not topic_shift, False, topic_shift, why, self.name, round(need, 3),
                             new_subject=new_subject)

    def _keyword_query(self, question: str, vector: np.ndarray, context: list[str],
                       subject: list[str] | None = None) -> str:
        """2-5 terms in the corpus's own words: the question's own phrases (runs of content
        words the corpus knows, rarest first), two context terms for a follow-up, and - when the
        user's words are not the corpus's (a word it never uses, or too little left) - the
        corpus keywords nearest in meaning to the question ("doctors" -> "physicians")."""
        phrases, unknown = self._phrases(question, subject_words(question) if subject is None else subject)
        phrases.sort(key=lambda p: -max(self.corpus.idf(w) for w in p.split()))
        terms = phrases[:3]
        covered = set().union(*(stems(t) for t in terms)) if terms else set()
        for term in context[:2]:
            if not stems(term) <= covered:
                terms.append(term)
                covered |= stems(term)
        if unknown or len(terms) < 2:
            for keyword in self.corpus.nearest_keywords(vector, n=3):
                if len(terms) >= MAX_KEYWORD_TERMS:
                    break
                if not stems(keyword) <= covered:
                    terms.append(keyword)
                    covered |= stems(keyword)
        return ", ".join(terms[:MAX_KEYWORD_TERMS])

    def _phrases(self, question: str, subject_list: list[str]) -> tuple[list[str], bool]:
        """Runs of consecutive subject words the corpus knows ("small claims court"), and
        whether the question used a word the corpus never does."""
        subject = set(subject_list)
        phrases, run, unknown = [], [], False
        for word in [*words(question), ""]:
            if word and word in subject:
                if self.corpus.chunk_frequency(word) > 0:
                    run.append(word)
                    continue
                unknown = True
            if run:
                phrases.append(" ".join(run[:3]))
            run = []
        return list(dict.fromkeys(phrases)), unknown
