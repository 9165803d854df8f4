"""Small files that expand into huge work, generated on the spot (streaming: nothing big in memory).

Used by the tests (which check each is refused with its reason) and by benchmarks/bombs.py (which
measures the time and peak memory of refusing each).
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path

from helpers import pdf_bytes

_CONTENT_TYPES = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types '
    'xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default '
    'Extension="rels" '
    'ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default '
    'Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" '
    'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.'
    'main+xml"/></Types>'
)
_RELS = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships '
    'xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship '
    'Id="rId1" '
    'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" '
    'Target="word/document.xml"/></Relationships>'
)
_DOC_HEAD = (
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
    '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
)
_DOC_TAIL = "</w:body></w:document>"
MB = 1 << 20


def docx_with_body(path: Path, pieces: int, piece: str, head: str = "", tail: str = "") -> Path:
    """A .docx whose document body is `head + piece * pieces + tail`, deflated as it is written."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", _CONTENT_TYPES)
        archive.writestr("_rels/.rels", _RELS)
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            member.write((_DOC_HEAD + head).encode())
            block = (piece * max(1, MB // len(piece))).encode()
            per_block = max(1, MB // len(piece))
            for _ in range(pieces // per_block):
                member.write(block)
            member.write((piece * (pieces % per_block)).encode())
            member.write((tail + _DOC_TAIL).encode())
    return path


def paragraphs_docx(path: Path, megabytes: int = 200) -> Path:
    """Paragraphs of one word, `megabytes` MB of XML (200 MB deflates to about 600 KB)."""
    paragraph = "<w:p><w:r><w:t>word</w:t></w:r></w:p>"
    return docx_with_body(path, megabytes * MB // len(paragraph), paragraph)


def text_node_docx(path: Path, megabytes: int = 1024, declared: int | None = None) -> Path:
    """One text node of `megabytes` MB (1 GB deflates to about 1 MB), its size in the zip header
    `declared` if given (a header that lies). One deflated megabyte is repeated (a full flush makes
    each copy self-contained), so making it takes a fraction of a second."""
    block = b"a" * MB
    compressor = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = compressor.compress(block) + compressor.flush(zlib.Z_FULL_FLUSH)
    head = (_DOC_HEAD + "<w:p><w:r><w:t>").encode()
    tail = ("</w:t></w:r></w:p>" + _DOC_TAIL).encode()
    crc = zlib.crc32(head)
    for _ in range(megabytes):
        crc = zlib.crc32(block, crc)
    crc = zlib.crc32(tail, crc)
    start, end = zlib.compressobj(9, zlib.DEFLATED, -15), zlib.compressobj(9, zlib.DEFLATED, -15)
    first = start.compress(head) + start.flush(zlib.Z_FULL_FLUSH)
    last = end.compress(tail) + end.flush()
    size = (
        len(head) + megabytes * MB + len(tail) if declared is None else declared
    )  # a lying header
    members = [
        (name, zlib.compress(text.encode())[2:-4], zlib.crc32(text.encode()), len(text.encode()))
        for name, text in (("[Content_Types].xml", _CONTENT_TYPES), ("_rels/.rels", _RELS))
    ]
    with path.open("wb") as out:
        directory = b""
        for name, chunks, crc_of, length in [
            *((n, [d], c, ln) for n, d, c, ln in members),
            ("word/document.xml", [first, *[piece] * megabytes, last], crc, size),
        ]:
            offset = out.tell()
            packed = sum(len(chunk) for chunk in chunks)
            fields = struct.pack("<HHHHHIII", 20, 0, 8, 0, 0, crc_of, packed, length)
            out.write(b"PK\x03\x04" + fields + struct.pack("<HH", len(name), 0) + name.encode())
            for chunk in chunks:
                out.write(chunk)
            directory += (
                b"PK\x01\x02"
                + struct.pack("<H", 20)
                + fields
                + struct.pack("<HHHHHII", len(name), 0, 0, 0, 0, 0, offset)
                + name.encode()
            )
        where = out.tell()
        out.write(
            directory
            + b"PK\x05\x06"
            + struct.pack("<HHHHIIH", 0, 0, 3, 3, len(directory), where, 0)
        )
    return path


def flate_bomb_pdf(path: Path, megabytes: int = 450) -> Path:
    """A one-page PDF whose content stream inflates to `megabytes` MB of text operators (about 1 KB
    of file per MB: one deflated megabyte repeated, each copy self-contained after a full flush)."""
    line = b"BT /F1 12 Tf 72 700 Td (bomb) Tj ET\n"
    compressor = zlib.compressobj(9)
    header = compressor.compress(line * (MB // len(line))) + compressor.flush(zlib.Z_FULL_FLUSH)
    again = zlib.compressobj(9, zlib.DEFLATED, -15)
    piece = again.compress(line * (MB // len(line))) + again.flush(zlib.Z_FULL_FLUSH)
    packed = (
        header + piece * (megabytes - 1) + again.flush()
    )  # no adler32 trailer: readers tolerate it
    data = pdf_bytes([[("placeholder", 12, 700)]])
    plain = b"BT /F1 12 Tf 72 700 Td (placeholder) Tj ET"
    head, _, rest = data.partition(b"<< /Length %d >>\nstream\n%s\nendstream" % (len(plain), plain))
    body = (
        head
        + b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream" % (len(packed), packed)
        + rest
    )
    path.write_bytes(_fix_xref(body))
    return path


def _fix_xref(data: bytes) -> bytes:
    """Recompute the cross-reference offsets after an object grew."""
    head, _, _ = data.partition(b"xref\n")
    offsets = []
    position = 0
    while (found := head.find(b" 0 obj\n", position)) != -1:
        start = head.rfind(b"\n", 0, found) + 1
        offsets.append(start)
        position = found + 1
    xref = len(head)
    table = b"xref\n0 %d\n0000000000 65535 f \n" % (len(offsets) + 1)
    table += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = data[data.index(b"trailer") :]
    trailer = trailer[: trailer.index(b"startxref")] + b"startxref\n%d\n%%%%EOF\n" % xref
    return head + table + trailer


def nested_html(path: Path, depth: int = 40_000) -> Path:
    path.write_text("<html><body>" + "<div><span><b>" * depth + "x")
    return path
