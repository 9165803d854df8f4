"""What a new-user trial on never-used documentation (issue 30, datasette's docs) found in the
extractive answer: a lead-in whose full stop a web address pushed out, an answer of descriptions
beside a lower source's how-to code, and a correction that said the corrected answer again."""

from __future__ import annotations

from pathlib import Path

from helpers import flat_idf, settings_for, source

from ragchat.answer import Mode, Request, extractive, units
from ragchat.app import App
from ragchat.ingest.pipeline import ingest
from ragchat.params import DEFAULT
from ragchat.store.db import open_db

SERVE = """This command starts the web application running on your machine:

```
serve mydatabase.db
```

Once started you can access it at http://localhost:8001

```
Usage: serve [OPTIONS] [FILES]...

Options:
  -h, --host TEXT      Host for server. Defaults to 127.0.0.1
  -p, --port INTEGER   Port for server, defaults to 8001.
```
"""


def test_a_lead_in_ending_in_a_web_address_is_a_sentence_with_its_block() -> None:
    found = units(SERVE, DEFAULT.answer)
    lead = next(u for u in found if u.sentence.startswith("Once started"))
    assert lead.has_code and "--port INTEGER" in lead.block  # not a title beside a bare block
    answer = extractive(
        Mode.QUESTION,
        Request("which port does it use and how do I change the port?", [source(1, SERVE)]),
        flat_idf,
        DEFAULT.answer,
    ).text
    assert "-p, --port INTEGER" in answer


FTS_INTRO = """Full-text search lets a table be searched by its words. To set up full-text search
for a table, you need to create a virtual table. The search index must then be populated with the
table's text. A table configured for full-text search shows a search box. Full-text search for a
table is detected automatically."""
FTS_BY_HAND = """To enable full-text search for a table called items, run this SQL:

```sql
CREATE VIRTUAL TABLE "items_fts" USING FTS4 (name, description, content="items");
```
"""


def test_an_answer_of_descriptions_brings_the_how_to_code_of_a_lower_source() -> None:
    answer = extractive(
        Mode.QUESTION,
        Request(
            "how do I enable full-text search for a table?",
            [source(1, FTS_INTRO), source(2, FTS_BY_HAND)],
        ),
        flat_idf,
        DEFAULT.answer,
    ).text
    assert "CREATE VIRTUAL TABLE" in answer
    assert answer.startswith("Full-text search lets")  # the first source still leads


PUBLISH = """# Publishing

## Publishing to Fly

Fly is a Docker-compatible hosting platform with data centers close to your users: Fly runs
your app on Fly machines. You can deploy instances to Fly using the publish-fly plugin, which
talks to the Fly API for you.

```
pip install publish-fly
publish fly mydatabase.db --app="my-app"
```

Consult the publish-fly README for more details.

## Publishing to Vercel

A layer over AWS Lambda for scale-to-zero deployment. You can deploy instances with the
publish-vercel plugin.

```
pip install publish-vercel
publish vercel mydatabase.db --project my-project
```

Not every feature is supported: consult the publish-vercel README for more details.
"""


def test_a_correction_does_not_say_the_answer_it_corrects_again(tmp_path: Path, embedder) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "publish.md").write_text(PUBLISH)
    path = tmp_path / "lib.db"
    db = open_db(path)
    ingest(db, settings_for(path), [folder], lambda: embedder)
    db.close()
    conversation = App(settings_for(path)).conversation("fix")
    first = conversation.ask("what about Fly?")
    assert "publish fly mydatabase.db" in first.answer
    again = conversation.ask("I meant Vercel, not Fly")
    assert "publish vercel mydatabase.db" in again.answer
    assert "publish fly mydatabase.db" not in again.answer
    assert "Consult the publish-fly README" not in again.answer
