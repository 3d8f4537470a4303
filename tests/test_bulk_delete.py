"""Bulk deletes and what waits on them (issue 17): batches bounded by a time budget, the vec0 rows of
a bulk delete left to the compact job on SQLite (no deleted memory comes back meanwhile, through
any channel), and the persisted vector index rewritten by the compact job, not by the writes and
recalls that catch up."""

from __future__ import annotations

import json
import random
from contextlib import contextmanager

import pytest

from harness_memory import MemoryStore, Settings, sqlite_backend, vector_index as vi
from harness_memory.jobs.batches import STEP, STEP_SHARE, Batcher, run_steps

_WORDS = [
    f"{a}{b}"
    for a in ("ka", "lo", "mi", "nu", "pe", "ro", "si", "tu", "va", "ze")
    for b in ("bar", "dex", "fim", "gol", "hup", "jen", "kor", "lum", "mos", "nix")
]


def _items(n: int, agent: str, seed: int = 0, **extra) -> list[dict]:
    rng = random.Random(seed)
    return [
        {"content": " ".join(rng.sample(_WORDS, 12)), "type": "success", "agent_id": agent, **extra} for _ in range(n)
    ]


def _ids(hits) -> list[int]:
    return [h.memory.id for h in hits]


@pytest.mark.parametrize("search", ["memory", "vec0"])
def test_a_bulk_delete_leaves_its_vectors_to_compact_and_no_channel_returns_them(tmp_path, search):
    with MemoryStore(tmp_path / "d.db", settings=Settings(vector_search=search)) as s:
        kept = s.remember_many(_items(60, "a", seed=1))
        gone = s.remember_many(_items(80, "b", seed=2))
        gone_global = s.remember_many(_items(20, "c", seed=3, scope="global"))
        b = s._core.backend
        assert s.forget_all("b") == 80 and s.forget_all("c") == 20
        assert b.removed_vectors() == 100  # left in vec0, recorded
        dead = {m.id for m in gone + gone_global}
        for m in gone[:5] + gone_global[:5]:
            vec = s._core.embed([m.content])[0]
            # vec0's own KNN (the vec0 setting's channel, and near duplicates without an index)
            for kw in ({"agent_id": "b"}, {"scope": "global"}, {}):
                assert not dead & {i for i, _ in b.vector_knn(vec, namespace="default", k=20, **kw)}, kw
            # recall through every channel, as the deleted memory's agent and as another
            for agent in ("b", "c", "a"):
                assert not dead & set(_ids(s.recall(m.content, agent_id=agent, limit=50, record=False)))
        # the same text remembered again is a new memory, not a reinforcement of a deleted one
        again = s.remember(gone[0].content, type="success", agent_id="b")
        assert b.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 61
        assert again.id in dead and b.removed_vectors() == 99  # the largest ids were free: one is reused
        best = b.vector_knn(s._core.embed([kept[0].content])[0], namespace="default", k=1, agent_id="a")
        assert best[0][0] == kept[0].id
        assert s.run_job("compact").counts["vectors_purged"] == 99 and b.removed_vectors() == 0
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 61
        assert s.run_job("compact").counts["vectors_purged"] == 0


@pytest.mark.parametrize("max_k", [30, 4096], ids=["exact-fallback", "over-fetch"])
def test_vec0_knn_steps_over_the_orphans_of_a_bulk_delete(tmp_path, monkeypatch, max_k):
    monkeypatch.setattr(sqlite_backend, "VEC0_MAX_K", max_k)
    with MemoryStore(tmp_path / "x.db", settings=Settings(vector_search="vec0")) as s:
        kept = s.remember_many(_items(40, "a", seed=4))
        s.remember_many([{**it, "type": "failure"} for it in _items(80, "a", seed=5)])
        b = s._core.backend
        vec = s._core.embed([kept[3].content])[0]
        ref = b.vector_exact(vec, "m.agent_id = 'a' AND m.memory_type = 'success'", [], 10)
        assert s.forget_all("a", type="failure") == 80 and b.removed_vectors() == 80
        # the orphans pass vec0's filters (same agent, no type asked): 80 of them may rank first
        got = b.vector_knn(vec, namespace="default", k=10, agent_id="a")
        assert [i for i, _ in got] == [i for i, _ in ref]
        s.run_job("compact")
        assert [i for i, _ in b.vector_knn(vec, namespace="default", k=10, agent_id="a")] == [i for i, _ in ref]


