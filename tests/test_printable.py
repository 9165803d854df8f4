"""Untrusted text stays inert: file names, headings, chunk text, session names, Ollama's tokens
and error messages never put a control byte on the terminal. The unit tests pin `printable` and
its stream form; the end-to-end ones walk every command (CLI in-process, the REPL through its
pipe input, Ollama through FakeOllama) over a tree of hostile names and texts and scan what
reached the terminal."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import pytest
from helpers import invoke, settings_for
from ollama_server import Failure, FakeOllama, Stream
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from ragchat import render
from ragchat.app import App
from ragchat.repl import Repl
from ragchat.text import PrintableStream, printable

# What may never reach a terminal from untrusted text: ESC (every escape sequence), BEL (ends an
# OSC, rings), and the C1 range (U+009B is a one-character CSI, U+009D an OSC).
# Nor, raw, an invisible formatting character that reorders or hides text (issue 22): bidi
# overrides and isolates, zero-width spaces, the BOM, tag characters, line/paragraph separators.
FORBIDDEN = re.compile(
    "[\x1b\x07\x80-\x9f\u00ad\u061c\u200b\u200e\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f"
    "\ufeff\ufff9-\ufffb\U000e0000-\U000e007f\u2028\u2029\ud800-\udfff]"
)


def assert_inert(output: str) -> None:
    found = FORBIDDEN.search(output)
    assert found is None, (
        f"{found.group(0)!r} at {found.start()}: "
        f"{output[max(0, found.start() - 60) : found.end() + 60]!r}"
    )


# --- printable ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("evil\x1b[2Jname.md", "evilname.md"),  # CSI: clear the screen
        (
            "a\x1b[1;31mred\x1b[0m",
            "ared",
        ),  # SGR is a CSI too: a file name does not get to colour the screen
        ("\x1b]52;c;aGk=\x07", ""),  # OSC 52 (write the clipboard) ended by BEL, payload and all
        ("x\x1b]0;window title\x1b\\y", "xy"),  # OSC 0 (set the title) ended by ST
        (
            "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\",
            "click",
        ),  # a hyperlink: the text stays
        ("p\x1bP1$r0m\x1b\\q", "pq"),  # DCS with its payload
        ("c1\x9b2Jcsi \x9d52;c;aGk=\x9c done", "c1csi  done"),  # the one-character C1 forms
        ("bell\x07 back\x08space \rreturn \x00nul \x7fdel", "bell backspace return nul del"),
        ("lone escape at the end\x1b", "lone escape at the end"),
        ("\x1bc reset", " reset"),  # ESC c resets the terminal
        (
            "\x1b]unended osc",
            "unended osc",
        ),  # no terminator: the introducer goes, the rest is plain text
        ("tab\tand\nnewline stay", "tab\tand\nnewline stay"),
        (
            "[bold]markup[/bold] stays text",
            "[bold]markup[/bold] stays text",
        ),  # markup is render's to escape
        (
            "Crème brûlée · 漢字 · עברית · 🙂 · \u00a0nbsp",
            "Crème brûlée · 漢字 · עברית · 🙂 · \u00a0nbsp",
        ),
    ],
)
def test_printable_drops_terminal_control_and_keeps_printable_text(
    text: str, expected: str
) -> None:
    assert printable(text) == expected


HOSTILE_STREAM = (
    "Answer \x1b[2Jcleared \x1b]52;c;aGk=\x07clip \x1b]0;title\x1b\\titled \x9b31mred "
    "\x1b[1;31mbold\x1b[0m bell\x07 end\x1b"
)


@pytest.mark.parametrize("cut", range(len(HOSTILE_STREAM) + 1))
def test_a_stream_split_anywhere_prints_what_the_whole_text_prints(cut: int) -> None:
    stream = PrintableStream()
    pieces = [stream.feed(HOSTILE_STREAM[:cut]), stream.feed(HOSTILE_STREAM[cut:]), stream.flush()]
    assert (
        "".join(pieces)
        == printable(HOSTILE_STREAM)
        == "Answer cleared clip titled red bold bell end"
    )


def test_a_stream_of_single_characters_and_an_endless_osc() -> None:
    stream = PrintableStream()
    assert "".join(stream.feed(ch) for ch in HOSTILE_STREAM) + stream.flush() == printable(
        HOSTILE_STREAM
    )
    endless = PrintableStream()
    shown = endless.feed("before \x1b]52;c;" + "A" * (PrintableStream.LIMIT + 10)) + endless.feed(
        " after"
    )
    assert shown.startswith("before 52;c;AAA") and shown.endswith(
        " after"
    )  # not held back for ever
    assert_inert(shown)


def test_json_lines_keep_the_original_text_with_every_control_character_escaped(capsys) -> None:
    row = {
        "document": "evil\x1b[2Jname.md",
        "heading": "c1\x9b2J \x7f",
        "snippet": "bell\x07 é 漢字",
    }
    render.json_lines([row])
    out = capsys.readouterr().out
    assert_inert(out)
    assert "\x7f" not in out and "é 漢字" in out  # printable non-ASCII stays readable
    assert json.loads(out) == row


def test_a_real_terminal_keeps_ragchat_styles_and_never_the_documents_sequences() -> None:
    """With colours on, rich's own SGR codes are expected; nothing else from the hostile names."""
    buffer = io.StringIO()
    terminal = render.PrintableConsole(
        file=buffer, force_terminal=True, color_system="standard", width=100
    )
    from ragchat.conversation.models import RetrievedChunk

    chunk = RetrievedChunk(
        rank=1,
        chunk_id=1,
        document_id=1,
        document="evil\x1b[2Jname.md",
        heading="[bold]x[/bold]\x9b2J",
        vector_rank=1,
        fts_rank=None,
        similarity=0.5,
        rrf=0.1,
        boost=1.0,
        score=0.5,
        anchored=True,
        reused=False,
    )
    terminal.print(render.sources_panel([chunk], ["clip\x1b]52;c;aGk=\x07.md"], ["gone\x1b[2J.md"]))
    terminal.print(
        f"[bold red]Error:[/] {render.escape('bell' + chr(7) + ' [link=https://x]y[/link]')}"
    )
    with render.IngestProgress(terminal) as progress:
        progress.files(1)
        progress.file_done("dir\x1b[31m/evil\x1b[2Jname.md")
    out = buffer.getvalue()
    assert (
        "\x1b[1;31m" in out or "\x1b[31;1m" in out
    )  # ragchat's own styles still reach the terminal
    for sequence in ("\x1b[2J", "\x1b]52", "\x07", "\x9b", "\x1b[31m/"):
        assert sequence not in out
    plain = re.sub(
        r"\x1b\[[0-9;?]*[mlhKAGD]", "", out
    )  # rich's styles and cursor moves; nothing else
    assert_inert(plain.replace("\r", ""))
    for shown in (
        "evilname.md",
        "[bold]x[/bold]",
        "clip.md",
        "gone.md",
        "bell [link=https://x]y[/link]",
        "dir/evilname.md",
    ):
        assert shown in plain


