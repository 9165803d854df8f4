"""An autodoc object whose text lives in docstrings (`.. autoclass::` with only bodiless
`autoattribute`s under it) says nothing once read: its dotted path alone is noise, as for an
autodoc directive without a body."""

from __future__ import annotations

from ragchat.ingest.formats.rst import parse_rst

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


def test_an_autoclass_whose_body_says_nothing_shows_no_signature() -> None:
    blocks = parse_rst(RESPONSE).blocks
    text = "\n".join(block if isinstance(block, str) else block.text for block in blocks)
    assert "shop.response.HTTPResponse" not in text, text
    # a class with a sentence of its own keeps its signature over it
    assert "shop.response.Decoder" in text and "Decodes a compressed body" in text, text
