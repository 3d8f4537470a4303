from __future__ import annotations

import os
import signal
import time

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import worker_processes
from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.testing import ManualClock

DAY = 86400.0


def _relevances(store):
    return dict(store._core.backend.execute("SELECT id, relevance_score FROM memories ORDER BY id").fetchall())


def _fill(store, n=5):
    return [
        store.remember(f"memory number {i} about subject {chr(97 + i)}", type="failure", agent_id="a").id
        for i in range(n)
    ]


@hsettings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(splits=st.lists(st.floats(0.01, 40.0), min_size=1, max_size=8))
def test_decay_is_split_invariant(tmp_path_factory, splits):
    d = tmp_path_factory.mktemp("decay")
    results = []
    for plan in (splits, [sum(splits)]):
        clock = ManualClock()
        with MemoryStore(d / f"{len(plan)}-{len(results)}.db", clock=clock) as s:
            _fill(s)
            for days in plan:
                clock.advance(days * DAY)
                s.run_job("decay")
            results.append(_relevances(s))
    a, b = results
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == pytest.approx(b[k], rel=1e-9, abs=1e-12)


@hsettings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(days=st.floats(0, 5000), accesses=st.integers(0, 5))
def test_decay_floor_and_access_never_lowers(tmp_path_factory, days, accesses):
    clock = ManualClock()
    with MemoryStore(
        tmp_path_factory.mktemp("floor") / "f.db",
        clock=clock,
        settings=Settings(maintenance=MaintenanceSettings(archive_after_days=1e6)),
    ) as s:
        _fill(s, 2)
        clock.advance(days * DAY)
        s.run_job("decay")
        before = _relevances(s)
        for r in before.values():
            assert s.settings.maintenance.decay_floor <= r <= 1.0
        for _ in range(accesses):
            s.recall("memory subject", agent_id="a")
        after = _relevances(s)
        assert all(after[k] >= before[k] for k in before)


def test_decay_rate_and_exemptions(db):
    clock = ManualClock()
    st_ = Settings(maintenance=MaintenanceSettings(decay_rates={"pattern": 0.05}))
    with MemoryStore(db, clock=clock, settings=st_) as s:
        f = s.remember("a failure", type="failure", agent_id="a").id
        d = s.remember("a decision", type="decision", agent_id="a").id
        p = s.remember("a pattern", type="pattern", agent_id="a").id
        pinned = s.pin(s.remember("a pinned failure", type="failure", agent_id="a").id).id
        clock.advance(10 * DAY)
        s.run_job("decay")
        r = _relevances(s)
        assert r[f] == pytest.approx(0.99**10)
        assert r[p] == pytest.approx(0.95**10)
        assert r[d] == 1.0 and r[pinned] == 1.0


def test_archive_and_restore(db):
    clock = ManualClock()
    with MemoryStore(db, clock=clock) as s:
        m = s.remember("rarely useful memory about gradle daemons", type="failure", agent_id="a")
        keep = s.remember("a decision that never fades about gradle", type="decision", agent_id="a")
        clock.advance(200 * DAY)
        out = s.run_job("decay").counts
        assert out["archived"] == 1
        got = s.get(m.id)
        assert got.archived and got.relevance_score == 0.05
        assert m.id not in {h.memory.id for h in s.recall("gradle daemons", agent_id="a")}
        assert m.id in {h.memory.id for h in s.recall("gradle daemons", agent_id="a", include_archived=True)}
        assert not s.get(keep.id).archived
        back = s.restore(m.id)
        assert not back.archived and back.relevance_score == 0.5
        assert m.id in {h.memory.id for h in s.recall("gradle daemons", agent_id="a")}


def test_expire_removes_rows_index_and_old_log(db):
    clock = ManualClock()
    with MemoryStore(db, clock=clock) as s:
        s.remember("short lived", type="context", agent_id="a", ttl=60)
        s.remember("long lived note", type="success", agent_id="a")
        s.recall("long lived", agent_id="a")
        clock.advance(100 * DAY)
        s.recall("long lived", agent_id="a")
        out = s.run_job("expire").counts
        assert out == {
            "expired": 1,
            "log_rows_pruned": 1,
            "tool_calls_pruned": 0,
        }  # the first query row is past the retention
        b = s._core.backend
        assert b.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 1
        assert b.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == 1
        if b.dialect == "sqlite":  # a bulk delete leaves its vec0 rows to the compact job (issue 17)
            assert b.execute("SELECT COUNT(*) FROM memory_vectors_removed").fetchone()[0] == 1
            assert s.run_job("compact").counts["vectors_purged"] == 1
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 1
        assert b.execute("SELECT COUNT(*) FROM memory_access_log").fetchone()[0] == 1


TOPICS = {
    "npm": "npm ci fails because package-lock.json is stale; regenerate the lockfile with npm install",
    "docker": "docker build runs out of disk space in CI; prune the builder cache before building images",
    "flaky": "the payment webhook test is flaky under load; replace sleep calls with a fake clock",
}
VARIANTS = ["", " (seen again today)", " on the release branch", " in the nightly job", " after the upgrade"]


