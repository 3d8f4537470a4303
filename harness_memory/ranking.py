"""How a recall candidate's score is computed. Pure functions, so bounds can be tested."""

from __future__ import annotations

from collections.abc import Sequence

from .models import ScoreBreakdown
from .settings import RankingWeights

__all__ = ["usefulness", "recency", "compute", "compute_many", "score"]


def usefulness(times_applied: int, times_successful: int, w: RankingWeights) -> float:
    """Posterior mean of a Beta(a, b) prior updated with the memory's outcomes.

    A never-applied memory gets a / (a + b) (0.5 by default): not ranked as a failure."""
    a, b = w.usefulness_prior_successes, w.usefulness_prior_failures
    return (times_successful + a) / (times_applied + a + b)


def recency(age_seconds: float, w: RankingWeights) -> float:
    return float(0.5 ** (max(0.0, age_seconds) / 86400.0 / w.recency_half_life_days))


def _clip(x: float) -> float:
    return 0.0 if x < 0 else 1.0 if x > 1 else x


def compute(
    vector: float | None,
    keyword: float | None,
    tags: float | None,
    signature: float | None,
    relevance: float,
    age_seconds: float,
    times_applied: int,
    times_successful: int,
    importance: float,
    w: RankingWeights,
) -> tuple[float, float, float, float, float, float, float]:
    """``(score, match, prior, usefulness, recency, relevance, importance)``: the arithmetic of :func:`score`."""
    return _compute_rows(
        ((vector, keyword, tags, signature, relevance, age_seconds, times_applied, times_successful, importance),), w
    )[0]


def compute_many(
    rows: Sequence[tuple[float | None, float | None, float | None, float | None, float, float, int, int, float]],
    w: RankingWeights,
) -> list[tuple[float, float]]:
    """``(score, match)`` of each row of :func:`compute`'s arguments (without ``w``): the same
    arithmetic (one implementation, :func:`_compute_rows`), with the weights read once and no call per
    row (recall scores ~100 candidates a query; one ``compute`` call each was ~1 ms at 100k)."""
    return [(r[0], r[1]) for r in _compute_rows(rows, w)]


def _compute_rows(
    rows: Sequence[tuple[float | None, float | None, float | None, float | None, float, float, int, int, float]],
    w: RankingWeights,
) -> list[tuple[float, float, float, float, float, float, float]]:
    """:func:`compute`'s tuple for each row: the channels' weighted mean of the active ones (clipped to
    [0, 1]), :func:`usefulness`, :func:`recency` and the importance combined into the prior, and the score;
    the weights read once, the clips written out (no call per row)."""
    wv, wk, wt, ws = w.vector, w.keyword, w.tags, w.signature
    a, b = w.usefulness_prior_successes, w.usefulness_prior_failures
    half_life = w.recency_half_life_days
    wu, wr, wi = w.usefulness, w.recency, w.importance
    pw_total = wu + wr + wi
    pw = w.prior_weight
    out = []
    for vector, keyword, tags, signature, relevance, age_seconds, applied, successful, importance in rows:
        total = num = 0.0
        if vector is not None and wv > 0:
            num += (0.0 if vector < 0 else 1.0 if vector > 1 else vector) * wv
            total += wv
        if keyword is not None and wk > 0:
            num += (0.0 if keyword < 0 else 1.0 if keyword > 1 else keyword) * wk
            total += wk
        if tags is not None and wt > 0:
            num += (0.0 if tags < 0 else 1.0 if tags > 1 else tags) * wt
            total += wt
        if signature is not None and ws > 0:
            num += (0.0 if signature < 0 else 1.0 if signature > 1 else signature) * ws
            total += ws
        match = num / total if total > 0 else 0.0
        u = (successful + a) / (applied + a + b)  # usefulness()
        rec = float(0.5 ** (max(0.0, age_seconds) / 86400.0 / half_life))  # recency()
        imp = 0.0 if importance < 0 else 1.0 if importance > 1 else importance
        if pw_total > 0:
            prior = (wu * u + wr * rec + wi * imp) / pw_total
            prior = 0.0 if prior < 0 else 1.0 if prior > 1 else prior
        else:
            prior = 1.0
        rel = 0.0 if relevance < 0 else 1.0 if relevance > 1 else relevance
        final = match * rel * (1.0 - pw + pw * prior)
        out.append(
            (
                0.0 if final < 0 else 1.0 if final > 1 else final,
                0.0 if match < 0 else 1.0 if match > 1 else match,
                prior,
                u,
                rec,
                rel,
                imp,
            )
        )
    return out


def score(
    *,
    vector: float | None,
    keyword: float | None,
    tags: float | None,
    signature: float | None,
    relevance: float,
    age_seconds: float,
    times_applied: int,
    times_successful: int,
    importance: float,
    w: RankingWeights,
) -> ScoreBreakdown:
    """Combine channel scores (each in [0, 1] or None when inactive) with the memory's prior."""
    final, match, prior, u, rec, rel, imp = compute(
        vector, keyword, tags, signature, relevance, age_seconds, times_applied, times_successful, importance, w
    )

    def opt(x: float | None) -> float | None:
        return None if x is None else _clip(x)

    return ScoreBreakdown(
        vector=opt(vector),
        keyword=opt(keyword),
        tags=opt(tags),
        signature=opt(signature),
        match=match,
        relevance=rel,
        recency=rec,
        usefulness=u,
        importance=imp,
        prior=prior,
        score=final,
        weights={
            "vector": w.vector,
            "keyword": w.keyword,
            "tags": w.tags,
            "signature": w.signature,
            "prior_weight": w.prior_weight,
            "usefulness": w.usefulness,
            "recency": w.recency,
            "importance": w.importance,
        },
    )
