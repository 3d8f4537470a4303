"""The clause model's operations, each read from the one word that admits it (mutation testing of method 27's new
code, 2026-11-27: benchmarks/mutation/failure_lexicon.json).

``failed_operation`` first asks ``may_state_operation`` whether the text holds a word one of the operations needs,
then tries the operations in order. A failed operation can be stated with only one of those words (``dial tcp
10.0.0.7:5432``, ``Is the docker daemon running?``, ``Cannot read properties of null``): each line below holds
exactly one of them, so a word missing from the cheap test (or an operation's shape lost) leaves that operation
unread and the line's category to the words alone. Lines in the words of Go's net package, Docker, V8, Lua, Poetry,
numpy and TensorFlow; none is from the CI corpus the model was measured on.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import error_signatures as es, failure_lexicon as lex

# (category, a failure line stating the operation with one admitting word only)
ONE_WORD_OPERATIONS = [
    ("network", "dial tcp 10.0.0.7:5432"),  # Go's net package: the operation before its reason
    ("network", "Is the docker daemon running?"),  # Docker's hint when its socket does not answer
    ("type_error", "TypeError: Cannot read properties of null (reading 'id')"),  # V8
    ("type_error", "lua: main.lua:3: attempt to call method 'draw' on a nil value"),
    ("type_error", "cannot access attribute 'items' of None"),
    ("type_error", "ValueError: operands could not be broadcast together"),  # numpy, without its shapes
    ("type_error", "InvalidArgumentError: Incompatible shapes: [2,3] vs. [3,2]"),  # TensorFlow
    ("type_error", "RuntimeError: shape mismatch: value tensor cannot be assigned"),  # PyTorch
    ("import_error", "SolverProblemError"),  # Poetry's resolver, its name alone on a line
]


@pytest.mark.parametrize(("want", "line"), ONE_WORD_OPERATIONS)
def test_an_operation_stated_with_one_admitting_word_is_read(want, line):
    low = line.lower()
    assert lex.may_state_operation(low)
    assert lex.failed_operation(low) == want


@pytest.mark.parametrize(
    "line",
    [
        "value is null",  # the words of an operation's object, no operation
        "the daemon is running",
        "dial-up modem found",
        "broadcast sent to 3 peers",
        "shape (3, 4)",
        "solver finished",
    ],
)
def test_an_admitting_word_without_its_operation_names_nothing(line):
    assert lex.failed_operation(line.lower()) is None


# the operation's category decides when the reason the line ends with is an absence (a socket that is not there is
# a server that does not run); through the public reading of a failure line
@pytest.mark.parametrize(
    ("line", "want"),
    [
        ("dial unix /run/app/api.sock: no such file or directory", "network"),
        ("Error: Is the docker daemon running? (No such file or directory)", "network"),
    ],
)
def test_an_absence_after_a_one_word_operation_takes_the_operations_category(line, want):
    assert es._by_text(line) == want


_NOISE = st.text(alphabet="abcdefghijklmnopqrstuvwxyz ,;", max_size=40)


@settings(max_examples=200, deadline=None)
@given(op=st.sampled_from(ONE_WORD_OPERATIONS), before=_NOISE)
def test_text_before_an_operation_does_not_hide_it(op, before):
    # (lower-case letters and spaces: they may form an admitting word, never remove one)
    want, line = op
    low = f"{before} {line}".lower()
    got = lex.failed_operation(low)
    assert got is not None
    # an earlier operation in the noise may be read first (the order of _OPERATIONS), never none
    assert got == want or lex.failed_operation(before.lower()) is not None
