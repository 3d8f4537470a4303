"""The hashing embedder's caches are shared by the threads of one process (a PostgreSQL-backed store
serves several threads, each on its own connection): a cache cleared by one thread while another reads
it must not fail the other's call nor change a vector."""

from __future__ import annotations

import random
import threading

import numpy as np

from harness_memory import embedders
from harness_memory.embedders import HashingEmbedder


def test_threads_embedding_while_the_caches_overflow_get_the_vectors_of_one_thread(monkeypatch):
    # tiny caches: every few calls one of them is cleared while the other threads read it
    monkeypatch.setattr(embedders, "_HASH_CACHE_MAX", 24)
    monkeypatch.setattr(embedders, "_CHAR_CACHE_MAX", 12)
    rng = random.Random(7)
    vocab = [f"w{k}x{rng.randrange(10**6)}" for k in range(400)]
    texts = [" ".join(rng.choice(vocab) for _ in range(rng.randrange(1, 9))) for _ in range(600)]
    expected = HashingEmbedder(64).embed_batch(texts)
    shared = HashingEmbedder(64)
    failures: list[BaseException] = []
    got: dict[int, np.ndarray] = {}

    def work(offset: int) -> None:
        try:
            for k in range(offset, len(texts), 4):
                got[k] = shared.embed_batch([texts[k]])[0]
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            failures.append(exc)

    import sys

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter allows
    try:
        threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert failures == []
    assert len(got) == len(texts)
    for k, vec in got.items():
        np.testing.assert_array_equal(vec, expected[k])
