"""API reference pages whose text lives in docstrings (`.. automodule::`, `.. autoclass::` with
only bodiless `autoattribute`s under it) hold nothing but their titles once read: they are not
documents a question can be answered from, and their title alone used to take the first place
for any question naming it ("SOCKS Proxies" at 1.00 for "how do I use a SOCKS proxy?")."""

from __future__ import annotations

from pathlib import Path

from helpers import invoke

from ragchat.ingest.formats.rst import parse_rst
from ragchat.store.db import open_db

SOCKS_STUB = """SOCKS Proxies
=============

.. automodule:: shop.contrib.socks
    :members:
    :undoc-members:
"""
RESPONSE = """Responses
=========

.. autoclass:: shop.response.HTTPResponse
    :members:

    .. autoattribute:: status
    .. autoattribute:: headers

.. autoclass:: shop.response.Decoder

    Decodes a compressed body, one chunk at a time.
"""
PROXIES = """Proxies
=======

To reach the network through a SOCKS proxy, install the socks extra and create a
SOCKSProxyManager with the proxy's address; every request then goes through it.
"""


def test_a_page_of_titles_alone_is_skipped_with_its_reason(tmp_path: Path, runner) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "socks.rst").write_text(SOCKS_STUB, encoding="utf-8")
    (docs / "proxies.rst").write_text(PROXIES, encoding="utf-8")
    db = tmp_path / "lib.db"
    result = invoke(runner, "ingest", docs, "--db", db)
    assert result.exit_code == 0, result.output
    assert "skipped socks.rst: no text content beyond its headings" in result.output
    handle = open_db(db)
    paths = [row[0] for row in handle.execute("SELECT path FROM documents")]
    handle.close()
    assert paths == ["proxies.rst"], paths
    answer = invoke(runner, "ask", "how do I use a SOCKS proxy?", "--db", db)
    assert "SOCKSProxyManager" in answer.output, answer.output


def test_an_autoclass_whose_body_says_nothing_shows_no_signature() -> None:
    blocks = parse_rst(RESPONSE).blocks
    text = "\n".join(block if isinstance(block, str) else block.text for block in blocks)
    assert "shop.response.HTTPResponse" not in text, text
    # a class with a sentence of its own keeps its signature over it
    assert "shop.response.Decoder" in text and "Decodes a compressed body" in text, text
