"""JSONL export/import of what a move between backends must keep besides the memories (issue 10):
keyed memories' history, the access log, the technique ledger and the template miner's state."""

from __future__ import annotations

import json

import pytest

from harness_memory import ImportFormatError, MemoryStore
from harness_memory.testing import ManualClock

ERRORS = [
    "ModuleNotFoundError: No module named 'tenacity'",
    "ConnectionError: timed out after 30s to 10.0.0.7:5432",
    "AssertionError: expected 200, got 503",
]


def _fill(s: MemoryStore, clock: ManualClock) -> None:
    m = s.remember(
        "pin the proxy",
        type="success",
        agent_id="a",
        tags=["net"],
        key="proxy",
        error="ProxyError: Cannot connect to proxy 10.0.0.1:3128",
    )
    clock.advance(60)
    s.remember("pin the proxy and the CA bundle", type="success", agent_id="a", key="proxy", tags=["net", "tls"])
    clock.advance(60)
    s.remember("pin the proxy, the CA bundle and NO_PROXY", type="success", agent_id="a", key="proxy")
    s.remember("a note in another namespace", type="decision", agent_id="b", namespace="other", key="n")
    s.remember("a note in another namespace, edited", type="decision", agent_id="b", namespace="other", key="n")
    for k in range(3):
        clock.advance(30)
        s.recall("proxy CA bundle", agent_id="a", task_id=f"T-{k}")
    s.recall("proxy", agent_id="a")  # the same memory twice at one instant: two equal log rows
    s.recall("proxy", agent_id="a")
    s.apply(m.id, helpful=True, agent_id="a", outcome="worked")
    s.archive(s.remember("archived along the way", type="context", agent_id="a").id)
    for t, err in enumerate(ERRORS):
        for tech, ok in (("prompt_restructure", False), ("decomposition", t != 1)):
            clock.advance(10)
            s.record_outcome(f"task-{t}", tech, ok, error=f"{err} (run {t})", agent_id="a", notes=f"try {tech}")


def _state(s: MemoryStore) -> dict[str, list]:
    """Everything these records carry, without the store's own ids."""
    b = s._core.backend
    q = lambda sql: sorted((tuple(r) for r in b.execute(sql).fetchall()), key=repr)  # noqa: E731
    return {
        "history": q(
            "SELECT m.uid, h.version, h.content, h.content_hash, h.context_tags, h.importance, h.metadata, "
            "h.valid_from, h.valid_until FROM memory_history h JOIN memories m ON m.id = h.memory_id"
        ),
        "access": q(
            "SELECT m.uid, a.agent_id, a.session_id, a.task_id, a.access_type, a.was_helpful, a.outcome, "
            "a.score, a.timestamp, a.error_signature, a.duration_ms FROM memory_access_log a "
            "JOIN memories m ON m.id = a.memory_id"
        ),
        "attempts": q(
            "SELECT task_id, technique, result, error_signature, error_category, agent_id, agent_type, "
            "task_category, notes, attempted_at, error_basis IS NOT NULL FROM task_attempts"
        ),
        "techniques": q(
            "SELECT technique, level, error_key, error_category, successes, failures, attempts, "
            "success_rate, agent_types, task_categories, example_successes, example_failures, "
            "first_used, last_used, last_success, last_failure FROM technique_effectiveness"
        ),
        "templates": q(
            "SELECT sig, partition, tokens, category, exception, seen, created_at, updated_at FROM error_templates"
        ),
        "links": q("SELECT sig, canonical, linked_at FROM error_signature_links"),
    }


def _all_counts(s: MemoryStore) -> dict[str, int]:
    b = s._core.backend
    return {
        t: b.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
        for t in (
            "memories",
            "memory_tags",
            "memory_history",
            "memory_merges",
            "memory_access_log",
            "fix_links",
            "tool_calls",
            "task_attempts",
            "technique_effectiveness",
            "error_templates",
            "error_signature_links",
        )
    }


