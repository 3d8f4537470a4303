"""A process's first write loads its in-process vector index (every stored vector: seconds at 100k
memories), and that load must never happen while it holds the write lock: every other writer of the
fleet would wait for it (issue 17; found by benchmarks/stalls.py, where record_outcome's calls held the
lock 0.7-1.3 s, and 13.6 s without a persisted index). Each verb that writes memories is called in a
fresh store on an existing database, and the index's loads are watched."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from harness_memory import MemoryStore

TRACE = "Traceback (most recent call last):\n  File \"/srv/app/main.py\", line 3, in run\nKeyError: 'port'"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as s:
        s.remember_many(
            [
                {"content": f"deploy note {i}: restart the worker pool", "type": "success", "agent_id": "a"}
                for i in range(40)
            ]
        )
    return path


VERBS: dict[str, Callable[[MemoryStore], object]] = {
    "remember": lambda s: s.remember("the cache needs a warm-up after deploy", type="success", agent_id="a"),
    "remember_many": lambda s: s.remember_many(
        [{"content": f"batch note {i}", "type": "success", "agent_id": "a"} for i in range(3)]
    ),
    "record_outcome": lambda s: s.record_outcome("t-1", "restart", True, error=TRACE, agent_id="a"),
    "add_document": lambda s: s.add_document("# Runbook\n\nRestart the pool.\n\n## Cache\n\nWarm it up.", title="rb"),
}


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_the_vector_index_is_never_loaded_holding_the_write_lock(db, verb):
    with MemoryStore(db) as s:
        index = s._core.index
        assert index is not None and index.seq is None  # a fresh process: nothing loaded yet
        loads: list[bool] = []
        real = index.sync

        def watched(backend):
            if index.seq is None:
                loads.append(backend.in_transaction)
            return real(backend)

        index.sync = watched  # type: ignore[method-assign]
        VERBS[verb](s)
        assert loads, "the verb wrote vectors without loading the index"
        assert not any(loads), "the index's first load ran inside the write transaction"
        assert index.seq is not None
