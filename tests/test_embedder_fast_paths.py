"""The hashing embedder (hashing-v1) gives the vectors of its earlier pure numpy implementation bit for bit
(issue 11: the ``mmh3`` package's MurmurHash3, bucket codes kept in the caches, one text bucketed without
row arithmetic): ``tests/hashing_v1_reference.py`` is that implementation as it was (ab33f50), kept as the
reference. Stored vectors must not change: every comparison here is exact (``array_equal``), with cold,
warm and overflowing caches, one text at a time, a few texts and many."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import embedders
from harness_memory.embedders import HashingEmbedder, murmur3_32
from hashing_v1_reference import ReferenceHashingEmbedder, _murmur3_py, murmur3_rows

WORD = st.text(st.characters(blacklist_categories=("Zs", "Cc", "Zl", "Zp", "Cs")), min_size=1, max_size=14).filter(
    lambda w: w.split() == [w]
)
TEXT = st.one_of(
    st.lists(
        st.one_of(WORD, st.sampled_from(["task", "T-1234:", "0042", "failed", "ß", "日本", "İ"])), max_size=20
    ).map(" ".join),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=200),
)
DIMS = st.sampled_from([8, 13, 64, 96, 384, 1000])


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=80))
def test_mmh3_equals_the_reference_murmur_on_bytes(data):
    want = _murmur3_py(data)
    assert int(murmur3_32([data])[0]) == want
    if data:
        assert int(murmur3_rows(np.frombuffer(data, dtype=np.uint8).reshape(1, -1))[0]) == want


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=40))
def test_mmh3_hashes_a_str_as_its_utf8_bytes(text):
    assert int(murmur3_32([text])[0]) == _murmur3_py(text.encode("utf-8"))


@settings(max_examples=300, deadline=None)
@given(
    DIMS,
    st.lists(st.one_of(st.integers(-(1 << 31), (1 << 31) - 1), st.sampled_from([-(1 << 31), 0, -1])), max_size=300),
)
def test_bucket_codes_both_ways_equal_the_reference_bucket_and_sign(n, hashes):
    """Python (few keys) and numpy (many) compute the same codes: the reference's bucket, plus n for a
    negative hash (the reference's sign -1), -2**31 included."""
    e = HashingEmbedder(n)
    h = np.array(hashes, dtype=np.int64)
    want = np.where(h == -(1 << 31), (2147483647 - (n - 1)) % n, np.abs(h) % n) + np.where(h >= 0, 0, n)
    np.testing.assert_array_equal(e._codes(hashes), want)
    saved = embedders._PY_CODES_MAX
    try:
        for limit in (-1, 1 << 20):  # numpy always, then Python always
            embedders._PY_CODES_MAX = limit
            np.testing.assert_array_equal(e._codes(hashes), want)
    finally:
        embedders._PY_CODES_MAX = saved


@pytest.mark.parametrize("caches", ["large", "tiny"])
@settings(max_examples=120, deadline=None)
@given(DIMS, st.lists(st.lists(TEXT, min_size=1, max_size=20), min_size=1, max_size=4))
def test_vectors_equal_the_reference_call_after_call(caches, n, calls):
    """Call after call (caches filling, cleared when full) the vectors are the reference's, and a text
    alone gets its row of the batch, from a warm embedder and a cold one."""
    saved = embedders._HASH_CACHE_MAX, embedders._CHAR_CACHE_MAX
    if caches == "tiny":
        embedders._HASH_CACHE_MAX, embedders._CHAR_CACHE_MAX = 5, 3
    try:
        warm, ref = HashingEmbedder(n), ReferenceHashingEmbedder(n)
        for texts in calls:
            got = warm.embed_batch(texts)
            assert got.dtype == np.float32 and got.shape == (len(texts), n)
            np.testing.assert_array_equal(got, ref.embed_batch(texts))
            np.testing.assert_array_equal(got, HashingEmbedder(n).embed_batch(texts))
            for k, t in enumerate(texts):
                np.testing.assert_array_equal(warm.embed_batch([t])[0], got[k])
    finally:
        embedders._HASH_CACHE_MAX, embedders._CHAR_CACHE_MAX = saved


def test_many_texts_and_many_new_words_equal_the_reference():
    """Past ``_MERGED_BUCKETS_MAX`` texts (one pass per family) and past ``_PY_CODES_MAX`` new keys
    (codes in numpy): the reference's vectors."""
    texts = [" ".join(f"w{k}x{j} Task-{k * j} ünï{j}" for j in range(40)) for k in range(50)] + ["", "   ", "a b"]
    e = HashingEmbedder(384)
    np.testing.assert_array_equal(e.embed_batch(texts), ReferenceHashingEmbedder(384).embed_batch(texts))
    np.testing.assert_array_equal(e.embed_batch(texts), ReferenceHashingEmbedder(384).embed_batch(texts))
    np.testing.assert_array_equal(
        np.vstack([HashingEmbedder(384).embed_batch([t]) for t in texts]), e.embed_batch(texts)
    )


def test_stored_vectors_are_the_reference_embedders(tmp_path):
    """End to end on a real SQLite file (vec0): the vectors a store keeps, one remember at a time and
    by remember_many, are the reference embedder's after the store's normalisation, byte for byte."""
    from harness_memory import MemoryStore
    from harness_memory.embedders import check_vectors

    singles = ["pip install fails behind the proxy: set HTTPS_PROXY", "Task T-77: ünïcödé straße 日本語 4821"]
    batch = [f"Task T-{k}: retry the flaky test in module_{k % 7}.py after error {k * 37}" for k in range(40)]
    ref = ReferenceHashingEmbedder(384)
    with MemoryStore(tmp_path / "v.db", embedder=HashingEmbedder(384)) as s:
        mems = [s.remember(t, type="success", agent_id="a") for t in singles] + s.remember_many(
            [{"content": t, "type": "success", "agent_id": "b"} for t in batch]
        )
        texts = singles + batch
        assert len({m.id for m in mems}) == len(texts)  # nothing merged: every text has its own row
        stored = s._core.backend.get_vectors([m.id for m in mems])
    want = check_vectors(ref, texts, ref.embed_batch(texts))
    for k, m in enumerate(mems):
        assert stored[m.id].tobytes() == want[k].tobytes()
