"""The extractive answer's selectors: which units each mode shows, in which order, never a
repeat; lead-ins bring their blocks."""

from __future__ import annotations

from dataclasses import replace

import pytest
from helpers import flat_idf, source

from ragchat.answer import (
    ANSWER_PARAMS,
    Mode,
    Request,
    Source,
    answer_pool,
    extractive,
    mode_of,
    units,
)
from ragchat.answer.extractive import SELECTORS, Answer
from ragchat.params import DEFAULT
from ragchat.text import split_sentences


def pick(query: str, sources: list[Source], mode: Mode = Mode.QUESTION, **fields: object) -> Answer:
    return extractive(mode, Request(query, sources, **fields), flat_idf, params=DEFAULT.answer)  # type: ignore[arg-type]


# --- blocks -----------------------------------------------------------------


FORMALITIES = """Section 2(1)(a) of the Wills Act lists the formalities as follows:
- the will is in writing
- it is signed by the testator
  - or by another person in his presence
- two witnesses sign it

Unrelated closing remark about something else entirely."""


def test_a_sentence_that_introduces_a_list_brings_it() -> None:
    found = units(FORMALITIES, params=DEFAULT.answer)
    assert found[0].sentence.startswith("Section 2(1)(a)") and found[0].kind == "list"
    assert found[0].block.splitlines() == [
        "- the will is in writing",
        "- it is signed by the testator",
        "  - or by another person in his presence",
        "- two witnesses sign it",
    ]
    answer = pick("which formalities does the wills act list", [source(1, FORMALITIES)], count=1)
    assert "- two witnesses sign it" in answer.text and "  - or by another person" in answer.text
    assert answer.text.startswith(
        "Section 2(1)(a) of the Wills Act lists the formalities as follows: [1]"
    )


def test_a_sentence_announcing_a_list_brings_the_lead_in_and_the_list_after_it() -> None:
    chunk = (
        "A will that fails to comply with a formality is not necessarily lost. The application "
        "is, however, expensive, slow and uncertain. Courts may still accept such a will."
    )
    formal = (
        "Section 2(1)(a) of the Wills Act lists the formalities. In summary, a will is valid "
        "only if:\n\n1. it is in writing;\n2. it is signed by the testator; and\n3. two "
        "witnesses sign it."
    )
    answer = pick(
        "what formalities does a will need",
        [source(1, chunk), source(2, formal)],
        priors={1: 0.6, 2: 0.5},
        count=3,
    )
    assert (
        "Section 2(1)(a) of the Wills Act lists the formalities. In summary, a will is valid "
        "only if: [2]" in answer.text
    )
    assert "3. two witnesses sign it." in answer.text
    assert "expensive" not in answer.text, (
        "no word of the question: not an answer, whatever its chunk's rank"
    )


def test_a_code_block_and_a_table_stay_intact() -> None:
    text = (
        "Set a timeout on the client.\n```python\nclient = httpx.Client(timeout=10.0)\n"
        "client.get(url)\n```\n\nThe limits are:\n\nname | default\ntimeout | 5.0\n"
    )
    found = units(text, params=DEFAULT.answer)
    assert (
        found[0].has_code
        and found[0].block == "```python\nclient = httpx.Client(timeout=10.0)\nclient.get(url)\n```"
    )
    assert found[1].kind == "table" and found[1].block == "name | default\ntimeout | 5.0"
    answer = pick("client timeout", [source(1, text)], count=2)
    assert "```python\nclient = httpx.Client(timeout=10.0)\nclient.get(url)\n```" in answer.text


def test_headings_and_cut_sentences_are_not_answers() -> None:
    text = (
        "over the river and far away.\n\nWater tanks\nA tank stores rainwater for dry months. "
        "The overflow pipe must lead"
    )
    kinds = [(u.kind, u.sentence) for u in units(text, params=DEFAULT.answer)]
    assert kinds == [
        ("fragment", "over the river and far away."),
        ("title", "Water tanks"),
        ("sentence", "A tank stores rainwater for dry months."),
        ("fragment", "The overflow pipe must lead"),
    ]


