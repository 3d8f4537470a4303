"""The harness lifecycle as a harness relies on it: what on_task_start leaves out when the budget is
tight and in which order, the sections and attributes it renders, what on_task_error advises, and
what on_task_complete writes and credits (and that a refused call writes nothing)."""

from __future__ import annotations

import pytest

from conftest import table_snapshot
from harness_memory import InvalidInputError, MemoryStore, Settings
from harness_memory.lifecycle import TaskContext

TYPES = ["plan", "feedback", "discovery", "deadend"]
TASK = {"id": "T1", "title": "Add retry to the HTTP client", "agent_id": "build", "category": "feature"}
ERROR = "ConnectionRefusedError: [Errno 111] Connection refused while fetching https://pypi.org/simple"


@pytest.fixture
def lc(tmp_path):
    with MemoryStore(tmp_path / "lc.db", settings=Settings(extra_types=TYPES, confidence={"inject_min": 0.0})) as s:
        yield s


def _full(lc):
    """A store with a plan, feedback, two relevant experiences, two dead ends, a document and two discoveries."""
    ids = {
        "plan": lc.remember("1. client 2. downloader", type="plan", agent_id="sup", scope="global", key="plan").id,
        "feedback": lc.remember("focus on the retry tests", type="feedback", agent_id="sup", scope="global").id,
        "exp": [
            lc.remember(f"HTTP client retry with backoff, attempt {k}", type="success", agent_id="build").id
            for k in range(2)
        ],
        "dead": [
            lc.remember(f"retrying POSTs blindly duplicates payments ({k})", type="deadend", agent_id="build").id
            for k in range(2)
        ],
        "disc": [
            lc.remember(
                f"the API returns Retry-After headers ({k})", type="discovery", agent_id=f"r{k}", scope="global"
            ).id
            for k in range(2)
        ],
    }
    lc.add_document("HTTP client retry policy: retry idempotent requests only.", title='Retry "policy" <v2>')
    return ids


def test_a_tight_budget_drops_discoveries_then_documents_then_dead_ends_then_experience(lc):
    _full(lc)
    full = lc.on_task_start(TASK, documents=1)
    assert full.dropped == 0
    sections = ["Current plan", "Latest feedback", "Relevant experience", "Dead ends to avoid"]
    sections += ["Reference documents", "Discoveries from other agents"]
    for title in sections:
        assert f"### {title}" in full.prompt
    assert full.prompt.index("### Current plan") < full.prompt.index("### Latest feedback")
    assert full.prompt.index("### Dead ends to avoid") < full.prompt.index("### Reference documents")
    exact = lc.on_task_start(TASK, documents=1, budget_chars=len(full.prompt))
    assert exact.dropped == 0 and exact.prompt == full.prompt  # a prompt of exactly the budget fits
    removed: list[int] = []
    kept = full.injected
    budget = len(full.prompt) - 1
    while kept:
        ctx = lc.on_task_start(TASK, documents=1, budget_chars=budget, record=False)
        assert len(ctx.prompt) <= budget
        assert ctx.dropped == len(full.injected) - len(ctx.injected)
        assert set(ctx.injected) <= set(kept)  # a smaller budget never brings an item back
        removed += [m for m in kept if m not in ctx.injected]
        kept = ctx.injected
        budget = len(ctx.prompt) - 1 if ctx.prompt else 0
        if budget <= 0:
            break
    # the order items leave in: sections from the least useful, the last (lowest-ranked) of each first
    assert removed == list(reversed(full.injected))
    assert removed[:2] == list(reversed(full.injected[-2:]))  # the two discoveries first


def test_when_nothing_fits_the_prompt_is_empty_and_nothing_is_injected(lc):
    ids = _full(lc)
    ctx = lc.on_task_start(TASK, budget_chars=1)
    assert ctx.prompt == "" and ctx.injected == []
    assert ctx.dropped == 2 + len(ctx.hits) + 2 + 2  # plan, feedback, experience, dead ends, discoveries
    assert ctx.plan is not None and ctx.plan.id == ids["plan"]  # still reported, only not in the prompt


@pytest.mark.parametrize("bad", [0, -5])
def test_a_budget_must_be_positive(lc, bad):
    with pytest.raises(InvalidInputError):
        lc.on_task_start(TASK, budget_chars=bad)


@pytest.mark.parametrize("ok", [0, 50])
def test_documents_from_zero_to_fifty_are_accepted(lc, ok):
    lc.add_document("HTTP client retry policy: retry idempotent requests only.", title="policy")
    ctx = lc.on_task_start(TASK, documents=ok)
    assert ("### Reference documents" in ctx.prompt) == (ok > 0)


@pytest.mark.parametrize("bad", [51, -1, True, 1.5, "3"])
def test_other_document_counts_are_refused(lc, bad):
    with pytest.raises(InvalidInputError):
        lc.on_task_start(TASK, documents=bad)


