"""Maintenance jobs (installed as ``harness_memory.jobs``).

Each job is a plain function over a :class:`~harness_memory.MemoryStore` returning counts;
:func:`run_job` runs one under a lease and records the run; :mod:`.scheduler` runs them on
the schedules in ``Settings.maintenance.schedules`` with APScheduler 3.11.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .compact import compact
from .consolidate import consolidate
from .decay import decay
from .expire import expire
from .reflect import reflect
from .resign import resign

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore

__all__ = [
    "JOBS",
    "decay",
    "expire",
    "consolidate",
    "compact",
    "backfill",
    "consolidate_growth",
    "resign",
    "reflect",
    "run_job",
    "job_status",
]


def backfill(store: MemoryStore, *, dry_run: bool = False, **_: object) -> dict[str, int]:
    """Embed memories stored without a vector (the embedder was down when they were written, or
    a reembed's fill was interrupted: harness_memory/reembed.py)."""
    if dry_run:
        from harness_memory.reembed import refill_after

        b = store._core.backend
        after = refill_after(store)
        if after is None:  # no fill in progress: the flagged memories only
            n = b.execute("SELECT COUNT(*) FROM memories WHERE embedding_pending = 1").fetchone()[0]
        else:
            n = b.execute("SELECT COUNT(*) FROM memories WHERE embedding_pending = 1 OR id > ?", (after,)).fetchone()[0]
        return {"pending": n}
    return {"embedded": store.backfill_embeddings()}


def consolidate_growth(store: MemoryStore, *, dry_run: bool = False, **kw: object) -> dict[str, int]:
    """Consolidate the namespaces that grew by ``consolidate_growth_trigger`` memories since their
    last consolidation (checked often, runs rarely)."""
    b = store._core.backend
    trigger = store.settings.maintenance.consolidate_growth_trigger
    last = (
        b.execute(
            "SELECT MAX(started_at) FROM job_runs WHERE job IN ('consolidate', 'consolidate_growth') AND status = 'ok'"
        ).fetchone()[0]
        or 0.0
    )
    grown = [
        r[0]
        for r in b.execute(
            "SELECT namespace FROM memories WHERE created_at > ? GROUP BY namespace HAVING COUNT(*) >= ?",
            (last, trigger),
        )
    ]
    out = {"namespaces": len(grown), "patterns_created": 0}
    for ns in grown:
        got = consolidate(store, namespace=ns, dry_run=dry_run)
        out["patterns_created"] += got["patterns_created"]
    return out


JOBS: dict[str, Callable[..., dict[str, Any]]] = {
    "decay": decay,
    "expire": expire,
    "consolidate": consolidate,
    "compact": compact,
    "backfill": backfill,
    "consolidate_growth": consolidate_growth,
    "resign": resign,
    "reflect": reflect,
}

from .runner import job_status, run_job  # noqa: E402
