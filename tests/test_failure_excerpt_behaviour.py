"""The decisive-failure excerpt of raw error text (harness_memory/failure_excerpt.py, docs/signatures.md):
what each cleaning step removes, which line of a log is the failure, the excerpt's span and bounds,
and the passing-run baseline, read back through ``extract`` as a signer uses it."""

from __future__ import annotations

import pytest

import harness_memory.failure_excerpt as fe
from harness_memory import MemoryStore
from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract, is_frame


def test_a_one_line_message_is_its_own_excerpt():
    ex = extract("  ValueError: bad literal for int()  ")
    assert ex.message == "ValueError: bad literal for int()" and ex.exception == "ValueError"
    assert ex.lines == (1, 1) and ex.block == ex.message and ex.kind == "message"


@pytest.mark.parametrize(
    ("raw", "text", "level"),
    [
        ("[ERROR] the build broke", "the build broke", "error"),
        ("FATAL: database is not ready", "database is not ready", "error"),
        ("SEVERE: the pool is exhausted", "the pool is exhausted", "error"),
        ("[CRITICAL] disk full", "disk full", "error"),
        ("CRITICAL: disk full", "disk full", "error"),
        ("[FATAL] out of file handles", "out of file handles", "error"),
        ("[SEVERE] lost the lease", "lost the lease", "error"),
        ("WARN - slow response", "slow response", "warning"),
        ("[WARN] slow response", "slow response", "warning"),
        ("WARNING: deprecated flag", "deprecated flag", "warning"),
        ("[WARNING] deprecated flag", "deprecated flag", "warning"),
        ("INFO  starting the worker", "starting the worker", "info"),
        ("[INFO] starting the worker", "starting the worker", "info"),
        ("DEBUG: retrying the connection", "retrying the connection", "info"),
        ("[DEBUG] retrying the connection", "retrying the connection", "info"),
        ("[TRACE] entering main", "entering main", "info"),
        ("[NOTE] using the cache", "using the cache", "info"),
        ("ERROR: no such table: users", "no such table: users", "error"),
        ("plain output line", "plain output line", None),
        ("Errors are expected here", "Errors are expected here", None),
    ],
)
def test_a_level_tag_is_removed_from_the_text_and_kept_as_the_level(raw, text, level):
    (ln,) = clean_lines(raw)
    assert (ln.text, ln.level, ln.annotation) == (text, level, None)


@pytest.mark.parametrize(
    ("raw", "text", "level", "annotation"),
    [
        ("##[error]Process completed with exit code 2.", "Process completed with exit code 2.", "error", "error"),
        ("##[warning]Node 16 is deprecated", "Node 16 is deprecated", "warning", "warning"),
        ("##[group]Run make test", "Run make test", None, "group"),
        ("##[endgroup]", "", None, "endgroup"),
        ("::error file=app.py,line=3::Unexpected token", "Unexpected token", "error", "error"),
        ("::warning::the cache missed", "the cache missed", "warning", "warning"),
        ("::notice::deployed", "deployed", None, "notice"),
        ("::group::Lint", "Lint", None, "group"),
    ],
)
def test_a_workflow_annotation_is_removed_from_the_text_and_kept(raw, text, level, annotation):
    (ln,) = clean_lines(raw)
    assert (ln.text, ln.level, ln.annotation) == (text, level, annotation)


def test_an_annotated_error_is_the_excerpt_without_its_annotation():
    log = "##[group]Run make test\nmake test\nall tests ran\n##[endgroup]\n##[error]Process completed with exit code 2."
    ex = extract(log)
    assert ex.message == "Process completed with exit code 2." and ex.level == "error" and ex.lines == (5, 5)
    assert ex.command == "Run make test"
    ex = extract("::group::Lint\nnpm run lint\n::endgroup::\n::error file=app.py,line=3::Unexpected token in app.py")
    assert ex.message == "Unexpected token in app.py" and ex.level == "error" and ex.lines == (4, 4)


