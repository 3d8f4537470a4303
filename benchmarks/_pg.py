"""PostgreSQL helpers of ``latency.py`` (issue 10): a kept pgserver, one schema per size, and a bulk
fill through COPY with the HNSW index built after the load.

The bulk fill writes what ``remember`` writes for a new memory — the row (validated and redacted by
``writes.prepare``, embedded by the store's embedder), its tags, its tsvector row, its vector and
change-log entry, the keyword vocabulary — through COPY in chunks, with no duplicate checks (the
synthetic rows are unique). The HNSW index is dropped before the load and built once after it
(pgvector builds a graph from sorted input far faster than by one insert per row), then ANALYZE.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote

import numpy as np

from harness_memory import HashingEmbedder, MemoryStore, Settings


def is_pg(spec: str) -> bool:
    return spec == "pgserver" or spec.startswith(("postgresql://", "postgres://"))


def server_url(spec: str, keep_dir: Path | None) -> tuple[str, Any]:
    """``(base URL, server handle or None)``. ``pgserver`` starts the test dependency's server: in
    ``keep_dir/pgdata`` (kept between runs) or a temporary folder (deleted at the end)."""
    if spec != "pgserver":
        return spec, None
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="hm-run-"))  # quiets platformdirs
    import pgserver

    if keep_dir is None:
        srv = pgserver.get_server(tempfile.mkdtemp(prefix="hm-bench-pg-"), cleanup_mode="delete")
    else:
        srv = pgserver.get_server(keep_dir / "pgdata", cleanup_mode=None)
    return srv.get_uri(), srv


def tune_server(base: str, srv: Any, shared_buffers: str) -> None:
    """Give a kept pgserver room for a 1M-row HNSW index (its default shared_buffers is 128 MB)."""
    import psycopg

    with psycopg.connect(base, autocommit=True) as c:
        have = c.execute("SHOW shared_buffers").fetchone()[0]
        if have.replace(" ", "").lower() == shared_buffers.lower():
            return
        c.execute(f"ALTER SYSTEM SET shared_buffers = '{shared_buffers}'")
        c.execute("ALTER SYSTEM SET max_wal_size = '8GB'")
        c.execute("ALTER SYSTEM SET checkpoint_timeout = '30min'")
    if srv is not None:
        import pgserver

        pgserver.pg_ctl(["-w", "-m", "fast", "stop"], pgdata=srv.pgdata, user=srv.system_user)
        srv.ensure_postgres_running()
    print(f"  server: shared_buffers {have} -> {shared_buffers}", file=sys.stderr, flush=True)


def schema_url(base: str, schema: str, *, create: bool) -> str:
    import psycopg

    with psycopg.connect(base, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS vector")
        if create:
            c.execute(f"CREATE SCHEMA IF NOT EXISTS {schema}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options={quote(f'-c search_path={schema},public', safe='')}"


def drop_schema(base: str, schema: str) -> None:
    import psycopg

    with psycopg.connect(base, autocommit=True) as c:
        c.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


_MEM_COLS = (
    "id, uid, namespace, agent_id, scope, memory_type, content, task_signature, context_tags, importance, "
    "relevance_score, metadata, content_hash, created_at, updated_at, embedding_pending"
)


def bulk_fill(
    target: str, size: int, synth: Callable[[Any, int], dict], rng: Any, chunk: int = 10_000
) -> tuple[int, float, float]:
    """Grow the store at ``target`` to ``size`` memories by COPY; ``(rows, load seconds, index seconds)``."""
    import json

    import psycopg
    from pgvector.psycopg import register_vector

    from harness_memory import writes

    with MemoryStore(target, embedder=HashingEmbedder(), settings=Settings(embed_failure="raise")) as store:
        core = store._core
        if not store._core.backend.table_exists("memory_vectors"):
            store.remember("bulk fill: the first memory records the embedder", type="context", agent_id="bench")
        n = int(store._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
        if n >= size:
            return 0, 0.0, 0.0
        url = core.backend.url
        dims = core.embedder.dimensions
        t0 = time.perf_counter()
        with psycopg.connect(url, autocommit=True) as c:
            register_vector(c)
            c.execute("DROP INDEX IF EXISTS ix_memory_vectors_hnsw")
            next_id = int(c.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM memories").fetchone()[0])
            c.execute("CREATE TEMP TABLE fill_text (memory_id BIGINT, content TEXT, tags TEXT)")
            written = 0
            while n < size:
                items = [synth(rng, n + k) for k in range(min(chunk, size - n))]
                prepared = [writes.prepare(core, **it) for it in items]
                vecs = np.asarray(core.embed([p.content for p in prepared]), dtype=np.float32)
                now = time.time()
                ids = range(next_id, next_id + len(prepared))
                with c.transaction():
                    with c.cursor().copy(f"COPY memories ({_MEM_COLS}) FROM STDIN") as cp:
                        for i, p in zip(ids, prepared):
                            cp.write_row(
                                (
                                    i,
                                    uuid.uuid4().hex,
                                    p.namespace,
                                    p.agent_id,
                                    p.scope,
                                    p.type,
                                    p.content,
                                    p.task_signature,
                                    json.dumps(p.tags),
                                    p.importance,
                                    1.0,
                                    json.dumps(p.metadata),
                                    p.content_hash,
                                    now,
                                    now,
                                    0,
                                )
                            )
                    with c.cursor().copy("COPY memory_tags (memory_id, tag) FROM STDIN") as cp:
                        for i, p in zip(ids, prepared):
                            for t in dict.fromkeys(p.tags):
                                cp.write_row((i, t))
                    with c.cursor().copy("COPY fill_text (memory_id, content, tags) FROM STDIN") as cp:
                        for i, p in zip(ids, prepared):
                            cp.write_row((i, p.content, " ".join(p.tags)))
                    c.execute(
                        "INSERT INTO memories_fts (memory_id, doc) SELECT memory_id, "
                        "setweight(to_tsvector('english', content), 'A') || setweight(to_tsvector('english', tags), 'B') "
                        "FROM fill_text"
                    )
                    c.execute("TRUNCATE fill_text")
                    cols = "memory_id, namespace, agent_id, scope, memory_type, archived, embedding"
                    with c.cursor().copy(f"COPY memory_vectors ({cols}) FROM STDIN (FORMAT BINARY)") as cp:
                        cp.set_types(["int8", "text", "text", "text", "text", "int4", "vector"])
                        for i, p, v in zip(ids, prepared, vecs):
                            cp.write_row((i, p.namespace, p.agent_id, p.scope, p.type, 0, v))
                    c.execute(
                        "INSERT INTO vector_changes (memory_id, op) SELECT g, 'put' FROM generate_series(%s::bigint, %s) g",
                        (ids.start, ids.stop - 1),
                    )
                next_id = ids.stop
                n += len(prepared)
                written += len(prepared)
                if n % 50_000 < chunk:
                    rate = written / (time.perf_counter() - t0)
                    print(f"  copied {n} rows ({rate:.0f}/s)", file=sys.stderr, flush=True)
            c.execute("SELECT setval(pg_get_serial_sequence('memories', 'id'), %s)", (next_id - 1,))
            # the vocabulary (document frequency per lexeme) recounted from the tsvector rows
            c.execute(
                "INSERT INTO memories_fts_vocab (term, docs) SELECT word, ndoc FROM ts_stat('SELECT doc FROM memories_fts') "
                "ON CONFLICT (term) DO UPDATE SET docs = excluded.docs"
            )
            # and its '' row: the documents' lengths (positions) summed, BM25's mean length (migration 0024)
            c.execute(
                "INSERT INTO memories_fts_vocab (term, docs) SELECT '', COALESCE(SUM(array_length(u.positions, 1)), 0) "
                "FROM memories_fts, unnest(doc) AS u ON CONFLICT (term) DO UPDATE SET docs = excluded.docs"
            )
            t_load = time.perf_counter() - t0
            print(f"  loaded {written} rows in {t_load:.0f} s; building the HNSW index", file=sys.stderr, flush=True)
            t1 = time.perf_counter()
            c.execute("SET maintenance_work_mem = '4GB'")
            c.execute("SET max_parallel_maintenance_workers = 1")
            if dims <= 2000:  # the library's graph: partial, the rows a batch leaves pending are not in it
                from harness_memory.postgres_backend import PostgresBackend

                c.execute(PostgresBackend._HNSW.format(t="memory_vectors", with_=""))
            c.execute("ANALYZE")
            t_index = time.perf_counter() - t1
            print(f"  HNSW index built in {t_index:.0f} s", file=sys.stderr, flush=True)
        return written, t_load, t_index
