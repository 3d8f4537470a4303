"""The ledger's Beta estimates with credible intervals, and small summary statistics (pure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Estimate", "change", "credible", "hierarchical", "percentile", "pooled_root"]

LEVEL = 0.90  # the credible intervals drawn: the central 90% of the posterior


@dataclass(frozen=True)
class Estimate:
    alpha: float
    beta: float
    lo: float
    hi: float

    @property
    def mean(self) -> float:
        return self.alpha / (self.alpha + self.beta)


def credible(alpha: float, beta: float, level: float = LEVEL) -> Estimate:
    """The central ``level`` interval of Beta(alpha, beta)."""
    from scipy.special import betaincinv  # scipy comes with scikit-learn (a dependency)

    tail = (1 - level) / 2
    return Estimate(alpha, beta, float(betaincinv(alpha, beta, tail)), float(betaincinv(alpha, beta, 1 - tail)))


def pooled_root(successes: int, attempts: int) -> float:
    """The selector's empirical-Bayes root: the pooled success rate of every technique (ledger.select)."""
    return (successes + 1.0) / (attempts + 2.0)


def hierarchical(levels: Sequence[tuple[int, int]], *, root: float, k: float) -> Estimate:
    """The selector's posterior for one technique: ``levels`` are (successes, failures) from the
    coarsest (overall) to the finest; each level's prior is ``k`` pseudo-observations at the
    coarser level's mean, exactly as :func:`harness_memory.ledger.select` computes it."""
    a, b = k * root, k * (1 - root)
    first = True
    for succ, fail in levels:
        if not first:
            m = a / (a + b)
            a, b = k * m, k * (1 - m)
        a, b = a + succ, b + fail
        first = False
    return credible(a, b)


def percentile(sorted_values: Sequence[float], q: float) -> float | None:
    """The ``q`` quantile (0..1) of already sorted values, by linear interpolation."""
    if not sorted_values:
        return None
    pos = (len(sorted_values) - 1) * q
    lo = int(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


def change(first: float | None, last: float | None) -> float | None:
    """Relative change from ``first`` to ``last`` (-0.3: down 30%); None when undefined."""
    if first is None or last is None or first == 0:
        return None
    return (last - first) / first
