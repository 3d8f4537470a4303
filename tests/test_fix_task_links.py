"""Fixes of the same task (issue 19): a link keeps the task its fix was taught for, and a fix that
repaired the same task for several other errors comes back for a new error of that task. Both
backends (the ``store`` fixture); abstention, credits and export/import kept."""

from __future__ import annotations

import pytest

from harness_memory import InvalidInputError, MemoryStore, Settings

AGENT = "coder"
RUN = "python reproduce.py"  # the task a harness knows: what it ran
ERRORS = [
    "Traceback (most recent call last):\n  File \"reproduce.py\", line 3, in <module>\nKeyError: 'tz'",
    'Traceback (most recent call last):\n  File "reproduce.py", line 9, in <module>\n'
    "ValueError: invalid literal for int() with base 10: 'x'",
    "AssertionError: expected the migration to add 3 columns, got 4",
    "TypeError: unsupported operand type(s) for +: 'NoneType' and 'str'",
    "ZeroDivisionError: division by zero in compute_ratio",
    "AttributeError: 'QuerySet' object has no attribute 'explain_plan'",
]
NEW = "IndexError: list index out of range while reading the fixture rows"


@pytest.fixture
def settings():
    """The store fixture's settings with the tier's minimum at 2 (its default, 5, is checked below)."""
    return Settings(extra_types=["discovery", "deadend", "plan", "feedback", "insight"], fix_task_min=2)


def ask(store, error, title=RUN, task_id="T-ask"):
    return store.on_task_error({"id": task_id, "title": title, "agent_id": AGENT}, error)


def teach(store, fix, errors, task=RUN):
    for e in errors:
        store.learn_fix(e, fix, agent_id=AGENT, task=task)


def test_a_fix_that_repaired_the_task_for_other_errors_comes_back_for_a_new_one(store):
    teach(store, RUN, ERRORS[:2])
    got = ask(store, NEW)
    assert [m.content for m in got.fixes] == [RUN]
    ev = got.fix_evidence[0]
    assert ev.level == "task" and ev.worked == 2 and ev.similarity == 0.5
    assert ev.explain().startswith("same task, other errors; worked 2x")
    assert "What fixed it before" in got.prompt and 'level="task"' in got.prompt
    # the same new error in another task, and a never seen error and task: nothing
    assert ask(store, NEW, title="make docs").fixes == []
    assert ask(store, "OSError: [Errno 28] No space left on device", title="npm run build").fixes == []


def test_one_earlier_repair_of_the_task_is_not_enough(store):
    teach(store, RUN, ERRORS[:1])  # fix_task_min is 2 here
    assert ask(store, NEW).fixes == []
    teach(store, RUN, ERRORS[1:2])
    assert ask(store, NEW).fixes != []


def test_the_error_s_own_fix_ranks_before_the_tasks_and_the_same_task_before_another(store):
    teach(store, "python -m pytest tests/test_models.py", ERRORS[:3])  # the task's usual repair
    store.learn_fix(NEW, "pip install -e .", agent_id=AGENT, task="make docs")  # fixed this very error elsewhere
    got = ask(store, NEW)
    assert [e.level for e in got.fix_evidence] == ["exact", "task"]
    assert got.fixes[0].content == "pip install -e ."
    # one error, two fixes: the one taught for the asked task first, though the other has more evidence
    teach(store, "tox -e py311", [NEW, NEW], task="run the unit tests")
    store.learn_fix(NEW, "git stash && python reproduce.py", agent_id=AGENT, task=RUN)
    exact = [e for e in ask(store, NEW).fix_evidence if e.level == "exact"]
    assert [e.memory.content for e in exact][:1] == ["git stash && python reproduce.py"]
    other = ask(store, NEW, title="run the unit tests").fix_evidence
    assert other[0].memory.content == "tox -e py311"


def test_credits_after_a_task_advice_move_the_task_ranking(store):
    teach(store, RUN, ERRORS[:2])
    teach(store, "tox -e py311", ERRORS[2:5])
    got = ask(store, NEW, task_id="T-1")
    assert [m.content for m in got.fixes] == ["tox -e py311", RUN]  # fixed the task for 3 errors, against 2
    by = {m.content: m.id for m in got.fixes}
    store.apply(by[RUN], helpful=True, agent_id=AGENT, task_id="T-1")
    store.apply(by["tox -e py311"], helpful=False, agent_id=AGENT, task_id="T-1")
    again = ask(store, ERRORS[5], task_id="T-2")
    assert [m.content for m in again.fixes] == [RUN, "tox -e py311"]
    assert again.fix_evidence[0].helpful == 1 and again.fix_evidence[1].unhelpful == 1
    store.apply(by["tox -e py311"], helpful=False, agent_id=AGENT, task_id="T-2")
    # 3 errors fixed, 2 advices that did not help: below fix_task_min
    assert [m.content for m in ask(store, "KeyError: 'region'", task_id="T-3").fixes] == [RUN]


def test_a_task_fix_that_did_not_help_stops_being_offered_for_the_task(store):
    teach(store, RUN, ERRORS[:2])
    got = ask(store, NEW, task_id="T-5")
    store.apply(got.fixes[0].id, helpful=False, agent_id=AGENT, task_id="T-5")
    assert ask(store, ERRORS[5], task_id="T-6").fixes == []


