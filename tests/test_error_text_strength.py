"""Mutation-found gaps of core.error_text (the fast paths of a0c382d): a value that is not a string is refused with
the typed error by every verb that takes an error's text, never a TypeError or AttributeError from inside."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import InvalidInputError, MemoryStore
from harness_memory.core import error_text

ERROR = "ModuleNotFoundError: No module named 'tenacity'"
NOT_TEXT = [b"ModuleNotFoundError: x", ["ModuleNotFoundError: x"], 404, 4.5, {"error": "x"}, ("x",)]


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        yield s


@pytest.mark.parametrize("value", NOT_TEXT, ids=lambda v: type(v).__name__)
def test_an_error_that_is_not_a_string_is_refused_with_the_typed_error_by_every_verb(store, value):
    with pytest.raises(InvalidInputError, match=f"error must be a string, got {type(value).__name__}"):
        store.error_signature(value)
    with pytest.raises(InvalidInputError, match="error must be a string"):
        store.has_seen_error("a", value)
    with pytest.raises(InvalidInputError, match="baseline must be a string"):
        store.error_signature(ERROR, baseline=value)
    assert store.stats()["memories"] == 0


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=20),
        st.integers(),
        st.lists(st.text(max_size=5), max_size=3),
        st.none(),
        st.floats(allow_nan=True),
    )
)
def test_error_text_refuses_any_non_string_with_its_field_name(value):
    with pytest.raises(InvalidInputError, match=r"^result\.error must be a string"):
        error_text(value, "result.error")


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(), min_size=1, max_size=40))
def test_error_text_returns_storable_text_without_nul_or_surrogates(text):
    # any text that is not blank once its NULs are gone comes back encodable, NUL-free, and unchanged if it was clean
    stripped = text.replace("\x00", "")
    if not stripped.strip():
        with pytest.raises(InvalidInputError, match="must not be empty"):
            error_text(text)
        return
    out = error_text(text)
    out.encode("utf-8")
    assert "\x00" not in out and len(out) == len(stripped)
    if not any(0xD800 <= ord(c) <= 0xDFFF for c in stripped):
        assert out == stripped
