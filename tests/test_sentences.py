"""The one sentence splitter (ragchat.text): the answer's rule, chunking's and
the follow-up heuristic's."""

from __future__ import annotations

from ragchat.text import (
    ANSWER_SENTENCES,
    CHUNK_SENTENCES,
    PLAIN_SENTENCES,
    sentence_spans,
    sentences,
    split_sentences,
)


def test_the_splitter_keeps_abbreviations_numbers_and_names_whole() -> None:
    text = (
        "Ragchat, a.k.a. the chat, reads files, e.g. Markdown. It never splits i.e. Notes. "
        "The U.S. Army asked Dr. Smith about version 2.5.1 on 3 May. Edit config.yaml then run it. "
        "Costs rose by 3.5 percent. Done!"
    )
    assert split_sentences(text) == [
        "Ragchat, a.k.a. the chat, reads files, e.g. Markdown.",
        "It never splits i.e. Notes.",
        "The U.S. Army asked Dr. Smith about version 2.5.1 on 3 May.",
        "Edit config.yaml then run it.",
        "Costs rose by 3.5 percent.",
        "Done!",
    ]


def test_paragraphs_never_run_together() -> None:
    assert split_sentences("First paragraph without a stop\n\nSecond one.") == [
        "First paragraph without a stop",
        "Second one.",
    ]


def test_sentence_spans_are_offsets_into_the_text_without_the_space_around() -> None:
    text = '  He said "Stop."\n  Then he left.  '
    spans = sentence_spans(text)
    assert [text[a:b] for a, b in spans] == ['He said "Stop."', "Then he left."]
    assert sentence_spans(text, 2, 17) == [(2, 17)]  # a window of the text, offsets still into it


def test_the_three_rules_differ_only_in_their_exceptions() -> None:
    text = "Ask Dr. Smith about v1.2. Then see the U.S. office. \u201cDone.\u201d Next one."
    assert split_sentences(text, ANSWER_SENTENCES) == [  # no curly quote opens a sentence
        "Ask Dr. Smith about v1.2.",
        "Then see the U.S. office. \u201cDone.\u201d Next one.",
    ]
    assert split_sentences(text, CHUNK_SENTENCES) == [  # "Dr." ends one; curly quotes count
        "Ask Dr.",
        "Smith about v1.2. Then see the U.S. office.",
        "\u201cDone.\u201d",
        "Next one.",
    ]
    assert split_sentences(text, PLAIN_SENTENCES) == [
        "Ask Dr.",
        "Smith about v1.2.",
        "Then see the U.S. office. \u201cDone.\u201d Next one.",
    ]
    assert sentences(text) == split_sentences(text, PLAIN_SENTENCES)


def test_chunking_splits_long_paragraphs_with_the_chunk_rule() -> None:
    """A paragraph longer than chunk_max is cut between sentences, never after "e.g."."""
    from ragchat.ingest.chunking import _sentences

    text = "Use a format, e.g. Markdown. Then ingest it."
    assert [text[a:b] for a, b in _sentences(text, (0, len(text)))] == [
        "Use a format, e.g. Markdown.",
        "Then ingest it.",
    ]
