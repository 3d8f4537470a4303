"""Recall's access bookkeeping is written beside the recall by a thread of the store (issue 11,
harness_memory/access_writer.py): a recall never writes nor waits for the write lock, the rows land
within a bounded time without another call, the store's other verbs see them at once, a clean close
or the interpreter's exit loses nothing, and a killed process loses at most what was pending.

Real SQLite files with sqlite-vec, real second connections, real threads and real processes."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
import types

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import note_items as _items
from harness_memory import MemoryStore, Settings, access_writer
from harness_memory.errors import DatabaseLockedError
from harness_memory.sqlite_backend import connect

QUERY = "deploy cache retry"


def _count(path, sql: str, params=()) -> int:
    c = connect(path)
    try:
        return int(c.execute(sql, params).fetchone()[0])
    finally:
        c.close()


def _logged(path) -> int:
    return _count(path, "SELECT COUNT(*) FROM memory_access_log WHERE access_type = 'query'")


def _wait(pred, timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.01)
    return pred()


def _thread_stays_out(monkeypatch) -> None:
    """The store's access thread never writes: it exits at once (only the verbs, the pending limit and close() write a
    backlog). A recall that meets a busy lock wakes the thread, which would otherwise write the rows the moment the
    other writer lets go: before the test's next line reads what is pending."""
    monkeypatch.setattr(access_writer, "FLUSH_INTERVAL", 3600.0)
    monkeypatch.setattr(access_writer.AccessWriter, "_run", lambda self: None)


@pytest.fixture
def filled(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(60))
    return path


def test_a_recall_writes_its_bookkeeping_at_once_when_the_lock_is_free(filled):
    observer = connect(filled)
    try:
        with MemoryStore(filled) as s:
            hits = s.recall(QUERY, agent_id="a1", limit=4)
            assert [h.memory.access_count for h in hits] == [1, 1, 1, 1]
            assert s._core.access.pending_rows == 0
            assert s._core.access._thread is None  # no backlog ever formed: no thread
            ids = [h.memory.id for h in hits]
            q = f"SELECT COUNT(*) FROM memories WHERE access_count = 1 AND id IN ({','.join('?' * len(ids))})"
            assert observer.execute(q, ids).fetchone()[0] == 4  # committed before the recall returned
            assert _logged(filled) == 4
    finally:
        observer.close()


def test_a_recall_never_waits_for_a_busy_lock_and_the_thread_writes_once_it_is_free(filled):
    blocker = connect(filled)
    with MemoryStore(filled, settings=Settings(busy_timeout_ms=20_000)) as s:
        blocker.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
        t0 = time.monotonic()
        hits = s.recall(QUERY, agent_id="a1", limit=3)
        s.recall("python rust compile", agent_id="a1", limit=2)
        assert time.monotonic() - t0 < 5  # did not wait out the 20 s busy timeout
        time.sleep(3 * access_writer.FLUSH_INTERVAL)
        assert s._core.access.pending_rows == 5  # the thread found the lock busy: kept, not dropped
        gone = hits[2].memory.id
        blocker.execute("DELETE FROM memories WHERE id = ?", (gone,))  # deleted before the bookkeeping lands
        blocker.execute("COMMIT")
        # no further call in this process: the thread writes the backlog once the lock is free
        assert _wait(lambda: _logged(filled) == 4)  # the deleted memory's row is left out
        assert s._core.access.pending_rows == 0
        s.recall(QUERY, agent_id="a1", limit=2)  # the backlog is gone: written at once again
        assert _logged(filled) == 6
    blocker.close()


def test_a_verb_never_waits_for_a_busy_lock_to_write_a_backlog(filled, backlog):
    with MemoryStore(filled, settings=Settings(busy_timeout_ms=20_000)) as s:
        with backlog.busy():
            hits = s.recall(QUERY, agent_id="a1", limit=3)
            t0 = time.monotonic()
            assert s.get(hits[0].memory.id).id == hits[0].memory.id  # the lock is still busy: read, not waited
            assert time.monotonic() - t0 < 5
            assert s._core.access.pending_rows == 3
        s.stats()
        assert s._core.access.pending_rows == 0


def test_one_thread_drains_every_backlog_of_a_store(filled):
    blocker = connect(filled)
    before = set(threading.enumerate())  # (threads of other tests' stores left open are not this store's)
    with MemoryStore(filled) as s:
        for q in ("deploy cache retry", "python rust compile", "flaky webhook queue"):
            blocker.execute("BEGIN IMMEDIATE")
            s.recall(q, agent_id="a1", limit=2)
            s.recall(q, agent_id="a2", limit=2)
            blocker.execute("COMMIT")
            assert s._core.access.wait_written()
        named = [t for t in threading.enumerate() if t not in before and t.name == "harness-memory-access"]
        assert named == [s._core.access._thread]
    blocker.close()


