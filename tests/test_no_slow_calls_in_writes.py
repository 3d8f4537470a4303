"""No embedding inside a write transaction (issue 17): an embedder may be a CPU model or a
network endpoint, and every other writer of the fleet would wait for it. The embedder double
below fails the call when it runs while this store's connection is inside a transaction."""

from __future__ import annotations

from harness_memory import MemoryStore
from harness_memory.testing import FakeEmbedder, ManualClock


class GuardedEmbedder(FakeEmbedder):
    def __init__(self):
        super().__init__(32)
        self.store: MemoryStore | None = None
        self.calls = 0
        self.inside: list[str] = []

    def embed_batch(self, texts):
        self.calls += 1
        if self.store is not None and self.store._core.backend.conn.in_transaction:
            self.inside.append(texts[0][:60])
        return super().embed_batch(texts)


def test_no_write_path_embeds_while_holding_the_write_lock(tmp_path):
    emb = GuardedEmbedder()
    clock = ManualClock()
    with MemoryStore(tmp_path / "g.db", embedder=emb, clock=clock) as s:
        emb.store = s
        topics = [
            "the proxy refuses the upstream certificate",
            "the migration lock is held by a dead job",
            "the wheel cache is stale after the python upgrade",
        ]
        for t in topics:
            for k in range(4):
                s.remember(f"{t}; seen in build {k} with the usual retry", type="failure", agent_id="a")
        s.remember_many(
            [{"content": f"batch note {i} about flaky dns", "type": "success", "agent_id": "a"} for i in range(5)]
        )
        s.remember("keyed note", type="decision", agent_id="a", key="k")
        s.remember("keyed note, second version", type="decision", agent_id="a", key="k")
        s.record_outcome("t1", "retry_with_context", True, error="TimeoutError: upstream did not answer", agent_id="a")
        s.learn_fix("ModuleNotFoundError: No module named 'yaml'", "pip install pyyaml", agent_id="a")
        task = {"id": "t2", "title": "fix the proxy certificate", "agent_id": "a"}
        ctx = s.on_task_start(task)
        s.on_task_error(task, "ssl.SSLError: certificate verify failed")
        s.on_task_complete(
            task, {"success": True, "summary": "pinned the CA bundle", "error": "ssl.SSLError"}, context=ctx
        )
        s.recall("proxy certificate", agent_id="a")
        s.run_job("consolidate")
        assert s._core.backend.execute("SELECT COUNT(*) FROM memories WHERE memory_type = 'pattern'").fetchone()[0] >= 1
    assert emb.calls > 10
    assert emb.inside == []


def test_the_guard_sees_an_embedding_inside_a_transaction(tmp_path):
    """The double is not blind: an embedding made inside a write transaction is caught."""
    emb = GuardedEmbedder()
    with MemoryStore(tmp_path / "h.db", embedder=emb) as s:
        emb.store = s
        with s._core.backend.write():
            s._core.embed(["inside on purpose"])
        emb.store = None
    assert emb.inside == ["inside on purpose"]