PLAIN = "Compiling the project\nrunning 12 checks\nchecks done\n"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("panic: assignment to entry in nil map", "panic: assignment to entry in nil map"),
        ("Aborted", "Aborted"),
        ("Killed", "Killed"),
        ("Segmentation fault", "Segmentation fault"),
        ("java.lang.OutOfMemoryError: Java heap space", "java.lang.OutOfMemoryError: Java heap space"),
        ("not ok 3 - handles empty input", "not ok 3 - handles empty input"),
        ("✗ renders the header", "✗ renders the header"),
        ("✕ renders the footer", "✕ renders the footer"),
        ("× renders the nav", "× renders the nav"),
        ("✖ renders the body", "✖ renders the body"),
        ("bash: line 3: frobnicate: command not found", "bash: line 3: frobnicate: command not found"),
        ("fatal: not a git repository", "fatal: not a git repository"),
        ("FAIL: test_parse", "FAIL: test_parse"),
        ("Timeout exceeded while waiting", "Timeout exceeded while waiting"),
        ("the request timed out", "the request timed out"),
        ("Cannot allocate memory", "Cannot allocate memory"),
        ("undefined reference to foo", "undefined reference to foo"),
        ("unexpected end of input", "unexpected end of input"),
        ("the upload was aborted", "the upload was aborted"),
        ("E   assert 1 == 2", "assert 1 == 2"),
    ],
)
def test_each_kind_of_failure_statement_is_found_among_plain_output(line, message):
    ex = extract(PLAIN + line + "\nsome more output\n")
    assert ex.message == message and ex.lines[0] == 4 and ex.kind != "message"  # found as a statement


def test_a_line_tagged_as_an_error_is_the_failure_whatever_its_words():
    ex = extract(PLAIN + "[ERROR] the deployment did not complete\nsome more output\n")
    assert ex.message == "the deployment did not complete" and ex.level == "error" and ex.lines[0] == 4
    ex = extract(PLAIN + "##[error]the deployment did not complete\nsome more output\n")
    assert ex.message == "the deployment did not complete" and ex.level == "error" and ex.lines[0] == 4
    # the same words untagged are plain output: the first line stands in
    assert extract(PLAIN + "the deployment did not complete\nsome more output\n").lines == (1, 1)


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        ("thread 'main' panicked at src/main.rs:2:5:\nindex out of bounds", None),
        (
            'Exception in thread "main" java.lang.IllegalStateException: broken state\n\tat com.acme.App.main(App.java:12)',
            "java.lang.IllegalStateException: broken state",
        ),
        ("npm ERR! missing script: build", None),
        ("npm error Missing script: build", None),  # npm 10's words
        ("error[E0308]: mismatched types\n --> src/lib.rs:4:5", "error[E0308]: mismatched types"),
        ("main.c:4:5: error: expected ';' before 'return'", None),
        ("FAILED tests/test_app.py::test_parse - AssertionError: boom", None),
        ("Caused by: java.io.IOException: disk full", None),
        (
            'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\nValueError: bad value',
            "ValueError: bad value",
        ),
    ],
)
def test_a_failure_before_a_quiet_tail_longer_than_the_window_is_found(monkeypatch, failure, message):
    from harness_memory import failure_excerpt

    monkeypatch.setattr(failure_excerpt, "WINDOW_CHARS", 4000)
    quiet = "".join(f"progress line {i} of the upload went well\n" for i in range(200))  # 8 KB, no failure
    head = "setup ok\n" * 50
    ex = extract(head + failure + "\n" + quiet + "exit code 1\n")
    first = failure.split("\n")[0]
    assert ex.message.startswith(message or first) and ex.lines[0] in (51, 52) and ex.kind != "trailer"
    # within the window the same failure is found without the second look; without it, the trailer is
    assert extract(head + failure + "\n" + quiet[:2000] + "exit code 1\n").lines[0] == ex.lines[0]
    plain = extract(head + "all good\n" + quiet + "exit code 1\n")
    assert plain.kind == "trailer" and plain.message == "exit code 1"


