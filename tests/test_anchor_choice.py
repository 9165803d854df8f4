"""How much a follow-up leans on the last answer's documents, chosen per question from what the
question finds on its own (ranks and embeddings, never its words). Real embeddings, real SQLite,
the CLI.

- The anchor boost skips the sections the last answer drew on, so a follow-up moves on to new
  text; but "and read it?" after "How do I set a cookie?" asks about the cookie section again (it
  holds both setting and reading). The question's un-anchored fusion ranks that section first,
  and that keeps its boost.
- "What is the g object used for?" after a 404 answer has no follow-up cue and none of its words
  is foreign to the conversation, yet alone it finds one other document, far closer than the
  error pages: it needs the conversation less.
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


ERRORS = """# Handling application errors

## Custom error pages

To show your own page when a URL is not found, register an error handler for the 404 status
code. The handler renders a template and returns it with the status code; wrap it with
make_response to get the response object and change its headers:

```python
@app.errorhandler(404)
def page_not_found(error):
    return render_template("404.html"), 404
```

## Error handlers in blueprints

A blueprint can register its own error handlers; they handle the errors raised by the blueprint's
views. A 404 raised before routing reaches the application's handler, not the blueprint's.

## Logging errors

Unhandled exceptions are logged with the application logger, together with the request that
caused them.
"""

CONTEXT = """# The application context

## Storing data during a request

The g object is a namespace for storing data during a request or a CLI command. A common use is to
open a database connection once and keep it on g, so every function called in the same request
can reuse it:

```python
def get_db():
    if "db" not in g:
        g.db = connect_to_database()
    return g.db
```

## Lifetime of the context

The context is pushed when a request starts and popped when it ends; data stored on g is lost
afterwards and is not shared between requests.
"""

RESPONSES = """# Responses

## Response objects

A view returns a string, a template, or a response object. make_response builds a response
object whose headers and status code can be changed before it is returned.
"""


def library(tmp_path: Path, embedder: FastEmbedder, files: dict[str, str]) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in files.items():
        (docs / name).write_text(text, encoding="utf-8")
    path = tmp_path / "web.db"
    db = open_db(path)
    ingest(db, settings_for(path), [docs], lambda: embedder)
    db.close()
    return path


@pytest.fixture
def web_library(tmp_path: Path, embedder: FastEmbedder) -> Path:
    files = {"webapp_guide.md": GUIDE, "config_reference.md": REFERENCE, "responses.md": RESPONSES}
    return library(tmp_path, embedder, files)


@pytest.fixture
def context_library(tmp_path: Path, embedder: FastEmbedder) -> Path:
    files = {"errors.md": ERRORS, "context.md": CONTEXT, "responses.md": RESPONSES}
    return library(tmp_path, embedder, files)


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


def test_a_one_page_library_is_not_anchored_on_its_one_page(
    tmp_path: Path, embedder: FastEmbedder, runner
) -> None:
    # the last answer's document is the whole library: a boost for it would lift every section
    # but the ones the last answer used, so "and read it?" would lose the cookie section
    path = library(tmp_path, embedder, {"webapp_guide.md": GUIDE})
    first = ask_json(runner, path, "c", "How do I set a cookie?")
    assert first["chunks"][0]["heading"].endswith("Cookies")
    again = ask_json(runner, path, "c", "and read it?")
    assert again["plan"] == "search"
    assert not any(c["anchored"] or c["boost"] for c in again["chunks"])
    assert again["chunks"][0]["heading"].endswith("Cookies")
    assert "request.cookies.get" in again["answer"]


def test_a_question_whose_meaning_points_elsewhere_leans_less_on_the_last_answer(
    context_library: Path, runner
) -> None:
    first = ask_json(runner, context_library, "g", "How do I show a custom page for 404 errors?")
    assert first["chunks"][0]["document"] == "errors.md"
    second = ask_json(runner, context_library, "g", "What is the g object used for?")
    reformulation = second["reformulation"]
    assert reformulation["reasoning"] == "follow-up: may continue the conversation"
    # alone it comes 0.63 close to context.md, 0.01 to errors.md: the need halves (0.62 -> 0.31)
    assert reformulation["context_need"] < 0.5, reformulation
    assert [c["document"] for c in second["chunks"][:2]] == ["context.md", "context.md"]
