"""Issue 9: a refused call changes nothing — every table's rows and content are as before,
for the calls that sign errors and learn from outcomes (property over hostile arguments)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import table_names
from harness_memory import HarnessMemoryError

ERR = "ModuleNotFoundError: No module named 'yaml'"
TASK = {"id": "T-1", "title": "sync shards", "agent_id": "coder"}


def snapshot(store) -> dict[str, str]:
    """A digest of every table's full content."""
    b = store._core.backend
    names = [n for n in table_names(store) if "fts_" not in n and not n.startswith("memory_vectors_")]
    out = {}
    for n in names:
        rows = b.execute(f'SELECT * FROM "{n}"').fetchall()
        out[n] = hashlib.sha256(repr(sorted(map(repr, rows))).encode()).hexdigest()
    return out


HOSTILE = st.sampled_from(
    [
        None,
        0,
        -1,
        2**64,
        1.5,
        float("nan"),
        "",
        " ",
        "\x00",
        "a\nb",
        [],
        [""],
        {},
        {"x": 1},
        ["ok", 3],
        object(),
        b"bytes",
        "x" * 300,
    ]
)

CALLS = {  # e: an error text never seen before (a new template would be a write)
    "on_task_error": lambda s, e, bad: s.on_task_error(TASK, e, **bad),
    "record_outcome": lambda s, e, bad: s.record_outcome("T-1", "fresh_start", True, error=e, **bad),
    "on_task_complete": lambda s, e, bad: s.on_task_complete(
        TASK, {"success": True, "summary": "x", "error": e}, **bad
    ),
    "learn_fix": lambda s, e, bad: s.learn_fix(e, "restart the replica", **{"agent_id": "coder", **bad}),
    "apply": lambda s, e, bad: s.apply(1, **{"helpful": True, "error": e, **bad}),
    "select_technique": lambda s, e, bad: s.select_technique("T-1", e, **bad),
}
PARAMS = {
    "on_task_error": ["techniques", "seed", "limit", "record"],
    "record_outcome": ["namespace", "agent_id", "notes", "task_signature", "scope", "agent_type", "result"],
    "on_task_complete": ["context"],
    "learn_fix": ["agent_id", "worked", "namespace", "scope", "tags", "importance"],
    "apply": ["helpful", "agent_id", "outcome", "task_id"],
    "select_technique": ["techniques", "seed", "agent_type", "task_category"],
}


@pytest.mark.parametrize("call", sorted(CALLS))
@hsettings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_refused_call_changes_nothing(store, call, data):
    if not store.get_by_type("success", agent_id="coder"):
        store.learn_success("coder", "pip install pyyaml", error=ERR)
    param = data.draw(st.sampled_from(PARAMS[call]))
    bad = {param: data.draw(HOSTILE)}
    words = data.draw(
        st.lists(
            st.sampled_from(["replica", "stream", "shard", "sync", "dropped", "kappa", "while"]),
            min_size=1,
            max_size=25,
        )
    )
    error = "ConnectionResetError: " + " ".join(words) + f" ({len(words)} parts)"
    before = snapshot(store)
    try:
        CALLS[call](store, error, dict(bad))
    except HarnessMemoryError:
        assert snapshot(store) == before, f"{call}({bad!r}) was refused but wrote"
