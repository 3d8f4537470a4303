"""Short texts' redaction is kept (redact._short): the same answer as the rules run on the text, on
the first call and every later one, for every secret sample and fuzzed text, with the cache
overflowing; a text holding a secret is never kept (the secret would outlive the call as a key); and an empty
mapping or list is redacted to a new empty one."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from harness_memory import redact as r
from test_redact_gate import ALPHABET, ORDINARY, SECRETS


def _reference(text: str) -> tuple[str, list[str]]:
    return r._redact(text) if text else (text, [])


@hsettings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.sampled_from(SECRETS + ORDINARY) | st.text(ALPHABET, max_size=70),
    st.sampled_from(["", " ", "=", ": ", '"', "x"]),
    st.booleans(),
    st.integers(1, 3),
)
def test_a_short_text_is_redacted_as_by_the_rules_on_every_call(text, sep, upper, small):
    text = (text.upper() if upper else text) + sep
    old = r._SHORT_CACHE_MAX
    r._SHORT_CACHE_MAX = small  # the cache fills and is emptied along the way
    r._short.clear()
    try:
        for _ in range(3):
            out, kinds = r.redact(text)
            assert (out, kinds) == _reference(text)
            kinds.append("mutated by a caller")  # never the kept answer
        assert r.redact(text) == _reference(text)
    finally:
        r._SHORT_CACHE_MAX = old
    assert len(r._short) <= small


def test_every_sample_secret_short_or_long_is_found_through_the_cache():
    for text in SECRETS:
        for t in (text, text[: r._SHORT_MAX], text + " " * max(0, r._SHORT_MAX + 1 - len(text))):
            first = r.redact(t)
            assert first == r.redact(t) == _reference(t)
            if any(k for k in _reference(t)[1]):
                assert "[REDACTED:" in first[0]


def test_empty_containers_are_new_empty_ones():
    d: dict = {}
    lst: list = []
    assert r.redact_mapping(d) == {} and r.redact_mapping(d) is not d
    assert r.redact_mapping(lst) == [] and r.redact_mapping(lst) is not lst
    found: list[str] = []
    assert r.redact_mapping({"password": "hunter2", "x": []}, found) == {"password": "[REDACTED:secret_pair]", "x": []}
    assert found == ["secret_pair"]


def test_a_short_text_holding_a_secret_is_never_kept():
    for text in SECRETS:
        t = text[: r._SHORT_MAX]
        out, kinds = r.redact(t)
        if kinds:
            assert t not in r._short  # the secret does not outlive the call as a cache key
            assert r.redact(t) == (out, kinds)
    r.redact("nothing secret here")
    assert "nothing secret here" in r._short


def test_the_cache_keeps_clean_answers_up_to_its_size_then_starts_again():
    old = r._SHORT_CACHE_MAX
    r._SHORT_CACHE_MAX = 3
    r._short.clear()
    try:
        for i in range(3):
            r.redact(f"plain note {i}")
        assert len(r._short) == 3  # each clean answer kept
        r.redact("plain note 0")  # a kept answer: nothing added
        assert len(r._short) == 3
        r.redact("plain note 3")  # full: emptied, then this one kept
        assert list(r._short) == ["plain note 3"]
    finally:
        r._SHORT_CACHE_MAX = old
