from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from conftest import table_snapshot, worker_processes
from harness_memory import InvalidInputError, MemoryStore, Settings

IMPORT_ERR = "ModuleNotFoundError: No module named 'tenacity'"
LADDER = ["prompt_restructure", "decomposition", "fresh_start", "escalate"]


def test_task_signature_is_stable_under_order_case_and_punctuation(store):
    a = store.task_signature(
        {"title": "Add retries to the HTTP client", "category": "feature", "agent_type": "build", "effort": "M"}
    )
    b = store.task_signature({"title": "http CLIENT: retry!", "category": "Feature", "owner": "build", "effort": "m"})
    assert a == b == "feature:build:m:client-http-retry"
    c = store.task_signature(
        {"title": "Add retries to the HTTP downloader", "category": "feature", "agent_type": "build", "effort": "M"}
    )
    assert c.startswith("feature:build:m:") and c != a
    assert store.task_signature("Fix flaky webhook test") == "any:any:any:flaky-test-webhook"
    with pytest.raises(InvalidInputError):
        store.task_signature(42)
    with pytest.raises(InvalidInputError):
        store.task_signature({"title": "the of and"})


words = st.lists(
    st.sampled_from(["parser", "lexer", "Cache", "HTTP", "retry", "Timeout", "docs"]),
    min_size=1,
    max_size=6,
    unique=True,
)


@given(ws=words, seed=st.integers(0, 1000), punct=st.sampled_from(["", "!", ",", ":", "?"]))
def test_task_signature_property(ws, seed, punct):
    from harness_memory.tasks import task_signature

    shuffled = ws[:]
    random.Random(seed).shuffle(shuffled)
    a = task_signature({"title": " ".join(ws), "category": "bug"})
    b = task_signature({"title": (punct + " ").join(w.upper() for w in shuffled), "category": "BUG"})
    assert a == b


def test_ladder_when_nothing_is_known_and_never_repeats(store):
    d = store.select_technique("T1", IMPORT_ERR)
    assert d.technique == "prompt_restructure" and not d.escalate and "ladder" in d.reason
    store.record_outcome("T1", "prompt_restructure", False, error=IMPORT_ERR)
    d = store.select_technique("T1", IMPORT_ERR)
    assert d.technique == "decomposition" and d.tried == ["prompt_restructure"]
    store.record_outcome("T1", "decomposition", False, error=IMPORT_ERR)
    store.record_outcome("T1", "fresh_start", False, error=IMPORT_ERR)
    d = store.select_technique("T1", IMPORT_ERR)
    assert d.technique == "escalate" and d.escalate and "every technique" in d.reason


def test_retry_limit_escalates(db):
    with MemoryStore(db, settings=Settings(max_retries=2)) as s:
        s.record_outcome("T", "a", False)
        s.record_outcome("T", "b", False)
        d = s.select_technique("T", techniques=["a", "b", "c"])
        assert d.escalate and "retry limit" in d.reason


def test_learns_which_technique_fixes_an_error_and_borrows_from_the_category(store):
    for i in range(6):
        store.record_outcome(f"A{i}", "prompt_restructure", False, error=IMPORT_ERR)
        store.record_outcome(f"A{i}", "fresh_start", True, error=IMPORT_ERR, notes="pinned the dependency")
    d = store.select_technique("NEW", "ModuleNotFoundError: No module named 'backoff'")
    assert d.technique == "fresh_start" and "fresh_start" in d.reason
    est = {e.technique: e for e in d.candidates}
    assert est["fresh_start"].mean > est["decomposition"].mean > est["prompt_restructure"].mean
    # a different import error (new signature, same category) borrows the category's record
    d = store.select_technique("NEW2", "ImportError: cannot import name 'Retry' from 'urllib3.util'")
    assert d.technique == "fresh_start"
    est = {e.technique: e for e in d.candidates}
    assert est["fresh_start"].evidence["signature"] == (0, 0)
    assert est["fresh_start"].evidence["category"] == (6, 0)


def test_costs_make_a_cheap_60_percent_beat_an_expensive_70_percent(db):
    st_ = Settings(technique_costs={"expensive": 3.0, "cheap": 1.0}, ucb_c=0.0)
    with MemoryStore(db, settings=st_) as s:
        for i in range(40):
            s.record_outcome(f"c{i}", "cheap", i % 10 < 6, error=IMPORT_ERR)
            s.record_outcome(f"e{i}", "expensive", i % 10 < 7, error=IMPORT_ERR)
        d = s.select_technique("X", IMPORT_ERR, techniques=["expensive", "cheap"])
        assert d.technique == "cheap"
        est = {e.technique: e for e in d.candidates}
        assert est["expensive"].mean > est["cheap"].mean


def test_floor_escalates_hopeless_errors(db):
    with MemoryStore(db, settings=Settings(success_floor=0.2)) as s:
        for i in range(30):
            for t in ("a", "b"):
                s.record_outcome(f"t{i}", t, False, error=IMPORT_ERR)
        d = s.select_technique("new", IMPORT_ERR, techniques=["a", "b"])
        assert d.escalate and "floor" in d.reason


