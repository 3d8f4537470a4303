"""busy_timeout_ms on PostgreSQL (issue 10): every lock wait — the writers' advisory lock, a row
another transaction holds, a table a migration holds — ends after busy_timeout_ms in the library's
DatabaseLockedError naming the setting, as on SQLite (tests/test_concurrency.py). Two connections:
the store's, and a plain psycopg one that holds the lock."""

from __future__ import annotations

import psycopg
import pytest

import pgtestdb
from harness_memory import DatabaseLockedError, MemoryStore, Settings


@pytest.fixture
def pg_url():
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def _holder(url: str) -> psycopg.Connection:
    c = psycopg.connect(url)  # not autocommit: what it locks stays locked until rollback
    return c


def test_a_writer_behind_the_write_lock_gets_the_library_error(pg_url):
    with MemoryStore(pg_url, settings=Settings(busy_timeout_ms=300)) as s:
        s.remember("before", type="success", agent_id="a")
        key = s._core.backend._lock_key
        other = _holder(pg_url)
        try:
            other.execute("SELECT pg_advisory_xact_lock(%s)", (key,))
            with pytest.raises(DatabaseLockedError, match=r"busy_timeout_ms \(300 ms\)"):
                s.remember("blocked", type="success", agent_id="a")
            assert s.recall("before", agent_id="a")  # readers never wait for the write lock
        finally:
            other.rollback()
            other.close()
        s.remember("after the lock is gone", type="success", agent_id="a")
        assert s.stats()["memories"] == 2


def test_a_row_lock_held_elsewhere_ends_in_the_library_error(pg_url):
    with MemoryStore(pg_url, settings=Settings(busy_timeout_ms=300)) as s:
        m = s.remember("a row someone else locks", type="success", agent_id="a")
        other = _holder(pg_url)
        try:
            other.execute("SELECT id FROM memories WHERE id = %s FOR UPDATE", (m.id,))
            with pytest.raises(DatabaseLockedError, match="busy_timeout_ms"):
                s.apply(m.id, helpful=True, agent_id="a")
        finally:
            other.rollback()
            other.close()
        s.apply(m.id, helpful=True, agent_id="a")
        assert s.get(m.id).times_applied == 1


def test_a_read_behind_a_table_lock_ends_in_the_library_error(pg_url):
    with MemoryStore(pg_url, settings=Settings(busy_timeout_ms=300)) as s:
        s.remember("the table is locked by a migration", type="success", agent_id="a")
        other = _holder(pg_url)
        try:
            other.execute("LOCK TABLE memories IN ACCESS EXCLUSIVE MODE")
            with pytest.raises(DatabaseLockedError, match="busy_timeout_ms"):
                s.recall("locked table", agent_id="a")
        finally:
            other.rollback()
            other.close()
        assert s.recall("locked table", agent_id="a")


def test_recall_bookkeeping_never_waits_for_the_write_lock(pg_url):
    with MemoryStore(pg_url, settings=Settings(busy_timeout_ms=300)) as s:
        m = s.remember("recall while a writer holds the lock", type="success", agent_id="a")
        other = _holder(pg_url)
        try:
            other.execute("SELECT pg_advisory_xact_lock(%s)", (s._core.backend._lock_key,))
            hits = s.recall("writer holds the lock", agent_id="a")  # bookkeeping kept for later
            assert [h.memory.id for h in hits] == [m.id]
        finally:
            other.rollback()
            other.close()
    with MemoryStore(pg_url) as s:  # close() wrote what was pending
        assert s.get(m.id).access_count >= 1
