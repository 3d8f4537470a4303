"""Leases after a crash: a SIGKILLed holder on this host is taken over at once; a live holder
renews its lease (heartbeat) so a lease shorter than the job never lets a second runner in;
a lease from another host expires once it is no longer renewed. Real subprocesses."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from harness_memory import MemoryStore, Settings
from harness_memory.jobs.runner import holder_gone, new_holder, pid_alive
from harness_memory.settings import MaintenanceSettings

HOLDER_SCRIPT = textwrap.dedent("""
    import sys, time
    from harness_memory import MemoryStore, Settings
    from harness_memory.settings import MaintenanceSettings

    path, lease, beat, holder = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4] or None
    settings = Settings(maintenance=MaintenanceSettings(lease_seconds=lease, lease_heartbeat_seconds=beat))

    def slow(done, total):
        print("started", flush=True)
        time.sleep(120)  # killed here, inside the job, holding the lease

    with MemoryStore(path, settings=settings) as s:
        s.run_job("decay", progress=slow, holder=holder)
""")


def _start_holder(path, lease: float, beat: float, holder: str = "") -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER_SCRIPT, str(path), str(lease), str(beat), holder],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    line = p.stdout.readline()
    if line.strip() != "started":
        p.kill()
        raise AssertionError(f"holder did not start: {line!r} {p.stderr.read()}")
    return p


def _kill(p: subprocess.Popen) -> None:
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)  # reaped: no zombie left behind
    p.stdout.close()
    p.stderr.close()


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "lease.db"
    with MemoryStore(path) as s:
        s.remember("a memory to decay", type="success", agent_id="a")
    return path


def test_a_killed_holder_on_this_host_is_taken_over_at_once(db):
    p = _start_holder(db, lease=600, beat=200)  # a long lease: only the dead pid can free it
    try:
        with MemoryStore(db) as s:
            assert s.run_job("decay").status == "skipped"  # the holder lives
            lease = s.job_status()["leases"][0]
            assert lease["holder"].split(":")[1] == str(p.pid)
    finally:
        _kill(p)
    with MemoryStore(db) as s:
        t0 = time.monotonic()
        run = s.run_job("decay")
        assert run.status == "ok" and time.monotonic() - t0 < 30
        runs = s._core.backend.execute("SELECT status, error FROM job_runs ORDER BY id").fetchall()
        assert runs == [("failed", "lease expired: holder died"), ("ok", None)]
        assert s.job_status()["leases"] == []


def test_a_live_holder_renews_a_lease_shorter_than_its_job(db):
    # the holder claims another host, so only its heartbeat (not a pid check) keeps the lease
    holder = f"build-host-7:{os.getpid() + 100000}:cafe0001"
    settings = Settings(maintenance=MaintenanceSettings(lease_seconds=1.0, lease_heartbeat_seconds=0.2))
    p = _start_holder(db, lease=1.0, beat=0.2, holder=holder)
    try:
        with MemoryStore(db, settings=settings) as s:
            deadline = time.monotonic() + 3.5  # 3.5 lease lengths while the job runs
            tries = 0
            while time.monotonic() < deadline:
                run = s.run_job("decay")
                assert run.status == "skipped", run  # never a second runner while the holder lives
                tries += 1
                time.sleep(0.25)
            assert tries >= 8
            expires = s.job_status()["leases"][0]["expires_at"]
            assert expires > time.time()  # renewed: still in the future, 3.5 s after it started
    finally:
        _kill(p)
    with MemoryStore(db, settings=settings) as s:
        time.sleep(1.3)  # not renewed any more: the other host's lease expires after lease_seconds
        run = s.run_job("decay")
        assert run.status == "ok"
        assert s._core.backend.execute("SELECT status FROM job_runs ORDER BY id").fetchall() == [("failed",), ("ok",)]


def test_an_unrenewed_lease_of_another_host_is_respected_until_it_expires(db):
    settings = Settings(maintenance=MaintenanceSettings(lease_seconds=30))
    with MemoryStore(db, settings=settings) as s:
        now = time.time()
        s._core.backend.execute(
            "INSERT INTO job_leases(job, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)",
            ("decay", "elsewhere:1:abcd", now - 5, now + 25),
        )
        assert s.run_job("decay").status == "skipped"
        s._core.backend.execute("UPDATE job_leases SET expires_at = ? WHERE job = 'decay'", (now - 1,))
        assert s.run_job("decay").status == "ok"


def test_holder_checks():
    me = new_holder()
    assert not holder_gone(me)  # this process
    assert pid_alive(os.getpid())
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    host = me.split(":")[0]
    assert holder_gone(f"{host}:{p.pid}:x")  # exited and reaped
    assert not holder_gone(f"another-host:{p.pid}:x")  # cannot tell on another host
    assert not holder_gone("not-a-holder")
