"""reembed() never holds the write lock for the whole store (issue 17): a short swap, then the new
vectors in bounded batches; a fill cut short (an error, a killed process) is finished by the
backfill, and nothing is left without its vector or with one from the old space."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from conftest import note_items
from harness_memory import MemoryStore, Settings
from harness_memory.reembed import refill_after
from harness_memory.settings import MaintenanceSettings
from harness_memory.sqlite_backend import connect
from harness_memory.testing import FakeEmbedder

TINY = Settings(maintenance=MaintenanceSettings(job_batch_seconds=1e-7))


def _fill(db, n: int) -> list[int]:
    with MemoryStore(db) as s:  # the default hashing embedder
        return [m.id for m in s.remember_many(note_items(n))]


def _vectors(store) -> dict[int, np.ndarray]:
    ids = [r[0] for r in store._core.backend.execute("SELECT id FROM memories ORDER BY id")]
    return store._core.backend.get_vectors(ids)


def _in_new_space(store, emb: FakeEmbedder) -> None:
    """Every memory has exactly the new embedder's vector of its content; nothing is pending."""
    rows = store._core.backend.execute("SELECT id, content FROM memories ORDER BY id").fetchall()
    got = _vectors(store)
    assert sorted(got) == [r[0] for r in rows]
    want = emb.embed_batch([r[1] for r in rows])
    for (mid, _), w in zip(rows, want):
        w = np.asarray(w, dtype=np.float32)
        assert np.allclose(got[mid], w / np.linalg.norm(w), atol=1e-5)  # stored as unit vectors
    assert store._core.backend.execute("SELECT COUNT(*) FROM memories WHERE embedding_pending = 1").fetchone()[0] == 0
    assert refill_after(store) is None


def test_the_vectors_go_in_in_many_short_transactions_after_a_swap(db):
    ids = _fill(db, 200)
    emb = FakeEmbedder(24)
    with MemoryStore(db, embedder=emb, allow_embedder_change=True, settings=TINY) as s:
        b = s._core.backend
        inner_write, inner_put = b.write, b.put_vectors
        txs: list[int] = []  # vectors put per write transaction

        from contextlib import contextmanager

        @contextmanager
        def write():
            if b.in_transaction:
                with inner_write() as c:
                    yield c
                return
            txs.append(0)
            with inner_write() as c:
                yield c

        def put_vectors(rows):
            txs[-1] += len(rows)
            inner_put(rows)

        b.write, b.put_vectors = write, put_vectors
        try:
            assert s.reembed() == len(ids)
        finally:
            b.write, b.put_vectors = inner_write, inner_put
        _in_new_space(s, emb)
        assert sum(txs) == len(ids)
        assert txs[0] == 0  # the swap puts no vector: it only recreates the table and the record
        assert len([n for n in txs if n]) >= 10
        assert max(txs) <= len(ids) / 4, txs
        hit = s.recall(note_items(200)[123]["content"], agent_id="a0", channels=["vector"], limit=1)
        assert hit and hit[0].memory.id == ids[123]


class _Broken(Exception):
    pass


def test_a_fill_cut_short_is_finished_by_the_backfill(db):
    ids = _fill(db, 150)
    emb = FakeEmbedder(16)
    with MemoryStore(db, embedder=emb, allow_embedder_change=True, settings=TINY) as s:
        b = s._core.backend
        inner = b.put_vectors
        calls = [0]

        def put_vectors(rows):
            calls[0] += 1
            if calls[0] == 4:
                raise _Broken("the process dies here")
            inner(rows)

        b.put_vectors = put_vectors
        with pytest.raises(_Broken):
            s.reembed()
        b.put_vectors = inner
        after = refill_after(s)
        assert after is not None and ids[0] <= after < ids[-1]
        have = _vectors(s)
        assert have and max(have) <= after < min(set(ids) - set(have))  # filled in id order up to the cursor
        from harness_memory.jobs import run_job

        assert run_job(s, "backfill", dry_run=True).counts["pending"] == len([i for i in ids if i > after])
    with MemoryStore(db, embedder=emb, settings=TINY) as s:  # reopened: the recorded embedder is the new one
        assert s.run_job("backfill").counts["embedded"] == len([i for i in ids if i > after])
        _in_new_space(s, emb)
        assert s.run_job("backfill", dry_run=True).counts["pending"] == 0
        with s._core.backend.write() as c:  # one flagged memory, no fill in progress: it alone is pending
            c.execute("UPDATE memories SET embedding_pending = 1 WHERE id = ?", (ids[0],))
        assert s.run_job("backfill", dry_run=True).counts["pending"] == 1


