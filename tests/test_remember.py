from __future__ import annotations

import math
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import table_counts, table_snapshot
from harness_memory import (
    ContentTooLargeError,
    InvalidInputError,
    MemoryStore,
    Settings,
    UnknownMemoryTypeError,
)


def test_remember_returns_a_full_memory(store):
    m = store.remember(
        "Use GLOB instead of REGEXP in SQLite WHERE clauses",
        type="failure",
        agent_id="build",
        tags=["SQLite", "query", "sqlite"],
        importance=0.8,
        task_signature="bugfix:db",
        error='sqlite3.OperationalError: near "REGEXP": syntax error',
        metadata={"k": [1, 2]},
        session_id="s1",
        task_id="t1",
    )
    assert m.id > 0 and len(m.uid) == 32
    assert m.type == "failure" and m.scope == "agent" and m.namespace == "default"
    assert m.tags == ["sqlite", "query"]
    assert m.importance == 0.8 and m.relevance_score == 1.0
    assert (
        m.error_signature.startswith("err_")
        and m.error_template == 'sqlite3.OperationalError: near "<*>": syntax error'
    )
    assert m.metadata["error_category"] == "compile_error"
    assert m.metadata["k"] == [1, 2] and m.session_id == "s1" and m.task_id == "t1"
    assert store.get(m.id) == m


def test_exact_duplicate_reinforces_instead_of_inserting(store):
    a = store.remember("retry with a fresh clone", type="success", agent_id="a", importance=0.5, tags=["git"])
    b = store.remember("retry  with a fresh clone", type="success", agent_id="a", importance=0.6, tags=["clone"])
    assert b.id == a.id
    assert b.access_count == a.access_count + 1
    assert b.importance > 0.6
    assert b.tags == ["git", "clone"]
    assert store.stats()["memories"] == 1
    merges = store._core.backend.execute("SELECT kind, similarity FROM memory_merges").fetchall()
    assert merges == [("exact", 1.0)]


def test_same_content_other_agent_scope_or_type_is_a_new_memory(store):
    a = store.remember("x is y", type="success", agent_id="a")
    assert store.remember("x is y", type="success", agent_id="b").id != a.id
    assert store.remember("x is y", type="failure", agent_id="a").id != a.id
    assert store.remember("x is y", type="success", agent_id="a", scope="global").id != a.id
    assert store.remember("x is y", type="success", agent_id="a", namespace="other").id != a.id


def test_near_duplicate_is_merged_with_a_record(store):
    a = store.remember(
        "The build fails because the lockfile is out of date; run npm install to refresh it",
        type="failure",
        agent_id="a",
    )
    b = store.remember(
        "The build fails because the lockfile is out of date, run npm install to refresh it.",
        type="failure",
        agent_id="a",
    )
    assert b.id == a.id
    kind, sim, merged = store._core.backend.execute(
        "SELECT kind, similarity, merged_content FROM memory_merges"
    ).fetchone()
    assert kind == "near" and sim >= 0.95 and merged.endswith("it.")
    c = store.remember("Completely different: the deploy needs the VPN to be up first", type="failure", agent_id="a")
    assert c.id != a.id


def test_near_duplicate_threshold_is_configurable(tmp_path):
    with MemoryStore(tmp_path / "x.db", settings=Settings(near_duplicate_threshold=1.0)) as s:
        a = s.remember("The build fails because the lockfile is stale", type="failure", agent_id="a")
        b = s.remember("The build fails because the lockfile is stale!", type="failure", agent_id="a")
        assert a.id != b.id


def test_key_updates_in_place_and_keeps_history(store, clock):
    a = store.remember("feedback: focus on tests", type="feedback", agent_id="supervisor", key="fb")
    clock.advance(60)
    b = store.remember("feedback: focus on docs now", type="feedback", agent_id="supervisor", key="fb")
    assert b.id == a.id and b.version == 2 and b.content.endswith("docs now")
    assert b.updated_at > a.updated_at
    hist = store._core.backend.execute(
        "SELECT version, content FROM memory_history WHERE memory_id = ?", (a.id,)
    ).fetchall()
    assert hist == [(1, "feedback: focus on tests")]
    assert store.get_feedback(agent_id="supervisor").content.endswith("docs now")
    # the index follows the new content
    assert [h.memory.id for h in store.recall("docs", agent_id="supervisor")] == [a.id]
    assert store.recall("tests", agent_id="supervisor", channels={"keyword"}) == []
    assert store.stats()["memories"] == 1


