"""harness_memory.testing's doubles as a user's tests rely on them (issue 18): FakeEmbedder's vectors are
the same on every machine and in every version (a database embedded by it in one test run is searched by
it in the next), FailingEmbedder fails in each documented way, ManualClock moves only when told."""

from __future__ import annotations

import numpy as np
import pytest

from harness_memory import MemoryStore
from harness_memory.testing import FailingEmbedder, FakeEmbedder, ManualClock


def test_fake_embedder_vectors_are_pinned_word_by_word():
    e = FakeEmbedder(8)
    v = e.embed_batch(["alpha beta beta", "Gamma", ""])
    assert v.dtype == np.float32 and v.shape == (3, 8)
    # each word adds +1 or -1 (a bit of its sha1) to one bucket (its sha1 modulo the size); case is ignored
    assert v.tolist() == [
        [0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.0],
        [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1.0],
        [0.0] * 8,
    ]
    assert e.embed_batch(["gamma"]).tolist() == [v[1].tolist()]
    assert e.calls == 2 and e.name == "fake:8" and e.dimensions == 8
    assert FakeEmbedder().dimensions == 32 and FakeEmbedder().name == "fake:32"
    assert FakeEmbedder(8, name="mine").name == "mine"


def test_fake_embedder_signs_are_balanced_over_many_words():
    words = [f"w{i}" for i in range(400)]
    v = FakeEmbedder(16).embed_batch(words)
    assert (np.abs(v).sum(axis=1) == 1).all()  # one bucket, one unit, per word
    positive = int((v.sum(axis=1) > 0).sum())
    assert 150 < positive < 250  # a sign bit of the hash: about half each way
    assert len({int(np.flatnonzero(row)[0]) for row in v}) == 16  # every bucket is used


@pytest.mark.parametrize("mode", ["nan", "inf"])
def test_failing_embedder_spoils_the_first_coordinate(mode):
    e = FailingEmbedder(8, mode=mode)
    v = e.embed_batch(["alpha", "beta"])
    assert v.shape == (2, 8)
    assert np.isnan(v[0, 0]) if mode == "nan" else np.isinf(v[0, 0])
    assert np.isfinite(v[0, 1:]).all() and np.isfinite(v[1]).all()
    assert e.embed_batch([]).shape == (0, 8)


def test_failing_embedder_modes_switch_at_any_time(tmp_path):
    e = FailingEmbedder(8)
    assert e.name == "fake:8" and FailingEmbedder(8, name="mine").name == "mine"
    assert FailingEmbedder(8, mode="ok", name="mine").embed_batch(["alpha"]).shape == (1, 8)
    with pytest.raises(ConnectionError, match="^embedding service unavailable$"):  # as a real client would
        e.embed_batch(["alpha"])
    e.mode = "wrong_dims"
    assert e.embed_batch(["alpha", "beta"]).shape == (2, 9)
    e.mode = "ok"
    assert e.embed_batch(["alpha beta"]).tolist() == FakeEmbedder(8).embed_batch(["alpha beta"]).tolist()
    # a store over it keeps a memory whose vector failed, and embeds it once the service is back
    e.mode = "raise"
    with MemoryStore(tmp_path / "m.db", embedder=e) as store:
        m = store.remember("pip fails behind the proxy", type="failure", agent_id="a")
        e.mode = "ok"
        assert store.backfill_embeddings() == 1
        assert [h.memory.id for h in store.recall("pip proxy", agent_id="a")] == [m.id]


def test_manual_clock_starts_at_2026_and_moves_only_when_advanced():
    clock = ManualClock()
    assert clock() == 1_767_225_600.0 == clock()
    clock.advance(90)
    clock.advance(0.5)
    assert clock() == 1_767_225_690.5
    assert ManualClock(start=10)() == 10.0 and isinstance(ManualClock(start=10)(), float)
