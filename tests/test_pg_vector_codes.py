"""PostgreSQL's sign codes of the vectors (issue 10, migration 0020): a table kept in step with the
vector table by triggers, read by remember_many's near-duplicate check, which then decides exactly
(every stored row of the item's group reaching the threshold is found, the graph's misses included)
without one HNSW search per memory; groups too large for a batch, and queries the bound cannot narrow,
go to the graph as before."""

from __future__ import annotations

import numpy as np
import pytest

import pgtestdb
from conftest import worker_processes
from harness_memory import MemoryStore, postgres_backend
from harness_memory.settings import Settings

DIM = 64
THRESHOLD = Settings().near_duplicate_threshold


@pytest.fixture
def pg_url():
    url, schema = pgtestdb.new_schema()
    yield url
    pgtestdb.drop_schema(schema)


class TableEmbedder:
    """Each text ``v<n>`` is the n-th vector of a table the test chose; any other text a fixed one."""

    name = "table:64"
    dimensions = DIM

    def __init__(self, table: np.ndarray):
        self.table = table

    def embed_batch(self, texts):
        return np.stack(
            [self.table[int(t.split()[0][1:])] if t.startswith("v") else np.ones(DIM, np.float32) for t in texts]
        ).astype(np.float32)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _table(rng: np.random.Generator, bases: int, queries: int) -> tuple[np.ndarray, np.ndarray]:
    """``bases`` random unit vectors, then ``queries`` vectors each near its own base, with cosines
    spread on both sides of the threshold (none within 1e-3 of it); ``targets[j]`` is query j's base.
    Odd bases have a quarter of their coordinates zero, and their queries add positive weight only
    there: the sign codes' bound is then nearly tight (the query's weight where the signs differ is
    0.975 of ``2 (1 - cos)`` at the threshold), so a bound any tighter would lose such duplicates."""
    base = rng.standard_normal((bases, DIM))
    zeros = [rng.choice(DIM, DIM // 4, replace=False) for _ in range(bases)]
    for i in range(1, bases, 2):
        base[i, zeros[i]] = 0.0
    base = _unit(base)
    out, targets = [], []
    j = 0
    while len(out) < queries:
        i = j % bases
        b = base[i]
        if i % 2:  # weight only where b is zero: every such coordinate's sign differs from b's (0)
            cos = rng.uniform(0.94, 0.96)
            u = np.zeros(DIM)
            u[zeros[i]] = rng.uniform(0.1, 1.0, DIM // 4)
            v = _unit(b + np.sqrt(1 / cos**2 - 1) * _unit(u))
        else:
            cos = rng.uniform(0.90, 0.99)
            r = rng.standard_normal(DIM)
            noise = _unit(r - (r @ b) * b)  # orthogonal to b: v's cosine with b is cos
            v = _unit(cos * b + np.sqrt(1 - cos * cos) * noise)
        sims = base @ v
        if np.min(np.abs(sims - THRESHOLD)) > 1e-3:
            out.append(v)
            targets.append(i)
        j += 1
    return np.vstack([base, np.array(out)]).astype(np.float32), np.array(targets)


def _codes(s: MemoryStore) -> dict[int, tuple]:
    rows = s._core.backend.execute(
        "SELECT memory_id, namespace, agent_id, scope, memory_type, code FROM memory_vector_codes"
    ).fetchall()
    return {int(r[0]): (r[1], r[2], r[3], r[4], bytes(r[5])) for r in rows}


def _expected_codes(s: MemoryStore) -> dict[int, tuple]:
    """The codes computed here from every stored vector: bit i set where coordinate i > 0."""
    out = {}
    for mid, ns, agent, scope, mtype, _, vec in s._core.backend.iter_vectors():
        out[int(mid)] = (ns, agent, scope, mtype, np.packbits(np.asarray(vec) > 0).tobytes())
    return out


def test_the_codes_follow_every_write_of_the_vector_table(pg_url):
    rng = np.random.default_rng(5)
    table = _unit(rng.standard_normal((200, DIM))).astype(np.float32)
    with MemoryStore(pg_url, embedder=TableEmbedder(table)) as s:
        one = s.remember("v0 first", type="success", agent_id="a")  # one row: put_vector
        many = s.remember_many(
            [{"content": f"v{i} in a batch", "type": "success", "agent_id": "a"} for i in range(1, 60)]
        )
        assert len(_codes(s)) == 60
        keyed = s.remember("v70 keyed", type="decision", agent_id="a", key="k")
        s.remember("v71 keyed, changed", type="decision", agent_id="a", key="k")  # the vector is updated in place
        s.archive(many[3].id)
        s.forget(many[4].id)
        s.forget(one.id)
        codes = _codes(s)
        assert codes == _expected_codes(s)
        assert one.id not in codes and many[4].id not in codes and keyed.id in codes
        assert codes[keyed.id][4] == np.packbits(table[71] > 0).tobytes()
        assert s._core.backend.index_backlog() > 0  # the backlog moved into the graph: codes unchanged
        assert _codes(s) == codes
    with MemoryStore(pg_url, embedder=TableEmbedder(table[:, ::-1].copy())) as s:
        s.reembed()  # the vector table is replaced: its codes follow
        assert _codes(s) == _expected_codes(s)
        assert len(_codes(s)) == 59  # 1 + 59 + 1 keyed - 2 forgotten


def _decide(s: MemoryStore, ns: str, bases: int, queries: int) -> list[int]:
    s.remember_many(
        [{"content": f"v{i} stored", "type": "success", "agent_id": "a", "namespace": ns} for i in range(bases)]
    )
    items = [
        {"content": f"v{bases + j} new", "type": "success", "agent_id": "a", "namespace": ns} for j in range(queries)
    ]
    items.append({"content": "v0 the same vector, another agent", "type": "success", "agent_id": "b", "namespace": ns})
    return [m.id for m in s.remember_many(items)]


def test_a_batch_folds_exactly_the_stored_rows_over_the_threshold(pg_url, monkeypatch):
    """Every item of a batch near a stored row of its group (cosine >= threshold, numpy's brute
    force) is folded into that row, every other one inserted — through the codes, and through the
    graph when the codes may not be read (a group too large for the batch, a bound that keeps too
    many rows): the same decisions."""
    rng = np.random.default_rng(11)
    bases, queries = 120, 80
    table, targets = _table(rng, bases, queries)
    stored = table[:bases]
    expected_dup = [
        int(np.argmax(stored @ table[bases + j])) if np.max(stored @ table[bases + j]) >= THRESHOLD else None
        for j in range(queries)
    ]
    assert 20 < sum(d is not None for d in expected_dup) < 60  # both outcomes are exercised
    answered: list[dict] = []
    with MemoryStore(pg_url, embedder=TableEmbedder(table)) as s:
        backend = s._core.backend
        orig = backend._near_by_codes

        def spy(c, qs, k, min_sim):
            got = orig(c, qs, k, min_sim)
            answered.append(got)
            return got

        monkeypatch.setattr(backend, "_near_by_codes", spy)
        runs = {}
        for ns, graph_us, pairs in (("codes", 5000.0, 256), ("large", 1.0, 256), ("loose", 5000.0, 0)):
            monkeypatch.setattr(postgres_backend, "CODE_GRAPH_US", graph_us)  # 1 us: any group is too large
            monkeypatch.setattr(postgres_backend, "CODE_PAIRS", pairs)
            answered.clear()
            ids = _decide(s, ns, bases, queries)
            first = {
                int(r[1]): int(r[0])
                for r in backend.execute(
                    "SELECT id, CAST(substr(content, 2, strpos(content, ' ') - 2) AS INTEGER) FROM memories "
                    "WHERE namespace = ? AND agent_id = 'a' AND content LIKE '% stored'",
                    (ns,),
                )
            }
            got = [None if ids[j] not in first.values() else ids[j] for j in range(queries)]
            assert got == [None if d is None else first[d] for d in expected_dup], ns
            assert len(set(ids[:queries]) | {ids[-1]}) == len(set(ids))  # the other agent's item: its own row
            assert ids[-1] not in first.values()
            (runs[ns],) = answered[1:]  # the second batch's (the first stores the bases: nothing to find)
        # the codes answered every query; with a group too large for the batch, only the other agent's
        # (its group is empty); with no row the bound may keep, only queries it left without any
        assert len(runs["codes"]) == queries + 1
        assert list(runs["large"]) == [queries] and runs["large"][queries] == []
        assert queries in runs["loose"] and 0 < len(runs["loose"]) < queries - 20
        assert all(hits == [] for hits in runs["loose"].values())


def test_migration_0020_computes_the_codes_of_a_store_that_had_none(pg_url):
    """The step's script run on a store whose vectors have no codes (as one written before it)."""
    from harness_memory.migrations import steps

    (script,) = [sql for name, sql in steps("postgresql") if name == "0020_vector_codes"]
    rng = np.random.default_rng(3)
    table = _unit(rng.standard_normal((80, DIM))).astype(np.float32)
    with MemoryStore(pg_url, embedder=TableEmbedder(table)) as s:
        s.remember_many([{"content": f"v{i} before", "type": "success", "agent_id": "a"} for i in range(40)])
        b = s._core.backend
        with b.write() as c:
            c.execute("DROP TABLE memory_vector_codes")
            c.execute("DROP FUNCTION hm_vector_codes() CASCADE")  # and its triggers
        s.remember_many([{"content": f"v{i} between", "type": "success", "agent_id": "a"} for i in range(40, 45)])
        with b.write() as c:
            for sql in b.split_script(script):
                c.execute(sql)
        assert len(_codes(s)) == 45 and _codes(s) == _expected_codes(s)
        s.remember_many([{"content": f"v{i} after", "type": "success", "agent_id": "b"} for i in range(45, 80)])
        assert len(_codes(s)) == 80 and _codes(s) == _expected_codes(s)


def _batch_writer(url: str, suffix: str, start, out) -> None:
    try:
        items = [
            {
                "content": f"host note {i}: the cache of runner {i * 7919} went stale{suffix}",
                "type": "success",
                "agent_id": "fleet",
            }
            for i in range(40)
        ]
        with MemoryStore(url) as s:
            start.wait(60)
            s.remember_many(items)
        out.put("ok")
    except Exception as exc:  # noqa: BLE001 - reported to the parent, which fails the test with it
        out.put(f"{type(exc).__name__}: {exc}")


def test_two_hosts_remembering_near_duplicate_batches_at_once_leave_one_row_each(pg_url):
    """Two processes write 40 memories each at the same moment, the second's each a near duplicate
    of the first's (the same words and a trailing '!'): whichever commits first inserts them, the
    other's near-duplicate check (through the codes, inside the write lock) folds every one in."""
    ctx = worker_processes()
    with MemoryStore(pg_url) as s:
        s.remember("the store exists first", type="context", agent_id="setup")
    start, out = ctx.Event(), ctx.Queue()
    procs = [ctx.Process(target=_batch_writer, args=(pg_url, suffix, start, out)) for suffix in ("", "!")]
    for p in procs:
        p.start()
    start.set()
    results = [out.get(timeout=120) for _ in procs]
    for p in procs:
        p.join(30)
    assert results == ["ok", "ok"]
    with MemoryStore(pg_url) as s:
        b = s._core.backend
        assert b.execute("SELECT COUNT(*) FROM memories WHERE agent_id = 'fleet'").fetchone()[0] == 40
        merges = b.execute("SELECT kind, COUNT(*) FROM memory_merges GROUP BY kind").fetchall()
        assert [tuple(r) for r in merges] == [("near", 40)]
        assert b.execute("SELECT COUNT(*) FROM memory_vector_codes").fetchone()[0] == 41


def test_a_keyword_only_candidate_is_scored_by_its_cosine_computed_by_the_server(pg_url):
    """A memory the vector channel does not return (61st of 61 by cosine, past its 50 candidates)
    but the keyword channel does is scored by its cosine with the query, computed by PostgreSQL
    (``vector_similarities``), not left without a vector score."""
    rng = np.random.default_rng(9)
    q = _unit(rng.standard_normal(DIM))
    r = rng.standard_normal(DIM)
    other = _unit(r - (r @ q) * q)
    fillers = [_unit(q + 0.05 * rng.standard_normal(DIM)) for _ in range(60)]
    table = np.vstack([*fillers, 0.5 * q + np.sqrt(0.75) * other, q]).astype(np.float32)  # v60: cosine 0.5
    with MemoryStore(pg_url, embedder=TableEmbedder(table)) as s:
        s.remember_many([{"content": f"v{i} filler note", "type": "success", "agent_id": "a"} for i in range(60)])
        far = s.remember("v60 zebra crossing", type="success", agent_id="a")
        hits = s.recall("v61 zebra", agent_id="a", limit=10)  # 50 candidates per channel
        (hit,) = [h for h in hits if h.memory.id == far.id]
        assert hit.breakdown.vector == pytest.approx(0.5, abs=1e-4)
        assert hit.breakdown.keyword is not None and hit.breakdown.keyword > 0
