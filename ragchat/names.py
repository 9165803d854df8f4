"""Names and text from outside: file names as ragchat stores and shows them, and text that is
not valid UTF-8.

File names: a POSIX file name is bytes. Python gives bytes that are not UTF-8 as lone surrogates,
which SQLite and the terminal refuse; a line break in a name would split a table row or a summary
line (rows could be faked). Those are written as escapes (`\\xff`, `\\n`, `\\r`): the stored name is
readable one-line text, and the file's own bytes are kept beside it (DocumentRecord.source_bytes)
whenever escaping changed anything, so the file is found again. Other control characters are left
to the display (`text.printable` drops them with their escape sequences; `--json` keeps them).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

_UNSHOWABLE = re.compile("[\udc80-\udcff\n\r]")
_NAMED = {"\n": "\\n", "\r": "\\r"}


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:  # a byte that is not UTF-8, as os.fsdecode gives it
        return f"\\x{code - 0xDC00:02x}"
    return _NAMED[char]


def shown_name(name: str) -> str:
    """`name` with undecodable bytes and line breaks escaped."""
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
