"""Categories of failure classes added with signing method 7 (docs/signatures.md), each as a general
property of failure text in several tools' words: an exhausted stack, an exception a runtime reports as
uncaught, a value of the wrong type, a deadlock, a missing dependency or an out-of-date lock file, an
unknown command, a parser's error, and a checker's finding that words what it checked. The inputs are
small and written for the test in the shape the tools print."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text",
    [
        "\nthread 'main' has overflowed its stack\nfatal runtime error: stack overflow, aborting\n",
        'Traceback (most recent call last):\n  File "/src/app/tree.py", line 4, in walk\n    return walk(n)\n'
        "RecursionError: maximum recursion depth exceeded",
        "RangeError: Maximum call stack size exceeded\n    at walk (/src/app/tree.js:3:10)\n    at walk (/src/app/tree.js:3:10)",
        'Exception in thread "main" java.lang.StackOverflowError\n\tat com.acme.Tree.walk(Tree.java:3)\n'
        "\tat com.acme.Tree.walk(Tree.java:3)",
    ],
)
def test_an_exhausted_stack_is_memory_exhausted(text):
    assert category(text) == "out_of_memory"


def _recursion(function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/src/app/{function}.py", line 4, in {function}\n    return {function}(n)\n'
        f'  File "/src/app/{function}.py", line 4, in {function}\n    return {function}(n)\n'
        "RecursionError: maximum recursion depth exceeded"
    )


def _memory(function: str) -> str:
    return (
        "Traceback (most recent call last):\n"
        f'  File "/src/app/{function}.py", line 9, in {function}\n    rows = [0] * n\n'
        "MemoryError"
    )


def test_a_recursion_is_keyed_by_where_it_recursed_and_memory_exhaustion_is_not(tmp_path):
    with MemoryStore(tmp_path / "m.db") as store:
        walk, parse = store.error_signature(_recursion("walk")), store.error_signature(_recursion("parse"))
        assert walk.category == parse.category == "out_of_memory"
        assert walk.id != parse.id  # two recursions in two places are two errors
        assert walk.id == store.error_signature(_recursion("walk")).id
        load, build = store.error_signature(_memory("load")), store.error_signature(_memory("build"))
        assert load.category == "out_of_memory" and load.id == build.id  # the environment's, wherever it hit


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "PHP Fatal error:  Uncaught TypeError: Shop\\Cart::add(): Argument #1 ($qty) must be of type int, "
            "string given, called in /srv/shop/bin/add.php on line 8",
            "type_error",
        ),
        ("Unhandled exception. System.InvalidCastException: Unable to cast object of type 'A' to 'B'.", "type_error"),
        (
            "PHP Fatal error:  Uncaught Shop\\Errors\\FileNotFoundException: cart.json in /srv/shop/src/Cart.php:9",
            "not_found",
        ),
        ("lua5.4: report.lua:11: bad argument #1 to 'sort' (table expected, got nil)", "type_error"),
        ("jq: error (at data/users.json:3): Cannot iterate over null (null)", "type_error"),
        ("render(): Argument #2 ($items) must be of type array, null given", "type_error"),
        ("fatal error: all goroutines are asleep - deadlock!\n\ngoroutine 1 [chan receive]:", "timeout"),
        ('meson.build:7:10: ERROR: Dependency "zlib" not found, tried pkgconfig and cmake', "import_error"),
        ("configure: error: libcurl is required: install libcurl4-openssl-dev", "import_error"),
        ("configure: error: Package requirements (glib-2.0 >= 2.56) were not met:", "import_error"),
        (
            "npm error `npm ci` can only install packages when your package.json and package-lock.json are in "
            "sync. Please update your lock file with `npm install` before continuing.",
            "import_error",
        ),
        (
            "error: the lock file /src/app/Cargo.lock needs to be updated but --locked was passed to prevent this",
            "import_error",
        ),
        ("error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.", "import_error"),
        ('invalid command name "netmask"\n    while executing\n"netmask $bits"', "not_found"),
        ("git: 'pul' is not a git command. See 'git --help'.\nerror: unknown command 'pul'", "not_found"),
        ("pip._vendor.tomli.TOMLDecodeError: Unclosed array (at line 13, column 5)", "compile_error"),
        ("json.decoder.JSONDecodeError: Expecting ',' delimiter: line 1 column 9 (char 8)", "compile_error"),
        ("yaml.scanner.ScannerError: mapping values are not allowed here", "compile_error"),
    ],
)
def test_each_class_in_its_tools_words(text, expected):
    assert category(text) == expected


def test_a_decoding_error_of_text_is_not_a_parse_error():
    text = "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xff in position 0: invalid start byte"
    assert category(text) != "compile_error"


def test_a_checkers_finding_is_a_finding_whatever_it_checked():
    finding = "  10:7      error    wrong indentation: expected 8 but found 6  (indentation)"
    linted = f"$ yamllint -f parsable deploy/\ndeploy/app.yaml\n{finding}\n"
    assert category(linted) == "test_failure"
    undefined = "$ npx eslint src/\n/src/app/main.js\n  3:1  error  'render' is not defined  no-undef\n"
    assert category(undefined) == "test_failure"
    # the same words from a step that runs no checker are what they say
    assert category(f"$ ./check_indent.sh deploy/\n{finding}\n") == "assertion"


@pytest.mark.parametrize(
    "text",
    [
        "OSError: [Errno 12] Cannot allocate memory",
        "bash: fork: Cannot allocate memory",
        "fatal: Out of memory, malloc failed (tried to allocate 1073741824 bytes)",
    ],
)
def test_the_systems_own_words_for_running_out_of_memory_are_out_of_memory(text):
    assert category(text) == "out_of_memory"


@pytest.mark.parametrize(
    "text",
    [
        "lib/app.ex is not formatted",
        "src/app.kt: not properly formatted",
        "src/main.dart needs formatting",
    ],
)
def test_a_formatters_report_that_a_file_is_not_formatted_is_a_finding(text):
    assert category(text) == "test_failure"


@pytest.mark.parametrize(
    "msg",
    [
        'app/jobs.py:41: error: Item "None" of "Optional[Job]" has no attribute "failed"  [union-attr]',
        'app/status.py:9: error: Name "FAILED" already defined on line 3  [no-redef]',
    ],
)
def test_a_type_checkers_error_stays_a_type_error_when_it_names_something_failed(msg):
    # 'failed' is the name of an attribute or a constant here, not a test's report
    assert category(msg) == "type_error"


def test_a_type_checkers_error_whose_location_is_on_the_next_line_is_a_type_error():
    # ty and ruff print rustc's layout: the finding first, its file:line on the arrow line below
    text = "error[unresolved-reference]: Name `x` used when not defined\n --> src/app/main.py:3:5\n  |\n3 | print(x)\n"
    assert category(text) == "type_error"


def test_an_exception_of_no_known_category_raised_in_a_pytest_test_is_a_test_failure():
    text = (
        "=================================== FAILURES ===================================\n"
        "__________________________________ test_ship ___________________________________\n\n"
        "    def test_ship():\n        parcel = Parcel(weight=3)\n"
        '>       raise ShippingError("carrier rejected parcel")\n'
        "E       shipping.ShippingError: carrier rejected parcel\n\n"
        "tests/test_ship.py:5: ShippingError\n"
        "=========================== short test summary info ============================\n"
        "FAILED tests/test_ship.py::test_ship - shipping.ShippingError: carrier rejected parcel\n"
        "============================== 1 failed in 0.03s ===============================\n"
    )
    assert category(text) == "test_failure"
