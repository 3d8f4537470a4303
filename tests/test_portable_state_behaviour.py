"""The state records of an export (history, access log, attempts, ledger rows, error templates and links)
as check_record documents them: each kind's required fields, each bound at its edge and one past it, the
field named in every refusal, secrets redacted again on the way in, and the values as they will be stored."""

from __future__ import annotations

import json

import pytest

from harness_memory import InvalidInputError, MemoryStore
from harness_memory.portable_state import check_record

T = 1_767_225_600.0
SECRET = "sk-proj-" + "Ab3dEf7hIj9kLm2nOp4qRs6tUv8wXy0z" * 2
GOOD = {
    "history": {"memory": "m1", "version": 1, "content": "pin the proxy", "valid_from": T, "valid_until": T + 1},
    "access": {"memory": "m1", "access_type": "query", "timestamp": T},
    "attempt": {"task_id": "T1", "technique": "fresh_start", "result": "fixed", "attempted_at": T},
    "technique": {
        "technique": "fresh_start",
        "level": "global",
        "error_key": "*",
        "successes": 2,
        "failures": 1,
        "first_used": T,
        "last_used": T + 5,
    },
    "error_template": {
        "sig": "err_1",
        "partition": "p",
        "tokens": ["ValueError:", "<*>"],
        "category": "value",
        "created_at": T,
        "updated_at": T,
    },
    "error_link": {"sig": "err_1", "canonical": "err_2", "linked_at": T},
}


@pytest.fixture(scope="module")
def core(tmp_path_factory):
    with MemoryStore(tmp_path_factory.mktemp("ps") / "s.db") as s:
        yield s._core


def _check(core, kind, **change):
    rec = {"record": kind, **GOOD[kind], **change}
    return check_record(core, {k: x for k, x in rec.items() if x is not ...})


@pytest.mark.parametrize("kind", list(GOOD))
def test_each_kinds_minimal_record_is_accepted(core, kind):
    assert _check(core, kind).kind == kind


@pytest.mark.parametrize(("kind", "required"), [(k, f) for k, rec in GOOD.items() for f in rec])
def test_each_required_field_is_named_when_missing(core, kind, required):
    with pytest.raises(InvalidInputError, match=rf"missing fields \['{required}'\]"):
        _check(core, kind, **{required: ...})


def test_the_stored_values_of_a_history_record(core):
    rec = _check(core, "history", tags=["net"], importance=0.7, metadata={"k": 1})
    f = rec.values
    assert (f["memory"], f["version"], f["content"], f["valid_from"], f["valid_until"]) == (
        "m1",
        1,
        "pin the proxy",
        T,
        T + 1,
    )
    assert (json.loads(f["context_tags"]), f["importance"], json.loads(f["metadata"])) == (["net"], 0.7, {"k": 1})
    assert f["content_hash"] and _check(core, "history").values["importance"] == 0.5


def test_the_stored_values_of_a_technique_row(core):
    f = _check(core, "technique", success_rate=0.5, agent_types=["build"], last_success=T + 1).values
    assert (f["successes"], f["failures"], f["attempts"], f["success_rate"]) == (2, 1, 3, 0.5)
    assert json.loads(f["agent_types"]) == ["build"] and json.loads(f["task_categories"]) == []
    assert (f["last_success"], f["last_failure"]) == (T + 1, None)


def test_the_stored_values_of_an_access_record(core):
    f = _check(core, "access", was_helpful=True, score=0.5, duration_ms=12.5, agent_id="a", outcome="ok").values
    assert (f["was_helpful"], f["score"], f["duration_ms"], f["agent_id"], f["outcome"]) == (1, 0.5, 12.5, "a", "ok")
    assert _check(core, "access", was_helpful=0).values["was_helpful"] == 0
    assert _check(core, "access").values["was_helpful"] is None


def test_a_templates_seen_count_defaults_to_one(core):
    assert _check(core, "error_template").values["seen"] == 1
    assert _check(core, "error_template", seen=7).values["seen"] == 7


def test_secrets_are_redacted_again_on_the_way_in(core):
    assert SECRET not in _check(core, "history", content=f"key {SECRET}").values["content"]
    assert SECRET not in _check(core, "access", outcome=f"used {SECRET}").values["outcome"]
    assert SECRET not in _check(core, "attempt", notes=f"tried {SECRET}").values["notes"]


