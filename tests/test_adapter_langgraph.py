"""The LangGraph store: the same operations against LangGraph's own InMemoryStore and ours, compared;
a real LangGraph graph reading and writing memories through it; TTL; bad input."""

from __future__ import annotations

import asyncio
import random
import uuid
from dataclasses import dataclass
from typing import TypedDict

import pytest
from langgraph.graph import StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    GetOp,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.integrations.langgraph import HarnessMemoryStore
from harness_memory.testing import ManualClock

NAMESPACES = [
    ("users", "u1", "memories"),
    ("users", "u1", "prefs"),
    ("users", "u2", "memories"),
    ("docs",),
    ("docs", "guides", "setup"),
]
WORDS = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"]


@pytest.fixture
def ours(tmp_path):
    with HarnessMemoryStore(tmp_path / "lg.db") as s:
        yield s


def triples(items):
    return sorted((tuple(i.namespace), i.key, repr(sorted(i.value.items()))) for i in items)


def live_namespaces(ref: InMemoryStore) -> set[tuple[str, ...]]:
    """InMemoryStore lists a namespace once touched (even emptied, even only read); ours while it has items."""
    return {tuple(i.namespace) for i in ref.search((), limit=10_000)}


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_same_operations_same_results_as_inmemorystore(ours, seed):
    rnd = random.Random(seed)
    ref = InMemoryStore()
    keys: dict[tuple, set[str]] = {}
    for step in range(70):
        ns = rnd.choice(NAMESPACES)
        roll = rnd.random()
        if roll < 0.5:
            key = f"k{rnd.randrange(8)}"
            value = {
                "text": f"{rnd.choice(WORDS)} {rnd.choice(WORDS)} note {step}",
                "n": rnd.randrange(10),
                "tags": [rnd.choice(WORDS)],
                "meta": {"lang": rnd.choice(["en", "fr"])},
            }
            for s in (ref, ours):
                s.put(ns, key, value)
            keys.setdefault(ns, set()).add(key)
        elif roll < 0.62 and keys.get(ns):
            key = rnd.choice(sorted(keys[ns]))
            for s in (ref, ours):
                s.delete(ns, key)
            keys[ns].discard(key)
        elif roll < 0.8:
            key = f"k{rnd.randrange(8)}"
            a, b = ref.get(ns, key), ours.get(ns, key)
            assert (a is None) == (b is None)
            if a is not None:
                assert (tuple(b.namespace), b.key, b.value) == (tuple(a.namespace), a.key, a.value)
                assert b.created_at <= b.updated_at
        else:
            prefix = ns[: rnd.randrange(len(ns) + 1)]
            flt = rnd.choice(
                [
                    None,
                    {"n": {"$gte": 5}},
                    {"meta": {"lang": "fr"}},
                    {"n": 3, "meta": {"lang": "en"}},
                    {"tags": [rnd.choice(WORDS)]},
                    {"n": {"$ne": 2, "$lt": 8}},
                ]
            )
            a = ref.search(prefix, filter=flt, limit=1000)
            b = ours.search(prefix, filter=flt, limit=1000)
            assert triples(b) == triples(a), (prefix, flt)
            assert all(i.score is None for i in b)
            assert [i.updated_at for i in b] == sorted((i.updated_at for i in b), reverse=True)  # newest first
    # namespaces, with every kind of condition
    expected_all = sorted(live_namespaces(ref))
    assert ours.list_namespaces(limit=1000) == expected_all
    for kw in [
        {"prefix": ("users",)},
        {"suffix": ("memories",)},
        {"prefix": ("users", "*", "memories")},
        {"max_depth": 2},
        {"prefix": ("docs",), "max_depth": 1},
        {"limit": 2, "offset": 1},
    ]:
        want = [
            n
            for n in ref.list_namespaces(**{**kw, "limit": 1000, "offset": 0})
            if any(x[: len(n)] == n for x in expected_all)
        ]
        if "limit" in kw:
            want = want[kw["offset"] : kw["offset"] + kw["limit"]]
        assert ours.list_namespaces(**{"limit": 1000, **kw}) == want, kw
    # pages of a search: together they are the whole result, in order, without repeats
    whole = ours.search(("users",), limit=1000)
    pages = [i for off in range(0, len(whole), 3) for i in ours.search(("users",), limit=3, offset=off)]
    assert [(i.namespace, i.key) for i in pages] == [(i.namespace, i.key) for i in whole]


