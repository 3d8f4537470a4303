"""General rules for failure text the corpus had never shown (docs/signatures.md; the heldout5 classes of
tests/fixtures/ci_logs/README.md). Each input is small and written for the test, in the shape real tools
print, and each rule is checked on a tool other than the one whose log revealed it where one exists."""

from __future__ import annotations

import pytest

from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


# -- 1. a line that only reports a process's death yields to the message the process printed before it ----
def test_a_signal_death_yields_to_the_message_printed_before_it():
    log = """\
$ ./target/debug/importer --rows 40000000
reading rows.csv
memory allocation of 1048576000 bytes failed
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
/bin/sh: line 1:   811 Aborted                 (core dumped) ./target/debug/importer --rows 40000000
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 3
    assert categorize(ex) == "out_of_memory"


def test_a_bare_aborted_line_after_a_runtime_fatal_error_is_its_trailer():
    log = """\
+ node scripts/index-pages.js
indexing 120000 pages
FATAL ERROR: Reached heap limit Allocation failed - JavaScript heap out of memory
 1: 0xb8a3c0 node::Abort() [node]
 2: 0xa9b7d4  [node]
Aborted
"""
    ex = extract(log)
    assert ex.lines == (3, 3) or (ex.lines is not None and ex.lines[0] == 3)
    assert categorize(ex) == "out_of_memory"


def test_a_death_with_nothing_said_before_it_is_the_statement():
    log = """\
$ make check
cc -O0 -g -o build/check tests/check.c src/ini.c
./build/check
case empty_section ... ok
case nested_keys ... make: *** [Makefile:9: check] Segmentation fault (core dumped)
"""
    ex = extract(log)
    assert ex.lines == (5, 5)
    assert categorize(ex) == "test_failure"  # a test run crashed, with no further detail
    # the same crash outside a test run says only that the program died
    assert category("$ ./bin/server --port 8080\nlistening on :8080\nSegmentation fault (core dumped)\n") == "unknown"


# -- 2. a heading or a count points at a block: the block is the failure --------------------------------------
def test_a_heading_gives_way_to_the_first_item_it_announces():
    log = """\
PHPUnit 10.5.2 by Sebastian Bergmann and contributors.

..F..                                                               5 / 5 (100%)

There was 1 failure:

1) CartTest::testTotalIncludesShipping
Failed asserting that 42.5 matches expected 45.0.

/srv/app/tests/CartTest.php:31

FAILURES!
Tests: 5, Assertions: 9, Failures: 1.
"""
    ex = extract(log)
    assert ex.message == "1) CartTest::testTotalIncludesShipping" and ex.lines is not None and ex.lines[0] == 7
    assert categorize(ex) == "assertion"


def test_a_strict_xpass_under_its_test_header_is_the_failure():
    log = """\
collected 3 items

tests/test_units.py ..F                                                  [100%]

=================================== FAILURES ===================================
_______________________________ test_kelvin_zero _______________________________
[XPASS(strict)] kelvin below zero is not rejected yet
========================= 1 failed, 2 passed in 0.05s ==========================
"""
    ex = extract(log)
    assert ex.lines == (6, 7)
    assert categorize(ex) == "test_failure"


def test_a_count_that_closes_a_list_of_files_makes_the_files_the_findings():
    log = """\
> web@1.0.0 fmt:check
> prettier --check "lib/**/*.ts"

Checking formatting...
[warn] lib/cart.ts
[warn] lib/api/client.ts
[warn] Code style issues found in 2 files. Run Prettier with --write to fix.
Error: Process completed with exit code 1.
"""
    ex = extract(log)
    assert ex.message == "[warn] lib/cart.ts" and ex.lines is not None and ex.lines[0] == 5
    assert categorize(ex) == "test_failure"


# -- 3. a diff printed by a check step is a formatter's finding --------------------------------------------
def test_a_diff_from_a_check_step_is_a_finding_whatever_the_formatter():
    log = """\
