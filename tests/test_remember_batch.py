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
            # the '' row: the documents' lengths summed, their positions (BM25's mean document length)
            length = "SELECT SUM(array_length(u.positions, 1)) FROM memories_fts, unnest(doc) AS u"
            assert vocab.pop("") == b.execute(length).fetchone()[0] == 5 * 6  # zeta, k, batch, path, index, word
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


def _reinforced(store: MemoryStore, ns: str) -> tuple:
    b = store._core.backend
    rows = b.execute(
        "SELECT content, access_count, importance, context_tags, expires_at, archived, relevance_score, "
        "last_accessed, updated_at, decayed_at FROM memories WHERE namespace = ? ORDER BY id",
        (ns,),
    ).fetchall()
    rows = [(*r[:6], round(float(r[6]), 9), *r[7:]) for r in rows]
    tags = b.execute(
        "SELECT m.content, t.tag FROM memory_tags t JOIN memories m ON m.id = t.memory_id WHERE m.namespace = ? "
        "ORDER BY m.id, t.tag",
        (ns,),
    ).fetchall()
    merges = b.execute(
        "SELECT g.kind, g.similarity, g.merged_content FROM memory_merges g JOIN memories m ON m.id = g.memory_id "
        "WHERE m.namespace = ? ORDER BY g.merged_content, g.kind",
        (ns,),
    ).fetchall()
    log = b.execute(
        "SELECT a.access_type, a.outcome, COUNT(*) FROM memory_access_log a JOIN memories m ON m.id = a.memory_id "
        "WHERE m.namespace = ? GROUP BY a.access_type, a.outcome ORDER BY a.access_type, a.outcome",
        (ns,),
    ).fetchall()
    vec = store.recall("zeta stored memory", agent_id="a", namespace=ns, channels=["vector"], record=False)
    return (
        [tuple(r) for r in rows],
        [tuple(r) for r in tags],
        [(k, round(float(x), 6), c) for k, x, c in merges],
        [tuple(r) for r in log],
        [h.memory.content for h in vec],
    )


def test_duplicates_folded_together_have_the_outcome_of_one_remember_after_the_other(db, clock):
    """A batch folding several items into the same stored memories — archived, with a TTL, pinned,
    new tags past the cap, importance past 1 — leaves every row, tag, merge, access-log row and
    vector's visibility as the same items remembered one after the other."""
    from harness_memory import Settings

    settings = Settings(max_tags=4)
    with MemoryStore(db, clock=clock, settings=settings) as s:
        for ns in ("one", "batch"):
            base = {"type": "success", "agent_id": "a", "namespace": ns}
            old = s.remember("zeta: a stored memory, archived", tags=["x"], ttl=3600, importance=0.9, **base)
            s.archive(old.id)
            s.remember("zeta: a stored memory, kept forever", tags=["y"], **base)
            pinned = s.remember("zeta: a stored memory, pinned", **base)
            s.pin(pinned.id)
            s.remember("zeta: a stored memory that expires", ttl=3600, **base)
        clock.advance(86400 * 40)  # the stored rows' relevance has decayed (0.99 ** 40: 0.67)
        items = []
        for ns in ("one", "batch"):
            base = {"type": "success", "agent_id": "a", "namespace": ns}
            items.append(
                [
                    {**base, "content": "zeta: a stored memory, archived", "tags": ["p", "q"], "ttl": 7200},
                    {**base, "content": "zeta: a stored memory, kept forever", "tags": ["r"], "ttl": 60},
                    {**base, "content": "zeta: a stored memory, archived", "tags": ["s", "t", "u"], "importance": 1.0},
                    {**base, "content": "zeta: a stored memory, pinned", "session_id": "s1"},
                    {**base, "content": "zeta: a stored memory, archived!", "task_id": "T-1"},  # near
                    {**base, "content": "zeta: a stored memory, pinned", "tags": ["v"]},
                    {**base, "content": "zeta: a stored memory, kept forever"},  # a second boost of its relevance
                    {**base, "content": "zeta: a stored memory that expires", "ttl": 7200},  # expires later
                    {**base, "content": "zeta: something new beside them"},
                ]
            )
        for it in items[0]:
            s.remember(**it)
        s.remember_many(items[1])
        assert _reinforced(s, "batch") == _reinforced(s, "one")
        (row,) = s._core.backend.execute(
            "SELECT access_count, archived FROM memories WHERE namespace = 'batch' AND content LIKE '%archived'"
        ).fetchall()
        assert tuple(row) == (3, 0)
