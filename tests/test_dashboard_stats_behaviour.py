"""The dashboard's statistics as a reader of its charts relies on them (issue 18): the 90% credible interval of
a Beta posterior, the selector's hierarchical estimate level by level, quantiles and relative changes, each
against values worked out by hand."""

from __future__ import annotations

import pytest

from harness_memory.dashboard.stats import LEVEL, Estimate, change, credible, hierarchical, percentile, pooled_root


def test_a_credible_interval_is_the_central_share_of_the_beta_posterior():
    flat = credible(1.0, 1.0)  # Beta(1, 1) is uniform: its central 90% is [0.05, 0.95]
    assert LEVEL == 0.90
    assert (flat.lo, flat.hi) == pytest.approx((0.05, 0.95))
    assert flat.mean == 0.5 and (flat.alpha, flat.beta) == (1.0, 1.0)
    half = credible(1.0, 1.0, level=0.5)
    assert (half.lo, half.hi) == pytest.approx((0.25, 0.75))
    # Beta(2, 1) has the CDF x^2: its 5% and 95% points are sqrt(0.05) and sqrt(0.95)
    right = credible(2.0, 1.0)
    assert (right.lo, right.hi) == pytest.approx((0.05**0.5, 0.95**0.5))
    assert right.mean == pytest.approx(2 / 3)


def test_more_evidence_narrows_the_interval_around_the_same_mean():
    few, many = credible(3.0, 7.0), credible(30.0, 70.0)
    assert few.mean == pytest.approx(many.mean) == pytest.approx(0.3)
    assert few.lo < many.lo < 0.3 < many.hi < few.hi
    assert credible(8.0, 2.0).lo > credible(2.0, 8.0).hi  # more successes: a higher interval


def test_the_pooled_root_is_the_laplace_smoothed_success_rate():
    assert pooled_root(0, 0) == 0.5
    assert pooled_root(3, 4) == pytest.approx(4 / 6)
    assert pooled_root(10, 10) == pytest.approx(11 / 12)


def test_the_hierarchical_estimate_carries_each_level_s_mean_to_the_next():
    # one level: k pseudo-observations at the root, then the level's evidence
    one = hierarchical([(3, 1)], root=0.5, k=2.0)
    assert (one.alpha, one.beta) == pytest.approx((1.0 + 3, 1.0 + 1))
    # two levels: the finer level's prior is k observations at the coarser level's posterior mean (4 / 6)
    two = hierarchical([(3, 1), (0, 2)], root=0.5, k=2.0)
    m = 4 / 6
    assert (two.alpha, two.beta) == pytest.approx((2.0 * m, 2.0 * (1 - m) + 2))
    three = hierarchical([(3, 1), (0, 2), (5, 0)], root=0.5, k=2.0)
    m2 = two.alpha / (two.alpha + two.beta)
    assert (three.alpha, three.beta) == pytest.approx((2.0 * m2 + 5, 2.0 * (1 - m2)))
    assert isinstance(three, Estimate) and three.lo < three.mean < three.hi
    assert hierarchical([], root=0.25, k=4.0).mean == pytest.approx(0.25)  # no evidence: the root


def test_percentile_interpolates_between_sorted_values():
    assert percentile([], 0.5) is None
    assert percentile([7.0], 0.0) == percentile([7.0], 0.95) == 7.0
    values = [1.0, 2.0, 3.0, 4.0]
    assert percentile(values, 0.0) == 1.0 and percentile(values, 1.0) == 4.0
    assert percentile(values, 0.5) == pytest.approx(2.5)
    assert percentile(values, 0.95) == pytest.approx(3.85)
    assert percentile([10.0, 20.0, 40.0], 0.75) == pytest.approx(30.0)


def test_change_is_relative_and_undefined_without_a_base():
    assert change(10.0, 7.0) == pytest.approx(-0.3)
    assert change(4.0, 5.0) == pytest.approx(0.25)
    assert change(-2.0, -1.0) == pytest.approx(-0.5)
    assert change(0.0, 5.0) is None and change(None, 5.0) is None and change(5.0, None) is None
    assert change(3.0, 3.0) == 0.0
