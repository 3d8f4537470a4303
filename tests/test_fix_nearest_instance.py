"""The nearest instance (issue 19): one signature shared by several failures that were each fixed by something
different says nothing about the next fix (``fix_distinct_min``), but a failure that is clearly one of the taught
instances again (its decisive line nearest to one taught error's, by a margin over every other fix's) gets that
instance's fix (``Settings.fix_nearest_min`` / ``fix_nearest_margin``); and a fix backed once is offered only for
instances like the one it fixed (``Settings.fix_once_similar_min``). Real SQLite / PostgreSQL stores through the
public API (the ``store`` fixture: both backends); the hypothesis properties on SQLite."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from harness_memory import MemoryStore, Settings
from harness_memory.fixes import line_grams

AGENT = "coder"
NEAR = dict(fix_nearest_min=0.5, fix_nearest_margin=0.3, fix_once_similar_min=0.3)


@pytest.fixture
def settings():
    return Settings(**NEAR)


def junit(expected: str, actual: str, test: str = "testA", line: int = 10) -> str:
    """A JUnit comparison failure in one test class: one signature whatever the values."""
    return (
        f"junit.framework.AssertionFailedError: expected:<{expected}> but was:<{actual}>\n"
        "\tat junit.framework.Assert.fail(Assert.java:47)\n"
        f"\tat org.example.PrinterTest.{test}(PrinterTest.java:{line})\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
    )


TAUGHT = {  # three unrelated failures of one signature, each fixed once by its own patch
    "patch PRINT-1": junit("/** * @return {undefined} * @constructor */ var a", "/** * @constructor */ var a"),
    "patch PRINT-2": junit("var x=-0.0", "var x=0", "testB"),
    "patch PRINT-3": junit("for(a=c?0:(0 in d);;)foo()", "for(a=c?0:0 in d;;)foo()", "testC"),
}


def teach(store: MemoryStore) -> None:
    for fix, error in TAUGHT.items():
        store.learn_success(AGENT, fix, error=error)


def ask(store: MemoryStore, error: str, task_id: str = "T-1"):
    return store.on_task_error({"id": task_id, "title": "run PrinterTest", "agent_id": AGENT}, error)


def offered(advice) -> list[str]:
    return [m.content for m in advice.fixes]


def test_the_failures_share_one_signature(store):
    ids = {store.error_signature(e).id for e in TAUGHT.values()}
    assert len(ids) == 1


def test_an_instance_clearly_nearest_one_taught_error_gets_its_fix(store):
    teach(store)
    again = junit("var a = {}; /** * @return {undefined} * @constructor */ a.Foo", "var a = {}; /** * @constructor */")
    advice = ask(store, again)
    assert offered(advice) == ["patch PRINT-1"]
    assert advice.fix_evidence[0].level == "exact" and advice.fix_evidence[0].worked == 1


def test_an_instance_near_none_of_them_gets_nothing(store):
    teach(store)
    assert offered(ask(store, junit("<p>One</p>", "<p>Two</p>", "testD"))) == []


def test_an_instance_between_two_taught_errors_gets_nothing(store):
    """Nearest to one, but not by the margin: the signature still does not say which."""
    store.learn_success(AGENT, "patch PRINT-1", error=junit("var x=-0.0", "var x=0"))
    store.learn_success(AGENT, "patch PRINT-2", error=junit("var x=-0.5", "var x=0"))
    store.learn_success(AGENT, "patch PRINT-3", error=junit("for(;;)", "for()"))
    assert offered(ask(store, junit("var x=-0.0", "var x=0.0"))) == []


def test_off_the_unpredictive_signature_gives_nothing(tmp_path):
    with MemoryStore(tmp_path / "m.db", settings=Settings(fix_nearest_min=None, fix_once_similar_min=None)) as s:
        teach(s)
        again = junit("var a = {}; /** * @return {undefined} * @constructor */ a.Foo", "var a = {}; /** */")
        assert offered(ask(s, again)) == []


# values long enough to outweigh the template's own characters (a short value shares most of its line with any other)
NUMBERS = junit(
    "var x=-0.0; var y=-1.5e3; var z=0x1F; print(x, y, z)", "var x=0; var y=-1500; var z=31; print(x, y, z)"
)
NUMBERS_AGAIN = junit(
    "var a=-0.0; var b=-2.5e3; var c=0x2F; print(a, b, c)", "var a=0; var b=-2500; var c=47; print(a, b, c)"
)
MARKUP = junit(
    "<html><head><title>One</title></head><body><p>Hello <b>there</b> &amp; welcome</p></body></html>",
    "<html><head></head><body><p>Hello there welcome</p><title>One</title></body></html>",
)


def test_the_three_lines_are_as_the_floor_tests_need_them(store):
    line = {k: store.error_signature(e).message or "" for k, e in (("n", NUMBERS), ("a", NUMBERS_AGAIN), ("m", MARKUP))}
    assert _line_similarity(line["n"], line["a"]) >= 0.3 > _line_similarity(line["n"], line["m"])


def test_a_fix_backed_once_is_offered_for_instances_like_the_one_it_fixed(store):
    store.learn_success(AGENT, "patch PRINT-2", error=NUMBERS)
    assert offered(ask(store, NUMBERS_AGAIN)) == ["patch PRINT-2"]
    unlike = ask(store, MARKUP, "T-2")
    assert offered(unlike) == [] and unlike.failures == []  # not what did not work either: unknown here


def test_a_second_backing_makes_the_fix_the_signature_s(store):
    m = store.learn_success(AGENT, "patch PRINT-2", error=NUMBERS)
    unlike = MARKUP
    assert offered(ask(store, unlike)) == []
    store.apply(m.id, helpful=True, agent_id=AGENT, error=junit("if (a) {b}", "if(a){b}"))
    assert offered(ask(store, unlike, "T-2")) == ["patch PRINT-2"]


def test_an_identical_line_always_passes_the_floor(store):
    error = junit("1", "0")  # a short line: few trigrams, all shared
    store.learn_success(AGENT, "patch COUNT-1", error=error)
    assert offered(ask(store, junit("1", "0", "testZ", 99))) == ["patch COUNT-1"]


def test_a_python_traceback_is_compared_the_same_way(store):
    def py(value: str) -> str:
        return (
            "Traceback (most recent call last):\n"
            '  File "check_config.py", line 3, in <module>\n'
            "    load()\n"
            f"KeyError: '{value}'\n"
        )

    store.learn_success(AGENT, "add the database section to settings.toml", error=py("database_url_primary"))
    assert offered(ask(store, py("database_url_primary_replica"))) == ["add the database section to settings.toml"]
    assert offered(ask(store, py("zz"), "T-2")) == []


def test_the_defaults_are_the_measured_ones(monkeypatch):
    s = Settings()
    assert (s.fix_nearest_min, s.fix_nearest_margin, s.fix_once_similar_min) == (0.4, 0.1, 0.6)
    monkeypatch.setenv("HARNESS_MEMORY_FIX_NEAREST_MIN", "off")
    monkeypatch.setenv("HARNESS_MEMORY_FIX_ONCE_SIMILAR_MIN", "off")
    assert (Settings().fix_nearest_min, Settings().fix_once_similar_min) == (None, None)


def test_at_the_defaults_the_instance_s_fix_comes_back(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        teach(s)
        again = junit("var a = {}; /** * @return {undefined} * @constructor */ a.Foo", "var a = {}; /** */")
        assert offered(ask(s, again)) == ["patch PRINT-1"]


_VALUE = st.text(alphabet="abcdefxyz0123456789 -.<>/{}=", min_size=1, max_size=24).filter(lambda t: t.strip() == t)


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(taught=_VALUE, asked=_VALUE)
def test_a_fix_backed_once_is_offered_exactly_when_the_lines_are_similar_enough(tmp_path_factory, taught, asked):
    with MemoryStore(tmp_path_factory.mktemp("once") / "m.db", settings=Settings(**NEAR)) as s:
        first, then = junit(taught, "nothing"), junit(asked, "nothing", "testB")
        if s.error_signature(first).id != s.error_signature(then).id:
            return  # the property is about instances of one signature
        s.learn_success(AGENT, "patch X-1", error=first)
        a, b = s.error_signature(first), s.error_signature(then)
        sim = _line_similarity(a.message or "", b.message or "")
        assert (offered(ask(s, then)) == ["patch X-1"]) == (sim >= NEAR["fix_once_similar_min"]), (sim, taught, asked)


def _line_similarity(x: str, y: str) -> float:
    gx, gy = line_grams(x), line_grams(y)
    return len(gx & gy) / len(gx | gy) if gx and gy else 0.0


@hsettings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pick=st.sampled_from(sorted(TAUGHT)), test=st.sampled_from(["testA", "testQ"]), line=st.integers(1, 999))
def test_a_taught_line_asked_again_gets_its_own_fix_among_unrelated_ones(tmp_path_factory, pick, test, line):
    """Each taught line again (any test method, any line number: the decisive line is the same) gets its own fix
    from a signature whose fixes never repeat."""
    with MemoryStore(tmp_path_factory.mktemp("near") / "m.db", settings=Settings(**NEAR)) as s:
        teach(s)
        first = TAUGHT[pick].splitlines()[0]
        expected, actual = first.split("expected:<", 1)[1].rsplit("> but was:<", 1)
        assert offered(ask(s, junit(expected, actual[:-1], test, line))) == [pick]


def test_at_the_defaults_the_very_same_line_again_gets_its_fix_and_other_values_nothing(tmp_path):
    """Three failures of one template with short values, each fixed once by its own patch: the very same line again
    is nearest its own (the other lines differ in a value); a fourth value is as near to all three and gets nothing."""

    def error(value: int) -> str:
        return junit(str(value), "0", "testParse", 9)

    with MemoryStore(tmp_path / "m.db") as s:
        for v in (11, 22, 33):
            s.learn_success(AGENT, f"patch PARSER-{v}", error=error(v))
        assert offered(ask(s, error(22))) == ["patch PARSER-22"]
        assert offered(ask(s, error(44), "T-2")) == []
