"""How a recall candidate's score is computed. Pure functions, so bounds can be tested."""

from __future__ import annotations

from .models import ScoreBreakdown
from .settings import RankingWeights

__all__ = ["usefulness", "recency", "compute", "score"]


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
    total = num = 0.0
    for val, wt in ((vector, w.vector), (keyword, w.keyword), (tags, w.tags), (signature, w.signature)):
        if val is not None and wt > 0:
            num += _clip(val) * wt
            total += wt
    match = num / total if total > 0 else 0.0
    u = usefulness(times_applied, times_successful, w)
    rec = recency(age_seconds, w)
    imp = _clip(importance)
    pw_total = w.usefulness + w.recency + w.importance
    prior = _clip((w.usefulness * u + w.recency * rec + w.importance * imp) / pw_total) if pw_total > 0 else 1.0
    rel = _clip(relevance)
    final = _clip(match * rel * (1.0 - w.prior_weight + w.prior_weight * prior))
    return final, _clip(match), prior, u, rec, rel, imp


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
