"""Static-site template tags in Markdown, read as the published page shows them.

Hugo shortcodes (`{{< name args >}}`, `{{% name args %}}`, closed by `{{< /name >}}`) and Jekyll's
Liquid tags (`{% name args %}`) are instructions to the site generator: a reader of the page never
sees them. Outside code fences:

- a tag alone on its line opens or closes a block: an admonition's name (`note`, `warning`,
  ...) becomes its title line, a `title`/`name`/`label`/`header` argument (or a lone quoted one)
  becomes a lead-in line, anything else leaves only the block's content (tabs, steps, columns);
- Liquid's `{% highlight LANG %}` ... `{% endhighlight %}` is a code fence, `{% raw %}` goes;
- a tag inside a line is its target where it names one (`{{< relref "page" >}}` in a link), else
  nothing; an escaped tag (`{{</* name */>}}`) is shown as written, unescaped.

Inside fences everything stays as written: there a tag is what the page teaches.
"""

from __future__ import annotations

import re

from .sphinx import ADMONITION_TITLES

# the bounds keep the scan linear: a tag's inside has no braces and at most 500 characters
_HUGO = re.compile(r"\{\{([<%])(?!/\*)\s*(/|)\s*([\w./-]*)([^{}]{0,500}?)\s*[>%]\}\}")
_ESCAPED = re.compile(r"\{\{([<%])/\*\s*([^{}]{0,500}?)\s*\*/([>%])\}\}")
_LIQUID = re.compile(r"\{%-?\s*(\w*)([^{}%]{0,500}?)-?%\}")
_RAW = re.compile(r"\{%-?\s*(?:end)?raw\s*-?%\}")
_CODE_SPAN = re.compile(r"(`+[^`]*`+)")
_FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
_NAMED = re.compile(r"""\b(?:title|name|label|header)\s*=\s*(?:"([^"]*)"|'([^']*)')""")
_QUOTED = re.compile(r"""^\s*(?:"([^"]*)"|'([^']*)')\s*$""")
_REFERENCE = frozenset({"ref", "relref", "link"})  # tags whose argument is a link target
_HIGHLIGHT = "{% highlight %}"  # the fence state of a Liquid highlight block
_LIQUID_CLOSERS = frozenset({"endhighlight", "endraw", "endcomment", "endcapture"})


def read_template_tags(text: str, liquid: bool) -> str:
    """`text` with its site-generator tags replaced by what a reader of the page sees. Liquid is
    read only where `liquid` says the page is Jekyll's (it has front matter: Jekyll processes no
    other page), so a page that teaches a template language keeps its `{% tags %}`."""
    if "{{<" not in text and "{{%" not in text and not (liquid and "{%" in text):
        return text
    out: list[str] = []
    fence = ""
    skipping = False  # inside a Liquid {% comment %}
    for line in text.split("\n"):
        stripped = line.strip()
        if fence == _HIGHLIGHT:
            closed = _LIQUID.fullmatch(stripped)
            if closed and closed.group(1) == "endhighlight":
                out.append(line[: len(line) - len(line.lstrip())] + "```")
                fence = ""
            else:
                out.append(line)
            continue
        if fence:
            if liquid and _RAW.fullmatch(stripped):
                continue
            out.append(_unescape(_RAW.sub("", line) if liquid else line))
            if stripped.startswith(fence) and not stripped.strip(fence[0]):
                fence = ""
            continue
        if match := _FENCE.match(line):
            fence = match.group(1)
            out.append(line)
            continue
        tag = _LIQUID.fullmatch(stripped) if liquid else None
        if skipping:
            skipping = not (tag and tag.group(1) == "endcomment")
            continue
        if tag and tag.group(1) == "comment":
            skipping = True
            continue
        if tag and tag.group(1) == "highlight":
            language = (tag.group(2).split() or [""])[0]
            out.append(line[: len(line) - len(line.lstrip())] + "```" + language)
            fence = _HIGHLIGHT
            continue
        hugo = _HUGO.fullmatch(stripped)
        if hugo or tag:
            out.extend(_block_tag(hugo, tag))
            continue
        out.append(_inline_tags(line, liquid))
    return "\n".join(out)


def _block_tag(hugo: re.Match[str] | None, liquid: re.Match[str] | None) -> list[str]:
    """The lines a tag alone on its line becomes: a title or lead-in line, or none."""
    if hugo:
        closing, name, arguments = hugo.group(2), hugo.group(3).lower(), hugo.group(4)
    else:
        assert liquid is not None
        name, arguments = liquid.group(1).lower(), liquid.group(2)
        closing = "/" if name.startswith("end") or name in _LIQUID_CLOSERS else ""
    if closing:
        return [""]
    title = _title(arguments)
    if name in ADMONITION_TITLES:
        return ["", title or ADMONITION_TITLES[name], ""]
    return ["", title, ""] if title else [""]


def _title(arguments: str) -> str:
    if match := _NAMED.search(arguments):
        return match.group(1) if match.group(1) is not None else match.group(2)
    if match := _QUOTED.match(arguments):
        return match.group(1) if match.group(1) is not None else match.group(2)
    return ""


def _inline_tags(line: str, liquid: bool) -> str:
    """Tags inside a line read, code spans (`...`) left as written."""
    parts = _CODE_SPAN.split(line)
    for i in range(0, len(parts), 2):  # the even parts are outside code spans
        part = _HUGO.sub(_inline_hugo, parts[i])
        parts[i] = _unescape(_LIQUID.sub("", part) if liquid else part)
    return "".join(parts)


def _inline_hugo(match: re.Match[str]) -> str:
    name, arguments = match.group(3).lower(), match.group(4)
    if match.group(2) or name not in _REFERENCE:
        return ""
    quoted = re.search(r"""["']([^"']*)["']""", arguments)
    return quoted.group(1) if quoted else arguments.strip()


def _unescape(line: str) -> str:
    return _ESCAPED.sub(lambda m: f"{{{{{m.group(1)} {m.group(2)} {m.group(3)}}}}}", line)
