"""The maintenance jobs as a user runs them (``store.run_job(name)``, the scheduler): what each job
changes and counts at the edges of its settings, its dry run, and the lease and run record around it
(jobs/, docs/maintenance.md)."""

from __future__ import annotations

import json
import socket

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.errors import ConfigurationError
from harness_memory.jobs import scheduler
from harness_memory.settings import MaintenanceSettings

DAY = 86400.0


def _count(s, table, where="1 = 1"):
    return s._core.backend.execute(f"SELECT COUNT(*) FROM {table} WHERE {where}").fetchone()[0]


# -- expire ------------------------------------------------------------------------------------------
def test_a_dry_run_changes_nothing_and_is_not_recorded(db, clock):
    with MemoryStore(db, clock=clock) as s:
        s.remember("temporary proxy for the outage", type="context", agent_id="a", ttl=60)
        clock.advance(120)
        run = s.run_job("expire", dry_run=True)
        assert run.status == "dry_run" and run.id is None and run.counts["expired"] == 1
        assert _count(s, "job_runs") == 0 and _count(s, "memories") == 1


def _aged_store(db, clock, **maintenance):
    s = MemoryStore(db, clock=clock, settings=Settings(maintenance=MaintenanceSettings(**maintenance)))
    keep = s.remember("a durable note about the cache", type="success", agent_id="a")
    s.recall("durable note cache", agent_id="a")  # access-log rows, all at t0
    s.log_tool_call("pytest", agent_id="a", success=True)  # one tool call, at t0
    return s, keep, _count(s, "memory_access_log")


@pytest.mark.parametrize(
    ("days", "log_pruned", "calls_pruned"),
    [(4.0, False, 0), (5.5, False, 1), (11.0, True, 1)],
)
def test_expire_prunes_the_access_log_and_tool_calls_past_their_retention(db, clock, days, log_pruned, calls_pruned):
    s, keep, logged = _aged_store(db, clock, access_log_retention_days=10, tool_call_retention_days=5)
    log_pruned = logged if log_pruned else 0
    with s:
        clock.advance(days * DAY)
        plan = s.run_job("expire", dry_run=True).counts
        want = {"expired": 0, "log_rows_pruned": log_pruned, "tool_calls_pruned": calls_pruned}
        assert plan == want
        assert _count(s, "memory_access_log") == logged and _count(s, "tool_calls") == 1  # the plan changed nothing
        run = s.run_job("expire")
        assert run.status == "ok" and run.counts == want
        assert _count(s, "memory_access_log") == logged - log_pruned and _count(s, "tool_calls") == 1 - calls_pruned
        assert s.get(keep.id).id == keep.id


def test_a_memory_expires_at_its_expiry_time_not_before(db, clock):
    with MemoryStore(db, clock=clock) as s:
        s.remember("a note for an hour", type="context", agent_id="a", ttl=3600)
        clock.advance(3599)
        assert s.run_job("expire", dry_run=True).counts["expired"] == 0
        assert s.run_job("expire").counts["expired"] == 0
        clock.advance(1)
        assert s.run_job("expire", dry_run=True).counts["expired"] == 1
        assert s.run_job("expire").counts["expired"] == 1 and _count(s, "memories") == 0


# -- compact -----------------------------------------------------------------------------------------
def test_compact_of_a_dense_store_plans_and_rebuilds_nothing_unless_forced(tmp_path, clock):
    with MemoryStore(tmp_path / "c.db", clock=clock) as s:
        s.remember_many([{"content": f"note {i} about disks", "type": "success", "agent_id": "a"} for i in range(30)])
        plan = s.run_job("compact", dry_run=True).counts
        assert plan["would_rebuild"] == 0 and plan["vector_rows"] == 30 and plan["vector_slots"] >= 30
        assert plan["rebuilt"] == plan["changes_trimmed"] == plan["vacuumed"] == 0  # a plan did nothing
        out = s.run_job("compact").counts
        assert out["rebuilt"] == 0 and out["vector_rows"] == 30 and out["changes_trimmed"] == 0
        assert s.run_job("compact", dry_run=True, force=True).counts["would_rebuild"] == 1
        forced = s.run_job("compact", force=True).counts
        assert forced["rebuilt"] == 0 and forced["vector_rows"] == 30  # no chunk has a dead slot to free
        hits = s.recall("note 7 about disks", agent_id="a", limit=3, record=False)
        assert hits[0].memory.content == "note 7 about disks"