@pytest.mark.parametrize(
    ("kind", "change", "field"),
    [
        ("history", {"version": 0}, "version"),
        ("history", {"memory": "not a uid"}, "memory"),
        ("history", {"memory": "u" * 65}, "memory"),
        ("history", {"importance": 1.5}, "importance"),
        ("history", {"valid_from": "then"}, "valid_from"),
        ("access", {"access_type": "peeked"}, "access_type"),
        ("access", {"was_helpful": 0.0}, "was_helpful"),
        ("access", {"was_helpful": 2}, "was_helpful"),
        ("access", {"score": 2e9}, "score"),
        ("access", {"duration_ms": -1}, "duration_ms"),
        ("access", {"duration_ms": 1e11 * 1.01}, "duration_ms"),
        ("access", {"outcome": "o" * 8193}, "outcome"),
        ("access", {"error_signature": "e" * 201}, "error_signature"),
        ("access", {"task_signature": "t" * 1001}, "task_signature"),
        ("access", {"error_origin": "o" * 1001}, "error_origin"),
        ("access", {"error_origin": 7}, "error_origin"),
        ("access", {"session_id": "a\nb"}, "session_id"),
        ("attempt", {"result": "maybe"}, "result"),
        ("attempt", {"error_category": "c" * 201}, "error_category"),
        ("attempt", {"error_signature": "e" * 201}, "error_signature"),
        ("attempt", {"agent_type": "t" * 201}, "agent_type"),
        ("attempt", {"task_category": "t" * 201}, "task_category"),
        ("attempt", {"notes": "n" * (64 * 1024 + 1)}, "notes"),
        ("attempt", {"error_basis": {"frame": "x"}}, "error_basis"),
        ("attempt", {"error_basis": {"message": "m", "other": 1}}, "error_basis"),
        ("attempt", {"error_basis": {"message": "m", "excerpt": "e" * 8193}}, "error_basis.excerpt"),
        ("technique", {"level": "planet"}, "level"),
        ("technique", {"failures": -1}, "failures"),
        ("technique", {"success_rate": 1.1}, "success_rate"),
        ("technique", {"agent_types": ["a"] * 1001}, "agent_types"),
        ("technique", {"example_failures": "x"}, "example_failures"),
        ("technique", {"error_key": "k" * 201}, "error_key"),
        ("technique", {"last_failure": "x"}, "last_failure"),
        ("error_template", {"tokens": ["x" * 1001]}, "tokens"),
        ("error_template", {"tokens": ["x"] * 10_001}, "tokens"),
        ("error_template", {"seen": -1}, "seen"),
        ("error_template", {"exception": "e" * 1001}, "exception"),
        ("error_template", {"category": "c" * 201}, "category"),
        ("error_link", {"canonical": "c" * 201}, "canonical"),
        ("error_link", {"sig": "s" * 201}, "sig"),
        ("error_template", {"sig": ""}, "sig"),
        ("error_template", {"partition": 3}, "partition"),
        ("error_link", {"linked_at": "x"}, "linked_at"),
        ("error_link", {"extra": 1}, "unknown fields"),
    ],
)
def test_a_bad_field_is_named(core, kind, change, field):
    with pytest.raises(InvalidInputError, match=rf"\b{field}\b"):
        _check(core, kind, **change)


@pytest.mark.parametrize(
    ("kind", "change"),
    [
        ("access", {"outcome": "o" * 8192, "error_signature": "e" * 200, "duration_ms": 1e11, "score": -1e9}),
        ("access", {"task_signature": "t" * 1000, "error_origin": "o" * 1000}),
        ("attempt", {"error_category": "c" * 200, "agent_type": "t" * 200, "task_category": "t" * 200}),
        ("attempt", {"error_basis": {"message": "m", "excerpt": "e" * 8192, "frame": None}}),
        ("attempt", {"error_basis": {"message": "", "frame": "", "exception": ""}, "notes": "n" * 64 * 1024}),
        ("access", {"duration_ms": 0, "score": 1e9}),
        ("technique", {"agent_types": ["a"] * 1000, "error_key": "k" * 200}),
        ("error_template", {"tokens": ["x" * 1000] * 3, "exception": "e" * 1000, "category": "c" * 200}),
        ("error_link", {"canonical": "c" * 200}),
        ("history", {"memory": "u" * 64}),
    ],
)
def test_values_at_their_bound_are_accepted(core, kind, change):
    assert _check(core, kind, **change).kind == kind


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [("attempt", "result", r) for r in ("fixed", "failed", "decomposed", "escalated")]
    + [("access", "access_type", t) for t in ("query", "applied", "updated", "invalidated")]
    + [("technique", "level", lv) for lv in ("signature", "category", "global")],
)
def test_every_documented_value_of_an_enumerated_field_is_accepted(core, kind, field, value):
    assert _check(core, kind, **{field: value}).values[field] == value
