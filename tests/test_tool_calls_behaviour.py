"""The tool-call log's documented bounds and figures: the head-and-tail summary (two thirds, one third,
the bytes left out named), each size bound at its edge and one past it, the duration range, ``since``
and retention cut-offs, nearest-rank percentiles, and the order of metrics and failing tools."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.testing import ManualClock
from harness_memory.tool_calls import MAX_DURATION_MS, prune, summarise

ERR_A = "ConnectionRefusedError: [Errno 111] Connection refused"
ERR_B = "PermissionError: [Errno 13] Permission denied: '/etc/shadow'"


@pytest.fixture
def clock():
    return ManualClock()


@pytest.fixture
def small(tmp_path, clock):
    settings = Settings(tool_result_max_bytes=500, tool_parameters_max_bytes=300)
    with MemoryStore(tmp_path / "t.db", settings=settings, clock=clock) as s:
        yield s


def test_a_long_result_keeps_two_thirds_head_one_third_tail_and_names_what_was_left_out():
    text = "H" * 1000 + "T" * 1000
    kept, size = summarise(text, 500, redact=False)
    # 500 bytes less 40 for the marker: 306 from the head, 154 from the tail
    assert size == 2000
    assert kept == "H" * 306 + "\n… [1540 bytes omitted] …\n" + "T" * 154
    assert len(kept.encode()) <= 500


def test_a_result_of_exactly_the_bound_is_kept_whole_and_one_byte_more_is_summarised(small):
    whole = small.log_tool_call("cat", agent_id="a", success=True, result="r" * 500)
    assert whole.result == "r" * 500 and whole.result_bytes == 500 and not whole.result_truncated
    cut = small.log_tool_call("cat", agent_id="a", success=True, result="r" * 501)
    assert cut.result_bytes == 501 and cut.result_truncated and "[41 bytes omitted]" in cut.result


def test_a_summary_never_cuts_a_character_in_two():
    kept, size = summarise("é" * 1000, 500, redact=False)
    assert size == 2000
    head, tail = kept.split("\n… [")[0], kept.split("] …\n")[1]
    assert set(head) == {"é"} and set(tail) == {"é"}
    assert len(head.encode()) in (305, 306) and len(tail.encode()) in (153, 154)


def test_an_error_is_summarised_like_a_result(small):
    err = "ValueError: " + "v" * 2000
    call = small.log_tool_call("cat", agent_id="a", success=False, error=err)
    assert call.error.startswith("ValueError: ") and "bytes omitted" in call.error
    assert len(call.error.encode()) <= 500


def test_parameters_at_the_bound_are_kept_and_one_byte_more_become_a_preview(small):
    def params(n):  # JSON of exactly n bytes
        return {"q": "p" * (n - len(json.dumps({"q": ""})))}

    assert len(json.dumps(params(300))) == 300
    kept = small.log_tool_call("search", agent_id="a", success=True, parameters=params(300))
    assert kept.parameters == params(300) and kept.parameters_bytes == 300
    over = small.log_tool_call("search", agent_id="a", success=True, parameters=params(301))
    assert over.parameters["truncated"] is True and over.parameters["bytes"] == over.parameters_bytes == 301
    assert len(over.parameters["preview"].encode()) <= 300 - 80
    assert over.parameters["preview"].startswith('{"q": "ppp')


def test_parameters_may_be_a_list_and_are_stored_with_sorted_keys(small):
    call = small.log_tool_call("run", agent_id="a", success=True, parameters=["ls", {"b": 1, "a": 2}])
    assert call.parameters == ["ls", {"a": 2, "b": 1}]
    stored = small._core.backend.execute("SELECT parameters FROM tool_calls WHERE id = ?", (call.id,)).fetchone()[0]
    assert stored.index('"a"') < stored.index('"b"')


def test_a_result_that_is_not_text_is_stored_as_json_and_nul_characters_are_dropped(small):
    assert json.loads(small.log_tool_call("q", agent_id="a", success=True, result={"n": 1}).result) == {"n": 1}
    assert small.log_tool_call("q", agent_id="a", success=True, result="a\x00b").result == "ab"


@pytest.mark.parametrize("ok", [0, 0.5, MAX_DURATION_MS])
def test_durations_from_zero_to_the_maximum_are_kept(small, ok):
    assert small.log_tool_call("q", agent_id="a", success=True, duration_ms=ok).duration_ms == ok


@pytest.mark.parametrize("bad", [-0.001, MAX_DURATION_MS * 1.001, float("inf")])
def test_durations_outside_the_range_are_refused(small, bad):
    with pytest.raises(InvalidInputError):
        small.log_tool_call("q", agent_id="a", success=True, duration_ms=bad)


def test_since_includes_a_call_logged_at_that_instant(small, clock):
    small.log_tool_call("early", agent_id="a", success=True)
    clock.advance(10)
    at = clock.now
    small.log_tool_call("at", agent_id="a", success=True)
    got = small.tool_calls(since=datetime.fromtimestamp(at, tz=UTC))
    assert [c.tool_name for c in got] == ["at"]
    assert [c.tool_name for c in small.tool_calls(since=at + 0.001)] == []


def test_pruning_removes_calls_before_the_cutoff_only_and_a_dry_run_only_counts(small, clock):
    small.log_tool_call("old", agent_id="a", success=True)
    cutoff = clock.now + 5
    clock.advance(5)
    small.log_tool_call("at_cutoff", agent_id="a", success=True)
    assert prune(small._core, cutoff, dry_run=True) == 1
    assert len(small.tool_calls()) == 2
    assert prune(small._core, cutoff) == 1
    assert [c.tool_name for c in small.tool_calls()] == ["at_cutoff"]
    assert prune(small._core, cutoff) == 0


@pytest.mark.parametrize(
    ("durations", "p50", "p95"),
    [([10], 10, 10), ([20, 10], 10, 20), ([30, 10, 20], 20, 30), (list(range(1, 21)), 10, 19)],
)
def test_percentiles_are_nearest_rank(small, durations, p50, p95):
    for d in durations:
        small.log_tool_call("q", agent_id="a", success=True, duration_ms=d)
    m = small.tool_metrics()[0]
    assert (m.p50_ms, m.p95_ms) == (p50, p95)


def test_metrics_count_outcomes_and_name_the_most_recent_failure(small, clock):
    small.log_tool_call("q", agent_id="a", success=False, error=ERR_A)
    clock.advance(5)
    small.log_tool_call("q", agent_id="a", success=False, error=ERR_B)
    clock.advance(5)
    small.log_tool_call("q", agent_id="a", success=True)
    m = small.tool_metrics()[0]
    assert (m.calls, m.successes, m.failures, m.success_rate) == (3, 1, 2, 0.3333)
    assert m.last_error_signature == small.error_signature(ERR_B).id
    assert m.last_failure_at == datetime.fromtimestamp(clock.now - 5, tz=UTC)
    assert (m.p50_ms, m.p95_ms) == (None, None)  # no durations given


def test_metrics_list_the_busiest_tool_first_then_by_name(small):
    for name, n in (("zeta", 1), ("alpha", 1), ("busy", 3)):
        for _ in range(n):
            small.log_tool_call(name, agent_id="a", success=True)
    small.log_tool_call("gamma", agent_id="a", success=True, namespace="other")
    assert [m.tool_name for m in small.tool_metrics()] == ["busy", "alpha", "gamma", "zeta"]
    assert [m.tool_name for m in small.tool_metrics(namespace="other")] == ["gamma"]


def test_failing_tools_most_failures_first_then_most_recent_with_the_last_error(small, clock):
    refused = "ConnectionRefusedError: [Errno 111] Connection refused to 10.0.0.{}:8080"
    small.log_tool_call("curl", agent_id="a", success=False, tool_type="http", error=refused.format(1))
    clock.advance(1)
    small.log_tool_call("wget", agent_id="b", success=False, tool_type="http", error=refused.format(2))
    clock.advance(1)
    small.log_tool_call("curl", agent_id="a", success=False, tool_type="http", error=refused.format(3))
    clock.advance(1)
    small.log_tool_call("nc", agent_id="a", success=False, tool_type="shell", error=refused.format(4))
    small.log_tool_call("curl", agent_id="a", success=True)  # a success is not a failure
    small.log_tool_call("ssh", agent_id="a", success=False, error=ERR_B)  # another error
    tools = small.failing_tools(refused.format(9))
    assert [(t.tool_name, t.failures) for t in tools] == [("curl", 2), ("nc", 1), ("wget", 1)]
    assert tools[0].last_error == refused.format(3)
    assert tools[0].last_failed_at == datetime.fromtimestamp(clock.now - 1, tz=UTC)
    assert [t.tool_name for t in small.failing_tools(refused.format(9), limit=1)] == ["curl"]
    assert small.failing_tools(refused.format(9), namespace="other") == []


@pytest.mark.parametrize("bad", ["a=1", 3, {"x": float("nan")}])
def test_refused_parameters_are_named_in_the_error(small, bad):
    with pytest.raises(InvalidInputError, match="^parameters "):
        small.log_tool_call("q", agent_id="a", success=True, parameters=bad)


def test_a_result_with_a_lone_surrogate_is_stored_with_a_replacement(small):
    call = small.log_tool_call("q", agent_id="a", success=True, result="bad \ud800 text")
    assert call.result == "bad ? text" and call.result_bytes == len("bad ? text")


GOOD_RECORD = {
    "record": "tool_call",
    "uid": "u1",
    "namespace": "default",
    "agent_id": "a",
    "tool_type": "builtin",
    "tool_name": "t",
    "success": False,
    "created_at": 1_767_225_600.0,
}


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"tool_name": ""}, "tool_name"),
        ({"tool_type": "a\nb"}, "tool_type"),
        ({"error_category": "a\nb"}, "error_category"),
        ({"namespace": "n\x01"}, "namespace"),
        ({"agent_id": "x" * 201}, "agent_id"),
        ({"session_id": ""}, "session_id"),
        ({"uid": "has space"}, "uid"),
        ({"success": 0.0}, "success"),
        ({"parameters_bytes": -1, "parameters": {"q": 1}}, "parameters_bytes"),
    ],
)
def test_an_imported_tool_call_names_its_bad_field(small, tmp_path, change, field):
    from harness_memory.errors import ImportFormatError

    path = tmp_path / "bad.jsonl"
    header = json.dumps({"format": "harness-memory", "version": 2})
    path.write_text(header + "\n" + json.dumps({**GOOD_RECORD, **change}) + "\n")
    with pytest.raises(ImportFormatError, match=rf"\b{field}\b"):
        small.import_jsonl(path)
    assert small.tool_calls() == []


def test_an_imported_result_keeps_the_larger_of_its_stated_and_actual_size(small, tmp_path):
    path = tmp_path / "ok.jsonl"
    header = json.dumps({"format": "harness-memory", "version": 2})
    recs = [
        {**GOOD_RECORD, "uid": "u1", "result": "abc", "result_bytes": 9000},
        {**GOOD_RECORD, "uid": "u2", "result": "abcdef", "result_bytes": 2},
        {**GOOD_RECORD, "uid": "u3", "result": "abcd", "error_category": "network", "error_signature": "err_1"},
    ]
    path.write_text(header + "\n" + "\n".join(json.dumps(r) for r in recs) + "\n")
    assert small.import_jsonl(path).tool_calls == 3
    got = {c.uid: c for c in small.tool_calls()}
    assert (got["u1"].result_bytes, got["u2"].result_bytes, got["u3"].result_bytes) == (9000, 6, 4)
    assert (got["u3"].error_category, got["u3"].error_signature) == ("network", "err_1")