@pytest.mark.parametrize(
    "echo",
    [
        "+ make build",
        "$ make build",
        "> make build",
        "Run make build",
        "[command]/usr/bin/make build",
        "Running command make build",
        "Executing make build",
        "Step 3/7 : RUN make build",
        "[Pipeline] sh",
        "section_start:1700000000:build",
        "> Task :app:compileJava",
    ],
)
def test_the_echoed_command_that_opens_the_failing_step_is_its_command(echo):
    ex = extract("setup\nfetching deps ok\n" + echo + "\ncompiling\nld: error: undefined symbol: main\nmore\n")
    assert ex.command == echo and ex.lines[0] == 5


@pytest.mark.parametrize(
    ("log", "command"),
    [
        (
            "+ black --check --diff src\n--- src/app.py\t2024-01-01\n+++ src/app.py\t2024-01-01\n@@ -1,3 +1,3 @@\n"
            "-x=1\n+x = 1\nwould reformat src/app.py\nOh no! 1 file would be reformatted.\n",
            "+ black --check --diff src",
        ),
        (
            "$ git diff --exit-code\ndiff --git a/go.sum b/go.sum\n--- a/go.sum\n+++ b/go.sum\n@@ -1,2 +1,3 @@\n"
            "+golang.org/x/text v0.3.0 h1:abc\n",
            "$ git diff --exit-code",
        ),
    ],
)
def test_a_diffs_plus_header_is_not_an_echoed_command(log, command):
    # '+++ file' under '--- file' heads a diff: the step is still the command that printed it
    assert extract(log).command == command


def test_a_pytest_block_is_signed_by_its_exception_line_not_its_first_detail():
    ex = extract(
        "collected 1 item\nE   Expected: 3\nE   AssertionError: values differ\ntests/test_app.py:12: AssertionError"
    )
    assert ex.message == "AssertionError: values differ" and ex.exception == "AssertionError"
    assert ex.frame == "test_app.py"
    # the excerpt is the whole block, from its first E line to the location line
    assert ex.lines == (2, 4) and ex.block.startswith("E   Expected: 3\nE   AssertionError")


@pytest.mark.parametrize("indent", ["   ", "\t"])
def test_a_pytest_e_line_indented_with_a_tab_is_read_like_one_indented_with_spaces(indent):
    ex = extract(PLAIN + f"E{indent}the two lists differ in length\ntests/test_app.py:12: AssertionError\n")
    assert ex.message == "AssertionError: the two lists differ in length" and ex.lines == (4, 5)
    assert ex.kind == "pytest" and ex.frame == "test_app.py"


@pytest.mark.parametrize(
    "first",
    [
        "AssertionError: make returned non-zero exit status 2",
        "subprocess.CalledProcessError: Command '['make']' returned non-zero exit status 2.",
    ],
)
def test_a_pytest_block_whose_exception_names_an_exit_status_is_signed_by_that_exception(first):
    # words that elsewhere only trail a failure ("returned non-zero exit status") open this block: the block
    # is still read from its first E line, and its exception line is the message
    ex = extract(f"collected 1 item\nE   {first}\nE   assert 2 == 0\ntests/test_build.py:9: AssertionError\n")
    assert ex.message == first and ex.lines == (2, 4) and ex.frame == "test_build.py"


@pytest.mark.parametrize(
    "signal",
    [
        "Aborted",
        "Killed",
        "Segmentation fault",
        "Bus error",
        "Illegal instruction",
        "Floating point exception",
        "Terminated",
        "Trace/breakpoint trap",
    ],
)
@pytest.mark.parametrize("after", ["FAIL: test_parse", "not ok 2 - handles empty input"])
def test_a_process_killed_by_a_signal_is_the_failure_not_the_test_reported_failed_after_it(signal, after):
    ex = extract(f"running ./bench\n{signal}\n{after}\n")
    assert ex.message == signal and ex.lines == (2, 2)