def test_a_move_keeps_history_access_log_ledger_and_templates(tmp_path, db):
    """SQLite -> the backend under test -> SQLite: every record the same, and the same behaviour."""
    clock = ManualClock()
    with MemoryStore(tmp_path / "source.db", clock=clock) as a:
        _fill(a, clock)
        a.export_jsonl(tmp_path / "a.jsonl")
        want = _state(a)
        decision_a = a.select_technique("task-new", f"{ERRORS[0]} (run 9)", seed=3)
        sigs_a = [a.error_signature(f"{e} (run 7)").id for e in ERRORS]
        stats_a = sorted(a.technique_stats(level="category"), key=lambda d: (d["technique"], d["error_key"]))
    assert all(len(v) > 0 for k, v in want.items() if k != "links")
    assert len(want["history"]) == 3 and any(r[4] == "updated" and r[6] == "archived" for r in want["access"])
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    assert lines[0]["version"] == 5
    kinds = {x.get("record") for x in lines[1:]}
    assert {"history", "access", "attempt", "technique", "error_template"} <= kinds

    with MemoryStore(db) as b:
        before = _all_counts(b)
        rep = b.import_jsonl(tmp_path / "a.jsonl")
        assert (rep.state.history, rep.state.access, rep.state.attempts) == (
            len(want["history"]),
            len(want["access"]),
            len(want["attempts"]),
        )
        assert rep.state.techniques == len(want["techniques"]) and rep.state.templates == len(want["templates"])
        assert _state(b) == want
        # the moved store behaves the same: the selector's estimates, the same signature for the same error
        assert b.select_technique("task-new", f"{ERRORS[0]} (run 9)", seed=3).technique == decision_a.technique
        assert [b.error_signature(f"{e} (run 7)").id for e in ERRORS] == sigs_a
        assert sorted(b.technique_stats(level="category"), key=lambda d: (d["technique"], d["error_key"])) == stats_a
        # idempotent: a second import adds nothing anywhere
        counts = _all_counts(b)
        again = b.import_jsonl(tmp_path / "a.jsonl")
        assert again.inserted == 0 and again.state.access == 0 and again.state.attempts == 0
        assert (again.state.history, again.state.techniques, again.state.templates) == (0, 0, 0)
        assert _all_counts(b) == counts and counts != before
        assert _state(b) == want
        b.export_jsonl(tmp_path / "b.jsonl")
    a_lines = (tmp_path / "a.jsonl").read_text().splitlines()
    b_lines = (tmp_path / "b.jsonl").read_text().splitlines()
    assert a_lines[1:] == b_lines[1:]  # record for record (line 1 is the header)
    with MemoryStore(tmp_path / "back.db") as c:
        c.import_jsonl(tmp_path / "b.jsonl")
        assert _state(c) == want


def test_a_filtered_export_carries_its_memories_history_and_log_only(tmp_path, db):
    clock = ManualClock()
    with MemoryStore(db, clock=clock) as a:
        _fill(a, clock)
        a.export_jsonl(tmp_path / "other.jsonl", namespace="other")
        a.export_jsonl(tmp_path / "agent-a.jsonl", agent_id="a")
    recs = [json.loads(x) for x in (tmp_path / "other.jsonl").read_text().splitlines()[1:]]
    assert {r.get("record") for r in recs} == {None, "history", "access"}  # its edit is in its log; no ledger
    with MemoryStore(tmp_path / "copy.db") as b:
        rep = b.import_jsonl(tmp_path / "agent-a.jsonl")
        st = _state(b)
        assert st["history"] and st["access"] and rep.state.access == len(st["access"])
        assert st["attempts"] == [] and st["techniques"] == [] and st["templates"] == []