def test_while_a_backlog_waits_recalls_leave_it_to_the_thread(filled, monkeypatch):
    _thread_stays_out(monkeypatch)
    blocker = connect(filled)
    with MemoryStore(filled) as s:
        blocker.execute("BEGIN IMMEDIATE")
        s.recall(QUERY, agent_id="a1", limit=2)
        blocker.execute("COMMIT")
        s.recall("python rust compile", agent_id="a1", limit=2)  # the lock is free, but a backlog waits
        assert s._core.access.pending_rows == 4 and _logged(filled) == 0
    blocker.close()
    assert _logged(filled) == 4  # close() wrote them


@pytest.fixture
def backlog(filled, monkeypatch):
    """``with backlog.busy(): store.recall(...)``: another writer holds the lock while the recall runs, so
    its rows go to the backlog; the thread stays out."""
    _thread_stays_out(monkeypatch)
    conn = connect(filled)

    @contextlib.contextmanager
    def busy():
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        finally:
            conn.execute("COMMIT")

    yield types.SimpleNamespace(busy=busy)
    conn.close()


def test_the_stores_other_verbs_see_a_recalls_bookkeeping_at_once(filled, backlog):
    with MemoryStore(filled) as s:
        with backlog.busy():
            hits = s.recall(QUERY, agent_id="a1", limit=3)
        assert s._core.access.pending_rows == 3
        m = s.get(hits[0].memory.id)
        assert m.access_count == 1 and m.last_accessed is not None
        assert s._core.access.pending_rows == 0
        with backlog.busy():
            s.recall(QUERY, agent_id="a1", limit=3)
        assert s._core.access.pending_rows == 3
        s.stats()
        assert s._core.access.pending_rows == 0
        assert _logged(filled) == 6  # stats() wrote the second recall's rows first


def test_close_writes_everything_pending_waiting_for_the_lock(filled, backlog):
    s = MemoryStore(filled)
    n = 0
    with backlog.busy():
        for q in ("deploy cache retry", "python rust compile", "flaky webhook queue", "schema migrate index"):
            n += len(s.recall(q, agent_id="a2", limit=5))
    assert s._core.access.pending_rows == n > 0
    s.close()
    assert _logged(filled) == n


def test_the_log_rows_carry_the_recalls_time_not_the_writes(filled, clock, backlog):
    with MemoryStore(filled, clock=clock) as s:
        t0 = clock()
        with backlog.busy():
            hits = s.recall(QUERY, agent_id="a1", limit=2)
        clock.advance(3600)
        s.get(hits[0].memory.id)  # writes the pending rows an hour (of the store's clock) later
        stamps = {r[0] for r in s._core.backend.execute("SELECT timestamp FROM memory_access_log")}
        assert stamps == {t0}
        assert s.get(hits[0].memory.id).last_accessed.timestamp() == pytest.approx(t0)


def test_past_the_pending_limit_a_recall_writes_itself_and_says_when_it_cannot(filled, monkeypatch):
    monkeypatch.setattr(access_writer, "MAX_PENDING_ROWS", 4)
    monkeypatch.setattr(access_writer, "FLUSH_INTERVAL", 3600.0)
    blocker = connect(filled)
    with MemoryStore(filled, settings=Settings(busy_timeout_ms=300)) as s:
        blocker.execute("BEGIN IMMEDIATE")
        s.recall(QUERY, agent_id="a1", limit=3)  # 3 rows of backlog
        with pytest.raises(DatabaseLockedError):
            s.recall(QUERY, agent_id="a1", limit=3)  # 6 rows pending: it waits for the lock, 300 ms at most
        assert s._core.access.pending_rows == 6  # kept
        blocker.execute("COMMIT")
        s.recall(QUERY, agent_id="a1", limit=3)  # over the limit again: written now, by the recall
        assert s._core.access.pending_rows == 0
        assert _logged(filled) == 9
    blocker.close()


