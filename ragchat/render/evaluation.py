"""`ragchat eval`'s tables: retrieval per strategy and group, answer quality, the not-covered
decision."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from rich.table import Table

from .. import render
from . import escape

if TYPE_CHECKING:  # annotations only: importing them would load eval for every view
    from ..evaluate.coverage import CoverageScore
    from ..evaluate.report import AnswerGroup, GroupSummary


def eval_tables(
    summaries: list[GroupSummary], metric_names: list[str], seconds: Mapping[str, float]
) -> None:
    """One table per group (overall, per tag value): strategies as rows, metrics as columns;
    the best value of each column in bold."""
    for position, summary in enumerate(summaries):
        overall = position == 0
        table = Table(title=escape(summary.name), title_justify="left", title_style="bold")
        table.add_column(
            "strategy", no_wrap=True
        )  # a strategy's name is never cut: it says what the row is
        table.add_column("turns", justify="right")
        for name in metric_names:
            table.add_column(name, justify="right")
        paired = any(row.versus for row in summary.rows)
        if paired:
            table.add_column("vs last-turn W/L/T", justify="right")
            table.add_column("p", justify="right")
        if overall:
            table.add_column("seconds", justify="right", style="dim")
            table.caption = (
                "W/L/T: turns whose nDCG@10 beats, trails, ties last-turn's; p: two-sided sign "
                "test. seconds: replay time (the first strategy also embeds the shared questions "
                "and replies)"
            )
        best = {
            name: max((row.metrics[name] for row in summary.rows if row.count), default=None)
            for name in metric_names
        }
        for row in summary.rows:
            cells = [
                f"[bold]{row.metrics[n]:.3f}[/]"
                if row.count and row.metrics[n] == best[n]
                else (f"{row.metrics[n]:.3f}" if row.count else "-")
                for n in metric_names
            ]
            extra = []
            if paired:
                versus = row.versus
                extra += (
                    [f"{versus.wins}/{versus.losses}/{versus.ties}", f"{versus.p_value:.3f}"]
                    if versus
                    else ["-", "-"]
                )
            if overall:
                extra.append(f"{seconds.get(row.strategy, 0):.1f}")
            table.add_row(escape(row.strategy), str(row.count), *cells, *extra)
        render.console.print(table)


def answer_tables(groups: list[AnswerGroup]) -> None:
    """Answer quality: one table per answered strategy, a row per group, F1 / recall / words for
    ragchat, lead and oracle; "yes" when ragchat closes a third of the lead-oracle gap."""
    if not groups:
        render.console.print("[dim]answer quality: no answered turn had a reference[/]")
        return
    for strategy in dict.fromkeys(g.strategy for g in groups):
        table = Table(
            title=f"answer quality: {escape(strategy)}", title_justify="left", title_style="bold"
        )
        table.add_column("group")
        table.add_column("turns", justify="right")
        for system in ("ragchat", "lead", "oracle"):
            table.add_column(f"{system}\nF1 / R / words", justify="right")
        table.add_column("1/3 of\nthe gap", justify="right")
        for group in (g for g in groups if g.strategy == strategy):
            cells = [f"{row.f1:.3f} / {row.recall:.3f} / {row.words:.0f}" for row in group.rows]
            table.add_row(
                escape(group.name),
                str(group.rows[0].count),
                *cells,
                "yes" if group.closes_a_third else "no",
            )
        table.caption = (
            "content words, stemmed, against the reference; lead: the top chunk's first words, "
            "as many as ragchat's answer; oracle: greedy best sentences of the same chunks"
        )
        render.console.print(table)


def coverage_line(score: CoverageScore) -> None:
    """`eval --unanswerable`: how the not-covered decision did."""
    render.console.print(
        "[bold]Not covered[/] (the documents do not answer it): precision "
        f"{score.precision:.2f}, recall {score.recall:.2f} — fired on {score.caught} of "
        f"{score.unanswerable} unanswerable turns and on {score.false_alarms} of "
        f"{score.answerable} answerable ones (ragchat strategy)",
        soft_wrap=True,
    )


def model_requests(prompt_chars: list[int]) -> None:
    """`eval --llm`: how many requests the model had and their prompts' mean size."""
    mean = sum(prompt_chars) / len(prompt_chars)
    render.console.print(
        f"[dim]model requests: {len(prompt_chars)}, prompt {mean:.0f} characters "
        f"(~{mean / 4:.0f} tokens) on average[/]"
    )


def rows_written(count: int, path: Path) -> None:
    render.console.print(f"[dim]{count} scored turn(s) written to {escape(str(path))}[/]")
