"""Schema migrations as a user meets them (harness_memory/migrate.py): a fresh database gets every
step in order, an older one the steps it lacks (and only those), an up-to-date one nothing, and a
history that is not a prefix of this version's is refused naming what is wrong."""

from __future__ import annotations

import time

import pytest

from harness_memory import DatabaseTooNewError, MemoryStore
from harness_memory.errors import SchemaError
from harness_memory.migrate import SCHEMA_VERSION, applied_migrations, migrate
from harness_memory.migrations import steps
from harness_memory.sqlite_backend import SQLiteBackend

NAMES = [n for n, _ in steps()]


def test_a_fresh_database_gets_every_step_numbered_in_order(tmp_path):
    b = SQLiteBackend(tmp_path / "m.db")
    assert applied_migrations(b) == []
    before = time.time()
    assert migrate(b) == NAMES and len(NAMES) == SCHEMA_VERSION
    rows = b.execute("SELECT version, name, applied_at FROM schema_migrations ORDER BY version").fetchall()
    assert [(r[0], r[1]) for r in rows] == list(enumerate(NAMES, start=1))
    assert all(before - 1 <= r[2] <= time.time() + 1 for r in rows)
    assert migrate(b) == []  # up to date: nothing applied
    b.close()


def test_an_older_database_gets_only_the_steps_it_lacks(tmp_path):
    path = tmp_path / "old.db"
    b = SQLiteBackend(path)
    known = b.migration_steps()
    b.migration_steps = lambda: known[:-1]  # the version before the last step
    assert migrate(b) == NAMES[:-1]
    b.close()
    b = SQLiteBackend(path)
    try:
        assert migrate(b) == [NAMES[-1]]
        assert applied_migrations(b) == NAMES
        assert b.execute("SELECT version FROM schema_migrations WHERE name = ?", (NAMES[-1],)).fetchone()[0] == len(
            NAMES
        )
        assert migrate(b) == []
    finally:
        b.close()


def test_a_history_that_skips_a_step_is_refused(tmp_path):
    path = tmp_path / "gap.db"
    b = SQLiteBackend(path)
    migrate(b)
    with b.write() as c:
        c.execute("DELETE FROM schema_migrations WHERE name = ?", (NAMES[1],))
    with pytest.raises(SchemaError, match="not a prefix"):
        migrate(b)
    b.close()


def test_a_database_from_a_newer_version_names_the_unknown_steps(tmp_path):
    path = tmp_path / "new.db"
    with MemoryStore(path) as s:
        s._core.backend.execute(
            "INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, '0999_from_the_future', 0)"
        )
    with pytest.raises(DatabaseTooNewError, match="0999_from_the_future") as err:
        MemoryStore(path)
    assert "upgrade harness-memory" in str(err.value)


def test_an_up_to_date_database_opens_while_another_writer_holds_the_lock(tmp_path):
    from harness_memory.sqlite_backend import connect

    path = tmp_path / "busy.db"
    MemoryStore(path).close()
    holder = connect(path)
    holder.execute("BEGIN IMMEDIATE")  # another process is writing
    try:
        b = SQLiteBackend(path, busy_timeout_ms=100)
        assert migrate(b) == []  # a read: no write lock wanted
        b.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_every_unknown_step_of_a_newer_database_is_named(tmp_path):
    path = tmp_path / "newer.db"
    with MemoryStore(path) as s:
        for v, name in ((998, "0998_one"), (999, "0999_two")):
            s._core.backend.execute(
                "INSERT INTO schema_migrations(version, name, applied_at) VALUES (?, ?, 0)", (v, name)
            )
    with pytest.raises(DatabaseTooNewError, match="unknown migrations: 0998_one, 0999_two\\)"):
        MemoryStore(path)


def test_steps_another_process_applied_meanwhile_are_not_applied_again(tmp_path, monkeypatch):
    import harness_memory.migrate as m

    path = tmp_path / "race.db"
    b = SQLiteBackend(path)
    migrate(b)
    # this process read the history before another one finished migrating: it believes nothing is applied
    monkeypatch.setattr(m, "applied_migrations", lambda backend: [])
    assert migrate(b) == []  # each step is found applied under the lock and skipped
    monkeypatch.undo()
    assert applied_migrations(b) == NAMES
    b.close()


def test_a_new_database_is_migrated_in_one_transaction(db):
    """Every step of a new database commits together: a step that fails leaves no step applied
    (one by one, the steps before it would stay), and the next open starts again from nothing."""
    from harness_memory.backend import open_backend, parse_target

    b = open_backend(parse_target(db, "db"))
    try:
        known = b.migration_steps()
        b.migration_steps = lambda: [*known, ("9999_broken", "CREATE TABLE broken_step (")]
        with pytest.raises(b.DatabaseError):
            migrate(b)
        assert applied_migrations(b) == []
        assert not b.table_exists("memories")
        b.migration_steps = lambda: known
        assert migrate(b) == NAMES
        assert applied_migrations(b) == NAMES
    finally:
        b.close()
