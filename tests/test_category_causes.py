"""The category of a whole log: the causes a failure names, the linter that found it, the kind of
source a diagnostic is in, an exception under a test's title line (docs/signatures.md, Category)."""

from __future__ import annotations

import pytest

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


CARGO_OFFLINE = """\
    Updating crates.io index
warning: spurious network error (2 tries remaining): [6] Could not resolve hostname (Could not resolve host: index.crates.io)
error: failed to get `rstar` as a dependency of package `geo v0.1.0 (/src/geo)`

Caused by:
  download of config.json failed

Caused by:
  [6] Could not resolve hostname (Could not resolve host: index.crates.io)
"""


def test_a_caused_by_chain_about_the_network_decides():
    assert category(CARGO_OFFLINE) == "network"
    # without its chain and its retries the same failure says only that something failed
    assert category(CARGO_OFFLINE.split("\n")[2] + "\n") == "test_failure"


def test_retries_before_a_consequence_make_it_a_network_failure():
    log = "".join(
        f"WARNING: Retrying (Retry(total={n})) after connection broken by 'NewConnectionError(...: "
        "Failed to establish a new connection: [Errno 111] Connection refused')': /simple/requests/\n"
        for n in (2, 1, 0)
    )
    tail = "ERROR: Could not find a version that satisfies the requirement requests==2.31.0 (from versions: none)\n"
    assert category(log + tail) == "network"
    assert category("Collecting requests==2.31.0\n" + tail) == "import_error"


def test_retries_far_before_the_failure_are_not_its_cause():
    retry = "WARNING: Retrying after connection broken by 'Connection refused'\n"
    filler = "".join(f"compiling module {i}\n" for i in range(40))
    tail = "ERROR: Could not find a version that satisfies the requirement requests==2.31.0 (from versions: none)\n"
    assert category(retry + filler + tail) == "import_error"


def test_a_chained_python_exception_names_the_root_cause():
    log = """\
Traceback (most recent call last):
  File "/app/fetch.py", line 12, in latest
    return urlopen(API).read()
urllib.error.URLError: <urlopen error [Errno 111] Connection refused>

The above exception was the direct cause of the following exception:

Traceback (most recent call last):
  File "/app/fetch.py", line 20, in <module>
    latest("EUR")
  File "/app/fetch.py", line 14, in latest
    raise RatesUnavailable("cannot fetch EUR rates") from exc
RatesUnavailable: cannot fetch EUR rates
"""
    assert category(log) == "network"
    # the last exception alone: nothing to go by
    assert category("\n".join(log.split("\n")[6:])) == "unknown"


def test_running_out_of_memory_decides_over_an_error_raised_while_handling_it():
    # the fallback's missing file is a consequence; the process ran out of memory first
    log = """\
Traceback (most recent call last):
  File "/srv/app/cache.py", line 12, in load
    data = bytearray(size)
MemoryError

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/srv/app/main.py", line 5, in <module>
    cache.load()
  File "/srv/app/cache.py", line 15, in load
    with open(FALLBACK, "rb") as f:
FileNotFoundError: [Errno 2] No such file or directory: '/var/cache/app/fallback.bin'
"""
    assert category(log) == "out_of_memory"
    assert category("\n".join(log.split("\n")[6:])) == "not_found"  # the last traceback alone


def test_an_environment_block_is_not_overridden_by_a_cause():
    log = """\
Retrying in 5 s (attempt 2 of 3): assertion in probe failed
fatal: unable to access 'https://example.invalid/x.git/': Could not resolve host: example.invalid
error: timed out waiting for lock after 600 s
"""
    assert category(log) == "timeout"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("+ go vet ./...", "test_failure"),
        ("+ go build ./...", "compile_error"),
        ("+ GOFLAGS=-mod=mod go vet ./...", "test_failure"),  # an assignment before the program is not it
        ("+ GOFLAGS=-mod=mod go build ./...", "compile_error"),
    ],
)
def test_the_steps_command_tells_a_linters_finding_from_a_compile_error(command, expected):
    log = f"""\
[Pipeline] sh
{command}
# example.com/notifier
./notify.go:14:15: report passes lock by value: example.com/notifier.Counter contains sync.Mutex
"""
    assert category(log) == expected