def test_consolidation_groups_labelled_clusters_and_is_idempotent(db):
    with MemoryStore(db) as s:
        ids = {
            t: [s.remember(text + v, type="failure", agent_id="a", tags=[t, "ci"]).id for v in VARIANTS]
            for t, text in TOPICS.items()
        }
        s.remember("unrelated: the office wifi password rotates monthly", type="failure", agent_id="a")
        plan = s.run_job("consolidate", dry_run=True)
        assert plan.status == "dry_run" and plan.counts["planned"] == 3
        assert s._core.backend.execute("SELECT COUNT(*) FROM job_runs").fetchone()[0] == 0
        run = s.run_job("consolidate")
        assert run.counts["patterns_created"] == 3 and run.counts["members_linked"] == 15
        b = s._core.backend
        for t, members in ids.items():
            pats = {s.get(i).consolidated_into for i in members}
            assert len(pats) == 1 and None not in pats
            pattern = s.get(pats.pop())
            assert pattern.type == "pattern" and pattern.metadata["members"] == 5
            assert t in pattern.tags and "Pattern of 5 failure memories" in pattern.content
            linked = {
                r[0] for r in b.execute("SELECT member_id FROM pattern_members WHERE pattern_id = ?", (pattern.id,))
            }
            assert linked == set(members)
            assert all(s.get(i).relevance_score == 0.5 for i in members)
        again = s.run_job("consolidate")
        assert again.counts["patterns_created"] == 0 and again.counts["joined_existing"] == 0
        new = s.remember(TOPICS["npm"] + " during the hotfix", type="failure", agent_id="a")
        third = s.run_job("consolidate")
        assert third.counts["patterns_created"] == 0 and third.counts["joined_existing"] == 1
        assert s.get(new.id).consolidated_into == s.get(ids["npm"][0]).consolidated_into


def test_consolidation_summariser_hook(db):
    from harness_memory.jobs import consolidate

    with MemoryStore(db) as s:
        for v in VARIANTS[:3]:
            s.remember(TOPICS["docker"] + v, type="failure", agent_id="a")
        consolidate(s, summariser=lambda members: f"LLM summary of {len(members)} memories")
        assert [m.content for m in s.get_by_type("pattern", agent_id="a")] == ["LLM summary of 3 memories"]


def test_compact_rebuilds_a_sparse_vector_table(tmp_path):
    from harness_memory.jobs.compact import vector_fill

    with MemoryStore(tmp_path / "k.db") as s:
        got = s.remember_many(
            [
                {
                    "content": f"throwaway memory {i} " + "x" * (i % 7),
                    "type": "success",
                    "agent_id": "a" if i % 2 else "b",
                }
                for i in range(4000)
            ]
        )
        assert s.forget_all("b") == 2000  # every chunk keeps half its slots dead
        live, slots = vector_fill(s)
        assert live == 2000 and slots >= 4000
        assert s.run_job("compact", dry_run=True).counts["would_rebuild"] == 1
        out = s.run_job("compact").counts
        assert 1000 <= out["rebuilt"] <= 2000  # the rows of the sparse chunks moved (the newest chunk's stay)
        live, slots = vector_fill(s)
        assert live == 2000 and slots <= 3072
        assert s._core.backend.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        last = got[-1].id
        assert last in {h.memory.id for h in s.recall(got[-1].content, agent_id="a", limit=5)}
        assert s.run_job("compact").counts["rebuilt"] == 0  # dense now: nothing to do


def test_run_job_rejects_unknown_names(store):
    with pytest.raises(InvalidInputError):
        store.run_job("defrag")


def _race(path, holder, q):
    with MemoryStore(path) as s:
        q.put(s.run_job("decay", holder=holder, min_interval=3600).status)


def test_two_processes_run_a_job_once_per_period(db):
    path = db
    with MemoryStore(path) as s:
        _fill(s)
    ctx = worker_processes()
    q = ctx.Queue()
    procs = [ctx.Process(target=_race, args=(path, f"h{i}", q)) for i in range(3)]
    for p in procs:
        p.start()
    statuses = sorted(q.get(timeout=120) for _ in procs)
    for p in procs:
        p.join(timeout=30)
    assert statuses == ["ok", "skipped", "skipped"]
    with MemoryStore(path) as s:
        runs = s._core.backend.execute("SELECT status FROM job_runs WHERE job = 'decay'").fetchall()
        assert runs == [("ok",)]
        assert s._core.backend.execute("SELECT COUNT(*) FROM job_leases").fetchone()[0] == 0


def _slow_consolidate(path, q):
    import importlib

    c = importlib.import_module("harness_memory.jobs.consolidate")  # the module, not the function of that name

    real = c._create_pattern

    def slow(*a, **k):
        out = real(*a, **k)
        q.put("created")
        time.sleep(30)  # killed here, between two patterns
        return out

    c._create_pattern = slow
    with MemoryStore(path, settings=Settings(maintenance=MaintenanceSettings(lease_seconds=1))) as s:
        s.run_job("consolidate")


