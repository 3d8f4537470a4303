"""Bulk jobs and deletes commit in bounded batches (issue 17): many short transactions, the same
result as one long one, resumable after an interruption, and deletes linear in the rows deleted."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.testing import ManualClock

DAY = 86400.0


_WORDS = [
    f"{a}{b}"
    for a in ("ka", "lo", "mi", "nu", "pe", "ro", "si", "tu", "va", "ze")
    for b in ("bar", "dex", "fim", "gol", "hup", "jen", "kor", "lum", "mos", "nix")
]


def _fill(store: MemoryStore, n: int, *, ttl: float | None = None, seed: int = 0) -> None:
    """``n`` memories of distinct random words (no two near-duplicates)."""
    import random

    rng = random.Random(seed)
    items = [
        {
            "content": " ".join(rng.sample(_WORDS, 12)),
            "type": "success",
            "agent_id": f"a{i % 3}",
            **({"ttl": ttl} if ttl else {}),
        }
        for i in range(n)
    ]
    for k in range(0, n, 500):
        store.remember_many(items[k : k + 500])


def _settings(batch_seconds: float) -> Settings:
    return Settings(maintenance=MaintenanceSettings(job_batch_seconds=batch_seconds, archive_after_days=30))


class _Counting:
    """Counts the write transactions a backend opens."""

    def __init__(self, backend, fail_after: int | None = None):
        self.backend, self.calls, self.fail_after = backend, 0, fail_after
        self.inner = backend.write

    def __call__(self, *a, **k):
        self.calls += 1
        if self.fail_after is not None and self.calls > self.fail_after:
            raise KeyboardInterrupt("interrupted mid-job")
        return self.inner(*a, **k)


def _relevances(store: MemoryStore) -> list[tuple]:
    return store._core.backend.execute(
        "SELECT uid, ROUND(relevance_score * 1000000), archived FROM memories ORDER BY uid"
    ).fetchall()


def test_decay_and_archive_commit_in_many_short_batches_with_the_same_result(db, tmp_path):
    clock = ManualClock()
    results = {}
    for label, seconds in (("batched", 1e-7), ("one batch", 10.0)):
        target = db if label == "batched" else tmp_path / "ref.db"
        with MemoryStore(target, settings=_settings(seconds), clock=clock) as s:
            _fill(s, 500)
            clock.advance(200 * DAY)
            counter = _Counting(s._core.backend)
            s._core.backend.write = counter
            run = s.run_job("decay")
            s._core.backend.write = counter.inner
            clock.advance(-200 * DAY)
            results[label] = (run.counts, counter.calls, [r[1:] for r in _relevances(s)])
    (counts, calls, rows), (ref_counts, ref_calls, ref_rows) = results["batched"], results["one batch"]
    assert counts["decayed"] == ref_counts["decayed"] == 500 and counts["archived"] == ref_counts["archived"] > 0
    assert rows == ref_rows  # batching changes nothing but the lock hold times
    assert calls >= 40 and ref_calls <= 12  # a tiny budget shrinks batches to a few rows each


def test_an_interrupted_decay_resumed_equals_an_uninterrupted_one(db, tmp_path):
    clock = ManualClock()
    with (
        MemoryStore(db, settings=_settings(1e-7), clock=clock) as s,
        MemoryStore(tmp_path / "ref.db", settings=_settings(1e-7), clock=clock) as ref,
    ):
        _fill(s, 300)
        _fill(ref, 300)
        clock.advance(40 * DAY)
        counter = _Counting(s._core.backend, fail_after=5)
        s._core.backend.write = counter
        with pytest.raises(KeyboardInterrupt):
            s.run_job("decay")
        s._core.backend.write = counter.inner
        clock.advance(3 * DAY)  # resumed later: split-invariant decay ends where one run would
        s.run_job("decay")
        ref.run_job("decay")
        assert [r[1:] for r in _relevances(s)] == [r[1:] for r in _relevances(ref)]


def test_expire_and_forget_all_delete_in_batches(db):
    clock = ManualClock()
    with MemoryStore(db, settings=_settings(1e-7), clock=clock) as s:
        _fill(s, 400, ttl=3600)
        s.remember("keeps: no ttl", type="decision", agent_id="a0")
        clock.advance(7200)
        counter = _Counting(s._core.backend)
        s._core.backend.write = counter
        assert s.cleanup_expired() == 400
        s._core.backend.write = counter.inner
        assert counter.calls >= 20
        assert [h.memory.content for h in s.recall("keeps", agent_id="a0", record=False)] == ["keeps: no ttl"]
        assert s.forget_all("a0") == 1


def _delete_steps(tmp_path, n: int) -> int:
    """SQLite VM instructions spent deleting ``n`` expired memories among 2n (deterministic)."""
    clock = ManualClock()
    with MemoryStore(tmp_path / f"steps-{n}.db", settings=_settings(10.0), clock=clock) as s:
        _fill(s, n, ttl=3600)
        _fill(s, n, seed=1)
        clock.advance(7200)
        steps = [0]

        def tick() -> int:
            steps[0] += 1
            return 0

        conn = s._core.backend.conn
        conn.set_progress_handler(tick, 100)
        assert s.cleanup_expired() == n
        conn.set_progress_handler(None, 100)
    return steps[0]


def test_bulk_delete_is_linear_in_the_rows_deleted(tmp_path):
    small, large = _delete_steps(tmp_path, 300), _delete_steps(tmp_path, 1200)
    # 4x the rows: about 4x the work when linear, 16x when each delete scans the table
    assert large / small < 6.5, (small, large)


_JOB_CHILD = r"""
import sys, signal
from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.testing import ManualClock
if sys.argv[2] == "sigterm":  # a daemon that exits on SIGTERM the usual way
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
else:  # Python's own SIGINT handler (a shell's background job inherits SIGINT ignored)
    signal.signal(signal.SIGINT, signal.default_int_handler)
