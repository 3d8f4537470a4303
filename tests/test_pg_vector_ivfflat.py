"""PostgreSQL's IVFFlat vector index (issue 10): with ``maintenance.vector_index = "ivfflat"`` compact
replaces the HNSW graph by an IVFFlat index once the store holds ``IVF_MIN_ROWS`` vectors (built
concurrently, swapped in a short transaction), retrains it when the rows have grown ``IVF_GROWTH``-fold
since, and goes back to HNSW when asked; searches through it still return k visible rows of a scoped
query, find another connection's new row at once, and read the backlog beside it."""

from __future__ import annotations

from urllib.parse import quote

import pytest

import pgtestdb
from harness_memory import MemoryStore, Settings, postgres_backend
from harness_memory.errors import ConfigurationError, InvalidInputError
from harness_memory.settings import MaintenanceSettings, from_environment

WORDS = "alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa".split()


@pytest.fixture
def pg_url(monkeypatch):
    monkeypatch.setattr(postgres_backend.PostgresBackend, "IVF_MIN_ROWS", 60)
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


def _items(n: int, start: int = 0, agent: str = "a") -> list[dict]:
    return [
        {
            "content": f"note {i}: {WORDS[i % 16]} {WORDS[(i * 7) % 16]} {WORDS[(i * 5 + 3) % 16]} task {i * 7919}; "
            f"the build of {WORDS[(i * 3) % 16]} failed on runner {i % 13} and pinning {WORDS[(i * 11) % 16]} fixed it",
            "type": "success",
            "agent_id": agent,
        }
        for i in range(start, start + n)
    ]


def _settings(kind: str | None) -> Settings:
    return Settings(maintenance=MaintenanceSettings(vector_index=kind))


def _indexes(s: MemoryStore) -> dict[str, str]:
    rows = s._core.backend.execute(
        "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'memory_vectors' AND schemaname = current_schema()"
    ).fetchall()
    return {r[0]: r[1] for r in rows}


def test_compact_keeps_hnsw_below_the_minimum_then_builds_ivfflat(pg_url):
    with MemoryStore(pg_url, settings=_settings("ivfflat")) as s:
        s.remember_many(_items(40))
        got = s.run_job("compact").counts
        assert (got["vector_index"], got["index_built"]) == ("hnsw", 0)
        assert "ix_memory_vectors_hnsw" in _indexes(s)
        s.remember_many(_items(40, 40))
        n = s._core.backend.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0]
        got = s.run_job("compact").counts
        assert got == {**got, "vector_index": "ivfflat", "ivf_lists": postgres_backend.PostgresBackend.ivf_lists(n)}
        assert got["index_built"] == 1
        idx = _indexes(s)
        assert "ix_memory_vectors_hnsw" not in idx and "ix_memory_vectors_ivfflat_new" not in idx
        assert "USING ivfflat" in idx["ix_memory_vectors_ivfflat"]
        assert "WHERE (NOT pending)" in idx["ix_memory_vectors_ivfflat"]
        assert "ix_memory_vectors_pending" in idx
        assert s._core.backend.vector_index() == ("ivfflat", got["ivf_lists"])
        # a second run changes nothing (the rows have not doubled)
        assert s.run_job("compact").counts["index_built"] == 0
        # the vector channel's statement can use it (80 rows: the planner scans them unless told not to),
        # and finds each memory by its own content
        b = s._core.backend
        q = b._vec(s.embedder.embed_batch(["alpha bravo"])[0])
        with b.read() as c:
            c.execute("SET LOCAL enable_seqscan = off")
            c.execute("SET LOCAL enable_sort = off")
            plan = " ".join(
                r[0]
                for r in c.execute(
                    "EXPLAIN " + b._search_sql("namespace = ?"), (q, "default", q, 5, q, "default", 5, 5)
                )
            )
        assert "ix_memory_vectors_ivfflat" in plan
        for k in (3, 41, 77):
            hit = s.recall(_items(1, k)[0]["content"], agent_id="a", channels=["vector"], limit=3)[0]
            assert hit.memory.content == _items(1, k)[0]["content"]


