"""Raw error text as every verb that takes one accepts it (issue 18): NUL characters that real logs carry
are dropped, text that is only whitespace is refused with InvalidInputError, lone surrogates from a bad
decode are replaced, and the signature is the same as for the clean text; a secret in it is redacted from
what is shown and kept (the excerpt, the message, the basis a memory keeps for re-signing)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

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


def test_what_an_error_was_signed_from_is_kept_with_the_memory_without_its_secrets(store, tmp_path):
    # a traceback whose decisive line carries a URL password: the excerpt (the frames and the line) and the
    # message are both shown and stored, so both are redacted; the memory keeps what was signed (message,
    # frame, exception, category, excerpt) so a later signing method can re-sign it, and an export carries it
    err = (
        'Traceback (most recent call last):\n  File "/srv/deploy.py", line 7, in push\n    client.login(url)\n'
        "ConnectionError: auth failed for https://deploy:hunter2secretpw@registry.example.com/v2/ (401)\n"
    )
    signed = store.error_signature(err)
    assert "client.login(url)" in signed.excerpt and "auth failed" in signed.message
    assert "hunter2secretpw" not in signed.excerpt and "hunter2secretpw" not in signed.message
    m = store.remember("log in with the deploy token from the vault", type="failure", agent_id="a", error=err)
    path = tmp_path / "out.jsonl"
    store.export_jsonl(path)
    (rec,) = [r for r in map(json.loads, path.read_text().splitlines()) if r.get("uid") == m.uid]
    assert rec["error_basis"] == {
        "message": signed.message,
        "frame": signed.frame,
        "exception": "ConnectionError",
        "category": signed.category,
        "excerpt": signed.excerpt,
    }
    assert "hunter2secretpw" not in path.read_text()


def _error_text_before(value: str) -> str:
    # core.error_text as it was written first (strip() and a whole encode on every call): the reference
    if "\x00" in value:
        value = value.replace("\x00", "")
    if not value.strip():
        raise InvalidInputError("error must not be empty")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        value = value.encode("utf-8", "replace").decode("utf-8")
    return value


_WHITE = st.sampled_from([" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c", "\x85", "\xa0", "\u2003", "\u3000", "\x00"])


@settings(max_examples=400, deadline=None)
@given(
    st.one_of(st.text(max_size=40), st.lists(_WHITE, max_size=8).map("".join), st.text(st.characters(), max_size=40))
)
def test_error_text_fast_paths_agree_with_the_plain_checks(text):
    # the empty check without strip()'s copy and the ASCII shortcut before the surrogate check: same answers,
    # same refusals, for whitespace of every kind str.strip() knows, surrogates and plain ASCII
    from harness_memory.core import error_text

    try:
        want = _error_text_before(text)
    except InvalidInputError:
        with pytest.raises(InvalidInputError, match="error must not be empty"):
            error_text(text)
        return
    assert error_text(text) == want
