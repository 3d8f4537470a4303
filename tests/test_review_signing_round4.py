"""Review of signing method 21 (``compared_difference``, 9d1309d) and speed round 4 (3e7d507), issue 8: regression
guards that hold at 3e7d507.

A differential run (b7da27b against 3e7d507, each in its own process, every field of ``MemoryStore.error_signature``
and of ``extract``/``categorize``/``mask_params``/``tokenize``/``_by_text``/``_evidence``) differed only where a
compared key joined (method 21). These properties keep what method 21 promises: a key only for a JUnit comparison
failing inside Java tests, never an error, a key bounded by the message, the shared parts of the values never in it;
the comparison formats of other libraries (AssertJ, Hamcrest, TestNG, kotlin.test, ScalaTest) give none.

The review's three findings (failing at 3e7d507, mended by signing method 23) are the tests after "D1", "D2" and
"D3": the comparison pattern backtracked cubically, a difference of whitespace or punctuation got a key, and a key
joined the same two words compared in any project's tests.
"""

from __future__ import annotations

import os
import tempfile
import time

from hypothesis import given, settings as hsettings, strategies as st

from harness_memory import MemoryStore, error_signatures as es


def _trace(message: str, cls: str = "org.x.FooTest", exc: str = "junit.framework.ComparisonFailure") -> str:
    short = cls.rsplit(".", 1)[1]
    return (
        f"{exc}: {message}\n\tat junit.framework.Assert.assertEquals(Assert.java:85)\n"
        f"\tat {cls}.testIt({short}.java:12)\n\tat java.lang.reflect.Method.invoke(Method.java:498)\n"
    )


def _key(message: str, **kw: str) -> str | None:
    return es.compared_difference(es.extract(_trace(message, **kw)))


_PIECES = st.sampled_from(
    [
        "function (",
        "): ",
        "undefined",
        "?",
        "number",
        "[",
        "]",
        "true",
        "false",
        "null",
        "Foo",
        "foo bar",
        " ",
        "<",
        ">",
        "> but was:<",
        "expected:<",
        "\u0130",
        "\u0131",
        "\u017f",
        "1",
        "x_y",
        "\r",
    ]
) | st.text(max_size=3)
_VALUES = st.lists(_PIECES, max_size=10).map("".join)
_FORMATS = st.sampled_from(
    ["expected:<{}> but was:<{}>", "expected: <{}> but was: <{}>", "msg expected:<{}> but was:<{}>", "{} expected:<{}"]
)


@hsettings(max_examples=400, deadline=None)
@given(_FORMATS, _VALUES, _VALUES, st.sampled_from(["junit.framework.ComparisonFailure", "java.lang.AssertionError"]))
def test_a_comparison_key_never_raises_and_is_bounded(fmt, a, b, exc):
    message = fmt.format(a, b)
    ex = es.extract(_trace(message, exc=exc))
    key = es.compared_difference(ex)
    assert key is None or (key.startswith("compared ") and len(key) <= 2 * len(ex.message) + 20)
    assert key is None or key in es.extract(_trace(message, exc=exc)).joins  # extract joins by it


@hsettings(max_examples=300, deadline=None)
@given(_VALUES, _VALUES)
def test_no_key_outside_the_tests_or_outside_java(a, b):
    message = f"expected:<{a}> but was:<{b}>"
    under_test = (
        f"java.lang.IllegalStateException: {message}\n\tat org.x.Foo.run(Foo.java:9)\n"
        "\tat org.x.FooTest.testIt(FooTest.java:12)\n"
    )
    ex = es.extract(under_test)
    if not any(j.startswith("test method ") for j in ex.joins):
        assert es.compared_difference(ex) is None
    py = f'Traceback (most recent call last):\n  File "t.py", line 1, in <module>\nAssertionError: {message}\n'
    assert es.compared_difference(es.extract(py)) is None


def test_other_libraries_comparison_formats_give_no_key():
    for message in [
        'Expecting:\n <"COMPLETED">\nto be equal to:\n <"FAILED">\nbut was not.',  # AssertJ
        'expected: "COMPLETED"\n but was: "FAILED"',  # AssertJ 3.x
        'Expected: is "COMPLETED"\n     but: was "FAILED"',  # Hamcrest
        "expected [COMPLETED] but found [FAILED]",  # TestNG
        "Expected <COMPLETED>, actual <FAILED>.",  # kotlin.test
        '"COMPLETED" did not equal "FAILED"',  # ScalaTest
    ]:
        assert _key(message, exc="java.lang.AssertionError") is None, message


