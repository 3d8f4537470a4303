"""Recall latency (p50/p95, query embedding excluded) and remember throughput, per backend side by side.

    python benchmarks/latency.py --sizes 10000 100000 --queries 300
    python benchmarks/latency.py --db sqlite --db postgresql://user@host/db --sizes 100000
    python benchmarks/latency.py --db sqlite --db pgserver --sizes 10000      # a throwaway local PostgreSQL

``--db`` names a backend to measure (repeatable): ``sqlite`` (a temporary file), a path or
``sqlite:///path``, a ``postgresql://`` URL (the benchmark works in a fresh schema it drops
afterwards), or ``pgserver`` (a temporary server from the ``pgserver`` test dependency).
Besides recall latency it reports remember throughput one call at a time and batched, 8
concurrent writer processes (memories/s and errors), and the vector channel's overlap with an
exact search (the top 50 of the visible rows by cosine, computed in numpy).

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
from pathlib import Path
from urllib.parse import quote

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import pct, table  # noqa: E402

from harness_memory import HashingEmbedder, MemoryStore, Settings  # noqa: E402

VERBS = "add fix refactor migrate upgrade remove document test deploy optimise rename split merge port".split()
OBJS = ("retry logic|http client|payment webhook|user session cache|search index|build script|docker image|"
        "database migration|rate limiter|auth middleware|csv exporter|pdf renderer|queue consumer|feature flag|"
        "logging config|metrics endpoint|graphql schema|s3 uploader|cron scheduler|email templates").split("|")
MODULES = "api core billing auth search ingest worker web cli infra reports notify sync admin mobile".split()
ERRORS = ("ModuleNotFoundError: No module named|TypeError: unsupported operand type|AssertionError: expected|"
          "TimeoutError: operation timed out after|ConnectionRefusedError: connection refused on port|"
          "KeyError: missing key|PermissionError: permission denied for|npm ERR! code ERESOLVE|"
          "error[E0308]: mismatched types|java.lang.NullPointerException at|"
          "OOMKilled: container exceeded memory limit|429 Too Many Requests from").split("|")
FIXES = ("pin the dependency version|add a fake clock to the test|increase the pool size|guard against None|"
         "split the task into smaller steps|regenerate the lockfile|retry with exponential backoff|"
         "cache the token between calls|run the migration before the tests|use a streaming parser|"
         "raise the memory limit and stream rows|start from a fresh clone").split("|")
TAGS = "python rust go java node docker ci tests flaky deps network db perf security".split()


def synth(rng: random.Random, i: int) -> dict:
    v, o, m, e, f = rng.choice(VERBS), rng.choice(OBJS), rng.choice(MODULES), rng.choice(ERRORS), rng.choice(FIXES)
    kind = rng.random()
    content = (f"Task T-{i}: {v} the {o} in {m}. First attempt failed with {e} {rng.randint(1, 9999)}; "
               f"what worked: {f}." if kind < 0.6 else
               f"Task T-{i}: {v} {o} ({m}) - {f} did not help against {e}; escalate or {rng.choice(FIXES)}.")
    return {"content": content, "type": "success" if kind < 0.6 else "failure", "agent_id": f"agent-{i % 8}",
            "scope": "global" if i % 4 == 0 else "agent", "tags": rng.sample(TAGS, 2),
            "task_signature": f"{v}:{m}"}


class CachedEmbedder:
    """The default embedder with query vectors computed ahead, so timing excludes embedding."""

    def __init__(self, inner):
        self.inner, self.name, self.dimensions, self.cache = inner, inner.name, inner.dimensions, {}

    def warm(self, texts):
        for t, v in zip(texts, self.inner.embed_batch(texts)):
            self.cache[t] = v

    def embed_batch(self, texts):
        if all(t in self.cache for t in texts):
            return [self.cache[t] for t in texts]
        return self.inner.embed_batch(texts)


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
    from harness_memory.recall import RecallQuery, _vector_candidates

    core = store._core
    ids, vecs, agents, scopes = [], [], [], []
    for mid, ns, agent, scope, _mtype, archived, vec in core.backend.iter_vectors():
        if ns == "default" and not archived:
            ids.append(mid)
            vecs.append(vec)
            agents.append(agent)
            scopes.append(scope)
    ids, mat = np.asarray(ids), np.vstack(vecs)
    agents, scopes = np.asarray(agents), np.asarray(scopes)
    share = []
    for text, agent in queries:
        qv = np.asarray(store.embedder.embed_batch([text])[0], dtype=np.float32)
        mask = (agents == agent) | (scopes == "global")
        sims = mat[mask] @ qv
        exact = set(ids[mask][np.argsort(-sims)[:k]].tolist())
        q = RecallQuery(text=text, namespace="default", agent_id=agent, types=None, tags=[], task_signature=None,
                        error=None, include_global=True, include_archived=False, min_relevance=None, since=None,
                        until=None, limit=k)
        got = {mid for mid, _ in _vector_candidates(core, q, qv, k)}
        share.append(len(got & exact) / len(exact))
    return float(np.mean(share))


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
    ap.add_argument("--db", action="append", default=None,
                    help="sqlite | PATH | sqlite:///PATH | postgresql://URL | pgserver (repeatable; default sqlite)")
    ap.add_argument("--db-dir", default=None)
    args = ap.parse_args()
    rows, thr_rows, conc_rows = [], [], []
    with tempfile.TemporaryDirectory(dir=args.db_dir) as d:
        for label, target, cleanup in _fresh_targets(args.db or ["sqlite"], Path(d)):
            try:
                _measure(args, label, target, rows, thr_rows, conc_rows)
            finally:
                cleanup()
    print(table("remember throughput (full write path)",
                ["backend", "phase", "rows in db", "batched memories/s (phase)", "batched (last batch)",
                 "one at a time /s"], thr_rows))
    print(table("recall latency in ms (query embedding excluded)",
                ["backend", "memories", "vector path", "p50", "p95", "p50 no-log", "p95 no-log", "vector overlap@50"],
                rows))
    if conc_rows:
        print(table(f"{args.writers} concurrent writer processes (remember one at a time)",
                    ["backend", "rows before", "memories/s (all writers)", "errors"], conc_rows))


def _measure(args, label: str, target: str, rows: list, thr_rows: list, conc_rows: list) -> None:
    rng = random.Random(7)
    emb = CachedEmbedder(HashingEmbedder())
    store = MemoryStore(target, embedder=emb, settings=Settings(vector_search=args.vector_search))
    path = args.vector_search if label == "sqlite" else "hnsw"
    n = 0
    for size in sorted(args.sizes):
        t_write, written = 0.0, 0
        last_batch_rate = 0.0
        while n < size:
            b = [synth(rng, n + k) for k in range(min(args.batch, size - n))]
            t0 = time.perf_counter()
            store.remember_many(b)
            dt = time.perf_counter() - t0
            t_write += dt
            written += len(b)
            last_batch_rate = len(b) / dt
            n += len(b)
        singles = [synth(rng, 50_000_000 + n + k) for k in range(args.single)]
        t0 = time.perf_counter()
        for it in singles:
            store.remember(**it)
        single_rate = args.single / (time.perf_counter() - t0) if args.single else 0.0
        n += args.single
        count = store.stats()["memories"]
        thr_rows.append([label, f"{written} new, up to {size}", count, round(written / t_write),
                         round(last_batch_rate), round(single_rate)])
        queries = []
        for _ in range(args.queries):
            s = synth(rng, rng.randint(0, n))
            queries.append((s["content"].split(": ", 1)[1][:90], s["agent_id"]))
        emb.warm([q for q, _ in queries])
        for q, a in queries[:20]:  # warm caches (vector index load, page cache)
            store.recall(q, agent_id=a)
        lat = []
        for q, a in queries:
            t0 = time.perf_counter()
            store.recall(q, agent_id=a, limit=10)
            lat.append((time.perf_counter() - t0) * 1000)
        lat_nr = []
        for q, a in queries:
            t0 = time.perf_counter()
            store.recall(q, agent_id=a, limit=10, record=False)
            lat_nr.append((time.perf_counter() - t0) * 1000)
        overlap = _overlap(store, queries[: args.overlap_queries]) if args.overlap_queries else float("nan")
        rows.append([label, count, path, pct(lat, 50), pct(lat, 95), pct(lat_nr, 50), pct(lat_nr, 95), overlap])
    if args.writers:
        rate, errors = _concurrent(target, args.writers, args.per_writer)
        conc_rows.append([label, n, round(rate), errors])
    store.close()


if __name__ == "__main__":
    main()
