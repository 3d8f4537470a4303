"""Where a PostgreSQL recall's time goes, and how good its vector channel is (issue 10).

Runs against a store ``latency.py --reuse DIR --fill copy`` built (schema ``hm_latency_<size>`` on the
kept pgserver in ``DIR/pgdata``, or ``--url`` for a server of your own) with ``latency.py``'s queries
(a memory's words without its task id, 90 characters):

1. ``statements``: recalls without bookkeeping, every SQL statement timed (wall clock, client side)
   and grouped by kind (keyword search, HNSW search, scoring rows, ...), with the recall's p50 / p95;
   ``--explain`` adds ``EXPLAIN (ANALYZE, BUFFERS)`` of each kind's statement of the last recall.
2. ``overlap``: the HNSW search alone (top 50), its overlap with an exact search in numpy over the
   same vectors, with the recall's visibility filter (own or global, not archived) and without any
   filter, for each ``--settings`` string (``hnsw.ef_search=400;hnsw.iterative_scan=strict_order``).
3. ``top10``: whole recalls through the URL's options for each ``--settings`` string, and the final
   top 10's overlap with the same recalls whose vector channel is the exact search.
4. ``near_duplicates``: ``--near`` stored memories, each changed a little (a word appended, its first
   number changed, a word swapped), searched as ``remember`` searches for a near duplicate (the
   nearest 4 of the memory's agent, scope and type) at each ``--ef`` against the exact search over
   the same rows: how many stored rows at cosine >= 0.95 the HNSW search misses, and its time (on a store
   whose compact built an IVFFlat index, at each ``--probes``).
5. ``graph``: the first ``--graph-rows`` vectors of the store copied into a scratch schema
   (``hm_graph_scratch``, dropped after), indexed with each ``--graph m/ef_construction``: build time,
   1,000 inserts of the next rows (rolled back), the overlap@50 of part 2 (own or global, the
   session settings) and the near-duplicate misses of part 4 (at ``ef_search`` 100) on that copy.
6. ``batches``: ``remember_many`` of ``--batch`` new memories in each of ``--modes``, alternated for
   ``--rounds``: ``graph`` (the graph inserts in the batch, one graph search per memory for its near
   duplicates), ``backlog`` (the vectors left in the backlog, the same searches), ``codes`` (the
   backlog, and the near duplicates found through the sign codes of migration 0020); after a batch
   whose vectors wait in the backlog they are moved into the graph (compact's step), counted in the
   sustained rate (writes to the store: run it on a kept store you may grow).

    nice -n 10 python benchmarks/pg_recall_profile.py --reuse /tmp/hm10/reuse --size 1000000 --queries 40 \\
        --settings "hnsw.ef_search=100" "hnsw.ef_search=400" --explain

The overlap part loads every vector of the schema into memory (1M x 384 float32: 1.5 GB).
"""

from __future__ import annotations

import argparse
import collections
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import quote

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _pg
from _common import pct, table
from harness_memory import HashingEmbedder, MemoryStore, postgres_backend as pb
from latency import _queries

KINDS = (
    ("memories_fts f", "keyword search"),
    ("memories_fts_vocab v", "term frequencies"),
    ("ORDER BY embedding <=>", "HNSW search"),
    ("(embedding <=> ?) + 0", "exact vector search"),
    ("1 - (embedding <=>", "similarities of keyword-only candidates"),
    ("m.context_tags, m.relevance_score", "scoring rows"),
    ("FROM embedder_info", "embedder check"),
    ("SELECT id, uid, namespace", "fetch the hits"),
)


def kind(sql: str) -> str:
    return next((name for key, name in KINDS if key in sql), sql.split(" FROM ")[0][:40])


class Tracer:
    """Every statement the backend runs, with its wall-clock time."""

    def __init__(self) -> None:
        self.log: list[tuple[str, tuple, float]] = []
        self.exact = False
        conn_execute, vector_rows, knn = pb._Conn.execute, pb.PostgresBackend._vector_rows, pb.PostgresBackend._knn
        tracer = self

        def execute(conn, sql, params=()):
            t0 = time.perf_counter()
            try:
                return conn_execute(conn, sql, params)
            finally:
                tracer.log.append((sql, tuple(params or ()), time.perf_counter() - t0))

        def rows(backend, sql, params):
            t0 = time.perf_counter()
            try:
                return vector_rows(backend, sql, params)
            finally:
                tracer.log.append((sql, tuple(params), time.perf_counter() - t0))

        def search(backend, vector, conds, params, k):
            if not tracer.exact:
                return knn(backend, vector, conds, params, k)
            q = backend._vec(vector)
            sql = (
                f"SELECT memory_id, (embedding <=> ?) + 0 AS d FROM {backend.VEC_TABLE} WHERE {' AND '.join(conds)} "
                "ORDER BY d, memory_id LIMIT ?"
            )
            return [(int(r[0]), 1.0 - float(r[1])) for r in backend._vector_rows(sql, (q, *params, int(k)))]

        pb._Conn.execute = execute
        pb.PostgresBackend._vector_rows = rows
        pb.PostgresBackend._knn = search


