"""What a new-user trial on never-used documentation (issue 30, datasette's docs) found in the
extractive answer: a lead-in whose full stop a web address pushed out, an answer of descriptions
beside a lower source's how-to code, and a correction that said the corrected answer again."""

from __future__ import annotations

from pathlib import Path

from helpers import library_app, pick

from ragchat.answer import units
from ragchat.params import DEFAULT

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
    answer = pick("which port does it use and how do I change the port?", [SERVE])
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
    answer = pick("how do I enable full-text search for a table?", [FTS_INTRO, FTS_BY_HAND])
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
    app = library_app(tmp_path, {"publish.md": PUBLISH}, embedder)
    conversation = app.conversation("fix")
    first = conversation.ask("what about Fly?")
    assert "publish fly mydatabase.db" in first.answer
    again = conversation.ask("I meant Vercel, not Fly")
    assert "publish vercel mydatabase.db" in again.answer
    assert "publish fly mydatabase.db" not in again.answer
    assert "Consult the publish-fly README" not in again.answer
    app.close()
