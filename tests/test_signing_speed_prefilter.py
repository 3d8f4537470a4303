"""The signing fast paths give the answers of the plain regexes they stand for (harness_memory.regex_prefilter).

Signing tests a message against long alternations (the category words, the excerpt's line classes, the file-name
placeholder); the fast paths search each alternative on its own, only where the literals it needs are in the text,
or a trie of the same words, or a lower-case twin of a ``(?i)`` pattern. Each property compares the fast path with
the regex itself on texts built from the regex's own literals (so that matches happen) and arbitrary characters.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from harness_memory import category_model, error_signatures as es, failure_excerpt as fe
from harness_memory.regex_prefilter import Prefiltered, literal_set_pattern, lower_case_twin, required

# every regex signing runs through a Prefiltered, with the text it is given (lower-cased for the category words)
PREFILTERED = {
    **{f"category {cat}": (es._TEXT_FOUND[cat], True) for cat in es._TEXT_FOUND},
    "lint named": (es._LINT_NAMED_FOUND, False),
    "uncaught": (es._UNCAUGHT_GATED, False),
    "path words": (es._PATH_WORDS_SPLIT, True),
    "compiler diagnostic (C4)": (fe._C4_FOUND, False),
}


def _fragments(p: Prefiltered) -> list[str]:
    """The literals the alternatives need, and a few characters regexes look at around them."""
    out = {lit for _, need in p.parts for either in need for lit in either}
    return sorted(out) + ["\n", " ", ":", "1", "12:", ".py", "/", "(", ")", "[", "]", "Error", "Exception", "x"]


def _texts(p: Prefiltered, lower: bool):
    frags = _fragments(p)
    piece = st.sampled_from(frags) | st.text(max_size=6)
    text = st.lists(piece, max_size=12).map("".join)
    return text.map(str.lower) if lower else text


@pytest.mark.parametrize("name", sorted(PREFILTERED))
def test_a_prefiltered_regex_answers_as_the_regex(name):
    p, lower = PREFILTERED[name]

    @hsettings(max_examples=150, deadline=None)
    @given(_texts(p, lower))
    def check(text):
        m = p.rx.search(text)
        assert p.found(text) is (m is not None)
        got = p.search(text)
        assert (got is None) is (m is None)
        if m is not None:
            assert (got.span(), got.groups()) == (m.span(), m.groups())
        assert p.subn("_p_", text) == p.rx.subn("_p_", text)

    check()


@pytest.mark.parametrize("name", sorted(PREFILTERED))
def test_what_an_alternative_needs_is_in_every_text_it_matches(name):
    """``required`` is a necessary condition: a text an alternative matches holds one literal of each group."""
    p, lower = PREFILTERED[name]

    @hsettings(max_examples=100, deadline=None)
    @given(_texts(p, lower))
    def check(text):
        for rx, need in p.parts:
            if rx.search(text):
                assert all(any(lit in text for lit in either) for either in need), (rx.pattern, need)

    check()


@pytest.mark.parametrize(
    "pattern,text",
    [
        (r"timed? ?out", "the job timed out"),
        (r"\b40[13]\b", "HTTP 403 Forbidden"),
        (r"\b(?:nil|null) value", "attempt on a null value"),
        (r"non-?exist(?:ent|ing)\b", "a nonexistent key"),
        (r"could(?:n't| not) find (?:a )?(?:package|module)\b", "couldn't find module"),
        (r"^\S{1,40}:\d{1,7}: .{1,40} \[[A-Za-z]{1,30}\]\s*$", "X.java:4: Unused import - x. [UnusedImports]"),
    ],
)
def test_required_literals_of_shapes_the_category_words_use(pattern, text):
    from re import _parser

    need = required(_parser.parse(pattern))
    assert need, pattern  # each of these shapes yields a filter
    assert re.search(pattern, text)
    assert all(any(lit in text for lit in either) for either in need)
    # and removing every literal of one group makes the text unmatchable
    for either in need:
        stripped = text
        for lit in sorted(either, key=len, reverse=True):
            stripped = stripped.replace(lit, "#")
        if not any(lit in stripped for lit in either):
            assert not re.search(pattern, stripped)


def test_a_prefiltered_regex_keeps_back_references_and_flags_whole():
    for rx in (re.compile(r"(a)b|c\1"), re.compile(r"(?i)abc|def"), re.compile(r"(?P<x>a)|(?P=x)b")):
        p = Prefiltered(rx)
        assert [r for r, _ in p.parts] == [rx]  # one search of the whole pattern
        for text in ("ab", "ABC", "def", "aab", "zzz"):
            assert p.found(text) is (rx.search(text) is not None)


@hsettings(max_examples=200, deadline=None)
@given(
    st.sets(st.text(alphabet="abc .-é", min_size=1, max_size=5), min_size=1, max_size=12),
    st.text(alphabet="abc .-éx", max_size=30),
)
def test_a_trie_of_words_finds_what_their_alternation_finds(words, text):
    flat = re.compile("|".join(map(re.escape, words)))
    trie = re.compile(literal_set_pattern(words))
    assert (trie.search(text) is None) is (flat.search(text) is None)
    assert {w for w in words if trie.fullmatch(w)} == set(words)


@hsettings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["ERROR", "Timed Out", "can't", "Couldn't", "KILLED", "ok", " ", "x", "1"])
        | st.text(max_size=5)
    ).map("".join)
)
def test_the_failure_word_test_answers_as_the_models(text):
    assert category_model.has_failure_word(text) is (category_model.FAILURE_WORDS.search(text) is not None)


def test_a_lower_case_twin_only_for_patterns_it_can_read():
    assert lower_case_twin(re.compile(r"(?i)error|fail")) is not None
    for pat in (r"error", r"(?i)[A-Z]x", r"(?i)\x41", r"(?i)a(?:b)", r"(?i)\Berr"):
        assert lower_case_twin(re.compile(pat)) is None, pat


@hsettings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "Permission denied",
                "block ",
                "blk_429",
                " file ",
                "timed out",
                "src/x.py",
                "/a/b.c",
                "lock file is out of date",
            ]
        )
        | st.text(max_size=8)
    ).map("".join)
)
def test_the_category_words_answer_as_the_plain_patterns(text):
    """``_by_words`` (``_by_text``'s words) against the plain regexes over the same text (lower-cased, paths replaced)."""
    low = es._lower(text[:8000])
    if es._ANY_KEY.search(low) is None:
        want = None
    else:
        if "=" in low and es._SETTING_KEY.search(low) and es._SETTING.search(low):
            low = es._SETTING.sub(es._unset, low)  # settings with an environment word blanked first (method 26)
        if "." in low:
            low = es._PATH_WORDS.sub("_p_", low)
        want = next((cat for cat, rx in es._TEXT_LOWER if es._TEXT_KEYS_RX[cat].search(low) and rx.search(low)), None)
        if es._ANY_KEY.search(low) is None:
            want = None
    assert es._by_words(text) == want


@hsettings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "123e4567-e89b-12d3-a456-426614174000",
                "2026-11-27 03:25:06",
                "blk_-1608999687919862906",
                "10.251.73.220:50010",
                "-",
                " ",
                "1.5s",
                "(x)",
                "/a/b.py:12",
                "host.example.com",
            ]
        )
        | st.text(max_size=6)
    ).map("".join)
)
def test_the_mask_guards_never_change_the_masking(text):
    """Each guard is a condition every match of its mask meets: masking with the guards gives what masking with
    every mask tried gives."""
    guarded = es.mask_params(text)
    saved = list(es._MASK_GUARDS)
    try:
        es._MASK_GUARDS[:] = [(p, None) for p, _ in saved]
        assert es.mask_params(text) == guarded
    finally:
        es._MASK_GUARDS[:] = saved
