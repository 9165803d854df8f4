"""Split a ParsedDocument into chunks that follow its structure. Pure.

Rules, in order:
- A chunk never crosses a section boundary, so it has exactly one heading path.
- Inside a section, whole paragraphs (blank-line separated) are packed up to `target` characters.
- A fenced code block is never split while it fits in `max_size`; a larger one is split on its
  own blank lines (then lines), and every piece is re-fenced with the block's fence line.
- A paragraph longer than `max_size` is split into sentences, a sentence longer than `max_size`
  into lines, and a line longer than `max_size` into pieces of about `target` characters at
  word boundaries. Only a single "word" longer than `max_size` (a URL, a base64 blob) is cut
  inside itself, at `max_size`.
- A piece shorter than `min(200, target // 5)` (a short tail, or a short lead-in such as "The
  conditions are:" before a long list) joins its neighbour in the same section when the result
  stays within `max_size`.
- Each chunk after the first of its section starts up to `overlap` characters (and at most half
  the previous chunk's own text) before the end of the previous chunk, at a sentence or block
  start outside code that gives at least a third of `overlap`; else from the start of the sentence
  that runs into that window, when the chunk stays within `max_size`; else it has no overlap, so a
  chunk never begins inside a sentence. The overlap shrinks so that no chunk exceeds `max_size`.

Every chunk satisfies `doc.text[chunk.start:chunk.end] == chunk.text`, except a piece of a code
block too large for one chunk, whose text is that slice inside its block's fence lines (so every
chunk holds whole fences). `start` includes the overlap, so it lies inside the previous chunk's
range. Chunk text is stripped, never blank, and starts and ends on a word boundary (the single
exception above aside), except that a piece of a code block starts with its first line's
indentation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ragchat.ingest.parsed import ParsedDocument, Section
from ragchat.text import CHUNK_SENTENCES, backtick_fences, sentence_spans

_Span = tuple[int, int]

_PARAGRAPH = re.compile(r"(?:[^\n]|\n(?![ \t]*\n))+")  # a run of text without a blank line
_LINE = re.compile(r"[^\n]+")
_WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Chunk:
    """A piece of one section: `text == doc.text[start:end]`, overlap with the previous included."""

    ordinal: int
    text: str
    heading_path: tuple[str, ...]
    start: int
    end: int
    page_start: int | None = None  # the pages it lies on, for documents with pages (PDFs)
    page_end: int | None = None


def chunk_document(doc: ParsedDocument, target: int, max_size: int, overlap: int) -> list[Chunk]:
    """Chunks of every section in document order, numbered from 0."""
    if not 0 < target <= max_size or overlap < 0:
        raise ValueError("chunk sizes need 0 < target <= max_size and overlap >= 0")
    chunks: list[Chunk] = []
    for section in doc.sections:
        code = _code_blocks(doc.text, section.start, section.end)
        for start, end in _section_spans(doc.text, section, target, max_size, overlap):
            start = _line_start_in_code(doc.text, start, code)
            pages = doc.page_range(start, end) or (None, None)
            text = _whole_fences(doc.text, start, end, code)
            chunks.append(Chunk(len(chunks), text, section.heading_path, start, end, *pages))
    return chunks


def embedding_text(title: str, chunk: Chunk) -> str:
    """ "Title > Heading > Sub\\n\\nchunk text", so a chunk reads on its own.

    A heading equal to the crumb before it (often the h1 repeating the title) is left out. A
    signature's fence (`text.SIGNATURE_MARK`) reads as any code's: the mark is for the answer's
    units (no lead-in), not part of what the chunk means.
    """
    crumbs: list[str] = [title.strip()] if title.strip() else []
    for heading in chunk.heading_path:
        if not crumbs or heading.casefold() != crumbs[-1].casefold():
            crumbs.append(heading)
    text = backtick_fences(chunk.text)
    return f"{' > '.join(crumbs)}\n\n{text}" if crumbs else text


def _section_spans(
    text: str, section: Section, target: int, max_size: int, overlap: int
) -> list[_Span]:
    paragraphs = _keep_blocks_whole(
        text, _spans(_PARAGRAPH, text, section.start, section.end), max_size
    )
    units = [
        unit for paragraph in paragraphs for unit in _split_long(text, paragraph, target, max_size)
    ]
    cores = _merge_tiny(_pack(units, target), max_size, min(200, target // 5))
    code = _code_blocks(text, section.start, section.end)
    starts = sorted(
        {start for start, _ in paragraphs}
        | {s for p in paragraphs for s, _ in _readable_parts(text, p)}
    )
    boundaries = [b for b in starts if not any(o < b < c for o, _, c, _ in code)]
    return _add_overlap(cores, boundaries, overlap, max_size)


_FENCE_LINE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})", re.M)
_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*$", re.M)
# a code block: (opening line start, opening line end, closing line start, closing line end)
_Code = tuple[int, int, int, int]


def _code_blocks(text: str, start: int, end: int) -> list[_Code]:
    """The fenced blocks in text[start:end]; an unclosed one runs to `end`."""
    blocks: list[_Code] = []
    position = start
    while (opening := _FENCE_OPEN.search(text, position, end)) is not None:
        fence = opening.group(1)
        closing = re.compile(rf"^ {{0,3}}{fence[0]}{{{len(fence)},}}[ \t]*$", re.M).search(
            text, opening.end(), end
        )
        close_start, close_end = (closing.start(), closing.end()) if closing else (end, end)
        blocks.append((opening.start(), opening.end(), close_start, close_end))
        position = close_end
    return blocks


def _line_start_in_code(text: str, start: int, code: list[_Code]) -> int:
    """Where a chunk starting inside a code block's line of code starts: before the line's
    indentation, which is code (a command's help cut between chunks showed "-c, --csv" out of
    line with the "  --tsv" under it, and Python's body lines lost their block)."""
    for _open_start, open_end, _close_start, close_end in code:
        if open_end < start < close_end:
            line = text.rfind("\n", 0, start) + 1
            if line > open_end and not text[line:start].strip():
                return line
    return start


def _whole_fences(text: str, start: int, end: int, code: list[_Code]) -> str:
    """text[start:end], with the fence line of a code block it begins inside put back before it,
    and a closing fence after it when it ends inside one."""
    piece = text[start:end]
    for open_start, open_end, _close_start, close_end in code:
        if open_start < start < close_end:
            piece = text[open_start:open_end] + "\n" + piece
        if open_end <= end < close_end or (open_start <= end < open_end):
            piece += "\n" + _FENCE_LINE.match(text, open_start).group(0).strip()  # type: ignore[union-attr]
    return piece


_BLOCK_START = re.compile(r"(?:`{3,}|~{3,}|[-*+] |\d+[.)] |[^\n]* \| )")


def _keep_blocks_whole(text: str, paragraphs: list[_Span], max_size: int) -> list[_Span]:
    """Paragraphs of one code fence joined (blank lines inside code); a sentence introducing a
    list, table or code block ("...:") joined with it, and a code block with the lowercase rest of
    the sentence after it, when both fit in max_size."""
    joined: list[_Span] = []
    open_fence = False
    for start, end in paragraphs:
        fences = len(_FENCE_LINE.findall(text, start, end))
        if joined and open_fence:
            joined[-1] = (joined[-1][0], end)
        elif (
            joined
            and end - joined[-1][0] <= max_size
            and (
                (text[joined[-1][1] - 1] == ":" and _BLOCK_START.match(text, start))
                or (
                    text[joined[-1][1] - 1] in "`~" and text[start].islower()
                )  # "like:" code "the rest ..."
            )
        ):
            joined[-1] = (joined[-1][0], end)
        else:
            joined.append((start, end))
        open_fence = open_fence != (fences % 2 == 1)
    return joined


def _spans(pattern: re.Pattern[str], text: str, start: int, end: int) -> list[_Span]:
    """Matches of `pattern` in text[start:end], trimmed of whitespace, blank ones dropped."""
    trimmed = (_trim(text, *match.span()) for match in pattern.finditer(text, start, end))
    return [span for span in trimmed if span[0] < span[1]]


def _trim(text: str, start: int, end: int) -> _Span:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def _split_long(
    text: str, span: _Span, target: int, max_size: int, code: bool = False
) -> list[_Span]:
    """`span` if it fits in max_size, else its sentences (with code: its blank-line separated
    parts, never sentences), lines or word runs that do."""
    if span[1] - span[0] <= max_size:
        return [span]
    code = code or _FENCE_LINE.search(text, *span) is not None
    parts = _spans(_PARAGRAPH, text, *span) if code else _readable_parts(text, span)
    for pieces in (parts, _spans(_LINE, text, *span)):
        if len(pieces) > 1:
            return [
                part
                for piece in pieces
                for part in _split_long(text, piece, target, max_size, code)
            ]
    return _word_runs(text, span, target, max_size)


_ITEM_START = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+\S", re.M)


def _readable_parts(text: str, span: _Span) -> list[_Span]:
    """A list's items (its lead-in first), else sentences: a list is cut between items, never
    after an item's number ("7.") or inside an item's sentences."""
    starts = [match.start() for match in _ITEM_START.finditer(text, *span)]
    if len(starts) < 2:
        return _sentences(text, span)
    edges = ([span[0]] if starts[0] > span[0] else []) + starts + [span[1]]
    return [part for a, b in zip(edges, edges[1:]) if (part := _trim(text, a, b))[0] < part[1]]


def _sentences(text: str, span: _Span) -> list[_Span]:
    return sentence_spans(text, *span, rule=CHUNK_SENTENCES)


def _word_runs(text: str, span: _Span, target: int, max_size: int) -> list[_Span]:
    """Greedy runs of whole words up to `target`; a word longer than max_size is cut."""
    runs: list[_Span] = []
    for start, end in (match.span() for match in _WORD.finditer(text, *span)):
        if end - start > max_size:
            runs += [(cut, min(cut + max_size, end)) for cut in range(start, end, max_size)]
        elif runs and end - runs[-1][0] <= target:
            runs[-1] = (runs[-1][0], end)
        else:
            runs.append((start, end))
    return runs


def _pack(units: list[_Span], target: int) -> list[_Span]:
    """Consecutive units joined while the joined span stays within target."""
    packed: list[_Span] = []
    for start, end in units:
        if packed and end - packed[-1][0] <= target:
            packed[-1] = (packed[-1][0], end)
        else:
            packed.append((start, end))
    return packed


def _merge_tiny(spans: list[_Span], max_size: int, tiny: int) -> list[_Span]:
    """A span shorter than `tiny` joins its neighbour when the result fits in max_size."""
    merged: list[_Span] = []
    for start, end in spans:
        last = merged[-1] if merged else None
        if last and min(end - start, last[1] - last[0]) < tiny and end - last[0] <= max_size:
            merged[-1] = (last[0], end)
        else:
            merged.append((start, end))
    return merged


def _add_overlap(
    cores: list[_Span], boundaries: list[int], overlap: int, max_size: int
) -> list[_Span]:
    spans = cores[:1]
    for previous, (start, end) in zip(cores, cores[1:]):
        room = max_size - (
            end - previous[1]
        )  # the most overlap that keeps the chunk within max_size
        spans.append(
            (
                _overlap_start(boundaries, previous, min(overlap, room), room, overlap // 3, start),
                end,
            )
        )
    return spans


def _overlap_start(
    boundaries: list[int], previous: _Span, budget: int, room: int, min_overlap: int, default: int
) -> int:
    """The earliest sentence or block start outside code in the last `budget` chars of `previous`;
    else, when the sentence there began earlier, its start if that fits in `room` (a whole
    sentence of context rather than its tail); else `default` (no overlap). `previous` is the
    previous chunk's span without its own overlap."""
    if budget < min_overlap or budget <= 0:
        return default
    # at most the later half of the previous chunk's own text, so no chunk contains another
    half = previous[0] + (previous[1] - previous[0] + 1) // 2
    lowest = max(previous[1] - budget, half)
    starts = [b for b in boundaries if lowest <= b < previous[1] and previous[1] - b >= min_overlap]
    if starts:
        return starts[0]
    # never further back than twice the window: a long sentence is not repeated whole
    nearest = max(previous[1] - room, half, previous[1] - 2 * budget)
    earlier = [b for b in boundaries if nearest <= b < lowest]
    return earlier[-1] if earlier else default
