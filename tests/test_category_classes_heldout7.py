"""Failure classes met in the heldout7 split of the CI-log corpus (signing method 9), each written as a
general property in several tools' words, on inputs written for the test in the shape the tools print:
a stack frame is where a failure happened, never what it is; warnings that fail a build are a compile
error; a missing library or include is a missing dependency; a missing function, method or key found at
run time is not_found; an ML type mismatch is a compile error; a diagnostic whose headline holds only its
location and severity is read from the lines under it."""

from __future__ import annotations

import pytest

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract, is_frame


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "line",
    [
        "       test/money_test.exs:20: (test)",
        "(elixir 1.14.0) lib/gen_server.ex:1035: GenServer.call/3",
        "(stdlib 4.2) gen.erl:237: :gen.do_call/4",
        "(ex_unit 1.14.0) lib/ex_unit/runner.ex:463: anonymous fn/4 in ExUnit.Runner.spawn_test_monitor/4",
        "  lib/session_store.ex:9: SessionStore.fetch/2",
        "in call from eunit_proc:with_timeout/3 (eunit_proc.erl, line 356)",
        "in function vclock_tests:merge_test/0 (test/vclock_tests.erl, line 11)",
        "  error, called at src/Data/Map/Internal.hs:633:17 in containers-0.6.4.1:Data.Map.Internal",
        "src/gen.lua:5: in local 'f'",
    ],
)
def test_stack_frames_of_several_runtimes_are_frames(line):
    assert is_frame(line)


@pytest.mark.parametrize(
    "line",
    [
        "src/a.c:3:5: error: 'x' undeclared",
        "lib/x.ex:3: undefined function foo/0",
        "test/x_test.exs:12",
        "Config.hs:5:1: error:",
    ],
)
def test_a_diagnostic_or_a_bare_location_is_not_a_frame(line):
    assert not is_frame(line)


EXUNIT = """\
Compiling 1 file (.ex)
..

  1) test split/2 remainder goes to the first parts (MoneyTest)
     test/money_test.exs:19
     {what}
     code:  assert Money.split(1000, 3) == [334, 333, 333]
     stacktrace:
       (stdlib 4.2) gen.erl:237: :gen.do_call/4
       test/money_test.exs:20: (test)

Finished in 1.6 seconds (1.6s async, 0.00s sync)
5 tests, 1 failure
"""


@pytest.mark.parametrize(
    ("what", "expected"),
    [
        ("Assertion with == failed", "assertion"),
        ("** (ExUnit.TimeoutError) test timed out after 2000ms. You can change the timeout:", "timeout"),
    ],
)
def test_a_failure_is_what_the_test_reports_not_the_frame_it_stopped_in(what, expected):
    ex = extract(EXUNIT.format(what=what))
    assert ex.message == what
    assert categorize(ex) == expected


def test_words_in_a_frame_do_not_categorise_the_failure():
    text = (
        "  vclock_tests: merge_takes_max_test...*failed*\n"
        "in function vclock_tests:merge_takes_max_test/0 (test/vclock_tests.erl, line 11)\n"
        "in call from eunit_proc:with_timeout/3 (eunit_proc.erl, line 356)\n"
        "in call from eunit_proc:with_timeout/3 (eunit_proc.erl, line 346)\n"
    )
    assert category(text) != "timeout"


@pytest.mark.parametrize(
    "text",
    [
        "warning: HashDict.fetch/2 is deprecated. Use maps and the Map module instead\n"
        "  lib/session_store.ex:9: SessionStore.fetch/2\n\n"
        "Compilation failed due to warnings while using the --warnings-as-errors option\n",
        "src/main/java/com/acme/Dates.java:12: warning: [deprecation] getYear() in Date has been deprecated\n"
        "        return d.getYear();\n                ^\n"
        "error: warnings found and -Werror specified\n1 error\n1 warning\n",
        "make: Entering directory '/src'\ngcc -Wall -Werror -c -o stats.o stats.c\n"
        "cc1: all warnings being treated as errors\nmake: *** [Makefile:4: stats.o] Error 1\n",
    ],
)
def test_warnings_that_fail_the_build_are_a_compile_error(text):
    assert category(text) == "compile_error"


