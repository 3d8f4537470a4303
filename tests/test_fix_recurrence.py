"""The same error again (issue 19, opt-in): ``Settings.fix_recurrence`` offers a fix whose taught error had the
asked decisive line and key frame word for word, values included, even where the signature's other evidence
withholds it (its fixes never repeat, ``fix_distinct_min``; credits that net negative on the signature, earned
on errors with other values); ``Settings.fix_once_same_values`` offers a fix backed only once for the same values
only. Both are off by default (measured in docs/fixes.md, "The same error again"). Both backends (``db``)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from harness_memory import MemoryStore, Settings

AGENT = "coder"


def error(value: int) -> str:
    return (
        f"junit.framework.AssertionFailedError: expected:<{value}> but was:<0>\n"
        "\tat junit.framework.Assert.fail(Assert.java:47)\n"
        "\tat org.example.parser.ParserTest.testNested(ParserTest.java:88)\n"
    )


BARE = (
    "junit.framework.AssertionFailedError:\n"
    "\tat junit.framework.Assert.fail(Assert.java:47)\n"
    "\tat org.example.parser.ParserTest.testNested(ParserTest.java:88)\n"
)
NEVER = "java.lang.IllegalStateException: lexer closed\n\tat org.example.lexer.Lexer.next(Lexer.java:41)\n"


def ask(store, err, task="T", title="parser tests"):
    return [m.content for m in store.on_task_error({"id": task, "title": title, "agent_id": AGENT}, err).fixes]


def teach_three(store):
    for v in (11, 22, 33):
        store.learn_fix(error(v), f"patch PARSER-{v}: ParserTest", agent_id=AGENT)


@pytest.fixture
def on(db, clock):
    with MemoryStore(db, settings=Settings(fix_recurrence=True), clock=clock) as s:
        yield s


def test_off_by_default(db, clock):
    assert Settings().fix_recurrence is False and Settings().fix_once_same_values is False
    # (the nearest-instance rule, on by default since issue 19's fix_nearest_min, answers error(22) too: its line is
    # nearest PARSER-22's by a margin; tests/test_fix_nearest_instance.py. Off here, so this tests fix_recurrence.)
    with MemoryStore(db, settings=Settings(fix_nearest_min=None), clock=clock) as s:
        teach_three(s)
        assert len({s.error_signature(error(v)).id for v in (11, 22, 33, 44)}) == 1
        assert ask(s, error(22)) == []  # three different fixes, once each: the signature does not predict


def test_the_same_error_again_gets_the_fix_that_worked_for_it(on):
    teach_three(on)
    assert ask(on, error(22)) == ["patch PARSER-22: ParserTest"]
    assert ask(on, error(44)) == []  # other values: the signature alone still does not predict


def test_credits_earned_on_other_values_do_not_hide_it(on):
    fix = on.learn_fix(error(11), "patch PARSER-11: ParserTest", agent_id=AGENT)
    # (other tasks each time: a task where it was credited unhelpful is not offered it again, recurrence or not)
    assert ask(on, error(99), "A", "lexer build") == ["patch PARSER-11: ParserTest"]  # one kind: for the signature
    on.apply(fix.id, helpful=False, agent_id=AGENT, task_id="A")
    assert ask(on, error(99), "B", "nightly job") == []  # worked once, unhelpful once: net 0
    assert ask(on, error(11), "C", "release checks") == ["patch PARSER-11: ParserTest"]  # the very error it fixed


def test_a_template_without_values_is_not_a_recurrence(on):
    for p in ("patch A-1: ParserTest", "patch A-2: ParserTest", "patch A-3: ParserTest"):
        on.learn_fix(BARE, p, agent_id=AGENT)
    assert on.error_signature(BARE).params == []
    assert ask(on, BARE) == []  # the line says no more than the signature: fix_distinct_min decides


def test_once_same_values(db, clock):
    with MemoryStore(db, settings=Settings(fix_once_same_values=True), clock=clock) as s:
        s.learn_fix(error(11), "patch PARSER-11: ParserTest", agent_id=AGENT)
        assert ask(s, error(11)) == ["patch PARSER-11: ParserTest"]
        assert ask(s, error(12)) == []  # backed once, for other values
        s.learn_fix(error(12), "patch PARSER-11: ParserTest", agent_id=AGENT)  # the same fix for a second value
        assert ask(s, error(13)) == ["patch PARSER-11: ParserTest"]


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    taught=st.lists(st.integers(1, 60), min_size=3, max_size=5, unique=True),
    asked=st.integers(1, 60),
    once=st.booleans(),
)
def test_offered_exactly_for_a_taught_value_and_never_for_an_error_never_seen(tmp_path_factory, taught, asked, once):
    path = tmp_path_factory.mktemp("recur") / "m.db"
    with MemoryStore(path, settings=Settings(fix_recurrence=True, fix_once_same_values=once)) as s:
        for v in taught:
            s.learn_fix(error(v), f"patch PARSER-{v}: ParserTest", agent_id=AGENT)
        got = ask(s, error(asked))
        assert got == ([f"patch PARSER-{asked}: ParserTest"] if asked in taught else [])
        assert ask(s, NEVER) == []