def test_a_reused_id_never_inherits_the_deleted_memory_s_vector(tmp_path):
    from harness_memory.testing import FailingEmbedder

    emb = FailingEmbedder(8, mode="ok")
    with MemoryStore(tmp_path / "r.db", embedder=emb) as s:
        first = s.remember("alpha note about kubernetes helm charts", type="success", agent_id="x")
        last = s.remember("beta note about postgres vacuum settings", type="success", agent_id="y")
        b = s._core.backend
        assert s.forget_all("y") == 1 and b.removed_vectors() == 1
        emb.mode = "raise"  # the next memory is stored without a vector (embedding pending)
        pending = s.remember("gamma note about terraform state locks", type="success", agent_id="x")
        assert pending.id == last.id and pending.embedding_pending  # SQLite reused the largest id
        assert b.removed_vectors() == 0 and b.get_vectors([pending.id]) == {}
        assert b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 1
        emb.mode = "ok"
        assert s.forget_all("x") == 2
        fresh = s.remember("delta note about docker layer caches", type="success", agent_id="z")
        assert fresh.id == first.id  # every id free again: the first one is reused, its vector its own
        stored = b.get_vectors([fresh.id])[fresh.id]
        assert stored.tolist() == pytest.approx(list(s._core.embed([fresh.content])[0]), abs=1e-6)


def test_a_batch_ends_at_its_time_budget_whatever_its_size():
    calls: list[int] = []

    def apply(keys):
        calls.append(len(keys))
        return len(keys)

    assert run_steps(Batcher(0.0, start=5000), list(range(1000)), 0, apply) == (STEP, STEP)
    assert calls == [STEP]  # a spent budget ends the batch after its first step
    calls.clear()
    assert run_steps(Batcher(60.0, start=200), list(range(1000)), 100, apply) == (300, 200)
    assert calls == [STEP, STEP, STEP, 200 - 3 * STEP]  # otherwise its size, in steps


class _Work:
    """A clock that is a count of work: ``apply`` advances it by ``cost`` seconds a key."""

    def __init__(self, cost: float):
        self.now, self.cost = 0.0, cost

    def __call__(self) -> float:
        return self.now

    def apply(self, keys) -> int:
        self.now += self.cost * len(keys)
        return len(keys)


def test_steps_shrink_when_keys_turn_slow_so_a_batch_ends_near_its_budget():
    """What a batch's steps cost is accounted by the batcher's clock (here a count of work, no
    timing): the first step is STEP keys; from then on a step is sized so that at the last step's
    rate it takes at most 1/STEP_SHARE of the budget, so a batch ends within that of its budget
    even when its keys cost far more than its size was sized for (the 1 ms a key here; issue 17
    saw a vec0 rebuild batch of 64-row statements hold the lock 464 ms)."""
    work = _Work(0.001)
    batch = Batcher(0.05, start=5000, clock=work)
    keys = list(range(100_000))
    k, n = run_steps(batch, keys, 0, work.apply)
    assert (k, n) == (STEP, STEP) and work.now == pytest.approx(STEP * 0.001)  # one step: its rate unknown before
    step = int(0.05 / STEP_SHARE / 0.001)
    assert batch.step() == step
    spent = []
    for _ in range(5):
        t0 = work.now
        k, _ = run_steps(batch, keys, k, work.apply)
        spent.append(work.now - t0)
    assert all(0.05 <= x <= 0.05 + 0.05 / STEP_SHARE for x in spent), spent
    work.cost = 0.01  # ten times slower from here: one step of the old size, then steps of one key
    t0 = work.now
    k2, n = run_steps(batch, keys, k, work.apply)
    assert n == step and work.now - t0 == pytest.approx(step * 0.01)
    assert batch.step() == 1
    t0 = work.now
    run_steps(batch, keys, k2, work.apply)
    assert work.now - t0 == pytest.approx(0.05)  # five keys of 10 ms: the budget, not 64 keys' 640 ms
    work.cost = 1e-6  # quick keys again: steps of STEP
    run_steps(batch, keys, 0, work.apply)
    assert batch.step() == STEP


