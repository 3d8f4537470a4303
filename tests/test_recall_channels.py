"""Each recall channel's contribution is visible in a realistic store (hundreds of distractor memories
that share the query's words), so a missing index write or a dropped channel fails a test; the
filters, the visibility rules, the ordering and the access bookkeeping as documented (README,
docs/ranking.md)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from harness_memory import MemoryStore, Settings
from harness_memory.error_signatures import TemplateMiner

DAY = 86400.0
SERVICES = ["billing", "search", "auth", "payments", "gateway", "reports", "mailer", "scheduler"]


def distractors(n: int = 300) -> list[dict]:
    """Memories about failing deploys: every one matches 'deploy failed' by keyword."""
    return [
        {
            "content": f"deploy failed for the {SERVICES[i % 8]} service on node {i} after step {i % 13}",
            "type": "failure",
            "agent_id": "ops",
            "tags": [SERVICES[i % 8], f"node-{i}"],
        }
        for i in range(n)
    ]


@pytest.fixture
def crowded(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(extra_types=["discovery"])) as s:
        s.remember_many(distractors())
        yield s


def ids(hits):
    return [h.memory.id for h in hits]


def test_the_tag_channel_finds_a_memory_the_keywords_bury(crowded):
    s = crowded
    target = s.remember(
        "deploy failed: the pod was killed for using too much memory", type="failure", agent_id="ops", tags=["oom-kill"]
    )
    only_tags = s.recall("deploy failed", agent_id="ops", tags=["oom-kill"], channels={"tags"}, record=False)
    assert ids(only_tags) == [target.id]
    assert only_tags[0].breakdown.tags == 1.0 and only_tags[0].breakdown.keyword is None
    fused = s.recall("deploy failed", agent_id="ops", tags=["oom-kill"], limit=3, record=False)
    assert fused[0].memory.id == target.id


def test_the_tag_score_is_the_jaccard_overlap(crowded):
    s = crowded
    m = s.remember("a canary rollout stalled", type="failure", agent_id="ops", tags=["canary", "rollout", "k8s"])
    (hit,) = s.recall("x", agent_id="ops", tags=["canary", "k8s"], channels={"tags"}, record=False)
    assert hit.memory.id == m.id and hit.breakdown.tags == pytest.approx(2 / 3)
    hits = s.recall("x", agent_id="ops", tags=["canary", "billing"], channels={"tags"}, limit=50, record=False)
    by_id = {h.memory.id: h.breakdown.tags for h in hits}
    assert by_id[m.id] == pytest.approx(1 / 4)
    assert max(by_id.values()) == pytest.approx(1 / 3)  # a billing distractor: {billing, node-i} vs the query


def test_the_signature_channel_finds_the_task_and_the_error(crowded):
    s = crowded
    exact = s.remember(
        "the release job needs the signing key mounted", type="failure", agent_id="ops", task_signature="task:release"
    )
    longer = s.remember(
        "the release job on arm needs qemu", type="failure", agent_id="ops", task_signature="task:release:arm"
    )
    err = s.remember(
        "pin tenacity below 9 to fix the import",
        type="success",
        agent_id="ops",
        error="ModuleNotFoundError: No module named 'tenacity'",
    )
    hits = s.recall(
        "deploy failed", agent_id="ops", task_signature="task:release", channels={"signature"}, record=False
    )
    got = {h.memory.id: h.breakdown.signature for h in hits}
    assert got == {exact.id: 1.0, longer.id: 0.5}  # an exact task match, then a prefix
    assert ids(hits) == [exact.id, longer.id]
    hits = s.recall(
        "deploy failed",
        agent_id="ops",
        error="ModuleNotFoundError: No module named 'tenacity'",
        channels={"signature"},
        record=False,
    )
    assert ids(hits) == [err.id] and hits[0].breakdown.signature == 1.0
    both = s.recall(
        "x",
        agent_id="ops",
        task_signature="task:release",
        error="ModuleNotFoundError: No module named 'tenacity'",
        channels={"signature"},
        record=False,
    )
    got = {h.memory.id: h.breakdown.signature for h in both}
    assert got == {exact.id: 0.5, longer.id: 0.25, err.id: 0.5}  # the mean of the two parts


def test_a_signature_match_ranks_first_among_keyword_look_alikes(crowded):
    s = crowded
    target = s.remember(
        "deploy failed for the billing service: pin tenacity",
        type="success",
        agent_id="ops",
        error="ModuleNotFoundError: No module named 'tenacity'",
    )
    hits = s.recall(
        "deploy failed for the billing service",
        agent_id="ops",
        error="ModuleNotFoundError: No module named 'tenacity'",
        limit=5,
        record=False,
    )
    assert hits[0].memory.id == target.id and hits[0].breakdown.signature == 1.0
    assert all(h.breakdown.signature == 0.0 for h in hits[1:])


def test_the_keyword_channel_is_relative_to_the_best_hit(crowded):
    s = crowded
    target = s.remember("the flaky zookeeper quorum lost its leader", type="failure", agent_id="ops")
    hits = s.recall("zookeeper quorum leader", agent_id="ops", channels={"keyword"}, record=False)
    assert ids(hits) == [target.id]
    assert hits[0].breakdown.keyword == 1.0 and hits[0].breakdown.vector is None
    hits = s.recall("billing service step 12", agent_id="ops", channels={"keyword"}, limit=20, record=False)
    assert hits[0].breakdown.keyword == 1.0
    assert "billing" in hits[0].memory.content and "step 12" in hits[0].memory.content
    assert all(h.breakdown.keyword <= 1.0 for h in hits) and min(h.breakdown.keyword for h in hits) < 1.0


def test_the_vector_channel_alone_reports_only_cosines(crowded):
    s = crowded
    target = s.remember("zookeeper quorum lost its leader during the rolling restart", type="failure", agent_id="ops")
    hits = s.recall("zookeeper quorum lost its leader", agent_id="ops", channels={"vector"}, limit=5, record=False)
    assert hits[0].memory.id == target.id
    assert hits[0].breakdown.keyword is None and hits[0].breakdown.tags is None
    assert hits[0].breakdown.vector > max(h.breakdown.vector for h in hits[1:])


def test_scores_come_best_first_and_zero_matches_are_left_out(crowded):
    s = crowded
    hits = s.recall("deploy failed for the search service", agent_id="ops", limit=40, record=False)
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and len(hits) == 40
    assert all(h.score > 0 for h in hits)
    assert s.recall("quantum chromodynamics", agent_id="ops", channels={"keyword"}, record=False) == []


def test_equal_scores_put_the_newer_memory_first(db, clock):
    with MemoryStore(db, clock=clock) as s:
        a = s.remember("alpha beta gamma one", type="failure", agent_id="a", tags=["t"])
        b = s.remember("delta epsilon zeta two", type="failure", agent_id="a", tags=["t"])
        hits = s.recall("x", agent_id="a", tags=["t"], channels={"tags"}, record=False)
        assert hits[0].score == hits[1].score and ids(hits) == [b.id, a.id]


def test_filters_by_type_time_relevance_archive_and_thread(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(extra_types=["discovery"])) as s:
        old = s.remember("cache warmup slow on monday", type="failure", agent_id="a")
        clock.advance(10 * DAY)
        mid = s.remember("cache warmup slow after the upgrade", type="discovery", agent_id="a")
        clock.advance(10 * DAY)
        new = s.remember("cache warmup slow again", type="failure", agent_id="a")
        q = dict(agent_id="a", record=False, limit=10)
        assert set(ids(s.recall("cache warmup slow", types=["failure"], **q))) == {old.id, new.id}
        t_mid = mid.created_at
        assert set(ids(s.recall("cache warmup slow", since=t_mid, **q))) == {mid.id, new.id}
        assert set(ids(s.recall("cache warmup slow", until=t_mid, **q))) == {old.id, mid.id}
        as_float = t_mid.timestamp()
        assert set(ids(s.recall("cache warmup slow", since=as_float, until=as_float, **q))) == {mid.id}
        assert set(ids(s.recall("cache warmup slow", since=datetime(2000, 1, 1, tzinfo=UTC), **q))) == {
            old.id,
            mid.id,
            new.id,
        }
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET relevance_score = 0.2 WHERE id = ?", (old.id,))
        assert set(ids(s.recall("cache warmup slow", min_relevance=0.5, **q))) == {mid.id, new.id}
        s.archive(new.id, agent_id="a")
        assert new.id not in ids(s.recall("cache warmup slow", **q))
        assert new.id in ids(s.recall("cache warmup slow", include_archived=True, **q))
        ep = s.remember("cache warmup slow in this thread", type="episode", agent_id="a", thread_id="th-1")
        assert ids(s.recall("cache warmup slow", thread_id="th-1", **q)) == [ep.id]


def test_an_agent_sees_its_own_and_global_memories_never_another_agents_private_ones(db, clock):
    with MemoryStore(db, clock=clock) as s:
        mine = s.remember("redis eviction policy must be allkeys-lru", type="decision", agent_id="a")
        shared = s.remember("redis eviction policy is set per cluster", type="decision", agent_id="b", scope="global")
        private = s.remember("redis eviction policy secret plan", type="decision", agent_id="b")
        q = dict(record=False, limit=10)
        assert set(ids(s.recall("redis eviction policy", agent_id="a", **q))) == {mine.id, shared.id}
        assert set(ids(s.recall("redis eviction policy", agent_id="a", include_global=False, **q))) == {mine.id}
        assert private.id in ids(s.recall("redis eviction policy", agent_id="b", **q))
        assert set(ids(s.recall("redis eviction policy", agent_id="a", namespace="other", **q))) == set()


def test_an_expired_memory_is_not_recalled(db, clock):
    with MemoryStore(db, clock=clock) as s:
        m = s.remember("temporary proxy for the outage", type="context", agent_id="a", ttl=3600)
        assert ids(s.recall("temporary proxy outage", agent_id="a", record=False)) == [m.id]
        clock.advance(3601)
        assert s.recall("temporary proxy outage", agent_id="a", record=False) == []


def test_a_recall_counts_the_access_and_boosts_relevance_unless_told_not_to(db, clock):
    with MemoryStore(db, clock=clock, settings=Settings(recall_boost=0.1)) as s:
        m = s.remember("gradle daemon runs out of heap", type="failure", agent_id="a")
        with s._core.backend.write() as c:
            c.execute("UPDATE memories SET relevance_score = 0.5 WHERE id = ?", (m.id,))
        s.recall("gradle daemon heap", agent_id="a", record=False)
        got = s.get(m.id)
        assert got.access_count == 0 and got.last_accessed is None and got.relevance_score == 0.5
        clock.advance(60)
        (hit,) = s.recall("gradle daemon heap", agent_id="a", session_id="s1", task_id="t1")
        assert hit.memory.access_count == 1 and hit.memory.relevance_score == pytest.approx(0.6)
        s.close()  # writes any access bookkeeping still pending
    with MemoryStore(db, clock=clock, settings=Settings(recall_boost=0.1)) as s:
        got = s.get(m.id)
        assert got.access_count == 1 and got.relevance_score == pytest.approx(0.6, abs=1e-3)
        assert got.last_accessed.timestamp() == pytest.approx(clock())
        rows = s._core.backend.execute(
            "SELECT access_type, agent_id, session_id, task_id, score FROM memory_access_log WHERE memory_id = ?",
            (m.id,),
        ).fetchall()
        assert [r[:4] for r in rows] == [("query", "a", "s1", "t1")] and 0 < rows[0][4] <= 1


def test_limit_caps_the_hits(crowded):
    assert len(crowded.recall("deploy failed", agent_id="ops", limit=7, record=False)) == 7
    assert len(crowded.recall("deploy failed", agent_id="ops", limit=120, record=False)) == 120


def test_every_hits_vector_score_is_its_cosine_to_the_query_even_when_found_by_another_channel(crowded):
    import numpy as np

    s = crowded
    query = "deploy failed for the payments service on node 17"
    hits = s.recall(query, agent_id="ops", limit=60, record=False)
    vecs = s.embedder.embed_batch([query] + [h.memory.content for h in hits])
    vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
    cos = vecs[1:] @ vecs[0]
    for h, c in zip(hits, cos):
        assert h.breakdown.vector == pytest.approx(max(0.0, float(c)), abs=1e-4)
    assert len({round(h.breakdown.vector, 6) for h in hits}) > 10  # not a constant filled in


def test_a_recall_while_another_writer_holds_the_lock_keeps_its_bookkeeping_for_later(tmp_path, clock):
    path = tmp_path / "shared.db"
    with MemoryStore(path, clock=clock) as s, MemoryStore(path, clock=clock) as other:
        kept = s.remember("gradle daemon runs out of heap", type="failure", agent_id="a")
        gone = s.remember("gradle daemon heap dump fills the disk", type="failure", agent_id="a")
        with other._core.backend.write():  # another writer holds the lock during the recall
            hits = s.recall("gradle daemon heap", agent_id="a")
            assert {h.memory.id for h in hits} == {kept.id, gone.id}
            assert all(h.memory.access_count == 1 for h in hits)  # what the caller sees at once
        assert other.get(kept.id).access_count == 0  # not written yet: the lock was busy
        with other._core.backend.write() as c:  # deleted before the pending bookkeeping is written
            c.execute("DELETE FROM memories WHERE id = ?", (gone.id,))
        s.close()  # writes what is pending
        assert other.get(kept.id).access_count == 1
        rows = other._core.backend.execute(
            "SELECT memory_id FROM memory_access_log WHERE access_type = 'query'"
        ).fetchall()
        assert [r[0] for r in rows] == [kept.id]  # no log row for the deleted memory


def test_a_query_whose_words_match_nothing_still_finds_by_tags_with_a_zero_keyword_score(crowded):
    s = crowded
    target = s.remember("pods evicted under memory pressure", type="failure", agent_id="ops", tags=["eviction"])
    hits = s.recall("zyxwvut qponml", agent_id="ops", tags=["eviction"], record=False)
    assert [h.memory.id for h in hits][:1] == [target.id]
    assert hits[0].breakdown.keyword == 0.0 and hits[0].breakdown.tags == 1.0


def test_a_freshly_opened_store_scores_the_same_cosines(tmp_path, clock):
    import numpy as np

    path = tmp_path / "reopened.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many(distractors(120))
    with MemoryStore(path, clock=clock) as s:  # no write in this process: its vector index is not loaded
        query = "deploy failed for the mailer service on node 3"
        hits = s.recall(query, agent_id="ops", tags=["mailer"], limit=30, record=False)
        vecs = s.embedder.embed_batch([query] + [h.memory.content for h in hits])
        vecs = vecs / np.linalg.norm(vecs, axis=1, keepdims=True)
        for h, c in zip(hits, vecs[1:] @ vecs[0]):
            assert h.breakdown.vector == pytest.approx(max(0.0, float(c)), abs=1e-4)
        assert "mailer" in hits[0].memory.content and len({round(h.breakdown.vector, 6) for h in hits}) > 5


def test_the_access_bookkeeping_reaches_other_connections_while_the_store_is_open(tmp_path, clock):
    path = tmp_path / "shared.db"
    with MemoryStore(path, clock=clock) as s, MemoryStore(path, clock=clock) as other:
        m = s.remember("gradle daemon runs out of heap", type="failure", agent_id="a")
        s.recall("gradle daemon heap", agent_id="a", task_id="t-9")
        assert s._core.access.wait_written()  # the store's access thread, with no further call
        assert other.get(m.id).access_count == 1  # seen by another connection before this store closes
        rows = other._core.backend.execute(
            "SELECT access_type, task_id, duration_ms FROM memory_access_log WHERE memory_id = ?", (m.id,)
        ).fetchall()
        assert [(r[0], r[1]) for r in rows] == [("query", "t-9")] and rows[0][2] >= 0


def test_a_query_with_no_searchable_words_on_the_keyword_channel_is_an_empty_list(crowded):
    for record in (False, True):
        assert crowded.recall("?! -- ...", agent_id="ops", channels={"keyword"}, record=record) == []


def test_an_error_recalls_the_memories_stored_under_every_signature_linked_to_it(store, monkeypatch):
    monkeypatch.setattr(TemplateMiner, "EVIDENCE", 2)  # generalise on the first difference (method 24 waits for 4)
    t2_error = "deploy blocked by lock red green blue black on main"
    store.error_signature("deploy blocked by lock alpha beta gamma delta on main")
    under_t2 = store.remember(
        "stale deploy locks: clear them with lockctl", type="success", agent_id="a", error=t2_error
    )
    store.error_signature("deploy blocked by lock kappa lambda mu delta on main")
    g = store.error_signature("deploy blocked by lock kappa lambda mu sigma on main")  # now subsumes t2's template
    under_g = store.remember(
        "the lock daemon restarts clear the locks",
        type="success",
        agent_id="a",
        error="deploy blocked by lock one two three four on main",
    )
    assert under_g.error_signature == g.id != under_t2.error_signature
    hits = store.recall("", agent_id="a", error=t2_error, channels={"signature"}, record=False)
    assert {h.memory.id: h.breakdown.signature for h in hits} == {under_t2.id: 1.0, under_g.id: 1.0}


def test_a_hit_found_only_by_its_tag_still_scores_its_cosine(crowded):
    import numpy as np

    s = crowded
    query = "deploy failed for the payments service on node 17"
    target = s.remember("deploy quokka zebra marmot", type="failure", agent_id="ops", tags=["odd-one"])
    hits = s.recall(query, agent_id="ops", tags=["odd-one"], limit=50, record=False)  # 200 vector candidates of 301
    (hit,) = [h for h in hits if h.memory.id == target.id]
    q, t = s.embedder.embed_batch([query, target.content])
    cos = float(q @ t / np.linalg.norm(q) / np.linalg.norm(t))
    assert cos > 0.01 and hit.breakdown.vector == pytest.approx(cos, abs=1e-4)
    assert hit.breakdown.tags == 1.0


def test_an_older_memory_scores_its_recency_and_ranks_below_a_newer_twin(db, clock):
    with MemoryStore(db, clock=clock) as s:
        old = s.remember("the nightly backup job fails on the full disk", type="failure", agent_id="a", tags=["b"])
        clock.advance(30 * DAY)
        new = s.remember("the nightly backup job fails when the disk is full", type="failure", agent_id="a", tags=["b"])
        hits = s.recall("x", agent_id="a", tags=["b"], channels={"tags"}, record=False)
        assert ids(hits) == [new.id, old.id]
        by = {h.memory.id: h for h in hits}
        half_life = s.settings.ranking.recency_half_life_days
        assert by[new.id].breakdown.recency == pytest.approx(1.0)
        assert by[old.id].breakdown.recency == pytest.approx(0.5 ** (30 / half_life), rel=1e-3)
        assert by[old.id].score < by[new.id].score
        for h in hits:
            assert h.score == pytest.approx(h.breakdown.score)


def test_a_process_moves_from_the_exact_sql_path_to_the_index_once_it_spent_its_budget(tmp_path, clock, monkeypatch):
    from harness_memory import vector_index

    path = tmp_path / "budget.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many(distractors(60))
    query = "deploy failed for the auth service on node 9"
    with MemoryStore(path, clock=clock) as s:  # the default budget: a few recalls stay on the SQL path
        first = s.recall(query, agent_id="ops", limit=10, record=False)
        s.recall(query, agent_id="ops", limit=10, record=False)
        assert not s._core.index.loaded
    monkeypatch.setattr(vector_index, "SQL_EXACT_BUDGET_S", 0.0)
    with MemoryStore(path, clock=clock) as s:
        assert s.recall(query, agent_id="ops", limit=10, record=False) == first
        assert not s._core.index.loaded  # the first recall took the SQL path
        again = s.recall(query, agent_id="ops", limit=10, record=False)
        assert s._core.index.loaded  # the time it spent there was over the budget: the index now
        assert [(h.memory.id, round(h.breakdown.vector, 4)) for h in again] == [
            (h.memory.id, round(h.breakdown.vector, 4)) for h in first
        ]


@pytest.mark.parametrize(("memories", "loads_index"), [(9, False), (10, True)])
def test_the_exact_sql_path_serves_stores_below_its_size_bound(tmp_path, clock, monkeypatch, memories, loads_index):
    from harness_memory import vector_index

    monkeypatch.setattr(vector_index, "SQL_EXACT_MAX_ROWS", 10)
    path = tmp_path / "bound.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many(distractors(memories))
    with MemoryStore(path, clock=clock) as s:
        hits = s.recall("deploy failed for the auth service", agent_id="ops", record=False)
        assert len(hits) == memories
        assert s._core.index.loaded is loads_index


def test_a_recall_that_loaded_a_large_index_persists_its_snapshot(tmp_path, clock, monkeypatch):
    from harness_memory import vector_index

    monkeypatch.setattr(vector_index, "SQL_EXACT_MAX_ROWS", 10)
    monkeypatch.setattr(vector_index, "SNAPSHOT_MIN_ROWS", 50)
    path = tmp_path / "snap.db"
    with MemoryStore(path, clock=clock) as s:
        s.remember_many(distractors(80))
    vector_index.sidecar_path(path).unlink(missing_ok=True)
    with MemoryStore(path, clock=clock) as s:
        s.recall("deploy failed for the auth service", agent_id="ops", record=False)
        assert s._core.index.last_load == "database"
        assert vector_index.sidecar_path(path).exists()  # written right after the recall, not at close
    with MemoryStore(path, clock=clock) as s:
        s.recall("deploy failed for the auth service", agent_id="ops", record=False)
        assert s._core.index.last_load == "snapshot"


@pytest.fixture
def held_bookkeeping(monkeypatch):
    """The store's access writer keeps a recall's rows pending until close (its thread asleep)."""
    from harness_memory import access_writer

    monkeypatch.setattr(access_writer, "FLUSH_INTERVAL", 3600.0)


def _busy_recall(s, other, query):
    """A recall while another writer holds the lock: its bookkeeping stays pending."""
    with other._core.backend.write():
        return s.recall(query, agent_id="a")


def _delete(store, mid):
    with store._core.backend.write() as c:
        c.execute("DELETE FROM memories WHERE id = ?", (mid,))


def test_a_recall_whose_hits_were_all_deleted_before_its_bookkeeping_logs_nothing(tmp_path, clock, held_bookkeeping):
    path = tmp_path / "shared.db"
    with MemoryStore(path, clock=clock) as s, MemoryStore(path, clock=clock) as other:
        a = s.remember("gradle daemon runs out of heap", type="failure", agent_id="a")
        b = s.remember("gradle daemon heap dump fills the disk", type="failure", agent_id="a")
        assert {h.memory.id for h in _busy_recall(s, other, "gradle daemon heap")} == {a.id, b.id}
        _delete(other, a.id)
        _delete(other, b.id)
        s.close()
        assert other._core.backend.execute("SELECT COUNT(*) FROM memory_access_log").fetchone()[0] == 0


@pytest.mark.parametrize("deleted", ["top", "second"])
def test_the_recall_latency_stays_with_the_top_hit_when_another_hit_is_deleted(
    tmp_path, clock, deleted, held_bookkeeping
):
    path = tmp_path / "shared.db"
    with MemoryStore(path, clock=clock) as s, MemoryStore(path, clock=clock) as other:
        s.remember("gradle daemon runs out of heap", type="failure", agent_id="a")
        s.remember("the gradle daemon heap dump fills the disk quickly", type="failure", agent_id="a")
        top, second = (h.memory.id for h in _busy_recall(s, other, "gradle daemon runs out of heap"))
        _delete(other, top if deleted == "top" else second)
        s.close()
        rows = other._core.backend.execute(
            "SELECT memory_id, duration_ms FROM memory_access_log WHERE access_type = 'query'"
        ).fetchall()
        latency = other._core.backend.execute("SELECT top_memory_id FROM v_recall_latency").fetchall()
        if deleted == "second":
            assert [r[0] for r in rows] == [top] and rows[0][1] is not None and [r[0] for r in latency] == [top]
        else:  # the surviving row is not the recall's top hit: it carries no latency
            assert [tuple(r) for r in rows] == [(second, None)] and latency == []


def test_a_recall_ranks_fetches_and_assesses_in_one_snapshot(tmp_path, clock, monkeypatch):
    """A memory another connection deletes while a recall is ranking is still returned, with the row
    it was scored on: the scoring rows, the fetch of the hits and their confidence are read in the
    recall's one snapshot (a later read used to drop the hit silently)."""
    from harness_memory import recall as recall_module

    path = tmp_path / "snap.db"
    with MemoryStore(path, clock=clock) as s, MemoryStore(path, clock=clock) as other:
        s.remember_many(distractors(120))
        target = s.remember("gradle daemon runs out of heap on the billing node", type="failure", agent_id="ops")
        scoring_rows = recall_module._scoring_rows

        def delete_meanwhile(core, cands, where, params):
            rows = scoring_rows(core, cands, where, params)
            other.forget(target.id)  # committed by another connection between the scoring and the fetch
            return rows

        monkeypatch.setattr(recall_module, "_scoring_rows", delete_meanwhile)
        hits = s.recall("gradle daemon heap billing", agent_id="ops", limit=5, record=False)
        assert ids(hits)[:1] == [target.id] and hits[0].memory.content == target.content
        monkeypatch.setattr(recall_module, "_scoring_rows", scoring_rows)
        assert target.id not in ids(s.recall("gradle daemon heap billing", agent_id="ops", limit=5, record=False))
