"""The recall score's arithmetic goes the documented way (harness_memory/ranking.py, models.ScoreBreakdown,
docs/ranking.md): older is lower, more evidence of usefulness is higher, every channel and the
memory's relevance and importance raise the score, values outside [0, 1] are clipped to the near
end, and the breakdown that ``hit.explain()`` shows is the arithmetic that produced the score."""

from __future__ import annotations

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from harness_memory.ranking import recency, score, usefulness
from harness_memory.settings import RankingWeights

W = RankingWeights()
DAY = 86400.0
unit = st.floats(0.0, 1.0)
channel = st.one_of(st.none(), unit)


def s(**kw):
    base = dict(
        vector=0.5,
        keyword=0.5,
        tags=None,
        signature=None,
        relevance=1.0,
        age_seconds=0.0,
        times_applied=0,
        times_successful=0,
        importance=0.5,
        w=W,
    )
    base.update(kw)
    return score(**base)


def test_recency_halves_every_half_life_and_is_one_when_new():
    assert recency(0.0, W) == 1.0
    assert recency(30 * DAY, W) == pytest.approx(0.5)
    assert recency(60 * DAY, W) == pytest.approx(0.25)
    assert recency(15 * DAY, W) == pytest.approx(0.5**0.5)
    short = RankingWeights(recency_half_life_days=2.0)
    assert recency(2 * DAY, short) == pytest.approx(0.5)
    assert recency(1 * DAY, short) == pytest.approx(2**-0.5)


def test_a_time_in_the_future_is_not_newer_than_now():
    assert recency(-5 * DAY, W) == 1.0


@given(st.floats(0, 10_000 * DAY), st.floats(1.0, 1000 * DAY))
def test_older_is_lower(age, more):
    assert recency(age + more, W) < recency(age, W) or recency(age, W) == 0.0
    assert 0.0 <= recency(age + more, W) <= 1.0


def test_usefulness_is_the_beta_posterior_mean():
    assert usefulness(0, 0, W) == 0.5  # never applied: not ranked as a failure
    assert usefulness(4, 3, W) == pytest.approx((3 + 1) / (4 + 2))
    assert usefulness(10, 0, W) == pytest.approx(1 / 12)
    w = RankingWeights(usefulness_prior_successes=3.0, usefulness_prior_failures=1.0)
    assert usefulness(0, 0, w) == pytest.approx(0.75)
    assert usefulness(2, 2, w) == pytest.approx(5 / 6)


@given(st.integers(0, 500), st.integers(0, 500))
def test_one_more_success_raises_usefulness_and_one_more_failure_lowers_it(applied, successful):
    successful = min(successful, applied)
    u = usefulness(applied, successful, W)
    assert usefulness(applied + 1, successful + 1, W) > u
    assert usefulness(applied + 1, successful, W) < u


def test_the_match_is_the_weighted_mean_of_the_active_channels():
    b = s(vector=0.2, keyword=0.8, tags=None, signature=None)
    assert b.match == pytest.approx((0.2 * W.vector + 0.8 * W.keyword) / (W.vector + W.keyword))
    b = s(vector=0.2, keyword=0.8, tags=1.0, signature=0.0)
    total = W.vector + W.keyword + W.tags + W.signature
    assert b.match == pytest.approx((0.2 * W.vector + 0.8 * W.keyword + 1.0 * W.tags) / total)
    b = s(vector=None, keyword=None, tags=None, signature=0.6)
    assert b.match == pytest.approx(0.6)
    assert s(vector=None, keyword=None).match == 0.0 and s(vector=None, keyword=None).score == 0.0


def test_a_channel_weighted_zero_is_left_out_of_the_mean():
    w = RankingWeights(vector=0.0)
    b = s(vector=0.0, keyword=0.8, w=w)
    assert b.match == pytest.approx(0.8)


def test_the_score_is_match_times_relevance_times_the_prior_factor():
    b = s(
        vector=0.6,
        keyword=0.9,
        relevance=0.8,
        age_seconds=30 * DAY,
        times_applied=3,
        times_successful=2,
        importance=0.7,
    )
    u, rec = (2 + 1) / (3 + 2), 0.5
    prior = (W.usefulness * u + W.recency * rec + W.importance * 0.7) / (W.usefulness + W.recency + W.importance)
    assert (b.usefulness, b.recency, b.importance, b.relevance) == (pytest.approx(u), pytest.approx(rec), 0.7, 0.8)
    assert b.prior == pytest.approx(prior)
    assert b.score == pytest.approx(b.match * 0.8 * (1 - W.prior_weight + W.prior_weight * prior))