def test_compact_trims_the_vector_change_log_to_what_it_keeps(tmp_path, clock):
    with MemoryStore(tmp_path / "c.db", clock=clock) as s:
        s.remember_many(
            [{"content": f"note {i} about queues", "type": "success", "agent_id": "a"} for i in range(1200)]
        )
        changes = _count(s, "vector_changes")
        assert changes >= 1200
        keep = s.settings.maintenance.vector_changes_keep
        if changes <= keep:  # the default keeps 100,000: nothing trimmed
            assert s.run_job("compact").counts["changes_trimmed"] == 0
    settings = Settings(maintenance=MaintenanceSettings(vector_changes_keep=1000))
    with MemoryStore(tmp_path / "c.db", clock=clock, settings=settings) as s:
        out = s.run_job("compact").counts
        assert out["changes_trimmed"] == changes - 1000 and _count(s, "vector_changes") == 1000
        assert s.run_job("compact").counts["changes_trimmed"] == 0
        fresh = s.remember("a note after the trim about queues", type="success", agent_id="a")
        assert s.recall("after the trim", agent_id="a", limit=1, record=False)[0].memory.id == fresh.id


def test_compact_vacuums_only_when_asked(tmp_path, clock):
    with MemoryStore(tmp_path / "v.db", clock=clock) as s:
        s.remember_many(
            [{"content": f"bulky note {i} " + "y" * 2000, "type": "success", "agent_id": "b"} for i in range(300)]
        )
        s.forget_all("b")
        assert s.run_job("compact").counts["vacuumed"] == 0
        assert s.run_job("compact", vacuum=True).counts["vacuumed"] == 1


# -- reflect -----------------------------------------------------------------------------------------
def _episodes(s, thread, namespace=None):
    for t in ("Jon opened a dance studio downtown in January.", "Jon said the studio lost money in February."):
        s.remember(t, type="episode", agent_id="a", thread_id=thread, namespace=namespace)


def test_reflect_takes_threads_idle_for_exactly_the_configured_time(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(maintenance={"reflect_idle_minutes": 60})) as s:
        _episodes(s, "t1")
        clock.advance(3599)
        assert s.run_job("reflect", dry_run=True).counts == {"threads": 0, "active_threads": 1}
        assert s.run_job("reflect").counts == {"threads": 0, "memories": 0}
        clock.advance(1)
        assert s.run_job("reflect", dry_run=True).counts == {"threads": 1, "active_threads": 0}
        run = s.run_job("reflect")
        assert run.counts["threads"] == 1 and run.counts["memories"] > 0
        assert s.run_job("reflect", dry_run=True).counts == {"threads": 0, "active_threads": 0}  # reflected


def test_reflect_in_one_namespace_leaves_the_others(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(maintenance={"reflect_idle_minutes": 1})) as s:
        _episodes(s, "t1", namespace="red")
        _episodes(s, "t2", namespace="blue")
        clock.advance(120)
        assert s.run_job("reflect", dry_run=True, namespace="red").counts == {"threads": 1, "active_threads": 0}
        run = s.run_job("reflect", namespace="red")
        assert run.counts["threads"] == 1 and run.counts["memories"] > 0
        assert all(m.reflected_at is None for m in s.thread("t2", agent_id="a", namespace="blue"))
        assert all(m.reflected_at is not None for m in s.thread("t1", agent_id="a", namespace="red"))
        both = s.run_job("reflect", dry_run=True).counts
        assert both == {"threads": 1, "active_threads": 0}


@pytest.mark.parametrize("name", ["openai", "openai:", "anthropic:claude", "gpt-4o"])
def test_a_reflect_summariser_setting_that_names_no_model_is_refused(name):
    from harness_memory.jobs.reflect import summariser_from_settings

    with pytest.raises(ConfigurationError, match="openai:MODEL"):
        summariser_from_settings(Settings(summariser=name))