$ ./ci/check-format.sh
--- a/cmd/serve/main.go
+++ b/cmd/serve/main.go
@@ -3,3 +3,3 @@
-func main( ) {
+func main() {
 \tserve()
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] <= 4 <= ex.lines[1]  # the +++ header is no shell trace
    assert categorize(ex) == "test_failure"
    assert category("would reformat /w/src/pkg/models.py\nOh no!\n1 file would be reformatted.\n") == "test_failure"
    assert category("ERROR: /w/src/pkg/io.py Imports are incorrectly sorted and/or formatted.\n") == "test_failure"


# -- 4. an uninstallable or absent dependency, whatever its words ------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "ERROR: Cannot install web==1.2 and auth==0.9 because these package versions have conflicting dependencies.",
        "npm error ERESOLVE unable to resolve dependency tree",
        "ERROR: ResolutionImpossible: for help visit https://pip.pypa.io/",
        '  Could not find a package configuration file provided by "Boost" with any of the following names:',
        "/usr/bin/ld: cannot find -lssl: No such file or directory",
        "Package libpng was not found in the pkg-config search path.",
    ],
)
def test_missing_dependency_vocabulary_is_an_import_error(text):
    assert category(text + "\n") == "import_error"


def test_a_missing_file_stays_not_found():
    assert category("cp: cannot stat 'dist/app.js': No such file or directory\n") == "not_found"


# -- 5. the most specific phrase decides over the tool's prefix or the line's shape ---------------------------
def test_network_and_not_found_phrases_decide_over_a_generic_prefix():
    assert (
        category(
            "fatal: unable to access 'https://git.example.com/x.git/': Failed to connect to git.example.com port 443"
            " after 2 ms: Couldn't connect to server\n"
        )
        == "network"
    )
    assert category("error: pathspec 'feature/login' did not match any file(s) known to git\n") == "not_found"


def test_a_located_runtime_error_is_a_dynamic_check_not_a_compile_error():
    ubsan = "lib/hash.c:41:9: runtime error: shift exponent 40 is too large for 32-bit type 'int'\n"
    assert category("$ make test\n" + ubsan) == "test_failure"
    assert category("$ make\nlib/hash.c:41:9: error: expected ';' before 'return'\n") == "compile_error"


# -- 6. vocabulary by meaning, read from the whole block -------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("sqlite3.OperationalError: attempt to write a readonly database", "permission"),
        ("OSError: [Errno 30] Read-only file system: '/srv/cache/index'", "permission"),
        # a named function that is not there, as PHP's "Call to undefined function" (signing method 19, heldout11's
        # label); calling a nil that is not a name stays type_error (test_category_classes_heldout11.py)
        ("lua: attempt to call a nil value (global 'render')", "not_found"),
        ('Parse error near line 7: near "FORM": syntax error', "compile_error"),
        ("fatal error: failed to allocate 2147483648 bytes", "out_of_memory"),
    ],
)
def test_vocabulary_by_meaning(text, expected):
    assert category(text + "\n") == expected


def test_a_pointer_under_a_statement_is_its_detail_not_a_statement():
    log = """\
$ ./db/migrate.sh
applying 004_invoices.sql
Parse error near line 3: near "FORM": syntax error
  SELECT id, total FORM invoices;
                   ^--- error here
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 3
    assert categorize(ex) == "compile_error"


def test_an_interpreter_located_error_is_the_statement_and_its_frames_are_not():
    log = """\
$ lua scripts/render.lua
lua: scripts/render.lua:12: attempt to index a nil value (local 'site')
stack traceback:
\tscripts/render.lua:12: in function 'page'
\tscripts/render.lua:30: in main chunk
\t[C]: in ?
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 2
    assert categorize(ex) == "type_error"


