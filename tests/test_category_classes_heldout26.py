"""Classes met in the heldout26 and heldout27 splits of the CI-log corpus (their first runs at signing method 46:
tests/fixtures/ci_logs/README.md, "The `heldout26` split", "The `heldout27` split"), each written as a general rule
(signing method 47) and tested on inputs of other tools and words than the splits' logs, with neighbours that keep
their category; the splits' logs are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import _classify, clean_lines, extract


def category(text: str) -> str:
    return categorize(extract(text))


@pytest.mark.parametrize(
    "text, expected",
    [
        # a declared constraint on the data that does not hold, in any database's words
        ("sqlite3.IntegrityError: NOT NULL constraint failed: users.email", "assertion"),
        ("Error: UNIQUE constraint failed: tags.name", "assertion"),
        ('ERROR:  duplicate key value violates unique constraint "users_email_key"', "assertion"),
        ('ERROR:  null value in column "x" of relation "t" violates not-null constraint', "assertion"),
        ("SQLSTATE[23000]: Integrity constraint violation: 1062 Duplicate entry 'a' for key 'name'", "assertion"),
        # a value that is not its column's type
        ('ERROR:  invalid input syntax for type uuid: "abc"', "type_error"),
        ('expected boolean value but got "maybe"', "type_error"),
        # a change that does not apply; a file whose check does not hold
        ("fatal: refusing to merge unrelated histories", "compile_error"),
        ("data.zst : Decoding error (36) : Restored data doesn't match checksum", "compile_error"),
        ("Error 66 : Decompression error : ERROR_decompressionFailed", "compile_error"),
        ("gzip: stdin: decompression failed", "compile_error"),
        # a build description or a text of a tool's own language that does not hold together
        (
            'CMake Error at a/CMakeLists.txt:3 (add_library):\n  add_library cannot create target "core" because\n'
            "  another target with the same name already exists.",
            "compile_error",
        ),
        ("lua: main.lua:8: <goto done> at line 4 jumps into the scope of local 'n'", "compile_error"),
        ('list element in quotes followed by "x" instead of space', "compile_error"),
        (
            'Traceback (most recent call last):\n  File "a.py", line 3, in <module>\n'
            "configparser.DuplicateOptionError: While reading from 'a.ini' [line  4]: option 'x' in section 'y' "
            "already exists",
            "compile_error",
        ),
        # an import the module rules forbid
        ("main.go:4:2: use of internal package github.com/o/r/internal/x not allowed", "import_error"),
        # a runtime's limit on one value's size
        ("RangeError: Invalid string length", "out_of_memory"),
        ("Error: Cannot create a string longer than 0x1fffffe8 characters", "out_of_memory"),
        # the network: a transfer the server closed early; a service asking for fewer requests
        ("curl: (18) transfer closed with 1024 bytes remaining to read", "network"),
        (
            "<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>",
            "rate_limit",
        ),
        # a submodule .gitmodules does not name
        ("fatal: No url found for submodule path 'vendor/x' in .gitmodules", "not_found"),
    ],
)
def test_heldout26_and_heldout27_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ("AssertionError: expected 3 but got 4", "assertion"),
        ('expected integer but got "x"', "type_error"),
        ("curl: (56) Recv failure: Connection reset by peer", "network"),
        ("gzip: stdin: not in gzip format", "compile_error"),
        ("urllib.error.HTTPError: HTTP Error 503: Service Unavailable", "network"),
        ("fatal: repository 'https://x/y.git/' not found", "not_found"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        ("the constraint checker passed; no violations", "assertion"),
        ("another job with the same name is queued", "compile_error"),
        ("decompression took 3.2 s", "compile_error"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


def test_the_body_a_program_printed_before_its_http_error_says_why():
    tb = (
        'Traceback (most recent call last):\n  File "up.py", line 9, in <module>\n    urlopen(req)\n'
        "urllib.error.HTTPError: HTTP Error 503: Service Unavailable\n"
    )
    slow = (
        "upload failed: 503\n<Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>\n"
    )
    assert category(slow + tb) == "rate_limit"
    body = '{"error": {"message": "This model\'s maximum context length is 8192 tokens"}}\n'
    assert category(body + tb.replace("503: Service Unavailable", "400: Bad Request")) == "context_overflow"
    assert category("uploading part 3 of 9\n" + tb) == "network"  # a body that says nothing more: the status
    # a status that already names its reason keeps it (429 is a rate limit whatever else the body says)
    assert category(body + tb.replace("503: Service Unavailable", "429: Too Many Requests")) == "rate_limit"


def test_the_preamble_is_the_lines_right_above_the_traceback_in_order():
    log = "step\nfirst said\nsecond said\nTraceback (most recent call last):\n  File \"a.py\", line 1, in <module>\nKeyError: 'x'\n"
    assert extract(log).preamble == "step\nfirst said\nsecond said"


def test_a_deprecation_notice_with_a_failure_word_is_not_the_failure():
    line = clean_lines("DeprecationNotice: the 'missing' option is deprecated")[0]
    _classify(line)
    assert line.cls == 0


def test_a_checker_s_clean_verdicts_are_not_the_failure():
    log = "".join(f"No syntax errors detected in src/F{i}.php\n" for i in range(20))
    log += "PHP Parse error:  syntax error, unexpected '}' in src/Bad.php on line 3\nErrors parsing src/Bad.php\n"
    log += "".join(f"No syntax errors detected in src/G{i}.php\n" for i in range(5))
    ex = extract(log)
    assert ex.lines is not None and ex.lines[0] == 21


@settings(max_examples=60, deadline=None)
@given(
    kind=st.sampled_from(["UNIQUE", "NOT NULL", "CHECK", "FOREIGN KEY", "PRIMARY KEY"]),
    table=st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True),
    col=st.from_regex(r"[a-z][a-z_]{0,12}", fullmatch=True),
)
def test_a_failed_declared_constraint_is_an_assertion_whatever_its_table(kind, table, col):
    assert category(f"Runtime error near line 5: {kind} constraint failed: {table}.{col} (19)") == "assertion"
