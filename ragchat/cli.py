"""The typer app: each command parses, calls the library, renders. Errors become one line."""

from __future__ import annotations

import contextlib
import os
import shlex
import sys
import traceback
from collections.abc import Sequence
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import click
import sqlite_utils.utils
import typer
from typer.core import TyperCommand, TyperGroup

from .config import CONFIG_FILE, MAX_NEIGHBOURS, UntrustedProjectConfig, load_settings, trust_folder
from .errors import RagchatError
from .names import readable_text
from .params import DEFAULT, with_values

if TYPE_CHECKING:
    from .app import App

# Each command imports what it needs when it runs (start-up time): the model, the store, rich
# and the Ollama client are not loaded for `--help`, and `config`, `sessions`, `inspect` never
# load the model. (sqlite-utils and the parameters are loaded with the package and its settings.)


class RagchatGroup(TyperGroup):
    """Turns ragchat errors (and unexpected ones) into `Error: ...` and exit 1, unless
    RAGCHAT_DEBUG=1 asks for the traceback."""

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (
            typer.Exit,
            typer.Abort,
            typer.TyperException,  # typer >= 0.2x vendors its own click
            click.exceptions.Exit,
            click.exceptions.Abort,
            click.ClickException,
        ):
            raise
        except KeyboardInterrupt:
            from . import render

            render.error("interrupted")
            raise typer.Exit(130) from None
        except Exception as exc:
            if os.environ.get("RAGCHAT_DEBUG") == "1":
                raise
            message = (
                str(exc)
                if isinstance(exc, RagchatError)
                else _database_error(exc) or _unexpected(exc)
            )
            from . import render

            render.error(message)
            raise typer.Exit(1) from None


def _database_error(exc: Exception) -> str | None:
    """A SQLite error (read-only, disk full, damaged) as a sentence about the database, or None."""
    if not isinstance(exc, sqlite_utils.utils.sqlite3.Error):
        return None
    from .store.db import explain

    return explain(exc)


def _unexpected(exc: Exception) -> str:
    where = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    place = f" at {Path(where.filename).name}:{where.lineno}" if where else ""
    return f"unexpected {type(exc).__name__}{place}: {exc} (RAGCHAT_DEBUG=1 shows the traceback)"


class RagchatCommand(TyperCommand):
    """Help that reads like a finished tool: arguments by their metavar (QUERY, PATH...), without
    `{query}` braces or `<list[Path]>` type tags; options carry their own metavars."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if param.param_type_name == "argument":
                pieces.append(
                    _argument_name(param) if param.required else f"[{_argument_name(param)}]"
                )
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        params = self.get_params(ctx)
        arguments = [
            (_argument_name(p), getattr(p, "help", None) or "")
            for p in params
            if p.param_type_name == "argument"
        ]
        options = [
            record
            for p in params
            if p.param_type_name == "option" and (record := p.get_help_record(ctx))
        ]
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def _argument_name(param: Any) -> str:
    return param.metavar or param.name.upper() + ("..." if param.nargs != 1 else "")


def _neighbours(value: int | None) -> int | None:
    """How many chunks a search returns: 1 to MAX_NEIGHBOURS (instead of `min=1`, whose
    help reads `[x>=1]`)."""
    if value is not None and not 1 <= value <= MAX_NEIGHBOURS:
        shown = str(value) if len(str(value)) <= 20 else str(value)[:17] + "..."
        raise typer.BadParameter(f"must be from 1 to {MAX_NEIGHBOURS}, not {shown}")
    return value


def _version(value: bool) -> None:
    if value:
        # here: reading the installed metadata costs only `--version`
        from importlib.metadata import version

        print(f"ragchat {version('ragchat')}")
        raise typer.Exit()


app = typer.Typer(
    cls=RagchatGroup,
    add_completion=False,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Chat with your own documents; follow-up questions included.",
)


_OPEN_APPS: list[App] = []  # the services the running command made (make_app)


def _close_apps() -> None:
    """When a command ends, however it ends: its databases close (run in-process, as the tests
    and the MCP server's host do, every command used to leave its connection open)."""
    while _OPEN_APPS:
        _OPEN_APPS.pop().close()


@app.callback()
def _main(
    ctx: typer.Context,
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """Chat with your own documents; follow-up questions included."""
    ctx.call_on_close(_close_apps)


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        metavar="PATH",
        show_default=False,
        help="Database file (default: the nearest .ragchat/ folder, else your per-user library; "
        "env RAGCHAT_DB).",
    ),
]


