"""The mmh3 hashing embedder (issue 11, 16b0a29) under mutation testing and review: tests for what its own tests
(tests/test_embedder_fast_paths.py, against tests/hashing_v1_reference.py) let through.

A finding of the review (``test_a_lone_surrogate_never_crashes_the_process``): ``mmh3.hash`` (mmh3 5.3.1) given a
``str`` holding a lone surrogate crashes the interpreter with a segmentation fault, where the earlier numpy
implementation (ab33f50, the reference) raised ``UnicodeEncodeError`` from ``str.encode``. The store's verbs refuse
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


@pytest.mark.xfail(
    strict=True,
    reason="review finding (reported to the lead): mmh3.hash segfaults on a str with a lone surrogate; "
    "HashingEmbedder should refuse such text with a typed error (or hash its replaced form) before mmh3 sees it",
)
@pytest.mark.parametrize("text", [r"a\ud800b", r"build \udcff failed", r"\udc80"])
def test_a_lone_surrogate_never_crashes_the_process(text):
    proc = subprocess.run([sys.executable, "-c", _CHILD, text], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 0, f"the process died (return code {proc.returncode})"
    assert proc.stdout.strip() in {"ok", "EmbedderError", "InvalidInputError"}


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