def test_killed_job_leaves_a_consistent_database_and_the_next_run_completes(db):
    path = db
    with MemoryStore(path) as s:
        for text in TOPICS.values():
            for v in VARIANTS:
                s.remember(text + v, type="failure", agent_id="a")
    ctx = worker_processes()
    q = ctx.Queue()
    p = ctx.Process(target=_slow_consolidate, args=(path, q))
    p.start()
    assert q.get(timeout=120) == "created"
    os.kill(p.pid, signal.SIGKILL)
    p.join(timeout=30)
    time.sleep(1.2)  # the dead holder's lease (1 s) expires
    with MemoryStore(path, settings=Settings(maintenance=MaintenanceSettings(lease_seconds=1))) as s:
        b = s._core.backend
        if b.dialect == "sqlite":
            assert b.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        n = b.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        assert b.execute("SELECT COUNT(*) FROM memories_fts").fetchone()[0] == n
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == n
        assert b.execute("SELECT COUNT(*) FROM memories WHERE consolidated_into IS NOT NULL").fetchone()[0] == 5
        run = s.run_job("consolidate")
        assert run.status == "ok" and run.counts["patterns_created"] == 2
        assert b.execute("SELECT status, error FROM job_runs ORDER BY id").fetchall()[0] == (
            "failed",
            "lease expired: holder died",
        )
        assert b.execute("SELECT COUNT(*) FROM memories WHERE memory_type = 'pattern'").fetchone()[0] == 3


def test_scheduler_runs_jobs_and_stops_with_close(tmp_path):
    st_ = Settings(maintenance=MaintenanceSettings(schedules={"expire": "interval:0.3", "decay": "interval:0.3"}))
    s = MemoryStore(tmp_path / "sch.db", settings=st_)
    s.remember("scheduled memory", type="success", agent_id="a", ttl=0.1)
    s.start_scheduler()
    deadline = time.time() + 20
    while time.time() < deadline:
        done = {r[0] for r in s._core.backend.execute("SELECT job FROM job_runs WHERE status = 'ok'")}
        if {"expire", "decay"} <= done:
            break
        time.sleep(0.2)
    s.close()
    with MemoryStore(tmp_path / "sch.db") as again:
        done = {r[0] for r in again._core.backend.execute("SELECT job FROM job_runs WHERE status = 'ok'")}
        assert {"expire", "decay"} <= done
        assert again.stats()["memories"] == 0


def test_metrics_views_answer(tmp_path):
    store = MemoryStore(tmp_path / "views.db")  # the real clock: the views look at the last 30 days
    m = store.remember("a memory", type="success", agent_id="a")
    for _ in range(3):
        store.apply(m.id, helpful=True)
    store.recall("memory", agent_id="a")
    store.record_outcome("T", "decomposition", True, error="TimeoutError: 30s")
    store.run_job("expire")
    b = store._core.backend
    assert (
        b.execute(
            "SELECT memories FROM v_memories_by_agent_type WHERE memory_type = 'success' AND agent_id = 'a'"
        ).fetchone()[0]
        == 1
    )
    assert b.execute("SELECT id FROM v_effective_memories").fetchone()[0] == m.id
    assert b.execute("SELECT COUNT(*) FROM v_technique_summary").fetchone()[0] == 3
    assert b.execute("SELECT SUM(accesses) FROM v_access_by_day").fetchone()[0] >= 4
    assert (
        b.execute("SELECT recall_to_success FROM v_recall_to_success WHERE memory_type = 'success'").fetchone()[0] > 0
    )
    assert b.execute("SELECT job, status FROM v_job_runs").fetchone() == ("expire", "ok")
    store.close()


def test_scheduler_daemon_exits_cleanly_on_sigterm_and_sigint(tmp_path):
    import json
    import subprocess
    import sys

    env = {**os.environ, "HARNESS_MEMORY_MAINTENANCE__SCHEDULES": json.dumps({"expire": "interval:0.3"})}
    for sig in (signal.SIGTERM, signal.SIGINT):
        db = tmp_path / f"daemon-{int(sig)}.db"
        p = subprocess.Popen(
            [sys.executable, "-m", "harness_memory", "scheduler", "--db", str(db)],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        deadline = time.time() + 30
        ran = False
        while time.time() < deadline and not ran:
            time.sleep(0.3)
            if db.exists():
                with MemoryStore(db) as s:
                    ran = (
                        s._core.backend.execute(
                            "SELECT COUNT(*) FROM job_runs WHERE job = 'expire' AND status = 'ok'"
                        ).fetchone()[0]
                        > 0
                    )
        p.send_signal(sig)
        out, errs = p.communicate(timeout=30)
        assert ran, errs
        assert p.returncode == 0, errs
        assert "scheduler stopped" in errs