def test_ivfflat_is_retrained_when_the_rows_have_grown_and_hnsw_comes_back(pg_url):
    with MemoryStore(pg_url, settings=_settings("ivfflat")) as s:
        s.remember_many(_items(64))
        first = s.run_job("compact").counts
        assert first["index_built"] == 1
        learned = first["ivf_lists"] ** 2
        s.remember_many(_items(int(learned * 0.5), 64))  # grown, but not IVF_GROWTH-fold: kept
        kept = s.run_job("compact").counts
        assert (kept["vector_index"], kept["ivf_lists"], kept["index_built"]) == ("ivfflat", first["ivf_lists"], 0)
        have = s._core.backend.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0]
        s.remember_many(_items(int(2 * learned - have) + 1, 64 + int(learned * 0.5)))
        n = s._core.backend.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0]
        again = s.run_job("compact").counts
        assert (
            again["index_built"] == 1
            and again["ivf_lists"] == postgres_backend.PostgresBackend.ivf_lists(n) > first["ivf_lists"]
        )
    with MemoryStore(pg_url, settings=_settings("hnsw")) as s:
        back = s.run_job("compact").counts
        assert (back["vector_index"], back["ivf_lists"], back["index_built"]) == ("hnsw", 0, 1)
        idx = _indexes(s)
        assert "ix_memory_vectors_ivfflat" not in idx
        assert "USING hnsw" in idx["ix_memory_vectors_hnsw"] and "WHERE (NOT pending)" in idx["ix_memory_vectors_hnsw"]
    with MemoryStore(pg_url, settings=_settings(None)) as s:  # none: the store keeps its own
        assert s.run_job("compact").counts["index_built"] == 0
        assert s._core.backend.vector_index() == ("hnsw", 0)


def test_scoped_searches_return_k_visible_rows_and_new_rows_from_another_connection(pg_url):
    with MemoryStore(pg_url, settings=_settings("ivfflat")) as s:
        stored = [m.id for m in s.remember_many(_items(90, 0, "a") + _items(12, 90, "b"))]
        assert s.run_job("compact").counts["vector_index"] == "ivfflat"
    # one list probed per search: only the iterative scan (and the exact fallback) can find 10 of b's rows
    narrow = pg_url.replace("options=", "options=" + quote("-c ivfflat.probes=1 ", safe=""), 1)
    with MemoryStore(narrow) as s, MemoryStore(pg_url) as other:
        assert s._core.backend.execute("SHOW ivfflat.probes").fetchone()[0] == "1"
        hits = s.recall(_items(1, 95, "b")[0]["content"], agent_id="b", channels=["vector"], limit=10)
        assert len(hits) == 10 and {h.memory.agent_id for h in hits} == {"b"}
        fresh = "a new memory: the quartz cache needed a warm start before the flaky timeout went away"
        mid = other.remember(fresh, type="success", agent_id="b").id  # one remember: written into the index
        assert s.recall(fresh, agent_id="b", channels=["vector"], limit=1)[0].memory.id == mid
        # a batch waits in the backlog beside the index, and is found as well
        ids = [m.id for m in other.remember_many(_items(40, 200, "b"))]
        assert s._core.backend.backlog() >= 40
        hit = s.recall(_items(1, 230, "b")[0]["content"], agent_id="b", channels=["vector"], limit=1)[0]
        assert hit.memory.id == ids[30]
        # near duplicates still fold: the same content again reinforces the row it matches
        again = other.remember(_items(1, 95, "b")[0]["content"] + " again", type="success", agent_id="b")
        assert again.id == stored[95]
        assert s._core.backend.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 90 + 12 + 1 + 40


def test_a_bad_vector_index_is_a_typed_error(pg_url, monkeypatch):
    monkeypatch.setenv("HARNESS_MEMORY_MAINTENANCE__VECTOR_INDEX", "flat")
    with pytest.raises(ConfigurationError, match="vector_index"):
        from_environment()
    monkeypatch.setenv("HARNESS_MEMORY_MAINTENANCE__VECTOR_INDEX", "ivfflat")
    assert from_environment().maintenance.vector_index == "ivfflat"
    with MemoryStore(pg_url) as s:
        s.remember("the first memory records the embedder", type="context", agent_id="a")
        with pytest.raises(InvalidInputError, match="vector_index"):
            s._core.backend.converge_vector_index("flat")
        assert s._core.backend.vector_index() == ("hnsw", 0)
        # a graph asked for where there is one: nothing is rebuilt
        oid = s._core.backend.execute("SELECT to_regclass('ix_memory_vectors_hnsw')::oid").fetchone()[0]
        assert s._core.backend.converge_vector_index("hnsw") == {
            "vector_index": "hnsw",
            "ivf_lists": 0,
            "index_built": 0,
        }
        assert s._core.backend.execute("SELECT to_regclass('ix_memory_vectors_hnsw')::oid").fetchone()[0] == oid


