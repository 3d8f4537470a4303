"""Recall latency (p50/p95, query embedding excluded) and remember throughput at 10k and 100k memories.

    python benchmarks/latency.py --sizes 10000 100000 --queries 300

Memories are synthetic harness memories (task, module, error, fix) with unique task ids;
remember() runs the full write path (validation, redaction, exact and near duplicate
checks, FTS, vec0, change log) in batches of --batch through remember_many().
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--vector-search", choices=["memory", "vec0"], default="memory")
    ap.add_argument("--db-dir", default=None)
    args = ap.parse_args()
    rng = random.Random(7)
    emb = CachedEmbedder(HashingEmbedder())
    rows, thr_rows = [], []
    with tempfile.TemporaryDirectory(dir=args.db_dir) as d:
        store = MemoryStore(Path(d) / "bench.db", embedder=emb, settings=Settings(vector_search=args.vector_search))
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
            count = store.stats()["memories"]
            thr_rows.append([f"{written} new, up to {size}", count, round(written / t_write), round(last_batch_rate)])
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
            rows.append([count, args.vector_search, pct(lat, 50), pct(lat, 95), pct(lat_nr, 50), pct(lat_nr, 95)])
        store.close()
    print(table("remember throughput (remember_many, full write path)",
                ["phase", "rows in db", "memories/s (phase)", "memories/s (last batch)"], thr_rows))
    print(table("recall latency in ms (query embedding excluded)",
                ["memories", "vector path", "p50", "p95", "p50 no-log", "p95 no-log"], rows))


if __name__ == "__main__":
    main()
