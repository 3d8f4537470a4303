"""Every error harness-memory raises on purpose derives from :class:`HarnessMemoryError`.

Errors caused by bad input also derive from :class:`ValueError` (or :class:`LookupError`
for missing things), so callers can catch them either way. An error is raised before
anything is written: no call that raises leaves a partial row behind.
"""

from __future__ import annotations

__all__ = [
    "HarnessMemoryError",
    "InvalidInputError",
    "UnknownMemoryTypeError",
    "ContentTooLargeError",
    "MemoryNotFoundError",
    "SchemaError",
    "DatabaseTooNewError",
    "EmbedderError",
    "EmbedderMismatchError",
    "ImportFormatError",
    "ConfigurationError",
    "StorageError",
    "DatabaseOpenError",
    "DatabaseLockedError",
    "DatabaseReadOnlyError",
    "FileAccessError",
    "SummariserError",
]


class HarnessMemoryError(Exception):
    """Base class of every error raised by harness-memory."""


class InvalidInputError(HarnessMemoryError, ValueError):
    """An argument is malformed or out of range (empty content, importance > 1, ...)."""


class UnknownMemoryTypeError(InvalidInputError):
    """A memory type that is neither built in nor registered in the settings."""

    def __init__(self, name: str, known: list[str]):
        self.name = name
        self.known = sorted(known)
        super().__init__(
            f"unknown memory type {name!r}; known types: {', '.join(self.known)} "
            "(register more with HARNESS_MEMORY_EXTRA_TYPES or Settings(extra_types=...))"
        )


class ContentTooLargeError(InvalidInputError):
    """Content longer than the configured ``max_content_bytes``."""


class MemoryNotFoundError(HarnessMemoryError, LookupError):
    """No memory with that id (or it is not visible to the asking agent)."""


class SchemaError(HarnessMemoryError):
    """The database schema is unusable (corrupt migration record, missing extension...)."""


class DatabaseTooNewError(SchemaError):
    """The database was written by a newer harness-memory; refusing to touch it."""


class EmbedderError(HarnessMemoryError):
    """The embedder failed or returned unusable vectors (NaN, inf, wrong dimensions)."""


class EmbedderMismatchError(HarnessMemoryError):
    """The database's vectors were made by another embedder than the one configured."""


class ImportFormatError(InvalidInputError):
    """An export file (JSONL or MEMORY.md) that cannot be read; nothing was imported."""


class ConfigurationError(HarnessMemoryError, ValueError):
    """Invalid settings or an embedder name that cannot be resolved."""


class StorageError(HarnessMemoryError):
    """The database file or the file system refused an operation (not the caller's input)."""


class DatabaseOpenError(StorageError):
    """The database cannot be opened: not a SQLite database, a directory, unreadable, corrupt."""


class DatabaseLockedError(StorageError):
    """Another process held the database lock for longer than ``busy_timeout_ms``."""


class DatabaseReadOnlyError(StorageError):
    """The database (or its folder, where SQLite keeps the WAL) is read-only."""


class StoreClosedError(StorageError):
    """The store was closed (``close()`` or the end of its ``with`` block): open a new one to go on."""


class FileAccessError(StorageError, OSError):
    """An export or import file cannot be read or written (missing folder, permissions, ...).

    Also an :class:`OSError`, so callers that catch file-system errors keep working."""


class SummariserError(HarnessMemoryError):
    """A summariser or normaliser failed (unreachable endpoint, bad answer); nothing was stored from it.

    The store's own callers (reflect, consolidation, remember_normalised) fall back to the offline
    path with a warning instead of raising it."""