def test_a_traceback_only_through_test_files_is_keyed_by_the_innermost_test_file():
    ex = extract(
        "Traceback (most recent call last):\n"
        '  File "/src/tests/test_app.py", line 3, in test_parse\n'
        "    assert parse(1)\n"
        '  File "/src/tests/helpers_test.py", line 9, in check\n'
        '    raise ValueError("bad")\n'
        "ValueError: bad"
    )
    assert ex.message == "ValueError: bad" and ex.frame == "helpers_test.py"
    assert ex.frames == ["test_app.py:test_parse", "helpers_test.py:check"]


def test_a_java_exception_without_a_message_is_signed_by_its_name():
    ex = extract(
        'Exception in thread "main" java.lang.NullPointerException\n'
        "\tat com.acme.App.run(App.java:12)\n"
        "\tat com.acme.App.main(App.java:5)"
    )
    assert ex.message.rstrip(":") == "java.lang.NullPointerException" and ex.exception == "NullPointerException"
    assert ex.frame == "com.acme.App.run"


def test_the_causes_under_a_bare_caused_by_are_read_past_a_blank_line_after_it():
    # a chain whose later 'Caused by:' heading is followed by a blank line, then its indented causes: they
    # are causes like the first one (and decide the category: memory ran out)
    ex = extract(
        "Error: the deploy step failed\nCaused by: java.io.IOException: stream closed\nCaused by:\n\n"
        "    0: Cannot allocate memory\n"
    )
    assert ex.causes == ["java.io.IOException: stream closed", "Cannot allocate memory"]
    assert categorize(ex) == "out_of_memory"


def test_a_failures_heading_gives_way_to_the_first_item_it_announces():
    log = "Failures:\n\n  1) Cart totals the items\n     Got 3 items\n\nFinished in 0.1 seconds\n"
    ex = extract(log)
    assert ex.message == "1) Cart totals the items" and ex.lines == (3, 4)


def test_a_haskell_call_stack_line_is_a_frame_without_a_folder_in_its_path():
    assert is_frame("  error, called at Main.hs:12:5 in main:Main")
    assert is_frame("  error, called at src/Main.hs:12:5 in main:Main")
    assert not is_frame("  error, called at Main.hs:12:5 in main:Main and then more")


@pytest.mark.parametrize(
    "name, line",
    [
        ("_C3", "open /var/run/docker.sock: permission denied"),  # "denied" is this line's only key
        ("_NOT_FAILURE", "Compiled 12 files with 0 errors"),  # "err" is
        ("_NOT_FAILURE", "build: -Werror enabled"),
    ],
)
def test_a_line_that_holds_only_one_key_of_a_line_class_is_still_searched(name, line):
    # a line class's literal keys are a filter in front of its pattern (test_failure_excerpt_keys.py): every line
    # the pattern matches passes it, also where a single key is all the line holds
    keyed = getattr(fe, name)
    assert keyed.rx.search(line) is not None
    assert keyed.search(line) is not None


@pytest.mark.parametrize(
    "log, message",
    [
        ("Setting up\nUnable to locate package libfoo-dev\nDone\n", "Unable to locate package libfoo-dev"),
        ("Running sync\nCaused by: the upstream went away\nDone\n", "Caused by: the upstream went away"),
    ],
    ids=["unable", "caused-by"],
)
def test_a_failure_line_whose_one_failure_word_is_unable_or_caused_by_is_found(log, message):
    assert extract(log).message == message


def test_a_signal_word_in_a_line_that_reports_no_death_is_not_the_failure():
    log = "Compiling\nsrc/app.rs:3:5: error: mismatched types\nTerminated the idle workers\nDone\n"
    assert extract(log).message == "src/app.rs:3:5: error: mismatched types"