InOption = Annotated[
    list[str] | None,
    typer.Option(
        "--in",
        metavar="NAME",
        show_default=False,
        help="Search only this collection (repeatable; `all`: every one).",
    ),
]


def make_app(*, create: bool = False, **overrides: Any) -> App:
    """The services for a command; only ingest (and eval's own library) pass create=True."""
    from .app import App

    try:
        settings, origins = load_settings(overrides)
    except UntrustedProjectConfig as exc:
        if not _confirm_folder(exc):
            raise
        trust_folder(exc.folder)
        settings, origins = load_settings(overrides)
    services = App(settings, origins, create=create)
    _OPEN_APPS.append(services)  # closed with the command (_close_apps)
    return services


def _require_writable(ctx: App) -> None:
    """Before a command that writes does any work: a read-only database says so, and why."""
    from .store.db import access_mode, explain

    if access_mode(Path(ctx.settings.db)) != "rw":
        raise RagchatError(
            explain(PermissionError("attempt to write a readonly database"), ctx.settings.db)
        )


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stderr.isatty()


def _confirm_folder(exc: UntrustedProjectConfig) -> bool:
    """Asked once per folder, in a terminal only (a script gets the error, which says how
    to allow it)."""
    if not _interactive():
        return False
    from . import render

    render.notice(
        f"{exc.folder / CONFIG_FILE} asks to send your data elsewhere: {'; '.join(exc.reasons)}"
    )
    from .text import printable  # a plain prompt: no markup to escape, only terminal control

    return typer.confirm(
        f"Allow it for {printable(str(exc.folder))} (remembered)?", default=False, err=True
    )


