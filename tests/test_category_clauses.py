"""Category read from the decisive statement, by method (signing method 27, docs/signatures.md "The clause model").

- a failure line states a failed operation and the reason it failed; the reason decides unless it is an absence
  that the operation's kind explains (``failure_lexicon.failed_operation`` / ``clause_category``);
- a stack frame (of any common runtime) and a Python frame's source line never decide the category of the statement
  they trace;
- a URL's path and a catalogue entry's number (``CWE-502``) are no status code;
- a finding a ``Severity:`` line rates is a checker's finding;
- a bare location line takes the statement printed above it.

The lines below are written for these tests in the words of tools other than the CI corpus logs the rules were
measured on (docker, MySQL, Go's net package, Redis, awk, grep, TensorFlow, PyTorch, gpg, conda, Composer, cargo).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import error_signatures as es, failure_lexicon as lex
from harness_memory.failure_excerpt import extract
from harness_memory.failure_lexicon_tables import ERROR_TEXTS


def category(text: str) -> str:
    return es.categorize(extract(text))


# -- the clause model: a failed operation and its reason ---------------------------------------------------------
# failed operations in several tools' words, each with the category of its kind
OPERATIONS = [
    ("network", 'psql: error: connection to server on socket "/run/postgresql/.s.PGSQL.5432" failed'),
    ("network", "ERROR 2002 (HY000): Can't connect to local MySQL server through socket '/run/mysqld/mysqld.sock'"),
    ("network", 'Get "http://unix/v1.43/info": dial unix /var/run/docker.sock: connect'),
    ("network", "error: could not connect to server"),
    ("network", "amqp: unable to connect to broker at /run/rabbitmq.sock"),
    ("timeout", "Fatal error: Maximum execution time of 30 seconds exceeded in /srv/app/index.php on line 9"),
    ("timeout", "worker: the job exceeded the time limit of 60 minutes"),
    ("type_error", 'Can\'t call method "name" on an undefined value at lib/Acme/Report.pm line 4.'),
    ("import_error", "error: No solution found when resolving dependencies"),
    ("import_error", "Your requirements could not be resolved to an installable set of packages."),
    ("compile_error", "awk: cmd. line:1: unterminated string"),
    ("type_error", "InvalidArgumentError: Incompatible shapes: [2,3] vs. [3,2]"),
    ("permission", "Permissions 0777 for '/home/u/.ssh/id_ed25519' are too open."),
]
# reasons an operating system gives (glibc's texts), one per category the lexicon knows
REASONS = sorted({cat: text for text, cat in ERROR_TEXTS.items() if cat}.items())


@pytest.mark.parametrize(("want", "line"), OPERATIONS)
def test_a_failed_operation_names_its_category(want, line):
    assert category(line) == want


@settings(max_examples=200, deadline=None)
@given(op=st.sampled_from(OPERATIONS), reason=st.sampled_from(REASONS))
def test_the_reason_decides_unless_it_is_an_absence_the_operation_explains(op, reason):
    """The documented precedence: an operating system's reason outranks the operation it ended (``connect to
    host: Connection timed out`` is a timeout), except an absence (``No such file or directory``), which names the
    operation's missing object: then the operation's kind decides (a server's socket that is not there: network)."""
    op_cat, op_line = op
    reason_cat, reason_text = reason
    line = f"{op_line.rstrip('.')}: {reason_text[:1].upper()}{reason_text[1:]}"
    want = op_cat if reason_cat in lex.ABSENCE_REASONS else reason_cat
    assert es._by_text(line) == want, line


def test_clause_category_precedence():
    assert lex.clause_category("timeout", "network") == "timeout"
    assert lex.clause_category("permission", "network") == "permission"
    assert lex.clause_category("not_found", "network") == "network"
    assert lex.clause_category("not_found", None) == "not_found"
    assert lex.clause_category(None, "timeout") == "timeout"
    assert lex.clause_category(None, None) is None


@pytest.mark.parametrize(
    "line",
    [
        "connecting to db.internal:5432",  # an operation that did not fail
        "Connected to server 10.0.0.5",
        "the request took 2 seconds",
        "value = undefined",
        "resolving dependencies...",
        "permissions: 0644",
    ],
)
def test_an_operation_that_is_not_said_to_fail_names_nothing(line):
    assert lex.failed_operation(line.lower()) is None


# -- stack frames never decide -------------------------------------------------------------------------------------
# words of every environment category, as a frame's function, file or source line would hold them
FRAME_WORDS = [
    "connect_timeout",
    "retry_on_connection_refused",
    "check_permission_denied",
    "rate_limit",
    "out_of_memory_guard",
    "not_found_handler",
    "read_timed_out",
    "TooManyRequests",
]
STATEMENTS = [
    "ValueError: bad value 7",
    "RuntimeError: invariant broken",
    "ValueError: operands could not be broadcast together with shapes (3,4) (3,)",
    "PermissionError: [Errno 13] Permission denied: 'out.csv'",
    "KeyError: 'region'",
]


def _python_traceback(words: list[str], statement: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for i, w in enumerate(words):
        lines.append(f'  File "/srv/app/{w.lower()}/{w.lower()}_util.py", line {10 + i}, in {w}')
        lines.append(f"    result = {w}(payload)")
        lines.append("             ^^^^^^^^^^^^")
    lines.append(statement)
    return "\n".join(lines) + "\n"


def _java_trace(words: list[str], statement: str) -> str:
    lines = [f'Exception in thread "main" java.lang.{statement}']
    for i, w in enumerate(words):
        cls = "".join(p.capitalize() for p in w.split("_"))
        lines.append(f"\tat com.acme.{w.lower()}.{cls}.{w}({cls}.java:{10 + i})")
    return "\n".join(lines) + "\n"


@settings(max_examples=150, deadline=None)
@given(
    words=st.lists(st.sampled_from(FRAME_WORDS), min_size=1, max_size=4),
    statement=st.sampled_from(STATEMENTS),
)
def test_a_frame_never_decides_the_category_of_a_python_statement(words, statement):
    neutral = _python_traceback(["main"], statement)
    assert category(_python_traceback(words, statement)) == category(neutral)


@settings(max_examples=100, deadline=None)
@given(
    words=st.lists(st.sampled_from(FRAME_WORDS), min_size=1, max_size=4),
    statement=st.sampled_from(["IllegalStateException: bad state", "IllegalArgumentException: negative size"]),
)
def test_a_frame_never_decides_the_category_of_a_java_statement(words, statement):
    assert category(_java_trace(words, statement)) == category(_java_trace(["main"], statement)) == "unknown"


@pytest.mark.parametrize(
    "frame",
    [
        '  File "/srv/app/net/timeout.py", line 3, in connect_with_timeout',
        "\tat com.acme.net.ConnectionTimeoutHandler.handle(ConnectionTimeoutHandler.java:10)",
        "    at retryOnTimeout (/srv/app/net/timeout.js:12:7)",
        "\tfrom /srv/app/lib/rate_limit.rb:3:in `throttle'",
        "#0 /srv/app/src/Timeout.php(12): Acme\\Net\\Timeout->connect()",
        "\t/srv/app/net/timeout.go:12 +0x1d",
        "main.connectTimeout(0xc000010000, 0x5)",
        "main.connectTimeout(...)",
        "created by net/http.(*Server).Serve in goroutine 1",
    ],
)
def test_said_drops_the_frames_of_every_common_runtime(frame):
    said = es._said(f"RuntimeError: invariant broken\n{frame}")
    assert said == "RuntimeError: invariant broken"


@pytest.mark.parametrize(
    "line",
    ["TimeoutError(read timed out)", "check(timeout > 0)", "at least 3 tests timed out", "created by the scheduler"],
)
def test_a_statement_shaped_like_a_call_is_no_frame(line):
    assert es._said(f"RuntimeError: invariant broken\n{line}") == f"RuntimeError: invariant broken\n{line}"


# -- words out of their role -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line",
    [
        "See https://example.com/errors/404 for the list of options",
        "More Info: https://docs.example.org/en/1.0/checks/503.html",
        "   CWE: CWE-502 (https://cwe.mitre.org/data/definitions/502.html)",
        "note: the advisory is tracked as GHSA-429",
    ],
)
def test_a_urls_path_and_a_catalogue_number_are_no_status(line):
    assert es._by_text(line) is None


@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("GET https://registry.example.com/v2/x/manifests/1.0 returned 404", "not_found"),
        ("curl: (22) The requested URL returned error: 503", "network"),
        ("HTTP 429 Too Many Requests from https://api.example.com/v1/items", "rate_limit"),
    ],
)
def test_a_status_outside_the_url_still_counts(line, want):
    assert es._by_text(line) == want


def test_a_finding_rated_by_a_severity_line_is_a_checkers():
    log = (
        "Run started\n\nTest results:\n"
        ">> Issue: [S301:crypto] Use of weak MD5 hash for security. Consider usedforsecurity=False\n"
        "   Severity: Medium   Confidence: High\n"
        "   CWE: CWE-327 (https://cwe.mitre.org/data/definitions/327.html)\n"
        "   Location: app/hashing.py:4:11\n"
    )
    assert category(log) == "test_failure"


# -- a bare location line and the statement above it ------------------------------------------------------------------
def test_a_bare_location_takes_the_statement_above_it():
    log = (
        "> web@2.0.0 build\n> esbuild src/main.ts --bundle --outfile=dist/app.js\n\n"
        '✘ [ERROR] Could not resolve "left-pad"\n\n'
        "    src/main.ts:7:20:\n"
        '      7 │ import leftPad from "left-pad";\n'
        "        ╵                     ~~~~~~~~~~\n\n"
        "1 error\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 4  # the statement's line
    assert "Could not resolve" in ex.message
    assert es.categorize(ex) == "import_error"