def test_batch_of_mixed_ops_matches_inmemorystore(ours):
    ref = InMemoryStore()
    ops = [
        PutOp(("a", "b"), "x", {"v": 1}),
        PutOp(("a",), "y", {"v": 2}),
        GetOp(("a", "b"), "x"),
        SearchOp(("a",), None, 10, 0, None),
        ListNamespacesOp(None, None, 10, 0),
        PutOp(("a", "b"), "x", {"v": 3}),
    ]
    r_ref, r_ours = ref.batch(ops), ours.batch(ops)
    # reads in a batch see the state before the batch's writes, in both
    assert r_ref[2] is None and r_ours[2] is None
    assert r_ref[3] == r_ours[3] == []
    assert ours.get(("a", "b"), "x").value == ref.get(("a", "b"), "x").value == {"v": 3}
    assert asyncio.run(ours.abatch([GetOp(("a",), "y")]))[0].value == {"v": 2}


def test_query_search_finds_the_item_by_meaning_of_its_words(ours):
    ref = InMemoryStore()
    facts = {
        "f1": "The user prefers dark mode in every editor",
        "f2": "Deployments happen on Tuesdays after the standup",
        "f3": "The user's favourite language is Rust, then Python",
        "f4": "Allergic to peanuts: never suggest satay",
    }
    for k, t in facts.items():
        for s in (ref, ours):
            s.put(("users", "u1"), k, {"text": t})
    ours.put(("users", "u2"), "f1", {"text": "The user prefers dark mode too"})
    for query, key in [
        ("which programming language does the user like", "f3"),
        ("dark mode editor", "f1"),
        ("when are deployments", "f2"),
        ("peanuts allergy food", "f4"),
    ]:
        hits = ours.search(("users", "u1"), query=query, limit=2)
        assert hits and hits[0].key == key, (query, [(h.key, h.score) for h in hits])
        assert all(h.namespace == ("users", "u1") for h in hits) and hits[0].score > 0
        assert key in {i.key for i in ref.search(("users", "u1"), query=query, limit=10)}  # the reference too
    # only the indexed fields are searched: an item indexed on "title" is not found by its body
    ours.put(("notes",), "n1", {"title": "grocery list", "body": "zanzibar cloves"}, index=["title"])
    ours.put(("notes",), "n2", {"title": "zanzibar trip", "body": "flights"}, index=["title"])
    assert [h.key for h in ours.search(("notes",), query="zanzibar", limit=1)] == ["n2"]


def test_ttl_expires_items(tmp_path):
    clock = ManualClock()
    with MemoryStore(tmp_path / "ttl.db", clock=clock) as ms:
        s = HarnessMemoryStore(ms, ttl={"default_ttl": 60})
        s.put(("a",), "short", {"v": 1}, ttl=1)  # minutes
        s.put(("a",), "default", {"v": 2})
        s.put(("a",), "forever", {"v": 3}, ttl=None)
        clock.advance(50)
        assert s.get(("a",), "short") is not None
        clock.advance(20)
        assert s.get(("a",), "short") is None
        assert {i.key for i in s.search(("a",))} == {"default", "forever"}
        clock.advance(3600)
        assert {i.key for i in s.search(("a",))} == {"forever"}


def test_values_are_redacted_like_every_memory(ours):
    secret = "ghp_" + "Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk1Ll2"
    ours.put(("users", "u1"), "creds", {"note": f"token {secret}", "password": "hunter2-correct-horse"})
    got = ours.get(("users", "u1"), "creds").value
    assert secret not in str(got) and "hunter2" not in str(got)
    assert ours.search(("users",), query="token")[0].key == "creds"


def test_bad_input_is_refused_and_changes_nothing(ours):
    ours.put(("ok",), "k", {"v": 1})
    before = ours.memory_store.stats()["memories"]
    bad = [
        PutOp(("a.b",), "k", {"v": 1}),
        PutOp((), "k", {"v": 1}),
        PutOp(("a",), "", {"v": 1}),
        PutOp(("a",), "k\n", {"v": 1}),
        PutOp(("a",), "k", "not a dict"),
        PutOp(("a",), "k", {"v": 1}, ttl=-5),
        PutOp(("a",), "k", {"v": float("nan")}),
        PutOp(tuple(f"l{i}" for i in range(40)), "k", {"v": 1}),
        SearchOp(("a",), {"n": {"$regex": "x"}}, 10, 0, None),
        SearchOp(("a",), None, -1, 0, None),
        ListNamespacesOp((MatchCondition("middle", ("a",)),), None, 10, 0),
    ]
    for op in bad:
        with pytest.raises((InvalidInputError, ValueError)):
            ours.batch([PutOp(("ok",), "k2", {"v": 2}), op])  # the good op before it is not applied either
    assert ours.memory_store.stats()["memories"] == before
    assert ours.get(("ok",), "k2") is None
    with pytest.raises(InvalidInputError):
        HarnessMemoryStore(ours.memory_store, memory_type="no-such-type")
    # as in LangGraph: put() refuses the reserved root label, a direct PutOp may use it
    with pytest.raises(ValueError):
        ours.put(("langgraph", "x"), "k", {"v": 1})
    ours.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])
    assert ours.get(("langgraph", "x"), "k").value == {"v": 1}


