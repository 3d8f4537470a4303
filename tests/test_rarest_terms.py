"""``backend.rarest_terms``: what a bounded full-text search for similar errors keeps (issue 19)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from harness_memory.backend import rarest_terms


def test_the_rarest_terms_are_kept_while_their_counts_fit():
    df = {"line": 900, "file": 1000, "standby": 3, "open_channel": 40, "keyerror": 120}
    assert rarest_terms(list(df), df, 1000, 200) == (["standby", "open_channel", "keyerror"], 0)


def test_when_even_the_rarest_is_too_common_only_the_newest_rows_are_read():
    df = {"line": 900, "file": 1000}
    assert rarest_terms(["file", "line"], df, 1000, 300) == (["line"], int(1000 - 1000 * 300 / 900))


def test_a_term_no_row_held_when_counted_is_kept_at_no_cost():
    # the counts are cached: a row holding the word may have been written since it was counted
    assert rarest_terms(["ghost", "line"], {"ghost": 0, "line": 5}, 1000, 200) == (["ghost", "line"], 0)
    assert rarest_terms(["ghost"], {"ghost": 0}, 1000, 200) == (["ghost"], 0)
    # with such a word to search, a word too common for the budget is left out rather than read from the newest rows
    assert rarest_terms(["unknown", "file"], {"file": 999}, 1000, 200) == (["unknown"], 0)
    assert rarest_terms(["unknown", "file", "a"], {"file": 150, "a": 60}, 1000, 200) == (["unknown", "a"], 0)


@given(
    st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6), st.integers(0, 5000), max_size=30),
    st.integers(1, 5000),
    st.integers(1, 100_000),
)
def test_the_kept_terms_are_the_uncounted_then_the_rarest_and_fit_the_budget(df, budget, size):
    kept, lowest = rarest_terms(list(df), df, size, budget)
    zero = [t for t in df if df[t] == 0]
    occurring = sorted((t for t in df if df[t] > 0), key=lambda t: (df[t], t))
    assert kept[: len(zero)] == zero  # every word no row held, at no cost
    rest = kept[len(zero) :]
    assert rest == occurring[: len(rest)]  # then a prefix of the rarest first
    total = sum(df[t] for t in rest)
    # the rarest one is kept whatever its count only when nothing else would be searched
    assert total <= budget or (len(rest) == 1 and not zero)
    assert bool(kept) == bool(df)
    if len(rest) < len(occurring):
        assert total + df[occurring[len(rest)]] > budget  # the next one would not fit
    assert lowest == (int(size - size * budget / total) if total > budget else 0)
