"""Java failure traces that are one error printed two ways get one signature (signing method 7,
docs/signatures.md): a comparison whose values run over several lines, the ``expected same`` form
of an assertion, and stack overflows cut at different depths of the same recursion. The traces are
small and written for the test in the shape JUnit and the JVM print them."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.failure_excerpt import extract

_JUNIT_TAIL = (
    "\tat junit.framework.Assert.assertEquals(Assert.java:81)\n"
    "\tat junit.framework.TestCase.assertEquals(TestCase.java:261)\n"
    "\tat com.acme.printer.CodePrinterTest.{method}(CodePrinterTest.java:{line})\n"
    "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
    "\tat junit.framework.TestCase.runTest(TestCase.java:176)\n"
)


def _comparison(values: str, method: str, line: int) -> str:
    return f"junit.framework.ComparisonFailure: {values}\n" + _JUNIT_TAIL.format(method=method, line=line)


def test_a_comparison_whose_values_run_over_lines_signs_like_its_one_line_twin(tmp_path):
    one_line = _comparison("expected:<var a = 1;> but was:<var a = 2;>", "testAssign", 40)
    multi_line = _comparison(
        "expected:<var a = {};\n/**\n * @[return {undefined}\n * @]constructor\n */\na.Fo...> "
        "but was:<var a = {};\n/**\n * @[]constructor\n */\na.Fo...>",
        "testMember",
        77,
    )
    cut_in_the_second_value = _comparison("expected:<one > but was:<one [\n]two>", "testLines", 90)
    with MemoryStore(tmp_path / "m.db") as store:
        a = store.error_signature(one_line)
        b = store.error_signature(multi_line)
        c = store.error_signature(cut_in_the_second_value)
        assert a.template == "junit.framework.ComparisonFailure: expected:<*> but was:<*>"
        assert a.id == b.id == c.id
        assert a.frame == b.frame == "com.acme.printer.CodePrinterTest"
        # the values are data: kept in params, never in the template
        assert any("@[return {undefined}" in p for p in b.params)


def test_a_different_assertion_in_the_same_test_class_stays_apart(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        compared = store.error_signature(_comparison("expected:<a\nb> but was:<a\nc>", "testOne", 10))
        message = store.error_signature(
            "junit.framework.AssertionFailedError: No cross edges found\n"
            + _JUNIT_TAIL.format(method="testTwo", line=20)
        )
        assert compared.id != message.id
        assert message.template == "junit.framework.AssertionFailedError: No cross edges found"


def test_a_value_that_never_closes_is_read_for_a_bounded_number_of_lines():
    body = "\n".join(f"line {i} <" for i in range(100))
    ex = extract(_comparison(f"expected:<{body}", "testBig", 5))
    # forty lines after the first, then the message stops: the rest is neither message nor lost frames
    assert ex.message.count("line ") == 41
    assert ex.frame == "com.acme.printer.CodePrinterTest"


def test_the_expected_same_form_is_a_comparison(tmp_path):
    def same(expected: str, was: str) -> str:
        return f"junit.framework.AssertionFailedError: expected same:<{expected}> was not:<{was}>\n" + (
            _JUNIT_TAIL.format(method="testOrder", line=12)
        )

    with MemoryStore(tmp_path / "m.db") as store:
        a = store.error_signature(same("[--help (-?,-h)|login <username>] [<target1> ...]", "[--help (-?,-h)]"))
        b = store.error_signature(same("[-v]", "[-q, -v]"))
        assert a.id == b.id
        assert a.template == "junit.framework.AssertionFailedError: expected same:<*> was not:<*>"


def _overflow(cycle: list[str], depth: int, start: int) -> str:
    """A StackOverflowError whose printed frames start ``start`` frames into the recursion."""
    frames = [cycle[(start + k) % len(cycle)] for k in range(depth)]
    return "java.lang.StackOverflowError\n" + "".join(f"\tat {f}(Types.java:{100 + i})\n" for i, f in enumerate(frames))


CYCLE = [
    "com.acme.reflect.Types.resolve",
    "com.acme.reflect.Types.resolveTypeVariable",
    "com.acme.reflect.Types.declaringClassOf",
]


@settings(max_examples=25, deadline=None)
@given(start=st.integers(0, 50), depth=st.integers(6, 60))
def test_a_stack_overflow_keys_on_its_recursion_not_where_the_stack_ran_out(start, depth):
    ex = extract(_overflow(CYCLE, depth, start))
    assert ex.frame == min(CYCLE)


def test_overflows_of_one_recursion_are_one_signature_and_another_recursion_is_not(tmp_path):
    other = ["com.acme.json.Writer.write", "com.acme.json.Writer.writeValue"]
    with MemoryStore(tmp_path / "m.db") as store:
        a = store.error_signature(_overflow(CYCLE, 30, 0))
        b = store.error_signature(_overflow(CYCLE, 45, 2))
        c = store.error_signature(_overflow(other, 30, 1))
        assert a.id == b.id and a.frame == "com.acme.reflect.Types.declaringClassOf"
        assert c.id != a.id and c.frame == "com.acme.json.Writer.write"


def test_an_exception_with_frames_that_do_not_repeat_keys_on_its_first_application_frame():
    ex = extract(
        "java.lang.StackOverflowError\n"
        "\tat com.acme.Deep.c(Deep.java:3)\n"
        "\tat com.acme.Deep.b(Deep.java:2)\n"
        "\tat com.acme.Deep.a(Deep.java:1)\n"
    )
    assert ex.frame == "com.acme.Deep.c"
