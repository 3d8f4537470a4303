"""The tool-call log (issue 14): redaction and bounds, signatures of failed calls, metrics (view
and function agree), advice naming failing tools, export/import, clear, expiry, CLI, REST, MCP."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta

import httpx
import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.errors import ImportFormatError
from harness_memory.testing import ManualClock

REFUSED = (
    'Traceback (most recent call last):\n  File "fetch.py", line 12, in get\n'
    "ConnectionRefusedError: [Errno 111] Connection refused"
)
SECRET = "sk-proj-" + "Ab3dEf7hIj9kLm2nOp4qRs6tUv8wXy0z" * 2


def _rows(store, table="tool_calls"):
    return store._core.backend.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]


def test_log_and_read_back(store):
    call = store.log_tool_call(
        "web_search",
        agent_id="researcher",
        success=True,
        parameters={"query": "python 3.12 benchmarks", "max_results": 5},
        result=[{"url": "https://python.org", "title": "3.12"}],
        duration_ms=120.5,
        task_id="T-1",
        session_id="S-1",
    )
    assert call.id > 0 and call.success and call.tool_type == "builtin"
    assert call.parameters == {"max_results": 5, "query": "python 3.12 benchmarks"}
    assert json.loads(call.result) == [{"title": "3.12", "url": "https://python.org"}]
    assert call.created_at.tzinfo is not None and call.created_at.utcoffset() == timedelta(0)
    got = store.tool_calls(agent_id="researcher")
    assert [c.model_dump() for c in got] == [call.model_dump()]
    assert store.tool_calls(task_id="T-1")[0].id == call.id
    assert store.tool_calls(tool_name="other") == []
    assert store.tool_calls(success=False) == []


def test_filters_and_order(store, clock):
    for k in range(5):
        store.log_tool_call(
            "grep" if k % 2 else "read_file",
            agent_id="a" if k < 3 else "b",
            success=k != 3,
            duration_ms=k,
            error=None if k != 3 else "FileNotFoundError: [Errno 2] No such file: 'x'",
        )
        clock.advance(10)
    allc = store.tool_calls()
    assert [c.duration_ms for c in allc] == [4, 3, 2, 1, 0]  # newest first
    assert [c.duration_ms for c in store.tool_calls(agent_id="b")] == [4, 3]
    assert [c.duration_ms for c in store.tool_calls(tool_name="grep")] == [3, 1]
    assert [c.duration_ms for c in store.tool_calls(success=False)] == [3]
    since = datetime.fromtimestamp(clock.now - 25, tz=UTC)
    assert [c.duration_ms for c in store.tool_calls(since=since)] == [4, 3]
    assert len(store.tool_calls(limit=2)) == 2


def test_secrets_are_redacted_everywhere(store):
    call = store.log_tool_call(
        "http_get",
        agent_id="a",
        success=False,
        tool_type="http",
        parameters={
            "url": f"https://user:{SECRET}@example.com/x",
            "api_key": "hunter2hunter2",
            "headers": {"Authorization": f"Bearer {SECRET}"},
        },
        result=f"echo: token={SECRET}",
        error=f"PermissionError: denied for key {SECRET}",
    )
    stored = store._core.backend.execute(
        "SELECT parameters, result, error FROM tool_calls WHERE id = ?", (call.id,)
    ).fetchone()
    for text in (*stored, call.model_dump_json()):
        assert SECRET not in text and "hunter2hunter2" not in text
    assert "[REDACTED" in stored[0] and "[REDACTED" in stored[1] and "[REDACTED" in stored[2]


def test_results_are_summarised_with_their_full_size(db_path):
    settings = Settings(tool_result_max_bytes=500, tool_parameters_max_bytes=300)
    with MemoryStore(db_path, settings=settings) as s:
        big = "HEAD " + "é" * 20_000 + f" key={SECRET} " + "x" * 5000 + " TAIL"
        call = s.log_tool_call(
            "cat", agent_id="a", success=True, result=big, parameters={"text": "y" * 2000, "password": "hunter2hunter2"}
        )
        assert call.result_bytes == len(big.encode("utf-8"))
        assert len(call.result.encode("utf-8")) <= 500 and call.result_truncated
        assert call.result.startswith("HEAD ") and call.result.endswith(" TAIL") and "bytes omitted" in call.result
        assert call.parameters["truncated"] is True and call.parameters["bytes"] == call.parameters_bytes > 2000
        assert len(json.dumps(call.parameters).encode()) <= 400
        small = s.log_tool_call("cat", agent_id="a", success=True, result="short")
        assert small.result == "short" and small.result_bytes == 5 and not small.result_truncated
        # a secret right at the cut is still redacted (the kept ends are redacted with a margin)
        near = "a" * 300 + f" token={SECRET} " + "b" * 5000
        stored = s.log_tool_call("cat", agent_id="a", success=True, result=near).result
        assert SECRET[:12] not in stored


def test_failed_call_is_signed_and_named_in_the_advice(store):
    failed = store.log_tool_call(
        "http_get", agent_id="a", success=False, tool_type="http", error=REFUSED, duration_ms=30
    )
    sig = store.error_signature(REFUSED)
    assert failed.error_signature == sig.id and failed.error_category == sig.category == "network"
    store.log_tool_call(
        "http_get", agent_id="b", success=False, tool_type="http", error=REFUSED.replace("line 12", "line 40")
    )
    store.log_tool_call("pip_install", agent_id="a", success=False, tool_type="shell", error=REFUSED)
    store.log_tool_call("grep", agent_id="a", success=False, error="AssertionError: 3 != 4")
    advice = store.on_task_error(
        {"id": "T-9", "title": "fetch the feed", "agent_id": "c"},
        "ConnectionRefusedError: [Errno 111] Connection refused",
    )
    tools = [(t.tool_name, t.failures) for t in advice.failing_tools]
    assert tools == [("http_get", 2), ("pip_install", 1)]
    assert "Tools that failed with this error: http_get (http, 2 times), pip_install (shell, 1 time)" in advice.prompt
    assert store.failing_tools("AssertionError: 3 != 4")[0].tool_name == "grep"
    assert store.failing_tools("KeyError: 'never seen'") == []
    other = store.on_task_error({"id": "T-10", "title": "x"}, "KeyError: 'never seen'")
    assert other.failing_tools == [] and "Tools that failed" not in other.prompt


def test_bad_input_is_refused_and_writes_nothing(store):
    bad = [
        {"tool_name": ""},
        {"tool_name": "t\nx"},
        {"agent_id": None},
        {"success": "yes"},
        {"duration_ms": -1},
        {"duration_ms": float("nan")},
        {"duration_ms": True},
        {"parameters": "a=1"},
        {"parameters": {"x": float("inf")}},
        {"parameters": {"x": object()}},
        {"result": {"x": {1, 2}}},
        {"error": "boom", "success": True},
        {"error": ""},
        {"error": 3, "success": False},
        {"namespace": ""},
        {"task_id": "x" * 201},
        {"tool_type": ""},
    ]
    for kw in bad:
        args = {"tool_name": "t", "agent_id": "a", "success": False, **kw}
        with pytest.raises(InvalidInputError):
            store.log_tool_call(args.pop("tool_name"), **args)
    deep: dict = {}
    for _ in range(40):
        deep = {"d": deep}
    with pytest.raises(InvalidInputError):
        store.log_tool_call("t", agent_id="a", success=True, parameters=deep)
    for kw in ({"limit": 0}, {"success": "no"}, {"since": datetime(2026, 1, 1)}, {"agent_id": ""}):
        with pytest.raises(InvalidInputError):
            store.tool_calls(**kw)
    assert _rows(store) == 0
    assert _rows(store, "error_templates") == 0  # nothing was signed for a refused call


def test_metrics_view_and_function_agree(store):
    # durations 1..100 for one tool (p50 50, p95 95 by nearest rank), a few failures
    for d in range(100, 0, -1):
        store.log_tool_call(
            "search",
            agent_id="a" if d % 2 else "b",
            success=d % 10 != 0,
            duration_ms=d,
            error=None if d % 10 else REFUSED,
        )
    store.log_tool_call("search", agent_id="a", success=True)  # no duration: counted, not in the percentiles
    store.log_tool_call("edit", agent_id="a", success=True, duration_ms=7, tool_type="builtin")
    m = {t.tool_name: t for t in store.tool_metrics()}
    s = m["search"]
    assert (s.calls, s.successes, s.failures, s.success_rate) == (101, 91, 10, round(91 / 101, 4))
    assert (s.p50_ms, s.p95_ms) == (50, 95)
    assert s.last_error_signature == store.error_signature(REFUSED).id
    assert (m["edit"].p50_ms, m["edit"].p95_ms, m["edit"].last_failure_at) == (7, 7, None)
    cols = [
        "tool_type",
        "tool_name",
        "calls",
        "successes",
        "failures",
        "success_rate",
        "p50_ms",
        "p95_ms",
        "last_failure_at",
        "last_error_signature",
    ]
    cur = store._core.backend.execute(f"SELECT {', '.join(cols)} FROM v_tool_metrics")
    view = {r["tool_name"]: r for r in (dict(zip(cols, row)) for row in cur.fetchall())}
    for name, fm in m.items():
        r = view[name]
        assert (r["calls"], r["successes"], r["failures"]) == (fm.calls, fm.successes, fm.failures)
        assert float(r["success_rate"]) == fm.success_rate
        assert (r["p50_ms"], r["p95_ms"], r["last_error_signature"]) == (fm.p50_ms, fm.p95_ms, fm.last_error_signature)
    only_b = {t.tool_name: t for t in store.tool_metrics(agent_id="b")}
    assert only_b["search"].calls == 50 and "edit" not in only_b
    stats = store.stats()
    assert [t["tool_name"] for t in stats["tools"]] == ["search", "edit"]
    assert [t["tool_name"] for t in store.stats(agent_id="b")["tools"]] == ["search"]


def test_export_import_round_trip_and_idempotent(store, tmp_path, settings):
    store.remember("use the mirror when the index is down", type="success", agent_id="a")
    kept = [
        store.log_tool_call(
            "pip",
            agent_id="a",
            success=False,
            error=REFUSED,
            parameters={"pkg": "numpy"},
            result="x" * 50,
            duration_ms=3.5,
            task_id="T1",
        ),
        store.log_tool_call("ls", agent_id="b", success=True, namespace="other"),
    ]
    path = tmp_path / "out.jsonl"
    store.export_jsonl(path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    assert lines[0]["version"] == 5  # the failed call's error left a template of the miner: a state record (format 5)
    assert sum(1 for x in lines if x.get("record") == "tool_call") == 2
    with MemoryStore(tmp_path / "copy.db", settings=settings) as copy:
        first = copy.import_jsonl(path)
        assert (first.inserted, first.tool_calls) == (1, 2)
        again = copy.import_jsonl(path)
        assert (again.unchanged, again.tool_calls) == (1, 0)
        got = {c.uid: c for c in copy.tool_calls()}
        for c in kept:
            a, b = c.model_dump(exclude={"id"}), got[c.uid].model_dump(exclude={"id"})
            assert a == b
    only_other = tmp_path / "other.jsonl"
    store.export_jsonl(only_other, namespace="other")
    recs = [json.loads(x) for x in only_other.read_text().splitlines()[1:]]
    assert [r["tool_name"] for r in recs] == ["ls"]


def test_import_checks_tool_call_records_first(store, tmp_path):
    header = json.dumps({"format": "harness-memory", "version": 2})
    good = {
        "record": "tool_call",
        "uid": "u1",
        "namespace": "default",
        "agent_id": "a",
        "tool_type": "builtin",
        "tool_name": "t",
        "success": True,
        "created_at": 1_767_225_600.0,
        "result": f"token={SECRET}",
    }
    cases = [
        ({**good, "record": "thing"}, "unknown record kind"),
        ({**good, "extra": 1}, "unknown fields"),
        ({**good, "success": "yes"}, "success"),
        ({k: x for k, x in good.items() if k != "uid"}, "missing"),
        ({**good, "duration_ms": -5}, "duration_ms"),
    ]
    for rec, msg in cases:
        p = tmp_path / "bad.jsonl"
        p.write_text(header + "\n" + json.dumps(good | {"uid": "u0"}) + "\n" + json.dumps(rec) + "\n")
        with pytest.raises(ImportFormatError, match=f"bad.jsonl:3: .*{msg}"):
            store.import_jsonl(p)
        assert _rows(store) == 0
    p = tmp_path / "good.jsonl"
    p.write_text(header + "\n" + json.dumps(good) + "\n")
    assert store.import_jsonl(p).tool_calls == 1
    assert SECRET not in store.tool_calls()[0].result  # imported text is redacted like logged text


def test_clear_namespace_removes_its_tool_calls_only(store):
    store.remember("run-1 note", type="success", agent_id="a", namespace="run-1")
    store.log_tool_call("t", agent_id="a", success=True, namespace="run-1")
    store.log_tool_call("t", agent_id="a", success=True, namespace="run-2")
    assert store.clear("run-1") == 1
    assert [c.namespace for c in store.tool_calls()] == ["run-2"]
    with pytest.raises(InvalidInputError):
        store.clear("")
    assert _rows(store) == 1


def test_expire_prunes_by_retention(db_path):
    clock = ManualClock()
    settings = Settings(maintenance={"tool_call_retention_days": 7})
    with MemoryStore(db_path, settings=settings, clock=clock) as s:
        s.log_tool_call("old", agent_id="a", success=True)
        clock.advance(6 * 86400)
        s.log_tool_call("recent", agent_id="a", success=True)
        clock.advance(2 * 86400)
        assert s.run_job("expire", dry_run=True).counts["tool_calls_pruned"] == 1
        assert _rows(s) == 2
        assert s.run_job("expire").counts["tool_calls_pruned"] == 1
        assert [c.tool_name for c in s.tool_calls()] == ["recent"]


def test_cli_log_list_metrics_and_stats(tmp_path):
    db = str(tmp_path / "cli.db")
    env = {**os.environ, "HARNESS_MEMORY_DB": db}

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "harness_memory", *args],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )

    r = cli(
        "log-tool-call",
        "http_get",
        "--agent",
        "a",
        "--failure",
        "--type",
        "http",
        "--error",
        REFUSED,
        "--params",
        '{"url": "http://localhost:9"}',
        "--duration-ms",
        "12",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    logged = json.loads(r.stdout)
    assert logged["error_category"] == "network" and logged["parameters"] == {"url": "http://localhost:9"}
    assert cli("log-tool-call", "ls", "--agent", "a", "--success", "--duration-ms", "3").returncode == 0
    bad = cli("log-tool-call", "ls", "--agent", "a", "--success", "--params", "{nope")
    assert bad.returncode == 2 and "InvalidInputError" in bad.stderr
    listed = json.loads(cli("tool-calls", "--failed", "--json").stdout)
    assert [c["tool_name"] for c in listed] == ["http_get"]
    metrics = json.loads(cli("tool-calls", "--metrics", "--json").stdout)
    assert {m["tool_name"]: m["p50_ms"] for m in metrics} == {"http_get": 12.0, "ls": 3.0}
    st = json.loads(cli("stats", "--json").stdout)
    assert {r["tool_name"] for r in st["views"]["v_tool_metrics"]} == {"http_get", "ls"}
    assert {r["tool_name"] for r in st["tools"]} == {"http_get", "ls"}


def test_rest_log_and_list_own_calls(tmp_path):
    from test_api import Server

    settings = Settings(api_tokens={"tok-a": "agent-a", "tok-b": "agent-b"}, api_admin_token="tok-admin")
    with Server(tmp_path / "api.db", settings) as url, httpx.Client(base_url=url, timeout=30) as h:
        ha, hb = {"Authorization": "Bearer tok-a"}, {"Authorization": "Bearer tok-b"}
        r = h.post(
            "/api/tool-calls",
            headers=ha,
            json={"tool_name": "web", "success": False, "error": REFUSED, "parameters": {"q": "x"}, "duration_ms": 5},
        )
        assert r.status_code == 201, r.text
        assert r.json()["agent_id"] == "agent-a" and r.json()["error_category"] == "network"
        assert h.post("/api/tool-calls", headers=hb, json={"tool_name": "ls", "success": True}).status_code == 201
        bad = h.post("/api/tool-calls", headers=ha, json={"tool_name": "x", "success": True, "error": "boom"})
        assert bad.status_code == 422 and bad.json()["error"] == "InvalidInputError"
        assert [c["tool_name"] for c in h.get("/api/tool-calls", headers=ha).json()] == ["web"]
        # another agent's id in the query is ignored: an agent lists its own calls only
        assert [
            c["tool_name"] for c in h.get("/api/tool-calls", headers=hb, params={"agent_id": "agent-a"}).json()
        ] == ["ls"]
        admin = h.get("/api/tool-calls", headers={"Authorization": "Bearer tok-admin"}).json()
        assert sorted(c["tool_name"] for c in admin) == ["ls", "web"]
        st = h.get("/api/memory/stats", headers=hb).json()
        assert [t["tool_name"] for t in st["tools"]] == ["ls"]


def test_mcp_error_lookup_names_failing_tools(tmp_path):
    from test_mcp import _session_run, _text

    db = tmp_path / "mcp.db"
    with MemoryStore(db) as s:
        s.log_tool_call("http_get", agent_id="someone", success=False, tool_type="http", error=REFUSED)

    async def steps(session):
        return _text(
            await session.call_tool("error_lookup", {"error": "ConnectionRefusedError: [Errno 111] Connection refused"})
        )

    out = asyncio.run(_session_run(db, steps))
    assert [(t["tool_name"], t["failures"]) for t in out["failing_tools"]] == [("http_get", 1)]


def test_a_huge_result_costs_the_bound(store):
    huge = "y" * (5 << 20)
    call = store.log_tool_call("cat", agent_id="a", success=True, result=huge)
    assert call.result_bytes == 5 << 20 and len(call.result) <= store.settings.tool_result_max_bytes
