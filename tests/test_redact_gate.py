"""The redaction gate (redact._spans): a text in which no rule's literal occurs skips the rules, and
the gated path finds exactly what every rule run on the text finds (redact._spans_all), for a secret
of every kind injected anywhere into any text."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

import secrets_corpus as corpus
from harness_memory import redact as r
from test_redact_patterns import CONTEXT, FORMATS

# every provider format and every context rule by its sample, and the corpus's secrets in their contexts
SECRETS = (
    [s for _, s in FORMATS]
    + [t for _, t, _ in CONTEXT]
    + [frag for _, frag, _ in corpus.SECRETS]
    + ["http --user bob:hunter22 api.example.com", "mysqldump -pS3cretPw shop", "BEARER abc123def456ghi789"]
)
ORDINARY = corpus.NEUTRAL + corpus.INNOCENT + ["Task T-7: fix the parser in billing.", "python", "ci", "ÄÖü ß İ K"]
ALPHABET = st.characters(codec="utf-8", exclude_categories=("Cs",))


def _redacted_the_slow_way(text: str) -> str:
    parts, at = [], 0
    for s, e, k in r._spans_all(text):
        parts += [text[at:s], f"[REDACTED:{k}]"]
        at = e
    return "".join(parts) + text[at:]


@hsettings(max_examples=400, deadline=None, derandomize=True)
@given(
    st.sampled_from(SECRETS),
    st.sampled_from(ORDINARY) | st.text(ALPHABET, max_size=30),
    st.sampled_from(ORDINARY) | st.text(ALPHABET, max_size=30),
    st.sampled_from(["", " ", "\n", "\\n", "=", ": ", '"', "(", "."]),
    st.booleans(),
)
def test_a_text_with_an_injected_secret_is_redacted_by_the_gate_exactly_as_by_every_rule(
    secret, before, after, sep, upper
):
    text = before + sep + (secret.upper() if upper else secret) + sep + after
    assert r._spans(text) == r._spans_all(text)
    assert r.redact(text)[0] == _redacted_the_slow_way(text)


@hsettings(max_examples=300, deadline=None, derandomize=True)
@given(st.lists(st.sampled_from(ORDINARY + SECRETS) | st.text(ALPHABET, max_size=20), max_size=6).map(" ".join))
def test_any_text_gets_the_same_spans_through_the_gate(text):
    assert r._spans(text) == r._spans_all(text)


def test_each_sample_secret_opens_the_gate_and_is_found():
    for text in SECRETS:
        assert r._spans(text), text
        assert r._spans(text) == r._spans_all(text)


def test_text_without_any_rules_literal_is_passed_without_running_a_rule(monkeypatch):
    def boom(text: str, low: str) -> list:
        raise AssertionError("a rule ran")

    monkeypatch.setattr(r, "_FORMAT_RULES", [boom])
    monkeypatch.setattr(r, "_CONTEXT_RULES", [boom])
    for text in ["python", "docker", "Task T-12: refactor the cache in billing - retry did not help.", "ÄÖü"]:
        assert r._spans(text) == []
    for text in ["pass", "PASSWORD", "sk-", "curl", "a.bcdefg.h"]:  # one literal is enough to run the rules
        try:
            r._spans(text)
        except AssertionError:
            continue
        raise AssertionError(f"{text!r} ran no rule")


def test_the_gates_literals_cover_every_hint_of_every_rule():
    for _, hints, _ in r.REDACTION_PATTERNS:
        assert hints and all(r._FORMAT_GATE.search(h) for h in hints)
    for h in (*r._PAIR_KEYWORDS, *r._SCHEME_HINTS, r._COOKIE_HINT, r._URL_HINT):
        assert r._CONTEXT_GATE.search(h), h
    for _, hints, _ in r._FLAG_RULES:
        assert all(r._CONTEXT_GATE.search(h) for h in hints)


def test_the_literal_trie_matches_where_a_literal_occurs_and_nowhere_else():
    import re

    rx = re.compile(r._literal_trie(["bearer", "basic", "bot ", "pass", "passwd", "a.b"]))
    assert rx.pattern == r"(?:a\.b|b(?:asic|earer|ot\ )|pass)"
    for text, want in [
        ("x basic y", "basic"),
        ("mypasswd", "pass"),
        ("robot x", "bot "),
        ("a.b", "a.b"),
        ("axb", None),
        ("bas", None),
        ("", None),
    ]:
        m = rx.search(text)
        assert (m.group() if m else None) == want, text