def with_settings(url: str, settings: str) -> str:
    opts = "".join(f"-c {s.strip()} " for s in settings.split(";") if s.strip())
    return url.replace("options=", "options=" + quote(opts, safe=""), 1)


def statements(url: str, tracer: Tracer, queries, explain: bool) -> None:
    with MemoryStore(url, embedder=HashingEmbedder()) as store:
        for q, a in queries[:10]:  # warm the caches
            store.recall(q, agent_id=a, limit=10, record=False)
        per: dict[str, list[float]] = collections.defaultdict(list)
        total, counts = [], []
        for q, a in queries[10:]:
            tracer.log.clear()
            t0 = time.perf_counter()
            store.recall(q, agent_id=a, limit=10, record=False)
            total.append((time.perf_counter() - t0) * 1000)
            agg: dict[str, float] = collections.defaultdict(float)
            for sql, _, dt in tracer.log:
                agg[kind(sql)] += dt * 1000
            agg["(all statements)"] = sum(dt for *_, dt in tracer.log) * 1000
            counts.append(len(tracer.log))
            for k in set(agg) | set(per):
                per[k].append(agg.get(k, 0.0))
        rows = [[k, round(float(np.mean(v)), 2), round(pct(v, 95), 2)] for k, v in per.items()]
        rows.sort(key=lambda r: -r[1])
        rows.append(["(recall, end to end)", round(float(np.mean(total)), 2), round(pct(total, 95), 2)])
        print(
            table(
                f"{len(total)} recalls without bookkeeping: p50 {pct(total, 50):.1f} ms, p95 {pct(total, 95):.1f} ms, "
                f"{np.mean(counts):.1f} statements each",
                ["statement", "mean ms", "p95 ms"],
                rows,
            ),
            flush=True,
        )
        if explain:
            b = store._core.backend
            seen = set()
            for sql, params, dt in list(tracer.log):
                k = kind(sql)
                if k in seen:
                    continue
                seen.add(k)
                print(f"\n== {k} ({dt * 1000:.1f} ms when traced)")
                with b._connection() as pg:
                    b._vector_ready(pg)
                    for (line,) in pg.execute("EXPLAIN (ANALYZE, BUFFERS) " + b._sql(sql), params):
                        print("   ", line if len(line) < 300 else line[:300] + " ...")


def overlap(
    base_url: str,
    schema: str,
    queries,
    settings: list[str],
    k: int = 50,
    table_name: str = "memory_vectors",
    quiet: bool = False,
) -> list[list]:
    import psycopg
    from pgvector.psycopg import register_vector

    c = psycopg.connect(_pg.schema_url(base_url, schema, create=False), autocommit=True)
    register_vector(c)
    ids, agents, shared, live, vecs = [], [], [], [], []
    with c.transaction(), c.cursor(name="all_vectors", binary=True) as cur:
        cur.itersize = 20_000
        cur.execute(
            f"SELECT memory_id, agent_id, scope = 'global', archived = 0, embedding FROM {table_name} "
            "WHERE namespace = 'default'"
        )
        for mid, agent, glob, alive, vec in cur:
            ids.append(mid)
            agents.append(agent)
            shared.append(glob)
            live.append(alive)
            vecs.append(vec.to_numpy())
    mat = np.vstack(vecs)
    del vecs
    ids_a, agents_a, shared_a, live_a = np.asarray(ids), np.asarray(agents), np.asarray(shared), np.asarray(live)
    emb = HashingEmbedder()
    rows = []
    for s in settings:
        c.execute("RESET ALL")
        for name, value in pb.SESSION_SETTINGS.items():
            c.execute(f"SET {name} = {value}")
        for part in (p.strip() for p in s.split(";") if p.strip()):
            c.execute(f"SET {part}")
        for filtered in (True, False):
            shares, ms = [], []
            for text, agent in queries:
                qv = np.asarray(emb.embed_batch([text])[0], dtype=np.float32)
                mask = live_a & ((agents_a == agent) | shared_a) if filtered else live_a
                sims = np.where(mask, mat @ qv, -np.inf)
                top = np.argpartition(-sims, k)[:k]
                exact = set(ids_a[top].tolist())
                where = "NOT pending AND namespace = 'default' AND archived = 0" + (
                    " AND (agent_id = %s OR scope = 'global')" if filtered else ""
                )
                params = (agent, qv) if filtered else (qv,)
                t0 = time.perf_counter()
                got = c.execute(
                    f"SELECT memory_id FROM {table_name} WHERE {where} ORDER BY embedding <=> %s LIMIT {k}", params
                ).fetchall()
                ms.append((time.perf_counter() - t0) * 1000)
                shares.append(len(exact & {r[0] for r in got}) / k)
            rows.append(
                [s, "own or global" if filtered else "none", round(float(np.mean(shares)), 3), pct(ms, 50), pct(ms, 95)]
            )
    c.close()
    if not quiet:
        print(
            table(
                f"HNSW top {k} against the exact top {k} ({len(queries)} queries)",
                ["settings", "filter", "overlap", "p50 ms", "p95 ms"],
                rows,
            )
        )
    return rows


