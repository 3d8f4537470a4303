"""Maintenance jobs at scale: decay over 1,000,000 memories, consolidation of 100,000, and
consolidation quality (adjusted Rand index) on labelled real data.

    python benchmarks/maintenance.py --data ../shared/data --decay-rows 1000000 --consolidate-rows 100000

Decay rows are inserted directly (the job reads only the memories table). Consolidation
memories go through remember_many (vectors, FTS); the job then runs in a child process so
its peak memory (max RSS) is measured alone.
"""

from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import random
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from sklearn.metrics import adjusted_rand_score

from _common import data_dir, table
from harness_memory import MemoryStore
from latency import synth

DAY = 86400.0


def bench_decay(path: Path, rows: int) -> list:
    rng = random.Random(1)
    now = time.time()
    with MemoryStore(path) as s:
        c = s._core.backend.conn
        c.execute("BEGIN")
        batch = []
        for i in range(rows):
            created = now - rng.uniform(0, 400) * DAY
            batch.append(
                (
                    uuid.uuid4().hex,
                    "bench",
                    f"agent-{i % 16}",
                    "agent",
                    ("success", "failure", "decision")[i % 3],
                    f"memory {i}",
                    f"h{i}",
                    created,
                    created,
                    created + rng.uniform(0, 30) * DAY,
                )
            )
            if len(batch) == 50_000:
                c.executemany(
                    "INSERT INTO memories(uid, namespace, agent_id, scope, memory_type, content, content_hash, "
                    "created_at, updated_at, last_accessed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    batch,
                )
                batch = []
        if batch:
            c.executemany(
                "INSERT INTO memories(uid, namespace, agent_id, scope, memory_type, content, content_hash, "
                "created_at, updated_at, last_accessed) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                batch,
            )
        c.execute("COMMIT")
        out = []
        for label in ("first run (up to 400 days of decay)", "second run (idempotent, ~0 s elapsed)"):
            t0 = time.perf_counter()
            run = s.run_job("decay")
            out.append([label, rows, time.perf_counter() - t0, run.counts["decayed"], run.counts["archived"]])
    return out


def _consolidate_child(path: str, q) -> None:
    with MemoryStore(path) as s:
        t0 = time.perf_counter()
        run = s.run_job("consolidate")
        dt = time.perf_counter() - t0
    q.put(
        (
            dt,
            {k: v for k, v in run.counts.items() if k != "plan"},
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        )
    )


def bench_consolidate(path: Path, rows: int) -> list:
    rng = random.Random(2)
    with MemoryStore(path) as s:
        for start in range(0, rows, 2000):
            s.remember_many([synth(rng, start + k) for k in range(min(2000, rows - start))])
        n = s.stats()["memories"]
    ctx = mp.get_context("spawn")
    q = ctx.Queue()
    p = ctx.Process(target=_consolidate_child, args=(str(path), q))
    p.start()
    dt, counts, rss_mb = q.get(timeout=3600)
    p.join()
    return [[n, dt, counts["groups"], counts["patterns_created"], counts["members_linked"], round(rss_mb)]]


def _labels(s: MemoryStore, ids: list[int]) -> list[str]:
    out = []
    for i in ids:
        m = s.get(i)
        out.append(f"p{m.consolidated_into}" if m.consolidated_into else f"m{i}")
    return out


def bench_quality(data: Path, tmp: Path) -> list:
    rows = []
    recs = [json.loads(ln) for ln in (data / "defects4j-traces" / "traces-dev.jsonl").open(encoding="utf-8")]
    by_project = collections.defaultdict(list)
    for r in recs:
        by_project[r["project"]].append(r)
    aris = []
    for project, rs in sorted(by_project.items()):
        with MemoryStore(tmp / f"q-{project}.db") as s:
            mems = s.remember_many(
                [
                    {
                        "content": f"{r['test']} failed: {s.error_signature(r['trace']).excerpt}",
                        "type": "failure",
                        "agent_id": "ci",
                        "error": r["trace"][:30000],
                    }
                    for r in rs
                ]
            )
            s.run_job("consolidate")
            pred = _labels(s, [m.id for m in mems])
            ari = adjusted_rand_score([r["group"] for r in rs], pred)
            aris.append(ari)
            rows.append(
                [
                    f"Defects4J {project}",
                    len(rs),
                    len({r["group"] for r in rs}),
                    len({p for p in pred if p.startswith("p")}),
                    ari,
                ]
            )
    rows.append(["Defects4J mean", "", "", "", sum(aris) / len(aris)])
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--data", default=None)
    ap.add_argument("--decay-rows", type=int, default=1_000_000)
    ap.add_argument("--consolidate-rows", type=int, default=100_000)
    ap.add_argument("--skip", nargs="*", default=[], choices=["decay", "consolidate", "quality"])
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if "decay" not in args.skip:
            print(
                table(
                    "decay job",
                    ["run", "memories", "seconds", "decayed", "archived"],
                    bench_decay(tmp / "decay.db", args.decay_rows),
                ),
                flush=True,
            )
        if "consolidate" not in args.skip:
            print(
                table(
                    "consolidate job (child process)",
                    ["memories", "seconds", "groups", "patterns", "members linked", "peak RSS MB"],
                    bench_consolidate(tmp / "cons.db", args.consolidate_rows),
                ),
                flush=True,
            )
        if "quality" not in args.skip:
            print(
                table(
                    "consolidation quality vs labels (members -> their pattern, others singletons)",
                    ["set", "memories", "true groups", "patterns", "ARI"],
                    bench_quality(data_dir(args.data), tmp),
                )
            )


if __name__ == "__main__":
    main()
