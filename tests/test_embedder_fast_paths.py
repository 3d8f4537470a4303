"""The hashing embedder's fast paths (issue 11) give the vectors of the slower ones, bit for bit:
character n-grams of new words hashed through a cache of n-gram hashes (``_chars_by_gram``) against
the whole-word hashing (``_char_hashes``), and both families bucketed in one pass against one pass
per family, with cold, warm and overflowing caches."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import embedders
from harness_memory.embedders import HashingEmbedder, _char_hashes

WORD = st.text(st.characters(blacklist_categories=("Zs", "Cc", "Zl", "Zp", "Cs")), min_size=1, max_size=14).filter(
    lambda w: w.split() == [w]
)
TEXT = st.lists(st.one_of(WORD, st.sampled_from(["task", "T-1234:", "0042", "failed", "ß", "日本"])), max_size=20).map(
    " ".join
)


def per_family(e: HashingEmbedder, texts: list[str]) -> np.ndarray:
    """One bucket pass per family, summed: the embedder before the passes were merged."""
    texts = [t.lower() for t in texts]
    n = len(texts)
    w_rows, w_hashes = e._words(texts)
    c_rows, c_hashes = e._chars(texts)
    return (e._buckets(n, w_rows, w_hashes) + np.float32(0.5) * e._buckets(n, c_rows, c_hashes)).astype(np.float32)


@settings(max_examples=200, deadline=None)
@given(st.lists(WORD, min_size=1, max_size=10, unique=True))
def test_gram_cache_hashes_equal_whole_word_hashing(words):
    e = HashingEmbedder(64)
    e._chars_by_gram(words)
    rows, hashes = _char_hashes(words)
    for k, w in enumerate(words):
        assert sorted(e._char_hash[w].tolist()) == sorted(hashes[rows == k].tolist())


@pytest.mark.parametrize("gram_max", [4, 1 << 16])
@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(TEXT, min_size=1, max_size=4), min_size=1, max_size=4))
def test_vectors_equal_per_family_and_cold_embedder(gram_max, calls):
    """Call after call (caches filling, cleared when full) the vectors are those of one bucket pass
    per family and those of a new embedder (cold caches) on the same texts."""
    saved = embedders._GRAM_CACHE_MAX
    embedders._GRAM_CACHE_MAX = gram_max
    try:
        warm = HashingEmbedder(96)
        for texts in calls:
            got = warm.embed_batch(texts)
            np.testing.assert_array_equal(got, HashingEmbedder(96).embed_batch(texts))
            np.testing.assert_array_equal(got, per_family(HashingEmbedder(96), texts))
            for k, t in enumerate(texts):
                np.testing.assert_array_equal(warm.embed_batch([t])[0], got[k])
    finally:
        embedders._GRAM_CACHE_MAX = saved


def test_many_new_words_take_the_whole_word_path():
    """More new words than ``_GRAM_WORDS_MAX`` in one call go through ``_char_hashes``: same vectors."""
    texts = [" ".join(f"w{k}x{j}" for j in range(40)) for k in range(5)]
    fast = HashingEmbedder(384)
    got = np.vstack([fast.embed_batch([t]) for t in texts])  # 40 new words a call: n-gram cache
    np.testing.assert_array_equal(got, HashingEmbedder(384).embed_batch(texts))  # 200 new words: numpy path
    assert len(fast._gram_hash) > 0


@settings(max_examples=40, deadline=None)
@given(st.lists(TEXT, min_size=embedders._MERGED_BUCKETS_MAX + 1, max_size=40))
def test_many_texts_bucketed_per_family_equal_one_at_a_time(texts):
    """Past ``_MERGED_BUCKETS_MAX`` texts a call buckets each family apart: the vectors of the
    merged pass (each text alone) and of one pass per family."""
    e = HashingEmbedder(96)
    got = e.embed_batch(texts)
    np.testing.assert_array_equal(got, per_family(HashingEmbedder(96), texts))
    np.testing.assert_array_equal(got, np.vstack([HashingEmbedder(96).embed_batch([t]) for t in texts]))
