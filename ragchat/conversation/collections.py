"""Which collections a follow-up's context searches: the conversation's, unless the question names
another.

A library of several collections (one per ingested folder, named after it: `typer`, `click`,
`jinja`) holds a conversation in one of them at a time. The question's own lists search the whole
library (the turn's scope), but what the conversation adds to it (the context-expanded question,
the previous question with this one) searches only where the conversation stands: the
collections of the documents the last answer stood on. A question that names a collection
("same idea in click?", "and how does typer handle that?") asks there: the conversation's subject
is carried into the collection it names and the last answer's documents (in another one) are not
anchored; collection names then leave the carried queries (the old one's named the old place, not
the subject, and the new one's draws a query to the pages about that collection in general).
Collection names are the user's own identifiers, so none of this reads a language: a name counts
as a word of its own or leading a path or dotted identifier (`click/docs`, `@click.pass_context`),
not inside another word, path or name (`tutorial/click.md`, `click-completion`). A library of
one collection carries nothing.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace

from sqlite_utils import Database

from ..store import library
from ..store.library import Scope, StoredChunk
from ..text import words
from .searching import TurnSearch


@dataclass(frozen=True)
class Carried:
    """Where the conversation's context is searched this turn."""

    scope: Scope | None = None  # the collections the context lists search (None: the turn's own)
    moved: tuple[str, ...] = ()  # the collections the question takes the conversation to, none
    # of which held the last answer's documents (empty: it stays)
    subject_best: float | None = None  # a moved question's closeness without collection names
    unsaid: tuple[str, ...] = ()  # a moved question's: every collection's name, no subject word
    # of a carried query (the old one's named the old place; the new one's draws a query to the
    # pages about that collection in general)

    @property
    def names(self) -> tuple[str, ...]:
        return self.scope.names if self.scope is not None else ()


def _named(question: str, name: str) -> bool:
    """Whether the question says the collection's name as a word of its own, or leading a path or
    a dotted identifier of it (`click/docs/options.md`, `@click.pass_context`)."""
    pattern = rf"(?:(?<=@)|(?<![\w./:@-])){re.escape(name)}(?![\w-])"
    return re.search(pattern, question, re.IGNORECASE) is not None


def named_collections(question: str, names: Iterable[str]) -> list[str]:
    """The collection names the question says ("same idea in click?": click), in their order."""
    return [name for name in names if name.strip() and _named(question, name)]


def without_names(query: str, names: Iterable[str]) -> str:
    """The query without the given collection names said as words of their own ("same idea in
    click? (version, click)" -> "same idea in? (version)")."""
    for name in names:
        pattern = rf"(?<![\w./@:-]){re.escape(name)}(?:'s)?(?![\w/@-]|[.:]\w)"
        query = re.sub(pattern, " ", query, flags=re.IGNORECASE)
    query = re.sub(r"\s+([,?.!;:)])", r"\1", " ".join(query.split()))
    return re.sub(r"(?:,\s*)+(?=,|$)|^\s*,\s*", "", query).strip()


def carried(
    db: Database,
    question: str,
    anchor_chunks: dict[int, StoredChunk],
    within: Scope | None = None,
) -> Carried:
    """Where the context of a turn is searched: the collections the question names, else those
    the last answer's documents (`anchor_chunks`: any of their chunks) belong to; nothing when
    that is every collection the turn may search."""
    kept = set(within.names) if within is not None else None
    every = [c for c in library.collections(db) if kept is None or c.name in kept]
    if len(every) < 2:
        return Carried()
    standing = {chunk.collection for chunk in anchor_chunks.values()}
    named = named_collections(question, [c.name for c in every])
    wanted = set(named) or standing
    if not wanted or {c.name for c in every} <= wanted:
        return Carried()
    moved = tuple(named) if named and standing and not standing & set(named) else ()
    found = library.scope(db, [c.id for c in every if c.name in wanted])
    return Carried(found, moved, unsaid=tuple(c.name for c in every) if moved else ())


def asked_in(
    db: Database, question: str, within: Scope | None, standing: Collection[str]
) -> Scope | None:
    """The collections the question names among those the turn searches, when it names some but
    not all and the conversation stands nowhere else (`standing`: the collections of the last
    answer's documents, none before a first answer); else None. Such a question says where it
    asks ("how do I turn on tab completion for my click tool?"): only those collections' chunks
    take its places, so another collection's pages sharing its words (Typer's completion pages,
    Typer being built on Click) no longer push the named page's other sections out. A question
    that names another place than the conversation's moves it (`carried`) and is left as it was."""
    kept = set(within.names) if within is not None else None
    every = [c for c in library.collections(db) if kept is None or c.name in kept]
    named = set(named_collections(question, [c.name for c in every]))
    if not named or len(named) == len(every) or not set(standing) <= named:
        return None
    return library.scope(db, [c.id for c in every if c.name in named])


def weighed_alone(search: TurnSearch, question: str, found: Carried) -> Carried:
    """A moved question's closeness to the collection it names, without the collection names:
    said in a question, a collection's name draws its vector to the pages about that collection
    in general ("same idea in click?" comes 0.63 close to "Click Concepts"), so how well the
    question stands alone is read from its other words."""
    if not found.moved:
        return found
    rest = without_names(question, found.unsaid)
    if not words(rest):
        return replace(found, subject_best=0.0)
    similarity = search.vector(rest, within=found.scope).similarity
    return replace(found, subject_best=max(similarity.values(), default=0.0))
