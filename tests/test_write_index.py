"""A write's near-duplicate check and its in-process index (issue 11): ``VectorIndex.near`` finds
every row reaching the threshold (the sign-code filter never drops one), a remember merges what the
exact product merged, and a write's own vectors go straight into the index, which then equals one
caught up from the change log."""

from __future__ import annotations

import numpy as np
import pytest

from harness_memory import MemoryStore, vector_index as vi

WORDS = (
    "build deploy cache proxy timeout quota disk memory network token schema index lock queue retry "
    "worker shard replica leader backup restore upgrade rollback canary metric alert trace"
).split()


def _texts(n: int, seed: int = 3) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, size=7)) + f" step {i % 40}" for i in range(n)]


def _exact(index, rows: np.ndarray, q: np.ndarray, min_sim: float) -> list[int]:
    sims = np.einsum("ij,j->i", index._gather(rows), q.astype(np.float32))
    keep = np.flatnonzero(sims >= min_sim)
    return [int(index.ids[rows[j]]) for j in keep[np.argsort(-sims[keep], kind="stable")]]


@pytest.mark.parametrize("min_sim", [0.5, 0.8, 0.95, 0.99])
def test_near_finds_every_row_reaching_the_threshold(tmp_path, monkeypatch, min_sim):
    monkeypatch.setattr(vi, "NEAR_FILTER_MIN", 8)  # the filter runs on every group of this small store
    with MemoryStore(tmp_path / "n.db") as s:
        texts = _texts(1500)
        s.remember_many([{"content": t, "type": "success", "agent_id": "a"} for t in texts])
        ix = s._core.index
        ix.sync(s._core.backend)
        rows = ix.candidates(namespace="default", agent_id="a", scope="agent", types=["success"], include_archived=True)
        assert len(rows) > 500
        rng = np.random.default_rng(1)
        queries = [t.replace("step", "stage") for t in rng.choice(texts, 40)] + list(rng.choice(texts, 20))
        vecs = s.embedder.embed_batch(queries)
        vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
        found = 0
        for q in vecs:
            want = _exact(ix, rows, q, min_sim)
            got = ix.near(rows, q, min_sim)
            assert [m for m, _ in got] == want
            found += len(want)
        assert found > 0  # the queries do reach the threshold


def test_near_on_random_unit_vectors_with_zero_coordinates():
    rng = np.random.default_rng(7)
    ix = vi.VectorIndex(64)
    base = rng.standard_normal(64).astype(np.float32)
    for i in range(3000):
        v = base + rng.standard_normal(64).astype(np.float32) * rng.uniform(0.05, 1.5)
        v[rng.random(64) < 0.3] = 0.0  # sparse, as hashed features are
        ix.put(i + 1, "ns", "a", "agent", "t", False, v / np.linalg.norm(v))
    rows = ix.candidates(namespace="ns", agent_id="a", scope="agent", types=["t"], include_archived=True)
    for _ in range(30):
        q = base + rng.standard_normal(64).astype(np.float32) * 0.2
        q /= np.linalg.norm(q)
        for t in (0.7, 0.9, 0.95):
            assert [m for m, _ in ix.near(rows, q, t)] == _exact(ix, rows, q, t)
    assert ix.near(rows, np.zeros(64, np.float32), 0.9) == []


def test_remember_merges_near_duplicates_as_before(tmp_path, monkeypatch):
    """One remember at a time (the sign-code filter) against a batch (one exact matrix product):
    the same memories are merged into the same targets."""
    monkeypatch.setattr(vi, "NEAR_FILTER_MIN", 8)
    texts = _texts(400)
    dupes = [t + " again" for t in texts[::7]] + [t.replace("step", "steps") for t in texts[3::11]]
    outcome = {}
    for mode in ("single", "batch"):
        with MemoryStore(tmp_path / f"{mode}.db") as s:
            s.remember_many([{"content": t, "type": "failure", "agent_id": "a"} for t in texts])
            if mode == "single":
                got = [s.remember(d, type="failure", agent_id="a").id for d in dupes]
            else:
                got = [
                    m.id for m in s.remember_many([{"content": d, "type": "failure", "agent_id": "a"} for d in dupes])
                ]
            outcome[mode] = got
            merged = s._core.backend.execute("SELECT COUNT(*) FROM memory_merges WHERE kind = 'near'").fetchone()[0]
            assert merged > 0
    assert outcome["single"] == outcome["batch"]


def test_a_write_puts_its_own_vectors_into_the_index(tmp_path):
    path = tmp_path / "w.db"
    with MemoryStore(path) as s:
        s.remember_many([{"content": t, "type": "success", "agent_id": "a"} for t in _texts(50)])
        ix = s._core.index
        ix.sync(s._core.backend)
        m = s.remember("a brand new memory about helm charts", type="success", agent_id="a")
        top = s._core.backend.execute("SELECT MAX(seq) FROM vector_changes").fetchone()[0]
        assert ix.seq == top and m.id in ix._row  # caught up without reading it back
        kept = s.remember("a brand new memory about helm charts", type="success", agent_id="a", key="k1")
        assert kept.id != m.id  # keyed: no fast path, the next sync reads it from the log
        with MemoryStore(path) as other:  # another process's write is read from the log
            o = other.remember("written elsewhere: terraform state lock", type="success", agent_id="a")
        hits = s.recall("terraform state lock", agent_id="a", channels={"vector"}, record=False)
        assert hits and hits[0].memory.id == o.id
        fresh = vi.VectorIndex(ix.dim, path=tmp_path / "none")
        fresh.sync(s._core.backend)
        for name in ("ids", "ns", "agent", "is_global", "mtype", "archived", "alive"):
            a = getattr(ix, name)[: ix._n]
            b = getattr(fresh, name)[: fresh._n]
            if name in ("ns", "agent", "mtype"):  # interned codes may differ: compare the strings
                a = [ix._strings.strings()[c] for c in a]
                b = [fresh._strings.strings()[c] for c in b]
            assert list(a) == list(b), name
        np.testing.assert_array_equal(ix._gather(np.arange(ix._n)), fresh._gather(np.arange(fresh._n)))
