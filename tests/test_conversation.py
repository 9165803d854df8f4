"""The seed scenarios of a session on sample_docs/, through `ragchat ask`, plus lineage and inspect.

Real library (sample_docs ingested with the real model), real SQLite, the CLI through typer's
runner; Ollama is unreachable here, so the heuristic reformulator and extractive answers run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import ask_json, invoke

from ragchat.answer import CITATION
from ragchat.store import sessions
from ragchat.store.db import open_db
from ragchat.text import split_sentences

WILLS = "south_africa_wills.md"
COURT = "south_africa_witnesses_in_court.html"
HANDBOOK = "homestead_handbook.rst"


def chunk_texts(db_path: Path, turn: dict) -> list[str]:
    db = open_db(db_path)
    try:
        ids = [c["chunk_id"] for c in turn["chunks"]]
        rows = dict(
            db.execute(
                f"SELECT id, text FROM chunks WHERE id IN ({','.join('?' * len(ids))})", ids
            ).fetchall()
        )
        return [rows[i] for i in ids]
    finally:
        db.close()


def section_number(heading: str) -> int:
    leaf = heading.split(" > ")[-1]
    return int(leaf.split(".")[0])


def test_will_witness_age_follow_up(library_db: Path, runner) -> None:
    first = ask_json(runner, library_db, "s1", "What makes a will legally binding in South Africa?")
    assert first["plan"] == "search" and not first["reformulation"]["is_follow_up"]
    second = ask_json(runner, library_db, "s1", "what age must a witness be")
    assert second["reformulation"]["is_follow_up"] is True
    assert second["plan"] == "anchored_search"
    assert second["anchor_documents"] == [WILLS]
    texts = chunk_texts(library_db, second)
    will_rank = next(i for i, text in enumerate(texts) if "14 years" in text)
    assert second["chunks"][will_rank]["document"] == WILLS
    assert will_rank == 0, "the will-witness chunk (14 years) comes first"
    general = [
        i
        for i, text in enumerate(texts)
        if "18 years" in text and second["chunks"][i]["document"] == COURT
    ]
    assert all(i > will_rank for i in general)


def test_the_same_follow_up_without_context_is_ambiguous(library_db: Path, runner) -> None:
    """Why anchoring matters: asked alone, the question pulls in the court-witness document."""
    alone = ask_json(runner, library_db, "alone", "what age must a witness be")
    assert COURT in {c["document"] for c in alone["chunks"][:3]}


def test_elaborate_reuses_topic_a_then_explicit_shift_to_b(library_db: Path, runner) -> None:
    first = ask_json(runner, library_db, "s2", "How does composting work?")
    assert first["chunks"][0]["document"] == HANDBOOK
    more = ask_json(runner, library_db, "s2", "Can you elaborate more on that?")
    assert more["reformulation"]["is_meta"] is True and more["plan"] == "reuse"
    reused = [c for c in more["chunks"] if c["reused"]]
    assert reused and more["chunks"][: len(reused)] == reused, "the last sources come first"
    for chunk in reused:
        assert chunk["document"] == HANDBOOK and section_number(chunk["heading"]) in {1, 2, 3}
        assert chunk["anchored"]
    fresh = [c for c in more["chunks"] if not c["reused"]]
    assert fresh, "a meta-request also searches for more evidence"
    shift = ask_json(runner, library_db, "s2", "Now tell me about rainwater harvesting")
    assert shift["reformulation"]["is_follow_up"] is False
    assert shift["reformulation"]["topic_shift"] is True
    assert shift["plan"] == "search"
    top = shift["chunks"][:4]
    assert all(c["document"] == HANDBOOK and section_number(c["heading"]) in {4, 5, 6} for c in top)
    assert not any(c["anchored"] or c["reused"] for c in shift["chunks"])


@pytest.mark.parametrize("meta", ["summarize it", "tell me more"])
def test_meta_requests_reuse_the_previous_chunks(library_db: Path, runner, meta: str) -> None:
    first = ask_json(runner, library_db, "s3", "How does a heat pump defrost cycle work?")
    used = [c["chunk_id"] for c in first["chunks"] if c["used"]] or [
        c["chunk_id"] for c in first["chunks"]
    ]
    again = ask_json(runner, library_db, "s3", meta)
    assert again["plan"] == "reuse" and again["reformulation"]["is_meta"]
    assert (
        not again["weak_match"] and "may not cover" not in again["answer"]
    )  # about the last answer, not the library
    assert [c["chunk_id"] for c in again["chunks"][: len(used)]] == used, "the last sources first"
    assert all(c["reused"] for c in again["chunks"][: len(used)])
    assert not any(c["reused"] for c in again["chunks"][len(used) :])
    chained = ask_json(runner, library_db, "s3", "explain it in other words")
    assert chained["plan"] == "reuse"
    assert [c["chunk_id"] for c in chained["chunks"][: len(used)]] == used, (
        "a chain of meta-requests keeps them"
    )


def test_tell_me_more_says_something_new(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "s3b", "What is the first-flush diverter for?")
    db = open_db(library_db)
    history = sessions.messages(db, sessions.session_id(db, "s3b"))
    first_answer = history[-1].content
    ask_json(runner, library_db, "s3b", "tell me more")
    second_answer = sessions.messages(db, sessions.session_id(db, "s3b"))[-1].content
    db.close()
    said = {sentence.strip() for sentence in split_sentences(CITATION.sub("", first_answer))}
    new = {sentence.strip() for sentence in split_sentences(CITATION.sub("", second_answer))}
    assert new and said and not (new & said)


@pytest.mark.parametrize(
    ("opening", "follow_up", "document"),
    [
        ("Tell me about heat pumps", "How does it work?", "heat_pumps_explained.md"),
        (
            "Is there a document about sourdough?",
            "What is the document about?",
            "sourdough_baking.pdf",
        ),
        (
            "What does POPIA require from an information officer?",
            "What is the document about?",
            "data_protection_popia.md",
        ),
    ],
)
def test_vague_follow_up_retrieves_the_named_subject(
    library_db: Path, runner, opening, follow_up, document
) -> None:
    ask_json(runner, library_db, "s4", opening)
    turn = ask_json(runner, library_db, "s4", follow_up)
    assert turn["reformulation"]["is_follow_up"] is True
    assert [c["document"] for c in turn["chunks"][:3]] == [document] * 3


def test_the_vague_question_alone_does_not_find_it(library_db: Path, runner) -> None:
    alone = ask_json(runner, library_db, "s5", "How does it work?")
    assert alone["plan"] == "search"
    assert {c["document"] for c in alone["chunks"][:3]} != {"heat_pumps_explained.md"}


def test_lay_words_reach_the_documents_own_terms(library_db: Path, runner) -> None:
    turn = ask_json(runner, library_db, "s6", "what do doctors say about payment changes")
    keywords = turn["reformulation"]["keyword_query"].lower()
    assert "physician" in keywords, keywords  # the corpus's word, never said by the user
    assert "doctor" not in keywords  # unknown to the corpus: useless for FTS
    top = turn["chunks"][0]
    assert top["document"] == "physician_fee_schedule_final_rule.txt"
    assert top["fts_rank"] is not None


def test_lineage_round_trip(library_db: Path, runner) -> None:
    first = ask_json(runner, library_db, "s7", "What makes a will legally binding in South Africa?")
    assert first["answer_document_ids"], "the answer stands on some documents"
    second = ask_json(runner, library_db, "s7", "and who can witness it?")
    assert second["anchor_document_ids"] == first["answer_document_ids"]
    third = ask_json(runner, library_db, "s7", "what if the witness is also a beneficiary?")
    assert third["anchor_document_ids"] == second["answer_document_ids"]
    db = open_db(library_db)
    stored = [
        m.lineage
        for m in sessions.messages(db, sessions.session_id(db, "s7"))
        if m.role == "assistant"
    ]
    db.close()
    assert [s["anchor_document_ids"] for s in stored[1:]] == [
        first["answer_document_ids"],
        second["answer_document_ids"],
    ]
    for lineage in stored:
        for chunk in lineage["chunks"]:
            assert set(chunk) >= {
                "chunk_id",
                "document_id",
                "document",
                "vector_rank",
                "fts_rank",
                "score",
                "boost",
                "rank",
                "reused",
                "anchored",
                "rrf",
            }


def test_user_message_and_lineage_are_saved_in_order(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "s8", "How big should a rainwater tank be?")
    db = open_db(library_db)
    history = sessions.messages(db, sessions.session_id(db, "s8"))
    db.close()
    assert [m.role for m in history] == ["user", "assistant"]
    assert history[0].embedding is not None and history[1].embedding is not None
    assert history[1].lineage["question"] == "How big should a rainwater tank be?"
    assert history[1].content.strip()


def test_inspect_and_sessions_commands(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "s9", "How does composting work?")
    ask_json(runner, library_db, "s9", "what about smells?")
    result = invoke(runner, "inspect", "last-turn", "--session", "s9", "--json", "--db", library_db)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert set(data) >= {
        "question",
        "history_window",
        "reformulation",
        "plan",
        "anchor_documents",
        "chunks",
        "answer_mode",
        "notices",
    }
    assert set(data["reformulation"]) >= {
        "semantic_query",
        "keyword_query",
        "is_follow_up",
        "is_meta",
        "topic_shift",
        "reasoning",
        "reformulator",
    }
    assert data["reformulation"]["reformulator"] == "heuristic"
    assert data["question"] == "what about smells?" and data["answer_mode"] == "extractive"
    assert len(data["history_window"]) == 2  # the last exchange
    assert set(data["chunks"][0]) >= {
        "rank",
        "chunk_id",
        "document",
        "heading",
        "vector_rank",
        "fts_rank",
        "score",
        "boost",
        "anchored",
        "reused",
    }
    first = json.loads(
        invoke(
            runner, "inspect", "turn", "1", "--session", "s9", "--json", "--db", library_db
        ).stdout
    )
    assert first["question"] == "How does composting work?"
    table = invoke(runner, "inspect", "last-turn", "--db", library_db)  # latest session by default
    assert table.exit_code == 0 and "anchored_search" in table.stdout
    missing = invoke(runner, "inspect", "turn", "7", "--session", "s9", "--db", library_db)
    assert (
        missing.exit_code == 1 and "Error:" in missing.output and "Traceback" not in missing.output
    )
    listing = invoke(runner, "sessions", "--db", library_db)
    assert listing.exit_code == 0 and "s9" in listing.stdout
    db = open_db(library_db)
    assert {row["name"]: row["turns"] for row in sessions.sessions(db)}["s9"] == 2
    db.close()


def test_ask_renders_answer_understood_as_and_sources(library_db: Path, runner) -> None:
    first = invoke(
        runner,
        "ask",
        "What makes a will legally binding in South Africa?",
        "--session",
        "r",
        "--db",
        library_db,
    )
    assert "(first question of the session)" in first.stdout and "(new topic)" not in first.stdout
    result = invoke(
        runner, "ask", "what age must a witness be", "--session", "r", "--db", library_db
    )
    assert result.exit_code == 0, result.output
    assert "14 years" in result.stdout
    assert "understood as: what age must a witness be" in result.stdout
    assert "(follow-up of the last answer)" in result.stdout
    assert "Sources" in result.stdout and "anchored" in result.stdout and WILLS in result.stdout
    assert "[1]" in result.stdout


def test_weak_match_says_documents_may_not_cover_it(library_db: Path, runner) -> None:
    result = invoke(
        runner,
        "ask",
        "Who won the 1998 football world cup final?",
        "--session",
        "w",
        "--db",
        library_db,
    )
    assert result.exit_code == 0
    assert "may not cover" in result.stdout


# --- follow-ups that generalise: new topics are not read as follow-ups -------------------------

SOURDOUGH = "sourdough_baking.pdf"


def test_a_short_new_question_starts_a_new_topic(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "n1", "What makes a will legally binding in South Africa?")
    turn = ask_json(runner, library_db, "n1", "what hydration should a beginner use?")
    assert (
        turn["reformulation"]["topic_shift"] is True
        and turn["reformulation"]["is_follow_up"] is False
    )
    assert turn["plan"] == "search" and turn["context_weight"] <= 0.1
    assert turn["chunks"][0]["document"] == SOURDOUGH
    assert not any(c["anchored"] for c in turn["chunks"])
    assert WILLS not in {c["document"] for c in turn["chunks"][:3]}
    shown = invoke(
        runner,
        "ask",
        "How big a rainwater tank does a household need?",
        "--session",
        "n1",
        "--db",
        library_db,
    )
    said = " ".join(shown.stdout.split())
    # the little context a new topic keeps is not listed as what the question was understood as
    assert "understood as: How big a rainwater tank does a household need? (new topic)" in said


def test_what_about_x_searches_x(library_db: Path, runner) -> None:
    ask_json(runner, library_db, "n2", "What makes a will legally binding in South Africa?")
    turn = ask_json(runner, library_db, "n2", "What about witnesses in court?")
    assert (
        turn["reformulation"]["semantic_query"].lower().startswith("what about witnesses in court?")
    )
    assert [c["document"] for c in turn["chunks"][:3]] == [COURT] * 3


def test_why_reuses_the_last_sources_and_searches_for_more(library_db: Path, runner) -> None:
    first = ask_json(runner, library_db, "n3", "What makes a will legally binding in South Africa?")
    used = [c["chunk_id"] for c in first["chunks"] if c["used"]]
    turn = ask_json(runner, library_db, "n3", "why?")
    assert turn["plan"] == "reuse" and turn["reformulation"]["is_meta"]
    assert [c["chunk_id"] for c in turn["chunks"][: len(used)]] == used
    searched = [c for c in turn["chunks"] if not c["reused"]]
    # "why?" has no words of its own: the search for more is the conversation's (plan.request_only)
    names = {q["name"] for q in turn["queries"]}
    assert searched and "context/vector" in names and "question/vector" not in names
    assert all(c["document"] == WILLS for c in searched[:3]), "the fresh search stays on the topic"


def test_a_short_topic_change_in_a_long_session_is_detected(library_db: Path, runner) -> None:
    for question in [
        "What makes a will legally binding in South Africa?",
        "who may witness it?",
        "can a witness inherit?",
        "how do I amend a will?",
        "and how do I revoke it?",
        "what does the executor do?",
        "what is the role of the Master of the High Court?",
        "what is condonation?",
        "who may make a will?",
    ]:
        ask_json(runner, library_db, "n4", question)
    turn = ask_json(runner, library_db, "n4", "how long should dough proof?")
    assert turn["turn"] == 10
    assert turn["reformulation"]["topic_shift"] is True
    assert turn["chunks"][0]["document"] == SOURDOUGH
    assert not any(c["anchored"] for c in turn["chunks"])


def test_pronouns_are_resolved_to_what_they_point_at_and_left_alone_when_nothing_fits(
    library_db: Path, runner
) -> None:
    """On the real library: "it" after a question on wills is the will, not South Africa; "they"
    with no plural to point at stays as typed (the conversation joins as context only); after
    "How do heat pumps work?", "they" are the heat pumps, and the search finds their document."""
    ask_json(runner, library_db, "p1", "What makes a will legally binding in South Africa?")
    it = ask_json(runner, library_db, "p1", "who can witness it?")
    assert it["reformulation"]["semantic_query"].startswith("who can witness will?")
    they = ask_json(runner, library_db, "p1", "can they be relatives of the heir?")
    assert they["reformulation"]["semantic_query"].startswith(
        "can they be relatives of the heir? ("
    )
    assert "south africa" not in they["reformulation"]["semantic_query"].split(" (")[0]
    ask_json(runner, library_db, "p1", "How do heat pumps work?")
    pumps = ask_json(runner, library_db, "p1", "are they efficient in winter?")
    assert pumps["reformulation"]["semantic_query"].startswith(
        "are heat pumps efficient in winter?"
    )
    assert pumps["chunks"][0]["document"] == "heat_pumps_explained.md"


def test_the_formalities_question_shows_the_list_of_formalities(library_db: Path, runner) -> None:
    """The sentence that says the Act lists the formalities brings the list after it, and a
    sentence sharing no word with the question does not take its place."""
    turn = ask_json(runner, library_db, "formal", "What formalities does a will need?")
    answer = turn["answer"]
    assert "lists the formalities" in answer and "valid only if:" in answer
    assert "it is in writing" in answer and "each page other than the last is also signed" in answer
    assert "expensive, slow and uncertain" not in answer
