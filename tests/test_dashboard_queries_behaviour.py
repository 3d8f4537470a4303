"""The dashboard's reads as a page shows them (issue 18), on a small real SQLite store: a memory's merge
history, the relevance histogram's last bin, the memories counted per error signature, and the caches
(the weeks before the current one re-read every 10 minutes, docs/dashboard.md; everything at once after a
write through the dashboard)."""

from __future__ import annotations

import types

import pytest

from harness_memory import MemoryStore
from harness_memory.dashboard import queries as dq
from harness_memory.dashboard.queries import Queries
from harness_memory.testing import FakeEmbedder, ManualClock

WEEK = 7 * 86400


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def s(tmp_path, clock):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(16), clock=clock) as st:
        yield st


def test_a_memorys_merges_say_how_each_copy_was_merged(s):
    m = s.remember("restart the flaky runner", type="success", agent_id="a")
    assert s.remember("restart the flaky runner", type="success", agent_id="a").id == m.id
    assert s.remember("Restart the flaky runner", type="success", agent_id="a").id == m.id
    newest, first = Queries(s).merges(m.id)
    assert (first["kind"], first["similarity"], first["content"]) == ("exact", 1.0, "restart the flaky runner")
    assert newest["kind"] == "near" and 0.9 < newest["similarity"] <= 1.0
    assert newest["content"] == "Restart the flaky runner" and newest["agent_id"] == "a"


def test_the_relevance_histogram_puts_a_full_score_in_the_last_bin(s):
    kept = s.remember("fresh and kept", type="success", agent_id="a")
    gone = s.remember("fresh then archived", type="success", agent_id="a")
    s.archive(gone.id)
    assert s.get(kept.id).relevance_score == 1.0
    bins = Queries(s).relevance_histogram(bins=4)
    assert [(lo, hi) for lo, hi, _, _ in bins] == [(0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 1.0)]
    live, archived = sum(b[2] for b in bins), sum(b[3] for b in bins)
    assert live == 1 and archived == 1
    assert bins[-1][2] == 1


def test_top_signatures_count_the_memories_that_carry_each_error(s):
    err = "ModuleNotFoundError: No module named 'yaml'"
    s.learn_error("a", err, "pip install pyyaml")
    s.record_outcome("t1", "retry", False, error=err)
    (top,) = Queries(s).top_signatures()
    assert top["sig"] == s.error_signature(err).id
    assert (top["tasks"], top["retries"]) == (1, 1)
    carrying = s._core.backend.execute(
        "SELECT COUNT(*) FROM memories WHERE error_signature = ?", (top["sig"],)
    ).fetchone()[0]
    assert top["memories"] == carrying >= 2


class _Monotonic:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def _past_week_failures(q: Queries, since: float) -> int:
    return sum(n for wk, n, _ in q.weekly(q.weekly_failures, since) if wk < dq.week_start(q.now()))


def test_past_weeks_are_re_read_after_ten_minutes_and_after_a_write_through_the_dashboard(s, clock, monkeypatch):
    mono = _Monotonic()
    monkeypatch.setattr(dq, "time", types.SimpleNamespace(monotonic=mono))  # the cache's clock only
    since = clock() - 1
    s.record_outcome("t1", "retry", False, error="TimeoutError: read timed out after 30 s")
    clock.advance(2 * WEEK)  # that failure is in a past week now
    q = Queries(s)
    assert _past_week_failures(q, since) == 1
    s.record_outcome("t0", "retry", False, error="PermissionError: [Errno 13] /var/run/app.sock")
    with s._core.backend.write() as c:  # a failure recorded late, dated into that past week
        c.execute("UPDATE task_attempts SET attempted_at = ? WHERE task_id = 't0'", (since + 1,))
    mono.t += 599
    assert _past_week_failures(q, since) == 1  # kept for 10 minutes
    mono.t += 2
    assert _past_week_failures(q, since) == 2  # then read afresh
    with s._core.backend.write() as c:
        c.execute("DELETE FROM task_attempts WHERE task_id = 't0'")
    assert _past_week_failures(q, since) == 2
    q.forget_cache()  # a write through the dashboard: every page reads afresh
    assert _past_week_failures(q, since) == 1


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request, tmp_path, clock):
    """A store on each backend; on PostgreSQL with sorts discouraged (``enable_sort=off`` in the URL's
    options), so the planner groups by hashing, whose groups come in no particular order."""
    if request.param == "sqlite":
        with MemoryStore(tmp_path / "m.db", clock=clock) as st:
            yield st
        return
    import pgtestdb

    _, schema = pgtestdb.new_schema()
    try:
        with MemoryStore(pgtestdb.with_schema(pgtestdb.base_url(), schema, enable_sort="off"), clock=clock) as st:
            yield st
    finally:
        pgtestdb.drop_schema(schema)


def test_the_weekly_rows_of_one_week_come_in_one_order_on_every_backend(any_store, clock):
    """Within a week the rows are ordered by their keys, so the weeks read from the cache and the live
    week joined together equal one read of every week (a hash aggregate returns groups in any order:
    ordering by the week alone let the two reads differ on PostgreSQL)."""
    import random

    store = any_store
    rng = random.Random(7)
    pairs = [(t, a) for t in ("success", "failure", "decision") for a in ("ops", "build", "test", "api")]
    techniques = ["retry", "clear_cache", "pin_version", "bump_timeout", "reinstall"]
    for week in range(3):
        rng.shuffle(pairs)
        # enough rows per group that the planner hashes the groups (measured: 2 a group did not)
        store.remember_many(
            [
                {"content": f"week {week} note {i} from {a}: {t} {rng.random()}", "type": t, "agent_id": a}
                for i, (t, a) in enumerate(pairs * 25)
            ]
        )
        for i in range(12):
            store.record_outcome(f"w{week}-t{i}", rng.choice(techniques), i % 3 == 0, error=f"E{i % 4} broke")
        clock.advance(WEEK)
    q = Queries(store)
    created, selected = q.weekly_created(0.0), q.weekly_selections(0.0)
    assert len(created) >= 3 * len(pairs) and created == sorted(created)
    assert len({wk for wk, *_ in selected}) == 3 and selected == sorted(selected)
    for fn in (q.weekly_created, q.weekly_selections):
        assert q.weekly(fn, 0.0) == fn(0.0)
    cats = q.categories()
    assert cats == sorted(cats, key=lambda c: (-c[1], c[0]))
