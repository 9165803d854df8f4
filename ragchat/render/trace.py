"""`inspect`: what a turn did, from its trace (`Lineage.trace`): the reformulation, the plan, the
query lists, every chunk's ranks and boosts, the prompt, the answer mode and the coverage."""

from __future__ import annotations

from rich.console import Group
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from .. import render
from ..text import printable, snippet
from . import ECHO_LIMIT, escape, place, rank_cell, show, width


def prompt_summary(prompt: dict) -> str:
    """What a model's answer prompt held and what its budget left out, in one line."""
    parts = [f"{prompt.get('prompt_chars', 0):,} characters"]
    if prompt.get("prompt_tokens"):
        parts[0] += f" = {prompt['prompt_tokens']:,} tokens (counted by the server)"
    if prompt.get("num_ctx"):
        parts.append(f"context {prompt['num_ctx']:,} tokens")
    given = ", ".join(str(n) for n in prompt.get("sources_given", [])) or "none"
    parts.append(f"sources given: {given}")
    if prompt.get("sources_left_out"):
        left = ", ".join(str(n) for n in prompt["sources_left_out"])
        parts.append(f"left out: {left}")
    if prompt.get("source_cut"):
        parts.append(f"source {prompt['source_cut']} cut to fit")
    parts.append(f"history: {prompt.get('history_turns', 0)} exchange(s)")
    if prompt.get("history_left_out"):
        parts[-1] += f", {prompt['history_left_out']} older left out (no room)"
    if prompt.get("thinking_chars"):
        parts.append(f"thinking: {prompt['thinking_chars']:,} characters, hidden")
    return "; ".join(parts)


def _hanging(rows: list[tuple[str, str]]) -> Table:
    """`  name            value` lines whose values wrap under themselves, not under the name."""
    grid = Table.grid(padding=(0, 1))
    grid.add_column(width=17, no_wrap=True)
    grid.add_column(ratio=1)
    for name, value in rows:
        grid.add_row(f"  {name}", value)
    return grid


def _inspect_rows(chunks: list[dict]) -> list:
    """The chunk table as fixed-width lines, each chunk's `document › section` on its own line
    below its figures: it reads at 80 columns and the columns never move."""
    idw = max([5, *(len(str(c["chunk_id"])) for c in chunks)])
    header = (
        f"{'#':>2} {'chunk':>{idw}} {'vec':>3} {'fts':>3} {'sim':>5} {'rrf':>5} "
        f"{'boost':>5} {'score':>5} marks"
    )
    rows: list = [Text(header, style="bold"), Text("─" * len(header), style="dim")]
    for c in chunks:
        marks = "".join(
            m
            for m, on in (
                ("A", c["anchored"]),
                ("R", c["reused"]),
                ("C", c["used"]),
                ("N", c.get("seen") is False),
                ("B", c.get("beside") is not None),
            )
            if on
        )
        sim = "-" if c["similarity"] is None else f"{c['similarity']:.3f}"
        rows.append(
            Text(
                f"{c['rank']:>2} {c['chunk_id']:>{idw}} {rank_cell(c['vector_rank']):>3} "
                f"{rank_cell(c['fts_rank']):>3} {sim:>5} {c['rrf'] or 0:>5.3f} {c['boost']:>5.2f} "
                f"{c['score']:>5.3f} {marks}"
            )
        )
        heading = (c["heading"] or "").replace(" > ", " › ")
        rows.append(
            Padding(
                place(c["document"], heading, width() - 4, c.get("page_start"), c.get("page_end")),
                (0, 0, 0, 3),
            )
        )
    return rows


def inspect_view(data: dict) -> None:
    r = data["reformulation"]
    render.console.print(f"[bold]Turn {data['turn']}[/] (message {data['message_id']})")
    render.console.print(
        f"[bold]question[/]        {escape(snippet(str(data['question']), 2 * ECHO_LIMIT))}",
        width=width(),
    )
    render.console.print(
        f"[bold]history window[/]  message ids {data['history_window'] or '(none)'}"
    )
    render.console.print(f"[bold]reformulation[/]   by {escape(str(r.get('reformulator')))}")
    keys = (
        "semantic_query",
        "keyword_query",
        "is_follow_up",
        "is_meta",
        "topic_shift",
        "reasoning",
        *(("model_query", "model_weight") if r.get("model_query") else ()),
    )
    show(_hanging([(key, escape(snippet(str(r.get(key)), 2 * ECHO_LIMIT))) for key in keys]))
    anchors = ", ".join(data["anchor_documents"]) or "(none)"
    render.console.print(f"[bold]plan[/]            {data['plan']}   anchors: {escape(anchors)}")
    if data.get("scope"):  # asked in some collections only
        scope = ", ".join(data["scope"])
        render.console.print(f"[bold]scope[/]           {escape(printable(scope))}", soft_wrap=True)
    own = r.get("question_weight", 1.0)
    render.console.print(
        f"[bold]context weight[/]  {data.get('context_weight', 0):.2f}  (the question's own "
        f"queries weigh {own:g})"
    )
    show(
        _hanging(
            [
                (
                    query["name"],
                    f"{query['weight']:.2f}  {escape(snippet(query['query'], 2 * ECHO_LIMIT))}"
                    + (
                        f"  (in {escape(printable(', '.join(query['in'])))})"
                        if query.get("in")
                        else ""
                    ),
                )
                for query in data.get("queries", [])
            ]
        )
    )
    for path in data["missing_anchors"]:
        render.console.print(f"  [yellow]anchor gone:[/] {escape(path)}")
    show(Group(*_inspect_rows(data["chunks"])))
    render.console.print(
        "[dim]marks: A anchored (boosted), R reused from the last turn, C cited by the answer"
        + (
            ", N not given to the model"
            if any(c.get("seen") is False for c in data["chunks"])
            else ""
        )
        + (
            ", B beside a better chunk of its section"
            if any(c.get("beside") is not None for c in data["chunks"])
            else ""
        )
        + "[/]"
    )
    if data.get("prompt"):
        render.console.print(
            f"[bold]model prompt[/]    {escape(prompt_summary(data['prompt']))}", width=width()
        )
    render.console.print(
        f"[bold]answer mode[/]     {data['answer_mode']}"
        + ("  (not covered)" if data["weak_match"] else "")
        + ("" if data.get("answered", True) else "  (unanswered: the answer never came)")
    )
    if data.get("coverage"):
        evidence = "  ".join(
            f"{key} {escape(', '.join(map(str, value)))}"
            if isinstance(value, list)
            else f"{key} {value:.2f}"
            for key, value in data["coverage"].items()
        )
        render.console.print(
            f"[bold]coverage[/]        {evidence}"
            + ("  -> not covered" if data["weak_match"] else "")
        )
    if data.get("correction"):
        render.console.print(
            "[bold]correction[/]      of the last question, as typed: "
            f"{escape(data['correction'])}",
            width=width(),
        )
    for message in data["notices"]:
        render.console.print(f"  [yellow]notice:[/] {escape(message)}")
