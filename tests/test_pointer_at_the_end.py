"""A "that" that ends a question points back: no clause follows it, so it is no relative pronoun
("the state that borders Mexico"). "which release changed that?" after an answer about a behaviour
is a follow-up about that behaviour, not a new question about releases in general."""

from __future__ import annotations

from pathlib import Path

from helpers import filler_pages, library_app

from ragchat.conversation.followup.referents import understood

MIGRATIONS = """# Migrations

Upgrading sometimes changes behaviour in ways that break code. This page lists each change with
the way to restore the old behaviour.

## 4.2.0

### Sequences structure into tuples

Sequence fields are now structured into tuples instead of lists, as of 4.2.0. Register the
list factory for sequence fields to get lists back.
"""
RELEASES = """# Releases

New releases are announced on the mailing list. Every release is tagged in the repository and
published to the package index; subscribe to the release feed to hear about each new release.
What each release changed is written in its announcement.
"""
PAGES = {"migrations.md": MIGRATIONS, "releases.md": RELEASES} | filler_pages("fields")


def test_a_that_ending_the_question_points_at_the_last_answer(tmp_path: Path, embedder) -> None:
    app = library_app(tmp_path, PAGES, embedder, chunk_size=300, chunk_overlap=0)
    conversation = app.conversation("s")
    conversation.ask("after upgrading, my sequence fields come back as tuples instead of lists")
    turn = conversation.ask("which release changed that?")
    app.close()
    reading = turn.lineage.reformulation
    assert reading.is_follow_up and not reading.topic_shift and reading.points_back
    assert "refers back with 'that'" in reading.reasoning  # not "may continue the conversation"
    assert "that" not in understood(reading.semantic_query).split()  # said in full
    assert Path(turn.lineage.chunks[0].document).name == "migrations.md"
