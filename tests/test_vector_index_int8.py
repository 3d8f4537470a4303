"""The persisted vector index's int8 first pass (harness_memory/vector_index.py, issue 11): a snapshot
holds int8 rows with a scale each beside the float32 rows; a search scores a snapshot's rows through
the int8 copies, then rescores in float32 (read with os.pread when the file is mapped) every row that
the int8 score's error bound cannot rule out. The answers are those of scoring every row in float32:
the same rows and the same float32 cosines."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from conftest import note_items
from harness_memory import MemoryStore, vector_index as vi

IDENT = ["test-embedder", 0, 1.0]


def build(dim: int, vectors: np.ndarray, path: Path, agents: int = 2) -> vi.VectorIndex:
    """An in-memory index of ``vectors`` (memory ids 1..n, agents a0.., every fifth global), saved to ``path``."""
    ix = vi.VectorIndex(dim, path=path)
    ix._reset()
    rows = [
        (i + 1, "default", f"a{i % agents}", "global" if i % 5 == 0 else "agent", "note", False, v)
        for i, v in enumerate(vectors)
    ]
    ix.put_many(rows)
    ix.seq = 1
    assert ix.save(None, [IDENT[0], dim, IDENT[2]]) == path
    return ix


def load(dim: int, path: Path) -> vi.VectorIndex:
    ix = vi.VectorIndex(dim, path=path)
    assert ix._load_snapshot(None, 1, 1, [IDENT[0], dim, IDENT[2]])
    ix.loaded = True
    return ix


def exact(ix: vi.VectorIndex, q: np.ndarray, agent: str, k: int) -> list[tuple[int, float]]:
    """Every visible row scored in float32 (the in-memory index's own rerank), the k best."""
    rows = ix._rows("default", agent, True, None, False, None)
    sims = np.einsum("ij,j->i", ix._gather(rows), q)
    order = np.argsort(-sims, kind="stable")[:k]
    return [(int(ix.ids[rows[o]]), float(sims[o])) for o in order]


def same_answer(got: list[tuple[int, float]], want: list[tuple[int, float]], ix: vi.VectorIndex, q: np.ndarray) -> None:
    """The k best scores, bitwise, and each returned id's score its row's float32 cosine (ties may
    be broken either way)."""
    assert [s for _, s in got] == [s for _, s in want]
    for mid, s in got:
        v = ix._gather(np.asarray([ix._row[mid]]))
        assert s == float(np.einsum("ij,j->i", v, q)[0])


@pytest.mark.parametrize("mapped", [False, True], ids=["read-into-memory", "mapped"])
def test_a_snapshot_round_trips_and_searches_as_the_float32_index_does(tmp_path, monkeypatch, mapped):
    monkeypatch.setattr(vi, "COPY_BASE_MAX_BYTES", 0 if mapped else 1 << 30)
    monkeypatch.setattr(vi, "EXACT_LIMIT", 100)  # the Hamming pre-selection first, as in a large store
    monkeypatch.setattr(vi, "RERANK_MIN", 64)
    rng = np.random.default_rng(11)
    dim = 96
    vecs = rng.standard_normal((900, dim)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    path = tmp_path / "x-vecindex"
    mem = build(dim, vecs, path)
    assert path.read_bytes()[:8] == b"HMVECIX3"
    ix = load(dim, path)
    assert (ix._file is not None) == mapped and (ix._mm is not None) == mapped
    q8, scale = vi._quantize(vecs)  # read into memory or mapped, the int8 rows are the file's
    assert np.array_equal(ix.q8, q8) and np.array_equal(ix.scale, scale)
    assert np.array_equal(ix._gather(np.arange(900)), vecs)  # the float32 rows, as written
    assert np.array_equal(ix._exact_rows(np.arange(900)[::-1]), vecs[::-1])  # read back by pread when mapped
    assert np.abs(q8 * scale[:, None] - vecs).max() <= scale.max() / 2 * 1.001
    queries = rng.standard_normal((30, dim)).astype(np.float32)
    for j, q in enumerate(queries):
        agent = f"a{j % 2}"
        for k in (1, 10, 50):
            got = ix.search(q, namespace="default", agent_id=agent, k=k)
            assert got == mem.search(q, namespace="default", agent_id=agent, k=k)
    ids = list(range(1, 901, 7))
    assert ix.similarities(ids, queries[0]) == mem.similarities(ids, queries[0])

    # a row of the file changed in this process, and a row added: read from memory, not the file
    moved = -vecs[3]
    for index in (ix, mem):
        index.put(4, "default", "a1", "agent", "note", False, moved)
        index.put(901, "default", "a0", "agent", "note", False, vecs[10])
    assert ix.search(-vecs[3], namespace="default", agent_id="a1", k=1)[0][0] == 4
    assert ix.similarities([4, 901], queries[1]) == mem.similarities([4, 901], queries[1])
    for q in queries[:10]:
        assert ix.search(q, namespace="default", agent_id="a0", k=10) == mem.search(
            q, namespace="default", agent_id="a0", k=10
        )
    ix.seq = 2
    ix.save(None, [IDENT[0], dim, IDENT[2]])  # the changed rows reach the next snapshot
    again = vi.VectorIndex(dim, path=path)
    assert again._load_snapshot(None, 2, 2, [IDENT[0], dim, IDENT[2]])
    assert np.array_equal(again._exact_rows(np.asarray([3, 900])), np.stack([moved, vecs[10]]))


# vectors of a few dimensions: any sign, zero rows, duplicate rows (ties), rows of very different norms
_dims = st.integers(min_value=1, max_value=70)


@st.composite
def stores(draw):
    dim = draw(_dims)
    n = draw(st.integers(min_value=1, max_value=120))
    seed = draw(st.integers(min_value=0, max_value=2**32 - 1))
    rng = np.random.default_rng(seed)
    vecs = rng.standard_normal((n, dim)).astype(np.float32) * rng.choice([1e-3, 1.0, 30.0], size=(n, 1))
    vecs[rng.random(n) < 0.1] = 0.0
    dup = rng.random(n) < 0.2
    vecs[dup] = vecs[rng.integers(0, n, size=int(dup.sum()))]
    vecs[:, rng.random(dim) < 0.2] = 0.0  # coordinates no row uses (as a hashing embedder's)
    added = draw(st.integers(min_value=0, max_value=20))
    return dim, vecs.astype(np.float32), rng.standard_normal((added, dim)).astype(np.float32), rng


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(store=stores(), k=st.integers(min_value=1, max_value=60))
def test_the_int8_first_pass_keeps_the_exact_float32_top_k(store, k, monkeypatch):
    """Against every visible row scored in float32: the same k best scores, bitwise, each the float32
    cosine of the row returned; for a mapped snapshot with rows added after it."""
    monkeypatch.setattr(vi, "COPY_BASE_MAX_BYTES", 0)  # mapped: the rescored rows come by os.pread
    dim, vecs, added, rng = store
    with tempfile.TemporaryDirectory() as d:
        build(dim, vecs, Path(d) / "x-vecindex")
        ix = load(dim, Path(d) / "x-vecindex")
        n = len(vecs)
        for j, v in enumerate(added):  # rows of the in-memory tail (after the snapshot)
            ix.put(n + 1 + j, "default", f"a{j % 2}", "agent", "note", False, v)
        for _ in range(4):
            q = rng.standard_normal(dim).astype(np.float32) * np.float32(rng.choice([1e-3, 1.0, 10.0]))
            if rng.random() < 0.3:
                q = vecs[rng.integers(0, n)].copy()  # a stored row: ties with its duplicates
            for agent in ("a0", "a1"):
                got = ix.search(q, namespace="default", agent_id=agent, k=k)
                same_answer(got, exact(ix, q, agent, k), ix, q)
        ix._reset()  # (closes the file)


def test_a_row_whose_int8_score_is_off_by_nearly_the_whole_bound_is_still_found(tmp_path, monkeypatch):
    """The worst case of the bound: every coordinate of row 1 but its largest lies just under half a
    step (rounded to 0), and the query weighs exactly those, so its int8 score (0) is under its float32
    one by almost ``scale * sum|q_i| / 2``; row 2's is exact and a little lower. Row 1 is the nearest."""
    monkeypatch.setattr(vi, "COPY_BASE_MAX_BYTES", 0)
    dim = 40
    near = np.full(dim, 0.499, dtype=np.float32)
    near[0] = 127.0  # scale 1: the other coordinates are 0.499 of a step
    other = np.full(dim, 0.495, dtype=np.float32)
    other[0] = 0.0  # scale 0.495 / 127: exact in int8
    build(dim, np.stack([near, other]), tmp_path / "x-vecindex", agents=1)
    ix = load(dim, tmp_path / "x-vecindex")
    q = np.ones(dim, dtype=np.float32)
    q[0] = 0.0
    assert float(ix.q8[0] @ q) == 0.0  # the int8 score of row 1
    got = ix.search(q, namespace="default", agent_id="a0", k=1)
    assert got == [(1, float(np.einsum("j,j->", near, q)))]
    ix._reset()


def _older_format(good: bytes) -> bytes:
    """The same snapshot in the previous format (HMVECIX2): the float32 rows only, no int8 rows."""
    size = int.from_bytes(good[8:16], "little")
    header = json.loads(good[16 : 16 + size])
    for name in ("q8", "scale"):
        del header["arrays"][name]
    blob = json.dumps(header).encode()
    assert len(blob) <= size
    return b"HMVECIX2" + len(blob).to_bytes(8, "little") + blob + b" " * (size - len(blob)) + good[16 + size :]


def test_a_snapshot_of_the_previous_format_is_ignored_and_rewritten(tmp_path, monkeypatch):
    monkeypatch.setattr(vi, "SNAPSHOT_MIN_ROWS", 100)
    monkeypatch.setattr(vi, "COPY_BASE_MAX_BYTES", 0)  # mapped, as a large store's: int8 first pass, pread
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(note_items(200, seed=11))
        w._core.index.sync(w._core.backend)  # a full load writes the snapshot
    side = vi.sidecar_path(path)
    side.write_bytes(_older_format(side.read_bytes()))
    with MemoryStore(path) as sql_store, MemoryStore(path) as index_store:
        index_store._core.index.sql_below = 0
        hits = index_store.recall("deploy cache retry", agent_id="a1", channels={"vector"}, record=False)
        want = sql_store.recall("deploy cache retry", agent_id="a1", channels={"vector"}, record=False)
        assert [h.memory.id for h in hits] == [h.memory.id for h in want] and hits
        assert index_store._core.index.last_load == "database" and len(index_store._core.index) == 200
    assert side.read_bytes()[:8] == b"HMVECIX3"  # rewritten in the new format
    with MemoryStore(path) as r:
        r._core.index.sql_below = 0
        got = r.recall("deploy cache retry", agent_id="a1", channels={"vector"}, record=False)
        assert r._core.index.last_load == "snapshot" and r._core.index.q8 is not None
        assert [h.memory.id for h in got] == [h.memory.id for h in want]
