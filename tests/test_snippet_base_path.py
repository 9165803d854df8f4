"""A snippet named relative to the `base_path` of mkdocs' `pymdownx.snippets` is read (issue 28,
family 1: includes): odmantic's pages include `--8<-- "modeling/compound_index.py"`, which lives in
docs/examples_src, the base path its mkdocs.yml names. The config is read for that key only, and
the file still only when the ingest's walk would read it."""

from __future__ import annotations

from pathlib import Path

from helpers import settings_for

from ragchat.ingest.includes import snippet_bases
from ragchat.ingest.pipeline import ingest
from ragchat.store.db import open_db

PAGE = """# Indexes

An index over two fields together is declared in the model's config:

```python
--8<-- "modeling/compound_index.py"
```
"""
CODE = 'model_config = {"indexes": lambda: [Index(Product.name, Product.stock)]}\n'


def _project(tmp_path: Path, config: str) -> Path:
    project = tmp_path / "project"
    (project / "docs" / "examples_src" / "modeling").mkdir(parents=True)
    (project / "docs" / "examples_src" / "modeling" / "compound_index.py").write_text(CODE)
    (project / "docs" / "indexes.md").write_text(PAGE)
    (project / "mkdocs.yml").write_text(config)
    return project


def _indexed(project: Path, tmp_path: Path, embedder) -> str:
    path = tmp_path / "lib.db"
    db = open_db(path)
    ingest(db, settings_for(path), [project / "docs"], lambda: embedder)
    text = "\n".join(row[0] for row in db.execute("SELECT text FROM chunks"))
    db.close()
    return text


CONFIG = """site_name: Shop
theme:
  name: material
markdown_extensions:
  - admonition
  - pymdownx.snippets:
      base_path: docs/examples_src
      check_paths: true # fail when a snippet is not found
  - pymdownx.superfences
"""


def test_a_snippet_under_the_configured_base_path_is_read(tmp_path: Path, embedder) -> None:
    project = _project(tmp_path, CONFIG)
    text = _indexed(project, tmp_path, embedder)  # the user ingests docs/; mkdocs.yml is above
    assert "Index(Product.name, Product.stock)" in text
    assert "not in the library" not in text


def test_base_path_forms(tmp_path: Path) -> None:
    for config, expected in (
        (CONFIG, ["docs/examples_src"]),
        (
            "markdown_extensions:\n  pymdownx.snippets:\n    base_path: ['snips', \"docs\"]\n",
            ["snips", "docs"],
        ),
        (
            "markdown_extensions:\n  - pymdownx.snippets:\n      base_path:\n"
            "        - snips\n        - other # shared parts\n  - toc\n",
            ["snips", "other"],
        ),
        ("markdown_extensions:\n  - pymdownx.snippets\n  - toc\n", []),  # no base path named
        ("markdown_extensions:\n  - pymdownx.snippets:\n      check_paths: true\n", []),
        ("base_path: nowhere\n", []),  # not the snippets extension's option
    ):
        folder = tmp_path / f"p{len(list(tmp_path.iterdir()))}"
        (folder / "docs").mkdir(parents=True)
        (folder / "mkdocs.yml").write_text(config)
        assert snippet_bases(folder / "docs") == [folder / e for e in expected], config


def test_a_config_that_is_no_regular_file_names_no_base_path(tmp_path: Path) -> None:
    import os

    (tmp_path / "docs").mkdir()
    os.mkfifo(tmp_path / "mkdocs.yml")  # read, it would block the ingest
    assert snippet_bases(tmp_path / "docs") == []
    (tmp_path / "mkdocs.yml").unlink()
    (tmp_path / "mkdocs.yml").write_text(CONFIG + "#" * (300 * 1024))  # too large: not read
    assert snippet_bases(tmp_path / "docs") == []


def test_the_base_path_reads_nothing_the_walk_leaves_out(tmp_path: Path, embedder) -> None:
    project = _project(tmp_path, CONFIG.replace("docs/examples_src", "private"))
    (project / "private" / "modeling").mkdir(parents=True)
    (project / "private" / "modeling" / "compound_index.py").write_text("TOKEN = 'AKIA-SECRET'\n")
    (project / "docs" / "examples_src" / "modeling" / "compound_index.py").unlink()
    text = _indexed(project, tmp_path, embedder)  # private/ is outside the folder ingested
    assert "AKIA-SECRET" not in text
    assert "not in the library" in text
