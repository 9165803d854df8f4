"""Static-site template tags (Hugo shortcodes, Jekyll's Liquid) read as the published page shows
them: never raw in a chunk, titles kept, code and pages that teach a template language untouched."""

from __future__ import annotations

from pathlib import Path

from helpers import chunk_document
from typer.testing import CliRunner

from ragchat.cli import app
from ragchat.ingest.loaders import load_document
from ragchat.store.db import open_db

HUGO_PAGE = """\
---
title: "Managing groups"
weight: 10
---
# Managing groups

Read the [pyproject section]({{< relref "pyproject#packages" >}} "Packages") first.

{{% note %}}
Groups are not installed by default.
{{% /note %}}

{{< tabs tabTotal="2" tabName1="[dependency-groups]" >}}
{{< tab tabID="a" title="PEP 735" >}}
```toml
[dependency-groups]
test = ["pytest"]
```
{{< /tab >}}
{{< /tabs >}}

A link is written `{{< relref "page" >}}`; escaped, the page shows {{</* relref "page" */>}}.

```text
{{< relref "inside-code" >}}
```
"""

JEKYLL_PAGE = """\
---
title: Deploying
---
## Deploying

{% comment %}
Draft: do not publish this paragraph.
{% endcomment %}
{% include warning.html %}

{% highlight shell %}
deploy --now
{% endhighlight %}

Wrap template code in `{% raw %}` when the page shows it.
"""


def text_of(path: Path) -> str:
    return "\n\n".join(chunk.text for chunk in chunk_document(load_document(path)))


def test_hugo_shortcodes_become_what_the_page_shows(tmp_path: Path) -> None:
    page = tmp_path / "groups.md"
    page.write_text(HUGO_PAGE, encoding="utf-8")
    text = text_of(page)
    assert "Read the pyproject section first." in text  # the link's text; the relref is gone
    assert "Note\n\nGroups are not installed by default." in text  # an admonition keeps its title
    assert "PEP 735\n\n```toml\n[dependency-groups]" in text  # a tab's title leads its content
    assert "tabTotal" not in text and "{{% note" not in text and "{{< /tab" not in text
    assert 'A link is written {{< relref "page" >}}; escaped, the page shows' in text
    assert 'shows {{< relref "page" >}}.' in text  # the escaped form, as the page prints it
    assert '```text\n{{< relref "inside-code" >}}\n```' in text  # code is what the page teaches


def test_liquid_tags_read_on_jekyll_pages_only(tmp_path: Path) -> None:
    page = tmp_path / "deploy.md"
    page.write_text(JEKYLL_PAGE, encoding="utf-8")
    text = text_of(page)
    assert "```shell\ndeploy --now\n```" in text  # {% highlight %} is a code block
    assert "Draft" not in text and "include warning" not in text and "endhighlight" not in text
    assert "Wrap template code in {% raw %} when" in text  # a code span stays as written

    teaching = tmp_path / "templates.md"  # no front matter: Jekyll would not read it either
    teaching.write_text("# Blocks\n\nA child template overrides\n\n{% block body %}\n", "utf-8")
    assert "{% block body %}" in text_of(teaching)


def test_ingested_hugo_site_has_no_raw_tags(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "groups.md").write_text(HUGO_PAGE, encoding="utf-8")
    (docs / "deploy.md").write_text(JEKYLL_PAGE, encoding="utf-8")
    db = tmp_path / "lib.db"
    result = CliRunner().invoke(app, ["ingest", str(docs), "--db", str(db)])
    assert result.exit_code == 0, result.output
    library = open_db(db, create=False)
    texts = [row[0] for row in library.execute("SELECT text FROM chunks").fetchall()]
    library.close()
    raw = [t for t in texts if "{{% " in t or "tabTotal" in t or "{% comment" in t]
    assert texts and not raw