def test_secrets_are_redacted_before_storage_and_indexing(store):
    m = store.remember(
        "deploy with AKIAABCDEFGHIJKLMNOP and password=hunter2 at https://bob:s3cret@db.local/x "
        "header Authorization: Bearer abcdefghijklmnop1234",
        type="decision",
        agent_id="a",
        error="auth failed token=sk-abcdefghijklmnopqrstuvwxyz0123",
        metadata={"env": {"API_KEY": "ghp_abcdefghijklmnopqrstuvwxyz0123456789"}},
    )
    for secret in ("AKIAABCDEFGHIJKLMNOP", "hunter2", "s3cret", "abcdefghijklmnop1234"):
        assert secret not in m.content
    assert "ghp_" not in str(m.metadata)
    assert set(m.metadata["redacted"]) >= {"aws_access_key", "secret_pair", "url_password", "bearer"}
    assert store.recall("hunter2", agent_id="a", channels={"keyword"}) == []
    assert "sk-abc" not in (m.error_template or "")


def test_redaction_can_be_turned_off(tmp_path):
    with MemoryStore(tmp_path / "r.db", settings=Settings(redact_secrets=False)) as s:
        assert "hunter2" in s.remember("password=hunter2", type="decision", agent_id="a").content


def test_ttl_expiry_removes_rows_and_index(store, clock):
    m = store.remember("temporary note about the release", type="decision", agent_id="a", ttl=timedelta(hours=1))
    assert store.recall("release", agent_id="a")
    clock.advance(3601)
    assert store.recall("release", agent_id="a") == []  # expired: invisible even before cleanup
    assert store.cleanup_expired() == 1
    if store._core.backend.dialect == "sqlite":  # a bulk delete leaves its vec0 rows to the compact job
        assert store._core.backend.removed_vectors() == 1
        assert store.run_job("compact").counts["vectors_purged"] == 1
    counts = table_counts(store)
    assert counts["memories"] == 0 and counts["memories_fts"] == 0 and counts["memory_vectors"] == 0
    with pytest.raises(LookupError):
        store.get(m.id)


def test_unknown_type_is_a_typed_error(store):
    with pytest.raises(UnknownMemoryTypeError, match="warning"):
        store.remember("x", type="warning", agent_id="a")
    with pytest.raises(UnknownMemoryTypeError):
        store.get_warnings()


def test_registered_types_and_getters(store):
    store.remember("the API paginates with cursors", type="discovery", agent_id="w1", scope="global")
    store.remember("scraping the HTML version is blocked", type="deadend", agent_id="w2", scope="global")
    store.remember("step 1 collect, step 2 summarise", type="plan", agent_id="sup", scope="global", key="plan")
    store.remember("private discovery", type="discovery", agent_id="w3")
    assert [m.content for m in store.get_discoveries(agent_id="w2")] == ["the API paginates with cursors"]
    assert len(store.get_deadends()) == 1
    assert store.get_plan().content.startswith("step 1")
    assert store.get_insights() == []


def test_task_context_and_learn_helpers(store, clock):
    store.set_task_context("a", "T1", "working on the parser", ttl=timedelta(hours=24))
    store.set_task_context("a", "T1", "parser done, now the lexer")
    assert store.get_task_context("a", "T1").content == "parser done, now the lexer"
    clock.advance(24 * 3600 + 1)
    assert store.get_task_context("a", "T1") is None
    s = store.learn_success("a", "decompose big refactors", "one directory at a time")
    assert s.type == "success" and s.importance == 0.7
    e = store.learn_error("a", "TypeError: cannot read property 'x' of undefined", "guard the optional chain")
    assert e.type == "failure" and e.importance == 0.8 and e.error_signature
    assert store.has_seen_error("a", "TypeError: cannot read property 'y' of undefined")
    assert not store.has_seen_error("a", "PermissionError: [Errno 13] Permission denied: '/etc/shadow'")
    assert not store.has_seen_error("b", "TypeError: cannot read property 'x' of undefined")


def test_forget_forget_all_clear(store):
    ids = [
        store.remember(f"note {w}", type="decision", agent_id="a", namespace="run1").id
        for w in ("alpha", "beta", "gamma")
    ]
    store.remember("other agent note", type="success", agent_id="b", namespace="run1")
    store.remember("another run", type="success", agent_id="a", namespace="run2")
    store.forget(ids[0])
    with pytest.raises(LookupError):
        store.forget(ids[0])
    with pytest.raises(LookupError):
        store.forget(ids[1], agent_id="b")  # not b's memory
    assert store.forget_all("a", "decision") == 2
    assert store.clear("run1") == 1
    assert store.stats()["memories"] == 1
    if store._core.backend.dialect == "sqlite":  # bulk deletes leave their vec0 rows to the compact job
        assert store._core.backend.removed_vectors() == 3
        assert store.run_job("compact").counts["vectors_purged"] == 3
    counts = table_counts(store)
    assert counts["memories_fts"] == 1 and counts["memory_vectors"] == 1


