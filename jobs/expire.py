"""Expire: delete TTL-expired memories (with their FTS rows and vectors), prune old access-log rows
and old tool calls (``maintenance.access_log_retention_days``, ``maintenance.tool_call_retention_days``),
each in bounded batches (``jobs.batches``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_memory import tool_calls
from harness_memory.jobs.batches import delete_rows

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore


def expire(store: MemoryStore, *, dry_run: bool = False, **_: object) -> dict[str, Any]:
    core = store._core
    now = core.now()
    m = store.settings.maintenance
    cutoff = now - m.access_log_retention_days * 86400
    tool_cutoff = now - m.tool_call_retention_days * 86400
    if dry_run:
        b = core.backend
        return {
            "expired": b.execute(
                "SELECT COUNT(*) FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?", (now,)
            ).fetchone()[0],
            "log_rows_pruned": b.execute(
                "SELECT COUNT(*) FROM memory_access_log WHERE timestamp < ?", (cutoff,)
            ).fetchone()[0],
            "tool_calls_pruned": tool_calls.prune(core, tool_cutoff, dry_run=True),
        }
    expired = store.cleanup_expired()
    pruned = delete_rows(store, "memory_access_log", "timestamp < ?", [cutoff], "log_rows_pruned")
    calls = delete_rows(store, "tool_calls", "created_at < ?", [tool_cutoff], "tool_calls_pruned")
    return {"expired": expired, "log_rows_pruned": pruned, "tool_calls_pruned": calls}
