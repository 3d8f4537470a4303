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


def test_a_term_no_row_holds_is_dropped_and_nothing_left_reads_nothing():
    assert rarest_terms(["ghost", "line"], {"ghost": 0, "line": 5}, 1000, 200) == (["line"], 0)
    assert rarest_terms(["ghost"], {"ghost": 0}, 1000, 200) == ([], 0)
    assert rarest_terms(["unknown"], {}, 1000, 200) == ([], 0)


@given(
    st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6), st.integers(0, 5000), max_size=30),
    st.integers(1, 5000),
    st.integers(1, 100_000),
)
def test_the_kept_terms_are_the_rarest_and_fit_the_budget(df, budget, size):
    kept, lowest = rarest_terms(list(df), df, size, budget)
    occurring = sorted((t for t in df if df[t] > 0), key=lambda t: (df[t], t))
    assert kept == occurring[: len(kept)]  # a prefix of the rarest first
    assert bool(kept) == bool(occurring)
    total = sum(df[t] for t in kept)
    assert total <= budget or len(kept) == 1  # the rarest one is kept whatever its count
    if len(kept) < len(occurring):
        assert total + df[occurring[len(kept)]] > budget  # the next one would not fit
    assert lowest == (int(size - size * budget / total) if total > budget else 0)
    assert 0 <= lowest < size or not kept
