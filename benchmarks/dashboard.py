"""Dashboard page render times on a large store: 100k memories, 1M access-log rows, 100k retries.

    python benchmarks/dashboard.py --memories 100000 --access 1000000 --attempts 100000

Memories go through remember_many() (the full write path), created over --weeks weeks; the
access log, the attempts and the technique ledger are bulk-inserted rows of the same shape
the library writes (shape, not the library's arithmetic: this measures reads). Each page is
fetched over HTTP from a real uvicorn server on loopback, --repeat times after one warm-up;
the table gives the client-side time (request to last byte) and the server's own render time.
"cold" is a page's first request on a fresh server (no warm-up; the past weeks are read then:
the dashboard command warms them in the background at start-up), "warm" the median and
maximum of the next --repeat requests (past weeks cached, the current week read live).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import table
from harness_memory import MemoryStore, Settings
from harness_memory.testing import ManualClock
from latency import ERRORS, synth

TECHNIQUES = ["prompt_restructure", "decomposition", "fresh_start", "escalate"]
WEEK = 7 * 86400


def build(path: Path, args) -> dict:
    rng = random.Random(11)
    start = time.time() - args.weeks * WEEK
    clock = ManualClock(start)
    t0 = time.perf_counter()
    with MemoryStore(path, clock=clock) as s:
        n = 0
        while n < args.memories:
            b = [synth(rng, n + k) for k in range(min(1000, args.memories - n))]
            s.remember_many(b)
            n += len(b)
            clock.advance(args.weeks * WEEK / (args.memories / 1000))
        t_mem = time.perf_counter() - t0
        sigs = []
        for e in ERRORS:  # real signatures from the template miner
            sigs.append(s.error_signature(f"{e} {rng.randint(1, 99)}"))
        b = s._core.backend
        now = time.time()
        ids = [r[0] for r in b.execute("SELECT id FROM memories")]
        with b.write() as c:
            c.executemany(
                "INSERT INTO memory_access_log(memory_id, agent_id, task_id, access_type, was_helpful, score, timestamp, "
                "duration_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    (
                        rng.choice(ids),
                        f"agent-{i % 8}",
                        f"T-{i % 50000}",
                        kind,
                        (1 if rng.random() < 0.7 else 0) if kind == "applied" else None,
                        rng.random(),
                        start + (now - start) * i / args.access,
                        rng.lognormvariate(2.0, 0.6) if i % 5 == 0 else None,
                    )  # a recall of 3 hits: its first row is timed
                    for i in range(args.access)
                    for kind in [("query", "query", "query", "applied", "updated")[i % 5]]
                ),
            )
            ledger: dict[tuple[str, str, str], list[int]] = {}
            rows = []
            for i in range(args.attempts):
                sg = rng.choice(sigs)
                tech = rng.choice(TECHNIQUES[:3])
                esc = rng.random() < 0.03
                ok = not esc and rng.random() < 0.3 + 0.4 * (hash((tech, sg.category)) % 2)
                res = "escalated" if esc else ("fixed" if ok else "failed")
                rows.append(
                    (
                        f"B-{i // 2}",
                        "escalate" if esc else tech,
                        res,
                        sg.id,
                        sg.category,
                        f"agent-{i % 8}",
                        start + (now - start) * i / args.attempts,
                    )
                )
                if not esc:
                    for key in (("global", "*"), ("category", sg.category), ("signature", sg.id)):
                        x = ledger.setdefault((tech, *key), [0, 0])
                        x[0 if ok else 1] += 1
            c.executemany(
                "INSERT INTO task_attempts(task_id, technique, result, error_signature, error_category, "
                "agent_id, attempted_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                rows,
            )
            c.executemany(
                "INSERT INTO technique_effectiveness(technique, level, error_key, error_category, successes, "
                "failures, attempts, success_rate, first_used, last_used) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [
                    (t, lvl, k, None if lvl == "global" else k, sc, f, sc + f, sc / (sc + f), start, now)
                    for (t, lvl, k), (sc, f) in ledger.items()
                ],
            )
            c.executemany(
                "INSERT INTO job_runs(job, started_at, finished_at, status, counts, holder) "
                "VALUES (?, ?, ?, 'ok', ?, 'bench')",
                [
                    (j, now - i * 3600, now - i * 3600 + 2.5, json.dumps({"examined": 1000}))
                    for i in range(200)
                    for j in ("decay", "expire")
                ],
            )
        b.execute("ANALYZE")
    return {
        "memories": args.memories,
        "access": args.access,
        "attempts": args.attempts,
        "remember_many_s": round(t_mem, 1),
        "build_s": round(time.perf_counter() - t0, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--memories", type=int, default=100_000)
    ap.add_argument("--access", type=int, default=1_000_000)
    ap.add_argument("--attempts", type=int, default=100_000)
    ap.add_argument("--weeks", type=int, default=26)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--db", default=None, help="reuse (or create) this database instead of a temporary one")
    args = ap.parse_args()
    import httpx
    import uvicorn

    from harness_memory.dashboard import build_app

    with tempfile.TemporaryDirectory() as d:
        path = Path(args.db) if args.db else Path(d) / "dash.db"
        info = build(path, args) if not path.exists() else {"reused": str(path)}
        print(json.dumps(info))
        with socket.socket() as so:
            so.bind(("127.0.0.1", 0))
            port = so.getsockname()[1]
        server = uvicorn.Server(
            uvicorn.Config(build_app(path, Settings(), warm=False), host="127.0.0.1", port=port, log_level="error")
        )
        th = threading.Thread(target=server.run, daemon=True)
        th.start()
        while not server.started:
            time.sleep(0.05)
        base = f"http://127.0.0.1:{port}/dashboard"
        with httpx.Client(timeout=60) as c:
            with MemoryStore(path) as s:  # a frequent signature and a memory, without asking the pages
                sig = s._core.backend.execute(
                    "SELECT error_signature FROM task_attempts WHERE error_signature IS NOT NULL LIMIT 1"
                ).fetchone()[0]
                mid = s._core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0]
            pages = [
                ("overview", "/"),
                ("techniques", "/techniques"),
                ("errors", "/errors"),
                ("error signature", f"/errors/{sig}"),
                ("memories (browse)", "/memories"),
                ("memories (filtered: agent, type, tag)", "/memories?agent=agent-3&type=failure&tags=flaky"),
                ("memories (search as an agent)", "/memories?q=payment+webhook+timeout&agent=agent-3"),
                ("memory", f"/memories/{mid}"),
                ("maintenance", "/maintenance"),
            ]
            # the floor measured in the same run: the stylesheet, served from memory through the same app and
            # middleware (token check, headers): what any page costs before it reads or renders anything
            floor = []
            for _ in range(max(5, args.repeat)):
                t0 = time.perf_counter()
                assert c.get(base + "/static/dashboard.css").status_code == 200
                floor.append((time.perf_counter() - t0) * 1000)
            floor_ms = statistics.median(floor[1:])
            out = []
            for name, p in pages:
                t0 = time.perf_counter()
                c.get(base + p)  # cold
                cold = (time.perf_counter() - t0) * 1000
                client, server_ms = [], []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    r = c.get(base + p)
                    client.append((time.perf_counter() - t0) * 1000)
                    assert r.status_code == 200, (p, r.status_code)
                    m = re.search(r"rendered in (\d+) ms", r.text)
                    server_ms.append(float(m.group(1)) if m else float("nan"))
                out.append(
                    [
                        name,
                        round(cold),
                        round(statistics.median(client)),
                        round(max(client)),
                        round(statistics.median(server_ms)),
                        f"{statistics.median(client) / floor_ms:.0f}x",
                        "yes" if max(client) < 300 else "NO",
                        len(r.content) // 1024,
                    ]
                )
        server.should_exit = True
        th.join(timeout=10)
    print(
        table(
            f"dashboard pages: {args.memories:,} memories, {args.access:,} access-log rows, "
            f"{args.attempts:,} retries (ms, {args.repeat} runs; floor: the stylesheet, {floor_ms:.1f} ms)",
            [
                "page",
                "cold",
                "warm median",
                "warm max",
                "server render (warm median)",
                "warm median / floor",
                "warm max < 300 ms",
                "KiB",
            ],
            out,
        )
    )


if __name__ == "__main__":
    main()
