"""A write's near-duplicate check and its in-process index (issue 11): ``VectorIndex.near`` finds
every row reaching the threshold (the sign-code filter never drops one), a remember merges what the
exact product merged, and a write's own vectors go straight into the index, which then equals one
caught up from the change log."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

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


def _brute_best(index, rows: np.ndarray, q: np.ndarray, min_sim: float, exclude=frozenset()):
    rows = np.array([r for r in rows if int(index.ids[r]) not in exclude], dtype=np.int64)
    if len(rows) == 0:
        return None
    sims = np.einsum("ij,j->i", index._gather(rows), q.astype(np.float32))
    b = int(sims.argmax())
    return (int(index.ids[rows[b]]), float(sims[b])) if sims[b] >= min_sim else None


@settings(max_examples=25, deadline=None, derandomize=True)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([8, 48, 64, 100, 384]),
    st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99]),
    st.floats(0.02, 1.5),
    st.booleans(),
    st.booleans(),
)
def test_the_group_checks_are_the_brute_force_answers(seed, dim, min_sim, noise, exclude_some, kept):
    """A batch's near-duplicate check (VectorIndex.best_in_group) and a single write's
    (near_in_group), through the group's kept coordinates (bounded by a product of the first ones)
    or, when they cannot be kept, the full product and the sign codes: the full product on every
    row's answers, for sparse and dense unit vectors of any size."""
    budget = vi.GROUP_HEADS_MAX_BYTES
    vi.GROUP_HEADS_MAX_BYTES = budget if kept else 1024
    try:
        _check_group_answers(seed, dim, min_sim, noise, exclude_some, kept)
    finally:
        vi.GROUP_HEADS_MAX_BYTES = budget


def _check_group_answers(seed, dim, min_sim, noise, exclude_some, kept):
    rng = np.random.default_rng(seed)
    ix = vi.VectorIndex(dim)
    base = rng.standard_normal(dim).astype(np.float32)
    for i in range(300):
        v = base + rng.standard_normal(dim).astype(np.float32) * rng.uniform(0.01, 1.5)
        v[rng.random(dim) < 0.3] = 0.0
        if i % 50 == 7:
            v[:] = 0.0  # a text without features: a zero vector
        n = np.linalg.norm(v)
        ix.put(i + 1, "ns", "a", "agent", "t", False, v / n if n else v)
    ix.put(999, "ns", "b", "agent", "t", False, base / np.linalg.norm(base))  # another group's: never found
    rows = ix.candidates(namespace="ns", agent_id="a", scope="agent", types=["t"], include_archived=True)
    qs = base + rng.standard_normal((12, dim)).astype(np.float32) * noise
    qs[3] = 0.0
    qs /= np.maximum(np.linalg.norm(qs, axis=1, keepdims=True), 1e-30)
    qs[5] = ix._gather(rows[10:11])[0]  # a stored vector itself: cosine 1 with its own row
    exclude = frozenset(int(i) for i in ix.ids[rows[::3]]) if exclude_some else frozenset()
    got = ix.best_in_group("ns", "a", "agent", "t", qs, min_sim, exclude=exclude)
    want = [_brute_best(ix, rows, q, min_sim, exclude) for q in qs]
    assert [g and g[0] for g in got] == [w and w[0] for w in want]
    for g, w in zip(got, want):
        if g is not None:
            assert abs(g[1] - w[1]) < 1e-5
    assert got[5] is not None or 11 in exclude  # its own row (id 11) reaches any threshold
    assert bool(ix._heads) == kept
    want = [_exact(ix, rows, q, min_sim) for q in qs]
    for k in range(vi.NEAR_HEADS_AFTER):  # the codes, then (from NEAR_HEADS_AFTER on) the kept coordinates
        singles = [ix.near_in_group("ns", "a", "agent", "t", q, min_sim) for q in qs]
        if k in (0, vi.NEAR_HEADS_AFTER - 1):
            assert [[m for m, _ in one] for one in singles] == want