def graph(base_url: str, schema: str, queries, rows_n: int, configs: list[str], near: int) -> None:
    """Part 5: the same vectors under graphs of other parameters (a scratch copy of the first rows)."""
    import psycopg

    scratch = "hm_graph_scratch"
    c = psycopg.connect(base_url, autocommit=True)
    c.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
    c.execute(f"CREATE SCHEMA {scratch}")
    c.execute(f"CREATE TABLE {scratch}.v AS SELECT * FROM {schema}.memory_vectors WHERE memory_id <= %s", (rows_n,))
    c.execute(f"CREATE TABLE {scratch}.memories AS SELECT * FROM {schema}.memories WHERE id <= %s", (rows_n,))
    c.execute(f"ANALYZE {scratch}.v")  # without statistics the planner sorted the whole table: an exact search
    n = int(c.execute(f"SELECT COUNT(*) FROM {scratch}.v").fetchone()[0])
    c.execute("SET maintenance_work_mem = '2GB'")
    c.execute("SET max_parallel_maintenance_workers = 1")
    out = []
    try:
        for cfg in configs:
            m, efc = (int(x) for x in cfg.split("/"))
            c.execute(f"DROP INDEX IF EXISTS {scratch}.ix_v")
            t0 = time.perf_counter()
            c.execute(
                f"CREATE INDEX ix_v ON {scratch}.v USING hnsw (embedding vector_cosine_ops) "
                f"WITH (m = {m}, ef_construction = {efc})"
            )
            build = time.perf_counter() - t0
            with c.transaction():
                t0 = time.perf_counter()
                c.execute(
                    f"INSERT INTO {scratch}.v SELECT * FROM {schema}.memory_vectors WHERE memory_id > %s "
                    "AND memory_id <= %s",
                    (rows_n, rows_n + 1000),
                )
                inserts = time.perf_counter() - t0
                raise psycopg.Rollback()
            ov = overlap(
                base_url, scratch, [(q, a) for q, a in queries], ["hnsw.ef_search=100"], table_name="v", quiet=True
            )
            nd = near_duplicates(base_url, scratch, near, [100], table_name="v", top=rows_n, quiet=True)
            out.append(
                [f"m = {m}, ef_construction = {efc}", round(build), round(1000 / inserts), ov[0][2], ov[0][4], nd[0][2]]
            )
            print(out[-1], flush=True)
    finally:
        c.execute(f"DROP SCHEMA IF EXISTS {scratch} CASCADE")
        c.close()
    print(
        table(
            f"HNSW graphs over the first {n} vectors (overlap@50 own or global and near duplicates at ef_search 100)",
            ["graph", "build s", "inserts/s (1,000)", "overlap@50", "p95 ms", "near duplicates missed"],
            out,
        )
    )


def top10(url: str, tracer: Tracer, queries, settings: list[str]) -> None:
    got: dict[str, list[list[int]]] = {}
    rows = []
    for s in [*settings, "exact"]:
        tracer.exact = s == "exact"
        with MemoryStore(url if tracer.exact else with_settings(url, s), embedder=HashingEmbedder()) as store:
            for q, a in queries[:10]:
                store.recall(q, agent_id=a, limit=10, record=False)
            lat, res = [], []
            for q, a in queries[10:]:
                t0 = time.perf_counter()
                hits = store.recall(q, agent_id=a, limit=10, record=False)
                lat.append((time.perf_counter() - t0) * 1000)
                res.append([h.memory.id for h in hits])
        got[s] = res
        rows.append([s, round(pct(lat, 50), 1), round(pct(lat, 95), 1)])
    tracer.exact = False
    for r in rows:
        same = [len(set(a) & set(b)) / max(1, len(b)) for a, b in zip(got[r[0]], got["exact"])]
        r.append(round(float(np.mean(same)), 3))
    print(
        table(
            "whole recalls (limit 10): final top 10 against the same recall with an exact vector channel",
            ["vector search", "p50 ms", "p95 ms", "top-10 overlap"],
            rows,
        )
    )


