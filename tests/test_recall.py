from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.ranking import score, usefulness
from harness_memory.settings import RankingWeights
from harness_memory.vector_index import VectorIndex


def seed(store):
    ids = {}
    ids["vpn"] = store.remember(
        "Deploys to staging fail unless the VPN tunnel is up; start it with vpnctl up",
        type="failure",
        agent_id="deployer",
        tags=["deploy", "network"],
    ).id
    ids["lock"] = store.remember(
        "npm ci fails when package-lock.json is stale; regenerate the lockfile",
        type="success",
        agent_id="builder",
        scope="global",
        tags=["npm", "build"],
    ).id
    ids["secret"] = store.remember(
        "builder private note: the signing key lives in the vault path ci/sign",
        type="decision",
        agent_id="builder",
        tags=["signing"],
    ).id
    ids["flaky"] = store.remember(
        "Flaky webhook tests: replace sleep with a fake clock",
        type="success",
        agent_id="tester",
        scope="global",
        tags=["tests"],
    ).id
    return ids


def test_recall_ranks_the_relevant_memory_first_and_explains(store):
    ids = seed(store)
    hits = store.recall("why does npm ci fail with a stale lockfile", agent_id="deployer")
    assert hits[0].memory.id == ids["lock"]
    ex = hits[0].explain()
    for k in ("vector", "keyword", "tags", "relevance", "recency", "usefulness", "match", "score", "weights"):
        assert k in ex
    assert ex["keyword"] == 1.0 and ex["vector"] > 0 and ex["tags"] is None
    assert 0 < hits[0].score <= 1
    assert hits == sorted(hits, key=lambda h: -h.score)


def test_scope_isolation(store):
    ids = seed(store)
    seen_by_deployer = {h.memory.id for h in store.recall("signing key vault note", agent_id="deployer", limit=50)}
    assert ids["secret"] not in seen_by_deployer
    assert ids["secret"] in {h.memory.id for h in store.recall("signing key vault", agent_id="builder")}
    # no agent: global memories only
    anon = {h.memory.id for h in store.recall("deploy VPN lockfile webhook signing", limit=50)}
    assert anon <= {ids["lock"], ids["flaky"]}
    own_only = {h.memory.id for h in store.recall("npm lockfile", agent_id="deployer", include_global=False)}
    assert ids["lock"] not in own_only
    with pytest.raises(LookupError):
        store.get(ids["secret"], agent_id="deployer")


def test_filters_types_tags_time_relevance(store, clock):
    ids = seed(store)
    clock.advance(3600)
    late = store.remember("npm audit reports are noisy; pin the advisory db", type="decision", agent_id="deployer").id
    q = "npm lockfile audit"
    assert {h.memory.type for h in store.recall(q, agent_id="deployer", types=["decision"])} == {"decision"}
    assert {h.memory.id for h in store.recall(q, agent_id="deployer", since=clock.now - 10)} == {late}
    assert late not in {h.memory.id for h in store.recall(q, agent_id="deployer", until=clock.now - 10)}
    tagged = store.recall("anything at all", agent_id="tester", tags=["tests"])
    assert tagged[0].memory.id == ids["flaky"] and tagged[0].breakdown.tags > 0
    store._core.backend.execute("UPDATE memories SET relevance_score = 0.1 WHERE id = ?", (ids["lock"],))
    assert ids["lock"] not in {h.memory.id for h in store.recall(q, agent_id="deployer", min_relevance=0.5)}


def test_signature_channel(store):
    a = store.remember(
        "fix: pin urllib3 below 2",
        type="success",
        agent_id="a",
        task_signature="deps:python:http",
        error="ImportError: cannot import name 'X' from 'urllib3' (/usr/lib/python3/urllib3/__init__.py)",
    )
    hits = store.recall(
        "", agent_id="a", error="ImportError: cannot import name 'Y' from 'urllib3' (/venv/urllib3/__init__.py)"
    )
    assert [h.memory.id for h in hits] == [a.id] and hits[0].breakdown.signature == 1.0
    hits = store.recall("", agent_id="a", task_signature="deps:python")
    assert hits[0].memory.id == a.id and hits[0].breakdown.signature == 0.5


