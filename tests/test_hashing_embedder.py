"""The numpy hashing embedder makes the vectors scikit-learn's HashingVectorizer made
(``hashing-v1``): stored databases keep matching their queries without a reembed."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import sklearn.feature_extraction.text as sklearn_text
from hypothesis import given, settings, strategies as st

from harness_memory.embedders import HashingEmbedder, murmur3_32


def reference(texts: list[str], dimensions: int) -> np.ndarray:
    """hashing-v1 as it was first written, on scikit-learn."""
    common = {"n_features": dimensions, "alternate_sign": True, "norm": "l2", "lowercase": True, "dtype": np.float32}
    words = sklearn_text.HashingVectorizer(analyzer="word", ngram_range=(1, 2), token_pattern=r"(?u)\b\w+\b", **common)
    chars = sklearn_text.HashingVectorizer(analyzer="char_wb", ngram_range=(3, 5), **common)
    return (words.transform(texts).toarray() + 0.5 * chars.transform(texts).toarray()).astype(np.float32)


VARIED = [
    "pip install fails behind the proxy: set HTTPS_PROXY first",
    "",
    "   ",
    "a",
    "ab",
    "abc",
    "I",
    "x" * 5000,
    "the the the the",
    "Ünïcödé STRASSE straße naïve café — 日本語のテキスト 😀🚀 emoji",
    "İstanbul ǅ ß ﬁ Σίσυφος ΣΑΣ",  # lower() changes some lengths
    "tab\tsep\nnew  line   spaces\u00a0nbsp\u2003em\x1cfs",
    "C++ / C# --flag=1 a_b a-b 3.14 $HOME ~/x.py:12 0xDEADBEEF",
    "Traceback (most recent call last):\n  File \"app.py\", line 3, in <module>\nKeyError: 'x'",
    "combining e\u0301 a\u0308 hangul \u1100\u1161 arabic مرحبا hebrew שלום devanagari नमस्ते",
]


@pytest.mark.parametrize("dimensions", [8, 64, 384, 1000, 8192])
def test_vectors_equal_scikit_learn(dimensions):
    got = HashingEmbedder(dimensions).embed_batch(VARIED)
    want = reference(VARIED, dimensions)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-6)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(max_size=300), min_size=1, max_size=8))
def test_vectors_equal_scikit_learn_on_any_text(texts):
    e = HashingEmbedder(96)
    np.testing.assert_allclose(e.embed_batch(texts), reference(texts, 96), rtol=0, atol=1e-6)
    # the word-hash cache changes nothing: a second call gives the same vectors
    np.testing.assert_array_equal(e.embed_batch(texts), e.embed_batch(texts))


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=64))
def test_murmur_equals_scikit_learn(data):
    from sklearn.utils import murmurhash3_32

    assert int(murmur3_32([data])[0]) == murmurhash3_32(data, seed=0, positive=False)


def test_batch_and_single_texts_agree():
    e = HashingEmbedder(384)
    batch = e.embed_batch(VARIED)
    for k, t in enumerate(VARIED):
        np.testing.assert_array_equal(e.embed_batch([t])[0], batch[k])


def test_no_scikit_learn_import():
    code = (
        "import sys, harness_memory; from harness_memory import HashingEmbedder, MemoryStore; "
        "HashingEmbedder(64).embed_batch(['hello world']); "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('sklearn', 'scipy')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
