from __future__ import annotations

import pytest

from harness_memory import DatabaseTooNewError, MemoryStore
from harness_memory.migrate import SCHEMA_VERSION, applied_migrations
from harness_memory.migrations import steps
from harness_memory.sqlite_backend import SQLiteBackend, connect


def test_connection_factory_loads_sqlite_vec_and_sets_pragmas(db_path):
    c = connect(db_path, busy_timeout_ms=1234)
    assert c.execute("SELECT vec_version()").fetchone()[0] == "v0.1.9"
    assert c.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert c.execute("PRAGMA foreign_keys").fetchone()[0] == 1
    assert c.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
    c.close()


def test_write_transactions_are_immediate(db_path):
    b = SQLiteBackend(db_path)
    other = connect(db_path, busy_timeout_ms=0)
    with b.write():
        # BEGIN IMMEDIATE took the write lock at once: another writer cannot start
        with pytest.raises(Exception, match="locked"):
            other.execute("BEGIN IMMEDIATE")
    other.execute("BEGIN IMMEDIATE")
    other.execute("ROLLBACK")
    b.close()
    other.close()


def test_write_rolls_back_on_error(db_path):
    b = SQLiteBackend(db_path)
    b.execute("CREATE TABLE t(x)")
    with pytest.raises(RuntimeError):
        with b.write() as c:
            c.execute("INSERT INTO t VALUES (1)")
            raise RuntimeError("boom")
    assert b.execute("SELECT COUNT(*) FROM t").fetchone()[0] == 0
    b.close()


def test_migrations_recorded_in_order_and_idempotent(db, store):
    names = [n for n, _ in steps()]
    assert applied_migrations(store._core.backend) == names
    assert len(names) == SCHEMA_VERSION
    store.close()
    with MemoryStore(db) as again:  # reopening applies nothing new
        assert applied_migrations(again._core.backend) == names


def test_database_from_newer_version_is_refused(db, store):
    store._core.backend.execute(
        "INSERT INTO schema_migrations(version, name, applied_at) VALUES (999, '0999_from_the_future', 0)"
    )
    store.close()
    with pytest.raises(DatabaseTooNewError, match="newer"):
        MemoryStore(db)


def test_every_dialect_has_the_same_steps():
    """One schema history whatever the engine: PostgreSQL's steps carry SQLite's names."""
    assert [n for n, _ in steps("postgresql")] == [n for n, _ in steps()]


def test_schema_has_required_tables(store):
    b = store._core.backend
    for t in (
        "memories",
        "memories_fts",
        "memory_vectors",
        "memory_access_log",
        "embedder_info",
        "memory_history",
        "memory_merges",
        "memory_tags",
    ):
        assert b.table_exists(t), t
    if b.dialect == "sqlite":
        cols = {r[1] for r in b.execute("PRAGMA table_info(memories)")}
    else:
        cols = {
            r[0]
            for r in b.execute(
                "SELECT column_name FROM information_schema.columns "
                "WHERE table_schema = current_schema() AND table_name = 'memories'"
            )
        }
    for c in (
        "namespace",
        "agent_id",
        "scope",
        "memory_type",
        "content",
        "key",
        "task_signature",
        "error_signature",
        "context_tags",
        "importance",
        "relevance_score",
        "access_count",
        "last_accessed",
        "times_applied",
        "times_successful",
        "success_rate",
        "session_id",
        "task_id",
        "metadata",
        "content_hash",
        "created_at",
        "updated_at",
        "expires_at",
        "decayed_at",
        "consolidated_into",
    ):
        assert c in cols, c


def test_installed_package_keeps_generic_names_inside():
    import harness_memory.jobs
    import harness_memory.migrations

    assert harness_memory.migrations.__name__ == "harness_memory.migrations"
    assert "expire" in harness_memory.jobs.JOBS


def test_sqlmodel_session_on_the_same_database(store):
    from sqlmodel import Session, text

    store.remember("visible through SQLModel", type="success", agent_id="a")
    engine = store.sql_engine()
    with Session(engine) as session:
        if store._core.backend.dialect == "sqlite":
            assert session.exec(text("SELECT vec_version()")).one()[0] == "v0.1.9"
        else:
            assert session.exec(text("SELECT extversion FROM pg_extension WHERE extname = 'vector'")).one()[0]
        rows = session.exec(text("SELECT content FROM memories")).all()
        assert [r[0] for r in rows] == ["visible through SQLModel"]
    engine.dispose()


def test_every_foreign_key_is_indexed(store):
    """A foreign key without an index makes every delete of its parent scan the child table
    (bulk deletes become quadratic, issue 17)."""
    b = store._core.backend
    if b.dialect == "postgresql":
        missing = [
            r[0]
            for r in b.execute(
                "SELECT c.conrelid::regclass::text || '.' || a.attname FROM pg_constraint c "
                "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1] "
                "WHERE c.contype = 'f' AND c.connamespace = current_schema()::regnamespace AND NOT EXISTS ("
                "SELECT 1 FROM pg_index i WHERE i.indrelid = c.conrelid AND i.indkey[0] = c.conkey[1])"
            )
        ]
        assert not missing, missing
        return
    tables = [
        r[0]
        for r in b.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "AND sql NOT LIKE 'CREATE VIRTUAL%'"
        )
    ]
    missing = []
    for t in tables:
        firsts = set()
        for (iname,) in b.execute(f"SELECT name FROM pragma_index_list('{t}')").fetchall():
            cols = b.execute(f"SELECT name FROM pragma_index_info('{iname}') ORDER BY seqno").fetchall()
            if cols:
                firsts.add(cols[0][0])
        for fk in b.execute(f"SELECT * FROM pragma_foreign_key_list('{t}')").fetchall():
            if fk[3] not in firsts:
                missing.append(f"{t}.{fk[3]}")
    assert not missing, missing