def near_duplicates(
    base_url: str,
    schema: str,
    count: int,
    efs: list[int],
    threshold: float = 0.95,
    table_name: str = "memory_vectors",
    top: int | None = None,
    quiet: bool = False,
    probes: Sequence[int] = (),
) -> list[list]:
    import re

    import psycopg
    from pgvector.psycopg import register_vector

    c = psycopg.connect(_pg.schema_url(base_url, schema, create=False), autocommit=True)
    register_vector(c)
    for name, value in pb.SESSION_SETTINGS.items():
        c.execute(f"SET {name} = {value}")
    rng = random.Random(3)
    top = top or int(c.execute("SELECT MAX(id) FROM memories").fetchone()[0])
    rows: list = []
    while len(rows) < count:
        rows += c.execute(
            "SELECT id, content, namespace, agent_id, scope, memory_type FROM memories WHERE id = ANY(%s) "
            "AND key IS NULL AND thread_id IS NULL",
            ([rng.randint(1, top) for _ in range(count)],),
        ).fetchall()
    rows = rows[:count]

    def changed(text: str, k: int) -> str:
        if k % 3 == 0:
            return text + " again"
        if k % 3 == 1:
            return re.sub(r"\d+", lambda m: str(int(m.group()) + 1), text, count=1)
        return text.replace(" the ", " a ", 1)

    vecs = np.asarray(HashingEmbedder().embed_batch([changed(r[1], k) for k, r in enumerate(rows)]), np.float32)
    cond = "namespace = %s AND agent_id = %s AND scope = %s AND memory_type = %s"

    def decide(found: list) -> int | None:
        return next((int(m) for m, d in found if 1 - d >= threshold), None)

    truth = [
        decide(
            c.execute(
                f"SELECT memory_id, (embedding <=> %s) + 0 AS d FROM {table_name} WHERE {cond} "
                "ORDER BY d, memory_id LIMIT 4",
                (v, *r[2:]),
            ).fetchall()
        )
        for v, r in zip(vecs, rows)
    ]
    present = sum(t is not None for t in truth)
    out = []
    # an HNSW store's searches per ef_search, an IVFFlat store's per probes (the write path's is NEAR_PROBES)
    settings = [(ef, f"hnsw.ef_search = {int(ef)}") for ef in efs]
    settings += [(f"probes {p}", f"ivfflat.probes = {int(p)}") for p in probes]
    for ef, setting in settings:
        c.execute(f"SET {setting}")
        t0 = time.perf_counter()
        got = [
            decide(
                c.execute(
                    f"SELECT memory_id, embedding <=> %s AS d FROM {table_name} WHERE NOT pending AND {cond} "
                    "ORDER BY embedding <=> %s LIMIT 4",
                    (v, *r[2:], v),
                ).fetchall()
            )
            for v, r in zip(vecs, rows)
        ]
        ms = (time.perf_counter() - t0) * 1000 / len(rows)
        missed = sum(t is not None and g is None for g, t in zip(got, truth))
        other = sum(t is not None and g is not None and g != t for g, t in zip(got, truth))
        out.append([ef, round(ms, 2), f"{missed} / {present}", other])
    c.close()
    if not quiet:
        print(
            table(
                f"near-duplicate searches: {len(rows)} changed memories, {present} with a stored row at "
                f"cosine >= {threshold}",
                ["ef_search / probes", "ms per search", "missed", "another row"],
                out,
            )
        )
    return out