@pytest.mark.parametrize("step", ["purge", "rebuild"])
def test_vector_purge_and_rebuild_end_each_batch_at_its_budget_in_steps(tmp_path, step):
    """The compact job's vec0 work (deleting the rows bulk deletes left, moving rows out of sparse
    chunks) goes through the batcher's steps: with the budget spent at every step, each
    transaction after the first does one step of one key (the first: STEP keys, its rate unknown);
    the clock counts steps, no time is measured."""
    with MemoryStore(tmp_path / "v.db") as s:
        b = s._core.backend
        kept = s.remember_many(_items(1100 if step == "rebuild" else 0, "a", seed=4))
        s.remember_many(_items(150, "b", seed=5))
        assert s.forget_all("b") == 150
        if step == "rebuild":
            # half the first chunk's rows deleted and purged: that chunk is sparse, its rows move
            with b.write() as c:
                c.executemany("DELETE FROM memory_vectors WHERE memory_id = ?", [(m.id,) for m in kept[:600:2]])
            assert b.purge_removed_vectors() == 150
        ticks = iter(range(10**9))
        batch = Batcher(0.0, start=5000, gap=0, clock=lambda: float(next(ticks)))
        sizes: list[int] = []
        if step == "purge":
            assert b.purge_removed_vectors(batch, progress=sizes.append) == 150
            assert b.removed_vectors() == 0 and b.execute("SELECT COUNT(*) FROM memory_vectors").fetchone()[0] == 0
        else:
            # the first chunk's 724 live rows move to the newest one (1,250 rows were put in chunks
            # of 1,024), which then holds every row: the first chunk is freed
            assert b.rebuild_vectors(batch, progress=sizes.append) == 724 == sum(sizes)
            assert b.vector_fill() == (800, 1024)
        assert sizes[0] == STEP and set(sizes[1:]) == {1}, sizes[:5]


@pytest.mark.parametrize("left", [None, 0], ids=["default", "left-at-0-by-a-stopped-run"])
def test_writers_do_none_of_the_keyword_index_merge_the_compact_job_runs(tmp_path, left):
    """While the compact job merges the FTS5 index in steps, another writer's remember() does none
    of that merge inside its own transaction (FTS5 continues an incremental merge in progress from
    a writer's automatic merge, 64 pages per level every 64 leaves: hundreds of rows changed by
    one call). Counted in rows the writer's connection changed, no timing. The setting is back to
    FTS5's default after, also when a stopped run had left it at 0."""
    rng = random.Random(3)
    with MemoryStore(tmp_path / "f.db") as s, MemoryStore(tmp_path / "f.db") as w:
        for _ in range(10):
            s.remember_many(
                [{"content": " ".join(rng.sample(_WORDS, 20)), "type": "success", "agent_id": "a"} for _ in range(200)]
            )
        for _ in range(150):  # single writes: many small segments to merge
            s.remember(" ".join(rng.sample(_WORDS, 20)), type="success", agent_id="a")
        b = s._core.backend
        if left is not None:
            b.execute("INSERT INTO memories_fts(memories_fts, rank) VALUES ('automerge', ?)", (left,))
        changed: list[int] = []

        class Writer(Batcher):
            @contextmanager
            def transaction(self, backend, **kw):
                for _ in range(5):  # another process's writes between two merge steps
                    c0 = w._core.backend.conn.total_changes
                    w.remember(" ".join(rng.sample(_WORDS, 20)), type="success", agent_id="w")
                    changed.append(w._core.backend.conn.total_changes - c0)
                with super().transaction(backend, **kw) as c:
                    yield c

        b.optimize(batches=Writer(1e-4, gap=0))
        assert len(changed) >= 70  # more than 64 leaves written: an automatic merge would have run
        assert max(changed) < 30, sorted(changed)[-5:]  # its own rows only (about 11), no merging
        assert b.execute("SELECT v FROM memories_fts_config WHERE k = 'automerge'").fetchone()[0] == 4