def test_a_reflect_summariser_refusal_quotes_at_most_100_characters_of_the_setting():
    from harness_memory.jobs.reflect import summariser_from_settings

    with pytest.raises(ConfigurationError) as err:
        summariser_from_settings(Settings(summariser="m" * 150))
    assert repr("m" * 100) in str(err.value)


def test_the_reflect_summariser_setting_builds_an_openai_compatible_client():
    from harness_memory.jobs.reflect import summariser_from_settings

    assert summariser_from_settings(Settings()) is None
    got = summariser_from_settings(Settings(summariser="openai:gpt-4o-mini"))
    assert got.model == "gpt-4o-mini" and str(got.base_url).startswith("https://api.openai.com/v1")
    local = summariser_from_settings(
        Settings(summariser="openai:llama3", summariser_base_url="http://localhost:11434/v1")
    )
    assert local.model == "llama3" and str(local.base_url).startswith("http://localhost:11434/v1")


# -- scheduler ---------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("spec", "period"),
    [
        ("interval:90", 90.0),
        ("interval:0.5", 0.5),
        ("cron:0 3 * * *", 86400),
        ("cron:0 4 * * 0", 7 * 86400),
        ("cron:15 * * * *", 3600),
    ],
)
def test_a_schedule_gives_its_period(spec, period):
    trigger, got = scheduler.parse_schedule(spec)
    assert got == period and trigger is not None


@pytest.mark.parametrize(
    "spec", ["interval:0", "interval:-5", "interval:soon", "cron:0 3 * *", "cron:99 3 * * *", "hourly", "every:5"]
)
def test_a_bad_schedule_is_a_configuration_error(spec):
    with pytest.raises(ConfigurationError, match="schedule"):
        scheduler.parse_schedule(spec)


def test_the_scheduler_runs_each_job_at_half_its_period_apart_and_only_the_ones_asked(tmp_path):
    st_ = Settings(maintenance=MaintenanceSettings(schedules={"expire": "interval:600", "decay": "cron:0 3 * * *"}))
    sched = scheduler.build_scheduler(tmp_path / "s.db", st_, only=["expire"])
    jobs = sched.get_jobs()
    assert [j.id for j in jobs] == ["expire"]
    db, payload, name, min_interval, holder = jobs[0].args
    assert db == str(tmp_path / "s.db") and name == "expire" and min_interval == 300
    assert Settings.model_validate_json(payload).maintenance.schedules == st_.maintenance.schedules
    assert holder.startswith(socket.gethostname() + ":")
    every = scheduler.build_scheduler(tmp_path / "s.db", st_)
    assert sorted(j.id for j in every.get_jobs()) == ["decay", "expire"]
    assert {j.id: j.args[3] for j in every.get_jobs()} == {"expire": 300, "decay": 43200}
    assert sorted((x["job"], x["next_run"]) for x in scheduler.jobs_summary(every)) == [
        ("decay", None),
        ("expire", None),
    ]  # not started yet
    every.start(paused=True)
    try:
        summary = scheduler.jobs_summary(every)
        assert sorted(x["job"] for x in summary) == ["decay", "expire"]
        assert all(x["next_run"] is not None for x in summary)
        for j in every.get_jobs():  # a missed run is caught up once, within the grace time, never twice at once
            assert (j.coalesce, j.max_instances, j.misfire_grace_time) == (
                True,
                1,
                st_.maintenance.misfire_grace_seconds,
            )
    finally:
        every.shutdown(wait=False)


def test_a_schedule_for_an_unknown_job_is_refused():
    st_ = Settings(maintenance=MaintenanceSettings(schedules={"defrag": "interval:60"}))
    with pytest.raises(ConfigurationError, match="defrag"):
        scheduler.build_scheduler("x.db", st_)


