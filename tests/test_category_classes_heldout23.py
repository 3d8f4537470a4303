"""Classes met in the heldout23 split of the CI-log corpus (its first run: tests/fixtures/ci_logs/README.md, "The
`heldout23` split"), each written as a general rule (error_signatures' words, failure_excerpt's statements) and tested
on inputs of other tools and words than the split's logs, with neighbours that keep their category; the split's logs
are in tests/test_ci_corpus.py."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import categorize
from harness_memory.failure_excerpt import extract


def category(text: str) -> str:
    return categorize(extract(text))


def go_test(report: str) -> str:
    """A failing Go test's output around one line of its report (``t.Errorf``'s, indented under ``=== RUN``)."""
    return f"=== RUN   TestX\n    {report}\n--- FAIL: TestX (0.00s)\nFAIL\nFAIL\texample.com/x\t0.01s\n"


@pytest.mark.parametrize(
    "text, expected",
    [
        # a limit of time named as the reason a failed operation gives (the clause model: the reason decides)
        (
            'psql: error: connection to server at "db", port 5432 failed: timeout expired',
            "timeout",
        ),
        ("ERROR: could not connect to the broker: timed out waiting for a reply", "timeout"),
        ("error: failed to connect to registry.internal: permission denied for user ci", "permission"),
        ("Error: unable to connect to api: too many requests, retry later", "rate_limit"),
        # a Go test's got-and-want with a semicolon (the standard library's own convention)
        (go_test('parse_test.go:41: Atoi("12x") = 12, <nil>; want error'), "assertion"),
        (go_test('url_test.go:9: Parse("h://") = "h", nil; want "", error'), "assertion"),
        # a size an array cannot have, a resource used after it was closed or disposed
        ('Exception in thread "main" java.lang.NegativeArraySizeException: -3', "type_error"),
        ("Unhandled exception. System.ObjectDisposedException: Cannot access a disposed object.", "type_error"),
        (
            'Exception in thread "main" java.nio.channels.ClosedChannelException\n'
            "\tat sun.nio.ch.FileChannelImpl.ensureOpen(FileChannelImpl.java:160)",
            "type_error",
        ),
        ("ValueError: I/O operation on closed file.", "type_error"),
        # (the words alone, without an exception's name that other keys of the category hold)
        ("I/O operation on closed file", "type_error"),
        ("Cannot access a disposed object.", "type_error"),
        ("app.rb:4:in `read': closed stream (IOError)", "type_error"),
        ("Error [ERR_STREAM_WRITE_AFTER_END]: write after end", "type_error"),
        ("write /tmp/out.json: file already closed", "type_error"),
        # a change that does not apply to the text it changes
        ("Hunk #2 FAILED at 40.\n1 out of 2 hunks FAILED -- saving rejects to file src/x.c.rej", "compile_error"),
        ("Reversed (or previously applied) patch detected!  Assume -R? [n]", "compile_error"),
        ("error: patch failed: README.md:3\nerror: README.md: patch does not apply", "compile_error"),
        ("CONFLICT (content): Merge conflict in go.mod", "compile_error"),
        ("Automatic merge failed; fix conflicts and then commit the result.", "compile_error"),
        # a name that matches no file, read through the tool's own warnings above its error line
        ("\tzip warning: name not matched: dist/app\n\nzip error: Nothing to do! (dist.zip)", "not_found"),
    ],
)
def test_heldout23_classes_in_other_words(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        # neighbours that keep their category
        ('psql: error: connection to server at "db", port 5432 failed: Connection refused', "network"),
        ("could not connect to server: No such file or directory", "network"),
        (go_test("sum_test.go:12: Sum(1, 2) = 4, want 3"), "assertion"),
        ("java.lang.ArrayIndexOutOfBoundsException: Index 5 out of bounds for length 3", "not_found"),
        ("OSError: [Errno 28] No space left on device", "out_of_memory"),
        ("ConnectionResetError: [Errno 104] Connection reset by peer", "network"),
        ("zip error: Nothing to do! (out.zip)", "unknown"),
    ],
)
def test_neighbours_keep_their_category(text, expected):
    assert category(text) == expected


@pytest.mark.parametrize(
    "text, not_this",
    [
        ("failed to connect: the server said the file was closed by its owner", "type_error"),
        ("error: the patch series was applied with 3 hunks and no conflicts at all", "compile_error"),
        ("note: merge conflicts are resolved by the bot", "compile_error"),
        ("want to retry; the connection failed", "assertion"),
    ],
)
def test_words_near_the_new_ones_do_not_take_their_category(text, not_this):
    assert category(text) != not_this


def test_only_the_same_tools_warnings_above_its_error_are_its_causes():
    # another tool's warning is not the cause, nor is one past a blank-free line of other output
    assert extract("tar warning: name not matched: x\n\nzip error: Nothing to do!").causes == []
    assert extract("zip warning: name not matched: x\nadding: y\nzip error: Nothing to do!").causes == []
    ex = extract("zip warning: name not matched: a\nzip warning: name not matched: b\nzip error: Nothing to do!")
    assert ex.causes == ["zip warning: name not matched: a", "zip warning: name not matched: b"]


def test_a_node_error_dumped_with_a_circular_reference_label_is_its_exception():
    log = (
        "node:child_process:966\n    throw err;\n    ^\n\n<ref *1> Error: spawnSync /bin/sh ETIMEDOUT\n"
        "    at Object.spawnSync (node:internal/child_process:1123:20)\n"
        "    at node:internal/main/run_main_module:28:49 {\n  errno: -110,\n  code: 'ETIMEDOUT',\n"
        "  error: [Circular *1],\n  status: null\n}\n\nNode.js v20.20.2\n"
    )
    ex = extract(log)
    assert ex.exception == "Error" and ex.message.startswith("<ref *1> Error: spawnSync")
    assert categorize(ex) == "timeout"


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(min_value=1, max_value=99),
    m=st.integers(min_value=1, max_value=99),
    how=st.sampled_from(["FAILED", "ignored"]),
    path=st.from_regex(r"[a-z]{1,8}(?:/[a-z]{1,8}){0,3}\.[a-z]{1,3}", fullmatch=True),
)
def test_a_patch_whose_hunks_do_not_apply_is_a_compile_error_and_its_statement(n, m, how, path):
    log = (
        f"patching file {path}\n{n} out of {m} hunk{'s' if m > 1 else ''} {how} -- saving rejects to file {path}.rej\n"
    )
    ex = extract(log)
    assert ex.lines == (2, 2) or ex.lines[0] <= 2 <= ex.lines[1]
    assert categorize(ex) == "compile_error"