def test_namespace_listings_agree_with_inmemorystore(ours):
    ref = InMemoryStore()
    layout = [
        ("org", "eng", "web"),
        ("org", "eng", "api", "v1"),
        ("org", "eng", "api", "v2"),
        ("org", "ops", "web"),
        ("org", "sales"),
        ("team", "eng", "web"),
        ("users", "7", "prefs"),
        ("users", "9"),
        ("x",),
    ]
    for i, ns in enumerate(layout):
        for s in (ref, ours):
            s.put(ns, f"k{i}", {"i": i})
    queries = [
        {},
        {"prefix": ("org",)},
        {"prefix": ("org", "eng")},
        {"suffix": ("web",)},
        {"prefix": ("org",), "suffix": ("web",)},
        {"prefix": ("org", "*", "web")},
        {"suffix": ("*", "web")},
        {"prefix": ("*", "eng")},
        {"max_depth": 1},
        {"max_depth": 2},
        {"prefix": ("org",), "max_depth": 3},
        {"prefix": ("org",), "limit": 2},
        {"prefix": ("org",), "offset": 2},
        {"prefix": ("nothing",)},
        {"prefix": ("users", "9")},
        {"prefix": ("*", "users")},
        {"limit": 3, "offset": 6},
    ]
    for q in queries:
        assert ours.list_namespaces(**q) == ref.list_namespaces(**q), q
    for n in range(0, 10, 3):  # pages
        assert ours.list_namespaces(limit=3, offset=n) == ref.list_namespaces(limit=3, offset=n)
    assert (
        HarnessMemoryStore(ours.memory_store, agent_id="empty").list_namespaces() == InMemoryStore().list_namespaces()
    )


class State(TypedDict, total=False):
    message: str
    remembered: list[str]


@dataclass
class Ctx:
    user_id: str


def remember_node(state: State, runtime: Runtime[Ctx]) -> State:
    msg = state["message"]
    if msg.startswith("remember:"):
        runtime.store.put(("users", runtime.context.user_id, "facts"), str(uuid.uuid4()), {"text": msg[9:].strip()})
    return {}


def recall_node(state: State, runtime: Runtime[Ctx]) -> State:
    hits = runtime.store.search(("users", runtime.context.user_id, "facts"), query=state["message"], limit=3)
    return {"remembered": [h.value["text"] for h in hits]}


def build(store):
    return (
        StateGraph(State, context_schema=Ctx)
        .add_node("remember", remember_node)
        .add_node("recall", recall_node)
        .add_edge("__start__", "remember")
        .add_edge("remember", "recall")
        .add_edge("recall", "__end__")
        .compile(store=store)
    )


def test_a_real_graph_reads_and_writes_memories_through_the_store(tmp_path):
    db = tmp_path / "graph.db"
    with HarnessMemoryStore(db, agent_id="assistant") as store:
        graph = build(store)
        graph.invoke({"message": "remember: my cat is called Miso"}, context=Ctx("ana"))
        graph.invoke({"message": "remember: I work night shifts at the hospital"}, context=Ctx("ana"))
        graph.invoke({"message": "remember: my cat is called Pixel"}, context=Ctx("ben"))
    # a new process-like store on the same file: the memories persisted, per user
    with HarnessMemoryStore(db, agent_id="assistant") as store:
        graph = build(store)
        out = graph.invoke({"message": "what is my cat called?"}, context=Ctx("ana"))
        assert out["remembered"][0] == "my cat is called Miso"
        assert "my cat is called Pixel" not in out["remembered"]
        out = asyncio.run(graph.ainvoke({"message": "when do I work?"}, context=Ctx("ana")))
        assert out["remembered"][0] == "I work night shifts at the hospital"
        assert store.list_namespaces() == [("users", "ana", "facts"), ("users", "ben", "facts")]
    # another agent's store on the same database sees none of it
    with HarnessMemoryStore(db, agent_id="other") as store:
        assert store.search(("users",)) == []
    # the memories are ordinary harness-memory memories of the agent
    with MemoryStore(db, settings=Settings()) as ms:
        assert ms.stats(agent_id="assistant")["memories"] >= 3


