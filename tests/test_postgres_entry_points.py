"""The long-running entry points on a PostgreSQL URL (issue 10): the REST server and its dashboard,
named by HARNESS_MEMORY_DB, and the scheduler daemon, as real processes against the real server."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from harness_memory import MemoryStore


@pytest.fixture
def pg():
    from pgtestdb import drop_schema, new_schema

    url, schema = new_schema()
    yield url
    drop_schema(schema)


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stop(p: subprocess.Popen, sig: int = signal.SIGTERM) -> tuple[str, str]:
    p.send_signal(sig)
    try:
        return p.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        return p.communicate()


def test_serve_takes_the_url_from_the_environment(pg):
    with MemoryStore(pg) as s:  # the database exists (serve refuses a missing one)
        s.remember("seeded before the server started", type="decision", agent_id="ops", scope="global")
    port = _port()
    env = {**os.environ, "HARNESS_MEMORY_DB": pg}
    p = subprocess.Popen(
        [sys.executable, "-m", "harness_memory", "serve", "--port", str(port)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.time() + 60
        while True:
            try:
                if httpx.get(base + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.time() < deadline and p.poll() is None, p.stderr.read() if p.poll() is not None else "slow"
            time.sleep(0.2)
        with httpx.Client(base_url=base, headers={"X-Agent-Id": "build"}, timeout=30) as c:
            r = c.post("/api/memory/remember", json={"content": "pin tenacity before importing it", "type": "success"})
            assert r.status_code == 201, r.text
            mid = r.json()["id"]
            hits = c.post("/api/memory/recall", json={"query": "tenacity import", "limit": 5}).json()
            assert hits[0]["memory"]["id"] == mid
            assert c.get("/api/memory/stats").json()["memories"] == 2
            page = c.get("/dashboard/memories/" + str(mid))
            assert page.status_code == 200 and "pin tenacity before importing it" in page.text
    finally:
        out, _errs = _stop(p)
    assert f"dashboard: http://127.0.0.1:{port}/dashboard/" in out  # the address of its pages, printed
    with MemoryStore(pg) as s:  # written to the server's database, the recall logged with its duration
        assert s.get(mid).content == "pin tenacity before importing it"
        assert s._core.backend.execute("SELECT COUNT(*) FROM v_recall_latency").fetchone()[0] == 1


def test_scheduler_daemon_runs_jobs_on_the_server_and_stops_cleanly(pg):
    with MemoryStore(pg) as s:
        s.remember("a memory for the jobs to look at", type="decision", agent_id="ops")
    env = {**os.environ, "HARNESS_MEMORY_MAINTENANCE__SCHEDULES": json.dumps({"expire": "interval:0.3"})}
    p = subprocess.Popen(
        [sys.executable, "-m", "harness_memory", "scheduler", "--db", pg],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    ran = False
    try:
        deadline = time.time() + 60
        with MemoryStore(pg) as s:
            while time.time() < deadline and not ran and p.poll() is None:
                time.sleep(0.3)
                ran = (
                    s._core.backend.execute(
                        "SELECT COUNT(*) FROM job_runs WHERE job = 'expire' AND status = 'ok'"
                    ).fetchone()[0]
                    > 0
                )
    finally:
        out, errs = _stop(p)
    assert ran, errs
    assert p.returncode == 0, errs
    assert "scheduler stopped" in errs
