"""A chunk's text as the units an answer can show: sentences (each with the block it introduces),
list items, code blocks, tables, and the titles and cut sentences an answer never shows."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from ..text import is_fence, is_signature, split_sentences
from .blocks import END_PUNCTUATION, ENDS_IN_ADDRESS, ENDS_IN_CODE, blocks
from .params import AnswerParams

# a notice, not an answer; "licensed under the MIT license" stays: it answers "what licence?"
_LICENCE_NOTICE = re.compile(r"\b(?:placed in the public domain|all rights reserved)\b", re.I)
# a console session or a traceback, by its shape: a prompt line ("$ cmd", ">>> x", "C:\\> x",
# "PS> x") or a traceback header; what a program printed, not code to write. Not "# ": in
# code it is a comment ("# it will throw an error later" under `sync_to_async(Blog.objects.all)`,
# "# in lazy_group.py"), far more often than a root shell's prompt
_PROMPT_LINE = re.compile(r"^\s*(?:[$%❯›>]|>>>|\.\.\.|[A-Z]:\\[^>]*>|PS[^>]*>)\s")
_SESSION_PROMPT = re.compile(r"^\s*>>>\s")  # a Python interpreter's prompt
# a shell's prompt: "$ cmd", "% cmd", "❯ cmd", "C:\\> cmd", "PS> cmd" (not ">>> ", "... ", "> ")
_SHELL_PROMPT = re.compile(r"^\s*(?:[$%❯›]|[A-Z]:\\[^>]*>|PS[^>]*>)\s")
_TRACEBACK = re.compile(r"^\s*(?:Traceback \(|\w+(?:Error|Exception):\s)")
# a sentence cut at its front: it starts with a plain lower-case word (not `ctx.obj`, "e.g.")
_CUT_FRONT = re.compile(r"^[a-z]{2}[a-z'’]*[\s,;]")  # not a one-letter "o" bullet
_BARE_WORDS = 2  # "For example:", "Example:"; "Here is an example:" says no more, but is a sentence


@dataclass(frozen=True)
class Unit:
    """A piece of a chunk an answer can show: a sentence (with the block it introduces, if any),
    a list item, or a block on its own."""

    position: int
    sentence: str  # "" for a block on its own
    block: str = ""  # a fenced code block, list or table, as it is in the chunk
    # sentence | item | code | list | table | title | label | fragment | signature
    kind: str = "sentence"
    whole: str = ""  # a code block cut to `max_block_lines`, as the chunk has it ("" when not cut)

    @property
    def is_signature(self) -> bool:
        """An object description's signature: it names a call, it shows no use of it."""
        return self.kind == "signature"

    @property
    def text(self) -> str:
        return "\n".join(part for part in (self.sentence, self.block) if part)

    @property
    def has_code(self) -> bool:
        return is_fence(self.block)

    @property
    def code_lines(self) -> list[str]:
        """A code block's non-blank lines inside its fences (none for any other unit)."""
        if not self.has_code:
            return []
        return [line for line in self.block.strip().splitlines()[1:-1] if line.strip()]

    @property
    def is_console(self) -> bool:
        """A code block that shows a console session or a traceback, not code to write."""
        return self.has_code and is_console(self.block)

    @property
    def is_session(self) -> bool:
        """A console that is a Python interpreter session (a doctest): its `>>>` lines are the
        code to write, run before the reader's eyes, not a program's printed run."""
        return self.is_console and is_session(self.block)

    @property
    def raises(self) -> bool:
        """A console whose printed lines hold a traceback: the error its code raises."""
        return self.is_console and _raises(self.output)

    @property
    def output(self) -> str:
        """A console block's printed lines (its prompts and fences left out)."""
        if not self.is_console:
            return ""
        lines = self.block.splitlines()[1:-1]
        return "\n".join(line for line in lines if not _PROMPT_LINE.match(line))

    def typed(self) -> Unit | None:
        """A console run a sentence introduces, as what the reader types: its shell commands
        alone ("To see what queues exist ..., just type rq info:" with `$ rq info`, its printed
        table left out), a block of commands like any other. None for anything else: a Python
        session (its code is shown whole), a traceback, a run without a shell command."""
        if not self.sentence or not self.is_console or self.is_session:
            return None
        lines = self.block.strip().splitlines()
        inner = lines[1:-1]
        typed = [line for line, mine in zip(inner, _typed_lines(inner), strict=True) if mine]
        if not typed:
            return None
        return replace(self, block="\n".join([lines[0], *typed, lines[-1]]))