def test_writes_and_recalls_never_rewrite_the_vector_snapshot_the_compact_job_does(tmp_path, monkeypatch):
    monkeypatch.setattr(vi, "SNAPSHOT_MIN_ROWS", 100)
    path = tmp_path / "m.db"
    with MemoryStore(path) as w:
        w.remember_many(_items(300, "a", seed=6))
        w._core.index.sync(w._core.backend)  # a full load from the database writes the snapshot
    side = vi.sidecar_path(path)
    written = side.read_bytes()
    with MemoryStore(path) as w:
        w._core.index.sql_below = 0
        for k in range(3):  # half the rows again: far past the tenth that used to trigger a rewrite
            w.remember_many(_items(50, "a", seed=10 + k))
            w.recall("kabar lodex", agent_id="a", record=False)
        assert w._core.index.last_load == "snapshot" and w._core.index.snapshot_stale
        assert side.read_bytes() == written  # no call paid for a rewrite
        assert w.run_job("compact").counts["snapshot_written"] == 1
    head = side.read_bytes()
    header = json.loads(head[16 : 16 + int.from_bytes(head[8:16], "little")])
    assert header["n"] == 450
    with MemoryStore(path) as r:
        r._core.index.sync(r._core.backend)
        assert r._core.index.last_load == "snapshot" and r._core.index.n0 == 450
        assert r.run_job("compact").counts["snapshot_written"] == 0  # current: nothing to rewrite


@pytest.mark.parametrize("how", ["clear", "forget_all", "cleanup_expired"])
def test_a_bulk_delete_finds_each_batch_s_rows_by_primary_key(tmp_path, how):
    """Each batch re-checks its rows' condition inside its transaction. Written plainly, SQLite's
    planner served ``id IN (...) AND namespace = ?`` from the namespace index, scanning the whole
    namespace once per batch: a clear of 100k memories spent a third of its time there (quadratic)."""
    from harness_memory.testing import ManualClock

    clock = ManualClock()
    with MemoryStore(tmp_path / "p.db", clock=clock) as s:
        s.remember_many(_items(300, "a", seed=30, namespace="doomed", ttl=60))
        s.remember_many(_items(300, "b", seed=31, namespace="kept"))
        b = s._core.backend
        b.execute("ANALYZE")  # with statistics, as a store that ran the compact job has
        clock.advance(120)
        seen: list[str] = []
        b.conn.set_trace_callback(seen.append)
        n = {
            "clear": lambda: s.clear("doomed"),
            "forget_all": lambda: s.forget_all("a"),
            "cleanup_expired": s.cleanup_expired,
        }[how]()
        b.conn.set_trace_callback(None)
        assert n == 300
        checks = {q for q in seen if q.startswith("SELECT id FROM memories WHERE id IN (")}
        assert checks
        for q in checks:
            plan = [r[3] for r in b.execute("EXPLAIN QUERY PLAN " + q)]
            assert plan == ["SEARCH memories USING INTEGER PRIMARY KEY (rowid=?)"], plan


def test_a_remember_returns_what_it_wrote_when_a_bulk_delete_takes_it_at_once(tmp_path):
    """Another process's clear of the namespace may run in the instant after a remember commits
    (benchmarks/stalls.py's probe met it as a KeyError): the call still returns what it wrote."""
    from contextlib import contextmanager

    path = tmp_path / "race.db"
    with MemoryStore(path) as s, MemoryStore(path) as other:
        b = s._core.backend
        inner = b.write

        @contextmanager
        def write():
            nested = b.in_transaction
            with inner() as c:
                yield c
            if not nested:
                other.clear("default")  # right after the commit, before anything else of the call

        b.write = write
        try:
            m = s.remember("a note another process clears at once", type="success", agent_id="a")
        finally:
            b.write = inner
        assert m.content == "a note another process clears at once" and m.agent_id == "a"
        assert other.stats()["memories"] == 0