# --- choosing sentences -----------------------------------------------------------------


TANK = (
    "Rain barrels are popular in many gardens today. A first-flush diverter discards the first "
    "dirty water from the roof. The tank should sit on a level, firm base. Overflow water must "
    "drain away from the house foundations."
)


def test_the_top_chunks_best_sentence_is_always_in_and_reading_order_holds() -> None:
    other = source(
        2,
        "A first-flush diverter discards dirty water; diverter diverter diverter first flush roof.",
    )
    answer = pick(
        "first flush diverter roof water",
        [source(1, TANK), other],
        count=2,
        priors={1: 0.0, 2: 0.9},
    )
    assert "A first-flush diverter discards the first dirty water from the roof." in answer.text
    assert 1 in answer.used
    assert answer.text.index("[1]") < answer.text.index("[2]") if 2 in answer.used else True


def test_no_answer_repeats_what_the_last_answer_showed() -> None:
    first = pick("tank water", [source(1, TANK)], count=2)
    again = pick("tank water", [source(1, TANK)], count=2, exclude=first.text)
    said = set(split_sentences(first.text.replace(" [1]", "")))
    assert again.text and not said & set(split_sentences(again.text.replace(" [1]", "")))
    everything = pick("tank water", [source(1, TANK)], count=4)
    assert (
        pick("tank water", [source(1, TANK)], count=4, exclude=everything.text).text
        == "The sources say nothing beyond the last answer."
    )


def test_summarise_covers_every_last_source_and_may_repeat() -> None:
    sources = [
        source(1, TANK),
        source(
            2, "Heat pumps move heat rather than make it. A heat pump defrosts its coil in winter."
        ),
        source(3, "Sourdough needs a lively starter. The starter is fed flour and water daily."),
    ]
    first = pick("tank", sources, count=2)
    summary = pick(
        "summarize it", sources, count=2, mode=Mode.SUMMARY, cover=[1, 2, 3], exclude=first.text
    )
    assert summary.used == {1, 2, 3}


def test_summarize_that_leads_with_what_the_last_answer_said() -> None:
    """ "summarize that" sums up the last answer: the most central of its sentences leads, not the
    sentence most like the rest of its chunk; at most half the summary is the last answer's, so a
    short answer does not come back whole."""
    text = (
        "You can set timeouts for a request and for a client. "
        "Timeouts for a client apply to every request the client sends. "
        "A client also keeps connections open: it uses connection pooling, so requests to the "
        "same host reuse one connection. "
        "Closing the client closes its pooled connections."
    )
    pooling = (
        "A client also keeps connections open: it uses connection pooling, so requests to the "
        "same host reuse one connection."
    )
    last = f"{pooling} Closing the client closes its pooled connections. [1]"

    def summary(count: int) -> str:
        answer = pick(
            "summarize that",
            [source(1, text)],
            count=count,
            mode=Mode.SUMMARY,
            cover=[1],
            last=last,
        )
        return answer.text

    assert "connection pooling" in summary(1)
    both = summary(2)
    assert "connection pooling" in both and "Closing the client" not in both


def test_an_example_request_prefers_code() -> None:
    text = (
        "The timeout option sets how long to wait for a response from the server.\n\n"
        "Timeouts apply to connect, read, write and pool operations separately.\n\n"
        "Use it like this\n\n```python\nhttpx.get(url, timeout=2.0)\n```"
    )
    plain = pick("timeout option wait", [source(1, text)], count=1)
    example = pick("timeout option wait", [source(1, text)], count=1, mode=Mode.EXAMPLE)
    # a question is answered by the sentence that names the option, its chunk's how-to beside it
    # (the title "Use it like this" labels the code for the sentence before it: a caption)
    assert plain.text.startswith("The timeout option sets how long to wait")
    # an example request leads with the code and its lead-in, not the option's description
    assert "The timeout option sets" not in example.text
    assert example.text.startswith("Timeouts apply to connect, read, write and pool operations")
    assert "```python\nhttpx.get(url, timeout=2.0)\n```" in example.text