def is_console(block: str) -> bool:
    """A console session or a traceback; not a block of shell commands alone, which prints
    nothing: that is what the reader types ("$ worker app --queues ui"), the how-to itself."""
    lines = [line for line in block.splitlines()[1:] if line.strip() and not is_fence(line)]
    console = any(_PROMPT_LINE.match(line) or _TRACEBACK.match(line) for line in lines[:3])
    return console and not is_commands(lines)


def _typed_lines(lines: list[str]) -> list[bool]:
    """Which lines a reader types: a shell prompt's command, or a line a command's trailing "\\"
    goes on to."""
    marks: list[bool] = []
    going_on = False
    for line in lines:
        marks.append(going_on or bool(_SHELL_PROMPT.match(line)))
        going_on = line.rstrip().endswith("\\")
    return marks


def is_commands(lines: list[str]) -> bool:
    """Every line is a shell prompt's command, goes on with the one before (a trailing "\\") or
    is a comment ("# only the default queue"), and one at least is a command."""
    marks = _typed_lines(lines)
    return all(
        mine or line.lstrip().startswith("#") for line, mine in zip(lines, marks, strict=True)
    ) and any(_SHELL_PROMPT.match(line) for line in lines)


def is_session(block: str) -> bool:
    """The block's first prompt line is a Python interpreter's (`>>> `)."""
    lines = [line for line in block.splitlines()[1:] if line.strip()]
    first = next((line for line in lines if _PROMPT_LINE.match(line)), "")
    return bool(_SESSION_PROMPT.match(first))


def units(
    text: str, params: AnswerParams, whole_start: bool = False, whole_end: bool = False
) -> list[Unit]:
    """The units of a chunk in reading order. A block goes with the sentence right before it
    (the sentence that introduces it); a list nobody introduces gives its items one by one; an
    object description's signature (`text.is_signature`) stands alone: Sphinx shows an entry's
    description after its signature, so the sentence before one ends the entry before it
    ("Equivalent to task(), but closes ..." is `db_task`'s, not the lead-in of the
    `db_periodic_task(...)` after it), and the signature does not go on with code before it.
    `whole_start`, `whole_end`: the chunk starts or ends where its section does, so its first
    sentence is whole even in lower case ("urllib3 keeps connections open ...") and its last one
    when an address pushed its full stop out ("DB URL is typically in the form of
    mysql://user:pass@host/db"; not any unpunctuated line: an infobox's run of fields is none)."""
    found: list[Unit] = []
    for kind, piece in _tab_labels(_pieces(text, params)):
        if kind == "prose":
            found.extend(Unit(len(found), s) for s in split_sentences(piece))
            continue
        if kind in ("title", "label"):
            found.append(Unit(len(found), piece, kind=kind))
            continue
        last = found[-1] if found else None
        whole = ""
        if kind == "code":  # a block too long is cut; the unit keeps it whole for `cut_asked`
            whole, piece = piece, "\n".join(_cut(piece.split("\n"), True, params))
            whole = "" if whole == piece else whole
        if kind == "code" and is_signature(piece):  # the text before it ends the entry before
            found.append(Unit(len(found), "", piece, "signature"))
            continue
        if kind == "code" and _labels_code(found):  # "Install it: / Linux: / ```curl ...```"
            label = found.pop().sentence
            last = found[-1]
            lead = f"{last.sentence} {label}:" if not last.block else last.sentence
            block = f"{last.block}\n{label}:\n{piece}" if last.block else piece
            found[-1] = Unit(last.position, lead, block, "code")
            continue
        if (
            kind == "code"
            and last is not None
            and last.kind == "title"
            and (not is_console(piece) or is_session(piece))
            and not _continued(last.sentence)
        ):
            # a short line without a full stop right before a block (code, or a Python session,
            # whose `>>>` lines are code) is its lead-in, not a heading ("QuerySet also supports
            # aggregation ... through .annotate() method"; "For a list of formatting values,
            # see Supported Tokens" over `>>> arrow.utcnow().format(...)`);
            # not a line that goes on with a sentence before it ("...and the following query
            # parameters from the user"): a lead-in cut at its start introduces nothing
            found[-1] = Unit(last.position, last.sentence, piece, kind, whole)
            continue
        if last is not None and last.kind == "sentence" and not last.block:
            if (
                _bare(last)
                and kind == "code"
                and not is_console(piece)  # "Check it:" runs the code above, says nothing more
                and len(found) >= 2
                and _plain(found[-2], len(found) - 2, whole_start)
            ):
                found.pop()  # "For example:" says only that the block follows the sentence before
                before = found[-1]
                last = Unit(before.position, f"{before.sentence} {last.sentence}")
            found[-1] = Unit(last.position, last.sentence, piece, kind, whole)
        elif last is not None and _continues(last, kind, piece):  # "create these files:"
            # two blocks in one unit: each was cut on its own; the question's cut is one block's
            found[-1] = replace(last, block=f"{last.block}\n{piece}", whole="")
        elif kind == "list":
            found.extend(
                Unit(len(found), " ".join(item.split()), kind="item")
                for item in piece.splitlines()
                if item.strip() and item.strip() != "…"
            )
        else:
            found.append(Unit(len(found), "", piece, kind, whole))
    return _fragments_marked(found, whole_start, whole_end)


