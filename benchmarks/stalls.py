"""Never stall the fleet: how long does a writer in another process wait while the maintenance
jobs and slow-embedder calls run? (issue 17)

    python benchmarks/stalls.py [--rows 100000] [--embed-ms 0 30] [--template PATH] [--phases NAME...]

For each embedder delay: a store of ``--rows`` memories (synthetic task texts, a tenth with a
TTL, built with ``remember_many``) is opened by this process with an embedder that sleeps
``embed-ms`` per text (the default hashing embedder underneath, so the store's embedder record
matches), while a probe process calls ``remember()`` every 20 ms and times each call. Phases,
in order, each timed and paired with the probe's calls that overlapped it:

- idle (2 s, no job): the baseline wait of the same probe in the same run;
- ``record_outcome`` x 60 with an error text (each embeds its outcome memory);
- ``remember`` x 60 one at a time (each embeds its content);
- consolidate, compact (``force=True``), then, with the job's clock 400 days ahead, expire
  (every TTL row, about a tenth of the store, plus the probe's) and decay (archives most rows);
- ``clear`` of the namespace: a bulk delete of every row (the probe's included);
- purge: the compact job after them, which deletes the vec0 rows the bulk deletes left behind.

Printed per phase: its time, the probe's calls during it, their p50 / p99 / worst wait, where the
worst call's time went (ms waiting for the write lock / catching up its in-process vector index /
writing that index's snapshot file; the rest is the call's own work and the machine's load), and
the ratio of p99 to the idle p99. Targets (issue 17): writer p99 <= 250 ms and worst <= 1 s during
every phase; expire/forget of 80k rows < 30 s.

With the 0 ms embedder a ``reembed`` phase (the same embedder again) follows ``compact (force)``:
its vectors are made outside the lock, then a short swap and the fill's batches
(``harness_memory/reembed.py``). ``--template PATH`` keeps the built store there and copies it for each run (building 100k rows
takes about ten minutes); ``--phases`` runs only the named phases (matched by their first word,
e.g. ``compact clear``) after the idle baseline.

``--bulk N`` measures the bulk delete target instead: on the copy, ``N`` memories spread over the
whole id range (a seeded sample) get an expiry in the past before anything runs; the phases are
idle, the expire job (which deletes exactly those ``N``) and the compact job after it (the vec0
rows the delete left behind, purged). ``--no-probe`` runs without the probe process (the job
alone: the throughput figure).

Besides the probe's waits, each phase shows this process's CPU seconds (``time.process_time``:
the job's own work, whatever the machine's load) and, for the jobs that write in batches
(``jobs.batches``), how many batches and their lock holds (p99 / max ms, from BEGIN to the end of
COMMIT). "write txs" times every write transaction of this process the same way and splits the
longest: its COMMIT (which includes a WAL checkpoint when SQLite runs one after it: the lock is
already free then) and the thread's CPU during the hold (far less than the hold: the holder was
waiting for the machine or the disk, not working), and the function that opened it; "longest hold
by site" gives each such function's longest hold (and its CPU). The worst probe call's split adds
its COMMIT (a checkpoint the probe ran itself is there) and its CPU ms.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import random
import shutil
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import pct, table
from harness_memory import MemoryStore
from harness_memory.embedders import HashingEmbedder
from latency import synth

DAY = 86400.0


class SlowEmbedder:
    """The default embedder, ``delay`` seconds slower per text (a CPU sentence model or a
    network endpoint): the same name and dimensions, so the store accepts it."""

    def __init__(self, delay: float):
        self.inner = HashingEmbedder()
        self.name, self.dimensions, self.delay = self.inner.name, self.inner.dimensions, delay

    def embed(self, text: str):
        return self.embed_batch([text])[0]

    def embed_batch(self, texts):
        if self.delay:
            time.sleep(self.delay * len(texts))
        return self.inner.embed_batch(texts)


def _timed(obj, name: str, spent: list[float], slot: int) -> None:
    """Wrap ``obj.name`` so that the seconds spent in it add up in ``spent[slot]``."""
    inner = getattr(obj, name)

    def wrapper(*a, **k):
        t0 = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            spent[slot] += time.perf_counter() - t0

    setattr(obj, name, wrapper)


def _timed_commit(backend, spent: list[float], slot: int) -> None:
    """Wrap ``backend.write`` so that the seconds its COMMIT takes (with the WAL checkpoint SQLite
    runs after it when the WAL is over its threshold) add up in ``spent[slot]``."""
    inner = backend.write

    @contextmanager
    def write():
        with inner() as c:
            yield c
            t0 = time.perf_counter()  # the caller's work is done: what follows is the COMMIT
        spent[slot] += time.perf_counter() - t0

    backend.write = write


def probe(path: str, stop: str, out: str, period: float = 0.02) -> None:
    """Another host process: remember() every ``period`` s; per call its start, duration, outcome
    and where the time went: waiting for the write lock (``_begin``), catching up the in-process
    vector index (``sync``, outside and inside the transaction) and writing its snapshot file."""
    calls = []
    with MemoryStore(path) as s:
        spent = [0.0, 0.0, 0.0, 0.0]
        _timed(s._core.backend, "_begin", spent, 0)
        if s._core.index is not None:
            _timed(s._core.index, "_apply_changes", spent, 1)
            _timed(s._core.index, "_load_all", spent, 1)
            _timed(s._core.index, "save", spent, 2)
        _timed_commit(s._core.backend, spent, 3)
        i = 0
        while not Path(stop).exists():
            spent[:] = [0.0, 0.0, 0.0, 0.0]
            t0, c0 = time.time(), time.process_time()
            try:
                s.remember(
                    f"probe write {i}: the deploy of service {i % 97} went fine",
                    type="success",
                    agent_id="probe",
                    ttl=3600.0,
                )
                ok = True
            except Exception as exc:  # noqa: BLE001 - an error is a result here: counted, not raised
                ok = f"{type(exc).__name__}: {exc}"[:200]
            calls.append((t0, time.time() - t0, ok, *spent, time.process_time() - c0))
            if i == 0:  # the first call loads the process's vector index: not a wait on anyone's lock
                Path(stop + ".ready").touch()
            i += 1
            time.sleep(max(0.0, period - (time.time() - t0)))
    Path(out).write_text(json.dumps(calls))


def build(path: Path, rows: int) -> float:
    rng = random.Random(17)
    t0 = time.perf_counter()
    with MemoryStore(path) as s:
        for lo in range(0, rows, 5000):
            items = []
            for i in range(lo, min(rows, lo + 5000)):
                it = synth(rng, i)
                if i % 10 == 0:
                    it["ttl"] = rng.uniform(1, 30) * DAY
                items.append(it)
            s.remember_many(items)
    return time.perf_counter() - t0


HOLDS: list[float] = []  # every batch's lock hold in this process (jobs.batches.Batcher.record)
# every write transaction of this process: (hold s from BEGIN to the end of COMMIT, of which the
# COMMIT s, thread CPU s of the hold, the function that opened it)
WRITES: list[tuple[float, float, float, str]] = []
SITES = {"purge_removed_vectors", "rebuild_vectors", "optimize", "in_batches", "delete_rows", "refresh_snapshot"}


def _record_holds() -> None:
    from harness_memory.jobs.batches import Batcher
    from harness_memory.sqlite_backend import SQLiteBackend

    inner = Batcher.record

    def record(self, seconds: float) -> None:
        HOLDS.append(seconds)
        inner(self, seconds)

    Batcher.record = record
    write = SQLiteBackend.write

    @contextmanager
    def timed_write(self):
        outer = not self.in_transaction
        with write(self) as c:
            t0, c0 = time.perf_counter(), time.thread_time()
            yield c
            t1 = time.perf_counter()
        if outer:
            f, site = sys._getframe(1), "?"
            while f is not None and site == "?":
                site = f.f_code.co_name if f.f_code.co_name in SITES else "?"
                f = f.f_back
            t2 = time.perf_counter()
            WRITES.append((t2 - t0, t2 - t1, time.thread_time() - c0, site))

    SQLiteBackend.write = timed_write


def expire_some(path: Path, n: int) -> int:
    """Give ``n`` memories spread over the whole id range (seeded) an expiry in the past."""
    with MemoryStore(path) as s:
        b = s._core.backend
        ids = [r[0] for r in b.execute("SELECT id FROM memories ORDER BY id")]
        chosen = random.Random(80).sample(ids, min(n, len(ids)))
        with b.write() as c:
            for k in range(0, len(chosen), 5000):
                part = chosen[k : k + 5000]
                c.execute(f"UPDATE memories SET expires_at = 1 WHERE id IN ({','.join('?' * len(part))})", part)
        b.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return len(chosen)


def phases(
    path: Path, delay: float, only: list[str] | None = None, bulk: int | None = None
) -> list[tuple[str, float, float, dict, float, list[float], list[tuple[float, float, float, str]]]]:
    """``(phase, start, end, counts, cpu seconds, batch holds, write transactions)``, times in
    wall-clock seconds."""
    out = []
    emb = SlowEmbedder(delay)

    def timed(name, fn):
        if only and out and name.split()[0] not in only:
            return
        HOLDS.clear()
        WRITES.clear()
        t0, c0 = time.time(), time.process_time()
        counts = fn() or {}
        out.append((name, t0, time.time(), counts, time.process_time() - c0, list(HOLDS), list(WRITES)))

    if bulk:
        with MemoryStore(path, embedder=emb) as s:
            timed("idle (no job)", lambda: time.sleep(2.0))
            timed(f"expire ({bulk:,} rows expired)", lambda: dict(s.run_job("expire").counts))
            timed("purge (compact after it)", lambda: dict(s.run_job("compact").counts))
        return out

    with MemoryStore(path, embedder=emb) as s:
        timed("idle (no job)", lambda: time.sleep(2.0))

        def outcomes():
            for i in range(60):
                s.record_outcome(
                    f"stall-task-{i}",
                    "retry_with_context",
                    i % 3 != 0,
                    error=f"TimeoutError: upstream build-{i % 7} did not answer in 30s",
                    agent_id="bench",
                )
            return {"calls": 60}

        timed("record_outcome x60", outcomes)

        def remembers():
            for i in range(60):
                s.remember(f"bench note {i}: cache the wheel of package {i}", type="decision", agent_id="bench")
            return {"calls": 60}

        timed("remember x60", remembers)
        timed("consolidate", lambda: dict(s.run_job("consolidate").counts))
        timed("compact (force)", lambda: dict(s.run_job("compact", force=True).counts))
        if delay == 0:  # re-embedding 100k texts at 30 ms each would take 50 minutes (all of it outside the lock)
            timed("reembed (the same embedder)", lambda: {"memories": s.reembed()})
    with MemoryStore(path, embedder=emb, clock=lambda: time.time() + 400 * DAY) as s:
        timed("expire (400 days on)", lambda: dict(s.run_job("expire").counts))
        timed("decay (400 days on)", lambda: dict(s.run_job("decay").counts))
        timed("clear (every row of the namespace)", lambda: {"deleted": s.clear("default")})
        # the vec0 rows of the bulk deletes, left to the compact job (SQLite), purged in batches
        timed("purge (compact after them)", lambda: dict(s.run_job("compact").counts))
    return out


def measure(
    rows: int,
    delay_ms: float,
    tmp: Path,
    template: Path | None,
    only: list[str] | None,
    bulk: int | None = None,
    with_probe: bool = True,
) -> list[list]:
    path = tmp / f"stalls-{rows}-{delay_ms:g}.db"
    if template is not None and template.exists():
        build_s = 0.0
        shutil.copyfile(template, path)
    else:
        build_s = build(path, rows)
        if template is not None:
            with MemoryStore(path) as s:  # checkpointed into the one file
                s._core.backend.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            shutil.copyfile(path, template)
    if bulk:
        expire_some(path, bulk)
    stop, res = tmp / f"stop-{delay_ms:g}", tmp / f"probe-{delay_ms:g}.json"
    if with_probe:
        ctx = mp.get_context("spawn")
        p = ctx.Process(target=probe, args=(str(path), str(stop), str(res)))
        p.start()
        deadline = time.time() + 900
        while not Path(str(stop) + ".ready").exists() and time.time() < deadline:
            time.sleep(0.1)  # the probe is open, its first call (index load) done, and it is writing
        time.sleep(1.0)
    try:
        ph = phases(path, delay_ms / 1000, only, bulk)
    finally:
        stop.touch()
        if with_probe:
            p.join(120)
    # the probe's first call loaded its index before any phase
    calls = json.loads(res.read_text())[1:] if with_probe else []
    errors = [c for c in calls if c[2] is not True]
    rows_out = []
    idle_p99 = None
    for name, a, b, counts, cpu, holds, writes in ph:
        during = [c for c in calls if c[0] < b and c[0] + c[1] > a]
        waits = [c[1] * 1000 for c in during]
        worst = max(during, key=lambda c: c[1]) if during else None
        # the worst call: ms waiting for the lock / catching up the vector index / writing its
        # snapshot / in its COMMIT (with any checkpoint after it), and its CPU ms
        split = "/".join(f"{x * 1000:.0f}" for x in worst[3:7]) + f", cpu {worst[7] * 1000:.0f}" if worst else "-"
        p99 = pct(waits, 99) if waits else float("nan")
        if idle_p99 is None:
            idle_p99 = p99
        held = f"{len(holds)}: {pct(holds, 99) * 1000:.0f} / {max(holds) * 1000:.0f}" if holds else "-"
        # every write transaction of the job: hold p99 / max, the longest one's COMMIT and CPU ms, and where
        longest = max(writes) if writes else None
        tx = (
            f"{len(writes)}: {pct([w[0] for w in writes], 99) * 1000:.0f} / {longest[0] * 1000:.0f}"
            f" ({longest[1] * 1000:.0f} / {longest[2] * 1000:.0f} {longest[3]})"
            if longest
            else "-"
        )
        # the longest hold of each site (the function that opened the write transaction)
        by_site: dict[str, tuple[float, float]] = {}
        for hold, _, used, site in writes:
            if hold > by_site.get(site, (0.0, 0.0))[0]:
                by_site[site] = (hold, used)
        sites = ", ".join(f"{k} {v[0] * 1000:.0f} ({v[1] * 1000:.0f})" for k, v in sorted(by_site.items()))
        shown = ", ".join(f"{k} {v}" for k, v in counts.items() if isinstance(v, (int, float)) and v)[:60]
        rows_out.append(
            [
                f"{delay_ms:g} ms",
                name,
                round(b - a, 2),
                round(cpu, 1),
                held,
                tx,
                len(waits),
                round(pct(waits, 50), 1) if waits else "-",
                round(p99, 1) if waits else "-",
                round(max(waits), 1) if waits else "-",
                split,
                round(p99 / idle_p99, 1) if waits and idle_p99 else "-",
                sites or "-",
                shown,
            ]
        )
    built = f"build {rows:,} rows: {build_s:.0f} s" if build_s else f"{rows:,} rows copied from {template}"
    shown_errors = sorted({str(c[2]) for c in errors})[:3]
    note = f"({built}; probe calls {len(calls)}, errors {len(errors)}{': ' if errors else ''}{'; '.join(shown_errors)})"
    rows_out.append([f"{delay_ms:g} ms", note, *[""] * 12])
    return rows_out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--embed-ms", type=float, nargs="+", default=[0.0, 30.0])
    ap.add_argument("--template", type=Path, help="keep the built store here and copy it for each run")
    ap.add_argument(
        "--phases", nargs="+", help="only these phases (first word: record_outcome remember consolidate ...)"
    )
    ap.add_argument("--bulk", type=int, help="instead: expire this many memories spread over the store")
    ap.add_argument("--no-probe", action="store_true", help="without the probe process (the job alone)")
    args = ap.parse_args()
    _record_holds()
    rows = []
    with tempfile.TemporaryDirectory() as d:
        for ms in args.embed_ms:
            rows += measure(args.rows, ms, Path(d), args.template, args.phases, args.bulk, not args.no_probe)
    print(
        table(
            f"Writer waits in another process while each phase runs ({args.rows:,} memories)",
            [
                "embedder",
                "phase",
                "phase s",
                "cpu s",
                "batches: hold p99 / max ms",
                "write txs: hold p99 / max ms (max: commit / cpu ms, site)",
                "probe calls",
                "p50 ms",
                "p99 ms",
                "worst ms",
                "worst: lock/catch-up/snapshot/commit ms, cpu",
                "p99 / idle p99",
                "longest hold by site ms (its cpu ms)",
                "counts",
            ],
            rows,
        )
    )
    print(
        "targets (issue 17): writer p99 <= 250 ms and worst <= 1000 ms during every phase; "
        "a bulk delete of 80k rows < 30 s (--bulk 80000, the expire row)"
    )


if __name__ == "__main__":
    main()
