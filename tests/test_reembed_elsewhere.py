"""After reembed() in one process, every other open store notices before its next embedding
(issue 17): a typed error that says to reopen, never a vector from the old space; rows written
during a reembed are embedded after the swap, not under the write lock."""

from __future__ import annotations

import subprocess
import sys

import pytest

from harness_memory import EmbedderMismatchError, MemoryStore
from harness_memory.testing import FakeEmbedder

_REEMBED = r"""
import sys
from harness_memory import MemoryStore
from harness_memory.testing import FakeEmbedder
with MemoryStore(sys.argv[1], embedder=FakeEmbedder(int(sys.argv[2])), allow_embedder_change=True) as s:
    print(s.reembed())
"""


@pytest.mark.parametrize("dims", [32, 48])  # the same dimensions would silently mix vector spaces
def test_an_open_store_refuses_to_embed_after_another_process_reembedded(tmp_path, dims):
    path = tmp_path / "r.db"
    with MemoryStore(path) as a:  # the default hashing embedder
        a.remember("the proxy refuses the upstream certificate", type="failure", agent_id="x")
        assert a.recall("proxy certificate", agent_id="x")
        r = subprocess.run(
            [sys.executable, "-c", _REEMBED, str(path), str(dims)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        with pytest.raises(EmbedderMismatchError, match="reopen"):
            a.recall("proxy certificate", agent_id="x")
        with pytest.raises(EmbedderMismatchError, match="reopen"):
            a.remember("another note", type="success", agent_id="x")
    with MemoryStore(path, embedder=FakeEmbedder(dims)) as b:  # reopened with the new embedder: fine
        assert [h.memory.content for h in b.recall("proxy certificate", agent_id="x")] == [
            "the proxy refuses the upstream certificate"
        ]
        assert b.remember("another note", type="success", agent_id="x").embedding_pending is False


class _WritesDuring(FakeEmbedder):
    """An embedder during whose first batch another writer adds a memory (a row the swap must not
    embed under the lock); records whether any call ran inside a transaction."""

    def __init__(self, path):
        super().__init__(24)
        self.path, self.fired, self.inside, self.store = path, False, False, None

    def embed_batch(self, texts):
        if self.store is not None and self.store._core.backend.conn.in_transaction:
            self.inside = True
        if not self.fired:
            self.fired = True
            with MemoryStore(self.path) as other:
                other.remember("written during the reembed", type="success", agent_id="x")
        return super().embed_batch(texts)


def test_rows_written_during_a_reembed_are_embedded_after_the_swap(tmp_path):
    path = tmp_path / "w.db"
    with MemoryStore(path) as s:
        s.remember("first note about the cache", type="success", agent_id="x")
    emb = _WritesDuring(path)
    with MemoryStore(path, embedder=emb, allow_embedder_change=True) as s:
        emb.store = s
        assert s.reembed() == 2
        assert not emb.inside
        assert s._core.backend.execute("SELECT COUNT(*) FROM memories WHERE embedding_pending = 1").fetchone()[0] == 0
        hits = s.recall("written during the reembed", agent_id="x", channels=["vector"])
        assert hits and hits[0].memory.content == "written during the reembed"


class _ReembedsMeanwhile(FakeEmbedder):
    """While it embeds a write's text, another process re-embeds the store (24 dimensions)."""

    def __init__(self, path):
        super().__init__(16)
        self.path, self.fired = path, False

    def embed_batch(self, texts):
        out = super().embed_batch(texts)
        if not self.fired and texts == ["written while another process re-embeds"]:
            self.fired = True
            r = subprocess.run(
                [sys.executable, "-c", _REEMBED, str(self.path), "24"], capture_output=True, text=True, timeout=120
            )
            assert r.returncode == 0, r.stderr
        return out


def test_a_write_whose_vector_was_made_before_another_process_reembedded_is_refused(tmp_path):
    """The embedder check before embedding passed; the re-embed came between the embedding and the
    write's transaction: the write refuses inside the transaction, and nothing of it is stored."""
    path = tmp_path / "race.db"
    emb = _ReembedsMeanwhile(path)
    with MemoryStore(path, embedder=emb) as a:
        a.remember("a note before", type="success", agent_id="x")
        with pytest.raises(EmbedderMismatchError, match="reopen"):
            a.remember("written while another process re-embeds", type="success", agent_id="x")
    assert emb.fired
    with MemoryStore(path, embedder=FakeEmbedder(24)) as b:
        assert [m.content for m in b.get_by_type("success", agent_id="x")] == ["a note before"]


def test_a_reembed_just_before_the_write_transaction_is_caught_inside_it(tmp_path, monkeypatch):
    """The last window: after the write's own check and its index catch-up, before its
    transaction. The check inside the transaction refuses the write."""
    from harness_memory import writes

    path = tmp_path / "late.db"
    real = writes.catch_up
    fired = []

    def catch_up_then_reembed(core, vectors):
        real(core, vectors)
        if not fired and vectors is not None:
            fired.append(1)
            r = subprocess.run(
                [sys.executable, "-c", _REEMBED, str(path), "24"], capture_output=True, text=True, timeout=120
            )
            assert r.returncode == 0, r.stderr

    with MemoryStore(path, embedder=FakeEmbedder(16)) as a:
        a.remember("a note before", type="success", agent_id="x")
        monkeypatch.setattr(writes, "catch_up", catch_up_then_reembed)
        with pytest.raises(EmbedderMismatchError, match="reopen"):
            a.remember("written in the last window", type="success", agent_id="x")
    assert fired
    with MemoryStore(path, embedder=FakeEmbedder(24)) as b:
        assert [m.content for m in b.get_by_type("success", agent_id="x")] == ["a note before"]


def test_an_index_never_takes_vectors_of_another_size():
    import numpy as np

    from harness_memory.vector_index import VectorIndex

    index = VectorIndex(16)
    with pytest.raises(EmbedderMismatchError, match="reopen"):
        index.put_many([(1, "default", "x", "agent", "success", False, np.ones(24, dtype=np.float32))])
    assert len(index) == 0
