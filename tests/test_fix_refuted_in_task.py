"""A fix offered for a task and credited unhelpful there is not offered to that task again (issue 19:
"the same useless retry is tried"): its evidence on the task itself decides, whatever it earned
elsewhere; other tasks still get it, and a later helpful credit in the task brings it back. Both
backends (the ``store`` fixture)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

AGENT = "coder"
ERR = "django.db.utils.OperationalError: no such table: polls_question"
RUN = "migrate the polls app"


def ask(store, task_id, title=RUN, error=ERR):
    return store.on_task_error({"id": task_id, "title": title, "agent_id": AGENT}, error)


def teach(store):
    """A fix that worked three times for this error in other tasks, and a weaker second one."""
    for k in range(3):
        store.learn_fix(ERR, "python manage.py migrate", agent_id=AGENT, task=f"deploy the site {k}")
    return store.learn_fix(ERR, "python manage.py makemigrations polls", agent_id=AGENT, task="add a model")


def test_a_fix_credited_unhelpful_in_a_task_is_not_offered_to_it_again(store):
    teach(store)
    first = ask(store, "T-1")
    top = first.fixes[0]
    assert top.content == "python manage.py migrate"
    store.apply(top.id, helpful=False, agent_id=AGENT, task_id="T-1")
    again = ask(store, "T-2")  # the same task (its title), a later attempt
    assert top.id not in [m.id for m in again.fixes]
    assert top.id in [m.id for m in again.failures]  # listed under what did not work
    assert [m.content for m in again.fixes] == ["python manage.py makemigrations polls"]
    other = ask(store, "T-3", title="load the fixtures")  # another task still gets the proven fix first
    assert other.fixes[0].id == top.id


def test_a_helpful_credit_in_the_task_brings_it_back(store):
    teach(store)
    top = ask(store, "T-1").fixes[0]
    store.apply(top.id, helpful=False, agent_id=AGENT, task_id="T-1")
    assert top.id not in [m.id for m in ask(store, "T-2").fixes]
    store.apply(top.id, helpful=True, agent_id=AGENT, task_id="T-2")  # it helped after all (a second advice)
    assert ask(store, "T-3").fixes[0].id == top.id


def test_a_task_s_own_taught_successes_outweigh_one_unhelpful_credit(store):
    for _k in range(2):
        store.learn_fix(ERR, "python manage.py migrate", agent_id=AGENT, task=RUN)  # worked for this task twice
    top = ask(store, "T-1").fixes[0]
    store.apply(top.id, helpful=False, agent_id=AGENT, task_id="T-1")
    assert ask(store, "T-2").fixes[0].id == top.id  # net +1 on the task: still offered


@hsettings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(verdicts=st.lists(st.booleans(), min_size=1, max_size=5))
def test_offered_in_the_task_exactly_when_its_credits_there_do_not_net_negative(tmp_path_factory, verdicts):
    from harness_memory import MemoryStore

    with MemoryStore(tmp_path_factory.mktemp("refute") / "m.db") as s:
        teach(s)
        top = ask(s, "T-0").fixes[0]
        for k, helpful in enumerate(verdicts):
            ask(s, f"T-{k + 1}")  # each credit follows an advice of the task
            s.apply(top.id, helpful=helpful, agent_id=AGENT, task_id=f"T-{k + 1}")
        net = sum(1 if h else -1 for h in verdicts)
        offered = top.id in [m.id for m in ask(s, "T-last").fixes]
        assert offered == (net >= 0), (verdicts, net)


@pytest.mark.parametrize("title", [None, "migrate the polls app"])
def test_without_a_credit_in_the_task_nothing_changes(store, title):
    teach(store)
    got = store.on_task_error({"id": "T-1", "title": title or "x", "agent_id": AGENT}, ERR)
    assert [m.content for m in got.fixes] == ["python manage.py migrate", "python manage.py makemigrations polls"]