# --- every command over a hostile tree ---------------------------------------------------------

HOSTILE_FILES = {
    "evil\x1b[2Jname.md": "# Lighthouse\n\n## Keeping \x9b2J the lamp \x1b]0;pwned\x07\n\nThe "
    "keeper trims the lamp wick at dusk \x9d52;c;aGk=\x9c and logs the tide in the lighthouse "
    "book.\n",
    "clip\x1b]52;c;aGk=\x07.md": "# Orchard\n\n## Pruning [bold]care[/bold]\n\nPrune the apple "
    "trees in late winter, before the sap rises, and burn the cankered wood "
    "[link=https://evil.example]here[/link].\n",
    "bell\x07ring.txt": "Bell ringing\n\nChange ringing rings the church bells in an ever "
    "changing order.\n",
    "[bold]markup[/bold].md": "# Tide tables\n\nThe harbour master publishes the tide tables "
    "every spring.\n",
    "dir\x1b[31m/nested\x9b2J.md": "# Nested\n\nThe ferry timetable changes with the tides and "
    "the season.\n",
    # displayed raw, "rtl\u202etxt.md" reads "rtldm.txt"
    "rtl\u202etxt.md": "# Mirror\n\n## Silvering \u2066RTL\u2069\n\nThe mirror\u200b maker "
    "silvers \ufeffthe glass with tin.\n",
}
SHOWN_NAMES = [
    "evilname.md",
    "clip.md",
    "bellring.txt",
    "[bold]markup[/bold].md",
    "dir/nested.md",
    "rtl\\u202etxt.md",
]
HOSTILE_SESSION = "s\x1b]0;title\x07[bold]x\x9b2J\u202e"
HOSTILE_REFORMULATION = {
    "semantic_query": "When is the lamp wick \x1b[2Jtrimmed\x07?",
    "keyword_query": "lamp wick \x9b2J",
    "is_follow_up": False,
    "is_meta": False,
    "topic_shift": False,
    "reasoning": "\x1b]52;c;aGk=\x07asks",
}
HOSTILE_TOKENS = (
    "At dusk \x1b",
    "[2J the keeper \x1b]52;c;",
    "aGk=\x07 trims",
    " the wick \x9b",
    "31m[1]. ",
    "[bold]not markup[/bold]\x1b]0;t\x1b",
    "\\ done",
)