@pytest.mark.parametrize("budget", [vi.GROUP_HEADS_MAX_BYTES, 1024])
def test_best_in_group_follows_rows_added_and_vectors_replaced_after_it_kept_the_groups_coordinates(
    monkeypatch, budget
):
    monkeypatch.setattr(vi, "GROUP_HEADS_MAX_BYTES", budget)  # 1024: no group's coordinates are kept
    rng = np.random.default_rng(3)
    unit = lambda v: (v / np.linalg.norm(v)).astype(np.float32)  # noqa: E731
    ix = vi.VectorIndex(96)
    for i in range(200):
        ix.put(i + 1, "ns", "a", "agent", "t", False, unit(rng.standard_normal(96)))
    q = unit(rng.standard_normal(96))
    assert ix.best_in_group("ns", "a", "agent", "t", q[None, :], 0.95) == [None]
    assert (len(ix._heads) == 1) == (budget > 1024)
    ix.put(500, "ns", "a", "agent", "t", False, unit(q + 0.01 * rng.standard_normal(96).astype(np.float32)))
    got = ix.best_in_group("ns", "a", "agent", "t", q[None, :], 0.95)  # a row added since
    assert got[0] is not None and got[0][0] == 500
    ix.put(7, "ns", "a", "agent", "t", False, q)  # an existing row's vector replaced: now q itself
    got = ix.best_in_group("ns", "a", "agent", "t", q[None, :], 0.95)
    assert got[0] is not None and got[0][0] == 7 and got[0][1] > 0.999
    other = ix.best_in_group("ns", "a", "agent", "t", q[None, :], 0.95, exclude={7})  # excluded: the next
    assert other[0] is not None and other[0][0] == 500
    ix.remove(500)
    ix.remove(7)
    assert ix.best_in_group("ns", "a", "agent", "t", q[None, :], 0.95) == [None]


def test_a_single_write_never_drops_another_groups_coordinates_to_keep_its_own(monkeypatch):
    rng = np.random.default_rng(4)
    ix = vi.VectorIndex(32)
    for i in range(600):
        v = rng.standard_normal(32).astype(np.float32)
        ix.put(i + 1, "ns", "ab"[i % 2], "agent", "t", False, v / np.linalg.norm(v))
    # room for one group's coordinates (1,024 rows' 32 coordinates and norm), not two
    monkeypatch.setattr(vi, "GROUP_HEADS_MAX_BYTES", 1024 * 33 * 4 + 100)
    q = ix._gather(np.array([0]))[0]  # row 0: memory 1, agent "a"
    for _ in range(vi.NEAR_HEADS_AFTER):
        assert ix.near_in_group("ns", "a", "agent", "t", q, 0.9)[0][0] == 1
    assert set(ix._heads) == {("ns", "a", "agent", "t")}
    for _ in range(vi.NEAR_HEADS_AFTER + 2):  # b's checks go through the codes: a's stay kept
        assert ix.near_in_group("ns", "b", "agent", "t", q, 0.999) == []
    assert set(ix._heads) == {("ns", "a", "agent", "t")}
    assert ix.best_in_group("ns", "b", "agent", "t", q[None, :], 0.999) == [None]  # a batch: b's replace a's
    assert set(ix._heads) == {("ns", "b", "agent", "t")}


def test_an_index_never_loaded_finds_nothing_for_either_check():
    ix = vi.VectorIndex(16)
    q = np.ones(16, dtype=np.float32) / 4
    assert ix.best_in_group("ns", "a", "agent", "t", np.stack([q, q]), 0.5) == [None, None]
    assert ix.near_in_group("ns", "a", "agent", "t", q, 0.5) == []
    assert ix.best_in_group("ns", "a", "agent", "t", np.zeros((0, 16), np.float32), 0.5) == []


def test_in_a_batch_an_item_with_a_fix_merges_into_the_closer_of_an_earlier_item_and_an_old_memory(tmp_path):
    """The batch path's items that take the sequential path (here a success taught with its error: a
    fix link) compare the batch's own earlier items with the stored rows: the closer one wins."""
    base = (
        "the nightly build of the payments service fails because the integration tests time out against "
        "the staging database after the schema migration"
    )
    old, earlier, item = base + " zebra quokka", base + " yak llama", base + " yak llama quokka"
    with MemoryStore(tmp_path / "f.db") as s:
        v = s._core.embed([old, earlier, item])
        assert float(v[1] @ v[0]) < 0.95 <= float(v[2] @ v[0]) < float(v[2] @ v[1])  # the texts' premise
        x = s.remember(old, type="success", agent_id="a")
        got = s.remember_many(
            [
                {"content": earlier, "type": "success", "agent_id": "a"},
                {"content": item, "type": "success", "agent_id": "a", "error": "TimeoutError: staging migration"},
            ]
        )
        assert got[0].id != x.id and got[1].id == got[0].id
