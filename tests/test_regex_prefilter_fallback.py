"""The literal prefilters read CPython's private pattern parser (``re._parser``): on this Python it is
understood (else the prefilters would be silently off), and where it is missing or gives other trees the
prefilters fall back to the plain search, with the same answers."""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings, strategies as st

from harness_memory import regex_prefilter
from harness_memory.regex_prefilter import Prefiltered

PATTERNS = [
    r"(?:timed? ?out|refused)\b",
    r"\berror\b|\bfail(?:ed|ure)\b|exit (?:code|status) [1-9]",
    r"(?i)connection (?:reset|refused)|time ?out",
    r"no such (?:file|table)|not found",
]
WORDS = ["error", "failed", "failure", "timed out", "timeout", "refused", "exit code 2", "no such table", "not found"]


def test_this_python_s_parser_is_understood_so_the_prefilters_are_on():
    assert regex_prefilter._parser_understood()
    pf = Prefiltered(re.compile(PATTERNS[1]))
    assert len(pf.parts) == 3 and all(need for _, need in pf.parts)  # split per alternative, each filtered


@pytest.mark.parametrize("broken", ["missing", "other trees"])
def test_a_parser_not_understood_turns_the_prefilters_off_not_wrong(monkeypatch, broken):
    regex_prefilter._parser_understood.cache_clear()
    if broken == "missing":
        monkeypatch.setattr(regex_prefilter, "_parser", None)
    else:  # a parser whose trees required() cannot read as it expects

        class Other:
            @staticmethod
            def parse(pattern, flags):
                return [("literal", "x")]

        monkeypatch.setattr(regex_prefilter, "_parser", Other)
    try:
        assert not regex_prefilter._parser_understood()
        for pat in PATTERNS:
            rx = re.compile(pat)
            pf = Prefiltered(rx)
            assert pf.parts == [(rx, [])] and pf.anchor is None
            for text in ["", "all good", "ERROR: it failed", "Connection timed out", "exit code 3", "x not found"]:
                assert pf.found(text) == bool(rx.search(text))
                m, want = pf.search(text), rx.search(text)
                assert (m and m.span()) == (want and want.span())
                assert pf.subn("<>", text) == rx.subn("<>", text)
    finally:
        regex_prefilter._parser_understood.cache_clear()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(WORDS) | st.text(max_size=6), max_size=6), st.sampled_from(PATTERNS))
def test_on_or_off_the_answers_are_the_plain_search_s(pieces, pat):
    rx, text = re.compile(pat), " ".join(pieces)
    pf = Prefiltered(rx)
    assert pf.found(text) == bool(rx.search(text))
    assert pf.subn("<>", text) == rx.subn("<>", text)


def _required(pattern: str) -> list[tuple[str, ...]]:
    return regex_prefilter.required(regex_prefilter._parser.parse(pattern, 0))


def test_what_a_match_needs_inside_groups():
    # a case-insensitive group's letters are not literals (ERROR matches); a plain or atomic group's are
    assert _required(r"x(?i:error)y") == [("x",), ("y",)]
    assert _required(r"x(?-i:error)y") == [("xerrory",)]
    assert _required(r"(?>abc)d") == [("abc",), ("d",)]
    assert _required(r"(?:abc)+d") == [("abc",), ("d",)]
    assert _required(r"(?:abc)*d") == [("d",)]
    pf = Prefiltered(re.compile(r"x(?i:error)y|z"))
    assert pf.found("xERRORy") and pf.found("xErRoRy") and not pf.found("x error y")


def test_a_class_holding_a_bar_or_a_bracket_is_not_split():
    split = regex_prefilter._top_level_branches
    assert split(r"a[^]|]b|c") == ["a[^]|]b", "c"]
    assert split(r"a[]|]b|c") == ["a[]|]b", "c"]
    assert split(r"a[\]|]b|c") == ["a[\\]|]b", "c"]
    assert split(r"a(?:b|c)|d") == ["a(?:b|c)", "d"]
    assert split(r"[x]|y") == ["[x]", "y"]  # a one-character class: its ``]`` closes it
    assert split(r"a[bc]|d[^e]|f") == ["a[bc]", "d[^e]", "f"]
    for pat in (r"a[^]|]b|c", r"a[]|]b|c"):
        pf, rx = Prefiltered(re.compile(pat)), re.compile(pat)
        for text in ("a|b", "a]b", "c", "ab", "a^b"):
            assert pf.found(text) == bool(rx.search(text)), (pat, text)


@pytest.mark.parametrize("words", [[], [""], ["ok", ""]])
def test_a_literal_set_needs_non_empty_words(words):
    with pytest.raises(ValueError):
        regex_prefilter.literal_set_pattern(words)
