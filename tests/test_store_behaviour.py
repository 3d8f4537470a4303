"""MemoryStore's own promises, read back through its public calls: what it refuses (and under which
argument's name), its documented defaults, who may delete what, what ``apply`` and ``reembed`` leave
behind, and what ``stats`` shows one agent. Real SQLite files throughout."""

from __future__ import annotations

import pytest

from conftest import table_snapshot
from harness_memory import (
    EmbedderMismatchError,
    InvalidInputError,
    MemoryNotFoundError,
    MemoryStore,
    Settings,
)
from harness_memory.testing import FakeEmbedder, ManualClock


@pytest.fixture
def s(tmp_path):
    with MemoryStore(tmp_path / "m.db", settings=Settings(), clock=ManualClock(), embedder=FakeEmbedder(32)) as st:
        yield st


# -- opening -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("kwargs", [{"clock": 5}, {"clock": "now"}, {"allow_embedder_change": "yes"}])
def test_a_store_refuses_a_clock_it_cannot_call_and_a_flag_that_is_not_a_bool(tmp_path, kwargs):
    with pytest.raises(InvalidInputError):
        MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(8), **kwargs)


def test_a_store_opens_without_a_clock_and_stamps_memories_with_the_time(tmp_path):
    import time

    before = time.time()
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(8)) as st:
        m = st.remember("stamped now", type="success", agent_id="a")
    assert before - 1 <= m.created_at.timestamp() <= time.time() + 1


def test_the_mismatch_error_names_the_recorded_and_the_configured_embedder(tmp_path):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(32, name="old-model")) as st:
        st.remember("made with the old model", type="success", agent_id="a")
    with pytest.raises(EmbedderMismatchError) as info:
        MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(16, name="new-model"))
    text = str(info.value)
    assert "'old-model' (32 dimensions)" in text
    assert "'new-model' (16)" in text
    assert "HARNESS_MEMORY_EMBEDDER=old-model" in text


# -- jobs ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("holder", ["", "two\nlines"])
def test_run_job_refuses_a_holder_that_is_not_an_id(s, holder):
    before = table_snapshot(s)
    with pytest.raises(InvalidInputError, match="^holder "):
        s.run_job("expire", holder=holder)
    assert table_snapshot(s) == before


def test_run_job_returns_the_recorded_run(s):
    run = s.run_job("expire", holder="nightly")
    assert run.job == "expire" and run.status == "ok" and run.holder == "nightly"
    assert s.job_status()["runs"][0]["holder"] == "nightly"


# -- writing ---------------------------------------------------------------------------------------------
def test_importance_defaults_documented_for_each_kind_of_write(s):
    assert s.remember("a plain memory", type="success", agent_id="a").importance == 0.5
    assert s.learn_success("a", "pin the dependency").importance == 0.7  # "importance 0.7 unless given"
    assert s.learn_success("a", "split the task", importance=0.2).importance == 0.2


def test_learn_success_joins_details_to_the_pattern(s):
    assert s.learn_success("a", "retry the flaky step", "with a fresh cache").content == (
        "retry the flaky step: with a fresh cache"
    )
    assert s.learn_success("a", "rerun with -x", "").content == "rerun with -x"
    with pytest.raises(InvalidInputError, match="^details "):
        s.learn_success("a", "rerun", 42)


def test_remember_normalised_refuses_an_object_without_normalise(s):
    with pytest.raises(InvalidInputError, match=r"^normaliser must have normalise\(text, \*, types\)"):
        s.remember_normalised("a note", agent_id="a", normaliser=object())


# -- refusals name the argument ------------------------------------------------------------------------
def test_a_refused_argument_is_named_in_the_error(s):
    m = s.remember("kept", type="success", agent_id="a")
    with pytest.raises(InvalidInputError, match="^include_global "):
        s.recall("kept", agent_id="a", include_global="yes")
    with pytest.raises(InvalidInputError, match="^outcome "):
        s.apply(m.id, helpful=True, outcome=3)
    with pytest.raises(InvalidInputError, match="^namespace "):
        s.clear("")
    with pytest.raises(InvalidInputError, match="^error must be a string, got int"):
        s.record_outcome("t1", "retry", False, error=404)
    with pytest.raises(InvalidInputError, match="^baseline "):
        s.on_task_error({"id": "t1", "title": "build"}, "ValueError: bad", baseline=123)
    assert s.get(m.id).times_applied == 0


@pytest.mark.parametrize("bad", [1.5, -0.1, "0.5", True])
def test_has_seen_error_refuses_a_similarity_outside_zero_to_one(s, bad):
    s.learn_error("a", "TimeoutError: the runner did not answer in 30 s")
    with pytest.raises(InvalidInputError, match="^min_similarity "):
        s.has_seen_error("a", "TimeoutError: the runner did not answer in 30 s", min_similarity=bad)
    assert s.has_seen_error("a", "TimeoutError: the runner did not answer in 30 s", min_similarity=1.0)


