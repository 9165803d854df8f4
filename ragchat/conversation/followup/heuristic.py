"""The built-in reformulator: no LLM, same output as the Ollama one.

cues -> referent and terms -> need for context -> queries. `decide` reads the question's cues
(`cues.py`) against the conversation and sets `context_need` (0..1): the weight of the
context-expanded queries in the fusion, next to the question's own queries, which always count
in full (see `plan.py`); a wrong guess therefore costs little. The builders then write the
queries: the question with its pointer replaced by its referent (`referents.py`), the
conversation's terms (`terms.py`) and a keyword query in the corpus's words. The English is in
`ragchat/lexicon.py`, the numbers in `ragchat/params.py` (`FollowupParams`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from ...lexicon import DEICTIC_NOUNS, DEMONSTRATIVES, POSSESSIVE, REPLACEABLE
from ...params import FollowupParams
from ...text import compounds, content_words, is_compound, stem, stems, subject_words, words
from ..corpus import CorpusStats
from ..models import Reformulation, ReformulationInput
from .cues import (
    Signals,
    is_deixis,
    meta_own_words,
    meta_subject,
    read_signals,
    what_about_subject,
)
from .referents import (
    held_by_question,
    named_referent,
    pick_referent,
    referent_candidates,
    resolved,
)
from .terms import conversation_terms, names, pick_terms

DecisionKind = Literal["first", "shift", "meta", "follow_up", "new_topic", "continues"]


def own_closeness(best: float, params: FollowupParams) -> float:
    """0..1: how close the question alone comes to some chunk (cosine 0.4 -> 0, 0.7 -> 1): how
    well it stands alone, whether one document or several answer it."""
    return min(max((best - params.close_from) / params.close_span, 0.0), 1.0)


def own_confidence(best: float, margin: float, params: FollowupParams) -> float:
    """0..1: how clearly the question alone finds *one* document (a close chunk, well ahead of
    the next document): what it takes to name a new subject."""
    return own_closeness(best, params) * min(max(margin / params.confident_margin, 0.0), 1.0)


def own_weakness(best: float, params: FollowupParams) -> float:
    """0..1: how little the question alone finds: 1 when its best chunk is barely related
    (cosine <= 0.35), 0 from a plausible match (>= 0.45) up."""
    return min(max((params.weak_below - best) / params.weak_span, 0.0), 1.0)


def own_elsewhere(data: ReformulationInput, params: FollowupParams) -> float:
    """0..1: how clearly the question alone points away from the last answer's documents: its
    best chunk lies outside them, leads the best of theirs (a lead of 0.05 -> 0, 0.15 -> 1) and
    its document leads the next (confident_margin). Meaning, not words: "What is the g object
    used for?" after a 404 answer finds the request globals, not the error pages."""
    if data.own_best_anchored or not data.anchor_chunk_ids or data.own_anchor_best is None:
        return 0.0
    lead = data.own_best - data.own_anchor_best
    away = min(max((lead - params.elsewhere_from) / params.elsewhere_span, 0.0), 1.0)
    return away * min(max(data.own_margin / params.confident_margin, 0.0), 1.0)


@dataclass(frozen=True)
class Decision:
    """How much the question needs the conversation, and why."""

    kind: DecisionKind
    need: float
    reason: str
    signals: Signals

    @property
    def topic_shift(self) -> bool:
        return self.kind in ("shift", "new_topic")


class ConversationSoFar:
    """What the conversation so far has said: the test of a word foreign to it, written once."""

    def __init__(
        self, corpus: CorpusStats, data: ReformulationInput, params: FollowupParams
    ) -> None:
        self.corpus, self.params = corpus, params
        self.seen = stems(" ".join([*data.topic_questions, data.last.user, data.last.assistant]))
        self.anchors = list(data.anchor_chunk_ids)

    def foreign(self, word: str) -> bool:
        """A corpus word absent from the topic's questions and the last exchange that lives mostly
        outside the anchor documents: it points elsewhere."""
        return (
            stem(word) not in self.seen
            and self.corpus.share_in(word, self.anchors) < self.params.foreign_share
        )