def test_recall_records_access_and_boost(store):
    ids = seed(store)
    store._core.backend.execute("UPDATE memories SET relevance_score = 0.5")
    hits = store.recall("stale lockfile", agent_id="builder", session_id="s9", task_id="t9")
    top = hits[0].memory
    assert top.access_count == 1 and top.last_accessed is not None
    assert store.get(top.id).relevance_score == pytest.approx(0.5 + store.settings.recall_boost)
    log = store._core.backend.execute(
        "SELECT memory_id, agent_id, session_id, task_id, access_type FROM memory_access_log WHERE access_type='query'"
    ).fetchall()
    assert (ids["lock"], "builder", "s9", "t9", "query") in log
    store.recall("stale lockfile", agent_id="builder", record=False)
    assert store.get(top.id).access_count == 1


def test_apply_updates_usefulness_and_ranking(store):
    a = store.remember("restart the flaky runner", type="success", agent_id="a")
    b = store.remember("restart the flaky worker", type="success", agent_id="a")
    fresh = store.recall("restart flaky", agent_id="a", channels={"keyword"}, record=False)
    assert fresh[0].breakdown.usefulness == 0.5  # never applied: the prior, not a failure
    for _ in range(3):
        store.apply(a.id, helpful=False, agent_id="a", outcome="still failing")
    m = store.apply(b.id, helpful=True, agent_id="a")
    assert (m.times_applied, m.times_successful, m.success_rate) == (1, 1, 1.0)
    assert store.get(a.id).success_rate == 0.0 and store.get(a.id).times_applied == 3
    hits = store.recall("restart flaky", agent_id="a", channels={"keyword"})
    assert hits[0].memory.id == b.id
    with pytest.raises(LookupError):
        store.apply(a.id, helpful=True, agent_id="intruder")
    with pytest.raises(InvalidInputError):
        store.apply(a.id, helpful="yes")
    with pytest.raises(LookupError):
        store.apply(99999, helpful=True)


@pytest.mark.parametrize(
    "bad",
    [
        dict(query=5),
        dict(limit=0),
        dict(limit=10**9),
        dict(types=["bogus"]),
        dict(tags="x"),
        dict(min_relevance=2),
        dict(since="yesterday"),
        dict(channels={"magic"}),
        dict(query="   "),
        dict(include_global="no"),
    ],
)
def test_recall_bad_input(store, bad):
    args = dict(query="anything", agent_id="a")
    args.update(bad)
    with pytest.raises(InvalidInputError):
        store.recall(args.pop("query"), **args)


def test_vec0_and_memory_index_agree(tmp_path):
    texts = [f"memory about topic {i % 13} with detail {i} and word{i % 7}" for i in range(300)]
    results = {}
    for mode in ("memory", "vec0"):
        with MemoryStore(tmp_path / f"{mode}.db", settings=Settings(vector_search=mode)) as s:
            s.remember_many(
                [
                    {
                        "content": t,
                        "type": "success",
                        "agent_id": f"a{i % 3}",
                        "scope": "global" if i % 5 == 0 else "agent",
                    }
                    for i, t in enumerate(texts)
                ]
            )
            results[mode] = [
                [h.memory.content for h in s.recall(q, agent_id="a1", channels={"vector"}, limit=10, record=False)]
                for q in ("topic 3 detail", "word5 detail 77", "memory about topic 12")
            ]
    assert results["memory"] == results["vec0"]


