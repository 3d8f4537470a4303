"""remember_many writes a batch set-wise (issue 10: one statement per table on PostgreSQL) with the
outcome of remembering the items one after the other: exact and near duplicates inside the batch
and against stored rows, keyed updates, a thread's events and fix links — on every backend."""

from __future__ import annotations

from harness_memory import MemoryStore

ERROR = "ModuleNotFoundError: No module named 'tenacity'"


def _items(ns: str) -> list[dict]:
    base = {"type": "success", "agent_id": "a", "namespace": ns}
    return [
        {**base, "content": "alpha: the build fails when the cache is cold", "tags": ["ci"]},
        {**base, "content": "alpha: the build fails when the cache is cold", "tags": ["cache"]},  # exact, in batch
        {**base, "content": "alpha: the build fails when the cache is cold!"},  # near, in batch
        {**base, "content": "beta: the flaky network test needs a retry", "key": "k1"},
        {**base, "content": "beta: the flaky network test needs two retries", "key": "k1"},  # keyed update
        {**base, "content": "delta: stored before the batch"},  # exact, against a stored row
        {**base, "content": "delta: stored before the batch!"},  # near, against a stored row
        {**base, "content": "alpha: the build fails when the cache is cold", "agent_id": "b"},  # another agent
        {**base, "content": "pin tenacity in the lockfile", "error": ERROR},  # a fix link
        {**base, "content": "pin tenacity in the lockfile"},  # exact duplicate of the linked one
        {**base, "content": "gamma: an event of a thread", "type": "episode", "thread_id": "t1"},
        {**base, "content": "gamma: an event of a thread", "type": "episode", "thread_id": "t1"},  # kept twice
        {**base, "content": "epsilon: a new memory after the others"},
        {**base, "content": "epsilon: a new memory after the others", "scope": "global"},  # other scope
    ]


def _outcome(store: MemoryStore, ns: str, ids: list[int]) -> tuple:
    first = {}
    groups = [first.setdefault(i, k) for k, i in enumerate(ids)]
    b = store._core.backend
    rows = b.execute(
        "SELECT content, access_count, importance, context_tags, key, version, memory_type, agent_id, scope "
        "FROM memories WHERE namespace = ? ORDER BY id",
        (ns,),
    ).fetchall()
    merges = b.execute(
        "SELECT g.kind, COUNT(*) FROM memory_merges g JOIN memories m ON m.id = g.memory_id "
        "WHERE m.namespace = ? GROUP BY g.kind ORDER BY g.kind",
        (ns,),
    ).fetchall()
    links = b.execute(
        "SELECT COUNT(*) FROM fix_links f JOIN memories m ON m.id = f.memory_id WHERE m.namespace = ?", (ns,)
    ).fetchone()[0]
    embedded = b.execute(
        "SELECT COUNT(*) FROM memories m WHERE m.namespace = ? AND m.embedding_pending = 0", (ns,)
    ).fetchone()[0]
    return groups, [tuple(r) for r in rows], [tuple(r) for r in merges], links, embedded


def test_a_batch_has_the_outcome_of_one_remember_after_the_other(db):
    with MemoryStore(db) as s:
        for ns in ("one", "batch"):
            s.remember("delta: stored before the batch", type="success", agent_id="a", namespace=ns)
        one = [s.remember(**it).id for it in _items("one")]
        batch = [m.id for m in s.remember_many(_items("batch"))]
        assert _outcome(s, "batch", batch) == _outcome(s, "one", one)
        # the batch's new rows are searchable through both channels
        hits = s.recall("epsilon new memory", agent_id="a", namespace="batch")
        assert "epsilon: a new memory after the others" in [h.memory.content for h in hits]
        vec = s.recall("epsilon new memory", agent_id="a", namespace="batch", channels=["vector"])
        assert vec and vec[0].memory.content.startswith("epsilon")


def test_a_batch_of_new_memories_keeps_the_keyword_vocabulary(db):
    with MemoryStore(db) as s:
        s.remember_many(
            [
                {"content": f"zeta {k}: the batch path indexes words", "type": "success", "agent_id": "a"}
                for k in range(5)
            ]
        )
        assert s.recall("batch path indexes", agent_id="a", channels=["keyword"])
        if s._core.backend.dialect == "postgresql":  # the vocabulary equals a recount of the tsvector rows
            b = s._core.backend
            vocab = dict(b.execute("SELECT term, docs FROM memories_fts_vocab WHERE docs > 0").fetchall())
            recount = dict(b.execute("SELECT word, ndoc FROM ts_stat('SELECT doc FROM memories_fts')").fetchall())
            assert vocab == recount


def test_a_large_batch_has_the_same_outcome(db, monkeypatch):
    """Batches large enough for PostgreSQL's COPY paths (rows, tags and vectors copied, the
    near-duplicate searches in one statement over the staged vectors; here every batch takes them)
    decide as one remember after the other, namespace by namespace."""
    if isinstance(db, str):
        from harness_memory import postgres_backend

        monkeypatch.setattr(postgres_backend, "COPY_ROWS", 1)
    with MemoryStore(db) as s:
        spaces = [(f"one-{n}", f"batch-{n}") for n in range(4)]
        for one, batch in spaces:
            for ns in (one, batch):
                s.remember("delta: stored before the batch", type="success", agent_id="a", namespace=ns)
        ones = {one: [s.remember(**it).id for it in _items(one)] for one, _ in spaces}
        top = max(max(v) for v in ones.values())
        items = [it for _, batch in spaces for it in _items(batch)]
        ids = [m.id for m in s.remember_many(items)]
        new = [i for i in dict.fromkeys(ids) if i > top]
        assert new == sorted(new)  # new rows take ids in the items' order
        size = len(items) // len(spaces)
        for n, (one, batch) in enumerate(spaces):
            assert _outcome(s, batch, ids[n * size : (n + 1) * size]) == _outcome(s, one, ones[one])
        hits = s.recall("epsilon new memory", agent_id="a", namespace="batch-3", channels=["vector"])
        assert hits and hits[0].memory.content.startswith("epsilon")
        assert s.recall("batch cache cold", agent_id="a", namespace="batch-2", channels=["keyword"])


def test_exact_duplicates_of_stored_rows_are_not_searched_for_neighbours(db):
    """An item whose content a stored row of its group already holds is reinforced as an exact
    duplicate whatever its neighbours, so the batch's near-duplicate searches leave it out."""
    with MemoryStore(db) as s:
        old = [{"content": f"eta {k}: stored before the batch", "type": "success", "agent_id": "a"} for k in range(40)]
        first = [m.id for m in s.remember_many(old)]
        backend = s._core.backend
        searched: list[int] = []
        orig = backend.vector_knn_many

        def counting(queries, k, **kw):
            searched.append(len(queries))
            return orig(queries, k, **kw)

        backend.vector_knn_many = counting
        new = [{"content": f"theta {k}: new in the batch", "type": "success", "agent_id": "a"} for k in range(2)]
        again = [m.id for m in s.remember_many(old + new)]
        assert again[:40] == first
        assert len(set(again[40:]) - set(first)) == 2
        if s._core.index is None:  # PostgreSQL: the database's own searches, for the two new items only
            assert searched == [2]