def test_a_build_that_fails_leaves_the_graph_and_no_index_behind(pg_url, monkeypatch):
    with MemoryStore(pg_url, settings=_settings("ivfflat")) as s:
        s.remember_many(_items(70))
        # pgvector refuses an IVFFlat index of 0 lists: the concurrent build fails half way
        monkeypatch.setattr(postgres_backend.PostgresBackend, "ivf_lists", staticmethod(lambda rows: 0))
        with pytest.raises(postgres_backend.StorageError, match="lists"):
            s._core.backend.converge_vector_index("ivfflat")
        idx = _indexes(s)
        assert "ix_memory_vectors_ivfflat_new" not in idx and "ix_memory_vectors_ivfflat" not in idx
        assert "USING hnsw" in idx["ix_memory_vectors_hnsw"]
        assert s._core.backend.vector_index() == ("hnsw", 0)
        monkeypatch.undo()
        monkeypatch.setattr(postgres_backend.PostgresBackend, "IVF_MIN_ROWS", 60)
        assert s._core.backend.converge_vector_index("ivfflat")["index_built"] == 1  # the next run builds it


def test_lists_are_the_square_root_and_writes_probe_fewer_lists_than_reads(pg_url):
    lists = postgres_backend.PostgresBackend.ivf_lists
    assert [lists(n) for n in (1, 99, 100, 101, 1_000_000, 1_013_530)] == [1, 10, 10, 11, 1000, 1007]
    # what pgvector 0.8.1 asked for at 1M (its refusal: "memory required is 277 MB"), with room to spare
    need = postgres_backend.PostgresBackend.ivf_build_kb(1007, 384)
    assert 277 * 1024 < need < 2 * 277 * 1024
    assert postgres_backend.PostgresBackend.ivf_build_kb(1007, 768) > need  # the sample grows with the dimensions
    with MemoryStore(pg_url) as s:
        b = s._core.backend
        s.remember("the first memory records the embedder", type="context", agent_id="a")
        with b.read() as c:  # a recall's searches
            assert c.execute("SHOW ivfflat.probes").fetchone()[0] == "40"
            assert c.execute("SHOW ivfflat.iterative_scan").fetchone()[0] == "relaxed_order"
        with b.write() as c:  # a write's near-duplicate searches, for this transaction only
            assert c.execute("SHOW ivfflat.probes").fetchone()[0] == str(postgres_backend.NEAR_PROBES)
        with b.read() as c:
            assert c.execute("SHOW ivfflat.probes").fetchone()[0] == "40"


def test_a_build_behind_a_writers_transaction_ends_locked_and_the_next_run_builds(pg_url):
    import psycopg

    from harness_memory.errors import DatabaseLockedError

    settings = Settings(busy_timeout_ms=300, maintenance=MaintenanceSettings(vector_index="ivfflat"))
    with MemoryStore(pg_url, settings=settings) as s:
        s.remember_many(_items(70))
        with psycopg.connect(pg_url) as other:  # another host's write transaction, left open
            other.execute("UPDATE memory_vectors SET archived = archived WHERE memory_id = 1")
            with pytest.raises(DatabaseLockedError):
                s._core.backend.converge_vector_index("ivfflat")
            assert s._core.backend.vector_index() == ("hnsw", 0)  # the graph still serves
            hit = s.recall(_items(1, 5)[0]["content"], agent_id="a", channels=["vector"], limit=1)[0]
            assert hit.memory.content == _items(1, 5)[0]["content"]
            other.rollback()
        assert s._core.backend.converge_vector_index("ivfflat")["index_built"] == 1
        idx = _indexes(s)
        assert "ix_memory_vectors_ivfflat_new" not in idx and "ix_memory_vectors_hnsw" not in idx
