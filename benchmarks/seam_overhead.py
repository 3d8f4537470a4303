"""What SQLAlchemy Core would cost on SQLite's hot paths (issue 10, "the seam"): the same two
statements of remember and recall through the raw driver connection and as SQLAlchemy Core
``select()`` objects on the store's own engine (``backend.sqlalchemy_engine()``), same database,
same run. The ratio is Core over raw.

    python benchmarks/seam_overhead.py --rows 3000 --repeat 3000
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table
from harness_memory import HashingEmbedder, MemoryStore
from latency import synth

DUP = (
    "SELECT id FROM memories WHERE namespace = ? AND agent_id = ? AND scope = ? AND memory_type = ? "
    "AND content_hash = ? AND key IS NULL AND thread_id IS NULL ORDER BY id LIMIT 1"
)
SCORE = (
    "SELECT m.id, m.context_tags, m.relevance_score, m.updated_at, m.times_applied, m.times_successful, "
    "m.importance, m.task_signature, m.error_signature FROM memories m WHERE m.id IN ({}) AND m.archived = 0"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=3000)
    ap.add_argument("--repeat", type=int, default=3000)
    args = ap.parse_args()
    from sqlalchemy import MetaData, Table, bindparam, select

    with tempfile.TemporaryDirectory() as d, MemoryStore(Path(d) / "seam.db", embedder=HashingEmbedder()) as s:
        rng = random.Random(1)
        s.remember_many([synth(rng, k) for k in range(args.rows)])
        b = s._core.backend
        eng = b.sqlalchemy_engine()
        m = Table("memories", MetaData(), autoload_with=eng)
        dup = (
            select(m.c.id)
            .where(
                m.c.namespace == bindparam("ns"),
                m.c.agent_id == bindparam("ag"),
                m.c.scope == bindparam("sc"),
                m.c.memory_type == bindparam("ty"),
                m.c.content_hash == bindparam("h"),
                m.c.key.is_(None),
                m.c.thread_id.is_(None),
            )
            .order_by(m.c.id)
            .limit(1)
        )
        cols = "context_tags relevance_score updated_at times_applied times_successful importance".split()
        score = select(m.c.id, *(m.c[c] for c in cols), m.c.task_signature, m.c.error_signature).where(
            m.c.id.in_(bindparam("ids", expanding=True)), m.c.archived == 0
        )
        ids = list(range(1, 201))
        dup_args = ("default", "agent-1", "agent", "success", "x")
        dup_kw = dict(zip(("ns", "ag", "sc", "ty", "h"), dup_args))
        score_sql = SCORE.format(",".join("?" * len(ids)))
        n = args.repeat
        rows = []
        with eng.connect() as conn:
            cases = [
                (
                    "remember: exact-duplicate lookup",
                    lambda: b.conn.execute(DUP, dup_args).fetchone(),
                    lambda: conn.execute(dup, dup_kw).fetchone(),
                    n,
                ),
                (
                    "recall: 200 scoring rows",
                    lambda: b.conn.execute(score_sql, ids).fetchall(),
                    lambda: conn.execute(score, {"ids": ids}).fetchall(),
                    max(1, n // 10),
                ),
            ]
            for name, raw, core, reps in cases:
                times = {}
                for label, fn in (("raw", raw), ("core", core), ("raw2", raw), ("core2", core)):
                    t0 = time.perf_counter()
                    for _ in range(reps):
                        fn()
                    times[label] = (time.perf_counter() - t0) / reps * 1e6
                r, c = min(times["raw"], times["raw2"]), min(times["core"], times["core2"])
                rows.append([name, reps, round(r, 1), round(c, 1), round(c / r, 1)])
    print(
        table(
            "SQLite: raw driver vs SQLAlchemy Core, microseconds per statement (best of two passes)",
            ["statement", "repeats", "raw us", "Core us", "Core / raw"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