class HeuristicReformulator:
    name = "heuristic"

    def __init__(self, corpus: CorpusStats, params: FollowupParams) -> None:
        self.corpus = corpus
        self.params = params

    def reformulate(self, data: ReformulationInput, question_vector: np.ndarray) -> Reformulation:
        decision = self.decide(data)
        if decision.kind == "first":
            return self._standalone(data.question, question_vector, decision.reason)
        if decision.kind == "shift":
            return self._standalone(
                decision.signals.shift_rest, question_vector, decision.reason, topic_shift=True
            )
        if decision.kind == "meta":
            return self._meta(data, decision.reason)
        return self._follow_up(data, decision, question_vector)

    # --- the need for context --------------------------------------------------------------

    def decide(self, data: ReformulationInput) -> Decision:
        """The question's need for the conversation, from its cues and how foreign its words are."""
        signals = read_signals(data.question, subject_words(data.question))
        if not data.has_history:
            return Decision(
                kind="first", need=0.0, reason="first question of the session", signals=signals
            )
        if signals.explicit_shift:
            return Decision(kind="shift", need=0.0, reason="explicit topic shift", signals=signals)
        own = meta_own_words(data.question)
        if signals.is_meta and own:
            # "tell me more about Z": about the last answer while Z (and whatever else the
            # question says) is in the conversation; words foreign to it make a question
            conversation = ConversationSoFar(self.corpus, data, self.params)
            foreign, _ = self.foreign_share(conversation, own)
            if foreign >= self.params.shift_weight:
                signals = replace(
                    signals,
                    is_meta=False,
                    cues=tuple(cue for cue in signals.cues if cue.kind != "meta"),
                )
        if signals.is_meta:
            return Decision(
                kind="meta",
                need=1.0,
                reason="meta-request about the last answer: its sources, and a search for more",
                signals=signals,
            )
        return self._weighed(data, signals)

    def _weighed(self, data: ReformulationInput, signals: Signals) -> Decision:
        """A question with history and no shift or meta cue: its follow-up cues and how foreign its
        own words are to the conversation decide."""
        conversation = ConversationSoFar(self.corpus, data, self.params)
        own = signals.content
        foreign, where = self.foreign_share(conversation, own)
        # how much the question stands alone lowers its need; the margin (which document) does not
        # enter: a question that several documents answer closely stands alone just as well
        closeness = own_closeness(data.own_best, self.params)
        signals = self._grounded(signals, conversation)
        cues = signals.follow_up_cues() + ([] if own else ["no subject of its own"])
        if data.moved:  # "same idea in click?": the conversation's subject, asked elsewhere
            cues.append(f"asks in {', '.join(data.moved)}, where the last answer did not stand")
        if cues:  # it points at the conversation, whatever its own words
            need = 1.0 if not own else 1.0 - self.params.cue_closeness_damping * closeness
            return Decision(kind="follow_up", need=need, reason="; ".join(cues), signals=signals)
        need = (1 - self.params.foreign_damping * foreign) * (
            1 - self.params.continue_closeness_damping * closeness
        )
        if foreign >= self.params.shift_weight:
            weakness = own_weakness(data.own_best, self.params)
            why = f"new topic: {where} not in the conversation or its sources" + (
                "; the question alone finds little, so some context stays" if weakness > 0 else ""
            )
            kept = min(need, self.params.new_topic_need) + self.params.weak_need * weakness
            return Decision(kind="new_topic", need=kept, reason=why, signals=signals)
        need *= 1 - self.params.elsewhere_damping * own_elsewhere(data, self.params)
        return Decision(
            kind="continues", need=need, reason="may continue the conversation", signals=signals
        )

    def foreign_share(self, conversation: ConversationSoFar, own: list[str]) -> tuple[float, str]:
        """Share of the question's idf weight in corpus terms foreign to the conversation so far."""
        total, foreign, found = 0.0, 0.0, []
        for word in dict.fromkeys(own):
            if self.corpus.chunk_frequency(word) == 0:
                continue  # unknown to the corpus: says nothing about where the question points
            weight = self.corpus.idf(word)
            total += weight
            if conversation.foreign(word):
                foreign += weight
                found.append(repr(word))
        return (foreign / total if total else 0.0), ", ".join(found)

    def _grounded(self, signals: Signals, conversation: ConversationSoFar) -> Signals:
        """Drop demonstratives whose noun the conversation never mentioned: "this novel" after
        a talk about tax forms points at something new, not back."""
        dropped = {cue for cue in signals.anaphora if self._points_elsewhere(cue, conversation)}
        return replace(
            signals,
            anaphora=[cue for cue in signals.anaphora if cue not in dropped],
            cues=tuple(cue for cue in signals.cues if cue.text not in dropped),
        )

    def _points_elsewhere(self, cue: str, conversation: ConversationSoFar) -> bool:
        head, _, noun = cue.partition(" ")
        return bool(
            noun
            and head in DEMONSTRATIVES
            and noun not in DEICTIC_NOUNS
            and self.corpus.chunk_frequency(noun) > 0
            and conversation.foreign(noun)
        )

    # --- the queries -----------------------------------------------------------------------

    def _standalone(
        self, question: str, vector: np.ndarray, reason: str, topic_shift: bool = False
    ) -> Reformulation:
        keywords = self._keyword_query(question, vector, [])
        return Reformulation(
            semantic_query=question.strip(),
            keyword_query=keywords,
            is_follow_up=False,
            is_meta=False,
            topic_shift=topic_shift,
            reasoning=reason,
            reformulator=self.name,
            context_need=0.0,
        )

    def _meta(self, data: ReformulationInput, reason: str) -> Reformulation:
        """What the last searching turn was about, with the request's own subject first ("an
        example with Y"). A turn that was not read as a follow-up (a first question, a new
        topic) was about its own words: the terms it carried from the talk before it (at a
        small weight) are not what a request about its answer asks for. A subject of its own
        leads, with the last turn's terms beside it rather than its whole sentence: "summarize
        the settings that control the pagination defaults" is about those settings, not about
        the last question's feed and rows."""
        subject = meta_subject(data.question) or ""
        question = data.last_question or data.last.user
        if data.last_followed:
            understood = data.last_semantic_query or question
            last_keywords = data.last_keyword_query or " ".join(content_words(question))
        else:
            understood = question
            last_keywords = _own_terms(data.last_keyword_query, question) or " ".join(
                content_words(question)
            )
        if subject:
            terms = ", ".join(t.strip() for t in last_keywords.split(",") if t.strip())
            semantic = f"{subject} ({terms})" if terms else subject
        else:
            semantic = understood
        keywords = ", ".join(filter(None, [subject, last_keywords]))
        return Reformulation(
            semantic_query=semantic,
            keyword_query=keywords,
            is_follow_up=True,
            is_meta=True,
            topic_shift=False,
            reasoning=reason,
            reformulator=self.name,
            context_need=1.0,
            points_back=True,
        )

    def _follow_up(
        self, data: ReformulationInput, decision: Decision, vector: np.ndarray
    ) -> Reformulation:
        signals, topic_shift = decision.signals, decision.topic_shift
        subject = what_about_subject(data.question)
        # "what about X?", X found confidently outside the last sources: X is the new subject
        new_subject = bool(
            subject
            and subject_words(subject)
            and not data.own_best_anchored
            and own_confidence(data.own_best, data.own_margin, self.params)
            >= self.params.new_subject_confidence
        )
        new_name = bool(
            subject and names(subject, sentence_start=True)
        )  # "what about Ivanka?": a new subject
        topic = data.topic_questions or ((data.last.user,) if data.last.user else ())
        terms = conversation_terms(self.corpus, topic, data.last.assistant, self.params)
        context = pick_terms(
            terms,
            [*signals.content, *words(data.question)],
            self.params.max_context_terms,
            drop_names=new_name,
        )
        sources = {t.text: t.source for t in terms}
        semantic = data.question.strip()
        pointer = next((a for a in signals.anaphora if len(a.split()) == 1 or is_deixis(a)), None)
        named = named_referent(signals.anaphora, terms)
        referent: str | None = None
        held = False  # the question names its pronoun's thing itself
        if named:  # "in this County" -> "in ventura county"
            pointer, referent = named
        elif (
            pointer in REPLACEABLE
        ):  # "what would happen if they died out?" -> "... if bees died out?"
            candidates = referent_candidates(
                self.corpus, topic, data.last_semantic_query, data.last.assistant, self.params
            )
            held = held_by_question(self.corpus, data.question, pointer, self.params)
            found = [] if new_name or held else candidates
            referent = pick_referent(pointer, found, data.question, self.params)
        elif pointer and " " in pointer:  # "the document", "this article": the topic's best term
            referent = next((t for t in context if sources.get(t) != "answer"), None)
        if pointer and referent:
            semantic = resolved(semantic, pointer, referent)
            context = [t for t in context if not stems(t) <= stems(referent)]
        else:
            referent = next((t for t in context if sources.get(t) != "answer"), None)
        if context:
            semantic = f"{semantic} ({', '.join(context)})"
        searched = [*([referent] if referent else []), *context]
        if held and pointer not in POSSESSIVE:  # the topic's first term leads the keywords
            searched = list(dict.fromkeys(searched))  # once, as a resolved referent would
        keywords = self._keyword_query(data.question, vector, searched, subject=signals.content)
        why = (
            decision.reason
            if topic_shift
            else f"follow-up: {decision.reason}"
            + (" (a new subject replaces the last one)" if new_subject else "")
        )
        return Reformulation(
            semantic_query=semantic,
            keyword_query=keywords,
            is_follow_up=not topic_shift,
            is_meta=False,
            topic_shift=topic_shift,
            reasoning=why,
            reformulator=self.name,
            context_need=round(decision.need, 3),
            new_subject=new_subject,
            points_back=decision.kind == "follow_up",
        )

    def _keyword_query(
        self,
        question: str,
        vector: np.ndarray,
        context: list[str],
        subject: list[str] | None = None,
    ) -> str:
        """2-5 terms in the corpus's own words: the question's own phrases (runs of content
        words the corpus knows, rarest first), two context terms for a follow-up, and - when the
        user's words are not the corpus's (a word it never uses, or too little left) - the
        corpus keywords nearest in meaning to the question ("doctors" -> "physicians")."""
        limit = self.params.max_keyword_terms
        phrases, unknown = self._phrases(
            question, subject_words(question) if subject is None else subject
        )
        phrases.sort(key=self._rarity, reverse=True)
        terms = phrases[: self.params.keyword_phrases]
        covered = set().union(*(stems(t) for t in terms)) if terms else set()
        for term in context[: self.params.keyword_context_terms]:
            if not stems(term) <= covered:
                terms.append(term)
                covered |= stems(term)
        if unknown or len(terms) < self.params.min_keyword_terms:
            nearest = self.corpus.nearest_keywords(
                vector, n=self.params.nearest_keywords, minimum=self.params.keyword_similarity
            )
            for keyword in nearest:
                if len(terms) >= limit:
                    break
                if not stems(keyword) <= covered:
                    terms.append(keyword)
                    covered |= stems(keyword)
        return ", ".join(terms[:limit])

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
                phrases.append(" ".join(run[: self.params.max_phrase_words]))
            run = []
        # a compound of common words ("one-off") is a term of its own when the corpus uses it
        phrases += [c for c in compounds(question) if self.corpus.chunk_frequency(c) > 0]
        return list(dict.fromkeys(phrases)), unknown

    def _rarity(self, phrase: str) -> float:
        """A phrase's weight: its rarest word's idf; a compound's own (its words are common)."""
        if is_compound(phrase):
            return self.corpus.idf(phrase)
        return max(self.corpus.idf(w) for w in phrase.split())


def _own_terms(keyword_query: str, question: str) -> str:
    """The terms of a keyword query whose words the question itself holds (stem-matched): what
    a turn searched for of its own, without what it carried from the conversation."""
    held = stems(question)
    own = [
        term.strip()
        for term in keyword_query.split(",")
        if term.strip() and words(term) and all(stem(w) in held for w in words(term))
    ]
    return ", ".join(own)