# -- reads ------------------------------------------------------------------------------------------------
def test_get_by_type_without_a_namespace_reads_the_default_one(tmp_path):
    with MemoryStore(
        tmp_path / "m.db", settings=Settings(namespace="team"), clock=ManualClock(), embedder=FakeEmbedder(8)
    ) as st:
        mine = st.remember("in the default namespace", type="success", agent_id="a")
        st.remember("elsewhere", type="success", agent_id="a", namespace="other")
        assert [m.id for m in st.get_by_type("success", agent_id="a")] == [mine.id]


def test_technique_stats_rows_are_keyed_by_column(s):
    s.record_outcome("t1", "retry", True, error="ConnectionResetError: peer reset")
    rows = s.technique_stats()
    assert [(r["technique"], r["successes"], r["failures"], r["attempts"]) for r in rows] == [("retry", 1, 0, 1)]
    assert rows[0]["success_rate"] == 1.0 and isinstance(rows[0]["agent_types"], list)


# -- who may delete --------------------------------------------------------------------------------------
def test_an_agent_may_forget_its_own_memory_but_not_another_agents(s):
    theirs = s.remember("b's memory", type="success", agent_id="b")
    mine = s.remember("a's memory", type="success", agent_id="a")
    with pytest.raises(MemoryNotFoundError):
        s.forget(theirs.id, agent_id="a")
    assert s.get(theirs.id).content == "b's memory"
    s.forget(mine.id, agent_id="a")
    with pytest.raises(MemoryNotFoundError):
        s.get(mine.id)


# -- apply ---------------------------------------------------------------------------------------------------
def test_apply_counts_the_use_and_logs_it_for_that_agent(s):
    m = s.remember("restart the runner", type="success", agent_id="a")
    s.apply(m.id, helpful=True, agent_id="a", outcome="it worked")
    s.apply(m.id, helpful=False, agent_id="a")
    got = s.get(m.id)
    assert (got.times_applied, got.times_successful, got.success_rate) == (2, 1, 0.5)
    assert dict(s.stats(agent_id="a")["access_log"]).get("applied") == 2
    assert dict(s.stats(agent_id="b")["access_log"]).get("applied") is None


def test_apply_with_the_error_it_fixed_makes_it_that_errors_fix(s):
    err = "ModuleNotFoundError: No module named 'yaml'"
    fix = s.remember("pip install pyyaml", type="success", agent_id="a")
    assert s.fixes_for(err, agent_id="a") == []
    s.apply(fix.id, helpful=True, agent_id="a", error=err)
    assert [f.memory.id for f in s.fixes_for(err, agent_id="a")] == [fix.id]


# -- reembed ---------------------------------------------------------------------------------------------------
def test_reembed_gives_every_memory_a_vector_in_the_new_space(tmp_path):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(32, name="old")) as st:
        ids = [st.remember(f"note number {i}", type="success", agent_id="a").id for i in range(5)]
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(16, name="new"), allow_embedder_change=True) as st:
        assert st.reembed() == 5
        assert st.stats()["pending_embeddings"] == 0
        assert st.stats()["embedder"] == {"name": "new", "dimensions": 16}
        for i, mid in enumerate(ids):
            hits = st.recall(f"note number {i}", agent_id="a", channels={"vector"}, record=False)
            assert hits and hits[0].memory.id == mid


# -- stats for one agent -------------------------------------------------------------------------------------------
def test_stats_for_one_agent_show_its_own_and_global_memories_without_other_agents_ids(s):
    s.remember("a's own", type="success", agent_id="a")
    s.remember("b's shared", type="success", agent_id="b", scope="global")
    s.remember("b's private", type="failure", agent_id="b")
    mine = s.stats(agent_id="a")
    assert mine["memories"] == 2
    rows = {(r["agent_id"], r["type"]): r for r in mine["by_agent_type"]}
    assert set(rows) == {("a", "success"), (None, "success")}
    assert rows[("a", "success")]["count"] == 1
    assert rows[("a", "success")]["avg_relevance"] == pytest.approx(s.get(1).relevance_score)
    assert rows[("a", "success")]["avg_success_rate"] == pytest.approx(s.get(1).success_rate)
    everyone = {(r["agent_id"], r["type"]): r["count"] for r in s.stats()["by_agent_type"]}
    assert everyone == {("a", "success"): 1, ("b", "success"): 1, ("b", "failure"): 1}


def test_closing_a_store_releases_the_database_file(tmp_path):
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(8)) as st:
        st.remember("written before the close", type="success", agent_id="a")
        assert (tmp_path / "m.db-wal").exists()
    # the last connection closed: the write-ahead log is checkpointed into the file and removed
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.db"]
    with MemoryStore(tmp_path / "m.db", embedder=FakeEmbedder(8)) as again:
        assert [m.content for m in again.get_by_type("success", agent_id="a")] == ["written before the close"]
