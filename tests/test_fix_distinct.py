"""An error that was fixed by something different every time does not predict its fix (issue 19):
when its own links name at least ``Settings.fix_distinct_min`` different fix kinds and none of them
is backed twice (taught twice, or credited helpful), ``on_task_error`` and ``fixes_for`` offer none
of them — a signature shared by unrelated failures (one assertion template in a test class, each
bug fixed by its own patch) would otherwise put another failure's fix into the prompt. Both
backends (the ``store`` fixture)."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore, Settings

AGENT = "coder"
ERROR = (
    "junit.framework.AssertionFailedError: expected:<3> but was:<4>\n"
    "\tat junit.framework.Assert.fail(Assert.java:47)\n"
    "\tat org.example.parser.ParserTest.testNested(ParserTest.java:88)\n"
)
OTHER = "java.lang.IllegalStateException: lexer closed\n\tat org.example.lexer.Lexer.next(Lexer.java:41)\n" + (
    "\tat org.example.lexer.LexerTest.testEof(LexerTest.java:19)\n"
)
PATCHES = ["patch PARSER-12: ParserTest", "patch PARSER-31: ParserTest", "patch PARSER-40: ParserTest"]


def ask(store, error=ERROR):
    return [
        m.content for m in store.on_task_error({"id": "T", "title": "parser tests", "agent_id": AGENT}, error).fixes
    ]


def test_three_different_fixes_once_each_are_not_offered(store):
    for p in PATCHES:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    assert ask(store) == []
    assert store.fixes_for(ERROR, agent_id=AGENT) == []


def test_two_different_fixes_are_still_offered(store):
    for p in PATCHES[:2]:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    assert sorted(ask(store)) == sorted(PATCHES[:2])


def test_a_fix_taught_twice_brings_them_back_ranked_first(store):
    for p in PATCHES:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    store.learn_fix(ERROR, PATCHES[1], agent_id=AGENT)  # the same fix again: the error predicts it
    got = ask(store)
    assert got[0] == PATCHES[1] and sorted(got) == sorted(PATCHES)


def test_a_helpful_credit_brings_them_back(store):
    mems = [store.learn_fix(ERROR, p, agent_id=AGENT) for p in PATCHES]
    assert ask(store) == []
    store.apply(mems[2].id, helpful=True, agent_id=AGENT, error=ERROR)
    assert ask(store)[0] == PATCHES[2]


def test_what_did_not_work_is_still_listed(store):
    for p in PATCHES:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    store.learn_fix(ERROR, "mvn clean install", agent_id=AGENT, worked=False)
    # a fix of another error, credited unhelpful for this one: a link of this error with negative evidence
    other = store.learn_fix(OTHER, "patch LEXER-7: LexerTest", agent_id=AGENT)
    store.apply(other.id, helpful=False, agent_id=AGENT, error=ERROR)
    advice = store.on_task_error({"id": "T", "title": "parser tests", "agent_id": AGENT}, ERROR)
    assert advice.fixes == []
    failed = [m.content for m in advice.failures]
    assert "mvn clean install" in failed and "patch LEXER-7: LexerTest" in failed


def test_another_error_keeps_its_own_fix(store):
    for p in PATCHES:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    assert store.error_signature(OTHER).id != store.error_signature(ERROR).id
    store.learn_fix(OTHER, "patch LEXER-7: LexerTest", agent_id=AGENT)
    assert ask(store, OTHER) == ["patch LEXER-7: LexerTest"]
    assert ask(store) == []


def test_a_credit_without_the_error_brings_them_back(store):
    mems = [store.learn_fix(ERROR, p, agent_id=AGENT) for p in PATCHES]
    store.apply(mems[0].id, helpful=True, agent_id=AGENT)  # helped, no error named: counts for every error
    assert PATCHES[0] in ask(store)


def test_a_fix_that_only_failed_is_not_one_of_the_different_fixes(store):
    for p in PATCHES[:2]:
        store.learn_fix(ERROR, p, agent_id=AGENT)
    store.learn_fix(ERROR, PATCHES[2], agent_id=AGENT, worked=False)
    assert sorted(ask(store)) == sorted(PATCHES[:2])


@pytest.mark.parametrize("tier", [{"fix_similar_min": 0.5}, {"fix_general_min": 1}])
def test_the_looser_tiers_do_not_bring_them_back(tmp_path, tier):
    with MemoryStore(tmp_path / "m.db", settings=Settings(**tier)) as s:
        for p in PATCHES:
            s.learn_fix(ERROR, p, agent_id=AGENT)
        assert ask(s) == []
    with MemoryStore(tmp_path / "off.db", settings=Settings(fix_distinct_min=None, **tier)) as s:
        for p in PATCHES:
            s.learn_fix(ERROR, p, agent_id=AGENT)
        assert sorted(ask(s)) == sorted(PATCHES)


@pytest.mark.parametrize("value", [None, 4])
def test_the_setting(tmp_path, value):
    with MemoryStore(tmp_path / "m.db", settings=Settings(fix_distinct_min=value)) as s:
        for p in PATCHES:
            s.learn_fix(ERROR, p, agent_id=AGENT)
        assert sorted(ask(s)) == sorted(PATCHES)  # off, or more kinds needed than taught


def test_the_setting_from_the_environment(monkeypatch):
    from harness_memory.errors import ConfigurationError
    from harness_memory.settings import from_environment

    assert from_environment().fix_distinct_min == 3
    monkeypatch.setenv("HARNESS_MEMORY_FIX_DISTINCT_MIN", "off")
    assert from_environment().fix_distinct_min is None
    monkeypatch.setenv("HARNESS_MEMORY_FIX_DISTINCT_MIN", "5")
    assert from_environment().fix_distinct_min == 5
    monkeypatch.setenv("HARNESS_MEMORY_FIX_DISTINCT_MIN", "1")  # one fix is no evidence of anything
    with pytest.raises(ConfigurationError):
        from_environment()
