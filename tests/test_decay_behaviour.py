"""The decay job as a user sees it (jobs/decay.py, docs/maintenance.md): relevance falls by
(1 - rate) ** days with per-type rates and exemptions, never below the floor and never raised;
pinned and archived memories are left alone; long-unused faint memories are archived (and drop out
of recall); a dry run changes nothing and reports what would be archived; the progress callback
sees every batch; a store of many memories is decayed in batches, every memory exactly once."""

from __future__ import annotations

import pytest

from conftest import table_snapshot
from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings

DAY = 86400.0


def open_store(db, clock, **maintenance):
    cfg = Settings(extra_types=["discovery"], maintenance=MaintenanceSettings(**maintenance))
    return MemoryStore(db, settings=cfg, clock=clock)


def relevance(s, mid):
    return s.get(mid).relevance_score


def test_relevance_falls_by_the_daily_rate_per_type_and_exempt_types_keep_theirs(db, clock):
    with open_store(
        db,
        clock,
        decay_rate_per_day=0.02,
        decay_rates={"failure": 0.1, "success": 0.0},
        decay_exempt_types=["decision"],
    ) as s:
        ids = {
            t: s.remember(f"a {t} about the deploy pipeline {t}", type=t, agent_id="a").id
            for t in ("failure", "success", "decision", "discovery")
        }
        clock.advance(10 * DAY)
        run = s.run_job("decay")
        assert run.status == "ok" and run.counts["decayed"] == 4
        assert relevance(s, ids["failure"]) == pytest.approx(0.9**10)
        assert relevance(s, ids["discovery"]) == pytest.approx(0.98**10)
        assert relevance(s, ids["success"]) == pytest.approx(1.0)  # a rate of 0 exempts the type
        assert relevance(s, ids["decision"]) == pytest.approx(1.0)


def test_without_per_type_rates_every_type_uses_the_default_rate(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.05, decay_exempt_types=[]) as s:
        a = s.remember("a decision about caching", type="decision", agent_id="a").id
        b = s.remember("a failure of the cache", type="failure", agent_id="a").id
        clock.advance(4 * DAY)
        s.run_job("decay")
        assert relevance(s, a) == pytest.approx(0.95**4) == pytest.approx(relevance(s, b))


def test_decay_never_goes_below_the_floor_and_never_raises_a_memory_below_it(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.5, decay_floor=0.3, archive_below=0.0) as s:
        m = s.remember("flaky network in the integration job", type="failure", agent_id="a").id
        clock.advance(1 * DAY)
        s.run_job("decay")
        assert relevance(s, m) == pytest.approx(0.5)
        clock.advance(30 * DAY)
        s.run_job("decay")
        assert relevance(s, m) == pytest.approx(0.3)  # the floor, not 0.5 ** 31
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET relevance_score = 0.2 WHERE id = ?", (m,))
        clock.advance(5 * DAY)
        s.run_job("decay")
        assert relevance(s, m) == pytest.approx(0.2)  # below the floor already: left alone, not raised


def test_pinned_and_archived_memories_do_not_decay(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.1) as s:
        pinned = s.remember("always run migrations before deploy", type="failure", agent_id="a").id
        archived = s.remember("old flaky test in module x", type="failure", agent_id="a").id
        plain = s.remember("the cache must be warmed after deploy", type="failure", agent_id="a").id
        s.pin(pinned)
        s.archive(archived, agent_id="a")
        before_archived = relevance(s, archived)
        clock.advance(3 * DAY)
        run = s.run_job("decay")
        assert run.counts["decayed"] == 1
        assert relevance(s, pinned) == pytest.approx(1.0)
        assert relevance(s, archived) == pytest.approx(before_archived)
        assert relevance(s, plain) == pytest.approx(0.9**3)


def test_decay_counts_time_from_the_last_decay_not_from_creation(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.1) as s:
        m = s.remember("disk fills up during the nightly build", type="failure", agent_id="a").id
        clock.advance(2 * DAY)
        s.run_job("decay", min_interval=0)
        clock.advance(3 * DAY)
        s.run_job("decay", min_interval=0)
        assert relevance(s, m) == pytest.approx(0.9**5)
        s.run_job("decay", min_interval=0)  # no time passed: nothing more
        assert relevance(s, m) == pytest.approx(0.9**5)


def test_many_memories_are_decayed_in_batches_each_exactly_once_with_progress(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.1) as s:
        mems = s.remember_many(
            [
                {
                    "content": f"distinct failure number {i} in service {i * 7919 % 1000}",
                    "type": "failure",
                    "agent_id": "a",
                }
                for i in range(650)
            ]
        )
        s.pin(mems[0].id)
        clock.advance(2 * DAY)
        calls = []
        run = s.run_job("decay", progress=lambda done, total: calls.append((done, total)))
        assert run.counts["decayed"] == 649
        values = {round(m.relevance_score, 9) for m in (s.get(x.id) for x in mems[1:])}
        assert values == {round(0.9**2, 9)}
        assert relevance(s, mems[0].id) == pytest.approx(1.0)
        assert len(calls) >= 2  # more than one batch
        assert calls[-1] == (650, 650)
        assert all(t == 650 for _, t in calls)
        assert [d for d, _ in calls] == sorted(d for d, _ in calls) and calls[0][0] < 650


def test_a_dry_run_changes_nothing_and_reports_what_would_be_archived(db, clock):
    with open_store(db, clock, decay_rate_per_day=0.2, decay_floor=0.0, archive_after_days=30, archive_below=0.5) as s:
        ids = [
            s.remember(f"stale note {i} about the legacy queue {i}", type="failure", agent_id="a").id for i in range(3)
        ]
        clock.advance(40 * DAY)
        s.run_job("decay")  # relevance now 0.8 ** 40: faint and unused for 40 days
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET archived = 0, relevance_score = 0.1")
        before = table_snapshot(s)
        calls = []
        run = s.run_job("decay", dry_run=True, progress=lambda d, t: calls.append(d))
        assert run.status == "dry_run"
        assert run.counts == {"decayed": 0, "archived": 3}
        assert table_snapshot(s) == before
        assert calls == []
        assert not any(s.get(i).archived for i in ids)