def test_thompson_is_reproducible_with_a_seed(db):
    with MemoryStore(db, settings=Settings(exploration="thompson")) as s:
        for i in range(5):
            s.record_outcome(f"x{i}", "a", i % 2 == 0, error=IMPORT_ERR)
            s.record_outcome(f"x{i}", "b", i % 3 == 0, error=IMPORT_ERR)
        picks = [s.select_technique("q", IMPORT_ERR, techniques=["a", "b", "c"], seed=7).technique for _ in range(5)]
        assert len(set(picks)) == 1
        draws = {
            s.select_technique("q", IMPORT_ERR, techniques=["a", "b", "c"], seed=k).candidates[0].draw
            for k in range(10)
        }
        assert len(draws) > 1


history = st.lists(
    st.tuples(st.sampled_from(["a", "b", "c", "d"]), st.booleans(), st.sampled_from(["T1", "T2", "T3"])), max_size=25
)


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hist=history, exploration=st.sampled_from(["ucb", "thompson"]), seed=st.integers(0, 100))
def test_selector_properties(tmp_path_factory, hist, exploration, seed):
    with MemoryStore(tmp_path_factory.mktemp("sel") / "s.db", settings=Settings(exploration=exploration)) as s:
        for tech, ok, task in hist:
            s.record_outcome(task, tech, ok, error=IMPORT_ERR if task != "T3" else "TimeoutError: 30s")
        for task in ("T1", "T2", "T3", "fresh"):
            d = s.select_technique(task, IMPORT_ERR, techniques=["a", "b", "c", "d", "escalate"], seed=seed)
            tried = {a.technique for a in s.task_attempts(task)}
            assert d.technique  # always returns one
            assert d.technique == "escalate" or d.technique not in tried
            for e in d.candidates:
                assert 0.0 <= e.mean <= 1.0 and 0.0 <= e.draw <= 1.0 and e.technique not in tried


def test_record_outcome_writes_history_ledger_and_memory(store):
    a = store.record_outcome(
        "T9",
        "decomposition",
        True,
        error=IMPORT_ERR,
        agent_id="build",
        notes="split it",
        agent_type="build",
        task_category="feature",
        task_signature="feature:build:m:x",
    )
    assert a.result == "fixed" and a.error_signature.startswith("err_") and a.error_category == "import_error"
    rows = {r["level"]: r for lvl in ("global", "category", "signature") for r in store.technique_stats(level=lvl)}
    assert rows["global"]["successes"] == 1 and rows["category"]["error_key"] == "import_error"
    assert rows["signature"]["example_successes"] == ["T9"] and rows["signature"]["agent_types"] == ["build"]
    mem = store.recall("decomposition import", agent_id="other")[0].memory  # global: every agent learns
    assert mem.type == "success" and mem.task_signature == "feature:build:m:x"
    # shared: the technique and the masked error, never the agent's notes (issue 9: outcomes kept private)
    assert "decomposition" in mem.content and "split it" not in mem.content
    assert mem.metadata["technique"] == "decomposition"
    store.record_outcome(
        "T10", "fresh_start", True, error=IMPORT_ERR, agent_id="build", notes="private detail", scope="agent"
    )
    assert not [h for h in store.recall("fresh_start", agent_id="other") if "fresh_start" in h.memory.content]
    own = [
        h.memory
        for h in store.recall("fresh_start private detail", agent_id="build")
        if "fresh_start" in h.memory.content
    ]
    assert own and "private detail" in own[0].content and own[0].scope == "agent"
    hist = store._core.backend.execute(
        "SELECT interventions, successful_technique FROM task_history WHERE task_id = 'T9'"
    ).fetchone()
    assert hist == (1, "decomposition")


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(task_id=""),
        dict(technique=None),
        dict(success="yes"),
        dict(result="won"),
        dict(success=True, result="failed"),
        dict(agent_id="a\nb"),
    ],
)
def test_record_outcome_bad_input_writes_nothing(store, kwargs):
    args = dict(task_id="T", technique="a", success=False)
    args.update(kwargs)
    before = table_snapshot(store)
    n = store._core.backend.execute("SELECT COUNT(*) FROM task_attempts").fetchone()[0]
    with pytest.raises(InvalidInputError):
        store.record_outcome(args.pop("task_id"), args.pop("technique"), args.pop("success"), **args)
    assert table_snapshot(store) == before
    assert store._core.backend.execute("SELECT COUNT(*) FROM task_attempts").fetchone()[0] == n


def _record_worker(path, w, n, q):
    errors = []
    with MemoryStore(path) as s:
        for i in range(n):
            try:
                s.record_outcome(
                    f"w{w}-t{i}",
                    "decomposition" if i % 2 else "fresh_start",
                    i % 3 == 0,
                    error=IMPORT_ERR,
                    agent_id=f"agent{w}",
                )
            except Exception as exc:  # noqa: BLE001 - asserted on in the parent
                errors.append(repr(exc))
    q.put(errors)


def test_concurrent_outcome_recording_loses_no_count(tmp_path):
    path = str(tmp_path / "ledger.db")
    with MemoryStore(path):
        pass
    ctx = worker_processes()
    q = ctx.Queue()
    procs = [ctx.Process(target=_record_worker, args=(path, w, 60, q)) for w in range(4)]
    for p in procs:
        p.start()
    assert [q.get(timeout=300) for _ in procs] == [[]] * 4
    for p in procs:
        p.join(timeout=60)
    with MemoryStore(path) as s:
        g = {r["technique"]: r for r in s.technique_stats(level="global")}
        assert g["decomposition"]["attempts"] == g["fresh_start"]["attempts"] == 120
        assert sum(r["successes"] for r in g.values()) == 4 * 20
        assert s._core.backend.execute("SELECT COUNT(*) FROM task_attempts").fetchone()[0] == 240