def test_a_scheduled_run_goes_through_the_lease_and_is_recorded(tmp_path, caplog):
    import logging

    path = tmp_path / "run.db"
    with MemoryStore(path) as s:
        s.remember("a scheduled memory", type="success", agent_id="a", ttl=0.01)
    st_ = Settings()
    with caplog.at_level(logging.INFO, logger="harness_memory.jobs"):
        scheduler._run_scheduled(str(path), st_.model_dump_json(), "expire", 3600, "host:1:abc")
    assert "job expire: ok {'expired': 1" in caplog.text  # the run's counts are logged
    scheduler._run_scheduled(str(path), st_.model_dump_json(), "expire", 3600, "host:1:abc")  # once per period
    with MemoryStore(path) as s:
        runs = s._core.backend.execute("SELECT job, status, holder FROM job_runs").fetchall()
        assert [tuple(r) for r in runs] == [("expire", "ok", "host:1:abc")]
        assert s.stats()["memories"] == 0


# -- runner: lease and run record -------------------------------------------------------------------
def test_an_unknown_job_is_refused_naming_the_jobs():
    with MemoryStore(":memory:") if False else _mem() as s, pytest.raises(InvalidInputError, match="decay"):
        s.run_job("defrag")


def _mem():
    import tempfile
    from pathlib import Path

    return MemoryStore(Path(tempfile.mkdtemp()) / "m.db")


def test_a_job_run_within_its_min_interval_is_skipped(db, clock):
    with MemoryStore(db, clock=clock) as s:
        first = s.run_job("expire", min_interval=600)
        assert first.status == "ok" and first.id is not None
        clock.advance(599)
        again = s.run_job("expire", min_interval=600)
        assert again.status == "skipped" and again.error == "already run this period" and again.id is None
        clock.advance(1)
        assert s.run_job("expire", min_interval=600).status == "ok"
        assert _count(s, "job_runs", "status = 'ok'") == 2


def test_a_lease_held_by_a_live_holder_skips_the_run_until_it_expires(db, clock):
    lease = 60.0
    with MemoryStore(db, clock=clock, settings=Settings(maintenance={"lease_seconds": lease})) as s:
        other = "another-host:4242:cafe0001"
        now = clock()
        with s._core.backend.write() as c:
            c.execute(
                "INSERT INTO job_leases(job, holder, acquired_at, expires_at) VALUES ('expire', ?, ?, ?)",
                (other, now, now + lease),
            )
            c.execute(
                "INSERT INTO job_runs(job, started_at, status, holder) VALUES ('expire', ?, 'running', ?)", (now, other)
            )
        run = s.run_job("expire")
        assert run.status == "skipped" and run.error == f"lease held by {other}" and run.id is None
        clock.advance(lease)  # not renewed for lease_seconds: its holder is gone
        run = s.run_job("expire")
        assert run.status == "ok" and run.holder != other
        rows = s._core.backend.execute("SELECT holder, status, error FROM job_runs ORDER BY id").fetchall()
        assert [tuple(r) for r in rows] == [
            (other, "failed", "lease expired: holder died"),
            (run.holder, "ok", None),
        ]
        assert _count(s, "job_leases") == 0  # released after the run


def test_the_same_holder_may_run_again_while_its_lease_stands(db, clock):
    with MemoryStore(db, clock=clock) as s:
        me = "this-host:1:0000beef"
        with s._core.backend.write() as c:
            c.execute(
                "INSERT INTO job_leases(job, holder, acquired_at, expires_at) VALUES ('expire', ?, ?, ?)",
                (me, clock(), clock() + 60),
            )
        assert s.run_job("expire", holder=me).status == "ok"


def test_a_failing_job_is_recorded_with_its_redacted_error_and_raised(db, clock, monkeypatch):
    from harness_memory import jobs

    def broken(store, **_):
        raise RuntimeError("cannot reach postgresql://admin:hunter2secret@db.internal/prod")

    monkeypatch.setitem(jobs.JOBS, "expire", broken)
    with MemoryStore(db, clock=clock) as s:
        with pytest.raises(RuntimeError):
            s.run_job("expire")
        status, error, counts = s._core.backend.execute("SELECT status, error, counts FROM job_runs").fetchone()
        assert status == "failed" and error.startswith("RuntimeError: cannot reach")
        assert "hunter2secret" not in error and json.loads(counts) == {"committed_before_stop": True}
        assert _count(s, "job_leases") == 0


