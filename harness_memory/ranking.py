"""How a recall candidate's score is computed. Pure functions, so bounds can be tested."""

from __future__ import annotations

from .models import ScoreBreakdown
from .settings import RankingWeights

__all__ = ["usefulness", "recency", "score"]


def usefulness(times_applied: int, times_successful: int, w: RankingWeights) -> float:
    """Posterior mean of a Beta(a, b) prior updated with the memory's outcomes.

    A never-applied memory gets a / (a + b) (0.5 by default): not ranked as a failure."""
    a, b = w.usefulness_prior_successes, w.usefulness_prior_failures
    return (times_successful + a) / (times_applied + a + b)


def recency(age_seconds: float, w: RankingWeights) -> float:
    return 0.5 ** (max(0.0, age_seconds) / 86400.0 / w.recency_half_life_days)


def _clip(x: float) -> float:
    return 0.0 if x < 0 else 1.0 if x > 1 else x


def score(*, vector: float | None, keyword: float | None, tags: float | None, signature: float | None,
          relevance: float, age_seconds: float, times_applied: int, times_successful: int, importance: float,
          w: RankingWeights) -> ScoreBreakdown:
    """Combine channel scores (each in [0, 1] or None when inactive) with the memory's prior."""
    channels = [(vector, w.vector), (keyword, w.keyword), (tags, w.tags), (signature, w.signature)]
    active = [(_clip(v), wt) for v, wt in channels if v is not None and wt > 0]
    total = sum(wt for _, wt in active)
    match = sum(v * wt for v, wt in active) / total if total > 0 else 0.0
    u = usefulness(times_applied, times_successful, w)
    rec = recency(age_seconds, w)
    imp = _clip(importance)
    pw_total = w.usefulness + w.recency + w.importance
    prior = (w.usefulness * u + w.recency * rec + w.importance * imp) / pw_total if pw_total > 0 else 1.0
    rel = _clip(relevance)
    final = _clip(match * rel * (1.0 - w.prior_weight + w.prior_weight * prior))
    return ScoreBreakdown(
        vector=None if vector is None else _clip(vector), keyword=None if keyword is None else _clip(keyword),
        tags=None if tags is None else _clip(tags), signature=None if signature is None else _clip(signature),
        match=_clip(match), relevance=rel, recency=rec, usefulness=u, importance=imp, prior=_clip(prior),
        score=final,
        weights={"vector": w.vector, "keyword": w.keyword, "tags": w.tags, "signature": w.signature,
                 "prior_weight": w.prior_weight, "usefulness": w.usefulness, "recency": w.recency,
                 "importance": w.importance},
    )