def test_a_finding_that_names_its_lint_is_a_linters_finding():
    log = """\
error: unneeded `return` statement
  --> src/lib.rs:10:5
   |
10 |     return out;
   |     ^^^^^^^^^^
   = note: `-D clippy::needless-return` implied by `-D warnings`
"""
    assert category(log) == "test_failure"
    assert category(log.replace("clippy::needless-return", "unused-variables")) == "compile_error"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (
            "src/Distance.java:17: error: incompatible types: possible lossy conversion from double to int\n",
            "compile_error",
        ),
        ("error[E0308]: mismatched types\n  --> src/main.rs:28:35\n", "compile_error"),
        ("app/models.py:3: error: Incompatible types in assignment (expression has type str)\n", "type_error"),
        (
            "src/compress.c:3:10: fatal error: zstd.h: No such file or directory\n    3 | #include <zstd.h>\n",
            "import_error",
        ),
        ("src/compress.c:3:10: error: 'ZSTD_x' undeclared (first use in this function)\n", "compile_error"),
    ],
)
def test_the_kind_of_source_decides_a_diagnostics_category(log, expected):
    assert category("make: entering\n" + log) == expected


def test_an_exception_under_a_tests_title_decides_not_the_title():
    log = """\
▶ rates
  ✖ picks a rate missing from the feed (0.44ms)
    TypeError [Error]: Cannot read properties of undefined (reading 'rate')
        at pick (/w/src/rates.js:6:44)
"""
    assert category(log) == "type_error"


def test_a_traceback_nested_in_a_tools_output_ends_at_its_own_indentation():
    log = """\
  Getting requirements to build wheel: finished with status 'error'
  error: subprocess-exited-with-error
  ╰─> [5 lines of output]
      Traceback (most recent call last):
        File "<string>", line 1, in <module>
          import numpy
      ModuleNotFoundError: No module named 'numpy'
      [end of output]
error: subprocess-exited-with-error
"""
    ex = extract(log)
    assert ex.message == "ModuleNotFoundError: No module named 'numpy'" and ex.lines[0] <= 7 <= ex.lines[1] < 9
    assert categorize(ex) == "import_error"


def test_a_heading_over_failures_is_not_an_exception():
    log = """\
...F

Failures:

  1) RowParser normalises the sku
     Failure/Error: expect(parser.parse("a-1")).to include(sku: "A-1")
       expected {:sku => "a-1"} to include {:sku => "A-1"}

4 examples, 1 failure
"""
    ex = extract(log)
    assert ex.message.startswith("Failure/Error:") and ex.lines[0] == 6
    assert categorize(ex) == "assertion"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        ("2026/11/26 00:34:31 load config: open config/app.yaml: no such file or directory\n", "not_found"),
        ("==> packaging\n./scripts/publish.sh: line 10: REGISTRY_TOKEN: unbound variable\n", "not_found"),
        ("Failed example:\n    f(1)\nExpected:\n    2\nGot:\n    3\n", "assertion"),
        ("  1) Failure:\nT#test_x [t.rb:8]:\n--- expected\n+++ actual\n@@ -1 +1 @@\n", "assertion"),
        ("panic: runtime error: invalid memory address or nil pointer dereference\n", "type_error"),
        ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 7.45 GiB for an array\n", "out_of_memory"),
        ("cannot load such file -- faraday (LoadError)\n", "import_error"),
    ],
)
def test_failures_of_more_tools(log, expected):
    assert category("step\n" + log) == expected


def test_a_cause_printed_inside_the_block_counts():
    log = """\
TypeError: fetch failed
    at node:internal/deps/undici/undici:14976:13
    at async file:///w/scripts/smoke.mjs:6:15 {
  [cause]: Error: connect ECONNREFUSED 127.0.0.1:18080
"""
    assert category(log) == "network"


def test_an_indented_location_line_is_a_tests_report_not_a_compile_error():
    report = "--- FAIL: TestCounter (0.01s)\n    testing.go:1319: race detected during execution of test\n"
    assert category(report) == "test_failure"
    assert category("# example.com/x\n./x.go:3:2: undefined: foo\n") == "compile_error"


def test_a_summary_saying_the_tests_failed_is_not_the_failure():
    log = """\
test tests::rejects_garbage - should panic ... FAILED

---- tests::rejects_garbage stdout ----
note: test did not panic as expected at src/lib.rs:52:8

test result: FAILED. 4 passed; 1 failed
error: test failed, to rerun pass `--lib`
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[1] <= 4 and "to rerun" not in ex.message


def test_an_npm_scripts_echoed_linter_makes_its_output_a_finding():
    log = """\
> form-kit@1.0.0 lint
> eslint src

/w/src/submit.js
   5:9   error  'started' is assigned a value but never used  no-unused-vars

