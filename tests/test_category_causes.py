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


def test_an_environment_block_is_not_overridden_by_a_cause():
    log = """\
Retrying in 5 s (attempt 2 of 3): assertion in probe failed
fatal: unable to access 'https://example.invalid/x.git/': Could not resolve host: example.invalid
error: timed out waiting for lock after 600 s
"""
    assert category(log) == "timeout"


@pytest.mark.parametrize(
    ("command", "expected"),
    [("+ go vet ./...", "test_failure"), ("+ go build ./...", "compile_error")],
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