@pytest.mark.parametrize(
    "text",
    [
        'test/vclock_tests.erl:2:14: can\'t find include lib "eunit/include/eunit.hrl"',
        'File "lib/dune", line 3, characters 12-18:\n3 |  (libraries yojson unix))\n'
        '                ^^^^^^\nError: Library "yojson" not found.\n',
        "ld: library not found for -lssl\nclang: error: linker command failed with exit code 1",
        "Config.hs:5:1: error:\n    Could not find module \u2018Data.Aeson\u2019\n"
        "    Perhaps you meant Data.Version (from base-4.15.1.0)\n",
    ],
)
def test_a_library_or_include_that_is_not_there_is_a_missing_dependency(text):
    assert category(text) == "import_error"


@pytest.mark.parametrize(
    "text",
    [
        'Error in slice_max(by_region, score, n = 1) : \n  could not find function "slice_max"\nExecution halted\n',
        "* What went wrong:\nA problem occurred evaluating root project 'app'.\n"
        "> Could not find method testRuntme() for arguments [file collection] on object of type "
        "org.gradle.api.internal.artifacts.dsl.dependencies.DefaultDependencyHandler.\n",
        "172.16.0.0/12 -> Routes.hs: Map.!: given key is not an element in the map\n"
        "CallStack (from HasCallStack):\n"
        "  error, called at src/Data/Map/Internal.hs:633:17 in containers-0.6.4.1:Data.Map.Internal\n",
        "Fatal error: exception Not_found\n"
        'Raised at Stdlib__List.assoc in file "list.ml", line 191, characters 10-25\n'
        'Called from Tz.local_hour in file "tz.ml", line 5, characters 12-37\n',
    ],
)
def test_a_function_method_or_key_missing_at_run_time_is_not_found(text):
    assert category(text) == "not_found"


@pytest.mark.parametrize(
    "text",
    [
        'File "invoice.ml", line 11, characters 39-42:\n11 |       { qty = "3" }\n'
        "                 ^^^\nError: This expression has type string but an expression was expected of type\n"
        "         int\n",
        "Program.fs(5,13): error FS0001: This expression was expected to have type\n    'int'    \n"
        "but here has type\n    'string'",
    ],
)
def test_an_ml_type_mismatch_is_a_compile_error(text):
    assert category(text) == "compile_error"


@pytest.mark.parametrize(
    "text",
    [
        "FAILURE: Build failed with an exception.\n\n* What went wrong:\nCould not compile build file "
        "'/src/build.gradle'.\n> startup failed:\n  build file '/src/build.gradle': 27: expecting '}', found '' "
        "@ line 27, column 1.\n  1 error\n",
        "pyspark.errors.exceptions.captured.ParseException:\n[PARSE_SYNTAX_ERROR] Syntax error at or near 'FORM'.\n"
        "== SQL ==\nSELECT * FORM t\n",
        "line 1:9 mismatched input 'FORM' expecting {<EOF>, ';'}",
    ],
)
def test_a_parsers_expecting_found_is_a_compile_error(text):
    assert category(text) == "compile_error"


def test_a_runners_closing_test_failures_line_is_a_trailer_not_the_failure():
    # testthat (R): the failure block is the decisive one; 'Error: Test failures' only closes the run
    text = (
        "quarter: ...1.\n\n"
        "══ Failed ══════════════════\n"
        "── 1. Failure ('test-quarter.R:10'): labels name the fiscal year ──────\n"
        'fiscal_label("2026-04-01") not equal to "FY2026-Q1".\n'
        "1/1 mismatches\n"
        'x[1]: "FY2025-Q1"\n'
        'y[1]: "FY2026-Q1"\n\n'
        "══ DONE ════════════════════\n"
        "Error: Test failures\n"
        "Execution halted\n"
    )
    ex = extract(text)
    assert ex.message.startswith("── 1. Failure ('test-quarter.R:10')")
    assert categorize(ex) == "assertion"


def test_mavens_there_are_test_failures_is_a_trailer():
    text = (
        "[ERROR] Tests run: 3, Failures: 1, Errors: 0, Skipped: 0, Time elapsed: 0.05 s <<< FAILURE! -- in "
        "com.acme.CartTest\n"
        "[ERROR] com.acme.CartTest.total -- Time elapsed: 0.01 s <<< FAILURE!\n"
        "org.opentest4j.AssertionFailedError: expected: <12> but was: <11>\n"
        "\tat com.acme.CartTest.total(CartTest.java:14)\n"
        "[ERROR] There are test failures.\n"
    )
    ex = extract(text)
    assert "There are test failures" not in ex.message
    assert categorize(ex) == "assertion"
