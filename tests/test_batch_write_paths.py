"""The batch write path's whole-batch passes (issue 11): each gives the answers of the per-item
path it replaced, on real components (a VectorIndex, the redaction rules, a SQLite store)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import vector_index as vi


def _per_query(ix: vi.VectorIndex, key: tuple, qs: np.ndarray, min_sim: float, exclude: frozenset) -> list:
    """best_in_group's answers as it computed them before its pairs were taken together: the bound
    in two products, then a gather and a product per query, the first row of the largest cosine."""
    rows, _ = ix._group(*key)
    out: list = [None] * len(qs)
    if len(rows) == 0:
        return out
    skip = np.isin(ix.ids[rows], np.fromiter(exclude, dtype=np.int64, count=len(exclude)))
    kept = ix._group_heads(key, rows, build=True)
    assert kept is not None
    h = kept.shape[1] - 1
    heads, tails = kept[:, :h], kept[:, h]  # (the bound as it was computed: two products)
    bound = heads @ qs[:, :h].T
    bound += tails[:, None] * np.sqrt(np.einsum("ij,ij->i", qs[:, h:], qs[:, h:]))[None, :]
    reach = (bound >= float(min_sim) - vi.NEAR_SLACK) & ~skip[:, None]
    for j in np.flatnonzero(reach.any(axis=0)).tolist():
        cand = rows[np.flatnonzero(reach[:, j])]
        sims = np.einsum("ij,j->i", ix._gather(cand), qs[j])
        b = int(sims.argmax())
        if sims[b] >= min_sim:
            out[j] = (int(ix.ids[cand[b]]), float(sims[b]))
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.sampled_from([8, 64, 100, 384]),
    st.sampled_from([0.3, 0.8, 0.95]),
    st.floats(0.01, 1.0),
    st.integers(1, 80),
    st.booleans(),
    st.sampled_from([1, 7, 4096]),
)
def test_best_in_group_takes_every_pair_at_once_with_the_per_query_answers(
    seed, dim, min_sim, noise, nq, exclude_some, pairs_slice
):
    """The same ids and the same float32 cosines, bit for bit, as a gather and a product per query:
    duplicates among the rows (ties go to the first row, as argmax), zero vectors, excluded rows,
    queries that reach nothing, and pairs taken in slices of any size."""
    rng = np.random.default_rng(seed)
    ix = vi.VectorIndex(dim)
    base = rng.standard_normal(dim).astype(np.float32)
    for i in range(400):
        v = base + rng.standard_normal(dim).astype(np.float32) * rng.uniform(0.0, 1.5)
        if i % 97 == 5:
            v[:] = 0.0
        if i % 41 == 3 and i > 40:
            v = ix._gather(ix.candidates(namespace="ns", agent_id="a", scope="agent", include_archived=True)[:1])[0]
        n = np.linalg.norm(v)
        ix.put(i + 1, "ns", "a", "agent", "t", False, v / n if n else v)
    qs = base + rng.standard_normal((nq, dim)).astype(np.float32) * noise
    qs[0] = 0.0
    qs /= np.maximum(np.linalg.norm(qs, axis=1, keepdims=True), 1e-30)
    exclude = frozenset(range(1, 401, 3)) if exclude_some else frozenset()
    key = ("ns", "a", "agent", "t")
    want = _per_query(ix, key, qs, min_sim, exclude)
    old = vi.BEST_PAIRS_SLICE
    vi.BEST_PAIRS_SLICE = pairs_slice
    try:
        got = ix.best_in_group(*key, qs, min_sim, exclude=exclude)
    finally:
        vi.BEST_PAIRS_SLICE = old
    assert got == want


def test_best_in_group_with_no_query_reaching_any_row():
    rng = np.random.default_rng(1)
    ix = vi.VectorIndex(32)
    for i in range(50):
        v = rng.standard_normal(32).astype(np.float32)
        ix.put(i + 1, "ns", "a", "agent", "t", False, v / np.linalg.norm(v))
    q = -ix._gather(np.arange(1))[:1]
    assert ix.best_in_group("ns", "a", "agent", "t", q, 0.99) == [None]
    assert ix.best_in_group("ns", "a", "agent", "t", np.zeros((3, 32), np.float32), 0.5) == [None] * 3


_BASES = [
    "the build fails when the cache is cold",
    "the flaky network test needs a retry behind the proxy",
    "pin the dependency in the lockfile after a timeout",
    "the cache of the build is cold after a retry",
]


@settings(max_examples=15, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, len(_BASES) - 1),
            st.sampled_from(["", "!", " again", " now", " again and again"]),
            st.sampled_from(["a", "b"]),
            st.sampled_from(["agent", "global"]),
        ),
        min_size=2,
        max_size=40,
    ),
    st.sampled_from([0.8, 0.9, 0.95]),
)
def test_a_batch_of_near_repeats_has_the_outcome_of_one_remember_after_the_other(tmp_path_factory, spec, threshold):
    """Items of a batch that repeat earlier ones nearly or exactly (where the whole-batch product
    picks the items that may repeat, _may_repeat) are folded in as one remember after the other."""
    from harness_memory import MemoryStore, Settings
    from test_remember_batch import _outcome

    db = tmp_path_factory.mktemp("b") / "m.db"
    items = lambda ns: [  # noqa: E731
        {"content": _BASES[b] + tail, "type": "success", "agent_id": a, "scope": sc, "namespace": ns}
        for b, tail, a, sc in spec
    ]
    with MemoryStore(db, settings=Settings(near_duplicate_threshold=threshold)) as s:
        one = [s.remember(**it).id for it in items("one")]
        batch = [m.id for m in s.remember_many(items("batch"))]
        assert _outcome(s, "batch", batch) == _outcome(s, "one", one)


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(st.characters(codec="utf-8"), max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(_JSON_VALUES)
def test_the_rows_json_is_json_dumps_text(value):
    """core.dumps (one encoder, empty containers written directly) is json.dumps with its options: the same
    text, the same error for what it refuses (NaN, infinities)."""
    import json

    from harness_memory.core import dumps

    try:
        want: object = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=True)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)[:20]):
            dumps(value)
        return
    assert dumps(value) == want


def test_a_batchs_uids_are_uuid4s():
    import uuid

    from harness_memory import writes

    ids = writes._uids(5000)
    assert len(set(ids)) == 5000
    for h in ids:
        u = uuid.UUID(hex=h)
        assert u.hex == h and u.version == 4 and u.variant == uuid.RFC_4122
    assert writes._uids(0) == []


def test_exact_duplicates_across_several_look_up_statements(tmp_path):
    """A batch with more distinct contents than one look-up statement takes (SQLiteBackend.existing_hashes):
    every exact duplicate of a stored row is folded into that row, every other content is a new row."""
    from harness_memory import MemoryStore

    with MemoryStore(tmp_path / "m.db") as s:
        stored = s.remember_many(
            [
                {"content": f"stored {k}: the build of module {k} fails", "type": "failure", "agent_id": "a"}
                for k in range(400)
            ]
        )
        items = [
            {"content": f"stored {k}: the build of module {k} fails", "type": "failure", "agent_id": "a"}
            if k % 2
            else {"content": f"new {k}: nothing like it was stored", "type": "failure", "agent_id": "a"}
            for k in range(400)
        ]
        got = s.remember_many(items)
        for k, m in enumerate(got):
            if k % 2:
                assert m.id == stored[k].id and m.access_count == 1
            else:
                assert m.id > stored[-1].id and m.content.startswith("new")
        kinds = s._core.backend.execute(
            "SELECT kind, COUNT(*) FROM memory_merges WHERE merged_content LIKE 'stored %' GROUP BY kind"
        ).fetchall()
        assert [tuple(r) for r in kinds] == [("exact", 200)]  # found by the look-up, not as a near duplicate


if __name__ == "__main__":  # pragma: no cover
    pytest.main([__file__])
