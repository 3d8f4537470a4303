"""Classes met in the heldout24 and heldout25 splits of the CI-log corpus (their first runs: tests/fixtures/ci_logs/
README.md, "The `heldout24` split", "The `heldout25` split"), each written as a general rule (signing method 46:
failure_excerpt's statements and prefixes, error_signatures' words) and tested on inputs of other tools and words than
the splits' logs, with neighbours that keep their category; the splits' logs are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import clean_lines, extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # a link that cannot be made from the objects given
        (
            "/usr/bin/ld: obj/a.o: relocation R_X86_64_32 against symbol `tbl' can not be used when making a PIE "
            "object; recompile with -fPIE\ncollect2: error: ld returned 1 exit status",
            "compile_error",
        ),
        ("app.o: in function `main': relocation truncated to fit: R_X86_64_PC32 against `.bss'", "compile_error"),
        # a build's own description that does not hold together
        ("ninja: error: build.ninja:40: multiple rules generate gen/version.h [-w dupbuild=err]", "compile_error"),
        ("ninja: error: dependency cycle: gen/a.h -> gen/b.h -> gen/a.h", "compile_error"),
        ('CMake Error at cmake/opts.cmake:3 (enable_lto):\n  Unknown CMake command "enable_lto".', "compile_error"),
        ("found packages api (api.go) and main (cmd.go) in /src/svc", "compile_error"),
        ("./release.sh: line 9: ${VERSION,,}: bad substitution", "compile_error"),
        ("po/fr.po:88: duplicate message definition...\npo/fr.po:40: ...this is the location", "compile_error"),
        # an archive whose check does not hold
        ("bzip2: Data integrity error when decompressing.", "compile_error"),
        ("unzip: testing: data/cities.csv  bad CRC 5f1e0a2b  (should be 9c3d7e11)", "compile_error"),
        # a module file that would have to change and may not
        ("go: updates to go.mod needed; to update it:\n\tgo mod tidy", "import_error"),
        ("go: inconsistent vendoring in /src/svc:", "import_error"),
        # a dependency's requirement no installed version meets
        ("Package dependency requirement 'libpng >= 1.7' could not be satisfied.", "import_error"),
        # a JVM linkage error: another version of a dependency than the one compiled against
        ('Exception in thread "main" java.lang.NoSuchFieldError: DEFAULT\n\tat a.B.main(B.java:3)', "import_error"),
        # a call or a value of the wrong shape for the operation
        ('wrong # args: should be "lsort ?-option value ...? list"', "type_error"),
        ("Error: stepping, cannot store REAL value in INTEGER column items.qty (19)", "type_error"),
        ("data.yaml: 'eight' is not of type 'integer'", "type_error"),
        # a server that answered nothing, or only redirects
        ("curl: (52) Empty reply from server", "network"),
        ("curl: (47) Maximum (50) redirects followed", "network"),
        ("requests.exceptions.TooManyRedirects: Exceeded 30 redirects.", "network"),
        ("20 redirections exceeded.", "network"),
        # a subcommand the tool does not have; an interpreter's version a package requires
        ("docker: 'buildx' is not a docker command.", "not_found"),
        (
            "error: rustc 1.70.0 is not supported by the following package:\n  tokio@1.44 requires rustc 1.70",
            "not_found",
        ),
        ("npm error engine Unsupported engine", "not_found"),
        # a declared condition on the data that does not hold
        ("Error: CHECK constraint failed: qty > 0", "assertion"),
        ('ERROR:  new row for relation "orders" violates check constraint "orders_qty_check"', "assertion"),
        # a server's hook refusing a push
        (" ! [remote rejected] main -> main (protected branch hook declined)", "permission"),
        # Tcl's limit of nested calls, as a recursion limit
        ('too many nested evaluations (infinite loop?)\n    while executing\n"walk $n"', "out_of_memory"),
    ],
)
def test_heldout24_and_heldout25_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ("curl: (22) The requested URL returned error: 403", "permission"),
        ("curl: (22) The requested URL returned error: 404\n<html>Not Found</html>", "not_found"),
        ("curl: (7) Failed to connect to localhost port 9 after 0 ms: Couldn't connect to server", "network"),
        ("ninja: error: unknown target 'docs'", "not_found"),
        ("ModuleNotFoundError: No module named 'yaml'", "import_error"),
        ("java.util.NoSuchElementException: No value present", "not_found"),
        ("UNIQUE constraint failed: plans.slug", "assertion"),  # (since method 47: a declared constraint)
        ("RecursionError: maximum recursion depth exceeded", "out_of_memory"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        ("checked 40 targets: no dependency cycles", "compile_error"),
        ("warning: this script is not of the expected kind, continuing", "network"),
        ("the hook was declined by nobody; all refs pushed", "network"),
        ("the release requires node review before merging", "not_found"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


def test_a_response_body_that_says_why_decides_over_its_http_status():
    body = '{\n  "message": "You have exceeded a secondary rate limit. Please wait a few minutes."\n}'
    assert category(f"curl: (22) The requested URL returned error: 403\n{body}") == "rate_limit"
    long = '{"error": {"message": "This model\'s maximum context length is 8192 tokens", "code": 400}}'
    assert category(f"curl: (22) The requested URL returned error: 400\n{long}") == "context_overflow"
    # a body that says nothing more keeps the status's category
    assert category('curl: (22) The requested URL returned error: 403\n{"message": "Forbidden"}') == "permission"


def test_tcl_errorinfo_makes_its_message_the_statement_whatever_its_words():
    log = (
        "row 1 ok\nrow 2 ok\n"
        'expected boolean value but got "maybe"\n    (reading flag)\n    invoked from within\n"if {$flag} {"\n'
        '    (procedure "check" line 2)\n    invoked from within\n"check maybe"\n'
    )
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 3
    assert ex.message.startswith('expected boolean value but got "maybe"')


def test_runner_closing_lines_give_way_to_the_statement_above_them():
    teamcity = (
        "[09:05:38] :\t [Step 1/1] xz: data.xz: Compressed data is corrupt\n"
        "[09:05:38] :\t [Step 1/1] Process exited with code 1\n"
        "[09:05:38]E: Step Unpack (Command Line) failed\n"
    )
    assert extract(teamcity).lines == (1, 1)
    push = (
        "remote: error: GH006: Protected branch update failed for refs/heads/main.\n"
        "To github.com:o/r.git\n ! [remote rejected] main -> main (protected branch hook declined)\n"
        "error: failed to push some refs to 'github.com:o/r.git'\n"
    )
    assert extract(push).lines[0] == 3
    act = (
        "[CI/build]   | Traceback (most recent call last):\n"
        '[CI/build]   |   File "x.py", line 1, in <module>\n'
        "[CI/build]   | KeyError: 'name'\n"
        "[CI/build]   \u274c  Failure - Main python x.py\n"
        "[CI/build] exitcode '1': failure\n"
    )
    ex = extract(act)
    assert ex.exception == "KeyError" and categorize(ex) == "not_found"


def test_a_cache_miss_is_never_the_failure():
    log = (
        "Cache not found for input keys: setup-node-Linux-npm-0a1b2c\n"
        "##[group]Run npm test\n##[endgroup]\n"
        'npm error Missing script: "test"\n'
        "##[error]Process completed with exit code 1.\n"
    )
    ex = extract(log)
    assert "Missing script" in ex.message


def test_a_passing_check_above_a_silent_exit_is_not_its_report():
    log = "smoke: db ... ok\nsmoke: cache ... ok\nmake: *** [Makefile:2: smoke] Error 3\n"
    assert extract(log).lines == (3, 3)


def test_pytest_internal_error_column_is_stripped_before_the_traceback_is_read():
    lines = clean_lines("INTERNALERROR> Traceback (most recent call last):\nINTERNALERROR> ValueError: x")
    assert [ln.text for ln in lines] == ["Traceback (most recent call last):", "ValueError: x"]


@settings(max_examples=60, deadline=None)
@given(
    a=st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True),
    b=st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True),
    n=st.integers(min_value=1, max_value=9999),
)
def test_a_go_folder_of_two_packages_is_a_compile_error_whatever_their_names(a, b, n):
    assert category(f"found packages {a} ({a}.go) and {b} ({b}_{n}.go) in /src/x") == "compile_error"