@app.command(cls=RagchatCommand, short_help="Add files and folders to the library.")
def ingest(
    paths: Annotated[
        list[Path],
        typer.Argument(
            metavar="PATH...", help="Files and folders to ingest (recursive).", show_default=False
        ),
    ],
    reembed: Annotated[
        bool, typer.Option("--reembed", help="Re-embed every chunk with the configured model.")
    ] = False,
    prune: Annotated[
        bool,
        typer.Option(
            "--prune",
            help="Remove documents whose files are gone or are now "
            "left out (ignore files, --exclude, hidden).",
        ),
    ] = False,
    exclude: Annotated[
        list[str] | None,
        typer.Option(
            "--exclude",
            metavar="GLOB",
            show_default=False,
            help="Leave out what matches this gitignore-style glob, relative to the folder "
            "(repeatable); remembered with the folder for later ingests.",
        ),
    ] = None,
    hidden: Annotated[
        bool, typer.Option("--hidden", help="Read hidden files and folders too.")
    ] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every file left out, and why.")
    ] = False,
    follow_symlinks: Annotated[
        bool,
        typer.Option(
            "--follow-symlinks",
            help="Follow symlinks that lead outside "
            "the given paths too (by default they are skipped).",
        ),
    ] = False,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            show_default=False,
            help="Name the folder's collection (default: the folder's name).",
        ),
    ] = None,
    watch: Annotated[
        bool,
        typer.Option(
            "--watch",
            help="Then keep the library current as files change, until Ctrl-C.",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Ingest documents (.md .markdown .txt .rst .html .htm .pdf .docx): chunk, embed, index.
    Unchanged files are skipped; .gitignore, .ignore and .ragchatignore files in the folders are
    honoured. Each folder is a collection. The only command that creates a library."""
    from . import render
    from .embed import load_embedder
    from .ingest.pipeline import ingest as run_ingest
    from .render import listings, progress
    from .store import library

    ctx = make_app(db=db, create=True)
    _require_writable(ctx)
    # re-embedding is how a model change is done, so it must not trip the model check
    loader = (lambda: load_embedder(ctx.settings)) if reembed else (lambda: ctx.embedder)
    before = library.ingest_marks(ctx.db)
    try:
        with progress.IngestProgress() as bar:
            report = run_ingest(
                ctx.db,
                ctx.settings,
                paths,
                loader,
                reembed_all=reembed,
                prune_missing=prune,
                follow_symlinks=follow_symlinks,
                progress=bar,
                exclude=exclude or (),
                hidden=hidden,
                name=readable_text(name) if name is not None else None,
                # the notes' advice goes into this library: the --db given, as given
                command="ragchat ingest" + (f" --db {shlex.quote(str(db))}" if db else ""),
            )
    except Exception as exc:
        problem = _database_error(exc)
        if problem is None:
            raise
        raise RagchatError(f"{problem}; {_documents_written(ctx.db, before)}") from None
    listings.ingest_report(report, ctx.settings.db, verbose=verbose)
    if report.interrupted:  # the summary says what was kept; the exit is a Ctrl-C's, as everywhere
        render.error("interrupted")
        raise typer.Exit(130)
    if watch:
        _watch(ctx, paths, exclude or (), hidden, follow_symlinks)


def _watch(
    ctx: App, paths: list[Path], exclude: Sequence[str], hidden: bool, follow_symlinks: bool
) -> None:
    from .render import listings
    from .watch import watch_library

    listings.watching()
    try:
        watch_library(
            ctx.db,
            ctx.settings,
            paths,
            lambda: ctx.embedder,
            on_change=listings.watch_line,
            exclude=exclude,
            hidden=hidden,
            follow_symlinks=follow_symlinks,
        )
    except KeyboardInterrupt:
        pass
    listings.stopped_watching()


def _documents_written(db: Any, before: dict[int, tuple[str, str]]) -> str:
    """Which documents this ingest wrote before it failed (each is written whole or not at all)."""
    from .store import library

    try:
        after = library.ingest_marks(db)
    except Exception:
        return "the documents written before it are kept"
    written = sorted(
        path for doc_id, (when, path) in after.items() if before.get(doc_id, ("", ""))[0] != when
    )
    if not written:
        return "no document of this run got in (those already in the library are kept)"
    from .text import some_of

    return (
        f"{len(written)} document(s) of this run got in whole ({some_of(written, 5)}), the rest "
        "did not (the same ingest again skips what is in)"
    )


class SearchMode(StrEnum):
    hybrid = "hybrid"
    vector = "vector"
    fts = "fts"


@app.command(cls=RagchatCommand, short_help="Search the library once, without a conversation.")
def search(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What to look for.", show_default=False)
    ],
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            "--k",
            callback=_neighbours,
            metavar="N",
            help="How many chunks (default: the top_k setting).",
        ),
    ] = None,
    mode: Annotated[
        SearchMode,
        typer.Option(
            metavar="[hybrid|vector|fts]",
            help="Which index: both fused, vectors only, or full-text only.",
        ),
    ] = SearchMode.hybrid,
    as_json: Annotated[bool, typer.Option("--json", help="JSON lines instead of a table.")] = False,
    within: InOption = None,
    db: DbOption = None,
) -> None:
    """Search the library once, without a conversation."""
    from . import catalog, render
    from .render import listings
    from .search.hybrid import SearchRequest
    from .search.hybrid import search as run_search

    query = readable_text(query)
    if not query.strip():  # like `ask ""`: the error is the only line
        raise RagchatError("empty query: type what to look for")
    ctx = make_app(db=db)
    ctx.require_library()
    embedder = ctx.embedder if mode is not SearchMode.fts else None
    scope = catalog.scope_of(ctx.db, [readable_text(name) for name in within or []])
    request = SearchRequest(query, query, k=k or ctx.settings.top_k, mode=mode.value, within=scope)
    hits = run_search(ctx.db, embedder, ctx.settings, request)
    listings.search_hits(hits, as_json)
    if not as_json and mode is not SearchMode.fts:
        from .conversation.coverage import never_mentioned, not_covered, search_evidence

        one_piece = getattr(embedder, "one_piece", None)
        evidence = search_evidence(ctx.db, query, hits, ctx.settings.params.coverage, one_piece)
        if not hits or not_covered(evidence, ctx.settings.params.coverage):
            render.notice(
                "weak matches: the documents may not cover this (best similarity "
                f"{evidence.best:.2f}, rare terms found {evidence.rare:.0%})"
            )
        if named := never_mentioned(evidence.unknown):
            render.notice(named)


@app.command(cls=RagchatCommand, short_help="Print the whole section a chunk belongs to.")
def show(
    chunk: Annotated[
        int,
        typer.Argument(
            metavar="CHUNK",
            show_default=False,
            help="A chunk id (as `search --json`, `inspect` and `/open` show it).",
        ),
    ],
    db: DbOption = None,
) -> None:
    """Print the whole section behind a chunk, with its path, title and pages (paged when long)."""
    from .render import listings
    from .store import library

    shown = str(chunk) if len(str(chunk)) <= 20 else str(chunk)[:17] + "..."
    if not 0 < chunk < 2**63:  # beyond SQLite's integers no chunk can have that id
        raise RagchatError(f"no chunk {shown}: chunk ids are positive numbers below 2^63")
    found = library.section(make_app(db=db).db, chunk)
    if found is None:
        raise RagchatError(f"no chunk {shown} in the library (it may have been re-ingested since)")
    listings.section_view(found)


SessionOption = Annotated[
    str | None,
    typer.Option("--session", "-s", metavar="NAME", help="Session name (default: the latest)."),
]


@app.command(cls=RagchatCommand, short_help="Ask one question; the turn is saved in its session.")
def ask(
    question: Annotated[
        str,
        typer.Argument(
            metavar="QUESTION",
            show_default=False,
            help="The question (a follow-up is understood in its session).",
        ),
    ],
    session: Annotated[
        str, typer.Option("--session", "-s", metavar="NAME", help="Session to continue or start.")
    ] = "default",
    new: Annotated[
        bool, typer.Option("--new", help="Start the session over (forget its messages).")
    ] = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the turn's trace as JSON instead.")
    ] = False,
    within: InOption = None,
    db: DbOption = None,
) -> None:
    """Ask one question, non-interactively; the turn is saved in the session (with its scope:
    `--in` is remembered for the session's next questions)."""
    from . import catalog, render, runner
    from .conversation.turn import EMPTY_QUESTION
    from .render import turns
    from .store import sessions

    question, session = readable_text(question), readable_text(session)
    if not question.strip():  # before opening anything or asking Ollama: the error is the only line
        raise RagchatError(EMPTY_QUESTION)
    sessions.check_session_name(session)
    ctx = make_app(db=db)
    ctx.require_library()
    _require_writable(ctx)
    names = [readable_text(name) for name in within or []]
    catalog.collection_ids(ctx.db, names)  # an unknown name: an error before anything changes
    if new:
        sessions.clear_session(ctx.db, session)
    if within:
        catalog.set_session_scope(ctx.db, session, names)
    problem = ctx.backend_problem()
    # "on": each fallback says why; "off": the user chose it, nothing to say
    if problem and not as_json and ctx.settings.ollama == "auto":
        turns.without_model(problem)
    # one question: no warm-up request, so whether the model is loaded is not known
    result = runner.run_turn(
        runner.open_conversation(ctx, session, quiet=as_json),
        question,
        quiet=as_json,
        show_thinking=ctx.settings.ollama_show_thinking,
    )
    if as_json:
        message = sessions.message_by_id(ctx.db, result.assistant_message_id)
        answer = message.content if message else result.answer
        render.json_lines(
            [result.lineage.trace(result.assistant_message_id, result.lineage.turn, answer)]
        )


inspect_app = typer.Typer(
    cls=RagchatGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Explain what a turn did: reformulation, plan, every chunk's ranks and boosts.",
)
app.add_typer(
    inspect_app, name="inspect", short_help="Explain what a turn did (ranks, boosts, plan)."
)


def _show_turn(ctx: App, session: str | None, number: int | None, as_json: bool) -> None:
    from . import render
    from .render import trace

    name = ctx.session_name(session)
    chosen = ctx.turn(name, number)
    data = chosen.lineage.trace(chosen.message_id, chosen.number, chosen.answer)
    data["session"] = name
    render.json_lines([data]) if as_json else trace.inspect_view(data)


@inspect_app.command("last-turn", cls=RagchatCommand)
def inspect_last_turn(
    session: SessionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The trace as one JSON line.")] = False,
    db: DbOption = None,
) -> None:
    """The trace of the last turn of a session."""
    _show_turn(make_app(db=db), session, None, as_json)


@inspect_app.command("turn", cls=RagchatCommand)
def inspect_turn(
    number: Annotated[
        int, typer.Argument(metavar="N", help="Turn number, from 1.", show_default=False)
    ],
    session: SessionOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="The trace as one JSON line.")] = False,
    db: DbOption = None,
) -> None:
    """The trace of turn N of a session."""
    _show_turn(make_app(db=db), session, number, as_json)


sessions_app = typer.Typer(
    cls=RagchatGroup,
    rich_markup_mode=None,
    invoke_without_command=True,
    help="List sessions (newest first); `rm` and `rename` manage them.",
)
app.add_typer(sessions_app, name="sessions", short_help="List, rename or remove sessions.")


@sessions_app.callback(invoke_without_command=True)
def list_sessions(
    ctx: typer.Context,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON line per session instead of a table.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List sessions: turns, last activity, first question."""
    from . import render
    from .render import listings
    from .store import sessions

    ctx.obj = db  # `ragchat sessions --db X rm NAME` means the same database as `rm NAME --db X`
    if ctx.invoked_subcommand is None:
        rows = sessions.sessions(make_app(db=db).db)
        render.json_lines(rows) if as_json else listings.sessions_table(rows)


@sessions_app.command("rm", cls=RagchatCommand)
def remove_session(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The session to delete.", show_default=False)
    ],
    db: DbOption = None,
) -> None:
    """Delete a session and its messages."""
    from . import render
    from .store import sessions

    turns = sessions.delete_session(make_app(db=db or ctx.obj).db, name)
    render.said(f"Removed session {name} ({turns} turn(s)).")


@sessions_app.command("rename", cls=RagchatCommand)
def rename_session(
    ctx: typer.Context,
    old: Annotated[
        str, typer.Argument(metavar="OLD", help="The session's name.", show_default=False)
    ],
    new: Annotated[str, typer.Argument(metavar="NEW", help="Its new name.", show_default=False)],
    db: DbOption = None,
) -> None:
    """Rename a session (the new name must be free)."""
    from . import render
    from .store import sessions

    sessions.rename_session(make_app(db=db or ctx.obj).db, old, new)
    render.said(f"Renamed session {old} to {new}.")


documents_app = typer.Typer(
    cls=RagchatGroup,
    rich_markup_mode=None,
    invoke_without_command=True,
    help="List the library's documents; `rm` removes some.",
)
app.add_typer(documents_app, name="documents", short_help="List or remove documents.")


@documents_app.callback(invoke_without_command=True)
def list_documents(
    ctx: typer.Context,
    within: InOption = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON line per document instead of a table.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List documents: collection, path, title, chunks, pages, when ingested."""
    from . import catalog
    from .render import listings

    ctx.obj = db
    if ctx.invoked_subcommand is None:
        rows = catalog.documents(make_app(db=db).db, [readable_text(n) for n in within or []])
        listings.documents_table(rows, as_json)


@documents_app.command("rm", cls=RagchatCommand)
def remove_documents(
    ctx: typer.Context,
    patterns: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH|GLOB...",
            show_default=False,
            help="Paths as listed (or collection:path, or the file's absolute path); globs match "
            "too (quote them).",
        ),
    ],
    db: DbOption = None,
) -> None:
    """Remove documents from the library.

    Their chunks, vectors and index rows go with them. The files stay; a later ingest of their
    folder adds them back unless --exclude leaves them out."""
    from . import catalog
    from .render import listings

    app_ = make_app(db=db or ctx.obj)
    _require_writable(app_)
    listings.removed(catalog.remove_documents(app_.db, [readable_text(p) for p in patterns]))


