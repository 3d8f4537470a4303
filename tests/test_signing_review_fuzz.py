"""Signing's fast paths against the plain regexes on text that case folding treats unevenly (issue 8 review).

The speed commits (077f369, 31b89b4) search a lower-case twin of ``(?i)`` patterns on ASCII text, prefiltered
alternatives on lower-cased text and tries of literals. Python's ``re`` folds some characters under ``(?i)`` that
``str.lower`` leaves alone or changes in length: ``ſ`` (LONG S) matches ``s``, ``K`` (KELVIN SIGN) matches ``k``,
``ß`` upper-cases to ``SS``, ``ﬁ`` to ``FI``, ``İ`` lower-cases to two characters. These properties build texts from
the patterns' own words with such characters spliced into them, so that a fast path used where it is not exact
would show. (A differential run of the whole signing, 8128106 against 8128106 with 077f369 and 31b89b4 reverted, in
separate processes, found no difference in any field on 89,300 mutated and generated inputs; these properties keep
the reason: where folding differs, the plain pattern is used.)
"""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings as hsettings, strategies as st

from harness_memory import MemoryStore, category_model, error_signatures as es, failure_excerpt as fe
from harness_memory.regex_prefilter import Prefiltered, lower_case_twin

# characters whose case folding in ``re`` differs from ``str.lower``/``str.upper`` (or changes the length)
FOLDY = ["\u017f", "\u212a", "\u0131", "\u0130", "\u00df", "\u1e9e", "\ufb01", "\ufb02", "\u0301", "\u03c2", "\u2126"]
FOLD_FOR = {"s": "\u017f", "k": "\u212a", "i": "\u0131", "fi": "\ufb01", "fl": "\ufb02", "ss": "\u00df"}
WORDS = [
    "error",
    "fail",
    "fatal",
    "killed",
    "missing",
    "timed out",
    "time out",
    "unknown",
    "forbidden",
    "exhausted",
    "invalid",
    "unable",
    "file",
    "lock file",
    "permission denied",
    "too many requests",
    "stack",
    "assert",
    "expected",
    "no such",
    "refused",
    "task",
    "disk",
]
_PIECES = (
    st.sampled_from(WORDS)
    | st.sampled_from(WORDS).map(str.upper)
    | st.sampled_from(WORDS).map(str.title)
    | st.sampled_from(FOLDY)
    | st.sampled_from([" ", "\t", "\r", "\n", ":", ".", "/", "(", ")", "[", "]", "1", "x.py", "_"])
)


def _fold_some(pair: tuple[str, list[bool]]) -> str:
    """Replace some letters that ``re`` folds unevenly by their look-alikes (``missing`` -> ``miſſing``)."""
    text, flips = pair
    out, k = text, 0
    for src, dst in FOLD_FOR.items():
        for case in (src, src.upper()):
            if case in out and k < len(flips) and flips[k]:
                out = out.replace(case, dst, 1)
            k += 1
    return out


TEXTS = st.tuples(st.lists(_PIECES, max_size=10).map("".join), st.lists(st.booleans(), max_size=12)).map(_fold_some)

PREFILTERED = {
    **{f"category {cat}": (p, True) for cat, p in es._TEXT_FOUND.items()},
    "lint named": (es._LINT_NAMED_FOUND, False),
    "uncaught": (es._UNCAUGHT_GATED, False),
    "path words": (es._PATH_WORDS_SPLIT, True),
    "compiler diagnostic (C4)": (fe._C4_FOUND, False),
}


@hsettings(max_examples=400, deadline=None)
@given(TEXTS)
@example("mi\u017f\u017fing")  # (?i) 's' matches LONG S: the twin on lower-cased text would not
@example("\u212aILLED")  # KELVIN SIGN
@example("tıme out")
@example("T\u0130MED OUT")
@example("\ufb01le not found")
@example("STRA\u00dfE FAIL")
def test_the_failure_word_test_answers_as_the_model_pattern_on_folded_text(text):
    assert category_model.has_failure_word(text) is (category_model.FAILURE_WORDS.search(text) is not None)


@pytest.mark.parametrize("name", sorted(PREFILTERED))
def test_a_prefiltered_regex_answers_as_the_regex_on_folded_text(name):
    p, lower = PREFILTERED[name]

    @hsettings(max_examples=120, deadline=None)
    @given(TEXTS)
    def check(text):
        for t in (text.lower(),) if lower else (text, text.lower()):
            m = p.rx.search(t)
            assert p.found(t) is (m is not None)
            got = p.search(t)
            assert (got and (got.span(), got.groups())) == (m and (m.span(), m.groups()))
            assert p.subn("_p_", t) == p.rx.subn("_p_", t)

    check()


@hsettings(max_examples=300, deadline=None)
@given(TEXTS)
def test_the_literal_tries_answer_as_their_alternations_on_folded_text(text):
    low = text.lower()
    flat_any = re.compile("|".join(map(re.escape, sorted({k for ks in es._TEXT_KEYS.values() for k in ks}))))
    assert (es._ANY_KEY.search(low) is None) is (flat_any.search(low) is None)
    for cat, keys in es._TEXT_KEYS.items():
        flat = re.compile("|".join(map(re.escape, keys)))
        assert (es._TEXT_KEYS_RX[cat].search(low) is None) is (flat.search(low) is None), cat
    flat_fe = re.compile("|".join(map(re.escape, fe._ANY_WORDS)))
    for t in (text, low):
        assert (fe._ANY_RX.search(t) is None) is (flat_fe.search(t) is None)
        assert (fe._STRUCTURE_RX.search(t) is not None) is any(w in t for w in fe._STRUCTURE_WORDS)


