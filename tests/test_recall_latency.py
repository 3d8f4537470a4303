"""Recall latency in the access log (migration 0016): one duration per recorded recall, on both backends."""

from __future__ import annotations

import math

from harness_memory import MemoryStore
from harness_memory.testing import ManualClock

WEEK = 604_800.0


def _nearest_rank(values: list[float], p: float) -> float:
    xs = sorted(values)
    return xs[max(1, math.ceil(p * len(xs))) - 1]


def test_a_recall_logs_its_duration_once(store):
    for k in range(5):
        store.remember(f"the build cache on runner {k} needs pruning weekly", type="decision", agent_id="a")
    hits = store.recall("build cache pruning", agent_id="a", limit=3)
    assert len(hits) == 3
    assert store._core.access.wait_written()  # written by the store's access thread
    b = store._core.backend
    rows = b.execute(
        "SELECT memory_id, duration_ms FROM memory_access_log WHERE access_type = 'query' ORDER BY id"
    ).fetchall()
    assert [r[0] for r in rows] == [h.memory.id for h in hits]
    assert rows[0][1] is not None and 0 < rows[0][1] < 60_000  # the top hit's row carries the recall's wall time
    assert [r[1] for r in rows[1:]] == [None, None]
    store.recall("build cache pruning", agent_id="a", limit=3, record=False)  # not an access: nothing logged
    store.recall("nothing matches zzqx", agent_id="a", channels=["keyword"])  # no hits: no rows
    assert store._core.access.wait_written()
    view = b.execute("SELECT top_memory_id, agent_id, duration_ms FROM v_recall_latency").fetchall()
    assert [tuple(r) for r in view] == [(hits[0].memory.id, "a", rows[0][1])]
    # other access rows carry no duration
    store.apply(hits[0].memory.id, helpful=True, agent_id="a")
    assert b.execute("SELECT COUNT(*) FROM memory_access_log WHERE duration_ms IS NOT NULL").fetchone()[0] == 1


def test_weekly_view_is_nearest_rank_over_each_weeks_recalls(db):
    clock = ManualClock(1_700_000_000.0)
    with MemoryStore(db, clock=clock) as s:
        for k in range(4):
            s.remember(f"a flaky integration test number {k} needs a retry", type="failure", agent_id="a")
        for _week in range(3):
            for _ in range(7):
                s.recall("flaky integration test", agent_id="a", limit=2)
            clock.advance(WEEK)
        assert s._core.access.wait_written()  # (each row with its recall's time, whenever written)
        b = s._core.backend
        rows = b.execute("SELECT timestamp, duration_ms FROM v_recall_latency").fetchall()
        assert len(rows) == 21
        weeks: dict[float, list[float]] = {}
        for ts, ms in rows:
            weeks.setdefault((ts - 345_600) // WEEK * WEEK + 345_600, []).append(ms)
        view = b.execute("SELECT week_start, recalls, p50_ms, p95_ms, max_ms FROM v_recall_latency_by_week").fetchall()
        assert [(float(r[0]), r[1]) for r in view] == [(w, 7) for w in sorted(weeks)]
        for w, _n, p50, p95, mx in view:
            got = weeks[float(w)]
            assert (p50, p95, mx) == (_nearest_rank(got, 0.5), _nearest_rank(got, 0.95), max(got))
