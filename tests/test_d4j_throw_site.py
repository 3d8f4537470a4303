"""Signing methods 16-18: a failure thrown in the code under test joins the group of the same exception thrown from
the same line (its throw site) or class (its thrower), whatever its message says, and the group of the same test
failing in the code it tests (the failing test); assertions (for throw sites and throwers) and failures inside the
tests do not.
"""

from __future__ import annotations

from hypothesis import HealthCheck, assume, given, settings as hsettings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import (
    ENVIRONMENT_CATEGORIES,
    SIGNATURE_METHOD,
    categorize,
    extract,
    failing_test,
    throw_site,
    thrower,
)


def java(message: str, line: int = 836, exc: str = "java.lang.RuntimeException", test: str = "testInfiniteLoop") -> str:
    return (
        f"{exc}: {message}\n"
        f"\tat org.apache.commons.cli.HelpFormatter.renderWrappedText(HelpFormatter.java:{line})\n"
        "\tat org.apache.commons.cli.HelpFormatter.renderOptions(HelpFormatter.java:783)\n"
        "\tat org.apache.commons.cli.HelpFormatter.printOptions(HelpFormatter.java:496)\n"
        f"\tat org.apache.commons.cli.bug.BugCLI162Test.{test}(BugCLI162Test.java:62)\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
    )


def python(message: str, line: int = 41, test: str = "test_wrap") -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/src/tests/test_render.py", line 12, in {test}\n'
        "    render(text)\n"
        f'  File "/src/app/render.py", line {line}, in render\n'
        '    raise ValueError(f"Text too long for line: {text}")\n'
        f"ValueError: {message}\n"
    )


FIRST = "Text too long for line - throwing exception to avoid infinite loop [CLI-162]:      looooong description"
SECOND = (
    'Text too long for line - throwing exception to avoid infinite loop [CLI-162]:   used if omited. Example: -e "Runs"'
)


def test_the_method_number_names_the_joins():
    assert SIGNATURE_METHOD >= 18


def test_a_throw_site_is_the_exception_and_the_key_frame_with_its_line():
    assert throw_site(extract(java(FIRST))) == (
        "throw site RuntimeException at org.apache.commons.cli.HelpFormatter.renderWrappedText(HelpFormatter.java:836)"
    )
    assert throw_site(extract(python("Text too long for line: abc"))) == "throw site ValueError at render.py:render:41"


def test_two_messages_thrown_by_one_statement_are_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        # (two tests: only the throw site joins them)
        a, b = s.error_signature(java(FIRST)), s.error_signature(java(SECOND, test="testPrintHelpLongLines"))
        assert a.template != b.template  # the messages differ after the colon (the data being processed)
        assert a.id == b.id
        # the same exception from another line of the class (run by another test) has another throw site, but the
        # same thrower (method 18); another exception of the line, run by a third test, stays apart
        moved = java(SECOND.replace("omited", "omitted again"), line=840, test="testOther")
        assert throw_site(extract(moved)) != throw_site(extract(java(SECOND)))
        assert s.error_signature(moved).id == a.id
        other = java("Index 3 out of bounds", exc="java.lang.IllegalStateException", test="testThird")
        assert s.error_signature(other).id != a.id


def test_python_failures_thrown_by_one_line_join(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature(python("Text too long for line: a very long description of an option"))
        b = s.error_signature(python("Text too long for line: short", test="test_short"))
        c = s.error_signature(python("Text too long for line: something else entirely", line=57, test="test_other"))
        assert a.id == b.id
        assert throw_site(extract(python("x: y", line=57))) != throw_site(extract(python("x: y")))
        assert c.id != a.id  # another line of the module, run by another test (no thrower for Python)


def test_assertions_and_failures_inside_the_tests_have_no_throw_site():
    assertion = java("expected:<1> but was:<2>", exc="junit.framework.AssertionFailedError")
    assert throw_site(extract(assertion)) is None  # a check every test calls is not where the code failed
    inside = (
        "junit.framework.AssertionFailedError: expected:<1> but was:<2>\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        "\tat org.apache.commons.cli.ParserTest.testStop(ParserTest.java:194)\n"
    )
    assert throw_site(extract(inside)) is None
    assert throw_site(extract("java.lang.RuntimeException: boom")) is None  # no frame: no site
    frame_without_line = java(FIRST).replace("HelpFormatter.java:836", "Unknown Source")
    assert throw_site(extract(frame_without_line)) is None


@hsettings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126, exclude_characters=":"), min_size=1),
        min_size=1,
        max_size=6,
    ).map(" ".join)
)
def test_whatever_follows_the_colon_a_throw_site_is_one_group(tmp_path_factory, tail):
    text = java(f"Text too long for line - throwing exception to avoid infinite loop: {tail}")
    # data that makes the failure one about the environment (``SSL``: network) is keyed without its frame, by design
    # (the same error wherever the code met it), so no throw site joins it: not this property's case
    assume(categorize(extract(text)) not in ENVIRONMENT_CATEGORIES)
    with MemoryStore(tmp_path_factory.mktemp("site") / "m.db") as s:
        first = s.error_signature(java(FIRST))
        again = s.error_signature(text)
        assert again.id == first.id


