"""Recall at scale (issue 11): the exact SQL path of small stores, the persisted vector index,
cross-process freshness and access bookkeeping that does not queue concurrent recalls.

Real SQLite files with sqlite-vec, real second connections and real processes."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from conftest import NOTE_WORDS as WORDS, note_items as _items, worker_processes
from harness_memory import MemoryStore, Settings, vector_index as vi
from harness_memory.sqlite_backend import connect


def _vector_ids(store: MemoryStore, query: str, **kw) -> list[int]:
    return [h.memory.id for h in store.recall(query, channels={"vector"}, record=False, **kw)]


QUERIES = [
    ("deploy cache retry", {"agent_id": "a1"}),
    ("python rust compile", {"agent_id": "a2", "limit": 25}),
    ("flaky webhook queue", {"agent_id": "a0", "types": ["failure"]}),
    ("schema migrate index", {"agent_id": "a1", "include_global": False}),
    ("vector keyword fuse", {"agent_id": "a2", "include_archived": True}),
]


def test_exact_sql_path_and_in_process_index_agree(tmp_path):
    """The small-store SQL path (sqlite-vec cosine over the filtered rows) is the reference: the
    in-process index returns the same memories in the same order, filters included."""
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        mems = w.remember_many(_items(400))
        w.archive(mems[7].id)
    with MemoryStore(path) as sql_store, MemoryStore(path) as index_store:
        index_store._core.index.sql_below = 0  # force the in-process index
        for text, kw in QUERIES:
            want = _vector_ids(sql_store, text, **kw)
            assert want  # the channel found something
            assert _vector_ids(index_store, text, **kw) == want, text
        assert not sql_store._core.index.loaded  # the small store never loaded its index
        assert index_store._core.index.loaded


@pytest.mark.parametrize("include_global", [True, False])
def test_without_an_agent_every_vector_path_sees_the_global_memories(tmp_path, include_global):
    """A recall with no agent sees the global memories whatever include_global says (the SQL
    visibility): the in-process index's filter agrees with it (it returned nothing for
    include_global=False while the keyword channel, filtered in SQL, found the same rows)."""
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(400))
    with MemoryStore(path) as sql_store, MemoryStore(path) as index_store:
        index_store._core.index.sql_below = 0  # force the in-process index
        want = _vector_ids(sql_store, "deploy cache retry", include_global=include_global)
        assert want and all(sql_store.get(i).scope == "global" for i in want)
        assert _vector_ids(index_store, "deploy cache retry", include_global=include_global) == want
        hits = index_store.recall("deploy cache retry", include_global=include_global, record=False)
        assert hits and all(h.memory.scope == "global" for h in hits)


def test_exact_sql_path_applies_every_recall_filter(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        s.remember_many(_items(60))
        hidden = s.remember("deploy cache retry private to a2", type="success", agent_id="a2")
        expired = s.remember("deploy cache retry expiring", type="success", agent_id="a1", ttl=1)
        for text, kw in QUERIES:
            for h in s.recall(text, channels={"vector"}, record=False, **kw):
                m = h.memory
                assert m.agent_id == kw["agent_id"] or (m.scope == "global" and kw.get("include_global", True))
                assert "types" not in kw or m.type in kw["types"]
        assert hidden.id not in _vector_ids(s, "deploy cache retry private", agent_id="a1")
        time.sleep(1.1)
        assert expired.id not in _vector_ids(s, "deploy cache retry expiring", agent_id="a1")


@pytest.fixture
def small_snapshots(monkeypatch):
    monkeypatch.setattr(vi, "SNAPSHOT_MIN_ROWS", 100)


@pytest.mark.parametrize("mapped", [False, True], ids=["read-into-memory", "mapped"])
def test_index_is_persisted_and_a_new_process_catches_up_from_it(tmp_path, small_snapshots, monkeypatch, mapped):
    if mapped:  # as a large index is: the vectors stay in the mapped file, changed rows copied on write
        monkeypatch.setattr(vi, "COPY_BASE_MAX_BYTES", 0)
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(300))
        w._core.index.sync(w._core.backend)  # a full load from the database writes the snapshot
        assert w._core.index.last_load == "database"
        assert (w._core.index._mm is not None) == mapped  # a large one is then mapped, not held
        # either way the process then searches the file it wrote, as a later one will: its int8 rows
        # for the first pass (read into memory with the float32 ones when small enough)
        assert w._core.index.n0 == 300 and w._core.index.q8 is not None
    side = vi.sidecar_path(path)
    assert side.exists()
    with MemoryStore(path) as w:  # changes after the snapshot: new, forgotten and archived memories
        new = w.remember("brand new memory about kubernetes helm charts", type="success", agent_id="a1")
        w.forget(1)
        w.archive(2)
    with MemoryStore(path) as r, MemoryStore(path) as ref:
        r._core.index.sql_below = 0
        r._core.index.sync(r._core.backend)
        assert r._core.index.last_load == "snapshot" and r._core.index.n0 == 300 and r._core.index.q8 is not None
        assert len(r._core.index) == 300  # 301 memories, one forgotten (the archived one stays, flagged)
        for text, kw in [*QUERIES, ("kubernetes helm charts", {"agent_id": "a1"})]:
            assert _vector_ids(r, text, **kw) == _vector_ids(ref, text, **kw), text
        assert _vector_ids(r, "kubernetes helm charts", agent_id="a1")[0] == new.id
        assert 1 not in _vector_ids(r, QUERIES[0][0], agent_id="a1", limit=300)
        assert (r._core.index._mm is not None) == mapped
        assert 2 not in _vector_ids(r, QUERIES[0][0], agent_id="a1", limit=300)  # archived
        r.restore(2)  # a row of the file changes in this process only (the file is mapped copy-on-write)
        assert 2 in _vector_ids(r, QUERIES[0][0], agent_id="a1", limit=300)
    assert side.read_bytes()[:8] == b"HMVECIX3"


def test_a_snapshot_that_does_not_fit_is_ignored(tmp_path, small_snapshots):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(200))
        w._core.index.sync(w._core.backend)
    side = vi.sidecar_path(path)
    good = side.read_bytes()

    def load_kind() -> str:
        with MemoryStore(path) as r:
            r._core.index.sync(r._core.backend)
            assert len(r._core.index) == 200
            return r._core.index.last_load

    assert load_kind() == "snapshot"
    side.write_bytes(good[:5000])  # torn
    assert load_kind() == "database"  # and rewritten
    assert load_kind() == "snapshot"
    header = json.loads(good[16 : 16 + int.from_bytes(good[8:16], "little")])
    header["identity"][2] += 1  # made under another embedder record (e.g. before a re-embed)
    blob = json.dumps(header).encode()
    side.write_bytes(good[:8] + len(blob).to_bytes(8, "little") + blob + good[16 + len(blob) :])
    assert load_kind() == "database"
    with MemoryStore(path) as w:  # the change log no longer reaches back to the snapshot
        w.remember("one more", type="success", agent_id="a0")
        w.remember("and another", type="success", agent_id="a0")
        w._core.backend.execute("DELETE FROM vector_changes WHERE seq < (SELECT MAX(seq) FROM vector_changes)")
    with MemoryStore(path) as r:
        r._core.index.sync(r._core.backend)
        assert r._core.index.last_load == "database" and len(r._core.index) == 202


_CHILD = textwrap.dedent("""
    import json, sys
    from harness_memory import MemoryStore
    with MemoryStore(sys.argv[1]) as s:
        if sys.argv[2] == "index":
            s._core.index.sql_below = 0
        for line in sys.stdin:
            hits = s.recall(line.strip(), agent_id="a1", channels={"vector"}, limit=3, record=False)
            print(json.dumps([h.memory.content for h in hits]), flush=True)
    """)


@pytest.mark.parametrize("path_kind", ["sql", "index"])
def test_a_write_is_seen_at_once_by_a_long_lived_recalling_process(tmp_path, path_kind):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(150))
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path), path_kind], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:

        def ask(q: str) -> list[str]:
            child.stdin.write(q + "\n")
            child.stdin.flush()
            return json.loads(child.stdout.readline())

        assert ask("deploy cache retry")  # the child is up and has searched (loaded its index)
        with MemoryStore(path) as w:
            for k in range(3):
                text = f"zebra giraffe okapi sighting number {k} near the watering hole"
                w.remember(text, type="success", agent_id="a1")
                assert ask(f"zebra giraffe okapi sighting number {k}")[0] == text  # immediately after the write
            w.forget(w.recall("zebra giraffe okapi sighting number 0", agent_id="a1", record=False)[0].memory.id)
            assert "number 0" not in ask("zebra giraffe okapi sighting number 0")[0]
    finally:
        child.stdin.close()
        child.wait(timeout=60)
    assert child.returncode == 0


def test_recall_does_not_wait_for_a_busy_write_lock_and_close_writes_what_was_deferred(tmp_path, monkeypatch):
    from harness_memory import access_writer

    monkeypatch.setattr(access_writer, "FLUSH_INTERVAL", 3600.0)  # only close() writes the bookkeeping
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(50))
    blocker = connect(path)
    with MemoryStore(path, settings=Settings(busy_timeout_ms=20_000)) as s:
        blocker.execute("BEGIN IMMEDIATE")  # another process's writer holds the lock
        t0 = time.monotonic()
        hits = s.recall("deploy cache retry", agent_id="a1", limit=3)
        assert time.monotonic() - t0 < 5  # did not wait out the 20 s busy timeout
        assert [h.memory.access_count for h in hits] == [1, 1, 1]
        gone = hits[2].memory.id
        blocker.execute("DELETE FROM memories WHERE id = ?", (gone,))  # deleted before the bookkeeping lands
        blocker.execute("COMMIT")
        assert s._core.access.pending_rows == 3
    blocker.close()
    with MemoryStore(path) as r:  # close() wrote the deferred rows
        b = r._core.backend
        counts = dict(
            b.execute(
                "SELECT id, access_count FROM memories WHERE id IN (?, ?)", (hits[0].memory.id, hits[1].memory.id)
            ).fetchall()
        )
        assert counts == {hits[0].memory.id: 1, hits[1].memory.id: 1}
        logged = [r[0] for r in b.execute("SELECT memory_id FROM memory_access_log WHERE access_type = 'query'")]
        assert sorted(logged) == sorted([hits[0].memory.id, hits[1].memory.id])


def test_deferred_bookkeeping_is_written_by_the_thread_once_the_lock_is_free(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(50))
    blocker = connect(path)
    with MemoryStore(path) as s:
        blocker.execute("BEGIN IMMEDIATE")
        s.recall("deploy cache retry", agent_id="a1", limit=2)
        s.recall("python rust compile", agent_id="a1", limit=2)
        time.sleep(0.3)
        assert s._core.access.pending_rows == 4  # the lock is busy: kept for later
        blocker.execute("COMMIT")
        assert s._core.access.wait_written()  # no further call: the thread wrote them
        assert blocker.execute("SELECT COUNT(*) FROM memory_access_log").fetchone()[0] == 4
    blocker.close()


def _recaller(path: str, n: int, q) -> None:
    errors, hits = [], 0
    try:
        with MemoryStore(path) as s:
            rng = np.random.default_rng()
            for _ in range(n):
                try:
                    hits += len(s.recall(" ".join(rng.choice(WORDS, 4)), agent_id="a1", limit=3))
                except Exception as exc:  # noqa: BLE001 - collected and asserted on in the parent
                    errors.append(repr(exc))
    except Exception as exc:  # noqa: BLE001 - the close (its flush) failing is an error too
        errors.append(repr(exc))
    q.put(("recaller", hits, errors))


def _writer(path: str, n: int, q) -> None:
    errors = []
    with MemoryStore(path) as s:
        for i, it in enumerate(_items(n, seed=99)):
            try:
                s.remember(**{**it, "content": it["content"] + f" writer {i}"})
            except Exception as exc:  # noqa: BLE001 - collected and asserted on in the parent
                errors.append(repr(exc))
    q.put(("writer", n, errors))


def test_eight_recalling_processes_and_two_writers(tmp_path):
    """No 'database is locked', and every recall's bookkeeping is in the log after the processes close."""
    path = str(tmp_path / "m.db")
    with MemoryStore(path) as w:
        w.remember_many(_items(300))
    ctx = worker_processes()
    q = ctx.Queue()
    procs = [ctx.Process(target=_recaller, args=(path, 40, q)) for _ in range(8)]
    procs += [ctx.Process(target=_writer, args=(path, 40, q)) for _ in range(2)]
    for p in procs:
        p.start()
    results = [q.get(timeout=600) for _ in procs]
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    assert all(not errs for _, _, errs in results), results
    hits = sum(n for kind, n, _ in results if kind == "recaller")
    with MemoryStore(path) as r:
        b = r._core.backend
        assert b.execute("SELECT COUNT(*) FROM memory_access_log WHERE access_type = 'query'").fetchone()[0] == hits
        merges = b.execute("SELECT COUNT(*) FROM memory_merges").fetchone()[0]  # a duplicate write counts too
        assert b.execute("SELECT SUM(access_count) FROM memories").fetchone()[0] == hits + merges


