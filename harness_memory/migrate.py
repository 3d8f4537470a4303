"""Apply the schema migrations in ``harness_memory.migrations`` (the top-level ``migrations/``)."""

from __future__ import annotations

import time
from typing import Any

from .backend import Backend
from .errors import DatabaseTooNewError, SchemaError
from .migrations import steps

__all__ = ["migrate", "applied_migrations", "SCHEMA_VERSION"]

SCHEMA_VERSION = len(steps())


def applied_migrations(backend: Backend) -> list[str]:
    if not backend.table_exists("schema_migrations"):
        return []
    return [r[0] for r in backend.execute("SELECT name FROM schema_migrations ORDER BY version")]


def migrate(backend: Backend) -> list[str]:
    """Bring the schema up to date; return the names of the steps applied now.

    Raises :class:`DatabaseTooNewError` if the database records a step this version does
    not know (it was written by a newer harness-memory).
    """
    known = backend.migration_steps()
    names = [n for n, _ in known]
    # opening an up-to-date database is a read: no write lock unless a migration is pending
    if backend.table_exists("schema_migrations"):
        done = applied_migrations(backend)
        if done == names:
            return []
    backend.before_migrations()  # e.g. PostgreSQL's vector extension
    with backend.write() as c:
        c.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            "version INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, applied_at DOUBLE PRECISION NOT NULL)"
        )
    done = applied_migrations(backend)
    unknown = [n for n in done if n not in names]
    if unknown:
        raise DatabaseTooNewError(
            f"{backend.describe()} was written by a newer harness-memory (unknown migrations: {', '.join(unknown)}); "
            "upgrade harness-memory to open it"
        )
    if done != names[: len(done)]:
        raise SchemaError(f"{backend.describe()}: applied migrations {done} are not a prefix of {names}")
    applied: list[str] = []
    if not done:
        # a new database: every step in one transaction (one lock and one commit instead of one
        # per step; on PostgreSQL each commit waits for its WAL flush). Another process creating
        # the same database at once takes the lock first or second; second, it finds the steps done.
        with backend.write() as c:
            if c.execute("SELECT COUNT(*) FROM schema_migrations").fetchone()[0] == 0:
                for version, (name, sql) in enumerate(known, start=1):
                    _apply(backend, c, version, name, sql)
                    applied.append(name)
                return applied
        done = applied_migrations(backend)
    for version, (name, sql) in enumerate(known, start=1):
        if name in done:
            continue
        with backend.write() as c:
            # Re-check inside the lock: another process may have migrated meanwhile.
            if c.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                continue
            _apply(backend, c, version, name, sql)
        applied.append(name)
    return applied


def _apply(backend: Backend, c: Any, version: int, name: str, sql: str) -> None:
    """One step's statements and its record, inside the caller's write transaction."""
    for stmt in backend.split_script(sql):
        c.execute(stmt)
    c.execute("INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, ?)", (version, name, time.time()))
