"""The in-process vector index as a user of a large store relies on it (issue 18): whatever the embedder's
dimension, it answers the vector channel as the exact SQL path does, and a write's near-duplicate check
through it merges what it should. Real SQLite files; the index is forced where a store of tens of
thousands of memories would take it."""

from __future__ import annotations

import pytest

from conftest import note_items
from harness_memory import MemoryStore, vector_index as vi
from harness_memory.embedders import HashingEmbedder


def items(n: int) -> list[dict]:
    return note_items(n, seed=18)


def vector_ids(store: MemoryStore, query: str, **kw) -> list[int]:
    return [h.memory.id for h in store.recall(query, channels={"vector"}, record=False, limit=15, **kw)]


# word-sized (64, 384) and one bit past a word (65, 129: the sign codes need one more 64-bit word)
@pytest.mark.parametrize("dim", [64, 65, 129, 384])
def test_any_embedder_dimension_is_indexed_and_searched_like_exact_search(tmp_path, dim):
    path = tmp_path / "m.db"
    with MemoryStore(path, embedder=HashingEmbedder(dim)) as w:
        w.remember_many(items(300))
    with (
        MemoryStore(path, embedder=HashingEmbedder(dim)) as sql_store,
        MemoryStore(path, embedder=HashingEmbedder(dim)) as index_store,
    ):
        index_store._core.index.sql_below = 0  # the in-process index answers, as in a large store
        for query, kw in [
            ("deploy cache retry", {"agent_id": "a1"}),
            ("flaky webhook queue", {"agent_id": "a0", "types": ["failure"]}),
            ("schema migrate index", {"agent_id": "a2", "include_global": False}),
        ]:
            want = vector_ids(sql_store, query, **kw)
            assert want
            assert vector_ids(index_store, query, **kw) == want, query
        assert index_store._core.index.loaded
        # a write through the loaded index: an exact repeat reinforces, a new text adds one memory
        before = index_store.stats()["memories"]
        first = index_store.remember("note 3: webhook payment queue worker", type="failure", agent_id="a1")
        again = index_store.remember("note 3: webhook payment queue worker", type="failure", agent_id="a1")
        assert again.id == first.id
        assert index_store.stats()["memories"] == before + 1
        assert vector_ids(index_store, "webhook payment queue worker", agent_id="a1")[0] == first.id


@pytest.fixture
def small_snapshots(monkeypatch):
    monkeypatch.setattr(vi, "SNAPSHOT_MIN_ROWS", 100)  # a store of hundreds persists its index as a large one


def test_a_snapshot_file_of_another_format_or_of_garbage_is_ignored(tmp_path, small_snapshots):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(items(200))
        archived = vector_ids(w, "flaky webhook queue", agent_id="a1", types=["success"])[0]
        w.archive(archived)
        w._core.index.sync(w._core.backend)  # a full load writes the snapshot (with the archived flag)
    side = vi.sidecar_path(path)
    good = side.read_bytes()
    assert good[:8] == b"HMVECIX3"
    with MemoryStore(path) as sql_store, MemoryStore(path) as index_store:  # the good file: read back whole
        index_store._core.index.sql_below = 0
        for query, kw in [
            ("deploy cache retry", {"agent_id": "a1"}),  # global memories of other agents too
            ("deploy cache retry", {"agent_id": "a1", "include_global": False}),
            ("flaky webhook queue", {"agent_id": "a1", "include_archived": True, "types": ["success"]}),
            ("flaky webhook queue", {"agent_id": "a1", "types": ["success"]}),
        ]:
            assert vector_ids(index_store, query, **kw) == vector_ids(sql_store, query, **kw), kw
        assert index_store._core.index.last_load == "snapshot"
        with_archived = {"agent_id": "a1", "include_archived": True, "types": ["success"]}
        assert archived in vector_ids(index_store, "flaky webhook queue", **with_archived)
        assert archived not in vector_ids(index_store, "flaky webhook queue", agent_id="a1", types=["success"])
    for spoiled in (b"HMVECIX1" + good[8:], b"x" * 5000, good[:12], b""):
        side.write_bytes(spoiled)
        with MemoryStore(path) as sql_store, MemoryStore(path) as index_store:
            index_store._core.index.sql_below = 0
            want = vector_ids(sql_store, "deploy cache retry", agent_id="a1")
            assert vector_ids(index_store, "deploy cache retry", agent_id="a1") == want
            assert index_store._core.index.last_load == "database" and len(index_store._core.index) == 200
        assert side.read_bytes()[:8] == b"HMVECIX3"  # and rewritten
