"""Layout at fixed widths (rich consoles recorded to text): lines fit, words are never split,
panels stop at 100 columns with the same column positions every turn, long echoes and paths are
shortened with an ellipsis, `inspect` reads at 80 columns. Snapshots of fixed data are stored in
tests/snapshots/ (UPDATE_SNAPSHOTS=1 rewrites them; review the diff)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from helpers import settings_for
from rich.console import Console

from ragchat import render
from ragchat.app import App
from ragchat.conversation.models import RetrievedChunk

SNAPSHOTS = Path(__file__).parent / "snapshots"
BOX = "│╭╮╰╯─┃┏┓┗┛━┡┩╇┳┻┼┬┴├┤"
LONG_PATH = "docs/advanced/configuration/authentication/oauth-providers-and-refresh-tokens.md"
LONG_HEADING = (
    "Configuring single sign-on > Providers that need a client secret and a redirect address"
)


def screen(monkeypatch: pytest.MonkeyPatch, width: int) -> Console:
    console = Console(
        width=width, force_terminal=True, color_system=None, highlight=False, record=True
    )
    monkeypatch.setattr(render, "console", console)
    return console


def lines_of(console: Console) -> list[str]:
    return [line.rstrip() for line in console.export_text().splitlines()]


def words(text: str) -> set[str]:
    return {w for w in re.split(rf"[\s{BOX}]+", text) if w}


def assert_fits_and_whole(lines: list[str], width: int, *sources: str) -> None:
    """Every line fits; every word of the sources appears whole (a split word would not)."""
    assert all(len(line) <= width for line in lines), max(lines, key=len)
    shown = words("\n".join(lines))
    for source in sources:
        for word in words(source):
            assert word in shown, (word, "\n".join(lines))


def chunk(
    rank: int, document: str, heading: str, pages: tuple[int, int] | None = None, **marks: bool
) -> RetrievedChunk:
    return RetrievedChunk(
        page_start=pages[0] if pages else None,
        page_end=pages[1] if pages else None,
        rank=rank,
        chunk_id=1000 + rank,
        document_id=rank,
        document=document,
        heading=heading,
        vector_rank=rank,
        fts_rank=None if rank % 2 else rank,
        similarity=0.61 - rank / 100,
        rrf=0.9 - rank / 50,
        boost=0.3 if marks.get("anchored") else 0.0,
        score=1.2 - rank / 40,
        anchored=marks.get("anchored", False),
        reused=marks.get("reused", False),
        used=marks.get("used", False),
    )


FIXED = [
    chunk(1, LONG_PATH, LONG_HEADING, anchored=True, used=True),
    chunk(2, "notes/short.md", "Intro", used=True),
    chunk(3, "manuals/guide.pdf", "", pages=(12, 13), reused=True),
    chunk(
        4,
        "reference/api/endpoints.html",
        "Endpoints > Listing > Pagination with cursors and limits",
    ),
]


def check_snapshot(name: str, text: str) -> None:
    path = SNAPSHOTS / name
    if os.environ.get("UPDATE_SNAPSHOTS") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert path.is_file(), f"missing snapshot {path} (UPDATE_SNAPSHOTS=1 writes it)"
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("width", [80, 120])
def test_sources_panel_snapshot(width: int, monkeypatch) -> None:
    console = screen(monkeypatch, width)
    render.show(
        render.sources_panel(FIXED, [LONG_PATH, "notes/short.md"], ["old/removed-document.md"])
    )
    lines = lines_of(console)
    check_snapshot(f"sources_{width}.txt", "\n".join(lines) + "\n")
    assert_fits_and_whole(
        lines, min(width, render.MAX_WIDTH), LONG_HEADING.split(" > ")[-1], "notes/short.md"
    )
    assert "│  1  …/" in "\n".join(lines)  # shortened from the left, whole folders at a time
    assert "manuals/guide.pdf pp. 12-13" in "\n".join(lines)


@pytest.mark.parametrize("width", [80, 120])
def test_inspect_snapshot_reads_at_80_columns(width: int, monkeypatch) -> None:
    console = screen(monkeypatch, width)
    data = {
        "turn": 2,
        "message_id": 14,
        "question": "and the refresh tokens?",
        "history_window": [11, 12],
        "reformulation": {
            "reformulator": "heuristic",
            "semantic_query": "and the refresh tokens? oauth providers",
            "keyword_query": "refresh, tokens",
            "is_follow_up": True,
            "is_meta": False,
            "topic_shift": False,
            "reasoning": "follow-up cue",
        },
        "anchor_documents": [LONG_PATH],
        "plan": "anchored_search",
        "context_weight": 0.5,
        "queries": [{"name": "question/vector", "weight": 1.0, "query": "and the refresh tokens?"}],
        "missing_anchors": [],
        "chunks": [c.to_dict() for c in FIXED],
        "answer_mode": "extractive",
        "weak_match": False,
        "notices": [],
    }
    render.inspect_view(data)
    lines = lines_of(console)
    check_snapshot(f"inspect_{width}.txt", "\n".join(lines) + "\n")
    assert_fits_and_whole(lines, width, LONG_HEADING.replace(" > ", " "))
    header = next(i for i, line in enumerate(lines) if line.startswith(" # "))
    first = lines[header + 2]
    assert first.split()[:2] == ["1", "1001"]
    assert lines[header + 3].startswith("   …/") or lines[header + 3].startswith(
        f"   {LONG_PATH}"
    )  # its own line


@pytest.fixture(scope="module")
def two_turns(sample_library: Path, tmp_path_factory) -> tuple[Path, list]:
    """Two real turns on the sample library, the second a follow-up (the question
    made very long)."""
    target = tmp_path_factory.mktemp("layout") / "lib.db"
    source = App(settings_for(sample_library))
    source.db.execute(f"VACUUM INTO '{target}'")
    source.close()
    app = App(settings_for(target))
    conversation = app.conversation("layout")
    results = [
        conversation.ask("What makes a will legally binding in South Africa?"),
        conversation.ask("and what age must a witness be? " + "please explain it carefully " * 240),
    ]
    app.close()
    return target, results


@pytest.mark.parametrize("width", [80, 120, 200])
def test_a_turn_fits_and_panels_keep_their_columns(width: int, two_turns, monkeypatch) -> None:
    _, results = two_turns
    headers, panel_widths = [], set()
    for result in results:
        console = screen(monkeypatch, width)
        render.turn(result)
        lines = lines_of(console)
        panel = [line for line in lines if line and line[0] in "╭│╰"]
        panel_widths |= {len(line) for line in panel}
        headers.append(next(line for line in panel if "document › section" in line))
        understood = " ".join(
            line for line in lines if line.startswith("understood as") or "(follow-up" in line
        )
        assert_fits_and_whole(
            lines, width, result.answer, *(c.document for c in result.lineage.chunks)
        )
        assert all(len(line) <= render.MAX_WIDTH for line in panel)
    assert panel_widths == {min(width, render.MAX_WIDTH)}  # every panel line, both turns
    assert headers[0] == headers[1]  # the columns did not move
    assert (
        "…" in understood and len(understood) < 400
    )  # the 6,700-character question is not echoed in full


def test_streamed_answers_wrap_at_spaces(monkeypatch) -> None:
    console = screen(monkeypatch, 40)
    text = (
        "Rainwater tanks are sized by roof area and rainfall; a 5,000-litre tank suits most "
        "gardens.\n- next"
    )
    printer = render.StreamPrinter()
    for start in range(0, len(text), 7):  # pieces that cut words in the middle, as tokens do
        printer(text[start : start + 7])
    printer.close()
    lines = lines_of(console)
    assert_fits_and_whole(lines, 40, text)
    assert lines[-1] == "- next"


def test_resume_preview_keeps_bullets_on_their_lines(monkeypatch) -> None:
    answer = (
        "- Sourdough needs 16 hours. [1]\n- Sourdough bread is fermented by wild yeast. [2]\n"
        + "- more " * 200
    )
    console = screen(monkeypatch, 80)
    console.print(render.preview(answer, 120))
    lines = lines_of(console)
    assert lines[0] == "- Sourdough needs 16 hours. [1]"
    assert lines[1] == "- Sourdough bread is fermented by wild yeast. [2]"
    assert lines[-1].endswith("…") and len(lines) == 3


@pytest.mark.parametrize(
    "path, limit, shown",
    [
        ("docs/advanced/authentication.md", 40, "docs/advanced/authentication.md"),
        ("docs/advanced/authentication.md", 30, "…/advanced/authentication.md"),
        ("docs/advanced/authentication.md", 20, "…/authentication.md"),
        ("docs/advanced/authentication.md", 10, "…cation.md"),
    ],
)
def test_paths_are_shortened_from_the_left(path: str, limit: int, shown: str) -> None:
    assert render.short_path(path, limit) == shown and len(shown) <= limit


@pytest.mark.parametrize("width", [80, 120])
def test_search_and_sessions_tables_fit(width: int, two_turns, monkeypatch) -> None:
    from ragchat.search.hybrid import SearchRequest, search
    from ragchat.store import sessions

    target, _ = two_turns
    app = App(settings_for(target))
    hits = search(
        app.db, app.embedder, app.settings, SearchRequest("who may witness a will", "witness", k=5)
    )
    console = screen(monkeypatch, width)
    render.search_hits(hits, as_json=False)
    render.sessions_table(sessions.sessions(app.db))
    lines = lines_of(console)
    assert_fits_and_whole(
        lines,
        min(width, render.MAX_WIDTH),
        *(h.chunk.path for h in hits),
        *(h.chunk.heading for h in hits),
        "What makes a will legally binding in South Africa?",
    )
    assert "just now" in "\n".join(lines)
    app.close()