def test_the_in_process_index_drops_rows_without_copying_and_compacts_when_it_needs_room():
    """A catch-up of thousands of deletes marks rows dead (no copy of the arrays inside a
    writer's call); the dead rows are compacted away when the arrays next need room."""
    import numpy as np

    rng = np.random.default_rng(7)
    vecs = rng.normal(size=(3000, 16)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ix = vi.VectorIndex(16)
    ix.put_many([(i + 1, "default", "a", "agent", "success", False, vecs[i]) for i in range(3000)])
    cap = ix.cap
    ix.remove_many(range(1, 2501))  # most of it, as a clear does
    assert len(ix) == 500 and ix._n == 3000 and ix.cap == cap  # dead, not copied
    hits = ix.search(vecs[2700], namespace="default", agent_id="a", k=600)
    assert hits[0][0] == 2701 and len(hits) == 500 and min(i for i, _ in hits) > 2500
    extra = rng.normal(size=(cap - 3000 + 1, 16)).astype(np.float32)
    extra /= np.linalg.norm(extra, axis=1, keepdims=True)
    ix.put_many([(10_000 + k, "default", "a", "agent", "success", False, v) for k, v in enumerate(extra)])
    assert ix._dead == 0 and ix.cap == cap and len(ix) == 500 + len(extra)  # compacted, not doubled
    hits = ix.search(vecs[2700], namespace="default", agent_id="a", k=5)
    assert hits[0][0] == 2701 and all(i > 2500 for i, _ in hits)


@pytest.mark.parametrize("search", ["memory", "vec0"])
def test_when_vec0_is_searched_a_large_bulk_delete_purges_its_orphans_at_once(tmp_path, monkeypatch, search):
    # past VEC0_PURGE_AT orphans every vec0 search would take the exact path until the weekly compact
    monkeypatch.setattr(sqlite_backend, "VEC0_PURGE_AT", 50)
    with MemoryStore(tmp_path / "p.db", settings=Settings(vector_search=search)) as s:
        kept = s.remember_many(_items(30, "a", seed=6))
        s.remember_many(_items(40, "b", seed=7))
        s.remember_many(_items(60, "c", seed=8))
        b = s._core.backend
        assert s.forget_all("b") == 40 and b.removed_vectors() == 40  # below the bound: left to compact
        assert s.forget_all("c") == 60
        assert b.removed_vectors() == (0 if search == "vec0" else 100)
        vec = s._core.embed([kept[0].content])[0]
        ref = b.vector_exact(vec, "m.agent_id = 'a'", [], 5)
        assert [i for i, _ in b.vector_knn(vec, namespace="default", k=5, agent_id="a")] == [i for i, _ in ref]


def _linked_store(path):
    """A store whose memories are referenced from every kind of child row (tags, history, merges,
    the access log, fix links, pattern members, sources, document chunks, consolidated_into) and
    from two tables of a later migration's kind (one cascading, one setting null)."""
    s = MemoryStore(path)
    b = s._core.backend
    a = s.remember_many(_items(40, "a", seed=40, tags=["x", "y"]))
    doomed = s.remember_many(_items(60, "b", seed=41, tags=["y", "z"]))
    s.remember(doomed[0].content, type="success", agent_id="b")  # a merge
    s.remember("keyed note, first version", type="decision", agent_id="b", key="k1")
    s.remember("keyed note, second version", type="decision", agent_id="b", key="k1")  # history
    for m in doomed[:5] + a[:5]:
        s.apply(m.id, helpful=True, agent_id=m.agent_id)  # access log
    s.learn_fix("ModuleNotFoundError: No module named 'yaml'", "pip install pyyaml", agent_id="b")
    doc = path.parent / "notes.md"
    doc.write_text("# Notes\n\nfirst section about caches\n\n## More\n\nsecond section about locks\n")
    s.add_document(doc, agent_id="b")
    with b.write() as c:
        for i in range(10):  # patterns and sources across the two agents, both directions
            c.execute(
                "INSERT INTO pattern_members(pattern_id, member_id, similarity, added_at) VALUES (?, ?, 0.9, 0)",
                (a[i].id, doomed[i].id),
            )
            c.execute(
                "INSERT INTO pattern_members(pattern_id, member_id, similarity, added_at) VALUES (?, ?, 0.9, 0)",
                (doomed[i + 10].id, a[i + 10].id),
            )
            c.execute(
                "INSERT INTO memory_sources(memory_id, source_id, kind, added_at) VALUES (?, ?, 'reflection', 0)",
                (a[i].id, doomed[i + 20].id),
            )
            c.execute("UPDATE memories SET consolidated_into = ? WHERE id = ?", (doomed[i + 30].id, a[i + 20].id))
        c.execute("CREATE TABLE extra_cascade (memory_id INTEGER REFERENCES memories(id) ON DELETE CASCADE)")
        c.execute("CREATE INDEX ix_extra_cascade ON extra_cascade(memory_id)")
        c.execute(
            "CREATE TABLE extra_null (id INTEGER PRIMARY KEY, memory_id INTEGER REFERENCES memories(id) ON DELETE SET NULL)"
        )
        c.execute("CREATE INDEX ix_extra_null ON extra_null(memory_id)")
        for m in doomed[:30] + a[:30]:
            c.execute("INSERT INTO extra_cascade(memory_id) VALUES (?)", (m.id,))
            c.execute("INSERT INTO extra_null(memory_id) VALUES (?)", (m.id,))
    b.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return s


def test_a_bulk_delete_does_what_every_foreign_key_to_memories_does_as_sqlite_would(tmp_path, monkeypatch):
    """On SQLite a bulk delete turns the foreign keys' actions off and does their work one statement
    per child table (read from the schema: a table a later migration adds is included): the store
    ends exactly as with SQLite's own actions, and no reference dangles."""
    import shutil

    from conftest import table_snapshot
    from harness_memory.jobs import batches

    with _linked_store(tmp_path / "src" / "l.db") as s:
        actions = batches.cascades(s._core.backend)
        assert any('"extra_cascade"' in q for q in actions) and any('"extra_null"' in q for q in actions)
    ends = {}
    for how in ("set-based", "sqlite's actions"):
        d = tmp_path / how
        d.mkdir()
        shutil.copyfile(tmp_path / "src" / "l.db", d / "l.db")
        if how == "sqlite's actions":
            monkeypatch.setattr(batches, "cascades", lambda backend: None)
        with MemoryStore(d / "l.db") as s:
            b = s._core.backend
            before = b.execute("SELECT COUNT(*) FROM memories WHERE agent_id = 'b'").fetchone()[0]
            assert s.forget_all("b") == before > 60
            assert b.execute("PRAGMA foreign_key_check").fetchall() == []
            assert b.execute("SELECT COUNT(*) FROM extra_cascade").fetchone()[0] == 30
            assert b.execute("SELECT COUNT(*) FROM extra_null WHERE memory_id IS NULL").fetchone()[0] == 30
            assert b.execute("SELECT COUNT(*) FROM memories WHERE consolidated_into IS NOT NULL").fetchone()[0] == 0
            assert b.execute("SELECT COUNT(*) FROM pattern_members").fetchone()[0] == 0
            ends[how] = table_snapshot(s)
    assert ends["set-based"] == ends["sqlite's actions"]


def test_foreign_key_actions_sqlite_must_run_itself_keep_the_bulk_delete_on_them(tmp_path):
    """An action other than CASCADE or SET NULL (here RESTRICT), or a child table that another table
    references in turn, is left to SQLite: a delete the schema refuses is still refused."""
    from harness_memory.jobs import batches

    with MemoryStore(tmp_path / "r.db") as s:
        b = s._core.backend
        kept = s.remember_many(_items(20, "a", seed=50))
        with b.write() as c:
            c.execute(
                "CREATE TABLE grand (id INTEGER PRIMARY KEY, memory_id INTEGER REFERENCES memories(id) ON DELETE CASCADE)"
            )
            c.execute("CREATE TABLE great (grand_id INTEGER REFERENCES grand(id) ON DELETE CASCADE)")
        assert batches.cascades(b) is None
        with b.write() as c:
            c.execute("DROP TABLE great")
            c.execute("CREATE TABLE holds (memory_id INTEGER REFERENCES memories(id) ON DELETE RESTRICT)")
            c.execute("INSERT INTO holds(memory_id) VALUES (?)", (kept[7].id,))
        assert batches.cascades(b) is None
        with pytest.raises(Exception, match="FOREIGN KEY"):
            s.forget_all("a")
        assert b.execute("SELECT COUNT(*) FROM memories WHERE id = ?", (kept[7].id,)).fetchone()[0] == 1


@pytest.mark.parametrize("fail_at", [1, 3])
def test_a_bulk_delete_stopped_by_an_error_leaves_the_connection_as_it_was(tmp_path, monkeypatch, fail_at):
    """The foreign keys and the automatic WAL checkpoint are off only for a batch's transaction:
    after a bulk delete, and after one that a failing batch stopped (its committed batches stay
    deleted), the connection enforces foreign keys and checkpoints as before."""
    with MemoryStore(tmp_path / "e.db") as s:
        s.remember_many(_items(400, "b", seed=60))
        b = s._core.backend
        b.execute("PRAGMA wal_autocheckpoint = 777")
        inner, calls = b.unindex_text, []

        def unindex(ids):
            calls.append(len(ids))
            if len(calls) == fail_at:
                raise RuntimeError("disk on fire")
            return inner(ids)

        monkeypatch.setattr(b, "unindex_text", unindex)
        with pytest.raises(RuntimeError):
            s.forget_all("b")
        assert b.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert b.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 777
        left = b.execute("SELECT COUNT(*) FROM memories").fetchone()[0]
        # the batches committed before the failing one stay deleted; the failing one rolled back whole
        assert left >= 400 - sum(calls[: fail_at - 1]) and (left < 400) == (fail_at > 1)
        monkeypatch.setattr(b, "unindex_text", inner)
        assert s.forget_all("b") == left
        assert b.execute("PRAGMA foreign_keys").fetchone()[0] == 1
        assert b.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 777


@pytest.mark.parametrize(
    ("every", "writer"),
    [(0.0, False), (1e9, False), (1e9, True)],
    ids=["checkpoint-each-batch", "checkpoint-at-the-end", "another-writer-between-batches"],
)
def test_batches_commit_without_wal_checkpoints_and_the_batcher_runs_them(tmp_path, monkeypatch, every, writer):
    """A batch's COMMIT runs no WAL checkpoint (SQLite's automatic one, here after every commit,
    copied the same index pages again after nearly every batch): the WAL grows batch after batch
    until the batcher checkpoints it itself, every CHECKPOINT_EVERY seconds of batches, and at the
    end (a WAL checkpointed completely restarts from its beginning at the next write). Another
    writer committing between the batches, whose own commits checkpoint after each one, copies none
    of the job's pages meanwhile (its call would pay for them): the batcher's read transaction pins
    the WAL between the batcher's own checkpoints."""
    import os

    from harness_memory.jobs import batches

    monkeypatch.setattr(batches, "CHECKPOINT_EVERY", every)
    monkeypatch.setattr(batches.Batcher, "record", lambda self, seconds: None)  # every batch its first size
    path = tmp_path / "w.db"
    with MemoryStore(path) as s:
        s.remember_many(_items(600, "b", seed=70))
        b = s._core.backend
        b.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        b.execute("PRAGMA wal_autocheckpoint = 1")
        sizes: list[int] = []
        copied: list[int] = []
        inner = batches.Batcher.transaction

        other = MemoryStore(path)
        other._core.backend.execute("PRAGMA wal_autocheckpoint = 1")  # it checkpoints after each of its commits

        @contextmanager
        def transaction(self, backend, **kw):
            with inner(self, backend, **kw) as c:
                yield c
            sizes.append(os.path.getsize(f"{path}-wal"))
            if writer:
                other.remember(f"written between two batches {len(sizes)}", type="success", agent_id="w")
                # what a checkpoint of the other writer may copy now: (busy, frames, frames copied)
                copied.append(other._core.backend.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()[2])

        monkeypatch.setattr(batches.Batcher, "transaction", transaction)
        try:
            assert s.forget_all("b") == 600
        finally:
            other.close()
        assert len(sizes) >= 10
        if every:
            assert sizes[-1] > 8 * sizes[0]  # no batch's commit checkpointed, nor the other writer's: the WAL only grew
        else:
            assert sizes[-1] < 4 * sizes[0]  # each batch found it checkpointed and started over
        if writer:
            assert copied and set(copied) == {0}, copied[:10]
        assert b.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1
    with MemoryStore(path) as other:  # the end of the delete checkpointed what its batches wrote
        busy, log, done = other._core.backend.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and log == done
