"""Signing method 21 (23: scoped by the test's package): a Java comparison failing inside the tests also joins by the
part of its two values that differs (``compared 'undefined' / '?' in com.google.javascript.jscomp``), so one wrong value produced in place of one expected value, compared by tests of
several test classes, is one signature; a difference without a word (numbers, true / false / null) joins nothing.
"""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import SIGNATURE_METHOD, compared_difference, extract


def junit(expected: str, actual: str, cls: str = "TypeCheckTest", test: str = "testScoping10") -> str:
    """A comparison failing inside a test class (no frame of the code under test)."""
    return (
        f"junit.framework.ComparisonFailure: expected:<{expected}> but was:<{actual}>\n"
        "\tat junit.framework.Assert.assertEquals(Assert.java:100)\n"
        "\tat junit.framework.TestCase.assertEquals(TestCase.java:269)\n"
        f"\tat com.google.javascript.jscomp.{cls}.{test}({cls}.java:1252)\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
        "\tat junit.framework.TestCase.runTest(TestCase.java:168)\n"
    )


def thrown(message: str) -> str:
    """A failure thrown in the code under test."""
    return (
        f"java.lang.IllegalStateException: {message}\n"
        "\tat com.google.javascript.jscomp.TypeCheck.visit(TypeCheck.java:400)\n"
        "\tat com.google.javascript.jscomp.TypeCheckTest.testScoping10(TypeCheckTest.java:1252)\n"
    )


def test_the_method_number_names_the_join():
    assert SIGNATURE_METHOD >= 21


def test_the_key_is_the_part_of_the_values_that_differs():
    ex = extract(junit("function (): [undefined]", "function (): [?]"))
    assert compared_difference(ex) == "compared 'undefined' / '?' in com.google.javascript.jscomp"
    # unmarked values (assertEquals of two objects): their common beginning and end are removed the same way
    ex = extract(junit("inconsistent return type", "initializing variable"))
    assert compared_difference(ex) == (
        "compared 'inconsistent return type' / 'initializing variable' in com.google.javascript.jscomp"
    )
    # JUnit 5's spacing
    text = junit("a", "b").replace("expected:<a> but was:<b>", "expected: <the Foo type> but was: <the Bar type>")
    assert compared_difference(extract(text)) == "compared 'Foo' / 'Bar' in com.google.javascript.jscomp"


def test_a_difference_without_a_word_joins_nothing():
    for expected, actual in [("[1]2", "[3]2"), ("[true]", "[false]"), ("x = [null]", "x = [true]"), ("a[]", "a[ ]")]:
        assert compared_difference(extract(junit(expected, actual))) is None, (expected, actual)


def test_only_a_java_comparison_inside_the_tests_has_the_key():
    # thrown in the code under test: its throw site and thrower join it, not its message's values
    assert compared_difference(extract(thrown("expected:<undefined> but was:<?>"))) is None
    # another runtime printing the same words
    py = (
        "Traceback (most recent call last):\n"
        '  File "/src/tests/test_types.py", line 12, in test_scoping\n'
        "    check(text)\n"
        "AssertionError: expected:<undefined> but was:<?>\n"
    )
    assert compared_difference(extract(py)) is None
    # a message that is no comparison
    assert compared_difference(extract(junit("a", "b").replace("expected:<a> but was:<b>", "values differ"))) is None


def test_one_wrong_value_compared_by_two_test_classes_is_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature(junit("function (this:f): [undefined]", "function (this:f): [?]"))
        b = s.error_signature(
            junit("...on (this:goog.Foo): [undefined]", "...on (this:goog.Foo): [?]", "TypedScopeCreatorTest", "testX")
        )
        assert a.frame != b.frame  # each is signed by its own test class
        assert a.id == b.id
        # another wrong value in a third class stays apart, and so does a difference of numbers
        c = s.error_signature(junit("[string]", "[number]", "CodePrinterTest", "testY"))
        d = s.error_signature(junit("[1]", "[2]", "LooseTypeCheckTest", "testZ"))
        e = s.error_signature(junit("[3]", "[4]", "InlineFunctionsTest", "testZ2"))
        assert len({a.id, c.id, d.id, e.id}) == 4


_VALUE = st.text(alphabet="abcXYZ01 (){}:?,.", max_size=30)
_SEPARATOR = st.sampled_from(" (){}:?,.")


@hsettings(max_examples=300, deadline=None)
@given(_VALUE, _VALUE, _VALUE, _SEPARATOR, _SEPARATOR, _VALUE)
def test_the_key_does_not_depend_on_what_the_values_share(expected, actual, before, sep1, sep2, after):
    """The same two values compared inside longer values that share a beginning and an end (apart from them by a
    word boundary): one key, or none for both."""
    plain = compared_difference(extract(junit(expected, actual)))
    before, after = before + sep1, sep2 + after
    assert compared_difference(extract(junit(before + expected, before + actual))) == plain
    if expected and actual and expected[0] != actual[0] and expected[-1] != actual[-1]:
        # (values differing at both ends: where an insertion sits is not ambiguous, so a shared end moves nothing)
        framed = compared_difference(extract(junit(before + expected + after, before + actual + after)))
        assert framed == plain