collections_app = typer.Typer(
    cls=RagchatGroup,
    rich_markup_mode=None,
    invoke_without_command=True,
    help="List collections (one per ingested folder); `rename` and `rm` manage them.",
)
app.add_typer(collections_app, name="collections", short_help="List, rename or remove collections.")


@collections_app.callback(invoke_without_command=True)
def list_collections(
    ctx: typer.Context,
    as_json: Annotated[
        bool, typer.Option("--json", help="One JSON line per collection instead of a table.")
    ] = False,
    db: DbOption = None,
) -> None:
    """List collections: name, folder, documents, chunks."""
    from .render import listings
    from .store import library

    ctx.obj = db
    if ctx.invoked_subcommand is None:
        listings.collections_table(library.collections(make_app(db=db).db), as_json)


@collections_app.command("rename", cls=RagchatCommand)
def rename_collection(
    ctx: typer.Context,
    old: Annotated[str, typer.Argument(metavar="OLD", help="Its name.", show_default=False)],
    new: Annotated[str, typer.Argument(metavar="NEW", help="Its new name.", show_default=False)],
    db: DbOption = None,
) -> None:
    """Rename a collection.

    The new name must be free; sessions scoped to it follow."""
    from . import render
    from .store import library

    app_ = make_app(db=db or ctx.obj)
    _require_writable(app_)
    library.rename_collection(app_.db, readable_text(old), readable_text(new))
    render.said(f"Renamed collection {old} to {new}.")