clock = ManualClock(1_767_225_600.0 + 300 * 86400)
s = MemoryStore(sys.argv[1], settings=Settings(maintenance=MaintenanceSettings(job_batch_seconds=1e-7)), clock=clock)
print("ready", flush=True)
import time
s.run_job("decay", progress=lambda done, total: time.sleep(0.01))  # slow batches: the signal lands mid-run
"""


@pytest.mark.parametrize("how", ["sigint", "sigterm"])
def test_a_job_stopped_by_a_signal_is_recorded_interrupted_with_what_it_committed(tmp_path, how):
    import json
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "sig.db"
    with MemoryStore(path, clock=ManualClock()) as s:
        _fill(s, 3000)
    p = subprocess.Popen([sys.executable, "-c", _JOB_CHILD, str(path), how], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "ready"
        with MemoryStore(path) as probe:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:  # until the run is under way and has committed batches
                row = probe._core.backend.execute(
                    "SELECT COUNT(*) FROM memories WHERE decayed_at IS NOT NULL"
                ).fetchone()
                if row[0] >= 200:
                    break
                time.sleep(0.01)
            p.send_signal(signal.SIGINT if how == "sigint" else signal.SIGTERM)
            p.wait(60)
            status, counts, error = probe._core.backend.execute(
                "SELECT status, counts, error FROM job_runs WHERE job = 'decay'"
            ).fetchone()
            decayed_rows = probe._core.backend.execute(
                "SELECT COUNT(*) FROM memories WHERE decayed_at IS NOT NULL"
            ).fetchone()[0]
            leases = probe._core.backend.execute("SELECT COUNT(*) FROM job_leases").fetchone()[0]
    finally:
        if p.poll() is None:
            p.kill()
    counts = json.loads(counts)
    assert status == "interrupted", (status, error)
    assert ("KeyboardInterrupt" if how == "sigint" else "SystemExit") in error
    # what its committed batches changed; a batch that committed in the instant the signal arrived
    # may be missing from the counts (a signal can land between a COMMIT and the count after it)
    assert 200 <= decayed_rows < 3000 and 0 <= decayed_rows - counts["decayed"] <= 200
    assert leases == 0  # released: the next run starts at once and resumes


_BATCHED_CHILD = r"""
import json, sys, time
from contextlib import contextmanager
from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.testing import ManualClock

path, out = sys.argv[1], sys.argv[2]
clock = ManualClock(1_767_225_600.0 + 400 * 86400)  # far enough on: TTLs ran out, old memories archive
s = MemoryStore(path, settings=Settings(maintenance=MaintenanceSettings(job_batch_seconds=1e-7,
                archive_after_days=30)), clock=clock)
b = s._core.backend
inner = b.write
txs = []  # per job: (the probe's memories when the transaction began, rows it changed)


def probe_rows():
    return b.execute("SELECT COUNT(*) FROM memories WHERE agent_id = 'probe'").fetchone()[0]


