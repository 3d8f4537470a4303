"""Signing speed: ``_by_words`` (the category words of ``_by_text``; since signing method 26 the failure lexicon
may outrank them there) finds the categories with a key in a text by one scan for the longest key at every
position where one starts (``_ANY_KEY`` searched again from one past each match), and the categories of that key's
prefixes (``_CATEGORIES_OF``), instead of one search per category. The answers are the plain patterns', also where
keys overlap, nest or share a beginning (``lock`` in ``deadlock``, ``lock`` and ``lock file``)."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

import harness_memory.error_signatures as es

_KEYS = sorted({k for keys in es._TEXT_KEYS.values() for k in keys})


def _reference(text: str) -> str | None:
    """``_by_words`` with the plain patterns: per category, a search of its keys and of its pattern."""
    low = es._lower(text[:8000])
    if es._ANY_KEY.search(low) is None:
        return None
    if "=" in low and es._SETTING_KEY.search(low) and es._SETTING.search(low):
        low = es._SETTING.sub(es._unset, low)  # settings with an environment word blanked first (method 26)
    if "error near line" in low:
        low = es._PHASE_LABEL.sub("", low)
    if "." in low:
        low = es._PATH_WORDS.sub("_p_", low)
    cat = next((cat for cat, rx in es._TEXT_LOWER if es._TEXT_KEYS_RX[cat].search(low) and rx.search(low)), None)
    if cat in es._QUOTABLE and es._TEST_COMPARISON.search(low):
        return "assertion"  # a test's comparison quoting the words (method 36)
    return cat


def test_a_keys_categories_are_those_of_its_prefixes():
    for k in _KEYS:
        want = {cat for cat, keys in es._TEXT_KEYS.items() if any(k.startswith(x) for x in keys)}
        assert es._CATEGORIES_OF[k] == want, k
        assert any(k in keys for keys in es._TEXT_KEYS.values())


def test_the_scan_takes_the_longest_key_where_several_start():
    for k in _KEYS:
        m = es._ANY_KEY.search(k)
        assert m is not None and m.start() == 0 and m.group() == k, k  # a key alone: itself, whole


@hsettings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(_KEYS)
        | st.sampled_from(["block ", "deadlock", "lock file", "/a/b.py", " ", ".", "x", "parse error near line 3: "])
        | st.text(max_size=4),
        max_size=12,
    ).map("".join)
)
def test_the_categories_found_are_the_plain_patterns(text):
    assert es._by_words(text) == _reference(text)


@hsettings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(_KEYS), min_size=1, max_size=6), st.sampled_from(["", " ", "x", "blk_", "\n"]))
def test_keys_run_together_answer_as_the_plain_patterns(keys, sep):
    """Keys written into each other (a key starting inside another, sharing its letters): every one is seen."""
    text = sep.join(keys)
    assert es._by_words(text) == _reference(text)
    assert es._by_words(text.upper()) == _reference(text.upper())


_MASK_PIECES = st.sampled_from(
    [
        "/",
        "\\",
        ".",
        ":",
        "-",
        " ",
        "a",
        "Z",
        "7",
        "µs",
        "ms",
        "KiB",
        "%",
        "B/s",
        "10.251.73.220",
        ":50010",
        "/10.250.19.102:54106",
        "src/app/x.py",
        "C:\\x\\y.txt",
        "host.example.com",
        "blk_-1608999687919862906",
        "1.5 s",
        "_",
        "é",
        "٣",  # a digit that is not ASCII (\d matches it)
    ]
)


@hsettings(max_examples=1000, deadline=None)
@given(st.lists(_MASK_PIECES | st.text(max_size=3), max_size=14).map("".join))
def test_a_mask_whose_guard_fails_has_no_match(text):
    """Each mask's guard (a count, substrings or a short pattern) holds wherever its mask matches: a guard that fails
    skips a mask that would have changed nothing."""
    for pattern, needs in es._MASK_GUARDS:
        if needs is None:
            continue
        if needs is es._DIGITS:
            holds = bool(es._HAS_DIGIT(text))
        elif callable(needs):
            holds = bool(needs(text))
        else:
            holds = any(k in text for k in needs)
        if not holds:
            assert pattern.search(text) is None, (pattern.pattern, text)


@hsettings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [
                "exit code ",
                "exited with status ",
                "returned exit code ",
                "Error ",
                "exit",
                "Err",
                "or ",
                "137",
                "-1",
                " ",
            ]
        )
        | st.text(max_size=3),
        max_size=10,
    ).map("".join)
)
def test_the_exit_status_is_the_plain_search(text):
    got, want = es._exit_status(text), es._EXIT.search(text)
    assert (got and (got.span(), got.group(1))) == (want and (want.span(), want.group(1)))
