"""Compact: free the vec0 table's dead slots when deletes left it sparse, trim the change log, merge
the FTS index's segments (each in bounded batches), ANALYZE (sampled), and with ``vacuum=True``
VACUUM when much of the file is free pages (one long transaction: only when asked)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from harness_memory.jobs.batches import delete_rows, for_store, tally

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore


def vector_fill(store: MemoryStore) -> tuple[int, int]:
    """``(live rows, slots)`` of the vector table (sqlite-vec never frees deleted slots)."""
    return store._core.backend.vector_fill()


def compact(
    store: MemoryStore, *, dry_run: bool = False, force: bool = False, vacuum: bool = False, **_: object
) -> dict[str, Any]:
    core = store._core
    b = core.backend
    m = store.settings.maintenance
    live, slots = vector_fill(store)
    # chunks are allocated whole: only count a chunk's worth of slack as sparseness
    sparse = slots > 0 and (slots - live) > max(m.compact_sparse_ratio * slots, 1024)
    out = {"vector_rows": live, "vector_slots": slots, "rebuilt": 0, "changes_trimmed": 0, "vacuumed": 0}
    if dry_run:
        out["would_rebuild"] = int(sparse or force)
        return out
    if sparse or force:
        # rows moved out of chunks with dead slots, a batch per short transaction; same vectors:
        # in-process indexes stay valid, no change is logged
        out["rebuilt"] = b.rebuild_vectors(for_store(store), progress=lambda n: tally("rebuilt", n))
    hi = b.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_changes").fetchone()[0]
    out["changes_trimmed"] = delete_rows(
        store, "vector_changes", "seq <= ?", [hi - m.vector_changes_keep], "changes_trimmed", key="seq"
    )
    # VACUUM rewrites the whole file under the write lock (seconds at 100k memories): only when
    # asked; SQLite reuses free pages anyway, so the file does not grow meanwhile
    out["vacuumed"] = b.optimize(vacuum=vacuum, batches=for_store(store))
    return out