def test_a_failed_write_of_the_thread_is_logged_without_content_kept_and_retried(filled, monkeypatch, caplog):
    monkeypatch.setattr(access_writer, "ERROR_BACKOFF", 0.05)
    with MemoryStore(filled) as s:
        w = s._core.access
        real = w._write_entries
        calls = []

        def flaky(core, c, batch):
            calls.append(len(batch))
            if len(calls) == 1:
                raise OSError("disk I/O error while writing a secret-token-123 row")
            return real(core, c, batch)

        monkeypatch.setattr(w, "_write_entries", flaky)
        blocker = connect(filled)
        with caplog.at_level(logging.WARNING, logger="harness_memory.access"):
            blocker.execute("BEGIN IMMEDIATE")
            hits = s.recall(QUERY, agent_id="a1", limit=3)  # the lock is busy: the rows go to the thread
            blocker.execute("COMMIT")
            blocker.close()
            assert _wait(lambda: _logged(filled) == len(hits))
        assert w.failures == 1 and len(calls) >= 2
        text = caplog.text
        assert "OSError" in text and "secret-token-123" not in text and QUERY not in text
        assert {r.name for r in caplog.records if "access bookkeeping" in r.getMessage()} == {"harness_memory.access"}


def test_a_store_left_open_at_the_interpreters_exit_writes_its_bookkeeping(filled):
    code = textwrap.dedent(
        f"""
        import sys
        from harness_memory import MemoryStore, access_writer
        from harness_memory.sqlite_backend import connect
        access_writer.FLUSH_INTERVAL = 3600.0
        s = MemoryStore({str(filled)!r})
        blocker = connect({str(filled)!r})
        blocker.execute("BEGIN IMMEDIATE")
        n = len(s.recall({QUERY!r}, agent_id="a1", limit=5))  # the lock is busy: a backlog
        blocker.execute("COMMIT")
        print(n, s._core.access.pending_rows, flush=True)
        # no close(): the interpreter exits with the store open
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    n, pending = map(int, out.stdout.split())
    assert n == pending == 5
    assert _logged(filled) == 5


def test_a_killed_process_loses_at_most_what_was_pending(filled):
    code = textwrap.dedent(
        f"""
        import os, signal, sys
        from harness_memory import MemoryStore, access_writer
        from harness_memory.sqlite_backend import connect
        access_writer.FLUSH_INTERVAL = 3600.0
        s = MemoryStore({str(filled)!r})
        written = sum(len(s.recall(q, agent_id="a1", limit=4)) for q in ("deploy cache", "python rust", "webhook"))
        blocker = connect({str(filled)!r})
        blocker.execute("BEGIN IMMEDIATE")
        lost = len(s.recall("schema migrate index", agent_id="a1", limit=4))  # a backlog, never written
        blocker.execute("COMMIT")
        print(written, lost, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
        """
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert p.returncode == -signal.SIGKILL
    written, lost = map(int, p.stdout.split())
    assert written > 0 and lost > 0
    assert _logged(filled) == written  # what was written survives; the last recall's rows are lost
    c = connect(filled)
    try:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        c.close()


@pytest.mark.skipif(sys.platform == "win32", reason="os.fork")
def test_a_forked_child_does_not_write_its_parents_pending_rows(filled, monkeypatch):
    _thread_stays_out(monkeypatch)
    s = MemoryStore(filled)
    blocker = connect(filled)
    try:
        blocker.execute("BEGIN IMMEDIATE")
        s.recall(QUERY, agent_id="a1", limit=3)
        blocker.execute("COMMIT")
        assert s._core.access.pending_rows == 3
        pid = os.fork()
        if pid == 0:  # the child: its writer starts afresh
            code = 0 if s._core.access.settle() and s._core.access.pending_rows == 0 else 1
            os._exit(code)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert _logged(filled) == 0  # the child wrote nothing of the parent's
        assert s._core.access.pending_rows == 3
    finally:
        blocker.close()
        s.close()
    assert _logged(filled) == 3


@hsettings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    ops=st.lists(
        st.one_of(
            st.tuples(
                st.sampled_from(["recall", "busy recall"]),
                st.sampled_from(["deploy cache retry", "python rust", "webhook queue"]),
            ),
            st.tuples(st.just("forget"), st.integers(0, 19)),
            st.tuples(st.just("get"), st.integers(0, 19)),
            st.tuples(st.just("pause"), st.sampled_from([0.0, 0.02, 0.15])),
        ),
        max_size=25,
    )
)
def test_every_recall_is_counted_once_whatever_the_interleaving(tmp_path_factory, ops):
    """Written at once or by the thread after another writer held the lock ("busy recall"), whenever the
    thread happens to write, and whatever the store's other verbs do in between: after close, each
    surviving memory's access_count is the number of recalls that returned it."""
    path = tmp_path_factory.mktemp("aw") / "m.db"
    expected: dict[int, int] = {}
    with MemoryStore(path) as s:
        blocker = connect(path)
        ids = [m.id for m in s.remember_many(_items(20))]
        gone: set[int] = set()
        for op, arg in ops:
            if op in ("recall", "busy recall"):
                if op == "busy recall":
                    blocker.execute("BEGIN IMMEDIATE")
                try:
                    for h in s.recall(arg, agent_id="a1", limit=5):
                        expected[h.memory.id] = expected.get(h.memory.id, 0) + 1
                finally:
                    if op == "busy recall":
                        blocker.execute("COMMIT")
            elif op == "forget" and ids[arg] not in gone:
                s.forget(ids[arg])
                gone.add(ids[arg])
            elif op == "get" and ids[arg] not in gone:
                assert s.get(ids[arg]).access_count == expected.get(ids[arg], 0)
            elif op == "pause":
                time.sleep(arg)
        blocker.close()
    c = connect(path)
    try:
        got = dict(c.execute("SELECT id, access_count FROM memories").fetchall())
        logged = dict(
            c.execute(
                "SELECT memory_id, COUNT(*) FROM memory_access_log WHERE access_type = 'query' GROUP BY memory_id"
            ).fetchall()
        )
    finally:
        c.close()
    for mid in ids:
        if mid in gone:
            assert mid not in got
        else:
            assert got[mid] == expected.get(mid, 0)
            assert logged.get(mid, 0) == expected.get(mid, 0)


def test_a_backlog_written_after_a_decay_does_not_wind_its_clock_back(tmp_path, clock, monkeypatch):
    """A recall's rows wait behind another writer; meanwhile the decay job (another store on the file) decays the
    recalled memory to its own, later time. Writing the rows then boosts that relevance and leaves the decay time where
    the job put it: winding it back to the recall's time would decay the interval between the two twice."""
    _thread_stays_out(monkeypatch)
    day = 86400.0
    path = tmp_path / "m.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many(_items(20, seed=5))
        clock.advance(2 * day)
        blocker = connect(path)
        blocker.execute("BEGIN IMMEDIATE")
        hit = s.recall(QUERY, agent_id="a1", limit=1)[0].memory
        blocker.execute("COMMIT")
        blocker.close()
        assert s._core.access.pending_rows == 1
        clock.advance(30 * day)
        with MemoryStore(path, clock=clock) as job:
            job.run_job("decay")
            decayed, at = job._core.backend.execute(
                "SELECT relevance_score, decayed_at FROM memories WHERE id = ?", (hit.id,)
            ).fetchone()
        assert decayed < hit.relevance_score and at == pytest.approx(clock())
        s.get(hit.id)  # writes the recall's rows
        score, after_at, count = s._core.backend.execute(
            "SELECT relevance_score, decayed_at, access_count FROM memories WHERE id = ?", (hit.id,)
        ).fetchone()
        assert count == hit.access_count == 1  # (the recall counted its hit in the object it returned)
        assert after_at == pytest.approx(clock())  # not the recall's time, 30 days earlier
        assert score == pytest.approx(min(1.0, decayed + s.settings.recall_boost))


def test_rows_being_written_still_count_as_pending(filled, monkeypatch):
    # the thread takes the backlog out of the queue to write it; until that batch is committed (or put back because the
    # lock is busy) its rows are still pending: a reader of pending_rows never sees them vanish in between (a fresh-clone
    # CI of 5a5dd06 read 0 instead of 5 while the thread's attempt was under way)
    from harness_memory.sqlite_backend import SQLiteBackend

    entered, release = threading.Event(), threading.Event()
    real = SQLiteBackend.try_write

    @contextlib.contextmanager
    def slow_try_write(self):
        if threading.current_thread().name == "harness-memory-access":
            entered.set()
            release.wait(10)
        with real(self) as c:
            yield c

    blocker = connect(filled)
    try:
        with MemoryStore(filled, settings=Settings(busy_timeout_ms=20_000)) as s:
            blocker.execute("BEGIN IMMEDIATE")
            s.recall(QUERY, agent_id="a1", limit=3)
            monkeypatch.setattr(SQLiteBackend, "try_write", slow_try_write)
            s.recall("python rust compile", agent_id="a1", limit=2)
            assert entered.wait(10)  # the thread is inside its attempt, the batch taken out of the queue
            assert s._core.access.pending_rows == 5
            release.set()
            time.sleep(3 * access_writer.FLUSH_INTERVAL)
            assert s._core.access.pending_rows == 5  # the lock was busy: put back
            blocker.execute("COMMIT")
            assert _wait(lambda: s._core.access.pending_rows == 0)
            assert _wait(lambda: _logged(filled) == 5)
    finally:
        release.set()
        blocker.close()