def test_hostile_puts_either_round_trip_or_are_refused_without_a_trace(tmp_path):
    from hypothesis import HealthCheck, given, settings, strategies as st

    from harness_memory.errors import HarnessMemoryError

    store = HarnessMemoryStore(tmp_path / "fuzz.db")
    labels = st.text(min_size=0, max_size=12)
    scalars = st.one_of(
        st.none(), st.booleans(), st.integers(-(2**60), 2**60), st.floats(allow_nan=True), st.text(max_size=20)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b", "text", "n"]), inner, max_size=3)
        ),
        max_leaves=8,
    )

    @settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
    @given(
        st.lists(labels, min_size=0, max_size=4).map(tuple),
        st.text(max_size=12),
        st.dictionaries(st.sampled_from(["a", "b", "text", "n"]), values, max_size=3),
    )
    def check(ns, key, value):
        before = store.memory_store.stats()["memories"]
        try:
            store.put(ns, key, value)
        except (HarnessMemoryError, ValueError) as exc:  # InvalidInputError, or LangGraph's InvalidNamespaceError
            assert isinstance(exc, ValueError)
            assert store.memory_store.stats()["memories"] == before
            return
        got = store.get(ns, key)
        assert got is not None and got.value == value and got.namespace == ns
        assert (ns, key) in {(i.namespace, i.key) for i in store.search(ns, limit=1000)}
        store.delete(ns, key)
        assert store.get(ns, key) is None

    try:
        check()
    finally:
        store.close()


def test_search_behaviours_langgraph_users_rely_on(ours):
    shop = [
        ("p1", {"text": "red apple", "color": "red", "price": 4.5}),
        ("p2", {"text": "red car", "color": "red", "price": 3.0}),
        ("p3", {"text": "green apple", "color": "green", "price": 4.0}),
        ("p4", {"text": "blue car", "color": "blue", "price": 3.5}),
    ]
    for k, v in shop:
        ours.put(("shop",), k, v)
    # a query with a filter: only matching items, the best match first
    assert ours.search(("shop",), query="apple", filter={"color": "red"})[0].key == "p1"
    assert {h.key for h in ours.search(("shop",), query="car", filter={"color": "red"})} == {"p1", "p2"}
    assert [
        h.key for h in ours.search(("shop",), query="apple", filter={"price": {"$gte": 4.0}, "color": "green"})
    ] == ["p3"]
    assert len(ours.search(("shop",), query="zzzz", filter={"price": {"$gt": 3.2}})) == 3
    # odd queries are still searches
    for q in ["", None, "apple " * 100, "apple!@#$%^&*()\"'", "NEAR(apple car)", "apple OR", "-car", "c*"]:
        assert len(ours.search(("shop",), query=q, limit=10)) == 4, q
    # pages of a ranked search: disjoint, together the whole
    p1 = ours.search(("shop",), query="red apple", limit=2)
    p2 = ours.search(("shop",), query="red apple", limit=2, offset=2)
    assert len(p1) == len(p2) == 2 and not {h.key for h in p1} & {h.key for h in p2}
    # an update is searched by its new text, not its old one
    ours.put(("shop",), "p1", {"text": "yellow banana", "color": "yellow", "price": 1.0})
    assert ours.search(("shop",), query="yellow banana", limit=1)[0].key == "p1"
    assert "p1" not in [h.key for h in ours.search(("shop",), query="red apple", limit=2)]
    # an item put with index=False is found by listing, not by its words
    ours.put(("shop",), "p5", {"text": "red apple pie"}, index=False)
    assert "p5" not in [h.key for h in ours.search(("shop",), query="red apple pie", limit=3)]
    assert "p5" in [h.key for h in ours.search(("shop",))]


def test_concurrent_async_operations(ours):
    async def scenario():
        docs = [(f"d{i}", {"text": f"{['red', 'blue'][i % 2]} thing {i}", "i": i}) for i in range(30)]
        await asyncio.gather(*[ours.aput(("c",), k, v) for k, v in docs])
        await asyncio.gather(*[ours.adelete(("c",), k) for k, _ in docs[:10]])
        got = await asyncio.gather(
            ours.asearch(("c",), query="red", filter={"i": {"$gt": 15}}, limit=50),
            ours.asearch(("c",), limit=50),
            ours.alist_namespaces(),
            ours.aget(("c",), "d3"),
            ours.aget(("c",), "d13"),
        )
        return got

    red, every, namespaces, gone, kept = asyncio.run(scenario())
    assert {h.key for h in red} == {f"d{i}" for i in range(16, 30)}  # the filter decides membership
    assert red[0].value["text"].startswith("red")
    assert {h.key for h in every} == {f"d{i}" for i in range(10, 30)}
    assert namespaces == [("c",)] and gone is None and kept.value["i"] == 13