# -- 7. a cancellation is how a timeout works, not a root cause of its own ------------------------------------------
def test_a_cancellation_chained_into_a_timeout_gives_way_to_the_timeout():
    log = """\
    async def fetch(self):
>       await asyncio.sleep(5)
E       asyncio.exceptions.CancelledError

/usr/lib/python3.12/asyncio/tasks.py:655: CancelledError

The above exception was the direct cause of the following exception:

    def test_fetch_under_budget():
>       asyncio.run(asyncio.wait_for(Client().fetch(), 0.1))
E       TimeoutError

/usr/lib/python3.12/asyncio/tasks.py:519: TimeoutError
=========================== short test summary info ============================
FAILED tests/test_client.py::test_fetch_under_budget - TimeoutError
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 11
    assert categorize(ex) == "timeout"


def test_a_cancellation_chained_into_a_timeout_gives_way_to_it_in_short_tracebacks_without_blank_lines():
    # pytest --tb=short prints no location line under the E lines, and a log collector that drops blank lines
    # leaves the chain banner right under the cancellation
    log = """\
tests/test_client.py:12: in test_fetch_under_budget
    asyncio.run(asyncio.wait_for(Client().fetch(), 0.1))
/usr/lib/python3.12/asyncio/tasks.py:520: in wait_for
    return await fut
E   asyncio.exceptions.CancelledError
The above exception was the direct cause of the following exception:
tests/test_client.py:12: in test_fetch_under_budget
    asyncio.run(asyncio.wait_for(Client().fetch(), 0.1))
E   TimeoutError
"""
    ex = extract(log)
    assert ex.message.startswith("TimeoutError") and ex.lines is not None and ex.lines[0] == 9
    assert categorize(ex) == "timeout"


def test_a_failure_chained_from_a_real_cause_keeps_its_root_cause():
    log = """\
E       ConnectionRefusedError: [Errno 111] Connection refused

/srv/app/client.py:20: ConnectionRefusedError

The above exception was the direct cause of the following exception:

E       RuntimeError: could not load the price list

/srv/app/prices.py:9: RuntimeError
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 1
    assert categorize(ex) == "network"


def test_the_public_api_signs_a_whole_log_by_these_rules(tmp_path):
    log = "$ make check\n./build/check\ncase a ... ok\ncase b ... make: *** [Makefile:9: check] Segmentation fault\n"
    with MemoryStore(tmp_path / "m.db") as store:
        sig = store.error_signature(log)
    assert sig.excerpt_lines == (4, 4) and sig.category == "test_failure"


def test_a_death_under_a_deadline_is_the_failure_itself():
    log = """\
$ timeout -s KILL 5 ./scripts/seed-cache.sh
seeding cache shard 1
retry: fetch of shard 2 failed, trying again
seeding cache shard 2
bash: line 1:  4711 Killed                  timeout -s KILL 5 ./scripts/seed-cache.sh
"""
    ex = extract(log)
    assert ex.lines == (5, 5)
    assert categorize(ex) == "timeout"


