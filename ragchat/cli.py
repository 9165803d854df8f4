"""The typer app: each command parses, calls the library, renders. Errors become one line."""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Optional

import click
import typer
from typer.core import TyperGroup

from .config import load_settings
from .errors import RagchatError, SessionError

if TYPE_CHECKING:
    from .app import App

# Each command imports what it needs when it runs (start-up time): the model, sqlite, rich and
# the Ollama client are not loaded for `--help`, and `config`, `sessions`, `inspect` never load the model.


class RagchatGroup(TyperGroup):
    """Turns ragchat errors (and unexpected ones) into `Error: ...` and exit 1, unless
    RAGCHAT_DEBUG=1 asks for the traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, typer.TyperException,  # typer >= 0.2x vendors its own click
                click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except KeyboardInterrupt:
            from . import render

            render.error("interrupted")
            raise typer.Exit(130) from None
        except Exception as exc:  # noqa: BLE001 - the single place where errors meet the user
            if os.environ.get("RAGCHAT_DEBUG") == "1":
                raise
            message = str(exc) if isinstance(exc, RagchatError) else _unexpected(exc)
            from . import render

            render.error(message)
            raise typer.Exit(1) from None


def _unexpected(exc: Exception) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"unexpected {type(exc).__name__}{place}: {exc} (RAGCHAT_DEBUG=1 shows the traceback)"


app = typer.Typer(
    cls=RagchatGroup, add_completion=False, no_args_is_help=True, rich_markup_mode=None,
    help="Chat with your own documents; follow-up questions included.",
)

DbOption = Annotated[Optional[Path], typer.Option("--db", help="Database file (default .ragchat/ragchat.db; env RAGCHAT_DB).")]


def make_app(**overrides: Any) -> App:
    from .app import App

    settings, origins = load_settings(overrides)
    return App(settings, origins)


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files and folders to ingest (recursive).")],
    reembed: Annotated[bool, typer.Option(help="Re-embed every chunk with the configured model.")] = False,
    prune: Annotated[bool, typer.Option(help="Remove documents whose files are gone.")] = False,
    follow_symlinks: Annotated[bool, typer.Option("--follow-symlinks", help="Follow symlinks that lead outside "
                                                  "the given paths too (by default they are skipped).")] = False,
    db: DbOption = None,
) -> None:
    """Ingest documents (.md .txt .rst .html .pdf): chunk, embed, index. Unchanged files are skipped."""
    from . import render
    from .embed import load_embedder
    from .ingest.pipeline import ingest as run_ingest

    ctx = make_app(db=db)
    # re-embedding is how a model change is done, so it must not trip the model check
    loader = (lambda: load_embedder(ctx.settings)) if reembed else (lambda: ctx.embedder)
    with render.IngestProgress() as progress:
        report = run_ingest(ctx.db, ctx.settings, paths, loader, reembed_all=reembed,
                            prune_missing=prune, follow_symlinks=follow_symlinks, progress=progress)
    render.ingest_report(report)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for.")],
    k: Annotated[Optional[int], typer.Option("-k", "--k", min=1, help="How many chunks (default: top_k).")] = None,
    mode: Annotated[str, typer.Option(help="hybrid | vector | fts")] = "hybrid",
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")] = False,
    db: DbOption = None,
) -> None:
    """Search the library once, without a conversation."""
    from . import render
    from .search.hybrid import SearchRequest, search as run_search

    if mode not in {"hybrid", "vector", "fts"}:
        raise typer.BadParameter("mode must be hybrid, vector or fts", param_hint="--mode")
    ctx = make_app(db=db)
    ctx.require_library()
    embedder = ctx.embedder if mode != "fts" else None
    request = SearchRequest(query, query, k=k or ctx.settings.top_k, mode=mode)  # type: ignore[arg-type]
    hits = run_search(ctx.db, embedder, ctx.settings, request)
    render.search_hits(hits, as_json)


SessionOption = Annotated[Optional[str], typer.Option("--session", "-s", help="Session name (default: the latest).")]


@app.command()
def ask(
    question: Annotated[str, typer.Argument(help="The question (a follow-up is understood in its session).")],
    session: Annotated[str, typer.Option("--session", "-s", help="Session to continue or start.")] = "default",
    new: Annotated[bool, typer.Option("--new", help="Start the session over (forget its messages).")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the turn's trace as JSON instead.")] = False,
    db: DbOption = None,
) -> None:
    """Ask one question, non-interactively; the turn is saved in the session."""
    from . import render
    from .conversation.turn import EMPTY_QUESTION
    from .store import sessions

    if not question.strip():  # before opening anything or asking Ollama: the error is the only line
        raise RagchatError(EMPTY_QUESTION)
    ctx = make_app(db=db)
    ctx.require_library()
    if new:
        sessions.clear_session(ctx.db, session)
    problem = ctx.backend_problem()
    if problem and not as_json and ctx.settings.ollama != "on":  # with "on", each fallback says why
        render.console.print(f"[dim]({render.escape(problem)}: heuristic reformulation, extractive answers)[/]",
                             soft_wrap=True)
    conversation = ctx.conversation(session, on_notice=render.notice if not as_json else lambda m: None)
    streaming = not as_json and problem is None
    printer = render.StreamPrinter()
    result = conversation.ask(question, on_token=printer if streaming else None)
    printer.close()
    if as_json:
        message = sessions.message_by_id(ctx.db, result.assistant_message_id)
        render.json_lines([render.inspect_data(result.lineage, result.assistant_message_id, result.turn,
                                               message.content if message else result.answer)])
        return
    render.turn(result, streamed=streaming and result.answer_mode == "llm")


inspect_app = typer.Typer(help="Explain what a turn did: reformulation, plan, every chunk's ranks and boosts.",
                          no_args_is_help=True)
app.add_typer(inspect_app, name="inspect")


def _show_turn(ctx: App, session: str | None, number: int | None, as_json: bool) -> None:
    from . import render

    name = ctx.session_name(session)
    chosen = ctx.turn(name, number)
    data = render.inspect_data(chosen.lineage, chosen.message_id, chosen.number, chosen.answer)
    data["session"] = name
    render.json_lines([data]) if as_json else render.inspect_view(data)


@inspect_app.command("last-turn")
def inspect_last_turn(session: SessionOption = None, as_json: Annotated[bool, typer.Option("--json")] = False,
                      db: DbOption = None) -> None:
    """The trace of the last turn of a session."""
    _show_turn(make_app(db=db), session, None, as_json)


@inspect_app.command("turn")
def inspect_turn(number: Annotated[int, typer.Argument(help="Turn number, from 1.")], session: SessionOption = None,
                 as_json: Annotated[bool, typer.Option("--json")] = False, db: DbOption = None) -> None:
    """The trace of turn N of a session."""
    _show_turn(make_app(db=db), session, number, as_json)


@app.command("sessions")
def list_sessions(db: DbOption = None) -> None:
    """List sessions with their number of turns and last activity."""
    from . import render
    from .store import sessions

    render.sessions_table(sessions.sessions(make_app(db=db).db))


@app.command()
def chat(
    session: Annotated[str, typer.Option("--session", "-s", help="Session to resume or start.")] = "default",
    db: DbOption = None,
) -> None:
    """Chat interactively (resumes the session; /help lists commands; Ctrl-D exits)."""
    from .repl import Repl

    Repl(make_app(db=db), session).run()


@app.command()
def config(db: DbOption = None) -> None:
    """Show the effective settings and where each value came from."""
    from . import render

    ctx = make_app(db=db)
    render.config_table(ctx.settings, ctx.origins)


@app.command("eval")
def eval_command(
    conversations: Annotated[Path, typer.Argument(help="Conversation set: JSONL, one item a line.")],
    corpus: Annotated[Path, typer.Option("--corpus", help="Folder with the set's documents.")],
    strategies: Annotated[Optional[str], typer.Option(help="Comma-separated: ragchat, last-turn, full-history, "
        "prev-turn, rewrite, ragchat-no-anchor, ragchat-no-keywords, ragchat-no-window.")] = None,
    k: Annotated[str, typer.Option("--k", help="Recall cut-offs, comma-separated.")] = "5,10",
    out: Annotated[Optional[Path], typer.Option("--out", help="Write one JSON line per scored turn and strategy.")] = None,
    group: Annotated[Optional[list[str]], typer.Option(help="Extra breakdown TAG=V1,V2 (repeatable).")] = None,
    depth: Annotated[int, typer.Option(min=1, help="Chunks retrieved per turn for scoring.")] = 20,
    llm: Annotated[bool, typer.Option("--llm", help="Reformulate with Ollama when it is reachable.")] = False,
    db: Annotated[Optional[Path], typer.Option("--db", help="Database to ingest into and reuse (default: a temporary one).")] = None,
    answers: Annotated[bool, typer.Option("--answers", help="Answer the scored turns (ragchat strategies) and score "
        "the answers against the reference, with the lead and oracle extractive baselines.")] = False,
) -> None:
    """Replay conversations through the chat's turn pipeline and score retrieval per strategy
    (with --answers, the answers too)."""
    from . import evaluate, render

    items = evaluate.load_conversations(conversations)
    chosen = evaluate.choose_strategies(strategies.split(",") if strategies else None, items)
    ks, groups = evaluate.parse_ks(k), [evaluate.parse_group(g) for g in group or []]
    with evaluate.database_path(db) as path:
        ctx = make_app(db=path, ollama="auto" if llm else "off")
        try:
            with render.IngestProgress() as progress:
                report = evaluate.prepare_library(ctx.db, ctx.settings, corpus, lambda: ctx.embedder, progress)
            render.ingest_report(report)
            missing = evaluate.missing_gold(ctx.db, items)
            if missing:
                render.notice(f"{len(missing)} gold file(s) not in the corpus (e.g. {missing[0]})")
            if llm and ctx.backend_problem():
                render.notice(f"{ctx.backend_problem()}: heuristic reformulation")
            with render.EvalProgress() as bar:
                run = evaluate.replay(ctx.db, ctx.embedder, ctx.settings, items, chosen, ks=ks, depth=depth,
                                      backend=ctx.backend if llm else None, on_progress=bar.update, answers=answers)
        finally:
            ctx.close()
    render.eval_tables(evaluate.summarize(run, groups), run.metric_names, run.seconds)
    if answers:
        render.answer_tables(evaluate.summarize_answers(run, groups))
    if out:
        evaluate.write_rows(out, run)
        render.console.print(f"[dim]{len(run.turns)} scored turn(s) written to {render.escape(str(out))}[/]")


def main() -> None:
    sys.exit(app())