def test_the_how_to_after_a_chosen_sentence_comes_when_no_code_is_shown() -> None:
    """A short sentence of a higher source sets the bar; the chosen sentence that sets up the
    how-to is followed in its chunk by the lead-in with the code, which holds the question's
    words: it comes even below the bar, since the answer shows no code otherwise."""
    first = "Equivalent to job(), but closes the database connection when the job finishes."
    second = (
        "If you run queries inside your job, close the connection once your job finishes. "
        "To make this easier, use a special decorator in place of job which will "
        "automatically close the connection for you.\n\n"
        "```python\nfrom jobs.orm import closing_job\n\n@closing_job()\ndef do_queries():\n"
        "    # the connection will be closed once the job finishes\n    ...\n```"
    )
    answer = pick(
        "closing the database connection after each job finishes",
        [source(1, first), source(2, second)],
        count=4,
        priors={1: 1.0, 2: 0.5},
    )
    assert "If you run queries" in answer.text and "@closing_job()" in answer.text


def test_a_lead_in_with_its_code_is_no_repeat_of_a_longer_sentence() -> None:
    """A lead-in ("To remove a dependency:") and its command beside a sentence of a higher
    source holding those words and more: two units, and the one with the command is the how-to
    (no repeat of the sentence, so shown though another block holds more of the conversation's
    words)."""
    flags = (
        "The --dev or --optional flags can be used to remove a dependency from a specific table. "
        "Development dependencies were once listed in their own field:\n\n"
        '```toml\ndev-dependencies = ["pytest"]\n```'
    )
    how = "To remove a dependency:\n\n```console\n$ tool remove httpx\n```"
    answer = pick(
        "how do I remove a dependency again? (dev, pytest, development)",
        [source(1, flags), source(2, how)],
        count=3,
        priors={1: 1.0, 2: 0.5},
        asked="how do I remove a dependency again?",
    )
    assert "--optional flags" in answer.text and "$ tool remove httpx" in answer.text


def test_the_how_to_under_a_heading_that_names_the_question_comes_beside_descriptions() -> None:
    """The command a section's lead-in introduces without a word of the question ("run the
    following command:") is the how-to when the section's heading names what was asked
    ("GitHub Pages"): it comes beside the sentences that only describe."""
    describe = (
        "If you host the source code for a project on GitHub, you can easily use GitHub Pages "
        "to host the documentation for your project. There are two basic types of GitHub "
        "Pages sites: Project Pages sites, and User and Organization Pages sites. GitHub Pages "
        "sites of both kinds publish the files of one branch. Your docs are published at the "
        "address GitHub Pages gives the repository."
    )
    how = (
        "After you checkout the primary working branch of the repository where you maintain "
        "the source for your project, run the following command:\n\n```sh\nsite gh-deploy\n```"
    )
    sources = [
        source(1, describe),
        replace(
            source(2, how),
            chunk=replace(source(2, how).chunk, heading="GitHub Pages > Project Pages"),
        ),
    ]
    answer = pick(
        "how do I publish my docs to GitHub Pages?", sources, count=3, priors={1: 1.0, 2: 0.9}
    )
    assert "GitHub Pages" in answer.text and "site gh-deploy" in answer.text
    # under a heading that names nothing asked, it stays out
    sources[1] = replace(
        sources[1], chunk=replace(sources[1].chunk, heading="Other hosts > Mirrors")
    )
    answer = pick(
        "how do I publish my docs to GitHub Pages?", sources, count=3, priors={1: 1.0, 2: 0.9}
    )
    assert "site gh-deploy" not in answer.text


