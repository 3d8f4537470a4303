"""Attempt history, the technique-effectiveness ledger, and the selector that picks the next retry.

The selector estimates each technique's chance of fixing this error with a Beta posterior
that borrows strength from coarser evidence: the pooled success rate of all techniques sets
the prior of each technique's overall record, which sets the prior of its record for the
error's category, which sets the prior of its record for the exact signature
(``prior_strength`` pseudo-observations at each step). It explores by
Thompson sampling (reproducible with a seed) or an upper confidence bound, divides by the
technique's cost, never repeats a technique the task already tried, and escalates when the
task is out of retries, out of techniques, or no technique's expected chance clears the floor.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from .core import Core

if TYPE_CHECKING:  # pragma: no cover
    from .backend import Connection

__all__ = [
    "Attempt",
    "TechniqueEstimate",
    "TechniqueDecision",
    "record_attempt",
    "select",
    "attempts_of",
    "SUCCESS_RESULTS",
    "ESCALATE",
]

ESCALATE = "escalate"
SUCCESS_RESULTS = ("fixed", "decomposed")
EXAMPLES = 10


class Attempt(BaseModel):
    id: int
    task_id: str
    technique: str
    result: str
    error_signature: str | None = None
    error_category: str | None = None
    agent_id: str | None = None
    notes: str | None = None
    attempted_at: float


class TechniqueEstimate(BaseModel):
    technique: str
    alpha: float = Field(description="posterior successes + prior")
    beta: float = Field(description="posterior failures + prior")
    mean: float
    draw: float = Field(description="the Thompson sample (or UCB value) used to rank")
    cost: float
    value: float = Field(description="draw / cost: what the selector maximises")
    evidence: dict[str, tuple[int, int]] = Field(description="(successes, failures) per level")


class TechniqueDecision(BaseModel):
    technique: str
    reason: str
    escalate: bool
    tried: list[str]
    candidates: list[TechniqueEstimate]


def _ledger_row(c: Connection, technique: str, level: str, key: str) -> tuple[int, int]:
    r = c.execute(
        "SELECT successes, failures FROM technique_effectiveness WHERE technique = ? AND level = ? AND error_key = ?",
        (technique, level, key),
    ).fetchone()
    return (r[0], r[1]) if r else (0, 0)


def _bump(lst_json: str, item: str | None, cap: int) -> str:
    lst = json.loads(lst_json)
    if item is not None and item not in lst:
        lst.append(item)
        lst = lst[-cap:]
    return json.dumps(lst)


def record_attempt(
    core: Core,
    *,
    task_id: str,
    technique: str,
    result: str,
    signature: str | None,
    category: str | None,
    agent_id: str | None,
    agent_type: str | None,
    task_category: str | None,
    notes: str | None,
    basis: str | None = None,
) -> Attempt:
    """Append to the task's history and update the ledger at every level (one transaction)."""
    now = core.now()
    success = result in SUCCESS_RESULTS
    with core.backend.write() as c:
        cur = c.execute(
            "INSERT INTO task_attempts(task_id, technique, result, error_signature, error_category, "
            "agent_id, agent_type, task_category, notes, attempted_at, error_basis) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (task_id, technique, result, signature, category, agent_id, agent_type, task_category, notes, now, basis),
        )
        attempt_id = int(cur.fetchone()[0])
        if result != "escalated":
            levels = [("global", "*")]
            if category:
                levels.append(("category", category))
            if signature:
                levels.append(("signature", signature))
            for level, key in levels:
                c.execute(
                    "INSERT INTO technique_effectiveness(technique, level, error_key, error_category, first_used, "
                    "last_used) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(technique, level, error_key) DO NOTHING",
                    (technique, level, key, category if level != "global" else None, now, now),
                )
                row = c.execute(
                    "SELECT agent_types, task_categories, example_successes, example_failures FROM "
                    "technique_effectiveness WHERE technique = ? AND level = ? AND error_key = ?",
                    (technique, level, key),
                ).fetchone()
                c.execute(
                    "UPDATE technique_effectiveness SET successes = successes + ?, failures = failures + ?, "
                    "attempts = attempts + 1, success_rate = (successes + ?) * 1.0 / (attempts + 1), "
                    "agent_types = ?, task_categories = ?, example_successes = ?, example_failures = ?, last_used = ?, "
                    "last_success = CASE WHEN ? = 1 THEN ? ELSE last_success END, "
                    "last_failure = CASE WHEN ? = 1 THEN last_failure ELSE ? END "
                    "WHERE technique = ? AND level = ? AND error_key = ?",
                    (
                        int(success),
                        int(not success),
                        int(success),
                        _bump(row[0], agent_type, 50),
                        _bump(row[1], task_category, 50),
                        _bump(row[2], task_id if success else None, EXAMPLES),
                        _bump(row[3], None if success else task_id, EXAMPLES),
                        now,
                        int(success),
                        now,
                        int(success),
                        now,
                        technique,
                        level,
                        key,
                    ),
                )
    return Attempt(
        id=attempt_id,
        task_id=task_id,
        technique=technique,
        result=result,
        error_signature=signature,
        error_category=category,
        agent_id=agent_id,
        notes=notes,
        attempted_at=now,
    )


