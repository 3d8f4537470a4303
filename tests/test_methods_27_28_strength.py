"""Signing methods 27 and 28 at their edges (mutation testing of their new code, 2026-11-27:
benchmarks/mutation/error_signatures.json and failure_excerpt.json). Each test is a failure log in a tool's own
shape, read through the public path (``extract`` then ``categorize``), where one rule of the methods decides:

- a block's lines are read for the category without its frames, and only a Python frame's own source line goes
  with it: the first line of a block, and a line after a frame that printed no source line, are the failure's own;
- a runner quoting the commit it checked out (``Commit message: "Revert "..."``) is never the failure;
- Test::More's ``# Looks like you planned N tests but ran M.`` is a failure statement, below a script's own death;
- a date-stamped log line is what the program logged as it gave up only when it is the last thing printed;
- a closing ``could not compile X`` line is the trailer of the diagnostic above it, not part of its block;
- a bare ``file:line:col:`` line takes the statement right above it, or one at the log's first line, and the
  statement is then read as a diagnostic (a TypeScript file's: a type checker's).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import _LOCATION_LOOKBACK, extract


# -- frames and source lines (error_signatures._said) -------------------------------------------------------------------
def test_a_block_whose_first_line_is_indented_keeps_it():
    # a GoogleTest report indented as a whole (ctest under a runner that indents its output): the report's location
    # line opens the block and is no frame's source line; the line under it says what failed
    log = (
        "$ ctest --output-on-failure\n"
        "    tests/net_test.cpp:42: Failure\n"
        "    connect() failed: Connection refused\n"
        "    Expected: ok\n"
    )
    ex = extract(log)
    assert ex.lines == (2, 4)
    assert categorize(ex) == "network"


@pytest.mark.parametrize(
    ("reason", "want"),
    [
        ("while talking to db.internal: connection timed out", "timeout"),
        ("permission denied writing /srv/out/report.csv", "permission"),
    ],
)
def test_a_line_after_a_frame_without_source_is_the_messages_own(reason, want):
    # Python prints no source line under a frozen module's frame (``<frozen runpy>``): the exception line follows
    # it, and an indented line of its message after that is the message, not a source line
    log = (
        "Traceback (most recent call last):\n"
        '  File "<frozen runpy>", line 198, in _run_module_as_main\n'
        "RuntimeError: sync aborted\n"
        f"    {reason}\n"
    )
    assert categorize(extract(log)) == want


# -- a runner quoting the commit it checked out (failure_excerpt._classify) --------------------------------------------
@settings(max_examples=30, deadline=None)
@given(
    quoted=st.sampled_from(
        ["error: timeout in fetch", "FAILED: build on arm64", "fatal: permission denied", "npm ERR! missing script"]
    ),
    closing=st.sampled_from(["Finished: FAILURE", "script returned exit code 1", "BUILD FAILED"]),
)
def test_a_revert_commits_message_quoting_an_error_is_never_the_failure(quoted, closing):
    # git's default subject of a revert quotes the reverted commit's subject, which may read like a failure
    log = (
        "Checking out Revision abc123 (refs/remotes/origin/main)\n"
        f'Commit message: "Revert "{quoted}""\n'
        "[Pipeline] sh\n+ ./ci.sh\n"
        f"{closing}\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] != 2
    assert "Commit message" not in ex.message


# -- Test::More's plan line (failure_excerpt._classify) -----------------------------------------------------------------
def test_a_scripts_own_death_outranks_the_plan_line_under_it():
    log = (
        "t/b.t .. \n1..5\nok 1\nok 2\nok 3\n"
        "Can't locate Foo/Bar.pm in @INC (you may need to install the Foo::Bar module) (@INC contains: lib "
        "/usr/share/perl5) at t/b.t line 9.\n"
        "# Looks like you planned 5 tests but ran 3.\n"
        "# Looks like your test exited with 2 just after 3.\n"
        "t/b.t .. Dubious, test returned 2 (wstat 512, 0x200)\n"
        "Failed 2/5 subtests \n"
    )
    ex = extract(log)
    assert ex.lines == (6, 6)
    assert categorize(ex) == "import_error"


# -- a date-stamped log line before a trailer (failure_excerpt._report_above) ---------------------------------------------
@pytest.mark.parametrize(
    "trailer", ["exit status 1", "make: *** [gen] Error 1", "Error: Process completed with exit code 1."]
)
def test_a_log_line_printed_last_before_the_trailer_is_the_failure(trailer):
    # Go's log.Fatal of a plain sentence (no colon, no failure word), then the runner's status
    log = f"+ go run ./cmd/gen\n2026/01/02 03:04:05 no templates matched the pattern\n{trailer}\n"
    ex = extract(log)
    assert ex.lines == (2, 2)
    assert ex.message == "no templates matched the pattern"


def test_a_log_line_with_other_output_after_it_is_not_the_failure():
    # a progress line logged earlier, then plain output, then the status: the program did not give up with it
    log = "+ go run ./cmd/gen\n2026/01/02 03:04:05 wrote 3 files\nrendering templates...\nexit status 1\n"
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] != 2
    assert "wrote 3 files" not in ex.message


# -- a closing line of a compile (failure_excerpt._C1) ----------------------------------------------------------------
def test_a_closing_could_not_compile_line_is_not_part_of_the_diagnostics_block():
    ex = extract("Building app\nlib/app.ml:3: Unbound value foo\ncould not compile app\n")
    assert ex.lines == (2, 2)
    assert ex.message == "lib/app.ml:3: Unbound value foo"


# -- a bare location and its statement (failure_excerpt._statement_above) ---------------------------------------------
def test_a_bare_location_takes_the_statement_of_a_logs_first_line():
    # esbuild's output alone: the statement is the log's first line, the location two lines under it
    log = (
        '✘ [ERROR] Could not resolve "left-pad"\n\n'
        "    src/main.ts:7:20:\n"
        '      7 │ import leftPad from "left-pad";\n'
        "        ╵                     ~~~~~~~~~~\n\n1 error\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 1
    assert categorize(ex) == "import_error"


def test_a_bare_location_takes_the_statement_right_above_it():
    # the same with the blank line dropped (a log whose empty lines a runner does not keep)
    log = (
        "> esbuild src/main.ts --bundle\n"
        '✘ [ERROR] Could not resolve "left-pad"\n'
        "    src/main.ts:7:20:\n"
        '      7 │ import leftPad from "left-pad";\n'
        "1 error\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 2
    assert "Could not resolve" in ex.message
    assert categorize(ex) == "import_error"


@pytest.mark.parametrize(
    "statement", ['Cannot assign to "limit" because it is a constant', 'The symbol "limit" has already been declared']
)
def test_a_typescript_statement_over_a_bare_location_is_a_type_checkers(statement):
    # tsc reports both as type errors (TS2588, TS2451); esbuild prints them over the location of the TypeScript source
    log = (
        "> app@1.0.0 build\n> esbuild src/main.ts --bundle --outfile=dist/out.js\n\n"
        f"✘ [ERROR] {statement}\n\n"
        "    src/main.ts:3:0:\n"
        "      3 │ limit = 5;\n"
        "        ╵ ~~~~~\n\n1 error\n"
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 4
    assert categorize(ex) == "type_error"


def _esbuild_with_gap(blank_lines: int) -> str:
    return (
        "> esbuild src/main.ts --bundle\n"
        '✘ [ERROR] Could not resolve "left-pad"\n' + "\n" * blank_lines + "    src/main.ts:7:20:\n"
        '      7 │ import leftPad from "left-pad";\n'
        "1 error\n"
    )


def test_a_bare_location_looks_up_its_statement_only_within_its_window():
    # the statement is looked for among the _LOCATION_LOOKBACK lines above the location (blank lines between count):
    # at the window's far end it is found, one line further it is not
    far = _LOCATION_LOOKBACK - 1  # blank lines between: the statement is then the window's last line
    ex = extract(_esbuild_with_gap(far))
    assert ex.lines is not None and ex.lines[0] == 2
    assert "Could not resolve" in ex.message
    ex = extract(_esbuild_with_gap(far + 1))
    assert ex.lines is not None and ex.lines[0] == 2 + far + 2  # the location alone
    assert "Could not resolve" not in ex.message


def test_a_bare_location_under_a_line_that_states_no_failure_stands_alone():
    log = "> esbuild src/main.ts --bundle\nCompiling 3 files\n\n    src/main.ts:7:20:\n      7 │ import leftPad\n"
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 4
    assert "Compiling" not in ex.message