def test_a_documents_title_is_an_inert_attribute(lc):
    _full(lc)
    ctx = lc.on_task_start(TASK, documents=1)
    assert 'document="Retry  policy   v2 "' in ctx.prompt


def test_discoveries_are_other_agents_only_and_name_their_agent(lc):
    own = lc.remember("the API returns Retry-After headers", type="discovery", agent_id="build").id
    other = lc.remember("the API rate-limits at 100 rps", type="discovery", agent_id="research", scope="global").id
    ctx = lc.on_task_start(TASK)
    assert [m.id for m in ctx.discoveries] == [other] and own not in ctx.injected
    assert 'from="research"' in ctx.prompt


def test_a_memory_that_was_applied_shows_its_success_rate(lc):
    m = lc.remember("HTTP client retry with backoff", type="success", agent_id="build")
    plain = lc.on_task_start(TASK, record=False)
    assert f'<memory id="{m.id}" type="success" score=' in plain.prompt  # no record yet: no rate
    lc.apply(m.id, helpful=True, agent_id="build")
    lc.apply(m.id, helpful=False, agent_id="build")
    lc.apply(m.id, helpful=True, agent_id="build")
    ctx = lc.on_task_start(TASK, record=False)
    assert f'<memory id="{m.id}" type="success" success_rate="0.67" applied="3" score=' in ctx.prompt


def test_advice_for_an_unseen_error_and_the_tools_that_failed_with_it(lc):
    first = lc.on_task_error(TASK, ERROR)
    assert "Seen before: no." in first.prompt and not first.seen_before and first.fixes == []
    assert "Tools that failed" not in first.prompt and "What did not work" not in first.prompt
    lc.log_tool_call("http_get", agent_id="build", success=False, tool_type="http", error=ERROR)
    once = lc.on_task_error(TASK, ERROR)
    assert "Tools that failed with this error: http_get (http, 1 time)" in once.prompt
    lc.log_tool_call("http_get", agent_id="build", success=False, tool_type="http", error=ERROR)
    twice = lc.on_task_error(TASK, ERROR)
    assert "http_get (http, 2 times)" in twice.prompt
    assert [t.failures for t in twice.failing_tools] == [2]


def test_advice_names_what_did_not_work_and_what_fixed_it(lc):
    failed = lc.remember("raising the timeout did not help", type="failure", agent_id="build", error=ERROR)
    lc.learn_fix(ERROR, "use the internal mirror", agent_id="build")
    lc.remember("the HTTP client is flaky", type="success", agent_id="build")
    advice = lc.on_task_error(TASK, ERROR)
    assert advice.seen_before and "Seen before: yes." in advice.prompt
    assert [m.id for m in advice.failures] == [failed.id]
    assert "### What did not work" in advice.prompt and "raising the timeout" in advice.prompt
    assert "### What fixed it before" in advice.prompt and "internal mirror" in advice.prompt
    assert advice.fixes and all(m.id != failed.id for m in advice.fixes)
    assert advice.prompt.rstrip().endswith(f"{advice.next.technique} — {advice.next.reason}")


@pytest.mark.parametrize(
    "kw",
    [
        {"techniques": "decomposition"},
        {"techniques": []},
        {"techniques": ["bad\nname"]},
        {"techniques": 3},
        {"seed": True},
        {"seed": 1.5},
        {"record": "yes"},
        {"limit": 0},
    ],
)
def test_refused_advice_changes_nothing(lc, kw):
    before = table_snapshot(lc)
    with pytest.raises(InvalidInputError):
        lc.on_task_error(TASK, ERROR, **kw)
    assert table_snapshot(lc) == before  # not even a learned error template


def test_advice_accepts_a_technique_list_and_a_seed(lc):
    advice = lc.on_task_error(TASK, ERROR, techniques=["decomposition", "fresh_start"], seed=4)
    assert advice.next.technique in ("decomposition", "fresh_start")


@pytest.mark.parametrize(
    ("result", "content", "mtype", "importance"),
    [
        ({"success": True, "summary": "pinned the mirror", "error": ERROR}, "pinned the mirror", "success", 0.7),
        ({"success": True, "summary": "pinned the mirror"}, f"{TASK['title']}: pinned the mirror", "success", 0.7),
        ({"success": True}, f"{TASK['title']}: done", "success", 0.7),
        ({"success": False}, f"{TASK['title']}: failed", "failure", 0.6),
        ({"success": False, "summary": "gave up", "error": ERROR}, f"{TASK['title']}: gave up", "failure", 0.6),
        ({"success": True, "summary": "x", "error": "   "}, f"{TASK['title']}: x", "success", 0.7),
    ],
)
def test_completion_without_a_technique_remembers_the_outcome(lc, result, content, mtype, importance):
    out = lc.on_task_complete(TASK, result)
    m = out["memory"]
    assert out["attempt"] is None and out["credited"] == []
    assert (m.content, m.type, m.importance) == (content, mtype, importance)
    assert m.metadata["task_title"] == TASK["title"] and m.task_id == "T1"
    assert m.task_signature == lc.task_signature(TASK)
    assert (m.error_signature is not None) == bool(result.get("error", "").strip())


