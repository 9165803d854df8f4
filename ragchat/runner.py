"""One turn, run the same way from every front door (`ragchat ask` and the chat): notices shown as
they happen, a spinner until the model's first piece, the answer streamed as it comes (a thinking
model's reasoning too, when asked for), then how the question was understood and the sources.

Ctrl-C stops the spinner and the stream; the conversation stores the turn as cancelled and the
KeyboardInterrupt goes on to the front door (the chat says "cancelled" and goes on, a command
exits 130). The conversation stores every turn itself."""

from __future__ import annotations

from typing import TYPE_CHECKING

from . import render
from .render import turns

if TYPE_CHECKING:  # annotations only: the turn pipeline loads when a conversation is opened
    from .app import App
    from .conversation.models import TurnResult
    from .conversation.turn import Conversation


def open_conversation(app: App, session: str, *, quiet: bool = False) -> Conversation:
    """The session's conversation, its notices printed as they happen (`quiet`: not at all, for
    output a script reads)."""
    return app.conversation(session, on_notice=(lambda message: None) if quiet else render.notice)


def run_turn(
    conversation: Conversation,
    question: str,
    *,
    retry: str | None = None,
    quiet: bool = False,
    show_thinking: bool = False,
    warmed: bool = False,
) -> TurnResult:
    """Ask one question and show the turn (`quiet`: show nothing, only return it). `warmed`: a
    warm-up of the model was asked for, so the spinner can tell loading from thinking.
    `retry`: the chat's `/retry X` (see Conversation.ask)."""
    backend = None if quiet else conversation.backend_in_use()
    loaded = getattr(backend, "warmed", None) if warmed else None
    printer = turns.StreamPrinter(
        turns.Waiting(backend.model, loaded) if backend else None, markdown=True
    )
    conversation.on_thinking = printer.thinking if show_thinking and not quiet else None
    try:
        result = conversation.ask(
            question, on_token=printer if backend is not None else None, retry=retry
        )
    finally:
        printer.close()
    if not quiet:
        streamed = backend is not None and result.lineage.answer_mode in turns.MODEL_MODES
        turns.turn(result, streamed=streamed)
    return result