✖ 1 problem (1 error, 0 warnings)
"""
    assert category(log) == "test_failure"


def test_a_retry_before_an_assertion_does_not_make_it_an_environment_failure():
    log = "retrying test_total after a timeout (attempt 2 of 3)\n" + (
        "    def test_total():\n>       assert total([1, 2]) == 4\nE       assert 3 == 4\n"
    )
    assert category(log) == "assertion"


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        # a linker failing is the build failing to compile
        ("error: linking with `cc` failed: exit status: 1\n  = note: undefined symbol: crc32\n", "compile_error"),
        ("src/q.hpp:14:24: error: static assertion failed: dimensions differ\n", "compile_error"),
        (
            'Exception in thread "main" java.lang.NullPointerException: Cannot invoke "String.trim()"\n'
            "\tat com.acme.Batch.run(Batch.java:8)\n",
            "type_error",
        ),
        ("tiers.py:11: error: Function is missing a type annotation  [no-untyped-def]\n", "type_error"),
        ("Can't locate Text/CSV_XS.pm in @INC (you may need to install the Text::CSV_XS module)\n", "import_error"),
        (
            "index.rst:4: WARNING: toctree contains reference to nonexisting document 'usage'\n"
            "build finished with problems, 1 warning (with warnings treated as errors).\n",
            "not_found",
        ),
    ],
)
def test_failures_of_yet_more_tools(log, expected):
    assert category("step\n" + log) == expected


def test_a_warning_is_the_failure_only_when_the_build_says_warnings_fail_it():
    warn = "index.rst:4: WARNING: toctree contains reference to nonexisting document 'usage'\n"
    assert (
        extract(
            "reading sources\n" + warn + "build finished with problems, 1 warning (with warnings treated as errors).\n"
        ).lines[0]
        == 2
    )
    assert extract("reading sources\n" + warn + "error: build failed\n").lines == (3, 3)


def test_a_formatters_diff_is_the_finding_when_nothing_else_failed():
    log = """\
$ cargo fmt --all -- --check
Diff in /w/src/lib.rs:8:
-        if x { continue; }
+        if x {
+            continue;
+        }
Job failed: exit code 1
"""
    ex = extract(log)
    assert ex.lines[0] == 2 and categorize(ex) == "test_failure"


def test_a_ctest_timeout_is_the_failing_test_line_not_the_summary():
    log = """\
1/3 Test #1: parse ............................   Passed    0.01 sec
3/3 Test #3: drain ............................***Timeout   3.01 sec

67% tests passed, 1 tests failed out of 3
"""
    ex = extract(log)
    assert ex.lines == (2, 2) and categorize(ex) == "timeout"


def test_valgrinds_column_is_stripped_and_its_leak_is_the_finding():
    log = """\
==30279== Memcheck, a memory error detector
==30279== 2 bytes in 1 blocks are definitely lost in loss record 1 of 1
==30279==    at 0x48417B4: malloc (in /usr/libexec/valgrind/vgpreload_memcheck-amd64-linux.so)
==30279==
==30279== ERROR SUMMARY: 1 errors from 1 contexts (suppressed: 0 from 0)
"""
    ex = extract(log)
    assert ex.lines[0] == 2 and ex.message.startswith("2 bytes") and categorize(ex) == "test_failure"


def test_a_character_set_escape_is_not_text():
    assert "(B" not in extract("\x1b[1mtiers.py:11: error:\x1b(B Function is missing a type annotation\n").message


# found by review: inputs the first rules got wrong


def test_a_go_log_line_naming_its_source_file_is_not_a_compiler_diagnostic():
    log = """\
=== RUN   TestStart
2026/11/26 01:17:04 main.go:7: listening on :8080
    main_test.go:7: Start() = 8081, want 8080
--- FAIL: TestStart (0.00s)
FAIL
"""
    ex = extract(log)
    assert ex.lines[0] == 3 and categorize(ex) == "assertion"


@pytest.mark.parametrize(
    "command", ["+ javac -Xlint:all -d out src/Foo.java", "+ ./gradlew assembleDebug -x lint", "+ SKIP_LINT=1 make"]
)
def test_a_flag_or_value_naming_lint_does_not_make_a_linter(command):
    log = f"{command}\nsrc/Foo.java:4: error: variable x might not have been initialized\n"
    assert category(log) == "compile_error"


@pytest.mark.parametrize(
    "command", ["+ cargo clippy -- -D warnings", "$ npx eslint src", "+ go vet ./...", "> make lint"]
)
def test_a_linter_is_the_command_word_or_its_subcommand(command):
    assert category(f"{command}\n./notify.go:14:15: report passes lock by value\n") == "test_failure"


def test_go_test_reports_with_the_word_error_are_test_failures():
    for line in ("    p_test.go:18: Parse() error = empty, wantErr false", "    p_test.go:8: unexpected error: empty"):
        assert category(f"=== RUN   TestParse\n{line}\n--- FAIL: TestParse (0.00s)\n") == "test_failure"


def test_a_source_line_naming_a_retry_setting_is_not_a_retry():
    log = """\
    def test_auth():
        client = Client(retry=3, timeout=5.0)