def test_the_hashing_embedders_word_cache_survives_being_cleared(monkeypatch):
    """Found filling a million memories: once the word-hash cache was full it was cleared, and a
    word of the same call that had been cached before raised KeyError (embedding then failed)."""
    from harness_memory import HashingEmbedder, embedders

    monkeypatch.setattr(embedders, "_HASH_CACHE_MAX", 8)
    e = HashingEmbedder()
    e.embed_batch(["alpha beta gamma"])  # 5 grams cached
    got = e.embed_batch(["alpha beta delta epsilon zeta"])  # overflows: the cache is cleared mid-call
    monkeypatch.setattr(embedders, "_HASH_CACHE_MAX", 1 << 18)
    assert np.array_equal(got, HashingEmbedder().embed_batch(["alpha beta delta epsilon zeta"]))


def test_a_long_lived_process_moves_from_the_sql_path_to_the_index(tmp_path):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(200))
    with MemoryStore(path) as r:
        ix = r._core.index
        first = _vector_ids(r, "deploy cache retry", agent_id="a1")
        assert not ix.loaded and ix.sql_seconds > 0
        ix.sql_budget = ix.sql_seconds / 2  # as if it had answered many queries this way
        assert _vector_ids(r, "deploy cache retry", agent_id="a1") == first
        assert ix.loaded


def test_a_process_that_only_recalls_writes_the_snapshot_after_its_first_load(tmp_path, small_snapshots):
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(200))
    vi.sidecar_path(path).unlink(missing_ok=True)
    with MemoryStore(path) as r:
        r._core.index.sql_below = 0
        assert _vector_ids(r, "deploy cache retry", agent_id="a1")  # loads inside recall's read snapshot
        assert r._core.index.last_load == "database"
    assert vi.sidecar_path(path).exists()  # written after the read snapshot ended
    with MemoryStore(path) as r:
        r._core.index.sync(r._core.backend)
        assert r._core.index.last_load == "snapshot"
