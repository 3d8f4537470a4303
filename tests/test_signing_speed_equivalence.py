"""The shortcuts of the signing-speed round (issue 8) give the same answers as the readings they stand in front of:
``category_model.is_boilerplate``'s quick no against its full reading, ``_by_text``'s cache against the uncached
function, and mask_params' literal guards against the masks themselves (every mask still applied where it matches)."""

from __future__ import annotations

from hypothesis import given, settings, strategies as st

from harness_memory import category_model, error_signatures as es

_WORDS = sorted(category_model.BOILERPLATE_WORDS) + sorted(category_model._UNIT_WORDS)
_WORDS += ["ec", "econds", "block", "Receiving", "timeout", "FAILED", "Exit", "3s", "5 min", "10ms", "2h", "ſec"]
_PIECES = st.sampled_from(_WORDS) | st.from_regex(r"[0-9]{1,3}(?:[.,:][0-9]{1,2})?", fullmatch=True)
_SEPS = st.sampled_from([" ", " ", "\n", ": ", ", ", ".", " (", ") ", "", "\t", "3", "1ſ"])
_LINES = st.lists(st.tuples(_PIECES, _SEPS), max_size=12).map(lambda ps: "".join(a + b for a, b in ps))


@settings(max_examples=600, deadline=None)
@given(_LINES)
def test_quick_no_of_is_boilerplate_is_the_full_reading(text: str) -> None:
    assert category_model.is_boilerplate(text) == category_model._boilerplate_reading(text)


def test_is_boilerplate_examples() -> None:
    for text, want in [
        ("ERROR: Job failed: exit code 1", True),
        ("BUILD FAILED in 3s", True),
        ("Build failed after 5 min", True),
        ("Receiving block blk_1 src: /10.0.0.1:5 dest: /10.0.0.2:6", False),
        ("Process exited after 3 sec", True),
        ("Process exited after 3ſec", True),  # (?i): ſ is a unit's s; the run 'ec' goes with it
        ("sec", False),
        ("", False),
    ]:
        assert category_model.is_boilerplate(text) is want, text
        assert category_model._boilerplate_reading(text) is want, text


_TEXTS = st.text(alphabet=st.sampled_from(list("abEHPTxyz :/.=-_0123456789\nAN")), max_size=80) | st.sampled_from(
    [
        "Connection refused (ECONNREFUSED) while reading /etc/app.conf",
        "open config.yml: EACCES",
        "HTTP 429 Too Many Requests",
        "ModuleNotFoundError: No module named 'x' (ENOENT)",
        "ld: cannot find -ltoml: No such file or directory",
        "QuotaExceeded: disk quota exceeded on /var/lib",
    ]
)


@settings(max_examples=300, deadline=None)
@given(_TEXTS)
def test_by_text_cache_is_the_function(text: str) -> None:
    es._by_text_short.cache_clear()
    assert es._by_text(text) == es._by_text_head(text[:8000])
    assert es._by_text(text) == es._by_text_head(text[:8000])  # (the cached answer)


@settings(max_examples=400, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("JanFebMySepOct0123456789:/\\<> .-_xyz'\"")),
        max_size=60,
    )
)
def test_mask_guards_skip_only_masks_that_do_not_match(text: str) -> None:
    for pattern, needs in es._MASK_GUARDS:
        if callable(needs) and not needs(text):
            assert pattern.search(text) is None, (pattern.pattern, text)