def test_a_diagnostic_that_ends_in_a_caret_is_a_diagnostic_not_a_pointer():
    ex = extract("Building\nsrc/a.c:3: error: unexpected ^\nDone\n")
    assert ex.message == "src/a.c:3: error: unexpected ^" and ex.kind == "diagnostic"


def test_a_block_ends_at_the_next_step_s_header_whatever_the_step_is_called():
    log = "##[group]Lint\n$ lint src\n##[endgroup]\nsrc/a.py:1: bad name\n##[group]Sync the mirror\nSyncing\n"
    ex = extract(log)
    assert ex.message == "src/a.py:1: bad name" and ex.lines == (4, 4) and ex.block == "src/a.py:1: bad name"


@pytest.mark.parametrize("tail, last", [("", 5), ("\t... 1 more\n", 6)], ids=["frames", "frames-and-more"])
def test_a_java_root_cause_s_excerpt_spans_its_header_and_its_frames(tail, last):
    log = (
        "java.lang.RuntimeException: outer\n\tat a.B.c(B.java:3)\n"
        "Caused by: java.lang.IllegalStateException: inner\n\tat a.D.e(D.java:9)\n\tat a.F.g(F.java:2)\n"
        + tail
        + "next step\n"
    )
    ex = extract(log)
    assert ex.message == "java.lang.IllegalStateException: inner" and ex.lines == (3, last)
    assert ex.block == "\n".join(log.split("\n")[2:last])  # the lines of the span, as they were


@pytest.mark.parametrize(
    "log, message",
    [
        (  # a value balanced on the first line: the lines under it are not more of it
            "org.opentest4j.AssertionFailedError: expected: <[1, 2]> but was: <[1, 3]>\nwhile checking the totals\n"
            "\tat a.B.c(B.java:3)\n",
            "org.opentest4j.AssertionFailedError: expected: <[1, 2]> but was: <[1, 3]>",
        ),
        (  # a value in square brackets run over lines: joined up to where its brackets balance
            "org.opentest4j.AssertionFailedError: expected: [first\nsecond] but was: [first\nthird]\n"
            "while checking the totals\n\tat a.B.c(B.java:3)\n",
            "org.opentest4j.AssertionFailedError: expected: [first second] but was: [first third]",
        ),
        (  # JUnit 4's angle brackets: a line that closes one value and opens the next leaves the value open
            "org.junit.ComparisonFailure: expected:<first\nsecond> but was:<first\nthird>\n"
            "while checking the totals\n\tat a.B.c(B.java:3)\n",
            "org.junit.ComparisonFailure: expected:<first second> but was:<first third>",
        ),
    ],
    ids=["balanced-on-one-line", "square-brackets-over-lines", "angle-brackets-over-lines"],
)
def test_a_java_message_runs_on_only_while_a_value_opened_on_it_is_open(log, message):
    assert extract(log).message == message


def test_a_python_traceback_s_frames_are_its_own_not_those_of_a_cut_off_one_before_it():
    log = (
        'Traceback (most recent call last):\n  File "/app/a.py", line 3, in <module>\n'
        'Traceback (most recent call last):\n  File "/app/b.py", line 9, in run\n    go()\nValueError: bad\n'
    )
    ex = extract(log)
    assert ex.message == "ValueError: bad" and ex.frames == ["b.py:run"] and ex.lines == (4, 6)


def test_the_files_a_checker_lists_before_its_count_are_findings_up_to_the_log_s_first_line():
    log = "src/a.js\nsrc/b.js\nCode style issues found in 2 files. Run Prettier to fix.\n"
    assert extract(log).message == "src/a.js"  # the first finding of the list, though it is the log's first line


