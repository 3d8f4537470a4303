"""PostgreSQL's vector backlog (issue 10): a batch's vectors wait outside the HNSW graph (``pending``,
no graph insert in the batch), every search reads them exactly beside the graph, and compact — or a
batch that finds more than ``BACKLOG_ROWS`` waiting — moves them into it. A store whose HNSW index
predates migration 0018 keeps writing into its graph until compact rebuilds the index partial. And
the keyword index's GIN pending list stays short (migration 0019)."""

from __future__ import annotations

import re

import numpy as np
import psycopg
import pytest

import pgtestdb
from harness_memory import MemoryStore, postgres_backend

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


@pytest.fixture
def pg_url():
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def _items(n: int, start: int = 0, agent: str = "a") -> list[dict]:
    return [
        {
            "content": (
                f"note {i}: {WORDS[i % 16]} {WORDS[(i * 7) % 16]} {WORDS[(i * 5 + 3) % 16]} task {i * 7919}; the "
                f"build of {WORDS[(i * 3) % 16]} failed on the runner and pinning {WORDS[(i * 11) % 16]} fixed it"
            ),
            "type": "success",
            "agent_id": agent,
        }
        for i in range(start, start + n)
    ]


def _pending(s: MemoryStore) -> set[int]:
    return {r[0] for r in s._core.backend.execute("SELECT memory_id FROM memory_vectors WHERE pending")}


def _hnsw_def(s: MemoryStore) -> str:
    return s._core.backend.execute("SELECT pg_get_indexdef(to_regclass('ix_memory_vectors_hnsw'))").fetchone()[0]


def test_a_batch_leaves_its_vectors_in_the_backlog_and_searches_find_them(pg_url):
    with MemoryStore(pg_url) as s:
        s.remember("the first memory records the embedder", type="context", agent_id="a")
        assert "WHERE (NOT pending)" in _hnsw_def(s)
        ids = [m.id for m in s.remember_many(_items(40))]
        assert _pending(s) == set(ids)
        assert s._core.backend.backlog() == 40
        # the vector channel reads the backlog exactly: each memory's own content finds it first
        for k in (0, 17, 39):
            hits = s.recall(_items(1, k)[0]["content"], agent_id="a", channels=["vector"], limit=3)
            assert hits[0].memory.id == ids[k]
        # a near duplicate of a pending row reinforces it, one at a time and in a batch
        item = _items(1, 5)[0]
        near = dict(item, content=item["content"] + " again")
        vec = s._core.embed([item["content"], near["content"]])
        assert float(np.dot(vec[0], vec[1])) >= s.settings.near_duplicate_threshold
        assert s.remember(**near).id == ids[5]
        batch = [dict(it, content=it["content"] + " once more") for it in _items(40)]
        assert [m.id for m in s.remember_many(batch)] == ids
        assert s.stats()["memories"] == 41


def test_compact_moves_the_backlog_into_the_graph(pg_url):
    with MemoryStore(pg_url) as s:
        ids = [m.id for m in s.remember_many(_items(50))]
        assert len(_pending(s)) == 50
        s.run_job("compact")
        assert _pending(s) == set() and s._core.backend.backlog() == 0
        for k in (3, 44):
            hits = s.recall(_items(1, k)[0]["content"], agent_id="a", channels=["vector"], limit=3)
            assert hits[0].memory.id == ids[k]
        assert s.remember(**dict(_items(1, 3)[0], content=_items(1, 3)[0]["content"] + " again")).id == ids[3]


def test_a_batch_past_the_bound_moves_the_oldest_into_the_graph(pg_url, monkeypatch):
    monkeypatch.setattr(postgres_backend.PostgresBackend, "BACKLOG_ROWS", 50)
    with MemoryStore(pg_url) as s:
        first = [m.id for m in s.remember_many(_items(40))]
        assert _pending(s) == set(first)
        second = [m.id for m in s.remember_many(_items(40, 40))]
        waiting = _pending(s)
        assert waiting == set(sorted(first + second)[-50:])  # the 30 oldest moved, the newest 50 wait
        hits = s.recall(_items(1, 2)[0]["content"], agent_id="a", channels=["vector"], limit=3)
        assert hits[0].memory.id == first[2]  # moved into the graph, still found


