"""Failure classes met in the heldout10 split of the CI-log corpus (signing method 13), each written as a general
property and tested on inputs of other tools and words than the split's logs: first the generic-trailer class (a
runner's exit or summary line names no category), then the line prefixes of more runners and the category words of
more runtimes; its logs, one test per log family, are in tests/test_ci_corpus.py (tests/fixtures/ci_logs/README.md,
"The `heldout10` split")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore, category_model
from harness_memory.category_model import BOILERPLATE_WORDS, is_boilerplate
from harness_memory.error_signatures import categorize, categorize_learned
from harness_memory.failure_excerpt import clean_lines, extract


def category(text: str) -> str:
    return categorize_learned(extract(text))


# -- 1. a runner's generic exit or summary line names no category ---------------------------------------------
RUNNER_LINES = [
    "ERROR: Job failed: exit code 1",  # GitLab (was test_failure: "failed")
    "BUILD FAILED in 3s",  # Gradle (was compile_error: "build failed")
    "Error: Process completed with exit code 1.",  # GitHub (the learned fallback said timeout)
    "##[error]Process completed with exit code 2.",
    "FAILURE: Build failed with an exception.",
    "Finished: FAILURE",
    "ERROR: script returned exit code 1",
    "##[error]Bash exited with code '1'.",
    "Exited with code exit status 1",
    "🚨 Error: The command exited with status 1",
    "user command error: exit status 1",
    "Done. Your build exited with 1.",
    "error: build step failed",
    "Build step failed, see log",
    "FAILED",
]


@pytest.mark.parametrize("line", RUNNER_LINES)
def test_a_runner_s_exit_line_alone_is_unknown(line):
    ex = extract(line)
    assert categorize(ex) == "unknown" and categorize_learned(ex) == "unknown"


def test_the_shipped_fallback_names_no_category_for_an_exit_line():
    # the model alone once said timeout for GitHub's exit line: it is not asked about boilerplate
    assert category_model.predict("Error: Process completed with exit code 1.") == "unknown"
    assert category_model.predict("BUILD FAILED in 12s") == "unknown"


@pytest.mark.parametrize(
    "line, expected",
    [
        ("ERROR: Job failed: exit code 124", "timeout"),  # the exit code of ``timeout``: evidence
        ("##[error]Process completed with exit code 124.", "timeout"),
        ("ERROR: Job failed: exit code 137", "out_of_memory"),  # killed (SIGKILL)
    ],
)
def test_a_conventional_exit_code_still_names_its_category(line, expected):
    assert category(line) == expected


@pytest.mark.parametrize(
    "line, expected",
    [
        ("Tests failed", "test_failure"),  # says what failed: the tests
        ("Task :test FAILED", "test_failure"),
        ("error: could not compile `app` due to 2 previous errors", "compile_error"),
        ("ERROR: Job failed: Connection refused by 10.0.0.7:5432", "network"),
    ],
)
def test_a_summary_line_that_says_what_failed_keeps_its_category(line, expected):
    assert category(line) == expected


_FILLER = sorted(BOILERPLATE_WORDS)
_FAILING = ["error", "failed", "failure", "exited", "exit", "Error", "FAILED", "FAILURE", "ERROR"]
_SAFE_CODES = st.integers(0, 255).filter(
    lambda n: n not in (124, 126, 127, 137)
)  # the conventional codes mean something


@st.composite
def runner_lines(draw) -> str:
    words = draw(st.lists(st.sampled_from(_FILLER), min_size=0, max_size=8))
    words.insert(draw(st.integers(0, len(words))), draw(st.sampled_from(_FAILING)))
    words = [w.upper() if draw(st.booleans()) and len(w) > 3 else w for w in words]
    if draw(st.booleans()):
        words.append(str(draw(_SAFE_CODES)))
    if draw(st.booleans()):
        words.append(f"in {draw(st.integers(1, 59))}s")
    sep = draw(st.sampled_from([" ", ": ", " - "]))
    return (
        draw(st.sampled_from(["", "##[error]", "ERROR: ", "🚨 "])) + sep.join(words) + draw(st.sampled_from(["", "."]))
    )


@settings(max_examples=50, deadline=None)
@given(runner_lines())
def test_any_line_of_runner_words_alone_is_unknown(line):
    assert is_boilerplate(line)
    assert category(line) == "unknown"


@settings(max_examples=30, deadline=None)
@given(runner_lines(), st.integers(1, 3))
def test_runner_lines_after_a_failure_do_not_change_its_category(trailer, copies):
    failure = 'Traceback (most recent call last):\n  File "app.py", line 3, in <module>\n    connect()\nConnectionRefusedError: [Errno 111] Connection refused\n'
    assert category(failure) == "network"
    assert category(failure + (trailer + "\n") * copies) == "network"


def test_a_log_whose_only_failure_statement_is_a_runner_line_is_unknown():
    log = "Run ./deploy.sh\nuploading 3 files\nall files uploaded\nError: Process completed with exit code 1.\n"
    assert category(log) == "unknown"
    assert category(log.replace("code 1.", "code 124.")) == "timeout"


# -- 2. more runners' line prefixes: a string control, a status column after a clock stamp -------------------
def test_terminal_string_controls_are_stripped_with_their_text():
    apc = clean_lines("\x1b_bk;t=1732664401123\x07java.net.UnknownHostException: db.internal")[0]
    osc = clean_lines("\x1b]8;;https://ci.example/job/7\x07see job\x1b]8;;\x07 failed")[0]
    dcs = clean_lines("\x1bPq#0;2;0;0;0\x1b\\ready")[0]
    assert (apc.text, osc.text, dcs.text) == ("java.net.UnknownHostException: db.internal", "see job failed", "ready")


def test_a_status_column_after_a_clock_stamp_is_stripped_but_a_level_tag_stays_evidence():
    row = clean_lines("[09:15:02]E:\t [Step 2/3] [ERROR] Failed to execute goal")[0]
    assert row.text == "Failed to execute goal" and row.level == "error"
    nested = clean_lines("[09:15:02] :\t [Step 2/3] [Gradle failure report] FAILURE: Build failed")[0]
    assert nested.text == "FAILURE: Build failed"


def test_a_log_signs_alike_with_or_without_a_runner_s_line_prefix(tmp_path):
    body = [
        "compiling report",
        'Exception in thread "main" java.nio.file.AccessDeniedException: /srv/out/a.csv',
        "\tat Report.main(Report.java:12)",
        "Process exited with code 1",
    ]
    teamcity = "".join(f"[10:00:0{i}] :\t [Step 1/1] {ln}\n" for i, ln in enumerate(body))
    buildkite = "".join(f"\x1b_bk;t=17326644011{i:02d}\x07{ln}\n" for i, ln in enumerate(body))
    with MemoryStore(tmp_path / "m.db") as s:
        plain = s.error_signature("".join(ln + "\n" for ln in body))
        assert plain.category == "permission"
        for wrapped in (teamcity, buildkite):
            sig = s.error_signature(wrapped)
            assert (sig.id, sig.category, sig.excerpt_lines) == (plain.id, plain.category, plain.excerpt_lines)


# -- 3. more runtimes' words for a category -----------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "panic: interface conversion: interface {} is nil, not map[string]interface {}",
        "TypeError: sequence item 0: must be str, not int",
        "class java.lang.Long cannot be cast to class java.lang.Integer",
        "Not a HASH reference at lib/Report.pm line 41.",
        "Can't use an undefined value as an ARRAY reference at gen.pl line 7.",
        "PHP Fatal error:  Unsupported operand types: string - int in /app/total.php:4",
    ],
    ids=["go", "python", "java", "perl-hash", "perl-undef", "php"],
)
def test_a_value_used_as_a_type_it_is_not_is_a_type_error(text):
    assert category(text) == "type_error"


@pytest.mark.parametrize(
    "text",
    [
        "Fatal error: Could not cast value of type 'Swift.String' (0x1f2a8) to 'Swift.Int' (0x1f2b0).",
        "System.InvalidOperationException: Unable to cast object of type System.String to type System.Int32.",
        "thread 'main' panicked: cannot convert a string into an integer",
        "Uncaught Error: cannot coerce a nil value to a number",
    ],
    ids=["swift", "dotnet", "rust", "lua-like"],
)
def test_a_value_of_one_type_cast_or_converted_to_another_is_a_type_error(text):
    # the general shape behind Go's, Perl's and Ruby's words: two built-in type names, one turned into the other
    assert category(text) == "type_error"


@pytest.mark.parametrize(
    "text",
    ["error: failed to convert config.yaml to json", "key 'port' not found in map of string to int"],
)
def test_a_conversion_without_two_type_names_or_a_missing_key_is_not_a_type_error(text):
    assert category(text) != "type_error"


@pytest.mark.parametrize(
    "text",
    [
        "Error: cannot allocate vector of size 7.5 Gb",
        "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 3.20 GiB for an array with shape (20000, 21475)",
        "fatal: failed to allocate 64 MiB for the pack index",
    ],
    ids=["r", "numpy", "git"],
)
def test_an_allocation_refused_for_its_size_is_out_of_memory(text):
    assert category(text) == "out_of_memory"


def test_an_allocation_of_something_that_is_not_memory_is_not_out_of_memory():
    assert category("error: failed to allocate port 8080 for the proxy") != "out_of_memory"


@pytest.mark.parametrize(
    "text",
    [
        "Error: all(w$weight >= 0) are not all TRUE\nExecution halted",
        "Error: nrow(df) == 3 is not TRUE\nExecution halted",
    ],
)
def test_a_stated_condition_that_does_not_hold_is_an_assertion(text):
    assert category(text) == "assertion"
