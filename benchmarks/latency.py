"""Recall latency end to end against an exact numpy search in the same run, open time, resident
memory, concurrent recallers, and remember throughput, per backend side by side.

    python benchmarks/latency.py --sizes 10000 100000 --queries 300
    nice -n 10 python benchmarks/latency.py --sizes 100000 1000000 --reuse /tmp/hm-latency --fill insert
    python benchmarks/latency.py --db sqlite --db postgresql://user@host/db --sizes 100000
    python benchmarks/latency.py --db sqlite --db pgserver --sizes 10000      # a throwaway local PostgreSQL

Recall is timed end to end through ``MemoryStore.recall`` with the real hashing embedder (the
query embedding included), limit 10, access bookkeeping on ("no-log": ``record=False``). The
baseline is an exact brute-force search in numpy over the same vectors held in memory: embed
the query with the same embedder, one matrix-vector product over every row of the namespace,
the agent's visibility as a mask, top 10 by argpartition. Ratios are recall over baseline.

``--reuse DIR`` keeps one database per size in DIR (``latency-<size>.db``), built on the first
run by growing the largest smaller one, and measures the kept files on later runs (a 1M build
takes long on a small machine). ``--fill insert`` fills a database through the write path's
insert step only (validation, redaction, embedding, the row, tags, FTS5, vec0 and the change
log, in transactions of ``--batch`` rows; no duplicate checks: the synthetic rows are unique);
``--fill remember`` (the default) uses ``remember_many`` and reports its throughput.

A fresh process per size opens the database and answers one recall (``open + first recall``,
imports excluded, reported apart), then answers ``--queries`` more and reports its resident
memory (RSS: anonymous and file-backed pages apart; the persisted vector index is mapped, its
pages are file-backed and shared). ``--concurrent R W`` runs R recalling processes beside W
writing ones for ``--concurrent-seconds`` and reports recalls/s against one recaller alone.

``--db`` names a backend to measure (repeatable): ``sqlite`` (a temporary file), a path or
``sqlite:///path``, a ``postgresql://`` URL (the benchmark works in a fresh schema it drops
afterwards), or ``pgserver`` (a temporary server from the ``pgserver`` test dependency).
Besides recall latency it reports remember throughput one call at a time and batched, 8
concurrent writer processes (memories/s and errors), and the vector channel's overlap with an
exact search (the top 50 of the visible rows by cosine, computed in numpy). On PostgreSQL with
``--reuse`` the ``--batches`` are also reported by phase: the wall-clock time of each of the
backend's batch methods (exact-duplicate lookup, near-duplicate searches, rows, tsvector rows,
vectors with their HNSW inserts) and of everything else, per 1,000 memories.

Memories are synthetic harness memories (task, module, error, fix) with unique task ids;
remember() runs the full write path (validation, redaction, exact and near duplicate
checks, FTS, vec0, change log) in batches of --batch through remember_many().
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg
from _common import pct, table
from harness_memory import HashingEmbedder, MemoryStore, Settings

VERBS = "add fix refactor migrate upgrade remove document test deploy optimise rename split merge port".split()
OBJS = (
    "retry logic|http client|payment webhook|user session cache|search index|build script|docker image|"
    "database migration|rate limiter|auth middleware|csv exporter|pdf renderer|queue consumer|feature flag|"
    "logging config|metrics endpoint|graphql schema|s3 uploader|cron scheduler|email templates"
).split("|")
MODULES = "api core billing auth search ingest worker web cli infra reports notify sync admin mobile".split()
ERRORS = (
    "ModuleNotFoundError: No module named|TypeError: unsupported operand type|AssertionError: expected|"
    "TimeoutError: operation timed out after|ConnectionRefusedError: connection refused on port|"
    "KeyError: missing key|PermissionError: permission denied for|npm ERR! code ERESOLVE|"
    "error[E0308]: mismatched types|java.lang.NullPointerException at|"
    "OOMKilled: container exceeded memory limit|429 Too Many Requests from"
).split("|")
FIXES = (
    "pin the dependency version|add a fake clock to the test|increase the pool size|guard against None|"
    "split the task into smaller steps|regenerate the lockfile|retry with exponential backoff|"
    "cache the token between calls|run the migration before the tests|use a streaming parser|"
    "raise the memory limit and stream rows|start from a fresh clone"
).split("|")
TAGS = "python rust go java node docker ci tests flaky deps network db perf security".split()


def synth(rng: random.Random, i: int) -> dict:
    v, o, m, e, f = rng.choice(VERBS), rng.choice(OBJS), rng.choice(MODULES), rng.choice(ERRORS), rng.choice(FIXES)
    kind = rng.random()
    content = (
        f"Task T-{i}: {v} the {o} in {m}. First attempt failed with {e} {rng.randint(1, 9999)}; what worked: {f}."
        if kind < 0.6
        else f"Task T-{i}: {v} {o} ({m}) - {f} did not help against {e}; escalate or {rng.choice(FIXES)}."
    )
    return {
        "content": content,
        "type": "success" if kind < 0.6 else "failure",
        "agent_id": f"agent-{i % 8}",
        "scope": "global" if i % 4 == 0 else "agent",
        "tags": rng.sample(TAGS, 2),
        "task_signature": f"{v}:{m}",
    }


def _fresh_targets(specs: list[str], tmp: Path) -> list[tuple[str, str, callable]]:
    """``(label, target, cleanup)`` per ``--db`` spec."""
    out = []
    for k, spec in enumerate(specs):
        if spec == "sqlite":
            out.append(("sqlite", str(tmp / f"bench{k}.db"), lambda: None))
            continue
        if spec == "pgserver":
            os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hm-run-"))  # quiets platformdirs
            import pgserver

            srv = pgserver.get_server(tempfile.mkdtemp(prefix="hm-bench-pg-"), cleanup_mode="delete")
            spec = srv.get_uri()
        if spec.startswith(("postgresql://", "postgres://")):
            import psycopg

            schema = f"hm_bench_{os.getpid()}_{k}"
            with psycopg.connect(spec, autocommit=True) as c:
                c.execute("CREATE EXTENSION IF NOT EXISTS vector")
                c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
                c.execute(f"CREATE SCHEMA {schema}")
            sep = "&" if "?" in spec else "?"
            target = f"{spec}{sep}options={quote(f'-c search_path={schema},public', safe='')}"

            def drop(spec=spec, schema=schema):
                with psycopg.connect(spec, autocommit=True) as c:
                    c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")

            out.append(("postgresql", target, drop))
            continue
        out.append(("sqlite", spec, lambda: None))
    return out


def _writer(target: str, k: int, n: int, out) -> None:
    errors, t0 = [], time.perf_counter()
    try:
        with MemoryStore(target, embedder=HashingEmbedder()) as s:
            rng = random.Random(1000 + k)
            t0 = time.perf_counter()
            for i in range(n):
                try:
                    s.remember(**synth(rng, 10_000_000 * (k + 1) + i))
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    errors.append(f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - counted and reported
        errors.append(f"{type(exc).__name__}: {exc}")
    out.put((n, time.perf_counter() - t0, errors))


def _concurrent(target: str, writers: int, per_writer: int) -> tuple[float, int]:
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    procs = [ctx.Process(target=_writer, args=(target, k, per_writer, q)) for k in range(writers)]
    for p in procs:
        p.start()
    got = [q.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join(60)
    errors = [e for _, _, errs in got for e in errs]
    for e in errors[:3]:
        print("writer error:", e, file=sys.stderr)
    # throughput over the slowest writer's own write time (process start-up excluded)
    return sum(n for n, _, _ in got) / max(dt for _, dt, _ in got), len(errors) if got else -1


def _overlap(store: MemoryStore, queries, k: int = 50) -> float:
    """Mean share of the exact top-k (cosine over every visible row, numpy) the vector channel returns."""
    from harness_memory.recall import RecallQuery, _vector_candidates, _where

    core = store._core
    base = _Baseline(store)
    share = []
    for text, agent in queries:
        qv = np.asarray(store.embedder.embed_batch([text])[0], dtype=np.float32)
        exact = set(base.top(qv, agent, k))
        q = RecallQuery(
            text=text,
            namespace="default",
            agent_id=agent,
            types=None,
            tags=[],
            task_signature=None,
            error=None,
            include_global=True,
            include_archived=False,
            min_relevance=None,
            since=None,
            until=None,
            limit=k,
        )
        where, params = _where(core, q, core.now())
        with core.backend.lock:
            got = {mid for mid, _ in _vector_candidates(core, q, qv, k, where, params)}
        share.append(len(got & exact) / len(exact))
    return float(np.mean(share))


class _Baseline:
    """Exact brute-force search in numpy over every vector of the namespace, held in memory."""

    def __init__(self, store: MemoryStore):
        b = store._core.backend
        ids, vecs = [], []
        if b.dialect == "sqlite":  # the vectors only (vec0 scans its metadata columns slowly)
            for mid, blob in b.execute(f"SELECT memory_id, embedding FROM {b.VEC_TABLE}"):
                ids.append(mid)
                vecs.append(blob)
        else:
            for mid, *_, vec in b.iter_vectors():
                ids.append(mid)
                vecs.append(np.asarray(vec, dtype=np.float32).tobytes())
        meta = {r[0]: r[1:] for r in b.execute("SELECT id, agent_id, scope, archived, namespace FROM memories")}
        keep = [k for k, i in enumerate(ids) if i in meta and meta[i][3] == "default" and not meta[i][2]]
        self.ids = np.asarray([ids[k] for k in keep], dtype=np.int64)
        self.mat = np.frombuffer(b"".join(vecs[k] for k in keep), dtype=np.float32).reshape(len(keep), -1)
        agents = np.asarray([meta[i][0] for i in self.ids.tolist()])
        is_global = np.asarray([meta[i][1] == "global" for i in self.ids.tolist()])
        self.masks = {a: (agents == a) | is_global for a in set(agents.tolist())}
        self.embedder = store.embedder

    def top(self, qv: np.ndarray, agent: str, k: int = 10) -> list[int]:
        sims = self.mat @ qv
        sims[~self.masks[agent]] = -np.inf
        part = np.argpartition(-sims, k - 1)[:k]
        return self.ids[part[np.argsort(-sims[part])]].tolist()

    def query(self, text: str, agent: str, k: int = 10) -> list[int]:
        qv = np.asarray(self.embedder.embed_batch([text])[0], dtype=np.float32)
        return self.top(qv, agent, k)


def _fill(store: MemoryStore, rng: random.Random, n: int, size: int, batch: int, how: str) -> tuple[int, float, float]:
    """Grow the store to ``size`` rows; ``(rows written, seconds, last batch's rows/s)``."""
    from harness_memory import writes

    t_write, written, last = 0.0, 0, 0.0
    core = store._core
    while n < size:
        b = [synth(rng, n + k) for k in range(min(batch, size - n))]
        t0 = time.perf_counter()
        if how == "remember":
            store.remember_many(b)
        else:  # the insert step of the write path only (no duplicate checks)
            prepared = [writes.prepare(core, **it) for it in b]
            vecs = core.embed([p.content for p in prepared])
            now = core.now()
            with core.backend.write():
                for p, v in zip(prepared, vecs):
                    writes._insert(core, p, v, now, None)
        dt = time.perf_counter() - t0
        t_write += dt
        written += len(b)
        last = len(b) / dt
        n += len(b)
        if how == "insert" and n % 50_000 < batch:
            print(f"  filled {n} rows ({written / t_write:.0f}/s)", file=sys.stderr, flush=True)
    return written, t_write, last


_CHILD = r"""
import json, os, sys, time
t0 = time.perf_counter()
from harness_memory import MemoryStore, Settings, HashingEmbedder
t_import = time.perf_counter() - t0
path, vs, queries = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
t0 = time.perf_counter()
s = MemoryStore(path, embedder=HashingEmbedder(), settings=Settings(vector_search=vs))
t_open = time.perf_counter() - t0
s.recall(queries[0][0], agent_id=queries[0][1], limit=10)
t_first = time.perf_counter() - t0 - t_open
lat = []
for q, a in queries[1:]:
    t1 = time.perf_counter()
    s.recall(q, agent_id=a, limit=10)
    lat.append((time.perf_counter() - t1) * 1000)
st = dict(line.split(":", 1) for line in open("/proc/self/status") if ":" in line)
mb = lambda k: int(st.get(k, "0 kB").split()[0]) / 1024
idx = s._core.index
s.close()
print(json.dumps({"import": t_import, "open": t_open, "first": t_first, "lat": lat, "rss": mb("VmRSS"),
                  "hwm": mb("VmHWM"), "anon": mb("RssAnon"), "file": mb("RssFile"),
                  "load": getattr(idx, "last_load", "") or ("sql" if idx is not None else "backend")}))
"""


def _fresh_process(target: str, vs: str, queries) -> dict:
    import json
    import subprocess

    out = subprocess.run(
        [sys.executable, "-c", _CHILD, target, vs, json.dumps(queries)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _recaller(target: str, seconds: float, seed: int, start, out) -> None:
    rng = random.Random(seed)
    errors, n = [], 0
    queries = []
    for _ in range(200):
        s_ = synth(rng, rng.randint(0, 10**6))
        queries.append((s_["content"].split(": ", 1)[1][:90], s_["agent_id"]))
    try:
        with MemoryStore(target, embedder=HashingEmbedder()) as s:
            s.recall(queries[0][0], agent_id=queries[0][1])  # open and load before the clock starts
            start.wait()
            t_end = time.perf_counter() + seconds
            while time.perf_counter() < t_end:
                q, a = queries[n % len(queries)]
                try:
                    s.recall(q, agent_id=a, limit=10)
                    n += 1
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    errors.append(f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - counted and reported
        errors.append(f"{type(exc).__name__}: {exc}")
    out.put(("r", n, errors))


def _busy_writer(target: str, seconds: float, seed: int, start, out) -> None:
    rng = random.Random(seed)
    errors, n = [], 0
    try:
        with MemoryStore(target, embedder=HashingEmbedder()) as s:
            s.remember(**synth(rng, 90_000_000 + seed * 1_000_000))
            start.wait()
            t_end = time.perf_counter() + seconds
            while time.perf_counter() < t_end:
                try:
                    s.remember(**synth(rng, 90_000_000 + seed * 1_000_000 + n + 1))
                    n += 1
                except Exception as exc:  # noqa: BLE001 - counted and reported
                    errors.append(f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # noqa: BLE001 - counted and reported
        errors.append(f"{type(exc).__name__}: {exc}")
    out.put(("w", n, errors))


def _mixed(target: str, recallers: int, writers: int, seconds: float) -> tuple[float, float, int]:
    """``(recalls/s, writes/s, errors)`` of ``recallers`` + ``writers`` processes over ``seconds``."""
    ctx = mp.get_context("spawn")
    out, start = ctx.Queue(), ctx.Event()
    procs = [ctx.Process(target=_recaller, args=(target, seconds, k, start, out)) for k in range(recallers)]
    procs += [ctx.Process(target=_busy_writer, args=(target, seconds, k, start, out)) for k in range(writers)]
    for p in procs:
        p.start()
    time.sleep(5 + 2 * len(procs))  # let every process open its store and load (spawn is slow under load)
    start.set()
    got = [out.get(timeout=3600) for _ in procs]
    for p in procs:
        p.join(120)
    errors = [e for _, _, errs in got for e in errs]
    for e in errors[:3]:
        print("concurrent error:", e, file=sys.stderr)
    return (
        sum(n for k, n, _ in got if k == "r") / seconds,
        sum(n for k, n, _ in got if k == "w") / seconds,
        len(errors),
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--single", type=int, default=300, help="remember() calls one at a time, timed at each size")
    ap.add_argument("--writers", type=int, default=8, help="concurrent writer processes (0: skip)")
    ap.add_argument("--per-writer", type=int, default=200)
    ap.add_argument("--overlap-queries", type=int, default=50)
    ap.add_argument("--vector-search", choices=["memory", "vec0"], default="memory")
    ap.add_argument(
        "--db",
        action="append",
        default=None,
        help="sqlite | PATH | sqlite:///PATH | postgresql://URL | pgserver (repeatable; default sqlite)",
    )
    ap.add_argument("--db-dir", default=None)
    ap.add_argument(
        "--reuse",
        default=None,
        metavar="DIR",
        help="keep one SQLite database per size in DIR and measure it again on later runs",
    )
    ap.add_argument(
        "--fill",
        choices=["remember", "insert", "copy"],
        default="remember",
        help="copy: PostgreSQL bulk load by COPY, the HNSW index built after it (--reuse with a PostgreSQL --db)",
    )
    ap.add_argument("--fill-only", action="store_true", help="with --reuse: fill the databases, measure nothing")
    ap.add_argument("--shared-buffers", default="3GB", help="a kept pgserver's shared_buffers (--reuse)")
    ap.add_argument("--batches", type=int, default=5, help="remember_many batches of --batch timed at each size")
    ap.add_argument("--fresh-queries", type=int, default=100, help="recalls in the fresh process (0: skip it)")
    ap.add_argument("--concurrent", type=int, nargs=2, default=None, metavar=("RECALLERS", "WRITERS"))
    ap.add_argument("--concurrent-seconds", type=float, default=20.0)
    args = ap.parse_args()
    rows, thr_rows, conc_rows, fresh_rows, mixed_rows, phase_rows = [], [], [], [], [], []
    if args.reuse:
        Path(args.reuse).mkdir(parents=True, exist_ok=True)
        specs = args.db or ["sqlite"]
        if any(not _pg.is_pg(s) for s in specs):
            for size in sorted(args.sizes):
                _measure_reused(args, size, rows, thr_rows, fresh_rows, mixed_rows)
        for spec in (s for s in specs if _pg.is_pg(s)):
            _measure_reused_pg(args, spec, rows, thr_rows, conc_rows, phase_rows)
    else:
        with tempfile.TemporaryDirectory(dir=args.db_dir) as d:
            for label, target, cleanup in _fresh_targets(args.db or ["sqlite"], Path(d)):
                try:
                    _measure(args, label, target, rows, thr_rows, conc_rows, fresh_rows, mixed_rows)
                finally:
                    cleanup()
    print(
        table(
            "remember throughput (full write path unless the phase says insert)",
            [
                "backend",
                "phase",
                "rows in db",
                "batched memories/s (phase)",
                "batched (last batch)",
                "one at a time /s",
            ],
            thr_rows,
        )
    )
    print(
        table(
            "recall end to end in ms (query embedding included) vs an exact numpy search in the same run",
            [
                "backend",
                "memories",
                "vector path",
                "p50",
                "p95",
                "p50 no-log",
                "p95 no-log",
                "numpy p50",
                "numpy p95",
                "p95 / numpy p95",
                "vector overlap@50",
            ],
            rows,
        )
    )
    if phase_rows:
        print(
            table(
                "PostgreSQL remember_many batches by phase (the backend's batch methods, wall clock)",
                ["memories before", "phase", "ms per 1,000 memories"],
                phase_rows,
            )
        )
    if fresh_rows:
        print(
            table(
                "a fresh process: open + first recall (imports apart), then more recalls; resident memory",
                [
                    "backend",
                    "memories",
                    "index from",
                    "import s",
                    "open s",
                    "first recall s",
                    "open+first s",
                    "p50 ms",
                    "p95 ms",
                    "RSS MB",
                    "peak RSS MB",
                    "anon MB",
                    "file-backed MB",
                ],
                fresh_rows,
            )
        )
    if mixed_rows:
        print(
            table(
                f"recallers beside writers, {args.concurrent_seconds:.0f} s (recall = one MemoryStore.recall "
                "with bookkeeping)",
                ["backend", "memories", "recallers", "writers", "recalls/s", "x one recaller", "writes/s", "errors"],
                mixed_rows,
            )
        )
    if conc_rows:
        print(
            table(
                f"{args.writers} concurrent writer processes (remember one at a time)",
                ["backend", "rows before", "memories/s (all writers)", "errors"],
                conc_rows,
            )
        )


def _queries(rng: random.Random, n_rows: int, count: int) -> list[tuple[str, str]]:
    out = []
    for _ in range(count):
        s = synth(rng, rng.randint(0, n_rows))
        out.append((s["content"].split(": ", 1)[1][:90], s["agent_id"]))
    return out


def _recall_rows(args, label: str, store: MemoryStore, path: str, count: int, queries) -> list:
    for q, a in queries[:20]:  # warm caches (vector index load, page cache)
        store.recall(q, agent_id=a)
    lat, lat_nr, base_lat = [], [], []
    for q, a in queries:
        t0 = time.perf_counter()
        store.recall(q, agent_id=a, limit=10)
        lat.append((time.perf_counter() - t0) * 1000)
    for q, a in queries:
        t0 = time.perf_counter()
        store.recall(q, agent_id=a, limit=10, record=False)
        lat_nr.append((time.perf_counter() - t0) * 1000)
    base = _Baseline(store)
    for q, a in queries:
        t0 = time.perf_counter()
        base.query(q, a)
        base_lat.append((time.perf_counter() - t0) * 1000)
    del base
    overlap = _overlap(store, queries[: args.overlap_queries]) if args.overlap_queries else float("nan")
    return [
        label,
        count,
        path,
        pct(lat, 50),
        pct(lat, 95),
        pct(lat_nr, 50),
        pct(lat_nr, 95),
        pct(base_lat, 50),
        pct(base_lat, 95),
        pct(lat, 95) / pct(base_lat, 95),
        overlap,
    ]


def _after_size(args, label, target, store, count, queries, rows, fresh_rows, mixed_rows, path) -> None:
    rows.append(_recall_rows(args, label, store, path, count, queries))
    if args.fresh_queries and label == "sqlite":
        from harness_memory.vector_index import sidecar_path

        for snapshot in (False, True):  # without the persisted index (the process writes it), then with it
            if not snapshot:
                sidecar_path(target).unlink(missing_ok=True)
            f = _fresh_process(target, args.vector_search, queries[: args.fresh_queries + 1])
            fresh_rows.append(
                [
                    label,
                    count,
                    f["load"],
                    f["import"],
                    f["open"],
                    f["first"],
                    f["open"] + f["first"],
                    pct(f["lat"], 50),
                    pct(f["lat"], 95),
                    round(f["rss"]),
                    round(f["hwm"]),
                    round(f["anon"]),
                    round(f["file"]),
                ]
            )
    if args.concurrent:
        r, w = args.concurrent
        one, _, e1 = _mixed(target, 1, 0, args.concurrent_seconds)
        mixed_rows.append([label, count, 1, 0, round(one, 1), 1.0, 0, e1])
        many, wr, e = _mixed(target, r, w, args.concurrent_seconds)
        mixed_rows.append(
            [label, count, r, w, round(many, 1), round(many / one, 2) if one else float("nan"), round(wr, 1), e]
        )


def _measure_reused(args, size: int, rows, thr_rows, fresh_rows, mixed_rows) -> None:
    import shutil

    d = Path(args.reuse)
    target = d / f"latency-{size}.db"
    rng = random.Random(7 + size)
    if not target.exists():
        smaller = sorted(
            (int(p.stem.split("-")[1]), p) for p in d.glob("latency-*.db") if int(p.stem.split("-")[1]) < size
        )
        if smaller:
            shutil.copyfile(smaller[-1][1], target)
    with MemoryStore(target, embedder=HashingEmbedder(), settings=Settings(embed_failure="raise")) as store:
        n = store.stats()["memories"]
        if n < size:  # new, or a fill that was interrupted: grow it
            written, dt, last = _fill(store, rng, n, size, args.batch, args.fill)
            thr_rows.append(
                [
                    "sqlite",
                    f"{args.fill}: {written} new, {n} -> {size}",
                    store.stats()["memories"],
                    round(written / dt) if dt else 0,
                    round(last),
                    "",
                ]
            )
            store._core.backend.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    if args.fill_only:  # filled: nothing measured, nothing more written into the kept file
        return
    store = MemoryStore(target, embedder=HashingEmbedder(), settings=Settings(vector_search=args.vector_search))
    try:
        n = store._core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0]
        queries = _queries(rng, n, args.queries)
        count = store.stats()["memories"]
        _after_size(
            args, "sqlite", str(target), store, count, queries, rows, fresh_rows, mixed_rows, args.vector_search
        )
        thr_rows += _remember_rates(store, rng, count, args.single, args.batch, args.batches)
    finally:
        store.close()


def _remember_rates(store: MemoryStore, rng: random.Random, count: int, single: int, batch: int, batches: int) -> list:
    """remember one at a time, then ``remember_many`` batches, on a reused SQLite store: memories/s by
    the wall clock and by this process's CPU time (on a shared machine the wall clock counts the
    other processes' turns; the CPU time is what the calls cost)."""
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    if single:
        items = [synth(rng, 60_000_000 + count + k) for k in range(single)]
        t0, c0 = time.perf_counter(), time.process_time()
        for it in items:
            store.remember(**it)
        wall["one"], cpu["one"] = single / (time.perf_counter() - t0), single / (time.process_time() - c0)
    t_all = c_all = 0.0
    for b in range(batches):
        items = [synth(rng, 61_000_000 + count + (b + 1) * 10 * batch + k) for k in range(batch)]
        t0, c0 = time.perf_counter(), time.process_time()
        store.remember_many(items)
        dt, dc = time.perf_counter() - t0, time.process_time() - c0
        t_all, c_all = t_all + dt, c_all + dc
        wall["last"], cpu["last"] = batch / dt, batch / dc
    if batches:
        wall["batched"], cpu["batched"] = batches * batch / t_all, batches * batch / c_all
    rows = []
    for clock, r in (("wall clock", wall), ("CPU time of the process", cpu)):
        rows.append(
            [
                "sqlite",
                f"reused, at {count}: {clock}",
                count + single + batches * batch,
                round(r["batched"]) if "batched" in r else "",
                round(r["last"]) if "last" in r else "",
                round(r["one"]) if "one" in r else "",
            ]
        )
    return rows


def _measure(
    args, label: str, target: str, rows: list, thr_rows: list, conc_rows: list, fresh_rows: list, mixed_rows: list
) -> None:
    rng = random.Random(7)
    store = MemoryStore(target, embedder=HashingEmbedder(), settings=Settings(vector_search=args.vector_search))
    path = args.vector_search if label == "sqlite" else "hnsw"
    n = 0
    for size in sorted(args.sizes):
        written, t_write, last_batch_rate = _fill(store, rng, n, size, args.batch, args.fill)
        n = size
        singles = [synth(rng, 50_000_000 + n + k) for k in range(args.single)]
        t0 = time.perf_counter()
        for it in singles:
            store.remember(**it)
        single_rate = args.single / (time.perf_counter() - t0) if args.single else 0.0
        n += args.single
        count = store.stats()["memories"]
        thr_rows.append(
            [
                label,
                f"{written} new, up to {size}",
                count,
                round(written / t_write),
                round(last_batch_rate),
                round(single_rate),
            ]
        )
        _after_size(
            args, label, target, store, count, _queries(rng, n, args.queries), rows, fresh_rows, mixed_rows, path
        )
    if args.writers:
        rate, errors = _concurrent(target, args.writers, args.per_writer)
        conc_rows.append([label, n, round(rate), errors])
    store.close()


_PHASES = {  # the backend's batch methods (writes.write_many) and what each does on PostgreSQL
    "existing_hashes": "exact-duplicate lookup",
    "vector_knn_many": "near-duplicate check (sign codes, or HNSW + backlog)",
    "insert_returning": "rows (COPY)",
    "index_texts": "tsvector rows + vocabulary",
    "put_vectors": "vectors + change log (HNSW inserts: only past the backlog's bound, or a full graph)",
}


@contextmanager
def _batch_phases(store: MemoryStore, out: list, count: int, memories: int):
    """Time each batch method of the store's backend while the block runs (the rest: validation,
    redaction, embedding, tags and the decisions); one row per phase, in ms per 1,000 memories."""
    backend = store._core.backend
    spent = dict.fromkeys(_PHASES, 0.0)
    for name in _PHASES:
        orig = getattr(backend, name)

        def timed(*a, _orig=orig, _name=name, **k):
            t0 = time.perf_counter()
            try:
                return _orig(*a, **k)
            finally:
                spent[_name] += time.perf_counter() - t0

        setattr(backend, name, timed)
    t0 = time.perf_counter()
    try:
        yield
    finally:
        total = time.perf_counter() - t0
        for name in _PHASES:
            delattr(backend, name)
        if memories:
            per = 1000 / memories
            for name, what in _PHASES.items():
                out.append([count, f"{name}: {what}", round(spent[name] * 1000 * per, 1)])
            out.append([count, "everything else", round((total - sum(spent.values())) * 1000 * per, 1)])
            out.append([count, "remember_many, whole", round(total * 1000 * per, 1)])


def _measure_reused_pg(args, spec: str, rows: list, thr_rows: list, conc_rows: list, phase_rows: list) -> None:
    """PostgreSQL with ``--reuse DIR``: one schema per size (``hm_latency_<size>``) on the server of
    ``spec`` (``pgserver``: kept in ``DIR/pgdata``), filled once (``--fill copy``: COPY, then the HNSW
    index), then measured: recall vs the numpy baseline and overlap, ``--batches`` batched
    ``remember_many`` calls, ``--single`` one-at-a-time remembers, and the concurrent writers."""
    base, srv = _pg.server_url(spec, Path(args.reuse))
    if srv is not None:
        _pg.tune_server(base, srv, args.shared_buffers)
    for size in sorted(args.sizes):
        target = _pg.schema_url(base, f"hm_latency_{size}", create=True)
        rng = random.Random(7 + size)
        if args.fill == "copy":
            written, t_load, t_index = _pg.bulk_fill(target, size, synth, rng)
            if written:
                thr_rows.append(
                    [
                        "postgresql",
                        f"COPY: {written} rows, +{t_index:.0f} s HNSW build",
                        size,
                        round(written / t_load),
                        "",
                        "",
                    ]
                )
        else:
            with MemoryStore(target, embedder=HashingEmbedder(), settings=Settings(embed_failure="raise")) as store:
                n = store.stats()["memories"]
                if n < size:
                    written, dt, last = _fill(store, rng, n, size, args.batch, args.fill)
                    thr_rows.append(
                        ["postgresql", f"{args.fill}: {written} new", size, round(written / dt), round(last), ""]
                    )
        if args.fill_only:
            continue
        store = MemoryStore(target, embedder=HashingEmbedder())
        try:
            count = store.stats()["memories"]
            top = store._core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0]
            queries = _queries(rng, top, args.queries)
            rows.append(_recall_rows(args, "postgresql", store, "hnsw", count, queries))
            base_id = 70_000_000 + count + 10 * args.batch * args.batches
            t_batches = 0.0
            backend = store._core.backend
            backend.index_backlog()  # an earlier run's backlog: not this run's work
            with _batch_phases(store, phase_rows, count, args.batches * args.batch):
                for b in range(args.batches):
                    items = [synth(rng, base_id + b * args.batch + k) for k in range(args.batch)]
                    t0 = time.perf_counter()
                    store.remember_many(items)
                    t_batches += time.perf_counter() - t0
            # what the batches left outside the HNSW graph, moved in as compact moves it: the graph
            # inserts a batch no longer pays, paid here (the sustained rate counts them)
            t0 = time.perf_counter()
            moved = backend.index_backlog()
            t_graph = time.perf_counter() - t0
            per = 1000 / (args.batches * args.batch) if args.batches * args.batch else 0.0
            phase_rows.append(
                [
                    count,
                    f"index_backlog (compact, after the batches): {moved} into the graph",
                    round(t_graph * 1000 * per, 1),
                ]
            )
            singles = [synth(rng, 80_000_000 + count + k) for k in range(args.single)]
            t0 = time.perf_counter()
            for it in singles:
                store.remember(**it)
            t_single = time.perf_counter() - t0
            thr_rows.append(
                [
                    "postgresql",
                    f"reused, at {count}",
                    store.stats()["memories"],
                    round(args.batches * args.batch / t_batches) if t_batches else "",
                    "",
                    round(args.single / t_single) if args.single else "",
                ]
            )
            if t_batches:
                thr_rows.append(
                    [
                        "postgresql",
                        "  sustained: the batches + their graph inserts",
                        "",
                        round(args.batches * args.batch / (t_batches + t_graph)),
                        "",
                        "",
                    ]
                )
        finally:
            store.close()
        if args.writers:
            rate, errors = _concurrent(target, args.writers, args.per_writer)
            conc_rows.append(["postgresql", count, round(rate), errors])


if __name__ == "__main__":
    main()
