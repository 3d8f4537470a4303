"""The mmh3 hashing embedder (issue 11, 16b0a29) under mutation testing and review: tests for what its own tests
(tests/test_embedder_fast_paths.py, against tests/hashing_v1_reference.py) let through.

A finding of the review (``test_a_lone_surrogate_never_crashes_the_process``): ``mmh3.hash`` (mmh3 5.3.1) given a
``str`` holding a lone surrogate crashes the interpreter with a segmentation fault, where the earlier numpy
implementation (ab33f50, the reference) raised ``UnicodeEncodeError`` from ``str.encode``; the embedder now refuses
such text with ``InvalidInputError`` before anything is hashed. The store's verbs refuse
such text before it is embedded (InvalidInputError, tested elsewhere), but ``HashingEmbedder`` is public API and text
decoded with ``surrogateescape`` (``os.fsdecode`` of a non-UTF-8 file name) carries lone surrogates."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.embedders import HashingEmbedder
from hashing_v1_reference import ReferenceHashingEmbedder

ROOT = Path(__file__).resolve().parents[1]

_CHILD = r"""
import sys
from harness_memory.embedders import HashingEmbedder
try:
    HashingEmbedder(64).embed_batch([sys.argv[1].encode().decode("unicode_escape")])
    print("ok")
except Exception as exc:
    print(type(exc).__name__)
"""


@pytest.mark.parametrize("text", [r"a\ud800b", r"build \udcff failed", r"\udc80"])
def test_a_lone_surrogate_never_crashes_the_process(text):
    proc = subprocess.run([sys.executable, "-c", _CHILD, text], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, f"the process died (return code {proc.returncode})"
    assert proc.stdout.strip() == "InvalidInputError"


def test_the_stores_verbs_refuse_a_lone_surrogate_before_it_is_embedded(tmp_path):
    # what keeps the crash away from the store: every verb that embeds text validates it first (a real file)
    from harness_memory import InvalidInputError

    with MemoryStore(tmp_path / "m.db", embedder=HashingEmbedder(64)) as s:
        s.remember("deploy broke on the host", type="fact", agent_id="a")
        with pytest.raises(InvalidInputError, match="lone surrogates"):
            s.remember("deploy broke on a\ud800b host", type="fact", agent_id="a")
        with pytest.raises(InvalidInputError, match="lone surrogates"):
            s.recall("a\ud800b host")
        assert "\ud800" not in s.error_signature("deploy broke on a\ud800b host").template


_TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=120)


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([8, 9, 64, 384]), st.lists(_TEXT, min_size=1, max_size=20))
def test_every_text_of_a_batch_is_its_row_alone_and_the_references(n, texts):
    # a batch of 1, 2..16 (one pass over both families) and 17..20 texts (one pass per family): each row is what the
    # text gets alone from a cold embedder, and the reference's
    e = HashingEmbedder(n)
    got = e.embed_batch(texts)
    np.testing.assert_array_equal(got, ReferenceHashingEmbedder(n).embed_batch(texts))
    for k, t in enumerate(texts):
        np.testing.assert_array_equal(HashingEmbedder(n).embed_batch([t])[0], got[k])


@pytest.mark.parametrize("bound", [4, 50])
def test_the_caches_stay_within_their_bounds_and_keep_earlier_words_until_full(bound, monkeypatch):
    # a long-running process embeds ever new words: each cache holds at most its bound (or one call's keys, when a
    # single call brings more), and below the bound it keeps what earlier calls hashed
    from harness_memory import embedders

    monkeypatch.setattr(embedders, "_HASH_CACHE_MAX", bound)
    monkeypatch.setattr(embedders, "_CHAR_CACHE_MAX", bound)
    e = HashingEmbedder(64)
    e.embed_batch(["alpha beta"])
    e.embed_batch(["gamma delta"])
    if bound >= 50:
        assert set(e._char_hash) == {"alpha", "beta", "gamma", "delta"}
        assert {"alpha", "beta", "alpha beta", "gamma", "delta", "gamma delta"} <= set(e._word_hash)
    for k in range(60):
        texts = [f"w{k}a w{k}b", f"w{k}c"]
        got = e.embed_batch(texts)
        np.testing.assert_array_equal(got, ReferenceHashingEmbedder(64).embed_batch(texts))
        assert len(e._char_hash) <= max(bound, 3)
        assert len(e._word_hash) <= max(bound, 4)