def test_the_ledger_keeps_the_side_with_more_evidence(tmp_path, db):
    clock = ManualClock()
    with MemoryStore(tmp_path / "small.db", clock=clock) as a:
        a.record_outcome("t1", "fresh_start", True, error=ERRORS[2])
        a.export_jsonl(tmp_path / "small.jsonl")
    with MemoryStore(db, clock=clock) as b:
        for k in range(3):
            b.record_outcome(f"u{k}", "fresh_start", k > 0, error=ERRORS[2])
        mine = {(r["technique"], r["level"]): r["attempts"] for r in b.technique_stats()}
        b.import_jsonl(tmp_path / "small.jsonl")
        after = {(r["technique"], r["level"]): r["attempts"] for r in b.technique_stats()}
        assert after == mine  # 3 attempts of its own beat the file's 1
        assert b._core.backend.execute("SELECT COUNT(*) FROM task_attempts").fetchone()[0] == 4  # attempts merge


@pytest.mark.parametrize(
    "kind,change,message",
    [
        ("access", {"memory": "not-in-the-file"}, "not in the file"),
        ("access", {"access_type": "peeked"}, "access_type"),
        ("access", {"was_helpful": "yes"}, "was_helpful"),
        ("access", {"duration_ms": -1}, "duration_ms"),
        ("history", {"version": 0}, "version"),
        ("history", {"content": ""}, "content"),
        ("attempt", {"result": "maybe"}, "result"),
        ("attempt", {"attempted_at": "yesterday"}, "attempted_at"),
        ("technique", {"level": "planet"}, "level"),
        ("technique", {"successes": -2}, "successes"),
        ("error_template", {"tokens": "not a list"}, "tokens"),
        ("error_link", {"canonical": None}, "missing"),
        ("access", {"surprise": 1}, "unknown fields"),
    ],
)
def test_a_bad_record_imports_nothing(tmp_path, db, kind, change, message):
    clock = ManualClock()
    with MemoryStore(tmp_path / "source.db", clock=clock) as a:
        _fill(a, clock)
        b_ = a._core.backend
        with b_.write() as c:  # a link, so that kind is in the file too
            c.execute("INSERT INTO error_signature_links(sig, canonical, linked_at) VALUES ('err_old', 'err_new', 1.0)")
        a.export_jsonl(tmp_path / "a.jsonl")
    lines = (tmp_path / "a.jsonl").read_text().splitlines()
    k = next(i for i, x in enumerate(lines) if json.loads(x).get("record") == kind)
    rec = {**json.loads(lines[k]), **change}
    lines[k] = json.dumps(rec)
    (tmp_path / "bad.jsonl").write_text("\n".join(lines) + "\n")
    with MemoryStore(db) as b:
        before = _all_counts(b)
        with pytest.raises(ImportFormatError, match=message):
            b.import_jsonl(tmp_path / "bad.jsonl")
        assert _all_counts(b) == before


def test_the_import_command_reports_the_records(tmp_path):
    import subprocess
    import sys

    def run(*args):
        p = subprocess.run([sys.executable, "-m", "harness_memory", *args], capture_output=True, text=True, timeout=120)
        assert p.returncode == 0, p.stderr
        return p.stdout

    a, b = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    run("remember", "the proxy needs the CA bundle", "--type", "success", "--agent", "a", "--db", a)
    run("recall", "proxy CA bundle", "--agent", "a", "--db", a)
    run("outcome", "T-1", "fresh_start", "--success", "--error", "ValueError: bad value 3", "--db", a)
    run("export", str(tmp_path / "x.jsonl"), "--db", a)
    rep = json.loads(run("import", str(tmp_path / "x.jsonl"), "--json", "--db", b))
    assert rep["inserted"] >= 1 and rep["access_log"] >= 1 and rep["attempts"] == 1 and rep["techniques"] >= 1
    assert rep["templates"] >= 1
    again = json.loads(run("import", str(tmp_path / "x.jsonl"), "--json", "--db", b))
    assert (again["inserted"], again["access_log"], again["attempts"], again["templates"]) == (0, 0, 0, 0)