def batches(url: str, rounds: int, size: int, modes: list[str]) -> None:
    """``remember_many`` of ``size`` new memories in each of ``modes`` (see the module's docstring),
    alternately, each batch's backend methods timed; after a batch whose vectors wait in the backlog
    they are moved into the graph as compact moves them, and that time is counted in the sustained
    rate. The client's CPU time per batch beside the wall clock."""
    from harness_memory import postgres_backend
    from latency import _PHASES, synth

    rng = random.Random(time.time_ns())
    out = []
    graph_us = postgres_backend.CODE_GRAPH_US
    with MemoryStore(url, embedder=HashingEmbedder()) as store:
        b = store._core.backend
        b.index_backlog()  # an earlier run's backlog
        spent: dict[str, float] = {}
        for name in (*_PHASES, "_near_by_codes"):
            orig = getattr(b, name)

            def timed(*a, _orig=orig, _name=name, **k):
                t0 = time.perf_counter()
                try:
                    return _orig(*a, **k)
                finally:
                    spent[_name] = spent.get(_name, 0.0) + time.perf_counter() - t0

            setattr(b, name, timed)
        first = 90_000_000 + rng.randrange(10**6) * 100
        n = 0
        for r in range(rounds):
            for mode in modes if r % 2 == 0 else modes[::-1]:
                b._deferred = mode != "graph"
                postgres_backend.CODE_GRAPH_US = graph_us if mode == "codes" else 0.0  # 0: every group to the graph
                items = [synth(rng, first + n * size + k) for k in range(size)]
                n += 1
                spent.clear()
                t0, c0 = time.perf_counter(), time.process_time()
                store.remember_many(items)
                wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                t1 = time.perf_counter()
                moved = b.index_backlog() if mode != "graph" else 0
                later = time.perf_counter() - t1
                out.append(
                    [
                        mode,
                        round(size / wall, 1),
                        round(size / (wall + later), 1),
                        round(cpu * 1000),
                        round(spent.get("vector_knn_many", 0.0) * 1000),
                        round(spent.get("_near_by_codes", 0.0) * 1000),
                        round(spent.get("put_vectors", 0.0) * 1000),
                        f"{moved} in {later * 1000:.0f}",
                        round(os.getloadavg()[0], 1),
                    ]
                )
                print(out[-1], flush=True)
        b._deferred = None
        postgres_backend.CODE_GRAPH_US = graph_us
    print(
        table(
            f"remember_many of {size} new memories by mode (alternated)",
            [
                "mode",
                "memories/s",
                "with the graph inserts",
                "client CPU ms",
                "near-dup ms",
                "of which codes ms",
                "put_vectors ms",
                "moved into the graph (ms)",
                "load",
            ],
            out,
        ),
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reuse", help="latency.py's --reuse DIR (its kept pgserver)")
    ap.add_argument("--url", help="a PostgreSQL server's URL instead of the kept pgserver")
    ap.add_argument("--size", type=int, default=1_000_000, help="the schema hm_latency_<size>")
    ap.add_argument("--queries", type=int, default=40)
    ap.add_argument("--settings", nargs="+", default=["hnsw.ef_search=100"], help="session settings to compare")
    ap.add_argument("--parts", nargs="+", default=["statements", "overlap", "top10"])
    ap.add_argument("--explain", action="store_true")
    ap.add_argument("--near", type=int, default=300, help="near_duplicates: changed memories")
    ap.add_argument("--graph", nargs="+", default=["16/64", "24/128"], help="graph: m/ef_construction to compare")
    ap.add_argument("--graph-rows", type=int, default=300_000, help="graph: the first N vectors of the store")
    ap.add_argument("--ef", type=int, nargs="*", default=[100, 40, 400], help="near_duplicates: ef_search values")
    ap.add_argument(
        "--probes", type=int, nargs="*", default=[], help="near_duplicates: ivfflat.probes values (an IVFFlat store)"
    )
    ap.add_argument("--rounds", type=int, default=2, help="batches: rounds of one batch per mode")
    ap.add_argument("--batch", type=int, default=1000, help="batches: memories per batch")
    ap.add_argument(
        "--modes", nargs="+", default=["backlog", "codes"], choices=["graph", "backlog", "codes"], help="batches"
    )
    args = ap.parse_args()
    if not args.url and not args.reuse:
        ap.error("--reuse DIR or --url URL")
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hm-run-"))
    base, _srv = _pg.server_url(args.url or "pgserver", None if args.url else Path(args.reuse))
    schema = f"hm_latency_{args.size}"
    url = _pg.schema_url(base, schema, create=False)
    tracer = Tracer()
    with MemoryStore(url, embedder=HashingEmbedder()) as store:
        top = int(store._core.backend.execute("SELECT MAX(id) FROM memories").fetchone()[0])
    queries = _queries(random.Random(7 + args.size), top, args.queries + 10)
    if "statements" in args.parts:
        statements(url, tracer, queries, args.explain)
    if "overlap" in args.parts:
        overlap(base, schema, queries[10:], args.settings)
    if "top10" in args.parts:
        top10(url, tracer, queries, args.settings)
    if "near_duplicates" in args.parts:
        near_duplicates(base, schema, args.near, args.ef, probes=args.probes)
    if "graph" in args.parts:
        graph(base, schema, queries[10:], args.graph_rows, args.graph, args.near)
    if "batches" in args.parts:
        batches(url, args.rounds, args.batch, args.modes)


if __name__ == "__main__":
    main()
