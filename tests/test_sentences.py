"""The one sentence splitter (ragchat.text): the answer's rule, chunking's and the follow-up
heuristic's."""

from __future__ import annotations

from ragchat.text import split_sentences


def test_the_splitter_keeps_abbreviations_numbers_and_names_whole() -> None:
    text = ("Ragchat, a.k.a. the chat, reads files, e.g. Markdown. It never splits i.e. Notes. "
            "The U.S. Army asked Dr. Smith about version 2.5.1 on 3 May. Edit config.yaml then run it. "
            "Costs rose by 3.5 percent. Done!")
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
        "First paragraph without a stop", "Second one."]


