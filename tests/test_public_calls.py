"""Bad input for every public call raises a typed error and changes nothing; dedup is idempotent."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import table_snapshot
from harness_memory import HarnessMemoryError, InvalidInputError, MemoryStore

BAD = [
    ("get", (0,), {}),
    ("get", ("1",), {}),
    ("get", (True,), {}),
    ("get", (1,), {"agent_id": ""}),
    ("forget", (-1,), {}),
    ("forget", (None,), {}),
    ("forget", (1,), {"agent_id": 5}),
    ("archive", (0,), {}),
    ("archive", (1,), {"agent_id": ""}),
    ("archive", (999,), {}),
    ("restore", (None,), {}),
    ("restore", (1,), {"agent_id": 5}),
    ("restore", (999,), {}),
    ("forget_all", ("",), {}),
    ("forget_all", ("a", "nonsense"), {}),
    ("forget_all", ("a",), {"namespace": ""}),
    ("clear", ("",), {}),
    ("clear", (None,), {}),
    ("set_task_context", ("a", "", "ctx"), {}),
    ("set_task_context", ("a", "t", ""), {}),
    ("set_task_context", ("a", "t", "ctx"), {"ttl": -1}),
    ("get_task_context", ("a", None), {}),
    ("learn_success", ("", "pattern"), {}),
    ("learn_error", ("a", ""), {}),
    ("has_seen_error", ("a", 42), {}),
    ("has_seen_error", (None, "err"), {}),
    ("get_by_type", ("nonsense",), {}),
    ("get_by_type", ("success",), {"limit": 0}),
    ("get_by_type", ("success",), {"include_global": "yes"}),
    ("apply", (1,), {"helpful": None}),
    ("apply", (1,), {"helpful": True, "outcome": 3}),
    ("apply", (1,), {"helpful": True, "task_id": "x\ny"}),
    ("remember_many", ("not a list",), {}),
    ("remember_many", ([{"type": "success"}],), {}),
    ("remember_many", ([{"content": "x", "type": "success", "agent_id": "a", "bogus": 1}],), {}),
    ("error_signature", (None,), {}),
    ("export_markdown", ("",), {"path": "x.md"}),
    ("stats", (), {"namespace": ""}),
]


@pytest.mark.parametrize("name,args,kwargs", BAD, ids=[f"{b[0]}-{i}" for i, b in enumerate(BAD)])
def test_bad_input_for_every_call(store, tmp_path, name, args, kwargs):
    m = store.remember("a memory that must survive", type="success", agent_id="a")
    store.set_task_context("a", "t", "context")
    before = table_snapshot(store)
    kwargs = dict(kwargs)  # BAD is shared by every backend's run: never mutate it
    if name == "export_markdown":
        args = (args[0], tmp_path / kwargs.pop("path"))
    with pytest.raises(HarnessMemoryError) as info:
        getattr(store, name)(*args, **kwargs)
    assert isinstance(info.value, (InvalidInputError, LookupError))
    assert table_snapshot(store) == before
    assert store.get(m.id).content == "a memory that must survive"


def test_missing_files_are_typed_errors(store, tmp_path):
    with pytest.raises(InvalidInputError):
        store.import_jsonl(tmp_path / "missing.jsonl")
    with pytest.raises(InvalidInputError):
        store.import_markdown("a", tmp_path / "missing.md")


contents = st.lists(
    st.sampled_from(
        [
            "restart the runner",
            "pin the dependency",
            "Restart the runner",
            "use a fake clock in tests",
            "pin  the dependency",
            "split the task",
        ]
    ),
    min_size=1,
    max_size=12,
)


@hsettings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(first=contents, agent=st.sampled_from(["a", "b"]))
def test_dedup_is_idempotent(tmp_path_factory, first, agent):
    with MemoryStore(tmp_path_factory.mktemp("dd") / "m.db") as s:
        once = s.remember_many([{"content": c, "type": "success", "agent_id": agent} for c in first])
        rows = s._core.backend.execute("SELECT id, content FROM memories ORDER BY id").fetchall()
        again = s.remember_many([{"content": c, "type": "success", "agent_id": agent} for c in first])
        assert [m.id for m in again] == [m.id for m in once]  # every repeat lands on the same memory
        assert s._core.backend.execute("SELECT id, content FROM memories ORDER BY id").fetchall() == rows
        assert len(rows) <= len(set(" ".join(c.split()) for c in first))
