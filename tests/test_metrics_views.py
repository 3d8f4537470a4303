"""The metrics views (docs/metrics.md) and `harness-memory stats` on both backends (issue 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from harness_memory import MemoryStore

# every view docs/metrics.md documents, with its columns in order
VIEWS = {
    "v_memories_by_agent_type": [
        "namespace",
        "agent_id",
        "memory_type",
        "memories",
        "archived",
        "avg_relevance",
        "avg_success_rate",
        "times_applied",
    ],
    "v_effective_memories": [
        "id",
        "namespace",
        "agent_id",
        "memory_type",
        "content",
        "times_applied",
        "times_successful",
        "success_rate",
        "relevance_score",
    ],
    "v_technique_summary": None,
    "v_access_by_day": ["day", "access_type", "accesses"],
    "v_recall_to_success": ["memory_type", "recalled", "applied", "applied_helpfully", "recall_to_success"],
    "v_job_runs": ["job", "status", "started", "seconds", "counts", "error", "holder"],
    "v_tool_metrics": [
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
    ],
    "task_history": None,
    "v_task_errors": ["task_id", "error_signature", "error_category", "first_at", "repeated"],
    "v_failures_by_week": ["week_start", "failures", "repeated", "repeat_rate"],
    "v_tasks": ["task_id", "first_at", "last_at", "attempts", "fixed", "escalated"],
    "v_retries_by_week": ["week_start", "tasks", "attempts", "retries_per_task", "fixed", "escalated"],
    "v_techniques_by_week": ["week_start", "attempts", "successes", "escalations"],
    "v_helpfulness_by_week": ["week_start", "applied", "helpful", "helpfulness"],
    "v_memories_by_week": ["week_start", "memory_type", "agent_id", "created"],
    "v_recall_latency": ["top_memory_id", "agent_id", "session_id", "task_id", "timestamp", "duration_ms"],
    "v_recall_latency_by_week": ["week_start", "recalls", "p50_ms", "p95_ms", "max_ms"],
}


def _fill(s: MemoryStore) -> None:
    m = s.remember("pin the proxy", type="success", agent_id="a", error="ProxyError: Cannot connect to proxy 10.0.0.1")
    for _ in range(3):
        s.apply(m.id, helpful=True, agent_id="a")
    s.recall("proxy", agent_id="a")
    s.record_outcome("t1", "fresh_start", False, error="ValueError: bad value 1")
    s.record_outcome("t1", "decomposition", True, error="ValueError: bad value 1")
    s.record_outcome("t2", "fresh_start", True, error="ValueError: bad value 2")
    s.log_tool_call("pip", agent_id="a", success=True, duration_ms=3.0)
    s.run_job("decay")


def test_every_documented_view_answers_with_its_columns(db):
    with MemoryStore(db) as s:
        _fill(s)
        b = s._core.backend
        for view, cols in VIEWS.items():
            cur = b.execute(f"SELECT * FROM {view}")
            names = [d[0] for d in cur.description]
            rows = cur.fetchall()
            assert rows, view  # _fill gives every view something to show
            if cols is not None:
                assert names == cols, view
        helpful = b.execute("SELECT applied, helpful, helpfulness FROM v_helpfulness_by_week").fetchall()
        assert [tuple(r) for r in helpful] == [(3, 3, 1)]
        retries = b.execute("SELECT tasks, attempts, fixed FROM v_retries_by_week").fetchall()
        assert [tuple(r) for r in retries] == [(2, 3, 2)]
        assert s.stats()["memories"] >= 1


def test_stats_command_on_every_backend(db):
    with MemoryStore(db) as s:
        _fill(s)
    env = {**os.environ, "HARNESS_MEMORY_DB": "", "COLUMNS": "400"}
    r = subprocess.run(
        [sys.executable, "-m", "harness_memory", "stats", "--json", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["memories"] >= 3 and out["embedder"]["name"]
    assert out["views"]["v_effective_memories"][0]["content"] == "pin the proxy"
    assert {t["technique"] for t in out["views"]["v_technique_summary"]} == {"fresh_start", "decomposition"}
    assert out["views"]["v_tool_metrics"][0]["p50_ms"] == 3.0
    r = subprocess.run(
        [sys.executable, "-m", "harness_memory", "stats", "--db", str(db)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert "technique effectiveness" in r.stdout and "pin the proxy" in r.stdout


def test_a_recall_with_several_hits_is_one_latency_row_on_its_top_hit(db):
    # the access log holds a row per hit; the recall's wall time goes on its first (top) hit only, so the
    # latency views count recalls, not hits
    with MemoryStore(db) as s:
        for word in ("alpha", "beta", "gamma"):
            s.remember(f"proxy settings for the {word} cluster", type="success", agent_id="a")
        hits = s.recall("proxy settings cluster", agent_id="a", limit=3)
        assert len(hits) == 3
        assert s._core.access.wait_written()  # written by the store's access thread
        b = s._core.backend
        rows = b.execute("SELECT top_memory_id, duration_ms FROM v_recall_latency").fetchall()
        assert len(rows) == 1 and rows[0][0] == hits[0].memory.id and rows[0][1] >= 0
        assert [r[0] for r in b.execute("SELECT recalls FROM v_recall_latency_by_week").fetchall()] == [1]
        logged = b.execute("SELECT COUNT(*) FROM memory_access_log WHERE access_type = 'query'").fetchone()[0]
        assert logged == 3