def test_a_checker_s_list_of_files_is_read_back_from_its_count_wherever_it_is_in_the_log():
    log = "".join(f"formatting module {i}\n" for i in range(300))
    log += "src/a.js\nsrc/b.js\nCode style issues found in 2 files. Run Prettier to fix.\n"
    assert extract(log).message == "src/a.js"


def test_line_numbers_past_a_cut_window_count_a_blank_first_line(monkeypatch):
    from harness_memory import failure_excerpt

    monkeypatch.setattr(failure_excerpt, "WINDOW_CHARS", 4000)
    quiet = "".join(f"progress line {i} of the upload went well\n" for i in range(200))  # 8 KB: the window is cut
    ex = extract("\n" + quiet + "main.c:4:5: error: expected ';' before 'return'\n")
    assert ex.message.startswith("main.c:4:5: error") and ex.lines == (202, 202)


def test_a_diagnostic_whose_location_line_ends_the_log_is_found():
    ex = extract("Checking\nthis value is never read\n --> src/main.rs:3:9")  # no newline after the last line
    assert ex.message == "this value is never read" and ex.lines == (2, 3)


def test_a_block_is_trimmed_of_blank_lines_only():
    assert extract("Building\nerror: unknown option -X\n").block == "error: unknown option -X"


@pytest.mark.parametrize(
    "warning, expected",
    [
        ("PHP Warning:  mysqli_connect(): (HY000/2002): Connection refused in /app/db.php on line 4", "network"),
        (
            "PHP Warning:  fopen(/srv/out/r.csv): Failed to open stream: Permission denied in /app/r.php on line 9",
            "permission",
        ),
    ],
)
def test_a_runtime_warning_right_above_a_script_s_bare_failure_line_is_its_cause(warning, expected):
    log = f"starting check\n{warning}\ndatabase check failed for db-primary\n"
    ex = extract(log)
    assert ex.message == "database check failed for db-primary" and ex.causes == [warning]
    assert categorize(ex) == expected


def test_a_warning_further_up_or_over_a_stronger_failure_is_no_cause():
    far = (
        "PHP Warning:  x(): Connection refused\nstep two\nstep three\nstep four\ndatabase check failed for db-primary\n"
    )
    assert extract(far).causes == []
    strong = "PHP Warning:  x(): Connection refused\nAssertionError: 3 != 4\n"
    assert extract(strong).causes == [] and categorize(extract(strong)) == "assertion"


def test_the_runner_s_echo_of_a_step_s_script_is_never_its_failure():
    # GitHub prints the step's script between ``##[group]Run ...`` and ``##[endgroup]``: a ``grep 'Failed'`` there
    # is what the step will run, not what it printed
    log = (
        "##[group]Run ./check.sh; ! grep -q 'FAILED' out.log\n./check.sh; ! grep -q 'FAILED' out.log\n"
        "shell: /usr/bin/bash -e {0}\n##[endgroup]\nchecking 3 records\nrecord 2 FAILED: total mismatch\n"
        "##[error]Process completed with exit code 1.\n"
    )
    ex = extract(log)
    assert ex.message == "record 2 FAILED: total mismatch" and ex.lines == (6, 6)
    # a group the job's own output opens is no echo: a failure inside it is found
    own = "##[group]Integration tests\ncase 4 FAILED: total mismatch\n##[endgroup]\n"
    assert extract(own).message == "case 4 FAILED: total mismatch"
    # a Run group that is never closed (a log cut, a stray line) silences nothing
    unclosed = "##[group]Run actions/checkout@v4\nchecking 3 records\nrecord 2 FAILED: total mismatch\n"
    assert extract(unclosed).message == "record 2 FAILED: total mismatch"


