"""A follow-up that asks about the very text the last answer used keeps it first.

The anchor boost skips the sections the last answer drew on, so a follow-up moves on to new
text; but "and read it?" after "How do I set a cookie?" asks about the cookie section again (it
holds both setting and reading). The question's own un-anchored fusion ranks that section first,
and that, not any word of the question, keeps its boost. Real embeddings, real SQLite, the CLI.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ask_json, settings_for

from ragchat.embed import FastEmbedder
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db

GUIDE = """# Web application guide

## Routing

Each view function is bound to a URL with the route decorator. Variable parts of a URL are
written in angle brackets and passed to the view as keyword arguments.

## Cookies

To set cookies, call the set_cookie method of a response object. The cookies attribute of the
request object is a dictionary with all the cookies the client sent. Reading cookies:

```python
username = request.cookies.get("username")
```

Storing cookies:

```python
resp = make_response(render_template("index.html"))
resp.set_cookie("username", "the username")
```

## Sessions

The session object lets you keep information about a user from one request to the next. It is
built on top of cookies and signs them cryptographically, so a user can look at the contents of
the session cookie but cannot modify it unless they know the secret key used for signing. Set a
secret key before you use sessions:

```python
app.secret_key = "a long random string"
session["username"] = request.form["username"]
```

## Templates

Templates are rendered with render_template, which takes the template's name and the variables
to pass to it. Autoescaping is enabled for templates ending in .html.
"""

REFERENCE = """# Configuration reference

## Session cookie settings

SESSION_COOKIE_NAME is the name of the session cookie. SESSION_COOKIE_DOMAIN is the domain the
session cookie is valid for; if it is not set, browsers only send the cookie to the exact domain
it was set from. SESSION_COOKIE_PATH is the path the session cookie is valid for.

## Logging

The application logger writes to standard error by default. Add handlers to send records to a
file or to a log service.
"""


@pytest.fixture
def web_library(tmp_path: Path, embedder: FastEmbedder) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "webapp_guide.md").write_text(GUIDE, encoding="utf-8")
    (docs / "config_reference.md").write_text(REFERENCE, encoding="utf-8")
    path = tmp_path / "web.db"
    db = open_db(path)
    ingest(db, settings_for(path), [docs], lambda: embedder)
    db.close()
    return path


def test_a_follow_up_on_the_same_section_keeps_it_first(web_library: Path, runner) -> None:
    first = ask_json(runner, web_library, "c", "How do I set a cookie?")
    assert first["chunks"][0]["heading"].endswith("Cookies") and first["chunks"][0]["used"]
    again = ask_json(runner, web_library, "c", "and read it?")
    assert again["plan"] == "anchored_search"
    top = again["chunks"][0]
    assert top["heading"].endswith("Cookies"), [c["heading"] for c in again["chunks"]]
    assert top["anchored"] and top["boost"] > 0, "the used section the question ranks first"
    assert "request.cookies.get" in again["answer"]
    sessions = next(c for c in again["chunks"] if c["heading"].endswith("Sessions"))
    assert sessions["anchored"], "the document's other sections keep their boost"