@collections_app.command("rm", cls=RagchatCommand)
def remove_collection(
    ctx: typer.Context,
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="The collection to remove.", show_default=False)
    ],
    db: DbOption = None,
) -> None:
    """Remove a collection and every document in it.

    The files stay."""
    from . import catalog, render
    from .render import listings

    app_ = make_app(db=db or ctx.obj)
    _require_writable(app_)
    done = catalog.remove_collection(app_.db, readable_text(name))
    listings.removed(done)
    render.said(f"Removed collection {name}.")


@app.command(cls=RagchatCommand, short_help="Write a session as Markdown.")
def export(
    session: Annotated[
        str, typer.Argument(metavar="SESSION", help="The session to export.", show_default=False)
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            metavar="FILE",
            show_default=False,
            help="Write to FILE instead of standard output.",
        ),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite FILE if it exists.")] = False,
    db: DbOption = None,
) -> None:
    """Write a session as Markdown: each question, its answer and its sources
    (paths, sections, pages)."""
    from . import render
    from .export import session_markdown, write_private

    if output is not None and (output.exists() or output.is_symlink()) and not force:
        raise RagchatError(f"{output} exists; add --force to overwrite it")
    ctx = make_app(db=db)
    text = session_markdown(ctx, session)
    if output is None:
        sys.stdout.write(text)
        return
    write_private(output, text, force=force)
    render.said(f"Wrote {output} ({len(ctx.turns(session))} turn(s)).")