def test_the_tier_is_off_without_a_minimum_and_share_keeps_the_dominant_fix(db, tmp_path, clock):
    with MemoryStore(db, settings=Settings(fix_task_min=None), clock=clock) as s:
        teach(s, RUN, ERRORS[:3])
        assert ask(s, NEW).fixes == []
    with MemoryStore(tmp_path / "share.db", settings=Settings(fix_task_min=2, fix_task_share=0.5), clock=clock) as s:
        teach(s, RUN, ERRORS[:2])
        teach(s, "tox -e py311", ERRORS[2:5])
        assert [m.content for m in ask(s, NEW).fixes] == ["tox -e py311"]  # 3 of 5; the other 2 of 5


def test_learn_fix_signs_the_task_as_on_task_error_does(store):
    task = {"title": "Run the migrations", "category": "db", "agent_type": "coder"}
    teach(store, "python manage.py migrate --run-syncdb", ERRORS[:2], task=task)
    got = store.on_task_error({"id": "T-m", "agent_id": AGENT, **task}, NEW)
    assert got.fixes and got.fix_evidence[0].level == "task"
    assert ask(store, NEW, title="Run the migrations").fixes == []  # another category and agent type
    assert store.fixes_for(NEW, agent_id=AGENT, task=task)[0].level == "task"
    assert store.fixes_for(NEW, agent_id=AGENT) == []


def test_on_task_complete_teaches_the_task_link(store):
    for k, e in enumerate(ERRORS[:2]):
        store.on_task_complete(
            {"id": f"T-{k}", "title": RUN, "agent_id": AGENT}, {"success": True, "summary": RUN, "error": e}
        )
    assert ask(store, NEW).fix_evidence[0].level == "task"


@pytest.mark.parametrize(
    "kw",
    [{"task": 42}, {"task": {"title": ""}}, {"task": RUN, "task_signature": "x"}, {"task": ["a"]}],
)
def test_learn_fix_refuses_a_bad_task_and_writes_nothing(store, kw):
    from conftest import table_snapshot

    before = table_snapshot(store)
    with pytest.raises(InvalidInputError):
        store.learn_fix(NEW, RUN, agent_id=AGENT, **kw)
    assert table_snapshot(store) == before


def test_export_and_import_keep_the_task_of_each_link(store, tmp_path, clock):
    teach(store, RUN, ERRORS[:2])
    out = tmp_path / "export.jsonl"
    store.export_jsonl(out)
    with MemoryStore(tmp_path / "copy.db", settings=Settings(fix_task_min=2), clock=clock) as other:
        other.import_jsonl(out)
        other.import_jsonl(out)
        got = ask(other, NEW)
        assert [m.content for m in got.fixes] == [RUN] and got.fix_evidence[0].worked == 2


@pytest.mark.parametrize("field", ["fix_task_min", "fix_origin_min"])  # the task tier and the origin tier
def test_the_environment_turns_the_tier_off_or_sets_its_minimum(monkeypatch, field):
    from harness_memory.errors import ConfigurationError
    from harness_memory.settings import from_environment

    var = "HARNESS_MEMORY_" + field.upper()
    assert getattr(from_environment(), field) == 5
    monkeypatch.setenv(var, "off")
    assert getattr(from_environment(), field) is None
    monkeypatch.setenv(var, "3")
    assert getattr(from_environment(), field) == 3
    monkeypatch.setenv(var, "0")
    with pytest.raises(ConfigurationError):
        from_environment()


def test_by_default_a_task_needs_five_repaired_errors(tmp_path, clock):
    with MemoryStore(tmp_path / "default.db", clock=clock) as s:
        teach(s, RUN, ERRORS[:4])
        assert ask(s, NEW).fixes == []
        teach(s, RUN, ERRORS[4:5])
        assert [e.level for e in ask(s, NEW).fix_evidence] == ["task"]


def test_a_task_link_counts_by_its_net_evidence(db, clock):
    # a link whose evidence is balanced (worked once, credited unhelpful once) counts for nothing
    with MemoryStore(db, settings=Settings(fix_task_min=2), clock=clock) as s:
        teach(s, RUN, ERRORS[:2])
        assert ask(s, NEW).fixes != []
        s.apply(s.fixes_for(ERRORS[1], agent_id=AGENT)[0].memory.id, helpful=False, agent_id=AGENT, error=ERRORS[1])
        assert ask(s, NEW).fixes == []


def test_a_helpful_credit_after_a_task_advice_counts_as_a_repaired_error(db, tmp_path, clock):
    with MemoryStore(db, settings=Settings(fix_task_min=1), clock=clock) as s:
        teach(s, RUN, ERRORS[:1])
        shown = ask(s, NEW, task_id="T-1")
        assert [e.level for e in shown.fix_evidence] == ["task"]
        s.apply(shown.fixes[0].id, helpful=True, agent_id=AGENT, task_id="T-1")
    with MemoryStore(db, settings=Settings(fix_task_min=2), clock=clock) as s:
        # one error taught, one advice that helped: two errors of the task the fix repaired
        assert [e.level for e in ask(s, ERRORS[5], task_id="T-2").fix_evidence] == ["task"]


def test_a_task_title_without_words_still_gets_the_errors_own_fixes(store):
    store.learn_fix(NEW, "pip install -e .", agent_id=AGENT)
    got = ask(store, NEW, title="./a")  # no term to sign the task by
    assert [e.level for e in got.fix_evidence] == ["exact"]
    with pytest.raises(InvalidInputError):
        store.learn_fix(NEW, RUN, agent_id=AGENT, task="./a")
