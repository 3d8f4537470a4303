"""An exception group's own line, drawn in the box Python prints around a group, is a failure statement
wherever the box appears: in Python's own printout (under ``+ Exception Group Traceback``) and in pytest's
report of a failing test, which draws the box without that header. Its members are its causes (the category)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import MemoryStore

MEMBER = """  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "tests/test_sync.py", line 4, in pull
    |     await asyncio.open_connection("127.0.0.1", port)
    | {exc}
    +------------------------------------
"""


def pytest_report(head: str, exc: str) -> str:
    return (
        "=================================== FAILURES ===================================\n"
        "__________________________________ test_sync ___________________________________\n"
        f"| {head}\n" + MEMBER.format(exc=exc) + "=========================== short test summary info "
        "============================\nFAILED tests/test_sync.py::test_sync - | ExceptionGroup: unhandled errors\n"
    )


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "groups.db") as s:
        yield s


@pytest.mark.parametrize(
    ("exc", "category"),
    [
        ("ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 6401)", "network"),
        ("PermissionError: [Errno 13] Permission denied: '/var/run/app.sock'", "permission"),
        ("TimeoutError: the read timed out", "timeout"),
    ],
)
def test_pytest_s_box_of_a_group_is_signed_by_the_group_line_and_its_members(store, exc, category):
    sig = store.error_signature(pytest_report("ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)", exc))
    assert "ExceptionGroup: unhandled errors in a TaskGroup" in sig.message
    assert sig.category == category
    assert sig.excerpt_lines[0] == 3  # the group's line, not the test's section header above it


def test_python_s_own_printout_is_read_as_before(store):
    text = (
        "  + Exception Group Traceback (most recent call last):\n"
        '  |   File "/app/sync.py", line 9, in <module>\n'
        "  |     asyncio.run(main())\n"
        "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)\n"
        + MEMBER.format(exc="ConnectionResetError: [Errno 104] Connection reset by peer")
    )
    sig = store.error_signature(text)
    assert "ExceptionGroup" in sig.message and sig.category == "network"


def test_a_member_line_is_not_taken_for_the_group(store):
    # a box line that is a member's exception, or a bar that is not a box, names no group
    sig = store.error_signature("| ValueError: bad value in row 3\n")
    assert "ExceptionGroup" not in sig.message
    sig = store.error_signature("| ExceptionGroupish: not a group\n")
    assert "ExceptionGroupish" not in (sig.exception or "")


@settings(max_examples=25, deadline=None)
@given(
    name=st.sampled_from(["ExceptionGroup", "BaseExceptionGroup", "exceptiongroup.ExceptionGroup"]),
    msg=st.text(alphabet="abcdefghij klmnop()0123456789", min_size=1, max_size=40).map(str.strip).filter(bool),
)
def test_any_group_s_line_in_pytest_s_box_is_the_statement(tmp_path_factory, name, msg):
    with MemoryStore(tmp_path_factory.mktemp("g") / "g.db") as s:
        sig = s.error_signature(pytest_report(f"{name}: {msg}", "OSError: [Errno 28] No space left on device"))
    assert f"{name}: {msg}" in sig.message