def test_job_status_lists_runs_newest_first_leases_and_the_last_run_of_each_job(db, clock):
    from harness_memory.jobs import job_status

    with MemoryStore(db, clock=clock) as s:
        s.run_job("expire")
        clock.advance(10)
        s.run_job("decay")
        clock.advance(10)
        s.run_job("expire")
        st = job_status(s, limit=2)
        assert [r["job"] for r in st["runs"]] == ["expire", "decay"]
        assert st["leases"] == []
        assert set(st["last"]) == {"expire", "decay"}
        last = st["last"]["expire"]
        assert last["started_at"] == pytest.approx(clock()) and last["finished_at"] == pytest.approx(clock())
        assert last["status"] == "ok" and json.loads(last["counts"])["expired"] == 0
        assert st["last"]["decay"]["status"] == "ok"
        assert {r["job"]: r["holder"] for r in st["runs"]}["decay"].startswith(socket.gethostname() + ":")
        assert len(job_status(s)["runs"]) == 3


def test_the_reflect_job_uses_the_summariser_the_settings_name(db, clock, caplog):
    import logging

    st_ = Settings(
        summariser="openai:m", summariser_base_url="http://127.0.0.1:9/v1", maintenance={"reflect_idle_minutes": 1}
    )
    with MemoryStore(db, clock=clock, settings=st_) as s:
        _episodes(s, "t1")
        clock.advance(120)
        with caplog.at_level(logging.WARNING):
            run = s.run_job("reflect")
        # the named summariser was asked (nothing listens there): the thread is reflected offline instead
        assert run.status == "ok" and run.counts["memories"] > 0
        assert "http://127.0.0.1:9/v1" in caplog.text and "extractively" in caplog.text


def test_a_holder_naming_no_real_process_of_this_host_is_gone():
    from harness_memory.jobs.runner import holder_gone, new_holder, pid_alive

    host = new_holder().split(":")[0]
    for pid in (0, -1):  # os.kill(0, ...) would signal our own process group: never a holder's pid
        assert pid_alive(pid) is False
        assert holder_gone(f"{host}:{pid}:cafe")
    assert not holder_gone(f"{host}:notapid:cafe")  # not a holder this host wrote: cannot tell
    assert not holder_gone(f"{host}:1:cafe")  # pid 1 runs


@pytest.mark.parametrize(
    ("raised", "alive"),
    [(ProcessLookupError, False), (PermissionError, True), (OSError, True)],
)
def test_whether_a_holder_process_lives_follows_what_the_system_answers(monkeypatch, raised, alive):
    from harness_memory.jobs import runner

    def kill(pid, sig):
        raise raised()

    monkeypatch.setattr(runner.os, "kill", kill)
    # no such process: gone; another user's process: alive; no answer: assumed alive (the lease expires anyway)
    assert runner.pid_alive(424242) is alive


