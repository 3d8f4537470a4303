"""Classes met in the heldout12 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md, "The
`heldout12` split"), each written as a general rule (error_signatures' words, failure_excerpt's line shapes) and tested
on inputs of other tools and words than the split's logs, with neighbours that keep their category; the split's logs,
one test per log family, are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # YAML or JSON that does not parse, in other parsers' and tools' words
        (
            "Error: INSTALLATION FAILED: YAML parse error on chart/templates/svc.yaml: error converting YAML to JSON: "
            "yaml: line 7: mapping values are not allowed in this context",
            "compile_error",
        ),
        ("error: yaml: line 3: found character that cannot start any token", "compile_error"),
        ("docker-compose.yml: yaml: line 12: did not find expected key", "compile_error"),
        ("Uncaught JSON::ParserError: malformed JSON in config/app.json", "compile_error"),
        ("error: invalid JSON in .eslintrc.json at position 88", "compile_error"),
        # a text that is not the value it is read as
        ("ValueError: invalid literal for int() with base 10: 'eight'", "type_error"),
        ("ValueError: could not convert string to float: 'n/a'", "type_error"),
        (
            "thread 'main' panicked at src/main.rs:4:38:\ncalled `Result::unwrap()` on an `Err` value: ParseIntError "
            "{ kind: InvalidDigit } (invalid digit found in string)",
            "type_error",
        ),
        (
            'Exception in thread "main" java.util.InputMismatchException: For input string: "x1"\n\tat java.base/java.util.Scanner.next(Scanner.java:1594)',
            "type_error",
        ),
        (
            "UnicodeEncodeError: 'ascii' codec can't encode character '\\u2713' in position 0: ordinal not in range(128)",
            "type_error",
        ),
        ("error: couldn't read src/lib.rs: stream did not contain valid UTF-8", "type_error"),
        ('jq: error (at <stdin>:3): Cannot index number with "id"', "type_error"),
        # a lock or checksum file that would have to change and may not; a package without its metadata
        ("error Your lockfile needs to be updated, but yarn was run with `--frozen-lockfile`.", "import_error"),
        (
            'ERR_PNPM_OUTDATED_LOCKFILE  Cannot install with "frozen-lockfile" because pnpm-lock.yaml is not up to date',
            "import_error",
        ),
        (
            "error: the lock file /src/Cargo.lock needs to be updated but --locked was passed to prevent this",
            "import_error",
        ),
        ("verifying module: missing go.sum entry for module providing package github.com/x/y", "import_error"),
        ("pkg_resources.DistributionNotFound: The 'acme-tools>=2.0' distribution was not found", "import_error"),
        # names glued to NotFound: a missing thing, unless it is a package, module or class (import_error)
        ("botocore.errorfactory.ResourceNotFoundException: Requested resource not found: Table: orders", "not_found"),
        ("Error: KeyNotFoundException: The given key 'region' was not present in the dictionary.", "not_found"),
        ("java.lang.ClassNotFoundException: org.postgresql.Driver", "import_error"),
        # a variable or a ref that does not exist
        ("PHP Warning:  Undefined variable $total in /app/cart.php on line 14", "not_found"),
        ("error: pathspec 'release/9' did not match any file(s) known to git", "not_found"),
        ("fatal: could not find remote branch release-9 to clone.", "not_found"),
        # a socket that cannot be bound
        ("OSError: [Errno 98] Address already in use", "network"),
        ("listen tcp :8080: bind: address already in use", "network"),
        ("java.net.BindException: Address already in use", "network"),
        # a limit of time exceeded, in a runner's words; a setting named timeout is not one
        (
            "##[error]The job running on runner GitHub Actions 3 has exceeded the maximum execution time of 360 minutes.",
            "timeout",
        ),
        ("Too long with no output (exceeded 10m0s): context deadline exceeded", "timeout"),
        ("hypothesis.errors.DeadlineExceeded: Test took 1021.55ms, which exceeds the deadline of 200.00ms", "timeout"),
        (
            'Get "http://127.0.0.1:9000/minio/health?timeout=5s": dial tcp 127.0.0.1:9000: connect: connection refused',
            "network",
        ),
        # a limit of open files exhausted; a stack exhausted in Ruby's words
        ("Error: EMFILE: too many open files, watch '/app/src'", "out_of_memory"),
        ("socket: too many open files", "out_of_memory"),
        ("app/models/tree.rb:12:in `depth': stack level too deep (SystemStackError)", "out_of_memory"),
        # a call shown with the value it gave: a comparison, as got/want
        ('--- FAIL: TestReverse (0.00s)\n    strings_test.go:21: Reverse("ab") returned "ab"\nFAIL', "assertion"),
        ("test_codec.py:9: decode(encode([1, 2])) gave [2, 1]", "assertion"),
        # a crash the runtime reports, with no further detail
        ("Fatal Python error: Segmentation fault\n\nCurrent thread 0x00007f (most recent call first):", "test_failure"),
        (
            "[gw3] node down: Not properly terminated\nworker 'gw3' crashed while running 'tests/test_io.py::test_mmap'",
            "test_failure",
        ),
    ],
)
def test_class_in_other_words(text, expected):
    assert category(text) == expected, (text, category(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ("ModuleNotFoundError: No module named 'yaml'", "import_error"),  # yaml: a module, not a parse error
        ("FileNotFoundError: [Errno 2] No such file or directory: 'settings.yaml'", "not_found"),
        (
            "requests.exceptions.ReadTimeout: HTTPConnectionPool(host='x', port=80): Read timed out. (read timeout=5)",
            "timeout",
        ),  # the setting is named after its expiry was stated
        # (an option the program does not have is not_found since method 48; its flag's name is never a timeout)
        ("pytest: error: unrecognized arguments: --timeout=30", "not_found"),
        ("json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)", "compile_error"),
        ("TypeError: Cannot read properties of undefined (reading 'map')", "type_error"),
        ("error: Recipe `test` failed on line 4 with exit code 1", "test_failure"),
        # a program's bare death by a signal outside a test run says only that it died (tests/test_unseen_failure_rules)
        ("$ ./bin/server --port 8080\nlistening on :8080\nSegmentation fault (core dumped)\n", "unknown"),
        ("lib/cart.rb:4:in `add': wrong number of arguments (given 1, expected 2) (ArgumentError)", "type_error"),
        ('sqlite3.OperationalError: no such table: users (query "SELECT 1" returned [])', "not_found"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected, (text, category(text))


def test_a_node_stack_frame_named_compile_is_no_compile_error():
    text = (
        "Error: connect ECONNREFUSED 127.0.0.1:5432\n"
        "    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1521:14)\n"
    )
    assert category(text) == "network"


@pytest.mark.parametrize("tool", ["tox", "nox", "make"])
def test_a_step_named_lint_that_passed_is_no_linter(tool):
    text = (
        f"$ {tool} -e py312,lint\n"
        "py312 create: /src/.tox/py312\n"
        "ERROR: InterpreterNotFound: python3.12\n"
        "_________ summary _________\n"
        "ERROR:  py312: InterpreterNotFound: python3.12\n"
        "  lint: commands succeeded\n"
    )
    assert category(text) == "not_found"


@settings(max_examples=60, deadline=None)
@given(
    value=st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(["5s", "32s", "1m0s", "250ms"])),
    spelling=st.sampled_from(["timeout={}", "?timeout={}", "--timeout={}", "timeout = {}"]),
)
def test_a_timeout_setting_never_names_the_category(value, spelling):
    # a refused connection stays network whatever limit the request was configured with
    text = f'error: Get "http://localhost:8080/api{spelling.format(value)}": dial tcp: connect: connection refused'
    assert category(text) == "network"


# -- line shapes (failure_excerpt) -------------------------------------------------------------------------------


def _bamboo(lines: list[tuple[str, str]]) -> str:
    return "\n".join(f"{kind}\t27-Nov-2026 04:36:{i % 60:02d}\t{text}" for i, (kind, text) in enumerate(lines)) + "\n"


@pytest.mark.parametrize(
    "stamp",
    ["27-Nov-2026 04:36:05", "2026-11-27 04:36:05", "2026/11/27 04:36:05", "2026-11-27T04:36:05.123Z"],
)
def test_a_stream_column_before_a_date_is_a_prefix_not_a_level(stamp):
    text = (
        f"error\t{stamp}\tCloning into 'api'...\n"  # git's progress, on standard error
        f'error\t{stamp}\topenjdk version "21.0.2" 2024-01-16\n'
        f"build\t{stamp}\t> Task :test\n"
        f'error\t{stamp}\tException in thread "main" java.lang.IllegalStateException: no route for /health\n'
        f"error\t{stamp}\t\tat com.acme.Router.route(Router.java:41)\n"
        f"simple\t{stamp}\tFailing task since return code of [/bin/sh /tmp/X-1-ScriptBuildTask-2.sh] was 1 while expected 0\n"
    )
    lines = clean_lines(text)
    assert [ln.text for ln in lines][0] == "Cloning into 'api'..."
    assert all(ln.level is None for ln in lines)  # ``error`` there is the stream, not the tool's level
    ex = extract(text)
    assert ex.lines is not None and ex.lines[0] == 4, (ex.lines, ex.message)


def test_a_bamboo_log_of_a_python_traceback_is_signed_from_its_exception():
    text = _bamboo(
        [
            ("simple", "Starting task 'Build' of type 'com.atlassian.bamboo.plugins.scripttask:task.builder.script'"),
            ("error", "Traceback (most recent call last):"),
            ("error", '  File "/build/app/cli.py", line 3, in <module>'),
            ("error", "    import yaml"),
            ("error", "ModuleNotFoundError: No module named 'yaml'"),
            ("simple", "Finished task 'Build' with result: Failed"),
        ]
    )
    ex = extract(text)
    assert "ModuleNotFoundError" in ex.message and categorize(ex) == "import_error"


@pytest.mark.parametrize(
    "die, expected",
    [
        (
            "malformed JSON string, neither tag, array, object, number, string or atom, at character offset 0 (before "
            '"(end of string)") at lib/Conf.pm line 40.',
            "compile_error",
        ),
        ("Can't open config/app.yml: No such file or directory at bin/deploy.pl line 12.", "not_found"),
        ("Illegal division by zero at t/stats.t line 9.", "type_error"),  # (method 34; unknown before)
    ],
)
def test_perls_die_location_makes_its_line_the_statement(die, expected):
    text = (
        "perl: warning: Setting locale failed.\n"
        "perl: warning: Please check that your locale settings:\n"
        '\tLC_ALL = "pt_BR.UTF-8",\n'
        "    are supported and installed on your system.\n"
        'perl: warning: Falling back to the standard locale ("C").\n'
        f"{die}\n"
    )
    ex = extract(text)
    assert ex.lines == (6, 6), (ex.lines, ex.message)
    assert categorize(ex) == expected


def test_a_perl_warning_with_a_location_is_not_the_statement():
    text = (
        "Use of uninitialized value $x in concatenation (.) or string at bin/run.pl line 7.\n"
        "Can't locate Text/CSV.pm in @INC (you may need to install the Text::CSV module) at bin/run.pl line 2.\n"
    )
    ex = extract(text)
    assert "Can't locate Text/CSV.pm" in ex.message and categorize(ex) == "import_error"


def test_a_php_uncaught_error_keeps_its_statement_over_its_thrown_in_trailer():
    text = (
        "PHP Fatal error:  Uncaught TypeError: Unsupported operand types: string * int in /app/src/Tax.php:8\n"
        "Stack trace:\n"
        "#0 /app/bin/run.php(5): Tax->apply()\n"
        "#1 {main}\n"
        "  thrown in /app/src/Tax.php on line 8\n"
    )
    ex = extract(text)
    assert ex.lines is not None and ex.lines[0] == 1 and categorize(ex) == "type_error"


def test_signing_a_bamboo_log_through_the_store(tmp_path):
    text = _bamboo(
        [
            ("build", "npm ci"),
            ("error", "npm warn deprecated inflight@1.0.6: This module is not supported"),
            ("error", "Error: listen EADDRINUSE: address already in use :::3000"),
            ("error", "    at Server.setupListenHandle [as _listen2] (node:net:1908:16)"),
            (
                "simple",
                "Failing task since return code of [/bin/sh /tmp/A-1-ScriptBuildTask-9.sh] was 1 while expected 0",
            ),
        ]
    )
    with MemoryStore(tmp_path / "m.db") as s:
        sig = s.error_signature(text)
    assert sig.excerpt_lines[0] == 3 and sig.category == "network"