def test_junit_formats_give_their_difference():
    """(prefixes only: a key may gain a scope, e.g. the test's package, without failing this guard)"""
    key = _key("expected:<function (): [undefined]> but was:<function (): [?]>")
    assert key is not None and key.startswith("compared 'undefined' / '?'")
    key = _key("expected: <COMPLETED> but was: <FAILED>", exc="org.opentest4j.AssertionFailedError")
    assert key is not None and key.startswith("compared 'COMPLETED' / 'FAILED'")
    assert _key("expected:<[true]> but was:<[false]>") is None
    assert _key("expected:<[12]:00> but was:<[13]:00>") is None


def test_a_value_longer_than_a_message_gives_no_key():
    """A Java message is read to 4,000 characters: a longer comparison is no Java failure and has no key (so a key
    is never longer than about twice that)."""
    assert _key("expected:<" + "x" * 3000 + "> but was:<" + "y" * 3000 + ">") is None


# D1: _JUNIT_COMPARED (``\bexpected: ?<(.*)> but was: ?<(.*)>$``, re.S) backtracks cubically: every start of
# ``expected:<`` times every ``> but was:<`` times the rest, when the message does not end in ``>``.
def test_the_comparison_pattern_is_not_cubic():
    bad = "expected:<" * 180 + "> but was:<" * 180 + "x"  # 3,780 characters, under the 4,000 a Java message keeps
    fine = "expected:<" + "a" * 1800 + "> but was:<" + "b" * 1800 + ">"

    def cpu(message: str) -> float:
        ex = es.extract(_trace(message))
        t0 = time.process_time()
        for _ in range(3):
            es.compared_difference(ex)
        return time.process_time() - t0

    assert cpu(bad) < 20 * cpu(fine) + 0.03  # 3e7d507: ~0.45 s a call against ~0.1 ms


# D2: the whole-word widening swallows the word next to a difference that splits none (``[]bar`` / ``[=]bar``), so
# a difference of whitespace or punctuation alone gets a key, against the rule (a key only when the difference holds
# a word other than true/false/null)
def test_no_key_for_a_difference_of_whitespace_or_punctuation():
    assert _key("expected:<[]Error> but was:<[ ]Error>") is None  # 3e7d507: compared 'Error' / 'Error'
    assert _key("expected:<foo[]> but was:<foo[.]>") is None  # 3e7d507: compared 'foo' / 'foo.'
    assert _key("expected:<[]bar> but was:<[=]bar>") is None  # 3e7d507: compared 'bar' / '=bar' (Cli-12)


_WORDISH = st.sampled_from(["Error", "bar", "foo", "Title", "x_y"])
_PUNCT = st.sampled_from(["", " ", "\t", "=", ".", ",", "-", "  ", ": "])


@hsettings(max_examples=300, deadline=None)
@given(_WORDISH, _WORDISH, _PUNCT, _PUNCT, st.booleans())
def test_a_difference_without_a_word_has_no_key(w1, w2, p, q, before):
    a, b = (f"{p}{w1} {w2}", f"{q}{w1} {w2}") if before else (f"{w1} {w2}{p}", f"{w1} {w2}{q}")
    assert _key(f"expected:<{a}> but was:<{b}>") is None


# D3: the key is global: the same two words compared anywhere join, whatever the project, test class, exception or
# the message before the comparison (status words, enum constants, placeholder values are common in tests)
def test_generic_values_in_two_projects_do_not_join():
    with tempfile.TemporaryDirectory() as d, MemoryStore(os.path.join(d, "s.db")) as s:
        a = s.error_signature(_trace("job status expected:<[COMPLETED]> but was:<[FAILED]>", "com.acme.batch.JobTest"))
        b = s.error_signature(
            _trace("order expected:<[COMPLETED]> but was:<[FAILED]>", "org.shop.OrderTest", "java.lang.AssertionError")
        )
        assert a.id != b.id  # 3e7d507: one id (b7da27b: two)