def _tab_labels(pieces: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """Titles that name tabs: two or more title lines each right before a code block, in a row
    ("Linux, macOS" ```curl ...``` "Windows" ```powershell ...```) become labels; so does a
    block's caption, one title between prose and the code block it names ("It's possible to
    customize the collection name ..." / "Custom collection name example" / ```class
    CapitalCity(Model): ...```): the prose introduces the block, the title only names it."""
    kinds = [kind for kind, _ in pieces]
    pair = [
        kinds[i] == "title" and i + 1 < len(kinds) and kinds[i + 1] == "code"
        for i in range(len(kinds))
    ]
    grouped = {i for i in range(len(kinds)) if pair[i] and (pair[i - 2] if i >= 2 else False)} | {
        i for i in range(len(kinds)) if pair[i] and i + 2 < len(kinds) and pair[i + 2]
    }
    captions = {i for i in range(1, len(kinds)) if pair[i] and kinds[i - 1] == "prose"}
    return [("label", p) if i in grouped | captions else (k, p) for i, (k, p) in enumerate(pieces)]


def _continued(line: str) -> bool:
    """A line that goes on with the sentence before it: it opens with an ellipsis or a plain
    lower-case word."""
    return line.startswith(("...", "…")) or bool(_CUT_FRONT.match(line))


def _bare(unit: Unit) -> bool:
    """A lead-in that says only that a block follows ("For example:", "Like this:"): a few words
    ending in a colon."""
    return unit.sentence.endswith(":") and len(unit.sentence.split()) <= _BARE_WORDS


def _plain(unit: Unit, index: int, whole_start: bool) -> bool:
    """A whole sentence with no block of its own (not a fragment: `_cut_at_front`)."""
    return (
        unit.kind == "sentence"
        and not unit.block
        and not _cut_at_front(unit.sentence, index, whole_start)
    )


def _cut_at_front(sentence: str, index: int, whole_start: bool) -> bool:
    """A sentence cut at its front: the chunk's first, in lower case, when the chunk does not
    start its section, or any that starts with a plain lower-case word."""
    return bool(
        (index == 0 and not whole_start and sentence[:1].islower()) or _CUT_FRONT.match(sentence)
    )


def _labels_code(found: list[Unit]) -> bool:
    """The last unit is a tab's label between a sentence and the code it labels, or between two
    code blocks a sentence introduced: the label joins them, so the code keeps its lead-in
    ("Linux, macOS:" before `curl ... | python3 -`)."""
    if len(found) < 2 or found[-1].kind != "label":
        return False
    before = found[-2]
    return (
        before.kind in ("sentence", "code")
        and bool(before.sentence)
        and (not before.block or (before.has_code and not before.is_console))
    )


def _continues(last: Unit, kind: str, piece: str) -> bool:
    """A code block right after one that a sentence introduced goes on with it: code, a Python
    session (its `>>>` lines are code), or the error the code raises ("If you want to expire
    signatures ...:" `s = TimestampSigner(...)`, then `s.unsign(string, max_age=5)` with its
    `SignatureExpired` traceback); never a console's printed run."""
    return (
        kind == "code"
        and bool(last.sentence)
        and last.has_code
        and (not last.is_console or last.is_session)
        and (not is_console(piece) or is_session(piece) or _raises(piece))
    )


def _raises(text: str) -> bool:
    """The text shows a traceback: code and the error it raises."""
    return any(_TRACEBACK.match(line) for line in text.splitlines())


def _fragments_marked(found: list[Unit], whole_start: bool, whole_end: bool) -> list[Unit]:
    """A chunk can start or end inside a sentence (not where it starts or ends its section),
    and a sentence can be cut at its front anywhere ("you can force the running of ..."): those
    pieces are fragments."""
    for i, unit in enumerate(found):
        if unit.kind == "sentence" and _cut_at_front(unit.sentence, i, whole_start):
            found[i] = replace(unit, kind="fragment")
    last = found[-1] if found else None
    if (
        last is not None
        and last.kind == "sentence"
        and not last.block
        and not END_PUNCTUATION.search(last.sentence)
        and not (
            whole_end
            and (ENDS_IN_ADDRESS.search(last.sentence) or ENDS_IN_CODE.search(last.sentence))
        )
    ):
        found[-1] = replace(last, kind="fragment")
    return found


def lead_text(text: str, params: AnswerParams) -> str:
    """A chunk's text as the units would show it, from the start (the lead baseline)."""
    return " ".join(
        unit.text for unit in units(text, params) if unit.kind not in ("title", "label", "fragment")
    )


def is_boilerplate(sentence: str, params: AnswerParams) -> bool:
    """Navigation and footer text: a run of capitalised labels without a sentence's small
    words, or a copyright or licence notice ("This document has been placed in the public
    domain.", which ends every PEP)."""
    tokens = sentence.split()
    if "©" in sentence or "(c) 20" in sentence.lower() or _LICENCE_NOTICE.search(sentence):
        return True
    capitalised = sum(1 for t in tokens if t[:1].isupper())
    return (
        len(tokens) >= params.boilerplate_words
        and capitalised / len(tokens) > params.boilerplate_capitals
    )


# --- the chunk's blocks as pieces ---------------------------------------------------------------


def _pieces(text: str, params: AnswerParams) -> list[tuple[str, str]]:
    """The chunk as (kind, text) pieces in order: prose paragraphs, titles, and code, list and
    table blocks (lists and tables cut to `max_block_lines`, code whole); headings are left
    out."""
    pieces: list[tuple[str, str]] = []
    for block in blocks(text, params.title_words):
        lines = list(block.lines)
        if block.kind == "prose":
            pieces.append(("prose", " ".join(line.strip() for line in lines)))
        elif block.kind == "title":
            pieces.append(("title", lines[0].strip()))
        elif block.kind == "loose_code":
            pieces.append(("code", "\n".join(["```", *(line.rstrip() for line in lines), "```"])))
        elif block.kind == "code":  # cut where it becomes a unit's (`units`)
            pieces.append(("code", "\n".join(lines)))
        elif block.kind != "heading":
            pieces.append((block.kind, "\n".join(_cut(lines, False, params))))
    return pieces


def _cut(lines: list[str], code: bool, params: AnswerParams) -> list[str]:
    most = params.max_block_lines
    if len(lines) <= most:
        return lines
    if code:  # keep the closing fence so the block stays a block
        return _elided(lines, len(lines) - most + 1, most - 2)
    return [*lines[:most], "…"]


def _elided(lines: list[str], span: int, start: int) -> list[str]:
    """A fenced block with `span` lines from `start` on left out, marked by a comment line."""
    indent = lines[0][: len(lines[0]) - len(lines[0].lstrip())]
    return [*lines[:start], indent + "# …", *lines[start + span :]]


def cut_asked(whole: str, asked: Callable[[str], float], params: AnswerParams) -> str:
    """A code block too long to show whole, cut where it says least of what the question asks:
    of every run of lines as long as the cut must be (after the opening fence's line, before the
    closing one), the one whose lines hold the least of the question's weight (`asked` of a
    line), the last such run on a tie, so a block that says nothing asked loses its tail as any
    other does. The line the question came for ("self.groups.add(group)" at the end of a
    35-line example of a many-to-many hook) is not cut for a lighter middle. When the lines
    asked about sit in the middle of a long block (a whole example file: imports and models,
    then the query asked for), one cut keeps only its head and its tail: the block is then cut
    on both sides of the run that holds more of the question's weight than any head and tail."""
    lines = whole.split("\n")
    most = params.max_block_lines
    if len(lines) <= most:
        return whole
    span = len(lines) - most + 1
    weight = [0.0, *(asked(line) for line in lines[1:-1]), 0.0]
    first, last = 1, len(lines) - 1 - span
    cost = sum(weight[last : last + span])
    best, start = cost, last
    for begin in range(last - 1, first - 1, -1):  # slide the run back one line at a time
        cost += weight[begin] - weight[begin + span]
        if cost < best - 1e-9:
            best, start = cost, begin
    inner = _inner_run(weight, most - 4)  # room for the fences and two marks
    if inner is not None and inner[0] > sum(weight) - best + 1e-9:
        begin = inner[1]
        mark = lines[0][: len(lines[0]) - len(lines[0].lstrip())] + "# …"
        return "\n".join([lines[0], mark, *lines[begin : begin + most - 4], mark, lines[-1]])
    return "\n".join(_elided(lines, span, start))


def _inner_run(weight: list[float], length: int) -> tuple[float, int] | None:
    """(weight, start) of the heaviest run of `length` lines with a line cut before it and
    after it (never the fence lines at either end), the first on a tie; None if none fits."""
    starts = range(2, len(weight) - 2 - length)
    if not starts:
        return None
    held, begin = max((sum(weight[b : b + length]), -b) for b in starts)
    return held, -begin
