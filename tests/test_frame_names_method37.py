"""Signing method 37: the function a stack frame names is where a failure passed, not what it is
(docs/signatures.md, "Method 37"). Its words are not read for a category in any runtime's frame form; the same
words outside a frame, and the frame's own exception message, are read as before."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory.error_signatures import SIGNATURE_METHOD, _by_text, categorize
from harness_memory.failure_excerpt import extract

# function names that are category words (each one read for its category outside a frame)
NAMES = ["failed", "timeout", "retry_on_timeout", "test_failed_login", "permission_denied", "rate_limited", "oom"]


def frames(name: str) -> list[str]:
    return [
        f'  File "/srv/app/worker.py", line 41, in {name}',
        f"worker.py, line 41, in {name}",
        f"tests/test_worker.py:41: in {name}",
        f"from /app/lib/worker.rb:41:in `{name}'",
        f"/app/lib/worker.rb:41:in '{name}'",
        f"    at {name} (/app/src/worker.js:41:7)",
        f"    at async {name} (/app/src/worker.js:41:7)",
        f"\tat com.acme.Worker.{name}(Worker.java:41)",
        f"   3: worker::{name}\n             at ./src/worker.rs:41:7",
    ]


def test_the_method_is_37_or_later():
    assert SIGNATURE_METHOD >= 37


@pytest.mark.parametrize("name", NAMES)
def test_a_frames_function_names_no_category(name):
    for frame in frames(name):
        assert _by_text(frame) is None, frame


@pytest.mark.parametrize(
    ("text", "cat"),
    [
        ("failed", "test_failure"),
        ("operation timeout", "timeout"),
        ("permission denied", "permission"),
        ("FAILED tests/x.py::test_timeout - AssertionError", "assertion"),  # a summary's test name: no frame
        ("3 tests failed", "test_failure"),
    ],
)
def test_the_same_words_outside_a_frame_are_read_as_before(text, cat):
    assert _by_text(text) == cat


@pytest.mark.parametrize(
    ("name", "message", "cat"),
    [
        ("handle_timeout", "KeyError: 'x'", "not_found"),
        ("test_failed_login", "ConnectionRefusedError: [Errno 111] Connection refused", "network"),
        ("check_permission_denied", "ZeroDivisionError: division by zero", "type_error"),
        ("retry_on_failure", "TimeoutError: timed out after 30 s", "timeout"),
    ],
)
def test_a_traceback_is_read_by_its_message_not_by_its_frames_names(name, message, cat):
    text = (
        f'Traceback (most recent call last):\n  File "/srv/app/worker.py", line 41, in {name}\n    run()\n{message}\n'
    )
    assert categorize(extract(text)) == cat


def test_a_ruby_frame_line_keeps_its_message():
    text = "worker.rb:12:in `rate_limited': undefined method `foo' for nil (NoMethodError)"
    assert _by_text(text) == "type_error"  # the message after the frame is read; the function's name is not


_IDENT = st.from_regex(r"[a-z][a-z0-9_]{0,30}", fullmatch=True)


@given(name=_IDENT, line=st.integers(1, 99999))
@settings(max_examples=150, deadline=None)
def test_no_function_name_gives_a_frame_a_category(name, line):
    for frame in frames(name):
        frame = frame.replace(":41", f":{line}").replace("line 41", f"line {line}")
        assert _by_text(frame) is None, frame