def test_a_java_cancellation_at_the_root_of_a_chain_gives_way_to_what_it_caused():
    log = """\
java.util.concurrent.TimeoutException: quote lookup exceeded 200 ms
\tat com.acme.quotes.Client.fetch(Client.java:41)
\tat com.acme.quotes.Service.price(Service.java:18)
Caused by: java.lang.InterruptedException: sleep interrupted
\tat java.base/java.lang.Thread.sleep(Native Method)
\tat com.acme.quotes.Client.fetch(Client.java:37)
"""
    ex = extract(log)
    assert ex.exception == "TimeoutException" and ex.lines is not None and ex.lines[0] == 1
    assert categorize(ex) == "timeout"
    # a root cause that is a failure in its own right still decides
    refused = log.replace(
        "java.lang.InterruptedException: sleep interrupted", "java.net.ConnectException: Connection refused"
    )
    assert category(refused) == "network"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Error in library(plotly) : there is no package called 'plotly'", "import_error"),
        (" ERR_PNPM_PEER_DEP_ISSUES  Unmet peer dependencies", "import_error"),
        (
            "Because api depends on both a (1.0) and b (2.0) which depends on a (<1.0), version solving failed.",
            "import_error",
        ),
        ("Could not find gem 'sinatra (~> 9.0)' in locally installed gems.", "import_error"),
        ("/w/Sources/Cli/main.swift:1:8: error: no such module 'ArgumentParser'", "import_error"),
        (
            "PHP Fatal error:  Uncaught Error: Call to a member function save() on null in /w/src/Repo.php:12",
            "type_error",
        ),
        (
            'error: Uncaught PermissionDenied: Requires write access to "./out", run again with --allow-write',
            "permission",
        ),
        ("│ Error: Reference to undeclared input variable", "not_found"),
        ("Error: No configuration files in /w/infra/staging", "not_found"),
    ],
)
def test_more_vocabulary_by_meaning(text, expected):
    assert category(text + "\n") == expected


def test_an_undeclared_name_in_a_compiled_source_stays_a_compile_error():
    assert (
        category("$ make\nsrc/ring.c:12:9: error: 'cap' undeclared (first use in this function)\n") == "compile_error"
    )


def test_a_bare_kill_report_means_what_its_exit_status_137_means():
    log = "$ python train.py --epochs 3\nEpoch 1/3\nEpoch 2/3\nKilled\n"
    ex = extract(log)
    assert ex.lines == (4, 4)
    assert categorize(ex) == "out_of_memory"  # as a bare exit status 137; under `timeout` it is a timeout (above)


def test_a_pointer_carrying_a_rule_code_is_a_checkers_finding():
    log = """\
In deploy/run.sh line 4:
cd $APP_DIR
^---------^ SC2164 (warning): Use 'cd ... || exit' or 'cd ... || return' in case cd fails.

Did you mean:
cd "$APP_DIR" || exit
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 3
    assert categorize(ex) == "test_failure"


def test_a_tap_failure_without_detail_takes_the_diagnostic_that_names_it_earlier():
    log = """\
t/02-slug.t ..
#   Failed test 'slugs drop accents'
#   at t/02-slug.t line 11.
#          got: 'cafe-creme'
#     expected: 'caf-crme'
# Looks like you failed 1 test of 3.
ok 1 - slugs are lower case
not ok 2 - slugs drop accents
ok 3 - empty stays empty
"""
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 8
    assert categorize(ex) == "assertion"


# -- a Java exception's message may run over several lines before its frames --------------------------------
def test_an_unqualified_word_line_inside_a_java_message_is_more_message():
    trace = (
        "junit.framework.AssertionFailedError: Expected exactly one problem in the report. Problems: \n"
        "Warnings: \n"
        " expected:<1> but was:<0>\n"
        "\tat junit.framework.Assert.fail(Assert.java:57)\n"
        "\tat junit.framework.Assert.failNotEquals(Assert.java:329)\n"
        "\tat org.example.report.ReportTest.testOneProblem(ReportTest.java:126)\n"
    )
    ex = extract(trace)
    assert ex.message.startswith("junit.framework.AssertionFailedError: Expected exactly one problem")
    assert ex.exception == "AssertionFailedError" and categorize(ex) == "assertion"


def test_a_qualified_exception_after_an_unqualified_log_line_is_the_header():
    log = (
        "RuntimeError: build step 'integration' failed, see below\n"
        'java.lang.NullPointerException: Cannot invoke "Config.port()" because "cfg" is null\n'
        "\tat org.example.server.Boot.start(Boot.java:41)\n"
        "\tat org.example.server.BootTest.startsOnDefaultPort(BootTest.java:18)\n"
    )
    ex = extract(log)
    assert ex.exception == "NullPointerException" and ex.frame == "org.example.server.Boot.start"