def test_the_prior_is_the_weighted_mean_whatever_the_weights_sum_to():
    w = RankingWeights(usefulness=2.0, recency=1.0, importance=1.0)
    b = s(w=w, age_seconds=30 * DAY, times_applied=1, times_successful=1, importance=0.2)
    assert b.prior == pytest.approx((2.0 * (2 / 3) + 1.0 * 0.5 + 1.0 * 0.2) / 4.0)
    w = RankingWeights(usefulness=0.1, recency=0.1, importance=0.1)
    assert s(w=w, age_seconds=30 * DAY, importance=0.2).prior == pytest.approx((0.5 + 0.5 + 0.2) / 3)


def test_with_no_prior_weights_the_prior_is_neutral():
    w = RankingWeights(usefulness=0.0, recency=0.0, importance=0.0)
    b = s(w=w, age_seconds=400 * DAY, importance=0.0)
    assert b.prior == 1.0
    assert b.score == pytest.approx(b.match)


def test_prior_weight_zero_ignores_the_prior_and_one_uses_it_whole():
    old = dict(age_seconds=300 * DAY, times_applied=5, times_successful=0, importance=0.0)
    no_prior = RankingWeights(prior_weight=0.0)
    assert s(w=no_prior, **old).score == pytest.approx(s(w=no_prior).score)
    b = s(w=RankingWeights(prior_weight=1.0), **old)
    assert b.score == pytest.approx(b.match * b.prior)


def test_values_below_zero_clip_to_zero_and_above_one_clip_to_one():
    low = s(vector=-0.5, keyword=-2.0, relevance=-1.0, importance=-3.0)
    assert (low.vector, low.keyword, low.relevance, low.importance, low.score) == (0.0, 0.0, 0.0, 0.0, 0.0)
    high = s(vector=1.5, keyword=7.0, relevance=2.0, importance=4.0)
    assert (high.vector, high.keyword, high.relevance, high.importance) == (1.0, 1.0, 1.0, 1.0)
    assert high.match == 1.0 and high.score <= 1.0
    assert s(importance=-3.0).prior < s(importance=0.0).prior + 1e-12
    assert s(importance=0.0).prior == pytest.approx(s(importance=-3.0).prior)
    assert s(importance=1.0).prior == pytest.approx(s(importance=4.0).prior)


@hsettings(max_examples=200, deadline=None)
@given(channel, channel, channel, channel, unit, st.floats(0, 1000 * DAY), st.integers(0, 50), st.integers(0, 50), unit)
def test_every_component_is_in_the_unit_interval(v, k, t, g, rel, age, applied, succ, imp):
    b = s(
        vector=v,
        keyword=k,
        tags=t,
        signature=g,
        relevance=rel,
        age_seconds=age,
        times_applied=applied,
        times_successful=min(succ, applied),
        importance=imp,
    )
    for x in (b.match, b.relevance, b.recency, b.usefulness, b.importance, b.prior, b.score):
        assert 0.0 <= x <= 1.0
    assert b.score <= b.match * b.relevance + 1e-12


@hsettings(max_examples=200, deadline=None)
@given(st.sampled_from(["vector", "keyword", "tags", "signature"]), unit, unit)
def test_a_better_channel_value_never_lowers_the_score(name, lo, hi):
    lo, hi = sorted((lo, hi))
    base = dict(vector=0.4, keyword=0.4, tags=0.4, signature=0.4, relevance=0.9, importance=0.5)
    a, b = s(**{**base, name: lo}), s(**{**base, name: hi})
    assert b.score >= a.score
    if hi > lo + 1e-6:
        assert b.score > a.score


@hsettings(max_examples=100, deadline=None)
@given(unit, unit)
def test_more_relevance_or_importance_never_lowers_the_score(lo, hi):
    lo, hi = sorted((lo, hi))
    assert s(relevance=hi).score >= s(relevance=lo).score
    assert s(importance=hi).score >= s(importance=lo).score
    if hi > lo + 1e-6:
        assert s(relevance=hi).score > s(relevance=lo).score
        assert s(importance=hi).score > s(importance=lo).score


def test_an_older_memory_scores_lower_and_a_useful_one_higher():
    assert s(age_seconds=90 * DAY).score < s(age_seconds=10 * DAY).score < s(age_seconds=0.0).score
    assert s(times_applied=10, times_successful=9).score > s().score > s(times_applied=10, times_successful=1).score


def test_the_breakdown_reports_the_inputs_and_the_weights():
    b = s(vector=0.3, keyword=None, tags=0.7, signature=None)
    assert (b.vector, b.keyword, b.tags, b.signature) == (0.3, None, 0.7, None)
    assert b.weights == {
        "vector": W.vector,
        "keyword": W.keyword,
        "tags": W.tags,
        "signature": W.signature,
        "prior_weight": W.prior_weight,
        "usefulness": W.usefulness,
        "recency": W.recency,
        "importance": W.importance,
    }
    assert f"score {b.score:.3f}" in b.describe() and "vector 0.30" in b.describe() and "keyword" not in b.describe()