def test_a_description_comes_under_its_entrys_signature() -> None:
    """An object description's text follows its signature and its fields: a sentence of the
    entry is shown under the signature that names what it describes, never under another's."""
    entries = (
        "Transactions of a connection.\n\n"
        "~~~python\nflush(wait=True)\n~~~\n\n"
        "param bool wait: If True (default), block until the buffer is written.\n\n"
        "Write the buffered rows to the store now.\n\n"
        "~~~python\ndiscard(reopen=True)\n~~~\n\n"
        "param bool reopen: If True (default), open a new buffer afterwards.\n\n"
        "Drop the buffered rows without writing them."
    )
    answer = pick("how do I drop the buffered rows?", [source(1, entries)], count=1)
    text = answer.text
    assert "Drop the buffered rows without writing them." in text
    assert "discard(reopen=True)" in text and "flush(wait=True)" not in text
    assert text.index("discard(reopen=True)") < text.index("Drop the buffered rows")


def test_a_public_domain_notice_is_never_the_answer() -> None:
    notice = source(1, "This document has been placed in the public domain.")
    body = source(2, "PEP 8 was written by Guido van Rossum, Barry Warsaw and Alyssa Coghlan.")
    answer = pick("who wrote PEP 8", [notice, body])
    assert (
        answer.text == "PEP 8 was written by Guido van Rossum, Barry Warsaw and Alyssa Coghlan. [2]"
    )


# --- modes -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("question", "meta", "mode"),
    [
        ("What does a first-flush diverter do?", False, Mode.QUESTION),
        ("tell me more", True, Mode.MORE),
        ("give me an example", True, Mode.EXAMPLE),
        ("show me an example of a timeout", False, Mode.EXAMPLE),
        ("summarize it", True, Mode.SUMMARY),
        ("summarize it with an example", True, Mode.SUMMARY),
        (
            "give me an overview of heat pumps",
            False,
            Mode.QUESTION,
        ),  # a summary is of the last answer
    ],
)
def test_the_mode_comes_from_the_request(question: str, meta: bool, mode: Mode) -> None:
    assert mode_of(question, meta) is mode


def test_tell_me_more_ranks_like_a_question() -> None:
    """What makes it "more" is the caller's: a wider pool, one more unit, the session excluded."""
    assert SELECTORS[Mode.MORE] is SELECTORS[Mode.QUESTION]
    first = pick("tank water", [source(1, TANK)], count=1)
    assert pick(
        "tank water", [source(1, TANK)], Mode.MORE, count=1, exclude=first.text
    ).text not in ("", first.text)


def test_the_pool_and_the_cuts_come_from_the_params() -> None:
    ranked = list(range(20))
    assert (
        len(answer_pool(ranked, meta=False, params=DEFAULT.answer)) == 4
        and len(answer_pool(ranked, meta=True, params=DEFAULT.answer)) == 8
    )
    assert len(answer_pool(ranked, meta=True, params=replace(ANSWER_PARAMS, pool=3))) == 6
    strict = replace(ANSWER_PARAMS, min_sentence_chars=200)
    request = Request("tank water", [source(1, TANK)])
    assert extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text.startswith(
        "Rain barrels"
    )
    assert (
        extractive(Mode.QUESTION, request, flat_idf, strict).text
        == "The sources hold no readable sentences."
    )


def test_an_example_request_opens_with_an_example_not_the_first_sources_list() -> None:
    routing = source(
        1,
        (
            "Generally there are three ways to define rules for the routing system:\n\n"
            "1. You can use the route() decorator.\n2. You can use the add_url_rule() function.\n"
            "3. You can access the underlying routing system directly."
        ),
    )
    examples = source(
        2,
        (
            "Optionally, you can use a converter to specify the type of the argument.\n\n"
            "```python\n@app.route('/post/<int:post_id>')\ndef show_post(post_id):\n"
            "    return f'Post {post_id}'\n```"
        ),
    )
    answer = pick(
        "give me an example of converter routing rules",
        [routing, examples],
        count=3,
        mode=Mode.EXAMPLE,
        priors={1: 0.9, 2: 0.5},
    )  # the list's chunk ranks first
    assert "@app.route('/post/<int:post_id>')" in answer.text
    assert "three ways" not in answer.text and answer.used == {
        2
    }  # examples only, while there are some