def test_a_failure_header_s_report_below_it_across_blank_lines_gives_the_category():
    log = (
        "==== calc-2.1 rounding of halves FAILED\n==== Contents of test case:\n\n    round_half 2.5\n\n"
        "---- Result was:\n2\n---- Result should have been (exact matching):\n3\n==== calc-2.1 FAILED\n"
    )
    ex = extract(log)
    assert ex.message == "==== calc-2.1 rounding of halves FAILED" and "Result should have been" in ex.detail
    assert categorize(ex) == "assertion"
    # the report stops at the next failure statement: the second header's lines are not the first one's detail
    two = "==== a-1 FAILED\n\n---- Result was:\n2\n==== b-1 FAILED\n\n---- Result should have been:\n3\n"
    first = extract(two.split("==== b-1")[0] + "==== b-1 FAILED\n")
    assert first.message == "==== a-1 FAILED" and first.detail == "---- Result was:\n2"


def test_a_logger_s_date_is_taken_off_and_its_source_location_is_no_compiler_diagnostic():
    # Go's log package: ``2026/11/26 23:36:38 main.go:31: ...`` is a log record at the logger's call site
    row = clean_lines("2026/11/26 23:36:38 main.go:31: config: missing key port")[0]
    assert (row.text, row.level) == ("main.go:31: config: missing key port", "log")
    ex = extract("indexed 3 files\n2026/11/26 23:36:38 write index: open /srv/cache/index.json: permission denied\n")
    assert ex.message == "write index: open /srv/cache/index.json: permission denied"
    assert extract("2026/11/26 23:36:38 main.go:31: config: missing key port\n").kind != "diagnostic"


def test_a_pytest_e_line_alone_is_its_exception_without_the_marker():
    ex = extract("E       AssertionError: assert 1 == 2")
    assert ex.message == "AssertionError: assert 1 == 2" and ex.exception == "AssertionError"


def test_the_second_look_before_the_window(monkeypatch):
    from harness_memory import failure_excerpt

    monkeypatch.setattr(failure_excerpt, "WINDOW_CHARS", 4000)
    quiet = "".join(f"progress line {i} of the upload went well\n" for i in range(200))  # 8 KB, no failure
    tb = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    main()\nValueError: bad value\n'
    # a failure on the log's very first line (its marker at offset 0) is found
    first = extract(tb + quiet + "exit code 1\n")
    assert first.message == "ValueError: bad value" and first.lines[0] == 2  # from its first application frame
    # an earlier part that holds only a runner's trailer does not replace the tail's own trailer
    trailer_only = extract("setup ok\nBUILD FAILED in 3s\n" + quiet + "exit code 1\n")
    assert trailer_only.message == "exit code 1" and trailer_only.kind == "trailer"


def test_with_no_failure_statement_the_first_line_that_is_not_a_wrapper_tag_is_the_message():
    ex = extract("<output>\nsomething odd happened in the nightly run\n</output>\n")
    assert ex.message == "something odd happened in the nightly run" and ex.lines == (2, 2)


@pytest.mark.parametrize("tag", ["", "ERROR: ", "[ERROR] "])
@pytest.mark.parametrize(
    "prog, complaint",
    [
        ("python -m pytest", "unrecognized arguments: --cov=app --cov-report=term"),
        ("manage.py", "the following arguments are required: --settings"),
        ("deploy", "argument --env: invalid choice: 'prod2' (choose from 'dev', 'prod')"),
    ],
)
def test_a_usage_synopsis_is_not_the_failure_the_argument_error_under_it_is(tag, prog, complaint):
    log = f"{tag}usage: {prog} [options] [file_or_dir] [...]\n{prog}: error: {complaint}\n  rootdir: /tmp/x\n"
    ex = extract(log)
    assert ex.message == f"{prog}: error: {complaint}" and ex.lines[0] == 2
    # the synopsis and its tag are not part of the signature: the same complaint under another synopsis is one
    with MemoryStore(":memory:") as s:
        other = log.replace("[options] [file_or_dir] [...]", "[-h] [--verbose]")
        assert s.error_signature(other).id == s.error_signature(log).id == s.error_signature(log[len(tag) :]).id