@app.command(cls=RagchatCommand, short_help="Chat interactively (/help lists the commands).")
def chat(
    session: Annotated[
        str, typer.Option("--session", "-s", metavar="NAME", help="Session to resume or start.")
    ] = "default",
    within: InOption = None,
    db: DbOption = None,
) -> None:
    """Chat interactively: resumes the session; /help lists commands; Ctrl-D exits.
    With piped input, each line is one question."""
    from .repl import Repl

    piped = None if sys.stdin.isatty() else sys.stdin  # a script: one question a line, no prompt
    if piped is not None and hasattr(piped, "reconfigure"):
        piped.reconfigure(
            errors="replace"
        )  # bytes that are not UTF-8 are text to answer, not a crash
    ctx = make_app(db=db)
    _require_writable(ctx)
    if within:
        from . import catalog

        catalog.set_session_scope(ctx.db, session, [readable_text(name) for name in within])
    Repl(ctx, session, lines=piped).run()


@app.command("mcp", cls=RagchatCommand, short_help="Serve the library to MCP clients (stdio).")
def mcp_command(
    allow_write: Annotated[
        bool,
        typer.Option("--allow-write", help="Also offer tools that ingest and remove documents."),
    ] = False,
    db: DbOption = None,
) -> None:
    """Serve the library over stdio to an MCP client (an agent, an editor, Claude Desktop): tools
    search, ask (follow-ups per session), documents and show. Read-only unless --allow-write."""
    from .mcp_server import build_server

    ctx = make_app(db=db)
    if allow_write:
        _require_writable(ctx)
    try:
        build_server(ctx, allow_write=allow_write).run("stdio")
    finally:
        ctx.close()


