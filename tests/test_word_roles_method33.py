"""Signing method 33: a word's role decides whether it names a category (docs/signatures.md, "Method 33").

- ``failed`` names a test's or a check's failure (test_failure) only as a verdict: first or last on its line, a count,
  or said of a test or check on the same line; an operation's ``failed`` whose reason follows (``Automatic merge
  failed; fix conflicts``, ``UNIQUE constraint failed: plans.slug``) is not a test;
- a variable's, field's, key's or function's name (lower-case initial, snake_case or camelCase) is what a failure is
  about, never its kind, unless the name itself states an outcome (an error code in lower case).

The rules are checked alone (the learned fallback off), as ``categorize`` reads them.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def rules(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # (a merge or a patch that does not apply is compile_error since method 45: still never a test's failure)
        ("Automatic merge failed; fix conflicts and then commit the result.", "compile_error"),
        # (a declared constraint that fails is an assertion since method 47: still never a test's failure)
        ("Runtime error near line 5: UNIQUE constraint failed: plans.slug (19)", "assertion"),
        (
            'E1127 14:02:33.776373   24461 run.go:72] "command failed" err="accumulating resources: may not add"',
            "unknown",
        ),
        ("error: failed to convert config.yaml to json", "unknown"),
        ("deploy: rollout failed because the image could not be pulled from the mirror", "unknown"),
        ("1 out of 1 hunk FAILED -- saving rejects to file src/main.c.rej", "compile_error"),
        # an operation that failed for a reason the line gives: the reason, never a test
        ("failed to load settings: EACCES", "permission"),
        ("failed to list keys: Forbidden", "permission"),
        ("error retrieving parameters: RequestLimitExceeded", "rate_limit"),
        ("error retrieving parameter: ParameterNotFound", "not_found"),
        ("unable to read flags: ECONNRESET", "network"),
        ("error: failed to fetch signing key: ETIMEDOUT", "timeout"),
        ("Error: failed to decrypt data key: AccessDeniedException", "permission"),
        ("failed writing column: ENOSPC", "out_of_memory"),
    ],
)
def test_an_operation_that_failed_is_no_test(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "text",
    [
        "downloads/helm-v3.16.3-linux-amd64.tar.gz: FAILED",
        "black....................................................................Failed",
        "---------------- RESULT: FAILED (minimum: 80.0%, actual: 37.5%) ----------------",
        "commit validation: failed!",
        "test tests::rejects_garbage - should panic ... FAILED",
        "tests/test_parser.py::test_empty_input FAILED                                [ 50%]",
        "FAILED tests/test_parser.py::test_empty_input",
        "==== 1 failed, 2 passed in 0.12s ====",
        "error: Recipe `test` failed on line 4 with exit code 1",
        "npm ERR! Failed at the ledger@1.0.0 test script.",
        "Tests failed",
        "2 checks failed",
        # a verdict after a runner's own column, with a time, or of a test task
        "[gw1] [ 50%] FAILED tests/test_parser.py::test_empty_input",
        "app-1  | FAILED src/app/test_a.py::test_x",
        "10:00:00  FAILED src/app/test_a.py::test_x",
        "//foo/bar:parser_test                                                    FAILED in 0.5s",
        "1/3 Test #1: parser_test ..............................................***Failed    0.01 sec",
        "Execution failed for task ':app:testDebugUnitTest'.",
        "Execution failed for task ':web:browserSpecs'.",  # a spec's name reads as a test too
    ],
)
def test_a_verdict_or_a_count_is_a_test_failure(text):
    assert rules(text) == "test_failure", text


@pytest.mark.parametrize(
    "text, expected",
    [
        ('✘ [ERROR] No matching export in "src/config.js" for import "connectTimeout"', "unknown"),
        ("error: unknown field `read_timeout`, expected one of `name`, `version`", "unknown"),
        (
            "ReferenceError: socketTimeout is not defined",
            "not_found",
        ),  # (an undefined name since method 35; no timeout)
        ("error: http2Timeout is not defined", "unknown"),  # a digit before the capital
        ("src/a.ts(3,5): error TS2339: Property 'retryTimeout' does not exist on type 'Options'.", "type_error"),
        ("AttributeError: module 'app' has no attribute 'oom_guard'", "type_error"),
        ("NameError: name 'permission_check' is not defined", "not_found"),  # (method 35; no permission)
        (
            "40B70E732A7F0000:error:1608010C:STORE routines:ossl_store_handle_load_result:unsupported:"
            "../crypto/store/store_result.c:151:",
            "unknown",
        ),
        ("ERROR: test_connection_refused (tests.test_net.NetTests)", "unknown"),
    ],
)
def test_a_variable_s_name_is_not_the_failure_s_kind(text, expected):
    assert rules(text) == expected, text


@pytest.mark.parametrize(
    "text",
    [
        "ERROR: Unknown config option: timeout",
        "Invalid value for option 'timeout': must be > 0",
        "error: unknown flag: --memory",
        "ERROR 1054 (42S22): Unknown column 'quota' in 'field list'",
    ],
)
def test_the_name_a_noun_of_names_introduces_is_not_read(text):
    assert rules(text) == "unknown", text


_CMAKE = (
    "CMake Error at /usr/share/cmake-3.28/Modules/FindPackageHandleStandardArgs.cmake:230 (message):\n"
    "  Could NOT find {0} (missing: {1})\nCall Stack (most recent call first):\n"
    "  /usr/share/cmake-3.28/Modules/Find{0}.cmake:689 (find_package_handle_standard_args)\n"
    "  CMakeLists.txt:8 (find_package)"
)


@pytest.mark.parametrize(
    "text, expected",
    [
        ('{"error":{"code":"rate_limit_exceeded","message":"slow down"}}', "rate_limit"),
        ('{"error": {"errors": [{"reason": "rateLimitExceeded"}]}}', "rate_limit"),
        ("terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc", "out_of_memory"),
        # lower-case error codes that end in timeout (hackney, Envoy's response flag, Stripe), and an error's name
        ("** (HTTPoison.Error) :connect_timeout", "timeout"),
        ('[2024-01-01T00:00:00.000Z] "GET /api HTTP/1.1" 504 UT upstream_response_timeout 0 24 15000', "timeout"),
        ('{"error":{"code":"lock_timeout","message":"x"}}', "timeout"),
        ("error: rate_limit_failed", "rate_limit"),  # a code ending in failed states an outcome
        ("RuntimeError: cudaErrorLaunchTimeout", "timeout"),
        # the rules' own snake_case evidence (CMake's find_package, RSpec's end_with)
        (_CMAKE.format("Boost", "Boost_INCLUDE_DIR system filesystem"), "import_error"),
        (_CMAKE.format("OpenSSL", "OPENSSL_CRYPTO_LIBRARY"), "import_error"),
        ('  expected "barfoo" to end_with "foo"', "assertion"),
        # class and exception names and upper-case codes are read as before
        (
            "requests.exceptions.ConnectTimeout: HTTPSConnectionPool(host='x', port=443): Max retries exceeded",
            "timeout",
        ),
        ("Error: connect ETIMEDOUT 10.0.0.1:443", "timeout"),
        ("E   TimeoutError: timed out waiting for db_connection", "timeout"),
        ("socket_timeout_exception: 30,000 milliseconds timeout on connection", "timeout"),
        # a noun of names followed by words that go on is a sentence, read as before
        ("open key: permission denied", "permission"),
    ],
)
def test_a_name_that_states_an_outcome_is_still_read(text, expected):
    assert rules(text) == expected, text


# words that the category rules know (alone they name a category) and words that name things
_KEYED = ["timeout", "rate", "limit", "oom", "memory", "permission", "socket", "network", "connection", "ssl", "token",
          "quota", "host", "proxy", "alloc", "stack", "throttle", "auth", "lock", "deadline"]  # fmt: skip
_THINGS = ["guard", "check", "path", "value", "handler", "config", "setting", "count", "helper", "client", "pool",
           "name", "key", "id", "holder", "table"]  # fmt: skip
_TEMPLATES = [
    "NameError: name '{}' is not defined",
    "ReferenceError: {} is not defined",
    'No matching export in "src/config.js" for import "{}"',
    "src/app.ts(3,5): error TS2339: Property '{}' does not exist on type 'Options'.",
    "error: unknown field `{}`, expected one of `name`, `version`",
    "AttributeError: 'Settings' object has no attribute '{}'",
    "KeyError: '{}'",
]


@st.composite
def lower_names(draw):
    """A lower-case-initial name of keyed words ending in a word that names a thing (so it states no outcome)."""
    words = draw(st.lists(st.sampled_from(_KEYED + _THINGS), min_size=1, max_size=3)) + [draw(st.sampled_from(_THINGS))]
    if draw(st.booleans()):
        return "_".join(words)
    return words[0] + "".join(w.capitalize() for w in words[1:])


@settings(max_examples=300, deadline=None)
@given(name=lower_names(), template=st.sampled_from(_TEMPLATES))
def test_a_variable_s_name_never_changes_the_category(name, template):
    assert rules(template.format(name)) == rules(template.format("foo_bar")), (template, name)
