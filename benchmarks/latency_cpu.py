"""Recall and remember on an existing SQLite store, by the wall clock and by this process's CPU
time, beside the numpy baseline of benchmarks/latency.py (issue 11).

    OPENBLAS_NUM_THREADS=1 python benchmarks/latency_cpu.py /tmp/hm11/final/latency-100000.db

On a shared machine the wall clock counts the other processes' turns (at a load average of 12
on 2 cores a call waits several times its own work); the CPU time is what a call costs this
process. Prints one JSON line: recall, the numpy baseline and the vector channel alone
(p50/p95 ms, both clocks, recall over numpy), then remember one at a time (``--steady N``: N more,
timed apart, a long-lived writer's rate) and in batches of 1,000 (memories/s, both clocks, and the CPU time of each of the backend's batch methods). To compare two versions of the library in the same minutes,
run it once per checkout on copies of the same database, alternately.

``--stages N``: at the end, N more writes one at a time with a CPU timer around each stage of the write
path (validation and redaction, the embedding, the near-duplicate check, the exact check and the inserts,
BEGIN, COMMIT, the index's catch-up, the read-back): where a remember's CPU time goes, without the
distortion of a profiler's per-call cost.

``--fresh N`` first runs a fresh process (latency.py's) that opens the store, answers one recall and N
more, and reports open + first recall, its p50/p95 and its resident memory (anonymous and file-backed,
and the peak); ``--overlap N``: the vector channel's overlap@50 with exact search over N queries.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness_memory
from harness_memory import HashingEmbedder, MemoryStore
from latency import _Baseline, _fresh_process, _overlap, _queries, synth

# the backend's batch methods (writes.write_many): exact-duplicate look-ups, rows, keyword rows, vectors
BATCH_METHODS = ("existing_hashes", "insert_returning", "index_texts", "put_vectors")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("db")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--single", type=int, default=300)
    ap.add_argument("--batches", type=int, default=2)
    ap.add_argument(
        "--steady",
        type=int,
        default=0,
        help="then this many more writes one at a time, timed apart: a long-lived writer's rate, once "
        "the per-group state the near-duplicate check keeps (VectorIndex._group_heads) is built",
    )
    ap.add_argument("--fresh", type=int, default=0, help="recalls of a fresh process after its first (0: none)")
    ap.add_argument("--overlap", type=int, default=0, help="queries for the vector overlap@50 (0: none)")
    ap.add_argument("--stages", type=int, default=0, help="then this many single writes timed by stage (0: none)")
    ap.add_argument(
        "--batch-stages", type=int, default=0, help="then this many batches of 1,000 timed by stage (0: none)"
    )
    args = ap.parse_args()
    fresh = None
    if args.fresh:  # before this process reads anything: the fresh process opens the store as a new one would
        with MemoryStore(args.db, embedder=HashingEmbedder()) as s:
            top = s._core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0]
        f = _fresh_process(args.db, "memory", _queries(random.Random(13), top, args.fresh + 1))
        fresh = {
            "index from": f["load"],
            "open + first recall s": round(f["open"] + f["first"], 3),
            "then p50 / p95 ms": [round(float(np.percentile(f["lat"], p)), 2) for p in (50, 95)],
            "RSS MB (anon + file)": [round(f["rss"]), round(f["anon"]), round(f["file"])],
            "peak RSS MB": round(f["hwm"]),
        }
    from harness_memory.recall import RecallQuery, _vector_candidates, _where

    s = MemoryStore(args.db, embedder=HashingEmbedder())
    core = s._core
    rng = random.Random(11)
    n = core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0]
    qs = _queries(rng, n, args.queries)
    # recall without its bookkeeping, on queries of their own (the same query again would find its
    # words' stems and counts cached)
    qs_nolog = _queries(random.Random(12), n, args.queries)
    for q, a in qs[:20]:  # the index loaded, caches warm
        s.recall(q, agent_id=a)
    base = _Baseline(s)
    wall: dict[str, list[float]] = {"recall": [], "recall no-log": [], "numpy": [], "vector": []}
    cpu: dict[str, list[float]] = {"recall": [], "recall no-log": [], "numpy": [], "vector": []}

    def timed(name, f) -> None:
        t0, c0 = time.perf_counter(), time.process_time()
        f()
        wall[name].append(time.perf_counter() - t0)
        cpu[name].append(time.process_time() - c0)

    for (q, a), (q2, a2) in zip(qs, qs_nolog):
        timed("recall", lambda q=q, a=a: s.recall(q, agent_id=a, limit=10))
        timed("recall no-log", lambda q=q2, a=a2: s.recall(q, agent_id=a, limit=10, record=False))
        timed("numpy", lambda q=q, a=a: base.query(q, a))
        qv = s.embedder.embed_batch([q])[0]
        rq = RecallQuery(
            text=q,
            namespace="default",
            agent_id=a,
            types=None,
            tags=[],
            task_signature=None,
            error=None,
            include_global=True,
            include_archived=False,
            min_relevance=None,
            since=None,
            until=None,
            limit=50,
        )
        where, params = _where(core, rq, core.now())

        def vector(rq=rq, qv=qv, where=where, params=params) -> None:
            with core.backend.lock:
                _vector_candidates(core, rq, qv, 50, where, params)

        timed("vector", vector)

    def ms(x: list[float], k: int) -> float:
        return round(float(np.percentile(x, k)) * 1000, 2)

    out: dict = {"library": os.path.dirname(harness_memory.__file__), "memories": n, "load": os.getloadavg()[0]}
    if fresh is not None:
        out["fresh process"] = fresh
    if args.overlap:
        out["vector overlap@50"] = round(_overlap(s, qs[: args.overlap]), 4)
    for clock, d in (("wall", wall), ("cpu", cpu)):
        out[f"recall {clock}"] = {k: {"p50": ms(v, 50), "p95": ms(v, 95)} for k, v in d.items()}
        out[f"recall {clock}"]["p95 / numpy p95"] = round(ms(d["recall"], 95) / ms(d["numpy"], 95), 3)
        out[f"recall {clock}"]["p50 / numpy p50"] = round(ms(d["recall"], 50) / ms(d["numpy"], 50), 3)
        out[f"recall {clock}"]["no-log p95 / numpy p95"] = round(ms(d["recall no-log"], 95) / ms(d["numpy"], 95), 3)
    start = 70_000_000 + rng.randint(0, 10**7)
    items = [synth(rng, start + k) for k in range(args.single)]
    t0, c0 = time.perf_counter(), time.process_time()
    for it in items:
        s.remember(**it)
    out["remember one at a time /s"] = {
        "wall": round(args.single / (time.perf_counter() - t0)),
        "cpu": round(args.single / (time.process_time() - c0)),
    }
    if args.steady:
        items = [synth(rng, start + args.single + k) for k in range(args.steady)]
        t0, c0 = time.perf_counter(), time.process_time()
        for it in items:
            s.remember(**it)
        out["remember one at a time, steady /s"] = {
            "wall": round(args.steady / (time.perf_counter() - t0)),
            "cpu": round(args.steady / (time.process_time() - c0)),
        }
    rates = []
    spent: dict[str, float] = {}
    backend = core.backend
    for name in BATCH_METHODS:  # each batch method's CPU time, per batch (the rest: Python per memory)
        orig = getattr(backend, name)

        def timed(*a, _orig=orig, _name=name, **k):
            c = time.process_time()
            try:
                return _orig(*a, **k)
            finally:
                spent[_name] = spent.get(_name, 0.0) + time.process_time() - c

        setattr(backend, name, timed)
    for b in range(args.batches):
        items = [synth(rng, start + 10**6 * (b + 1) + k) for k in range(1000)]
        spent.clear()
        t0, c0 = time.perf_counter(), time.process_time()
        s.remember_many(items)
        rates.append(
            {
                "wall": round(1000 / (time.perf_counter() - t0)),
                "cpu": round(1000 / (time.process_time() - c0)),
                "cpu ms by method": {k: round(v * 1000, 1) for k, v in spent.items()},
            }
        )
    out["remember_many 1,000 /s"] = rates
    for name in BATCH_METHODS:
        delattr(backend, name)  # the class's methods again
    if args.stages:
        out["remember one at a time, CPU ms by stage"] = _stages(
            s, [synth(rng, start + 10**6 * (args.batches + 1) + k) for k in range(args.stages)]
        )
    if args.batch_stages:
        out["remember_many 1,000, CPU ms per memory by stage"] = _stages(
            s,
            [
                [synth(rng, start + 10**6 * (args.batches + 2 + b) + k) for k in range(1000)]
                for b in range(args.batch_stages)
            ],
        )
    s.close()
    print(json.dumps(out))


def _stages(s: MemoryStore, items: list[dict] | list[list[dict]]) -> dict[str, float]:
    """CPU ms per memory of each stage of the write path, and the whole call: one ``remember`` per
    item (``--stages``), or one ``remember_many`` per list of items (``--batch-stages``, where the
    batch path's own stages are timed too)."""
    from harness_memory import writes

    core, backend = s._core, s._core.backend
    spent: dict[str, float] = {}
    undo = []

    def wrap(obj, name: str, label: str) -> None:
        orig = getattr(obj, name)

        def timed(*a, **k):
            c = time.process_time()
            try:
                return orig(*a, **k)
            finally:
                spent[label] = spent.get(label, 0.0) + time.process_time() - c

        undo.append((obj, name, orig, name in vars(obj)))
        setattr(obj, name, timed)

    wrap(writes, "prepare", "validation and redaction")
    wrap(core, "embed", "embedding (and its embedder check)")
    wrap(writes, "_batch_nearest", "near-duplicate check")
    batched = bool(items) and isinstance(items[0], list)
    if batched:  # the batch path's parts (each inside "exact check and inserts" of a single write)
        wrap(backend, "existing_hashes", "exact-duplicate look-ups")
        wrap(backend, "insert_returning", "memories rows")
        wrap(backend, "index_texts", "FTS5 rows")
        wrap(backend, "put_vectors", "vec0 rows and change log")
        wrap(writes, "_reinforce_many", "duplicates folded in")
        wrap(writes, "_write_batch", "rest of the batch's decisions (tags, in-batch duplicates)")
    else:
        wrap(writes, "_write_sequential", "exact check and inserts")
    wrap(writes, "_own_apply", "own vectors into the index")
    wrap(writes, "catch_up", "index catch-up before the lock")
    wrap(core, "fetch", "read-back")
    wrap(backend, "_begin", "BEGIN IMMEDIATE")
    conn = backend.conn

    class _Conn:  # COMMIT timed apart (the connection's attributes are read-only)
        def execute(self, sql, *a):
            c = time.process_time()
            try:
                return conn.execute(sql, *a)
            finally:
                if sql == "COMMIT":
                    spent["COMMIT"] = spent.get("COMMIT", 0.0) + time.process_time() - c

        def __getattr__(self, k):
            return getattr(conn, k)

    backend.conn = _Conn()
    # the stages nest in a batch (the backend's methods inside _write_batch): time each innermost
    nested = {"rest of the batch's decisions (tags, in-batch duplicates)"}
    try:
        c0 = time.process_time()
        n = 0
        for it in items:
            if isinstance(it, list):
                s.remember_many(it)
                n += len(it)
            else:
                s.remember(**it)
                n += 1
        total = time.process_time() - c0
    finally:
        backend.conn = conn
        for obj, name, orig, own in reversed(undo):
            if own:  # a module's function, or an attribute the instance had: put back
                setattr(obj, name, orig)
            else:  # a method: the class's again
                delattr(obj, name)
    inner = sum(
        v
        for k, v in spent.items()
        if k
        in {
            "exact-duplicate look-ups",
            "memories rows",
            "FTS5 rows",
            "vec0 rows and change log",
            "duplicates folded in",
        }
    )
    for k in nested & spent.keys():
        spent[k] -= inner  # its own part: what the timed methods inside it did not take
    ms = {k: 1000 * v / n for k, v in sorted(spent.items(), key=lambda x: -x[1])}
    out = {k: round(v, 4) for k, v in ms.items()}
    out["rest (Python between the stages)"] = round(1000 * total / n - sum(ms.values()), 4)
    out["whole remember"] = round(1000 * total / n, 4)
    return out


if __name__ == "__main__":
    main()