_KILLED_CHILD = r"""
import sys, time
from harness_memory import MemoryStore, Settings
from harness_memory.settings import MaintenanceSettings
from harness_memory.sqlite_backend import connect
from harness_memory.testing import FakeEmbedder
s = MemoryStore(sys.argv[1], embedder=FakeEmbedder(20), allow_embedder_change=True,
                settings=Settings(maintenance=MaintenanceSettings(job_batch_seconds=1e-7)))
b = s._core.backend
inner = b.put_vectors
def slow(rows):
    inner(rows)
    time.sleep(0.02)  # a slow disk: the parent kills this process in the middle of the fill
b.put_vectors = slow
s.reembed()
print("finished", flush=True)
"""


def test_a_process_killed_during_the_fill_leaves_a_store_the_backfill_completes(tmp_path):
    db = tmp_path / "k.db"
    ids = _fill(db, 600)
    child = subprocess.Popen([sys.executable, "-c", _KILLED_CHILD, str(db)], stdout=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        after = None
        while time.monotonic() < deadline and child.poll() is None:
            conn = connect(db)  # a plain reader: opening a MemoryStore here could record an embedder
            try:
                after = conn.execute("SELECT refill_after FROM embedder_info WHERE id = 1").fetchone()[0]
            finally:
                conn.close()
            if after:
                break
            time.sleep(0.02)
        assert after, "the fill never started"
        os.kill(child.pid, signal.SIGKILL)
    finally:
        out = child.communicate(timeout=60)[0]
    assert "finished" not in out
    emb = FakeEmbedder(20)
    with MemoryStore(db, embedder=emb) as s:
        left = refill_after(s)
        assert left is not None and left < ids[-1]
        s.backfill_embeddings()
        _in_new_space(s, emb)
        content = s._core.backend.execute("SELECT content FROM memories WHERE id = ?", (ids[-1],)).fetchone()[0]
        hit = s.recall(content, agent_id="a2" if (len(ids) - 1) % 3 == 2 else "a0", channels=["vector"], limit=3)
        assert ids[-1] in [h.memory.id for h in hit]


def test_memories_written_or_changed_during_the_fill_end_with_the_new_vector_of_their_content(tmp_path):
    """Between a page's vectors being made and its batches: another process (with the new
    embedder) writes a memory, which has its vector already (the fill leaves it, vec0 would refuse a
    second one), and a memory of the page changes content (its vector was made from the old text:
    flagged, then embedded by the backfill reembed() runs after the fill)."""
    from harness_memory import reembed as mod

    db = tmp_path / "n.db"
    ids = _fill(db, 200)
    emb = FakeEmbedder(12)
    written: list[int] = []
    real_page = mod._page_vectors

    def page_vectors(store, page, staged):
        out = real_page(store, page, staged)
        if not written:
            with MemoryStore(db, embedder=FakeEmbedder(12)) as other:
                written.append(other.remember("a note the fill has not reached", type="success", agent_id="x").id)
                with other._core.backend.write() as c:  # changed behind the page's back
                    c.execute(
                        "UPDATE memories SET content = ? WHERE id = ?", ("changed after its vector was made", ids[-1])
                    )
        return out

    with MemoryStore(db, embedder=emb, allow_embedder_change=True, settings=TINY) as s:
        mod._page_vectors = page_vectors
        try:
            s.reembed()
        finally:
            mod._page_vectors = real_page
        assert written
        _in_new_space(s, emb)
        for text, mid in (
            ("a note the fill has not reached", written[0]),
            ("changed after its vector was made", ids[-1]),
        ):
            agent = s.get(mid).agent_id
            hit = s.recall(text, agent_id=agent, channels=["vector"], limit=1)
            assert hit and hit[0].memory.id == mid


class _Counting(FakeEmbedder):
    def __init__(self, dims):
        super().__init__(dims)
        self.texts = 0

    def embed_batch(self, texts):
        self.texts += len(texts)
        return super().embed_batch(texts)


def test_each_memory_is_embedded_once_and_the_index_keeps_serving(tmp_path):
    """The vectors made before the swap are the ones the fill puts in (nothing embedded twice), and
    the process's in-process index answers vector recalls in the new space right after."""
    db = tmp_path / "once.db"
    ids = _fill(db, 150)
    emb = _Counting(20)
    with MemoryStore(db, embedder=emb, allow_embedder_change=True, settings=TINY) as s:
        assert s.reembed() == len(ids)
        assert emb.texts == len(ids)
        assert s._core.index is not None
        hit = s.recall(note_items(150)[77]["content"], agent_id=f"a{77 % 3}", channels=["vector"], limit=1)
        assert hit and hit[0].memory.id == ids[77]
