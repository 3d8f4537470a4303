"""Maintenance jobs (installed as ``harness_memory.jobs``).

Each job is a plain function over a :class:`~harness_memory.MemoryStore`, runnable on demand.
Scheduling (APScheduler, leases, run records) arrives with the maintenance work; for now the
jobs are the on-demand ones the store itself needs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore

__all__ = ["expire", "backfill", "JOBS"]


def expire(store: "MemoryStore") -> dict[str, int]:
    """Delete TTL-expired memories with their index rows and vectors."""
    return {"expired": store.cleanup_expired()}


def backfill(store: "MemoryStore") -> dict[str, int]:
    """Embed memories stored without a vector (the embedder was down when they were written)."""
    return {"embedded": store.backfill_embeddings()}


JOBS = {"expire": expire, "backfill": backfill}
