"""A code block that opens its section has its heading as its lead-in (a cheat sheet's "Cookies"
over the code that sets one): such a block has no sentence before it and was never shown, even
when its chunk ranked first. A block that goes on with a section begun in the chunk before is
not given the heading: its lead-in is in that chunk."""

from __future__ import annotations

from pathlib import Path

from helpers import chunks_under_headings, flat_idf, ingested, invoke

from ragchat.answer import Mode, Request, Source, extractive
from ragchat.params import DEFAULT
from ragchat.store.library import StoredChunk

CHEATSHEET = """# Cheatsheet

## Cookies

```python
@app.route("/hello")
async def hello():
    response = await make_response("Hello")
    response.set_cookie("name", "value")
    return response
```

## Redirects

```python
@app.route("/old")
async def old():
    return redirect(url_for("new"))
```
"""

SESSIONS = """# Sessions

Sessions keep data between requests in a signed cookie. The secret key signs the cookie, so it
must be set to a long random value before a session is used, or every request fails.

Sessions are not permanent by default: the cookie is deleted when the browser closes.
"""


def test_a_cheat_sheets_block_is_answered_under_its_heading(runner, tmp_path: Path) -> None:
    db = ingested(runner, tmp_path, {"cheatsheet.md": CHEATSHEET, "sessions.md": SESSIONS})
    result = invoke(runner, "ask", "how do I set a cookie on the response?", "--db", db)
    assert result.exit_code == 0, result.output
    lines = [line.strip() for line in result.output.splitlines()]
    assert any(line.startswith("Cookies:") for line in lines), result.output
    assert 'response.set_cookie("name", "value")' in lines, result.output


def chunk(text: str, heading: str, opens_section: bool) -> Source:
    stored = StoredChunk(
        id=1, document_id=1, path="guide.md", title="Guide", heading=heading, text=text,
        ordinal=3, opens_section=opens_section,
    )  # fmt: skip
    return Source(1, stored)


BLOCK = """```python
response.set_cookie("name", "value")
```

Cookies set this way last until the browser closes unless max_age is given to set_cookie."""


def test_only_a_block_that_opens_its_section_takes_the_heading() -> None:
    def answer(opens_section: bool) -> str:
        sources = [chunk(BLOCK, "Guide > Cookies", opens_section)]
        request = Request("how do I set a cookie?", sources)
        return extractive(Mode.QUESTION, request, flat_idf, params=DEFAULT.answer).text

    opening = answer(True)
    assert opening.startswith("Cookies: [1]\n```python\nresponse.set_cookie"), opening
    assert not answer(False).startswith("Cookies:")  # its lead-in ended the chunk before


def test_the_first_chunk_under_each_heading_opens_its_section(tmp_path: Path, runner) -> None:
    long_section = "\n\n".join(
        f"Paragraph {n} explains one more detail of the cookie jar, its expiry and its domain."
        for n in range(60)
    )
    by_heading = chunks_under_headings(
        runner,
        tmp_path,
        f"# Guide\n\n## Cookies\n\n{long_section}\n\n## Redirects\n\nRedirects send a 302.\n",
    )
    cookies = [chunk.opens_section for chunk in by_heading["Cookies"]]
    assert len(cookies) > 1 and cookies[0] and not any(cookies[1:]), by_heading
    assert [chunk.opens_section for chunk in by_heading["Redirects"]] == [True]