def attempts_of(core: Core, task_id: str) -> list[Attempt]:
    rows = core.backend.execute(
        "SELECT id, task_id, technique, result, error_signature, error_category, agent_id, notes, attempted_at "
        "FROM task_attempts WHERE task_id = ? ORDER BY id",
        (task_id,),
    ).fetchall()
    return [
        Attempt(
            id=r[0],
            task_id=r[1],
            technique=r[2],
            result=r[3],
            error_signature=r[4],
            error_category=r[5],
            agent_id=r[6],
            notes=r[7],
            attempted_at=r[8],
        )
        for r in rows
    ]


def select(
    core: Core,
    *,
    task_id: str,
    signature: str | None,
    category: str | None,
    techniques: Sequence[str],
    seed: int | None,
) -> TechniqueDecision:
    s = core.settings
    tried = [a.technique for a in attempts_of(core, task_id)]
    tried_set = set(tried)
    untried = [t for t in techniques if t not in tried_set and t != ESCALATE]
    if len(tried) >= s.max_retries:
        return TechniqueDecision(
            technique=ESCALATE,
            escalate=True,
            tried=tried,
            candidates=[],
            reason=f"task reached its retry limit ({s.max_retries} attempts)",
        )
    if not untried:
        return TechniqueDecision(
            technique=ESCALATE,
            escalate=True,
            tried=tried,
            candidates=[],
            reason="every technique was tried on this task",
        )
    k = s.prior_strength
    rng = random.Random(seed) if seed is not None else random.Random()
    estimates: list[TechniqueEstimate] = []
    any_data = False
    with core.backend.read() as c:
        # empirical-Bayes root: the pooled success rate of every technique, worth k observations
        tot = c.execute(
            "SELECT COALESCE(SUM(successes), 0), COALESCE(SUM(attempts), 0) FROM "
            "technique_effectiveness WHERE level = 'global'"
        ).fetchone()
        root = (tot[0] + 1.0) / (tot[1] + 2.0)
        for t in untried:
            g = _ledger_row(c, t, "global", "*")
            cat = _ledger_row(c, t, "category", category) if category else (0, 0)
            sig = _ledger_row(c, t, "signature", signature) if signature else (0, 0)
            any_data |= any(sum(x) for x in (g, cat, sig))
            # each level: k pseudo-observations at the coarser level's mean, plus its own counts
            a, b = k * root + g[0], k * (1 - root) + g[1]
            for succ, fail in (cat, sig):
                m = a / (a + b)
                a, b = k * m + succ, k * (1 - m) + fail
            mean = a / (a + b)
            if s.exploration == "ucb":
                n = a + b
                draw = min(1.0, mean + s.ucb_c * (mean * (1 - mean) / (n + 1)) ** 0.5)
            else:
                draw = rng.betavariate(a, b)
            cost = float(s.technique_costs.get(t, 1.0))
            estimates.append(
                TechniqueEstimate(
                    technique=t,
                    alpha=a,
                    beta=b,
                    mean=mean,
                    draw=draw,
                    cost=cost,
                    value=draw / cost,
                    evidence={"global": g, "category": cat, "signature": sig},
                )
            )
    if not any_data:
        first = untried[0]
        return TechniqueDecision(
            technique=first,
            escalate=False,
            tried=tried,
            candidates=estimates,
            reason=f"no outcomes recorded for any candidate yet: next on the ladder is {first}",
        )
    best_mean = max(e.mean for e in estimates)
    if best_mean < s.success_floor:
        return TechniqueDecision(
            technique=ESCALATE,
            escalate=True,
            tried=tried,
            candidates=estimates,
            reason=f"no technique's estimated chance clears the floor ({best_mean:.2f} < {s.success_floor:.2f})",
        )
    choice = max(estimates, key=lambda e: (e.value, -techniques.index(e.technique)))
    ev = choice.evidence
    return TechniqueDecision(
        technique=choice.technique,
        escalate=False,
        tried=tried,
        candidates=estimates,
        reason=(
            f"{choice.technique}: estimated success {choice.mean:.2f} (signature {ev['signature'][0]}/"
            f"{sum(ev['signature'])}, category {ev['category'][0]}/{sum(ev['category'])}, overall "
            f"{ev['global'][0]}/{sum(ev['global'])}), cost {choice.cost:g}; "
            f"{'sampled' if s.exploration == 'thompson' else 'upper bound'} {choice.draw:.2f} ranks first"
        ),
    )