# -- bad input: typed errors, nothing written ------------------------------------------------------
BAD_CALLS = [
    (dict(content=""), InvalidInputError),
    (dict(content="   \n"), InvalidInputError),
    (dict(content="x" * (32 * 1024 + 1)), ContentTooLargeError),
    (dict(content=123), InvalidInputError),
    (dict(content="a\x00b"), InvalidInputError),
    (dict(type="nonsense"), UnknownMemoryTypeError),
    (dict(agent_id=""), InvalidInputError),
    (dict(agent_id=None), InvalidInputError),
    (dict(scope="team"), InvalidInputError),
    (dict(importance=1.5), InvalidInputError),
    (dict(importance=-0.1), InvalidInputError),
    (dict(importance=math.nan), InvalidInputError),
    (dict(importance=True), InvalidInputError),
    (dict(tags="python"), InvalidInputError),
    (dict(tags=["ok", ""]), InvalidInputError),
    (dict(tags=[f"t{i}" for i in range(33)]), InvalidInputError),
    (dict(tags=["x" * 65]), InvalidInputError),
    (dict(tags=[1]), InvalidInputError),
    (dict(ttl=0), InvalidInputError),
    (dict(ttl=-5), InvalidInputError),
    (dict(ttl="1h"), InvalidInputError),
    (dict(metadata=[1]), InvalidInputError),
    (dict(metadata={"x": math.inf}), InvalidInputError),
    (dict(metadata={"x": object()}), InvalidInputError),
    (dict(namespace=""), InvalidInputError),
    (dict(key=""), InvalidInputError),
    (dict(session_id="a\nb"), InvalidInputError),
    (dict(content="\ud800"), InvalidInputError),
]


@pytest.mark.parametrize("override,error", BAD_CALLS)
def test_bad_input_is_typed_and_writes_nothing(store, override, error):
    store.remember("existing memory", type="success", agent_id="a")
    before = table_snapshot(store)
    args = dict(content="valid content", type="success", agent_id="a")
    args.update(override)
    content = args.pop("content")
    with pytest.raises(error):
        store.remember(content, **args)
    assert table_snapshot(store) == before


def test_remember_many_is_all_or_nothing(store):
    store.remember("existing", type="success", agent_id="a")
    before = table_snapshot(store)
    with pytest.raises(InvalidInputError):
        store.remember_many(
            [
                {"content": "fine", "type": "success", "agent_id": "a"},
                {"content": "bad importance", "type": "success", "agent_id": "a", "importance": 2},
            ]
        )
    assert table_snapshot(store) == before
    got = store.remember_many([{"content": f"item {i}", "type": "success", "agent_id": "a"} for i in range(20)])
    assert len({m.id for m in got}) == 20


def test_a_batch_larger_than_one_read_comes_back_whole_and_in_order(store):
    # the rows are read back in chunks of bounded size: a batch of two chunks and one row more returns
    # every memory it wrote, in the order of its items
    items = [{"content": f"item {i}", "type": "success", "agent_id": "a"} for i in range(1001)]
    got = store.remember_many(items)
    assert [m.content for m in got] == [it["content"] for it in items]
    assert len({m.id for m in got}) == 1001


text_st = st.text(min_size=0, max_size=200)
any_st = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=True),
    text_st,
    st.lists(text_st, max_size=3),
    st.dictionaries(text_st, text_st, max_size=2),
)


@hsettings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    content=st.one_of(text_st, any_st),
    mtype=st.one_of(st.sampled_from(["success", "failure", "bogus"]), any_st),
    agent=st.one_of(text_st, any_st),
    scope=st.one_of(st.sampled_from(["agent", "global"]), any_st),
    tags=any_st,
    importance=any_st,
    ttl=any_st,
    metadata=any_st,
    key=any_st,
)
def test_fuzz_remember_either_stores_or_raises_typed_error(
    store, content, mtype, agent, scope, tags, importance, ttl, metadata, key
):
    before = table_snapshot(store)
    try:
        m = store.remember(
            content,
            type=mtype,
            agent_id=agent,
            scope=scope,
            tags=tags,
            importance=importance,
            ttl=ttl,
            metadata=metadata,
            key=key,
        )
    except InvalidInputError:
        assert table_snapshot(store) == before
    else:
        assert store.get(m.id).content == m.content
        assert 0 <= m.importance <= 1


def test_batch_near_duplicates_merge_within_and_across_batches(store):
    a = "The build fails because the lockfile is out of date; run npm install to refresh it"
    b = "The build fails because the lockfile is out of date, run npm install to refresh it."
    c = "the build fails because the lockfile is out of date - run npm install to refresh it"
    got = store.remember_many(
        [
            {"content": a, "type": "failure", "agent_id": "x"},
            {"content": b, "type": "failure", "agent_id": "x"},
            {"content": "unrelated: the VPN must be up for deploys", "type": "failure", "agent_id": "x"},
        ]
    )
    assert got[0].id == got[1].id != got[2].id
    again = store.remember_many([{"content": c, "type": "failure", "agent_id": "x"}])
    assert again[0].id == got[0].id
    kinds = [r[0] for r in store._core.backend.execute("SELECT kind FROM memory_merges ORDER BY id")]
    assert kinds == ["near", "near"]
    assert store.stats()["memories"] == 2