def test_vector_index_matches_brute_force_and_follows_other_writers(tmp_path):
    rng = np.random.default_rng(0)
    with MemoryStore(tmp_path / "v.db") as s1, MemoryStore(tmp_path / "v.db") as s2:
        s1.remember_many(
            [
                {
                    "content": f"note {i} " + " ".join(rng.choice(list("abcdefghij"), 5)),
                    "type": "success",
                    "agent_id": "a",
                }
                for i in range(200)
            ]
        )
        q = s2._core.embed(["note 5 a b c"])[0]
        s2._core.index.sync(s2._core.backend)
        got = s2._core.index.search(q, namespace="default", agent_id="a", k=5)
        vecs = s2._core.backend.get_vectors(list(range(1, 201)))
        brute = sorted(((i, float(v @ q)) for i, v in vecs.items()), key=lambda x: -x[1])[:5]
        assert [i for i, _ in got] == [i for i, _ in brute]
        victim = got[0][0]
        s1.forget(victim)  # another connection deletes: s2's index catches up
        s2._core.index.sync(s2._core.backend)
        assert victim not in [i for i, _ in s2._core.index.search(q, namespace="default", agent_id="a", k=5)]


def test_vector_index_large_path_uses_binary_preselection():
    rng = np.random.default_rng(1)
    n, d = 20_000, 128
    idx = VectorIndex(d)
    X = rng.standard_normal((n, d)).astype(np.float32)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    for i in range(n):
        idx.put(i + 1, "ns", "a", "agent", "success", False, X[i])
    hits = 0
    for j in range(20):
        q = X[j] + 0.05 * rng.standard_normal(d).astype(np.float32)
        got = idx.search(q / np.linalg.norm(q), namespace="ns", agent_id="a", k=10)
        exact = np.argsort(-(X @ (q / np.linalg.norm(q))))[:10] + 1
        hits += len(set(i for i, _ in got) & set(exact.tolist()))
        assert got[0][0] == j + 1
    assert hits / 200 >= 0.8


weights_st = st.builds(
    RankingWeights,
    vector=st.floats(0, 5),
    keyword=st.floats(0, 5),
    tags=st.floats(0, 5),
    signature=st.floats(0, 5),
    prior_weight=st.floats(0, 1),
    usefulness=st.floats(0, 5),
    recency=st.floats(0, 5),
    importance=st.floats(0, 5),
)
unit = st.one_of(st.none(), st.floats(-2, 2))


@hsettings(max_examples=300)
@given(
    v=unit,
    k=unit,
    t=unit,
    s=unit,
    rel=st.floats(0, 1),
    age=st.floats(-1e6, 1e10),
    applied=st.integers(0, 1000),
    data=st.data(),
    w=weights_st,
    imp=st.floats(0, 1),
)
def test_score_is_bounded(v, k, t, s, rel, age, applied, data, w, imp):
    succ = data.draw(st.integers(0, applied))
    b = score(
        vector=v,
        keyword=k,
        tags=t,
        signature=s,
        relevance=rel,
        age_seconds=age,
        times_applied=applied,
        times_successful=succ,
        importance=imp,
        w=w,
    )
    for x in (b.score, b.match, b.prior, b.usefulness, b.recency):
        assert 0.0 <= x <= 1.0
    assert b.score <= b.match + 1e-12


@given(applied=st.integers(0, 10_000), data=st.data())
def test_usefulness_is_smoothed(applied, data):
    succ = data.draw(st.integers(0, applied))
    u = usefulness(applied, succ, RankingWeights())
    assert 0 < u < 1
    if applied == 0:
        assert u == 0.5


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from(["a1", "a2", "a3"]),
            st.sampled_from(["agent", "global"]),
            st.sampled_from(["alpha beta", "beta gamma", "gamma delta", "alpha delta"]),
        ),
        min_size=1,
        max_size=25,
    ),
    asker=st.sampled_from(["a1", "a2", "a3", None]),
    query=st.sampled_from(["alpha", "beta", "delta gamma"]),
)
def test_scope_isolation_under_random_data(tmp_path_factory, rows, asker, query):
    with MemoryStore(tmp_path_factory.mktemp("iso") / "m.db") as s:
        stored = s.remember_many(
            [
                {"content": f"{c} {i}", "type": "success", "agent_id": a, "scope": sc}
                for i, (a, sc, c) in enumerate(rows)
            ]
        )
        hits = s.recall(query, agent_id=asker, limit=100)
        for h in hits:
            m = h.memory
            assert m.scope == "global" or m.agent_id == asker
        visible = {m.id for m in stored if m.scope == "global" or m.agent_id == asker}
        assert {h.memory.id for h in hits} <= visible


