"""The line classes of ``failure_excerpt`` sit behind cheap literal filters (``_Keyed``): a line
holding none of a pattern's keys is never searched. The filter must be a necessary condition of the
pattern, or a failure line would silently go unclassified: checked on every line of the CI-log
corpus and on lines generated from the patterns' own words."""

from __future__ import annotations

import functools
import gzip
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

import harness_memory.failure_excerpt as fe

CORPUS = Path(__file__).parent / "fixtures" / "ci_logs"
KEYED = {name: v for name, v in vars(fe).items() if isinstance(v, fe._Keyed)}


@functools.cache
def corpus_lines() -> list[str]:
    out: set[str] = set()
    for path in sorted(CORPUS.rglob("*.log*")):
        raw = path.read_bytes()
        if path.suffix == ".gz":
            raw = gzip.decompress(raw)
        for ln in raw.decode("utf-8", errors="replace").split("\n")[:4000]:
            t = fe._clean(ln)[0].strip()
            if t:
                out.add(t)
                out.add(fe._FLAGS.sub(" ", t))
    return sorted(out)


def holds(keyed: fe._Keyed, text: str) -> bool:
    low = text.lower()
    found = keyed.rx.search(text) is not None or keyed.rx.match(text) is not None
    return not found or any(k in low for k in keyed.keys)


def test_the_classes_that_are_filtered_are_the_expensive_ones():
    assert {"_C1", "_C2", "_C3", "_C5", "_NOT_FAILURE"} <= set(KEYED)


@pytest.mark.parametrize("name", sorted(KEYED))
def test_every_corpus_line_a_pattern_matches_holds_one_of_its_keys(name):
    lines = corpus_lines()
    assert len(lines) > 5000
    keyed = KEYED[name]
    matched = [t for t in lines if keyed.rx.search(t)]
    assert matched, f"{name} matches no corpus line: the check would prove nothing"
    missing = [t for t in matched if not holds(keyed, t)]
    assert missing == []
    # and the filtered pattern finds exactly what the pattern finds
    assert [t for t in lines if keyed.search(t)] == matched


FRAGMENTS = [
    "Error",
    "ERROR",
    "error",
    "FAILED",
    "FAIL",
    "Failed",
    "failure",
    "Ran ",
    "ran",
    "1",
    "42",
    " ",
    "  ",
    ":",
    ": ",
    "(",
    ")",
    "[",
    "]",
    "=",
    "*** ",
    "tests",
    "test",
    " in ",
    "0.1s",
    "exit code",
    "exited with status",
    "E: ",
    "npm ERR!",
    "yarn error",
    "panicked at",
    "panic: ",
    "fatal error: ",
    "Segmentation fault",
    "core dumped",
    "Exception in thread ",
    "Caused by: ",
    "Killed",
    "Aborted",
    "Tests run: 1, Failures: 1, Errors: 0",
    "<<< FAILURE!",
    "--- FAIL: ",
    "not ok 3",
    "✗ ",
    "× ",
    "make: ",
    "make[2]: ",
    "line 7: ",
    "Failure/Error: ",
    "AssertionError",
    "Assertion ",
    "BUILD SUCCESS",
    "Successfully",
    "deprecated",
    "warning:",
    "warn",
    "-Werror",
    "errorprone",
    "# timeout=",
    "timeout=30",
    "no errors",
    "0 failed",
    "could not compile",
    "Could not find",
    "couldn't find",
    "cannot",
    "can't",
    "unable to",
    "not found",
    "No such file or directory",
    "Permission denied",
    "Connection refused",
    "timed out",
    "Timeout exceeded",
    "ModuleNotFoundError",
    "ImportError",
    "Missing script",
    "Invalid read",
    "uninitialised value",
    "lost in loss record",
    "unexpected",
    "undefined",
    "missing",
    "invalid",
    "===",
    "Job failed",
    "BUILD FAILED",
    "FAILURE: Build failed with an exception",
    "errors generated.",
    "test result: FAILED",
    "Execution failed for task",
    "> Task :app:test FAILED",
    "ERROR SUMMARY: 2 errors from",
]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=8).map("".join))
def test_generated_lines_a_pattern_matches_hold_one_of_its_keys(text):
    for name, keyed in KEYED.items():
        assert holds(keyed, text), name
        assert (keyed.search(text) is None) == (keyed.rx.search(text) is None), name
