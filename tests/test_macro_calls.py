"""A line that is only a template macro's call is what the site writes there, not text (issue 28:
no raw template syntax reaches the index): odmantic's pages show their code through mkdocs-macros,
`{{ async_sync_snippet("engine", "create.py", hl_lines="12 19") }}`, which the library cannot
run; the line says what it makes instead, like an include the library does not hold. Calls in
code, MyST substitutions and text around a call stay as written."""

from __future__ import annotations

from ragchat.ingest.formats.markdown import parse_markdown

PAGE = """# Engine

To create an engine, pass it a client:

{{ async_sync_snippet("engine", "create.py", hl_lines="12 19") }}

  {{- nav_links() -}}

```jinja
{{ render_item(item) }}
```

The release is {{ version }} and {{ now() }} is inline.

{{ version }}
"""


def test_a_macro_call_line_says_what_it_makes() -> None:
    blocks = [b for b in parse_markdown(PAGE).blocks if isinstance(b, str)]
    text = "\n".join(blocks)
    assert "example: create.py, made by a site macro, not in the library" in blocks
    assert "example: nav_links(), made by a site macro, not in the library" in blocks
    assert "async_sync_snippet" not in text and "{{-" not in text
    assert "```jinja\n{{ render_item(item) }}\n```" in blocks  # code keeps every tag
    assert "The release is {{ version }} and {{ now() }} is inline." in blocks  # not a line's all
    assert "{{ version }}" in blocks  # a MyST substitution: no call