def test_a_holder_that_exited_but_was_not_reaped_is_gone():
    import os
    import subprocess
    import sys
    from pathlib import Path

    from harness_memory.jobs.runner import holder_gone, new_holder, pid_alive

    p = subprocess.Popen([sys.executable, "-c", "pass"])
    try:
        # wait until it has exited without reaping it (WNOWAIT): a zombie, its parent has not waited for it
        os.waitid(os.P_PID, p.pid, os.WEXITED | os.WNOWAIT)
        assert Path(f"/proc/{p.pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0] == b"Z"
        assert not pid_alive(p.pid)
        assert holder_gone(f"{new_holder().split(':')[0]}:{p.pid}:cafe")
    finally:
        p.wait()


def test_without_proc_a_process_the_system_knows_is_alive(monkeypatch):
    import os

    from harness_memory.jobs import runner

    def no_proc(*a, **k):
        raise FileNotFoundError("/proc is not mounted")

    monkeypatch.setattr(runner, "open", no_proc, raising=False)
    assert runner.pid_alive(os.getppid()) is True


@pytest.mark.parametrize(
    ("lease", "heartbeat", "every"),
    [(60.0, None, 20.0), (9.0, None, 3.0), (60.0, 5.0, 5.0), (60.0, 45.0, 30.0)],
)
def test_a_running_job_renews_its_lease_every_third_of_it_or_as_configured_at_most_every_half(
    tmp_path, lease, heartbeat, every
):
    from harness_memory.jobs.runner import _Heartbeat

    st_ = Settings(maintenance=MaintenanceSettings(lease_seconds=lease, lease_heartbeat_seconds=heartbeat))
    with MemoryStore(tmp_path / "hb.db", settings=st_) as s:
        assert _Heartbeat(s, "expire", "h:1:x").every == pytest.approx(every)


@pytest.mark.parametrize("storage_error", [False, True])
def test_a_heartbeat_that_cannot_open_the_database_says_so(tmp_path, caplog, monkeypatch, storage_error):
    import logging

    from harness_memory.errors import StorageError
    from harness_memory.jobs.runner import _Heartbeat

    with MemoryStore(tmp_path / "hb.db") as s:
        b = s._core.backend

        def broken():
            raise StorageError("no space left") if storage_error else b.DatabaseError("disk I/O error")

        monkeypatch.setattr(b, "fork", broken)
        with caplog.at_level(logging.WARNING, logger="harness_memory.jobs"):
            _Heartbeat(s, "expire", "h:1:x").start().stop()
        said = "no space left" if storage_error else "DatabaseError"
        assert f"lease heartbeat for expire cannot open the database: {said}" in caplog.text


def test_expire_keeps_log_rows_and_tool_calls_of_exactly_their_retention_age(db, clock):
    s, _keep, logged = _aged_store(db, clock, access_log_retention_days=10, tool_call_retention_days=5)
    with s:
        clock.advance(5 * DAY)
        assert s.run_job("expire", dry_run=True).counts["tool_calls_pruned"] == 0
        clock.advance(1)
        assert s.run_job("expire", dry_run=True).counts["tool_calls_pruned"] == 1
        clock.advance(5 * DAY - 1)  # 10 days exactly
        assert s.run_job("expire").counts == {"expired": 0, "log_rows_pruned": 0, "tool_calls_pruned": 1}
        clock.advance(1)
        assert s.run_job("expire").counts["log_rows_pruned"] == logged


def test_a_job_run_leaves_no_heartbeat_thread_behind(tmp_path):
    import threading

    with MemoryStore(tmp_path / "t.db") as s:
        for _ in range(5):
            assert s.run_job("expire").status == "ok"
            assert not [t for t in threading.enumerate() if t.name == "lease-expire" and t.is_alive()]


@pytest.mark.parametrize("after_tool_calls", [False, True])
def test_an_expire_run_stopped_midway_records_what_it_had_pruned(db, clock, monkeypatch, after_tool_calls):
    import importlib

    expire_module = importlib.import_module("harness_memory.jobs.expire")  # the module, not the function
    real = expire_module.delete_rows

    def stop_at_tool_calls(store, table, *a, **k):
        if table == "tool_calls":
            if after_tool_calls:
                real(store, table, *a, **k)
            raise RuntimeError("stopped")
        return real(store, table, *a, **k)

    monkeypatch.setattr(expire_module, "delete_rows", stop_at_tool_calls)
    s, _keep, logged = _aged_store(db, clock, access_log_retention_days=10, tool_call_retention_days=5)
    with s:
        clock.advance(11 * DAY)
        with pytest.raises(RuntimeError):
            s.run_job("expire")
        status, counts = s._core.backend.execute("SELECT status, counts FROM job_runs").fetchone()
        assert status == "failed"
        want = {"log_rows_pruned": logged, "committed_before_stop": True}
        if after_tool_calls:
            want["tool_calls_pruned"] = 1
        assert json.loads(counts) == want


def test_compact_purges_the_vectors_a_bulk_delete_left_and_its_dry_run_only_counts_them(tmp_path, clock):
    from conftest import table_snapshot

    with MemoryStore(tmp_path / "p.db", clock=clock) as s:
        s.remember_many([{"content": f"note {i} about disks", "type": "success", "agent_id": "b"} for i in range(40)])
        s.remember("a note that stays", type="success", agent_id="a")
        assert s.forget_all("b") == 40
        left = s._core.backend.removed_vectors()
        assert left > 0  # the bulk delete left them to compact
        before = table_snapshot(s)
        plan = s.run_job("compact", dry_run=True).counts
        assert plan["vectors_purged"] == left and table_snapshot(s) == before  # a plan changes nothing
        out = s.run_job("compact").counts
        assert out["vectors_purged"] == left and out["vector_rows"] == 1
        assert s._core.backend.removed_vectors() == 0
        assert s.run_job("compact").counts["vectors_purged"] == 0


@pytest.mark.parametrize("step", ["purge_removed_vectors", "rebuild_vectors"])
def test_a_compact_run_stopped_midway_records_what_its_batches_had_committed(tmp_path, clock, monkeypatch, step):
    with MemoryStore(tmp_path / "k.db", clock=clock) as s:
        s.remember_many([{"content": f"note {i} about disks", "type": "success", "agent_id": "b"} for i in range(20)])
        s.forget_all("b")  # leaves vectors for compact to purge
        b = s._core.backend

        def commit_some_then_stop(batches=None, progress=None):
            progress(7)  # a batch of 7 committed, then the process is stopped
            raise RuntimeError("stopped")

        monkeypatch.setattr(b, step, commit_some_then_stop)
        with pytest.raises(RuntimeError):
            s.run_job("compact", force=True)
        counts = json.loads(b.execute("SELECT counts FROM job_runs").fetchone()[0])
        kind = "vectors_purged" if step == "purge_removed_vectors" else "rebuilt"
        assert counts[kind] == 7 and counts["committed_before_stop"] is True


def test_compact_rewrites_a_stale_index_snapshot(tmp_path, clock, monkeypatch):
    from harness_memory import vector_index

    monkeypatch.setattr(vector_index, "SNAPSHOT_MIN_ROWS", 50)
    monkeypatch.setattr(vector_index, "SQL_EXACT_MAX_ROWS", 10)
    path = tmp_path / "snap.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many([{"content": f"note {i} about disks", "type": "success", "agent_id": "a"} for i in range(80)])
    with MemoryStore(path, clock=clock) as s:
        s.recall("note about disks", agent_id="a", record=False)  # loads the index: its snapshot is written
        assert vector_index.sidecar_path(path).exists()
        s.remember_many(
            [{"content": f"later note {i} on queues", "type": "success", "agent_id": "a"} for i in range(60)]
        )
        first = s.run_job("compact").counts
        assert first["snapshot_written"] == 1  # more rows changed since than it may lag: rewritten
        assert s.run_job("compact").counts["snapshot_written"] == 0  # current now


# -- resign ------------------------------------------------------------------------------------------
def test_resign_after_a_method_change_plans_then_moves_and_records_the_method(db, clock):
    from harness_memory.error_signatures import SIGNATURE_METHOD

    with MemoryStore(db, clock=clock) as s:
        s.learn_success("a", "pip install pyyaml", error="ModuleNotFoundError: No module named 'yaml'")
        with s._core.backend.write() as c:  # as if signed by an older method
            c.execute(
                "INSERT INTO signature_state(id, method, updated_at) VALUES (1, 1, 0) "
                "ON CONFLICT(id) DO UPDATE SET method = excluded.method, updated_at = excluded.updated_at"
            )
        plan = s.run_job("resign", dry_run=True).counts
        assert set(plan) == {"signatures", "changed", "up_to_date", "fix_kinds"}
        assert plan["signatures"] == 1 and plan["changed"] == 0 and plan["up_to_date"] == 0
        run = s.run_job("resign").counts
        assert set(run) == {"signatures", "changed", "up_to_date", "fix_kinds"}
        assert run["signatures"] == 1 and run["up_to_date"] == 0
        method = s._core.backend.execute("SELECT method FROM signature_state").fetchone()[0]
        assert method == SIGNATURE_METHOD
        assert s.run_job("resign").counts == {"signatures": 0, "changed": 0, "up_to_date": 1, "fix_kinds": 0}


@pytest.mark.parametrize(
    "error",
    [
        # an environment error is signed without its key frame, a code error with it, a recursion with it too:
        # re-signing from what a memory kept must decide the same way, or every such row would move
        'Traceback (most recent call last):\n  File "/srv/app/sync.py", line 12, in pull\n    fetch(url)\n'
        "ConnectionRefusedError: [Errno 111] Connection refused",
        'Traceback (most recent call last):\n  File "/srv/app/sync.py", line 30, in merge\n    row["tz"]\n'
        "KeyError: 'tz'",
        'Traceback (most recent call last):\n  File "/srv/app/tree.py", line 8, in walk\n    walk(n)\n'
        "RecursionError: maximum recursion depth exceeded",
    ],
)
def test_resign_with_an_unchanged_method_leaves_every_kind_of_signature_where_it_is(db, clock, error):
    with MemoryStore(db, clock=clock) as s:
        m = s.learn_success("a", "the fix", error=error)
        assert m.error_signature == s.error_signature(error).id
        with s._core.backend.write() as c:  # as if signed by an older method: every stored id is re-signed
            c.execute(
                "INSERT INTO signature_state(id, method, updated_at) VALUES (1, 1, 0) "
                "ON CONFLICT(id) DO UPDATE SET method = excluded.method, updated_at = excluded.updated_at"
            )
        run = s.run_job("resign").counts
        assert run["signatures"] == 1 and run["changed"] == 0
        assert s.get(m.id).error_signature == s.error_signature(error).id


# -- batches -----------------------------------------------------------------------------------------
def test_a_batch_grows_while_it_holds_the_lock_under_half_its_target_and_shrinks_when_over_it():
    from harness_memory.jobs.batches import Batcher

    b = Batcher(0.05, start=50, lo=10, hi=400)
    b.record(0.01)  # under half the target: double
    assert b.size == 100
    b.record(0.024)  # just under half: double again
    assert b.size == 200
    b.record(0.1)  # twice the target: half
    assert b.size == 100
    b.record(0.03)  # between half and the whole target: kept
    assert b.size == 100
    b.record(0.05)  # at the target: kept
    assert b.size == 100
    b.record(0.2)  # four times the target: a quarter
    assert b.size == 25
    b.record(10.0)  # never below lo
    assert b.size == 10
    for _ in range(10):
        b.record(0.0)
    assert b.size == 400  # never above hi
    assert Batcher(0.05, start=5, lo=10, hi=400).size == 10 and Batcher(0.05, start=999, lo=10, hi=400).size == 400


def test_what_a_job_counts_stays_with_that_job():
    from harness_memory.jobs.batches import tally, tallying

    with tallying() as first:
        tally("rebuilt", 3)
        tally("rebuilt", 0)
    tally("rebuilt", 5)  # outside any job: counted nowhere
    with tallying() as second:
        tally("purged", 2)
    assert first == {"rebuilt": 3} and second == {"purged": 2}


@pytest.mark.parametrize(
    ("search", "threshold", "purged_at_once"), [("vec0", 5, True), ("vec0", 40, False), ("memory", 5, False)]
)
def test_a_bulk_delete_purges_its_vectors_at_once_only_when_recall_searches_vec0_past_the_bound(
    tmp_path, clock, monkeypatch, search, threshold, purged_at_once
):
    from harness_memory import sqlite_backend

    monkeypatch.setattr(sqlite_backend, "VEC0_PURGE_AT", threshold)
    with MemoryStore(tmp_path / "v.db", clock=clock, settings=Settings(vector_search=search)) as s:
        s.remember_many([{"content": f"note {i} about disks", "type": "success", "agent_id": "b"} for i in range(20)])
        assert s.forget_all("b") == 20
        assert (s._core.backend.removed_vectors() == 0) is purged_at_once