>       token = client.headers["Authorization"]
E       KeyError: 'Authorization'
"""
    assert category(log) == "not_found"


def test_a_retry_that_later_succeeded_is_not_the_cause():
    log = """\
WARNING: Retrying (Retry(total=4)) after connection broken by 'NewConnectionError(Connection refused)': /simple/x/
Successfully installed x-1.0
Traceback (most recent call last):
  File "app/main.py", line 1, in <module>
    from app.utils import f
ModuleNotFoundError: No module named 'app.utils'
"""
    assert category(log) == "import_error"


def test_an_unrelated_earlier_failure_is_not_a_cause():
    log = """\
======================================================================
ERROR: test_fetch (t.T.test_fetch)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "t.py", line 5, in test_fetch
    urlopen("http://127.0.0.1:9")
urllib.error.URLError: <urlopen error [Errno 111] Connection refused>

======================================================================
FAIL: test_parse (t.T.test_parse)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "t.py", line 8, in test_parse
    self.assertEqual(1, 2)
AssertionError: 1 != 2
"""
    assert category(log) == "assertion"


def test_compared_status_codes_are_data_not_the_category():
    log = """\
  1) API returns the order
     Failure/Error: expect(response.status).to eq(200)

       expected: 200
            got: 404
"""
    assert category(log) == "assertion"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "./include/vec.hpp:4:5: error: missing 'typename' prior to dependent type name 'T::value_type'",
            "compile_error",
        ),
        ("./p.go:6:23: undefined: DefaultTimeout", "compile_error"),
        ("./p.go:11:1: missing return", "compile_error"),
        ("src/compress.c:3:10: fatal error: 'zstd.h' file not found", "import_error"),
    ],
)
def test_a_compilers_words_name_the_program_not_the_category(line, expected):
    assert category("+ make\n" + line + "\n") == expected


def test_a_numbered_cause_chain_is_read_to_its_deepest_cause():
    log = """\
Error: failed to sync the mirror

Caused by:
    0: fetching https://mirror.example.invalid/index
    1: error sending request
    2: operation timed out
"""
    assert category(log) == "timeout"


def test_a_memory_checkers_invalid_read_is_a_finding():
    assert category("==12== Invalid read of size 4\n==12==    at 0x1: main (a.c:3)\n") == "test_failure"


def test_a_failure_worded_line_yields_to_the_comparison_in_its_detail():
    assert category("deploy check failed\n    expected: 3\n    actual: 2\n") == "assertion"


def test_git_diff_check_is_a_checker_whatever_file_it_flags():
    log = "+ git diff --check HEAD~1\nsrc/main.c:3: trailing whitespace.\n+int x = 1; \n"
    assert category(log) == "test_failure"
    assert category("+ make\nsrc/main.c:3: expected ';' before 'return'\n") == "compile_error"


def test_a_proxy_that_does_not_resolve_is_a_network_failure():
    assert category("curl: (5) Could not resolve proxy: proxy.corp.example") == "network"


@pytest.mark.parametrize(
    "text",
    [
        "curl: (56) Recv failure: Connection reset by peer",
        'psql: error: connection to server at "db" (10.0.0.5), port 5432 failed: Connection refused',
        "fatal: the remote end hung up unexpectedly: connection closed",
    ],
)
def test_a_connection_refused_reset_or_closed_is_a_network_failure(text):
    assert category(text) == "network"


def test_valgrinds_use_of_an_uninitialised_value_is_a_finding():
    log = (
        "==4242== Conditional jump or move depends on uninitialised value(s)\n"
        "==4242==    at 0x109182: mean (stats.c:12)\n"
        "==4242==    by 0x1091F3: main (main.c:7)\n"
    )
    assert category(log) == "test_failure"


def test_a_test_run_that_failed_after_retried_connection_failures_is_a_network_failure():
    log = (
        "attempt 1 of 3 failed: Connection refused (api.internal:8443)\n"
        "attempt 2 of 3 failed: Connection refused (api.internal:8443)\n"
        "attempt 3 of 3 failed: Connection refused (api.internal:8443)\n"
        "FAILED: integration tests (3 failed)\n"
    )
    assert category(log) == "network"


def test_a_failure_that_only_says_it_failed_takes_the_category_of_its_cause():
    log = (
        "Error: failed to load config\n\nCaused by:\n    0: reading /etc/app/config.toml\n"
        "    1: No such file or directory (os error 2)\n"
    )
    assert category(log) == "not_found"


def test_a_linkers_undefined_symbol_is_a_compile_error():
    log = (
        "ld.lld: error: undefined symbol: vec_dot\n>>> referenced by main.c:12\n"
        "clang: error: linker command failed with exit code 1 (use -v to see invocation)\n"
    )
    assert category(log) == "compile_error"