def test_searches_merge_the_graph_and_the_backlog_by_distance(pg_url):
    """The nearest rows come from either side: a query between a graph row and a pending row
    gets both, nearest first, and a filter applies to both sides."""
    with MemoryStore(pg_url) as s:
        graph_ids = [m.id for m in s.remember_many(_items(40))]
        s.run_job("compact")
        pending_ids = [m.id for m in s.remember_many(_items(40, 40))]
        other = [m.id for m in s.remember_many(_items(40, 80, agent="b"))]
        b = s._core.backend
        for k in (1, 45, 70):
            vec = s._core.embed([_items(1, k)[0]["content"]])[0]
            got = b.vector_knn(vec, namespace="default", agent_id="a", k=80)
            assert len(got) == 80 and {i for i, _ in got} == set(graph_ids + pending_ids)
            sims = [sim for _, sim in got]
            assert sims == sorted(sims, reverse=True)
            exact = sorted(((float(np.dot(vec, v)), i) for i, v in b.get_vectors(graph_ids + pending_ids).items()))
            assert got[0][0] == exact[-1][1]
            assert not set(i for i, _ in b.vector_knn(vec, namespace="default", agent_id="b", k=5)) - set(other)


def test_an_index_from_before_the_backlog_keeps_every_row_in_the_graph_until_compact_rebuilds_it(pg_url):
    with MemoryStore(pg_url) as s:
        s.remember("the first memory records the embedder", type="context", agent_id="a")
    with psycopg.connect(pg_url, autocommit=True) as c:  # the index as migrations before 0018 built it
        c.execute("DROP INDEX ix_memory_vectors_hnsw")
        c.execute(
            "CREATE INDEX ix_memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops) WITH (m = 8)"
        )
    with MemoryStore(pg_url) as s:
        s.remember_many(_items(40))
        assert _pending(s) == set()
        s.run_job("compact", force=True)
        d = _hnsw_def(s)
        assert "WHERE (NOT pending)" in d and "m='8'" in d  # rebuilt partial, its options kept
    with MemoryStore(pg_url) as s:
        assert len({m.id for m in s.remember_many(_items(40, 40))} & _pending(s)) == 40


def test_migration_0018_adds_the_backlog_to_a_store_with_vectors(pg_url):
    with MemoryStore(pg_url) as s:
        ids = [m.id for m in s.remember_many(_items(40))]
        s.run_job("compact")
    with psycopg.connect(pg_url, autocommit=True) as c:  # the store as step 0017 left it (0019 runs again: harmless)
        c.execute("ALTER TABLE memory_vectors DROP COLUMN pending CASCADE")
        c.execute("DELETE FROM schema_migrations WHERE name >= '0018_vector_backlog'")
        assert c.execute("SELECT to_regclass('ix_memory_vectors_hnsw')").fetchone()[0] is None  # it needed the column
        c.execute("CREATE INDEX ix_memory_vectors_hnsw ON memory_vectors USING hnsw (embedding vector_cosine_ops)")
    with MemoryStore(pg_url) as s:
        assert s._core.backend.backlog() == 0
        assert s._core.backend.execute("SELECT to_regclass('ix_memory_vectors_pending') IS NOT NULL").fetchone()[0]
        hits = s.recall(_items(1, 9)[0]["content"], agent_id="a", channels=["vector"], limit=3)
        assert hits[0].memory.id == ids[9]


def _buffers(s: MemoryStore, term: str) -> int:
    plan = s._core.backend.execute(
        "EXPLAIN (ANALYZE, BUFFERS) SELECT memory_id FROM memories_fts WHERE doc @@ to_tsquery('english', ?)", (term,)
    ).fetchall()
    return max(int(m) for (line,) in plan for m in re.findall(r"shared hit=(\d+)", line))


def test_a_keyword_search_reads_a_short_gin_pending_list(pg_url):
    """New tsvector entries wait in the GIN index's pending list, which every search reads whole:
    migration 0019 keeps it to 64 kB (8 pages), where the default let it grow to 4 MB."""
    with MemoryStore(pg_url) as s:
        s.remember("zyzzyva appears once", type="success", agent_id="a")
        for n in range(6):
            s.remember_many(_items(100, 100 * n))
        assert _buffers(s, "zyzzyva") <= 16
        with psycopg.connect(pg_url, autocommit=True) as c:  # what the default list costs the same search
            c.execute("ALTER INDEX ix_memories_fts_doc RESET (gin_pending_list_limit)")
        s.remember_many(_items(600, 1000))
        assert _buffers(s, "zyzzyva") > 32


def test_moving_the_backlog_reports_what_moved_when_another_host_moved_it_first(pg_url, monkeypatch):
    """compact counts the backlog, then moves it in steps: when another host's compact moved those
    rows in between, each step finds nothing, and the count it reports is what it moved (none)."""
    with MemoryStore(pg_url) as s:
        s.remember_many(_items(40))
        b = s._core.backend
        assert b.index_backlog() == 40  # the other host's compact
        monkeypatch.setattr(b, "backlog", lambda: 40)  # what this one counted before that
        assert b.index_backlog() == 0