@app.command(
    cls=RagchatCommand, short_help="Show the settings, where each came from, the database."
)
def config(db: DbOption = None) -> None:
    """Show the effective settings, where each value came from, and which database is in use."""
    from .render import listings

    ctx = make_app(db=db)
    listings.config_table(ctx.settings, ctx.origins)


@app.command(
    cls=RagchatCommand, short_help="Check the library for damage; --repair fixes what it can."
)
def doctor(
    repair: Annotated[
        bool,
        typer.Option(
            "--repair",
            help="Rebuild what can be rebuilt (the full-text index "
            "from the chunks, the schema version).",
        ),
    ] = False,
    db: DbOption = None,
) -> None:
    """Check the library: integrity_check, schema version, that chunks, full-text rows and vectors
    agree; and the Ollama setup: the server, the model (pulled or not), its context. Say what is
    wrong and how to recover. Exit status 1 while a problem remains (Ollama's only with
    `ollama = on`)."""
    from . import doctor as checks
    from .render import listings
    from .store.db import open_db

    ctx = make_app(db=db)
    settings = ctx.settings
    with contextlib.closing(
        open_db(settings.db, create=False, migrate=False, check=False)
    ) as handle:
        findings = checks.diagnose(handle, settings.db)
        if repair and any(f.repair for f in findings):
            listings.repaired(checks.repair(handle, findings))
            findings = checks.diagnose(handle, settings.db)
    # the model: a problem with `ollama = on`; with `auto` a note (answers are extractive then)
    model_findings, working = (
        checks.ollama(ctx.backend, settings.ollama_num_ctx) if ctx.backend else ([], "")
    )
    listings.doctor_report(model_findings, working, settings.ollama, findings, settings.db)
    if findings or (model_findings and settings.ollama == "on"):
        raise typer.Exit(1)