def test_keyword_channel_finds_visible_rows_behind_many_invisible_ones(store):
    store.remember_many(
        [{"content": f"kubernetes pod eviction note {i}", "type": "failure", "agent_id": "other"} for i in range(300)]
    )
    mine = store.remember("kubernetes pod eviction: raise the memory request", type="success", agent_id="me")
    hits = store.recall("kubernetes pod eviction", agent_id="me", channels={"keyword"})
    assert [h.memory.id for h in hits] == [mine.id]


def test_posting_budget_keeps_rare_terms(tmp_path):
    with MemoryStore(tmp_path / "b.db", settings=Settings(keyword_posting_budget=50)) as s:
        s.remember_many(
            [{"content": f"common words everywhere row {i}", "type": "success", "agent_id": "a"} for i in range(200)]
        )
        target = s.remember("common words everywhere but zanzibar appears once", type="success", agent_id="a")
        hits = s.recall("common words everywhere zanzibar", agent_id="a", channels={"keyword"})
        assert hits[0].memory.id == target.id
        kept, postings, size = s._core.backend._prune_terms(["common", "words", "zanzibar"], 50)
        assert kept == ["zanzibar"] and postings == 1 and size == 201


def test_a_word_no_memory_holds_does_not_silence_the_words_that_match(tmp_path):
    """A typo or a word never stored beside an over-budget common word: the common word still finds
    the newest matches, as it does alone (the unknown word used to take the place of the one term a
    query always keeps, and the keyword channel answered nothing)."""
    with MemoryStore(tmp_path / "u.db", settings=Settings(keyword_posting_budget=20)) as s:
        s.remember_many([{"content": f"alpha row {i}", "type": "success", "agent_id": "a"} for i in range(100)])
        newest = s.remember("alpha newest row", type="success", agent_id="a")
        alone = [h.memory.id for h in s.recall("alpha", agent_id="a", channels={"keyword"}, limit=50)]
        typo = [h.memory.id for h in s.recall("alpha zqxjvw", agent_id="a", channels={"keyword"}, limit=50)]
        assert newest.id in typo and typo == alone
        # a word stored after its count was cached is still searched: the new row is found
        fresh = s.remember("alpha zqxjvw arrived", type="success", agent_id="a")
        assert s.recall("alpha zqxjvw", agent_id="a", channels={"keyword"})[0].memory.id == fresh.id


def test_over_budget_common_term_ranks_the_newest_matches(tmp_path):
    with MemoryStore(tmp_path / "c.db", settings=Settings(keyword_posting_budget=20)) as s:
        s.remember_many([{"content": f"alpha row {i}", "type": "success", "agent_id": "a"} for i in range(100)])
        newest = s.remember("alpha newest row", type="success", agent_id="a")
        hits = s.recall("alpha", agent_id="a", channels={"keyword"}, limit=50)
        ids = [h.memory.id for h in hits]
        assert newest.id in ids and min(ids) > 100 - 30  # only the newest ~20% were ranked


def test_the_posting_budget_ranks_the_newest_matches_on_every_backend_and_none_turns_it_off(db):
    with MemoryStore(db, settings=Settings(keyword_posting_budget=20)) as s:
        s.remember_many([{"content": f"alpha row {i}", "type": "success", "agent_id": "a"} for i in range(100)])
        newest = s.remember("alpha newest row", type="success", agent_id="a")
        ranked = [h.memory.id for h in s.recall("alpha", agent_id="a", channels={"keyword"}, limit=60)]
        assert newest.id in ranked and len(ranked) <= 40  # about the newest 20 of 101 matches were ranked
    with MemoryStore(db, settings=Settings(keyword_posting_budget=None)) as s:  # no budget: every match
        every = [h.memory.id for h in s.recall("alpha", agent_id="a", channels={"keyword"}, limit=200)]
        assert len(every) == 101 and newest.id in every
