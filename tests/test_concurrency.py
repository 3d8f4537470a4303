"""Real processes writing to one database file."""

from __future__ import annotations

import random

from conftest import worker_processes
from harness_memory import MemoryStore
from harness_memory.migrations import steps

WORDS = (
    "build test deploy cache network retry timeout lockfile module import docker python rust go java "
    "compile link flaky webhook payment queue worker schema migrate index vector keyword fuse rank"
).split()


def _worker(path: str, worker: int, n: int, q) -> None:
    rng = random.Random(worker)
    errors = []
    with MemoryStore(path) as s:
        for i in range(n):
            text = f"w{worker}-{i}: " + " ".join(rng.choice(WORDS) for _ in range(12))
            try:
                s.remember(text, type="success", agent_id=f"agent-{worker}", tags=[f"w{worker}"])
                if i % 50 == 0:
                    s.recall(text, agent_id=f"agent-{worker}", limit=3)
            except Exception as exc:  # noqa: BLE001 - collected and asserted on in the parent
                errors.append(repr(exc))
    q.put((worker, errors))


def test_four_processes_times_250_remembers(tmp_path):
    path = str(tmp_path / "shared.db")
    with MemoryStore(path):
        pass  # create the schema once; workers race on everything else
    ctx = worker_processes()
    q = ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(path, w, 250, q)) for w in range(4)]
    for p in procs:
        p.start()
    results = [q.get(timeout=300) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(not errs for _, errs in results), results
    with MemoryStore(path) as s:
        b = s._core.backend
        per_agent = dict(b.execute("SELECT agent_id, COUNT(*) FROM memories GROUP BY agent_id").fetchall())
        assert per_agent == {f"agent-{w}": 250 for w in range(4)}
        assert b.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == 1000
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 1000
        assert b.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def _migrate_worker(path: str, q) -> None:
    try:
        with MemoryStore(path) as s:
            s.remember("hello from a racing opener", type="success", agent_id="x")
        q.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which asserts on it
        q.put(repr(exc))


def test_concurrent_first_open_migrates_once(tmp_path):
    path = str(tmp_path / "race.db")
    ctx = worker_processes()
    q = ctx.Queue()
    procs = [ctx.Process(target=_migrate_worker, args=(path, q)) for _ in range(4)]
    for p in procs:
        p.start()
    assert [q.get(timeout=120) for _ in procs] == ["ok"] * 4
    for p in procs:
        p.join(timeout=30)
    with MemoryStore(path) as s:
        names = [r[0] for r in s._core.backend.execute("SELECT name FROM schema_migrations ORDER BY version")]
        assert names == [n for n, _ in steps()]  # each step recorded exactly once
        assert s.stats()["memories"] == 1


def test_a_writer_waits_busy_timeout_ms_then_gets_the_library_error(tmp_path):
    """Issue 17: busy_timeout_ms is the one lock-wait setting, ending in DatabaseLockedError."""
    import subprocess
    import sys
    import time

    import pytest

    from harness_memory import DatabaseLockedError, MemoryStore, Settings

    db = tmp_path / "locked.db"
    with MemoryStore(db, settings=Settings(busy_timeout_ms=300)) as s:
        holder = subprocess.Popen(
            [
                sys.executable,
                "-c",
                (
                    "import sqlean, sys, time\n"
                    f"c = sqlean.connect({str(db)!r}, isolation_level=None)\n"
                    "c.execute('BEGIN IMMEDIATE'); print('held', flush=True); time.sleep(8)\n"
                ),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert holder.stdout.readline().strip() == "held"
            t0 = time.monotonic()
            with pytest.raises(DatabaseLockedError, match="busy_timeout_ms"):
                s.remember("x", type="success", agent_id="a")
            assert time.monotonic() - t0 < 5
        finally:
            holder.kill()
            holder.wait()
        s.remember("after the lock is gone", type="success", agent_id="a")
