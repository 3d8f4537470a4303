"""Raw error text as every verb that takes one accepts it (issue 18): NUL characters that real logs carry
are dropped, text that is only whitespace is refused with InvalidInputError, lone surrogates from a bad
decode are replaced, and the signature is the same as for the clean text."""

from __future__ import annotations

import pytest

from harness_memory import InvalidInputError, MemoryStore

ERROR = "ModuleNotFoundError: No module named 'tenacity'"


@pytest.fixture
def store(tmp_path):
    with MemoryStore(tmp_path / "m.db") as s:
        yield s


def test_nul_characters_are_dropped_before_signing(store):
    clean = store.error_signature(ERROR)
    dirty = store.error_signature(ERROR.replace("named", "na\x00med") + "\x00")
    assert dirty.id == clean.id and "\x00" not in dirty.excerpt


@pytest.mark.parametrize("text", ["", "   ", "\n\t", "\x00", " \x00 "])
def test_empty_error_text_is_refused_by_every_verb(store, text):
    with pytest.raises(InvalidInputError, match="error must not be empty"):
        store.error_signature(text)
    with pytest.raises(InvalidInputError, match="error must not be empty"):
        store.has_seen_error("a", text)
    with pytest.raises(InvalidInputError, match="baseline must not be empty"):
        store.error_signature(ERROR, baseline=text)
    assert store.stats()["memories"] == 0


def test_lone_surrogates_from_a_bad_decode_are_replaced(store):
    broken = ERROR + " \udcff\udc80"
    signed = store.error_signature(broken)
    signed.excerpt.encode("utf-8")  # storable and printable
    m = store.remember("pin tenacity in requirements", type="failure", agent_id="a", error=broken)
    assert "\udcff" not in (m.error_signature or "")
    assert store.has_seen_error("a", broken)
