"""The exceptions ragchat raises. The CLI turns any RagchatError into one `Error: ...` line."""

from __future__ import annotations


class RagchatError(Exception):
    """Base of every error a user may see; its message is one clear line."""


class ConfigError(RagchatError):
    """A configuration file or value is invalid."""


class StoreError(RagchatError):
    """The database cannot be opened or used (not SQLite, future schema, no extension support)."""


class LibraryMissing(StoreError):
    """A command that only reads found no database where it looked (only ingest creates one)."""


class ModelMismatchError(StoreError):
    """The database was built with another embedding model than the configured one."""


class EmbeddingError(RagchatError):
    """The embedding model cannot be found or loaded."""


class IngestError(RagchatError):
    """Ingest could not read anything at all."""


class UnreadableFile(RagchatError):
    """One file cannot be ingested; the message is the reason shown in the skipped list."""


class SessionError(RagchatError):
    """A session or turn asked for does not exist."""


class BackendUnavailable(RagchatError):
    """The LLM backend (Ollama) failed: down, slow, HTTP error, unknown model or garbage output.

    `reason` is a short phrase for the one-line fallback notice, e.g. "timed out after 20s".
    """

    def __init__(self, reason: str) -> None:
        super().__init__(f"Ollama unavailable: {reason}")
        self.reason = reason


class ReplyCut(BackendUnavailable):
    """A model's reply reached a limit (its total time or size): what came before it stands."""
