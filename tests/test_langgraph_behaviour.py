"""HarnessMemoryStore's filters as a LangGraph user relies on them: every comparison operator at its edge
gives what LangGraph's own InMemoryStore gives, and a filter's nesting is bounded (issue 18)."""

from __future__ import annotations

import pytest
from langgraph.store.base import PutOp
from langgraph.store.memory import InMemoryStore

from harness_memory import InvalidInputError
from harness_memory.integrations.langgraph import HarnessMemoryStore


@pytest.fixture
def ours(tmp_path):
    with HarnessMemoryStore(tmp_path / "lg.db") as s:
        yield s


def keys(items) -> list[str]:
    return sorted(i.key for i in items)


@pytest.mark.parametrize("op", ["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
def test_each_operator_at_its_edge_agrees_with_inmemorystore(ours, op):
    ref = InMemoryStore()
    for n in range(7):
        for s in (ref, ours):
            s.put(("items",), f"k{n}", {"n": n, "half": n / 2})
    for flt in ({"n": {op: 3}}, {"half": {op: 1.5}}, {"n": {op: "3"}}):
        want = keys(ref.search(("items",), filter=flt, limit=100))
        assert keys(ours.search(("items",), filter=flt, limit=100)) == want, flt
    # the edge itself decides: 3 is in exactly the inclusive operators' results
    got = keys(ours.search(("items",), filter={"n": {op: 3}}, limit=100))
    assert ("k3" in got) == (op in ("$eq", "$gte", "$lte"))


def nested(levels: int, leaf: object) -> dict:
    value: object = leaf
    for _ in range(levels):
        value = {"a": value}
    assert isinstance(value, dict)
    return value


def test_a_filter_nests_at_most_32_levels(ours):
    ours.put(("deep",), "k", {"a": 1})
    assert [i.key for i in ours.search(("deep",), filter=nested(32, 1))] == []  # 32 levels: a search
    assert [i.key for i in ours.search(("deep",), filter=nested(1, 1))] == ["k"]
    with pytest.raises(InvalidInputError, match="too deep"):
        ours.search(("deep",), filter=nested(33, 1))
    with pytest.raises(InvalidInputError, match="too deep"):  # lists count as levels too
        ours.search(("deep",), filter={"a": [[[nested(31, 1)]]]})


@pytest.mark.parametrize("index", [7, {"text": 1}, "text", 1.5])
def test_an_index_that_is_not_a_list_of_paths_is_refused_and_nothing_is_written(ours, index):
    ours.put(("a",), "kept", {"text": "hello there"})
    before = ours.memory_store.stats()["memories"]
    with pytest.raises(InvalidInputError, match="index must be"):
        ours.batch([PutOp(("a",), "k", {"text": "hello there"}, index=index)])
    with pytest.raises(InvalidInputError, match="index must be"):
        ours.put(("a",), "k", {"text": "hello there"}, index=index)
    assert ours.memory_store.stats()["memories"] == before
    assert ours.get(("a",), "k") is None
    ours.put(("a",), "k", {"text": "hello there"}, index=("text",))  # a tuple of paths is a list of paths
    assert ours.get(("a",), "k").value == {"text": "hello there"}


def test_deleting_a_namespace_s_last_item_unlists_it_and_leaves_no_memory(ours):
    deepest = tuple(f"l{i}" for i in range(ours.memory_store.settings.max_tags - 3))  # the deepest allowed
    for ns in (("users", "u1"), ("users", "u2"), deepest):
        ours.put(ns, "a", {"v": 1})
        ours.put(ns, "b", {"v": 2})
    assert ours.get(deepest, "b").value == {"v": 2}
    assert tuple(ours.search(deepest[:3])[0].namespace) == deepest
    ours.delete(("users", "u1"), "a")
    assert ours.list_namespaces(prefix=("users",)) == [("users", "u1"), ("users", "u2")]  # u1 still has b
    ours.delete(("users", "u1"), "b")
    assert ours.list_namespaces(prefix=("users",)) == [("users", "u2")]
    for ns in (("users", "u2"), deepest):
        for key in ("a", "b"):
            ours.delete(ns, key)
    assert ours.list_namespaces() == []
    assert ours.memory_store.stats()["memories"] == 0