@contextmanager
def write():
    if b.in_transaction:  # a nested call joins the outer transaction
        with inner() as c:
            yield c
        return
    if len(txs) == 2:  # give the writer a moment: it must get in between this job's transactions
        seen, deadline = txs[0][0], time.monotonic() + 60
        while probe_rows() <= seen and time.monotonic() < deadline:
            time.sleep(0.005)
    with inner() as c:
        before, n = c.total_changes, probe_rows()
        yield c
        txs.append((n, c.total_changes - before))


b.write = write
result = {}
for job, kw in (("expire", {}), ("compact", {"force": True}), ("decay", {})):
    txs = []
    run = s.run_job(job, **kw)
    result[job] = {"status": run.status, "counts": run.counts, "txs": txs}
b.write = inner
s.close()
open(out, "w").write(json.dumps(result))
"""

_WRITER_CHILD = r"""
import sys, time
from pathlib import Path
from harness_memory import MemoryStore, Settings
path, stop = sys.argv[1], Path(sys.argv[2])
errors, i = [], 0
with MemoryStore(path, settings=Settings(busy_timeout_ms=20_000)) as s:
    while not stop.exists():
        try:
            s.remember(f"probe write {i}: service {i} deployed", type="success", agent_id="probe")
        except Exception as exc:  # reported to the test
            errors.append(repr(exc))
        i += 1
        time.sleep(0.02)  # a steady writer; a busier one only burns the CPU the job needs
print(len(errors), errors[:3], flush=True)
"""


def test_jobs_write_in_bounded_batches_between_which_another_process_writes(tmp_path):
    """Issue 17 with real processes: expire (TTL deletes), compact (a sparse vector table rebuilt)
    and decay (every memory decayed, most archived) each run as many short transactions, none
    changing more than a small part of what the job changes, while another process's writes get in
    between them (and all succeed)."""
    import json
    import subprocess
    import sys

    path = tmp_path / "jobs.db"
    with MemoryStore(path, clock=ManualClock()) as s:
        _fill(s, 600, ttl=3600)  # the first ids: their deletes leave the vector table's first chunk sparse
        _fill(s, 900, seed=1)
    out, stop = tmp_path / "out.json", tmp_path / "stop"
    writer = subprocess.Popen(
        [sys.executable, "-c", _WRITER_CHILD, str(path), str(stop)], stdout=subprocess.PIPE, text=True
    )
    try:
        job = subprocess.run([sys.executable, "-c", _BATCHED_CHILD, str(path), str(out)], timeout=600)
    finally:
        stop.touch()
        report = writer.communicate(timeout=120)[0]
    assert job.returncode == 0
    assert report.startswith("0 "), report  # no write failed
    result = json.loads(out.read_text())
    assert result["expire"]["counts"]["expired"] == 600
    assert result["compact"]["counts"]["rebuilt"] > 0
    assert result["decay"]["counts"]["decayed"] >= 900 and result["decay"]["counts"]["archived"] > 0
    for name, r in result.items():
        assert r["status"] == "ok", (name, r)
        txs = r["txs"]
        total = sum(n for _, n in txs)
        assert len(txs) >= 10, (name, len(txs))
        # bounded: the largest transaction (the first batch, before the budget shrinks it) is a small
        # part of the job, never the job
        assert max(n for _, n in txs) <= total / 3, (name, [n for _, n in txs][:20], total)
        # the other process wrote while the job was running, between its transactions
        assert txs[-1][0] > txs[0][0], (name, txs[0], txs[-1])


def test_compacting_the_keyword_index_ends_while_another_writer_keeps_adding(tmp_path):
    """The FTS merge runs in steps until a step finds nothing to merge; a writer adding a segment
    before every step would keep that going forever: the steps are bounded by the index's size."""
    from contextlib import contextmanager

    from harness_memory.jobs.batches import Batcher

    with MemoryStore(tmp_path / "fts.db", clock=ManualClock()) as s:
        _fill(s, 300)
        pages = s._core.backend.execute("SELECT COUNT(*) FROM memories_fts_data").fetchone()[0]
        steps = []

        class Busy(Batcher):
            @contextmanager
            def transaction(self, backend):
                steps.append(1)
                s.remember(f"a note written meanwhile, number {len(steps)}", type="success", agent_id="w")
                with super().transaction(backend) as c:
                    yield c

        s._core.backend.optimize(batches=Busy(1e-7, gap=0))
        assert 1 < len(steps) <= (2 * pages + 1000) // 16 + 1
