"""``ranking.compute_many`` (recall's per-candidate scoring, the weights read once) and ``ranking.compute``
give exactly the floats of the score's arithmetic written out call by call (``reference`` below: the channels'
weighted mean, ``usefulness``, ``recency``, the prior and the clips), bit for bit, for any weights (zero
weights and an all-zero prior included) and any channel values, inside or outside [0, 1]."""

from __future__ import annotations

from hypothesis import given, settings as hsettings, strategies as st

from harness_memory.ranking import compute, compute_many, recency, usefulness
from harness_memory.settings import RankingWeights

value = st.floats(-0.5, 1.5, allow_nan=False)
channel = st.one_of(st.none(), value)
weight = st.one_of(st.just(0.0), st.floats(0.0, 3.0))
row = st.tuples(
    channel,
    channel,
    channel,
    channel,
    value,
    st.floats(-1e6, 1e9, allow_nan=False),
    st.integers(0, 50),
    st.integers(0, 50),
    value,
).map(lambda r: (*r[:6], max(r[6], r[7]), min(r[6], r[7]), r[8]))
weights = st.builds(
    RankingWeights,
    vector=weight,
    keyword=weight,
    tags=weight,
    signature=weight,
    prior_weight=st.floats(0.0, 1.0),
    usefulness=weight,
    recency=weight,
    importance=weight,
    recency_half_life_days=st.floats(0.01, 400.0),
    usefulness_prior_successes=st.floats(0.01, 5.0),
    usefulness_prior_failures=st.floats(0.01, 5.0),
)


def _clip(x: float) -> float:
    return min(1.0, max(0.0, x))


def reference(vector, keyword, tags, signature, relevance, age_seconds, applied, successful, importance, w):
    """The score's arithmetic written out, one call per part (ranking.compute's own code before the two were one)."""
    total = num = 0.0
    for val, wt in ((vector, w.vector), (keyword, w.keyword), (tags, w.tags), (signature, w.signature)):
        if val is not None and wt > 0:
            num += _clip(val) * wt
            total += wt
    match = num / total if total > 0 else 0.0
    u, rec, imp = usefulness(applied, successful, w), recency(age_seconds, w), _clip(importance)
    pw_total = w.usefulness + w.recency + w.importance
    prior = _clip((w.usefulness * u + w.recency * rec + w.importance * imp) / pw_total) if pw_total > 0 else 1.0
    rel = _clip(relevance)
    final = _clip(match * rel * (1.0 - w.prior_weight + w.prior_weight * prior))
    return final, _clip(match), prior, u, rec, rel, imp


@hsettings(max_examples=50, deadline=None)
@given(rows=st.lists(row, min_size=0, max_size=12), w=weights)
def test_compute_many_is_compute_row_by_row(rows, w):
    want = [reference(*r, w) for r in rows]
    assert [compute(*r, w) for r in rows] == want
    assert compute_many(rows, w) == [x[:2] for x in want]


def test_a_channel_above_one_counts_as_one_and_below_zero_as_zero():
    w = RankingWeights()
    base = [0.6, 0.6, 0.6, 0.6, 1.0, 0.0, 0, 0, 0.5]
    for k in range(4):
        for outside, inside in ((1.5, 1.0), (2.0, 1.0), (-0.5, 0.0)):
            a, b = list(base), list(base)
            a[k], b[k] = outside, inside
            assert compute_many([tuple(a)], w) == compute_many([tuple(b)], w), (k, outside)
            assert compute(*a, w) == compute(*b, w)


def test_compute_many_on_the_default_weights_clips_and_drops_inactive_channels():
    w = RankingWeights()
    rows = [
        (None, 2.0, None, None, 1.0, 0.0, 0, 0, 0.5),  # keyword alone, above 1: clipped to 1
        (-1.0, None, None, None, 1.0, 0.0, 0, 0, 0.5),  # a negative cosine: no match at all
        (0.5, 0.5, 1.0, 0.0, 0.7, 86400.0 * 30, 4, 3, 2.0),
        (None, None, None, None, 1.0, 0.0, 0, 0, 0.5),  # no channel: match 0
    ]
    got = compute_many(rows, w)
    assert got == [compute(*r, w)[:2] for r in rows]
    assert got[0][1] == 1.0 and got[1][1] == 0.0 and got[3] == (0.0, 0.0)
    assert 0.0 < got[2][0] < got[0][0]