def test_completion_credits_what_was_injected_and_skips_what_was_forgotten(lc):
    a = lc.remember("HTTP client retry with backoff", type="success", agent_id="build")
    b = lc.remember("HTTP client retry with jitter", type="success", agent_id="build")
    ctx = lc.on_task_start(TASK)
    assert set(ctx.injected) == {a.id, b.id}
    lc.forget(b.id)
    out = lc.on_task_complete(TASK, {"success": False, "summary": "still flaky"}, context=ctx)
    assert out["credited"] == [a.id]
    got = lc.get(a.id)
    assert (got.times_applied, got.times_successful) == (1, 0)
    assert out["memory"].task_signature == ctx.task_signature


def test_completion_with_a_technique_records_the_attempt_only(lc):
    out = lc.on_task_complete(TASK, {"success": False, "technique": "decomposition", "error": ERROR})
    assert out["memory"] is None and out["attempt"].technique == "decomposition"
    assert [t.technique for t in lc.task_attempts("T1")] == ["decomposition"]


@pytest.mark.parametrize(
    ("result", "kw"),
    [
        ({"success": True, "technique": "bad\nname"}, {}),
        ({"success": True}, {"context": {"injected": [1]}}),
        ({"success": "maybe"}, {}),
    ],
)
def test_refused_completion_changes_nothing(lc, result, kw):
    m = lc.remember("HTTP client retry with backoff", type="success", agent_id="build")
    before = table_snapshot(lc)
    with pytest.raises((InvalidInputError, ValueError)):
        lc.on_task_complete(TASK, result, **kw)
    assert table_snapshot(lc) == before
    assert lc.get(m.id).times_applied == 0


def test_the_context_type_is_the_one_on_task_start_returns(lc):
    ctx = lc.on_task_start(TASK)
    assert isinstance(ctx, TaskContext)
    assert lc.on_task_complete(TASK, {"success": True}, context=ctx)["memory"] is not None


def test_decisions_preferences_and_patterns_are_relevant_experience(lc):
    ids = {
        t: lc.remember(f"HTTP client retry {t}: back off exponentially", type=t, agent_id="build").id
        for t in ("decision", "preference", "pattern", "failure")
    }
    ctx = lc.on_task_start(TASK)
    assert {h.memory.id for h in ctx.hits} == set(ids.values())


def test_a_task_without_an_agent_is_the_default_agents(lc):
    mine = lc.remember("HTTP client retry with backoff", type="success", agent_id="agent")
    ctx = lc.on_task_start({"id": "T1", "title": TASK["title"]})
    assert ctx.task.agent_id == "agent" and [h.memory.id for h in ctx.hits] == [mine.id]


def test_a_task_carries_at_most_thirty_two_tags(lc):
    assert lc.on_task_start({**TASK, "tags": [f"t{k}" for k in range(32)]}).task.tags[-1] == "t31"
    with pytest.raises(InvalidInputError):
        lc.on_task_start({**TASK, "tags": [f"t{k}" for k in range(33)]})


def test_task_start_records_the_access_unless_told_not_to(lc):
    m = lc.remember("HTTP client retry with backoff", type="success", agent_id="build")
    lc.on_task_start(TASK, record=False)
    assert lc.get(m.id).access_count == 0
    lc.on_task_start(TASK)
    assert lc.get(m.id).access_count == 1


def test_sections_are_separated_by_a_blank_line(lc):
    _full(lc)
    prompt = lc.on_task_start(TASK).prompt
    assert prompt.startswith("## Memory\n")
    assert "that asks you to do something.\n\n### Current plan\n<memory " in prompt  # the preamble, then a blank line
    for title in ("Latest feedback", "Relevant experience", "Dead ends to avoid", "Discoveries from other agents"):
        assert f"</memory>\n\n### {title}\n<memory " in prompt


def test_the_outcome_memory_keeps_the_first_500_characters_of_a_long_title(lc):
    title = "retry " + "x" * 1994
    out = lc.on_task_complete({**TASK, "title": title}, {"success": True, "summary": "done it"})
    assert out["memory"].metadata["task_title"] == title[:500]


def test_a_session_id_is_at_most_200_characters(lc):
    assert lc.on_task_start({**TASK, "session_id": "s" * 200}).task.session_id == "s" * 200
    with pytest.raises(InvalidInputError):
        lc.on_task_start({**TASK, "session_id": "s" * 201})
    lc.learn_fix(ERROR, "use the internal mirror", agent_id="build")
    before = table_snapshot(lc)
    with pytest.raises(InvalidInputError):
        lc.on_task_error({**TASK, "session_id": "s" * 201}, ERROR)  # the advice's access record never sees it
    assert table_snapshot(lc) == before
