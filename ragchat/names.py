"""Names and text from outside: file names as ragchat stores and shows them, and text that is
not valid UTF-8.

File names:

A POSIX file name is bytes. Python gives bytes that are not UTF-8 as lone surrogates, which SQLite
and the terminal refuse; control characters (a newline in a name) would split a table row or a
summary line, and bidirectional controls would reorder what is shown. Those are written as escapes
(`\\xff`, `\\n`, `\\u202e`): the stored name is readable text, and the file's own bytes are kept
beside it (DocumentRecord.source_bytes) whenever escaping changed anything, so the file is found again.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_UNSHOWABLE = re.compile("[\udc80-\udcff\x00-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode gives it
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED.get(char) or (f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def shown_name(name: str) -> str:
    """`name` with undecodable bytes, control and bidi characters escaped."""
    return _UNSHOWABLE.sub(_escape, name)


def name_bytes(name: str) -> bytes | None:
    """The bytes of a name that `shown_name` changes (else None: the text is the name)."""
    return os.fsencode(name) if _UNSHOWABLE.search(name) else None


def stored_path(source: str, source_bytes: bytes | None) -> Path:
    """The file a stored document came from."""
    return Path(os.fsdecode(source_bytes)) if source_bytes else Path(source)


_SURROGATES = re.compile("[\ud800-\udfff]")


def readable_text(text: str) -> str:
    """Text from outside (argv, a pipe, the prompt) with undecodable bytes as U+FFFD: Python hands
    them over as lone surrogates, which no encoder, tokenizer or database accepts."""
    return _SURROGATES.sub("\ufffd", text)
