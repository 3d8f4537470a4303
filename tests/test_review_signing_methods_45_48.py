"""Defects an independent review found in signing methods 45-47 (2026-11-28), each pinned by its reproducing input:
a status line's figures read as a body's reason, a padded push rejection missed, a check's own ``ok`` word read as a
verdict, Tcl's trace rule promoting any line, an aside read as a failed operation's reason."""

from __future__ import annotations

import pytest

from harness_memory.error_signatures import _by_text, categorize
from harness_memory.failure_excerpt import extract

TB = (
    'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n    r.raise_for_status()\n'
    "requests.exceptions.HTTPError: {status} for url: https://api.example.com/x\n"
)


@pytest.mark.parametrize(
    "above, status, expected",
    [
        # a status line's figures and a setting above the traceback are no body's reason
        ("Rate limit: 4987/5000", "401 Client Error: Unauthorized", "permission"),
        (
            "headers={'X-RateLimit-Limit': '5000', 'X-RateLimit-Remaining': '4987'}",
            "404 Client Error: Not Found",
            "not_found",
        ),
        ("fetching with throttle 0.2s", "404 Client Error: Not Found", "not_found"),
        ("Summarising with gpt-4o (context window 128000 tokens)", "401 Client Error: Unauthorized", "permission"),
        # a body that states the limit was hit decides
        ('{"message": "API rate limit exceeded for 10.0.0.1."}', "403 Client Error: Forbidden", "rate_limit"),
        (
            '{"error": "This model\'s maximum context length is 8192 tokens"}',
            "400 Client Error: Bad Request",
            "context_overflow",
        ),
    ],
)
def test_only_a_reason_stated_as_a_failure_decides_over_an_http_status(above, status, expected):
    assert categorize(extract(f"{above}\n{TB.format(status=status)}")) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("gh: Not Found (HTTP 404)\nx-ratelimit-remaining: 4999", "not_found"),
        ("curl: (22) The requested URL returned error: 404\nretrying; rate limit is 60 per hour", "not_found"),
        ("curl: (22) The requested URL returned error: 403\nYou have exceeded a secondary rate limit.", "rate_limit"),
    ],
)
def test_lines_under_a_status_decide_only_when_they_state_a_limit_hit(text, expected):
    assert categorize(extract(text)) == expected


def test_a_padded_push_rejection_is_the_statement_and_a_remote_notice_is_not():
    log = (
        "Run git push\nremote: Create a pull request for 'main' on GitHub\nTo github.com:a/b.git\n"
        " ! [rejected]        main -> main (non-fast-forward)\nerror: failed to push some refs to 'github.com:a/b.git'\n"
    )
    ex = extract(log)
    assert ex.lines == (4, 4) and categorize(ex) == "compile_error"  # a change that does not apply on the remote's


def test_a_complaint_ending_in_a_check_word_is_still_the_report():
    log = "+ ./smoke.sh\nhealthcheck: GET /health = 503, want ok\nmake: *** [Makefile:2: smoke] Error 1\n"
    assert extract(log).lines == (2, 2)


@pytest.mark.parametrize(
    "log",
    [
        'warning: deprecated option --foo\n    while executing\n"make"\nmake: *** [all] Error 2\n',
        "Running tests\n    while executing\nFAILED tests/test_a.py::test_b - assert 1 == 2\n",
    ],
)
def test_tcl_s_trace_rule_needs_tcl_s_trace(log):
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] != 1


def test_an_aside_after_a_failed_operation_is_no_reason():
    line = 'connection to server failed: FATAL:  password authentication failed for user "ci" (attempt 3, timeout 10s)'
    assert categorize(extract(line)) != "timeout"


def test_a_go_comparison_is_an_assertion_whatever_the_compared_values_say():
    log = '    patch_test.go:20: Apply() = "Hunk #1 FAILED at 2", want "ok"\n--- FAIL: TestPatch (0.00s)\nFAIL\n'
    assert categorize(extract(log)) == "assertion"


@pytest.mark.parametrize(
    "line, expected",
    [
        (
            "FAILED tests/test_graph.py::test_no_dependency_cycle - AssertionError: found dependency cycle a->b",
            "assertion",
        ),
        ("FAILED tests/t.py::test_db - ConnectionRefusedError: [Errno 111] Connection refused", "network"),
        ("FAILED tests/t.py::test_x - Failed: DID NOT RAISE <class 'ValueError'>", "assertion"),
    ],
)
def test_pytest_s_summary_line_is_read_by_its_exception(line, expected):
    assert categorize(extract(line)) == expected


def test_a_reason_is_read_on_the_operation_s_line_only():
    log = "failed to connect to the broker\nnext attempt in 30 s, timeout raised to 60 s\n"
    assert categorize(extract(log)) == "network"
    # (a block of several lines: the line after the operation's is not its reason)
    assert _by_text("failed to connect to the broker\nnext attempt in 30 s, timeout raised to 60 s") == "network"


def test_a_status_line_whose_words_name_another_kind_keeps_it_whatever_the_body():
    log = 'upload failed: 400 Bad Request: no such file \'a.bin\'\n{"message": "API rate limit exceeded"}\n'
    assert categorize(extract(log)) == "not_found"


def test_the_preamble_of_any_excerpt_is_the_lines_right_above_it():
    log = "alpha\nbeta\ngamma\nError: generateContent failed: 400 Bad Request\n    at main (file:///w/a.mjs:3:9)\n"
    assert extract(log).preamble == "alpha\nbeta\ngamma"


@pytest.mark.parametrize(
    "log, first",
    [
        ('warning: foo\nexpected integer but got "x"\n    while executing\n"incr a $b"', 2),
        ('warning: foo\nexpected integer but got "x"\n    while executing', None),  # a trace cut short: no crash
    ],
)
def test_tcl_s_trace_at_the_end_of_a_log(log, first):
    ex = extract(log)
    if first is not None:
        assert ex.lines is not None and ex.lines[0] == first