def test_long_unused_faint_memories_are_archived_and_leave_recall(db, clock):
    with open_store(
        db,
        clock,
        decay_rate_per_day=0.05,
        decay_floor=0.0,
        archive_after_days=60,
        archive_below=0.2,
        archived_relevance=0.01,
        decay_exempt_types=["decision"],
    ) as s:
        faint = s.remember("the legacy deploy script needs python2", type="failure", agent_id="a").id
        used = s.remember("the yaml parser of the legacy deploy script rejects tabs", type="failure", agent_id="a").id
        exempt = s.remember("we decided the legacy deploy script stays", type="decision", agent_id="a").id
        pinned = s.remember("the legacy deploy script is owned by ops", type="failure", agent_id="a").id
        s.pin(pinned)
        clock.advance(50 * DAY)
        (hit,) = s.recall("yaml parser rejects tabs", agent_id="a", limit=1)  # an access 50 days in
        assert hit.memory.id == used
        clock.advance(30 * DAY)  # 80 days: faint is 0.95 ** 80 = 0.017
        run = s.run_job("decay")
        assert run.counts["archived"] == 1
        got = s.get(faint)
        assert got.archived and got.relevance_score == pytest.approx(0.01)
        assert not s.get(used).archived and not s.get(exempt).archived and not s.get(pinned).archived
        hits = [h.memory.id for h in s.recall("legacy deploy script", agent_id="a", limit=10)]
        assert faint not in hits and used in hits and exempt in hits


def test_a_memory_above_the_archive_threshold_or_recently_used_is_kept(db, clock):
    with open_store(
        db, clock, decay_rate_per_day=0.001, decay_floor=0.0, archive_after_days=10, archive_below=0.5
    ) as s:
        bright = s.remember("bright memory about the build matrix", type="failure", agent_id="a").id
        clock.advance(20 * DAY)
        run = s.run_job("decay")
        assert run.counts["archived"] == 0 and not s.get(bright).archived


def test_a_type_with_a_zero_rate_is_never_archived(db, clock):
    with open_store(
        db,
        clock,
        decay_rate_per_day=0.5,
        decay_rates={"success": 0.0},
        decay_floor=0.0,
        archive_after_days=5,
        archive_below=0.9,
    ) as s:
        keep = s.remember("what worked for the flaky upload", type="success", agent_id="a").id
        gone = s.remember("the flaky upload failed again", type="failure", agent_id="a").id
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET relevance_score = 0.3")
        clock.advance(10 * DAY)
        s.run_job("decay")
        assert not s.get(keep).archived and s.get(gone).archived


def test_a_decay_stopped_mid_run_records_what_it_committed_and_the_next_run_finishes(db, clock):
    import json

    with open_store(db, clock, decay_rate_per_day=0.1) as s:
        mems = s.remember_many(
            [
                {
                    "content": f"failure {i} of the flaky suite in shard {i * 31 % 97}",
                    "type": "failure",
                    "agent_id": "a",
                }
                for i in range(600)
            ]
        )
        clock.advance(DAY)

        def stop(done, total):
            raise RuntimeError("operator pressed stop")

        with pytest.raises(RuntimeError):
            s.run_job("decay", progress=stop)
        last = s.job_status()["last"]["decay"]
        counts = json.loads(last["counts"]) if isinstance(last["counts"], str) else last["counts"]
        decayed = [m.id for m in mems if s.get(m.id).relevance_score < 1.0]
        assert last["status"] == "failed" and counts["committed_before_stop"] is True
        assert counts["decayed"] == len(decayed) and 0 < len(decayed) < 600
        run = s.run_job("decay", min_interval=0)
        assert run.status == "ok" and run.counts["decayed"] == 600
        assert {round(s.get(m.id).relevance_score, 9) for m in mems} == {round(0.9, 9)}


class _Geometry:
    """``[arch N]``: cosine 0.8 to the query and 0.64 to each other; ``[live]``: cosine 0.5 to the query."""

    name, dimensions = "geometry:128", 128

    def embed_batch(self, texts):
        import numpy as np

        out = np.zeros((len(texts), 128), dtype=np.float32)
        for i, t in enumerate(texts):
            if "[arch " in t:
                out[i, 0], out[i, 1 + int(t.split("[arch ")[1].split("]")[0])] = 0.8, 0.6
            elif "[live]" in t:
                out[i, 0], out[i, 127] = 0.5, 0.75**0.5
            else:
                out[i, 0] = 1.0
        return out


def test_archived_memories_leave_the_vector_index_so_they_do_not_crowd_out_live_ones(tmp_path, clock):
    cfg = Settings(
        vector_search="vec0",
        maintenance=MaintenanceSettings(
            decay_rate_per_day=0.5, decay_floor=0.0, archive_after_days=10, archive_below=0.2
        ),
    )
    with MemoryStore(tmp_path / "v.db", settings=cfg, clock=clock, embedder=_Geometry()) as s:
        s.remember_many([{"content": f"old note [arch {i}]", "type": "failure", "agent_id": "a"} for i in range(60)])
        clock.advance(30 * DAY)
        assert s.run_job("decay").counts["archived"] == 60
        live = s.remember("current note [live]", type="failure", agent_id="a")
        hits = s.recall("the query", agent_id="a", channels={"vector"}, limit=1, record=False)
        assert [h.memory.id for h in hits] == [live.id]