def test_the_twin_is_not_exact_off_ascii_which_is_why_it_is_only_used_on_ascii():
    """The reason for ``has_failure_word``'s ``isascii`` guard, pinned: off ASCII the twin answers otherwise."""
    twin = lower_case_twin(category_model.FAILURE_WORDS)
    assert twin is not None
    text = "mi\u017f\u017fing"  # LONG S: ``str.lower`` keeps it, ``(?i)s`` matches it
    assert category_model.FAILURE_WORDS.search(text) is not None
    assert twin.search(text.lower()) is None
    assert category_model.has_failure_word(text)


def test_a_prefiltered_pattern_with_a_local_case_insensitive_group_is_not_filtered_on_its_literals():
    """A ``(?i:...)`` group's literals are not required as written (``(?i:err)`` matches ``ERR``)."""
    rx = re.compile(r"x(?i:err)y|z(?i:fail)")
    p = Prefiltered(rx)
    for text in ("xERRy", "xerry", "zFAIL", "z\u017f", "xErRy zfAiL", "none"):
        assert p.found(text) is (rx.search(text) is not None), text
        assert p.subn("_", text) == rx.subn("_", text), text


@hsettings(max_examples=300, deadline=None)
@given(TEXTS)
@example("a \u212aey: permission \u0130s denied in /tmp/x.py")
@example("lock f\u0131le\x00deadline exceeded")
@example("missing assert")  # (found by the full suite: the quoted-expectation rule was not in the reference)
def test_the_category_words_answer_as_the_plain_patterns_on_folded_text(text):
    """``_by_words`` (``_by_text``'s words; keys looked for in windows around the trie's matches, prefiltered patterns) against the plain
    patterns over the whole lower-cased text (folded as ``(?i)`` folds: ``es._lower``)."""
    low = es._lower(text[:8000])
    want = None
    if es._ANY_KEY.search(low) is not None:
        if "=" in low and es._SETTING_KEY.search(low) and es._SETTING.search(low):
            low = es._SETTING.sub(es._unset, low)  # settings with an environment word blanked first (method 26)
        if "." in low:
            low = es._PATH_WORDS.sub("_p_", low)
        want = next((cat for cat, rx in es._TEXT_LOWER if es._TEXT_KEYS_RX[cat].search(low) and rx.search(low)), None)
        if want in es._QUOTABLE and es._TEST_COMPARISON.search(low):
            want = "assertion"  # a test's comparison quotes what it expected: the failure is the assertion's
    assert es._by_words(text) == want


# pytest's report of a Python exception group (pytest 9.2.0, Python 3.11.7, run here on a test whose TaskGroup's two
# connections are refused; paths shortened): pytest prints the group's box without Python's ``+ Exception Group
# Traceback`` header, its ``| ExceptionGroup:`` line first under the test's section header.
PYTEST_GROUP = """============================= test session starts ==============================
collected 1 item

tests/test_sync.py F                                                     [100%]

=================================== FAILURES ===================================
__________________________________ test_sync ___________________________________
| ExceptionGroup: unhandled errors in a TaskGroup (2 sub-exceptions)
  +-+---------------- 1 ----------------
    | Traceback (most recent call last):
    |   File "tests/test_sync.py", line 4, in pull
    |     await asyncio.open_connection("127.0.0.1", port)
    |   File "/usr/lib/python3.11/asyncio/selector_events.py", line 674, in _sock_connect_cb
    |     raise OSError(err, f'Connect call failed {address}')
    | ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 6401)
    +---------------- 2 ----------------
    | Traceback (most recent call last):
    |   File "tests/test_sync.py", line 4, in pull
    |     await asyncio.open_connection("127.0.0.1", port)
    |   File "/usr/lib/python3.11/asyncio/selector_events.py", line 674, in _sock_connect_cb
    |     raise OSError(err, f'Connect call failed {address}')
    | ConnectionRefusedError: [Errno 111] Connect call failed ('127.0.0.1', 6402)
    +------------------------------------
=========================== short test summary info ============================
FAILED tests/test_sync.py::test_sync - | ExceptionGroup: unhandled errors in a TaskGr...
============================== 1 failed in 0.04s ===============================
"""


def test_an_exception_group_in_a_pytest_report_is_signed_by_its_members(tmp_path):
    with MemoryStore(tmp_path / "review.db") as store:
        sig = store.error_signature(PYTEST_GROUP)
    assert "ExceptionGroup" in sig.message or "ConnectionRefusedError" in sig.message, sig.message
    assert sig.category == "network"


def test_a_category_word_upper_cased_with_a_dotted_capital_i_is_still_the_word(tmp_path):
    with MemoryStore(tmp_path / "review.db") as store:
        assert store.error_signature('open("app.conf"): PERMISSION DENIED').category == "permission"
        assert store.error_signature('open("app.conf"): PERM\u0130SS\u0130ON DEN\u0130ED').category == "permission"
        assert store.error_signature('open("app.conf"): perm\u0131ss\u0131on denied').category == "permission"
        assert store.error_signature("cat: app.conf: No \u017fuch file or directory").category == "not_found"