def hostile_tree(root: Path) -> Path:
    for name, text in HOSTILE_FILES.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    (root / "empty\x1b[2J.md").write_text("")  # skipped: its name is printed in the report
    return root


@pytest.fixture
def wide(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wide enough that table cells keep each name on one line (so the test can look for it)."""
    monkeypatch.setattr(render.console, "_width", 240)
    monkeypatch.setattr(render.err_console, "_width", 240)


@pytest.fixture
def hostile_db(tmp_path: Path, runner, wide) -> tuple[Path, Path]:
    docs, db = hostile_tree(tmp_path / "hostile\x1b[2Jdocs"), tmp_path / "lib\x07.db"
    result = invoke(runner, "ingest", docs, "--db", db)
    assert result.exit_code == 0, result.output
    assert_inert(result.output)
    assert "6 added" in result.output and "skipped empty.md: empty file" in result.output
    return docs, db


def test_ingest_search_ask_inspect_sessions_config_and_errors_print_nothing_raw(
    hostile_db, runner
) -> None:
    docs, db = hostile_db
    outputs: dict[str, str] = {}

    def run(name: str, *args: object, code: int = 0) -> str:
        result = invoke(runner, *args, "--db", db)
        assert result.exit_code == code, result.output
        outputs[name] = result.output
        return result.output

    run("search", "search", "lamp wick keeper tide")
    run("ask", "ask", "When does the keeper trim the lamp wick?", "--session", HOSTILE_SESSION)
    run("ask-2", "ask", "And the apple trees?", "--session", HOSTILE_SESSION)
    run("inspect", "inspect", "last-turn")
    run("sessions", "sessions")
    run("config", "config")
    run("reingest", "ingest", docs / "nowhere\x1b[2J.md", code=1)
    run("no-turn", "inspect", "turn", "7", "--session", HOSTILE_SESSION, code=1)
    run("search-rtl", "search", "mirror maker silvers glass")
    run("missing-rtl", "ingest", docs / "gone\u202e.md", code=1)
    for output in outputs.values():
        assert_inert(output)
    every = "\n".join(outputs.values())
    for shown in SHOWN_NAMES:  # each file name is shown somewhere, made printable
        assert shown in every, shown
    assert "evilname.md" in outputs["ask"] and "evilname.md" in outputs["inspect"]
    assert (
        "Keeping  the lamp" in outputs["search"]
    )  # a heading: C1 CSI and OSC dropped, the text kept
    assert "[bold]care[/bold]" in outputs["ask-2"]  # a heading's markup is shown, not obeyed
    assert "s[bold]x" in outputs["sessions"]  # the session name, markup shown, control dropped
    assert "lib.db" in outputs["config"]
    # the error starts its line (no progress bar: the output is not a terminal)
    assert (
        outputs["reingest"].startswith("Error: nothing could be ingested")
        and "nowhere.md" in outputs["reingest"]
    )
    assert outputs["no-turn"].startswith("Error: session ")
    # bidi and zero-width characters are shown escaped, in tables and in `Error:` lines alike
    assert (
        "rtl\\u202etxt.md" in outputs["search-rtl"]
        and "Silvering \\u2066RTL\\u2069" in outputs["search-rtl"]
    )
    assert "gone\\u202e.md" in outputs["missing-rtl"] and outputs["missing-rtl"].startswith(
        "Error: "
    )


def test_json_output_keeps_the_original_names_escaped(hostile_db, runner) -> None:
    docs, db = hostile_db
    search = invoke(runner, "search", "lamp wick keeper tide", "--json", "--db", db)
    ask = invoke(runner, "ask", "When does the keeper trim the lamp wick?", "--json", "--db", db)
    inspect = invoke(runner, "inspect", "last-turn", "--json", "--db", db)
    for result in (search, ask, inspect):
        assert result.exit_code == 0, result.output
        assert_inert(result.stdout)
    rows = [json.loads(line) for line in search.stdout.splitlines()]
    assert "evil\x1b[2Jname.md" in {
        row["document"] for row in rows
    }  # the original name, JSON-escaped
    assert "\\u001b[2J" in search.stdout
    assert "evil\x1b[2Jname.md" in {c["document"] for c in json.loads(inspect.stdout)["chunks"]}
    assert json.loads(ask.stdout.splitlines()[-1])["answer"]


def test_ollama_tokens_reformulations_and_errors_print_nothing_raw(
    hostile_db, runner, monkeypatch
) -> None:
    """Through `ragchat ask` and through the REPL (pipe input), with a hostile session name."""
    docs, db = hostile_db
    monkeypatch.setenv("RAGCHAT_OLLAMA", "on")
    monkeypatch.setenv("RAGCHAT_OLLAMA_MODEL", "llama3.2")
    with FakeOllama(model="llama3.2") as server:
        monkeypatch.setenv("RAGCHAT_OLLAMA_HOST", server.url)
        server.default = lambda request: (
            HOSTILE_REFORMULATION if request.get("format") else Stream(HOSTILE_TOKENS)
        )
        streamed = invoke(runner, "ask", "When does the keeper trim the lamp wick?", "--db", db)
        server.default = lambda request: (
            HOSTILE_REFORMULATION
            if request.get("format")
            else Failure(500, "boom \x1b]52;c;aGk=\x07 \x1b[2J")
        )
        failed = invoke(
            runner, "ask", "And when does he do it?", "--db", db
        )  # a follow-up: reformulated
        answered = len([r for r in server.requests if not r.get("format")])
    for result in (streamed, failed):
        assert result.exit_code == 0, result.output
        assert_inert(result.output)
    assert "At dusk the keeper trims the wick [1]. [bold]not markup[/bold] done" in " ".join(
        streamed.output.split()
    )
    flat = " ".join(failed.output.split())
    assert "understood as: When is the lamp wick trimmed?" in flat, (
        flat
    )  # the model's reformulation, inert
    assert "Ollama answer failed (HTTP 500: boom )" in flat
    assert answered == 2


def test_the_repl_prints_hostile_session_names_tokens_and_sources_inert(hostile_db, capsys) -> None:
    docs, db = hostile_db
    with FakeOllama(model="llama3.2") as server:
        server.default = lambda request: (
            HOSTILE_REFORMULATION if request.get("format") else Stream(HOSTILE_TOKENS)
        )
        app = App(settings_for(db, ollama="on", ollama_host=server.url, ollama_model="llama3.2"))
        with create_pipe_input() as keyboard:
            for line in [
                "When does the keeper trim the lamp wick?",
                "/sources",
                "/inspect",
                "/sessions",
                "/new other\x1b[2J[bold]",
                "/inspect 3",
                f"/ingest {docs / 'gone'}",
            ]:
                keyboard.send_text(line + "\r")
            keyboard.close()
            Repl(app, HOSTILE_SESSION, input=keyboard, output=DummyOutput()).run()
        app.close()
    captured = capsys.readouterr()
    out = captured.out + captured.err
    assert_inert(out)
    flat = " ".join(out.split())
    assert "session s[bold]x" in flat  # the banner: markup shown, control dropped
    assert "At dusk the keeper trims the wick [1]. [bold]not markup[/bold] done" in flat
    assert (
        "evilname.md" in flat
        and "session other" in flat
        and "Error: nothing could be ingested" in flat
    )


def test_eval_on_a_tiny_set_prints_nothing_raw(hostile_db, runner, tmp_path: Path) -> None:
    docs, _ = hostile_db
    conversations = tmp_path / "set.jsonl"
    item = {
        "id": "lamp\x1b[2J",
        "tags": {"kind": "Lamp\x1b]52;c;aGk=\x07room"},
        "turns": [
            {
                "user": "When does the keeper trim the lamp wick?",
                "gold": ["evil\x1b[2Jname.md", "gone\x9b2J.md"],
            }
        ],
    }
    conversations.write_text(json.dumps(item) + "\n")
    result = invoke(
        runner,
        "eval",
        conversations,
        "--corpus",
        docs,
        "--strategies",
        "ragchat,last-turn",
        "--group",
        "kind=Lamp\x1b]52;c;aGk=\x07room",
        "--out",
        tmp_path / "rows\x07.jsonl",
    )
    assert result.exit_code == 0, result.output
    assert_inert(result.output)
    assert "kind: Lamproom" in result.output and "gone.md" in result.output, result.output


# --- invisible formatting characters (issue 22) ------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "rtl\u202etxt.md",
            "rtl\\u202etxt.md",
        ),  # RIGHT-TO-LEFT OVERRIDE: would display as "rtldm.txt"
        ("a\u2066b\u2069c\u200fd", "a\\u2066b\\u2069c\\u200fd"),  # isolates and marks
        ("zero\u200bwidth\ufeff", "zero\\u200bwidth\\ufeff"),
        ("tag\U000e0041", "tag\\U000e0041"),
        ("line\u2028sep", "line\\u2028sep"),
        (
            "bad\udcffbyte",
            "bad\\udcffbyte",
        ),  # a surrogate left by an undecodable byte cannot even be encoded
        (
            "👩\u200d💻 and ی\u200cها",
            "👩\u200d💻 and ی\u200cها",
        ),  # joiners: emoji and scripts need them
        (
            "no\u00a0break, é, 漢字, \ue000",
            "no\u00a0break, é, 漢字, \ue000",
        ),  # other characters untouched
        ("\x1b[31m\u202e", "\\u202e"),
    ],
)
def test_invisible_formatting_characters_are_shown_escaped(text: str, expected: str) -> None:
    assert printable(text) == expected
    stream = PrintableStream()
    assert "".join(stream.feed(ch) for ch in text) + stream.flush() == expected


def test_json_lines_escape_invisible_characters_and_never_print_nan(capsys) -> None:
    render.json_lines(
        [
            {
                "document": "rtl\u202etxt.md \U000e0041 \udcff",
                "score": float("nan"),
                "ranks": [float("inf"), 1.5, -float("inf")],
                "nested": {"w": float("nan")},
            }
        ]
    )
    line = capsys.readouterr().out
    assert_inert(line)
    assert "NaN" not in line and "Infinity" not in line
    row = json.loads(line)
    assert (
        row["document"] == "rtl\u202etxt.md \U000e0041 \udcff"
    )  # the original text, escaped in JSON
    assert (row["score"], row["ranks"], row["nested"]) == (None, [None, 1.5, None], {"w": None})
