"""Signing method 30: what a runtime prints when it finds its memory corrupted or misused (glibc's allocator and
stack protector, Valgrind Memcheck's records) is the statement of a failed run, though it has no failure word; a
signal or make line under it points back at it (docs/signatures.md, "Method 30")."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore
from harness_memory.failure_lexicon_tables import RUNTIME_REPORTS


def natural(text: str) -> str:
    """A report as the runtime prints it: Valgrind capitalises its headings, glibc does not."""
    if text.startswith(("free(", "malloc", "realloc", "munmap", "corrupted", "double free", "***")):
        return text
    return text[:1].upper() + text[1:]


CLOSERS = [
    "Aborted",
    "Aborted (core dumped)",
    "Segmentation fault (core dumped)",
    "bash: line 1:  4242 Aborted                 (core dumped) ./build/ring_test",
    "make: *** [Makefile:3: test] Aborted",
    "make: *** [Makefile:2: check] Error 1",
    "make: *** [Makefile:7: check] Segmentation fault (core dumped)",
]
BEFORE = ["cc -g -O0 -o build/ring_test ring.c", "./build/ring_test", "ring: 3 slots", "starting ring test"]


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    with MemoryStore(tmp_path_factory.mktemp("rt") / "m.db") as s:
        yield s


@settings(max_examples=150, deadline=None)
@given(
    report=st.sampled_from(sorted(RUNTIME_REPORTS)),
    closer=st.sampled_from(CLOSERS),
    before=st.lists(st.sampled_from(BEFORE), max_size=4),
    valgrind=st.booleans(),
    tail=st.sampled_from(["", " in tcache 2", " (fasttop)", ": terminated", " 0x4de8c80"]),
    after=st.sampled_from([[], ["ring ok 1"], ["   at 0x109234: main (ring.c:9)"]]),
)
def test_a_runtime_report_under_a_closing_line_is_the_statement_and_a_failed_run(
    store, report, closer, before, valgrind, tail, after
):
    prefix = "==4242== " if valgrind else ""
    line = prefix + natural(report) + tail
    lines = [*before, line, *after, closer]
    signed = store.error_signature("\n".join(lines))
    at = len(before) + 1
    assert signed.excerpt_lines[0] == at, (lines, signed.excerpt_lines, signed.excerpt)
    assert signed.category == "test_failure"


@pytest.mark.parametrize(
    ("log", "first"),
    [
        # glibc's allocator, the shell's signal report under it (heldout15's shape, other words)
        ("./cache_test\nevicting 3 entries\nfree(): invalid pointer\nAborted (core dumped)\n", 3),
        ("./t\n*** buffer overflow detected ***: terminated\nmake: *** [Makefile:4: run] Aborted\n", 2),
        # Valgrind: a record with its stack under it, the program's own last line, make's status
        (
            "==77== Conditional jump or move depends on uninitialised value(s)\n"
            "==77==    at 0x1091A3: parse (parse.c:12)\n==77==    by 0x109201: main (main.c:4)\n"
            "parsed 4 fields\nmake: *** [Makefile:2: check] Error 1\n",
            1,
        ),
    ],
)
def test_examples_of_other_runtime_reports(store, log, first):
    signed = store.error_signature(log)
    assert signed.excerpt_lines[0] == first
    assert signed.category == "test_failure"


def test_a_report_text_inside_a_word_is_still_a_report_but_a_plain_line_is_not(store):
    # the death report with nothing said before it stays the statement (as before method 30)
    signed = store.error_signature("./ring_test\nring ok 1\nAborted (core dumped)\n")
    assert signed.excerpt_lines == (3, 3)


@settings(max_examples=100, deadline=None)
@given(
    closer=st.sampled_from(
        [
            'ERROR: failed to solve: process "/bin/sh -c make test" did not complete successfully: exit code: 2',
            "Error: solve side effects: executor failed running [/bin/sh -c make test]: exit code: 2",
            "ERROR: Command exited with non-zero code: RUN make test",
            "step failed: exit status: 1",
        ]
    ),
    statement=st.sampled_from(
        [
            ("src/ring.c:14:5: error: 'slots' undeclared (first use in this function)", "compile_error"),
            ("FAILED tests/test_ring.py::test_wrap - assert 3 == 4", None),
            ("ModuleNotFoundError: No module named 'ringbuf'", "import_error"),
        ]
    ),
    between=st.lists(st.sampled_from(["", "#12 DONE 0.4s", "make: Leaving directory '/src'"]), max_size=2),
)
def test_a_status_line_with_its_exit_code_after_a_colon_is_a_trailer(store, closer, statement, between):
    # BuildKit's and Earthly's closing lines give the code after a colon (``exit code: 2``), a CLI may say only
    # ``exited with non-zero code``: the statement above is signed, not the status (method 31)
    text, cat = statement
    lines = ["#11 [build 4/4] RUN make test", text, *between, closer]
    signed = store.error_signature("\n".join(lines))
    assert signed.excerpt_lines[0] == 2, (lines, signed.excerpt_lines)
    if cat is not None:
        assert signed.category == cat


@settings(max_examples=200, deadline=None)
@given(
    target=st.from_regex(r"[A-Za-z][\w.-]{0,20}", fullmatch=True),
    nested=st.booleans(),
    line=st.sampled_from(
        [
            "src/ring.c:14:5: error: 'slots' undeclared",
            "ERROR: Command exited with non-zero code: RUN make test",
            "    throw er; // Unhandled 'error' event",
            "",
        ]
    ),
)
def test_an_earthly_target_column_is_cleaned_like_other_runners_columns(target, nested, line):
    from harness_memory.failure_excerpt import clean_lines

    prefix = f"+{target} | " + (f"+{target} | " if nested else "")
    assert clean_lines(prefix + line)[0].text == clean_lines(line)[0].text


def test_a_shell_trace_keeps_its_plus():
    from harness_memory.failure_excerpt import clean_lines

    assert clean_lines("+ make test")[0].text == "+ make test"
    assert clean_lines("++ echo | tee x")[0].text == "++ echo | tee x"