@app.command("eval", cls=RagchatCommand, short_help="Score retrieval on a set of conversations.")
def eval_command(
    conversations: Annotated[
        Path,
        typer.Argument(
            metavar="CONVERSATIONS.jsonl",
            show_default=False,
            help="Conversation set: JSONL, one item a line.",
        ),
    ],
    corpus: Annotated[
        Path,
        typer.Option(
            "--corpus", metavar="DIR", show_default=False, help="Folder with the set's documents."
        ),
    ],
    strategies: Annotated[
        str | None,
        typer.Option(
            metavar="LIST",
            help="Comma-separated: ragchat, last-turn, full-history, prev-turn, rewrite, "
            "ragchat-no-anchor, ragchat-no-keywords, ragchat-no-window, ragchat-no-fusion; "
            "replayed models: ragchat+recorded, ragchat+echo, ragchat+drift, ragchat+flip, "
            "reply-alone (the recorded rewrite searched alone).",
        ),
    ] = None,
    k: Annotated[
        str, typer.Option("--k", metavar="LIST", help="Recall cut-offs, comma-separated.")
    ] = "5,10",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", metavar="FILE", help="Write one JSON line per scored turn and strategy."
        ),
    ] = None,
    group: Annotated[
        list[str] | None, typer.Option(metavar="TAG=V1,V2", help="Extra breakdown (repeatable).")
    ] = None,
    depth: Annotated[
        int,
        typer.Option(
            callback=_neighbours, metavar="N", help="Chunks retrieved per turn for scoring."
        ),
    ] = 20,
    llm: Annotated[
        bool,
        typer.Option(
            "--llm",
            help="Also replay with your Ollama model (strategy ragchat+ollama, "
            "next to ragchat without a model).",
        ),
    ] = False,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            metavar="PATH",
            help="Database to ingest into and reuse (default: a temporary one).",
        ),
    ] = None,
    answers: Annotated[
        bool,
        typer.Option(
            "--answers",
            help="Answer the scored turns (ragchat strategies) and score "
            "the answers against the reference, with the lead and oracle extractive baselines.",
        ),
    ] = False,
    unanswerable: Annotated[
        Path | None,
        typer.Option(
            "--unanswerable",
            metavar="FILE",
            show_default=False,
            help="Items whose last turn the corpus does not answer (same format, no gold): "
            "report the precision and recall of 'the documents do not cover this' against the "
            "ragchat strategy's scored turns.",
        ),
    ] = None,
    param: Annotated[
        list[str] | None,
        typer.Option(
            "--param",
            metavar="NAME=VALUE",
            show_default=False,
            help="Run with another value of a tuning parameter of ragchat/params.py, "
            "e.g. followup.decay=0.5 (repeatable).",
        ),
    ] = None,
) -> None:
    """Replay conversations through the chat's turn pipeline and score retrieval per strategy
    (with --answers, the answers too)."""
    from . import evaluate, render
    from .render import evaluation, listings, progress

    params = with_values(DEFAULT, param or [])  # checked before anything is read or ingested
    items = evaluate.load_conversations(conversations)
    unanswered = evaluate.load_conversations(unanswerable, scored=False) if unanswerable else None
    chosen = evaluate.choose_strategies(
        strategies.split(",") if strategies else None, items, llm=llm
    )
    ks, groups = evaluate.parse_ks(k), [evaluate.parse_group(g) for g in group or []]
    with evaluate.database_path(db) as path:
        ctx = make_app(db=path, ollama="auto" if llm else "off", create=True)
        ctx.settings = ctx.settings.replace(params=params)
        try:
            if llm and ctx.backend_problem():
                raise RagchatError(f"--llm: {ctx.backend_problem()}")
            with progress.IngestProgress() as ingesting:
                report = evaluate.prepare_library(
                    ctx.db, ctx.settings, corpus, lambda: ctx.embedder, ingesting
                )
            listings.ingest_report(report)
            missing = evaluate.missing_gold(ctx.db, items)
            if missing:
                render.notice(f"{len(missing)} gold file(s) not in the corpus (e.g. {missing[0]})")
            with progress.EvalProgress() as bar:
                run = evaluate.replay(
                    ctx.db,
                    ctx.embedder,
                    ctx.settings,
                    items,
                    chosen,
                    ks=ks,
                    depth=depth,
                    backend=ctx.backend if llm else None,
                    on_progress=bar.update,
                    answers=answers,
                )
            covered = (
                evaluate.coverage_score(
                    run.turns,
                    evaluate.replay_unanswerable(ctx.db, ctx.embedder, ctx.settings, unanswered),
                )
                if unanswered
                else None
            )
        finally:
            ctx.close()
    evaluation.eval_tables(evaluate.summarize(run, groups), run.metric_names, run.seconds)
    if run.prompt_chars:
        evaluation.model_requests(run.prompt_chars)
    if answers:
        evaluation.answer_tables(evaluate.summarize_answers(run, groups))
    if covered is not None:
        evaluation.coverage_line(covered)
    if out:
        evaluate.write_rows(out, run)
        evaluation.rows_written(len(run.turns), out)


def main() -> None:
    sys.exit(app())