def test_a_throw_site_does_not_join_a_failure_about_the_environment(tmp_path):
    """The example hypothesis found (``SSL`` after the colon): the message names a network failure, whose signature
    drops the key frame and with it the throw site's join."""
    with MemoryStore(tmp_path / "m.db") as s:
        first = s.error_signature(java(FIRST))
        ssl = s.error_signature(java("Text too long for line - throwing exception to avoid infinite loop: SSL"))
        assert ssl.category == "network"
        assert ssl.id != first.id


def npe(where: str, line: int, test_class: str) -> str:
    return (
        "java.lang.NullPointerException\n"
        f"\tat org.apache.commons.cli.{where}(Parser.java:{line})\n"
        "\tat org.apache.commons.cli.Parser.parse(Parser.java:168)\n"
        f"\tat org.apache.commons.cli.{test_class}.testPropertyOptionUnexpected({test_class}.java:1051)\n"
        "\tat sun.reflect.NativeMethodAccessorImpl.invoke0(Native Method)\n"
    )


def test_a_failing_test_is_the_outermost_test_frames_method():
    assert failing_test(extract(npe("Parser.processProperties", 252, "BasicParserTest"))) == (
        "failing test testPropertyOptionUnexpected"
    )
    assert failing_test(extract(python("Text too long for line: abc"))) == "failing test test_wrap"
    inside = (
        "junit.framework.AssertionFailedError: expected:<1> but was:<2>\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        "\tat org.apache.commons.cli.ParserTest.testStop(ParserTest.java:194)\n"
    )
    assert failing_test(extract(inside)) is None  # inside the tests: its test method joins with its message
    no_test = java(FIRST).replace("bug.BugCLI162Test.testInfiniteLoop(BugCLI162Test.java:62)", "Main.main(Main.java:3)")
    assert failing_test(extract(no_test)) is None


def test_one_test_failing_in_two_places_of_the_code_is_one_signature(tmp_path):
    """An abstract test run by each implementation's class, failing where each implementation fails."""
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature(npe("Parser.processProperties", 252, "BasicParserTest"))
        b = s.error_signature(npe("DefaultParser.handleProperties", 77, "DefaultParserTest"))
        assert a.frame != b.frame and a.id == b.id
        other = npe("Parser.processProperties", 252, "GnuParserTest").replace(
            "testPropertyOptionUnexpected", "testPropertyOptionFlags"
        )
        assert s.error_signature(other).id == a.id  # (the same throw site: method 16)
        elsewhere = npe("Option.getKey", 9, "OptionTest").replace("testPropertyOptionUnexpected", "testClone")
        assert s.error_signature(elsewhere).id != a.id


def sevenz(message: str, method: str, line: int, test: str, exc: str = "java.io.IOException") -> str:
    return (
        f"{exc}: {message}\n"
        f"\tat org.apache.commons.compress.archivers.sevenz.SevenZFile.{method}(SevenZFile.java:{line})\n"
        "\tat org.apache.commons.compress.archivers.sevenz.SevenZFile.readHeaders(SevenZFile.java:174)\n"
        f"\tat org.apache.commons.compress.archivers.sevenz.SevenZOutputFileTest.{test}(SevenZOutputFileTest.java:90)\n"
    )


def test_a_thrower_is_the_exception_and_the_class_that_threw_it():
    ex = extract(sevenz("Unknown property 25", "readFilesInfo", 726, "testSevenEmptyFiles"))
    assert thrower(ex) == "thrown by IOException in org.apache.commons.compress.archivers.sevenz.SevenZFile"
    assert thrower(extract(python("Text too long for line: abc"))) is None  # (a module is no class)
    assert thrower(extract(java("expected:<1> but was:<2>", exc="junit.framework.AssertionFailedError"))) is None


def test_one_class_failing_alike_by_two_paths_is_one_signature(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        a = s.error_signature(sevenz("Unknown property 25", "readFilesInfo", 726, "testSevenEmptyFiles"))
        b = s.error_signature(sevenz("Badly terminated header", "readHeader", 301, "testSixEmptyFiles"))
        assert a.template != b.template and a.frame != b.frame and a.id == b.id
        # another exception of the class, run by another test, stays apart
        c = s.error_signature(
            sevenz("5", "readHeader", 290, "testNineEmptyFiles", exc="java.lang.ArrayIndexOutOfBoundsException")
        )
        assert c.id != a.id
