"""Classes met in the heldout28 and heldout29 splits of the CI-log corpus (their first runs at signing method 47:
tests/fixtures/ci_logs/README.md, "The `heldout28` split", "The `heldout29` split"), each written as a general rule
(signing method 48) and tested on inputs of other tools and words than the splits' logs, with neighbours that keep
their category; the splits' logs are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # a value larger than a runtime's or a tool's size limit
        ("Error: stepping, string or blob too big (18)", "out_of_memory"),
        ("lua5.4: x.lua:2: resulting string too large", "out_of_memory"),
        ("_csv.Error: field larger than field limit (131072)", "out_of_memory"),
        # a prompt's token count over the model's limit
        (
            '{"error": {"message": "The input token count (900000) exceeds the maximum number of tokens allowed"}}',
            "context_overflow",
        ),
        # values an operation cannot take or compare
        ("ValueError: math domain error", "type_error"),
        ("OverflowError: math range error", "type_error"),
        ("app.rb:3:in `sort': comparison of String with Float failed (ArgumentError)", "type_error"),
        ("integer value too large to represent", "type_error"),
        ("lua: a.lua:9: invalid value (boolean) at index 2 in table for 'concat'", "type_error"),
        ("DOMException [DataCloneError]: function f() {} could not be cloned.", "type_error"),
        ("DOMException [TimeoutError]: The operation was aborted due to timeout", "timeout"),
        # options a program does not have; a function a database does not have
        ("usage: deploy.py [-h]\ndeploy.py: error: unrecognized arguments: --dry-run", "not_found"),
        ("grep: unrecognized option '--colour-always'", "not_found"),
        ("Error: in prepare, no such function: json_each_x", "not_found"),
        # two structures a test compared
        ("#   Failed test 'config'\n#     Structures begin differing at:\n#          $got->{port} = '80'", "assertion"),
    ],
)
def test_heldout28_and_heldout29_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ("ModuleNotFoundError: No module named 'x'", "import_error"),
        ("Error: no such module: fts6", "import_error"),
        ("sqlite3.OperationalError: no such table: users", "not_found"),
        ("MemoryError", "out_of_memory"),
        ("This model's maximum context length is 8192 tokens", "context_overflow"),
        ("TypeError: '<' not supported between instances of 'int' and 'str'", "type_error"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) != "unknown" and category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        ("unrecognized arguments were ignored by design; continuing", "timeout"),
        ("the token count is 12, well under the limit", "context_overflow"),
        ("comparison of results finished", "type_error"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


def test_a_flag_named_after_a_kind_is_not_that_kind():
    # what follows argparse's "unrecognized arguments:" is names and values: --retry-timeout names no timeout
    assert category("smoke.py: error: unrecognized arguments: --retry-timeout 5 --rate-limit 9") == "not_found"


def test_a_status_with_its_reason_printed_above_the_error_line():
    body = '{\n  "error": {\n    "code": 400,\n    "message": "The input token count (1200000) exceeds the maximum",\n'
    body += '    "status": "INVALID_ARGUMENT"\n  }\n}\n'
    err = "Error: generateContent failed: 400 Bad Request\n    at main (file:///w/a.mjs:3:9)\n"
    assert category(body + err) == "context_overflow"
    assert category("uploading\n" + err) == "unknown"  # a status that names nothing, and nothing above: unknown


def test_unittest_s_unexpected_success_is_the_statement_not_its_summary():
    log = (
        "test_a (t.T.test_a) ... ok\ntest_b (t.T.test_b) ... unexpected success\n\n" + "=" * 70 + "\n"
        "UNEXPECTED SUCCESS: test_b (t.T.test_b)\n" + "-" * 70 + "\nRan 2 tests in 0.001s\n\n"
        "FAILED (unexpected successes=1)\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 5 and categorize(ex) == "test_failure"


def test_a_codebuild_phase_result_gives_way_to_the_report_above():
    log = (
        "[Container] 2026/11/27 14:02:10.000000 Running command ./wait.sh\nwaiting (1)\nwaiting (2)\n"
        "timeout: sending signal TERM to command './wait.sh'\n"
        "[Container] 2026/11/27 14:02:17.920000 Command did not exit successfully ./wait.sh exit status 124\n"
        "[Container] 2026/11/27 14:02:18.320000 Phase complete: BUILD State: FAILED\n"
    )
    ex = extract(log)
    assert ex.lines == (4, 4) and categorize(ex) == "timeout"


@settings(max_examples=60, deadline=None)
@given(
    a=st.sampled_from(["Integer", "String", "Float", "NilClass", "Time", "nil"]),
    b=st.sampled_from(["Integer", "String", "Float", "NilClass", "Time", "nil"]),
)
def test_ruby_s_failed_comparison_is_a_type_error_whatever_the_classes(a, b):
    assert category(f"x.rb:7:in `max': comparison of {a} with {b} failed (ArgumentError)") == "type_error"
