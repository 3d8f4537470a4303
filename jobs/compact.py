"""Compact: delete the vec0 rows bulk deletes left behind, free the vec0 table's dead slots when
deletes left it sparse, rewrite the persisted
in-process vector index when it fell behind, trim the change log, merge
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
    purge, pending = getattr(b, "purge_removed_vectors", None), getattr(b, "removed_vectors", None)
    removed = pending() if pending is not None else 0
    if purge is not None and removed and not dry_run:
        # the vec0 rows bulk deletes left behind (see SQLiteBackend.REMOVED_TABLE), in batches
        with for_store(store) as batch:
            removed = purge(batch, progress=lambda n: tally("vectors_purged", n))
    live, slots = vector_fill(store)
    # chunks are allocated whole: only count a chunk's worth of slack as sparseness
    sparse = slots > 0 and (slots - live) > max(m.compact_sparse_ratio * slots, 1024)
    out = {"vector_rows": live, "vector_slots": slots, "rebuilt": 0, "changes_trimmed": 0, "vacuumed": 0}
    out["vectors_purged"] = removed  # (a dry run: how many would be)
    if dry_run:
        out["would_rebuild"] = int(sparse or force)
        return out
    if sparse or force:
        # rows moved out of chunks with dead slots, a batch per short transaction; same vectors:
        # in-process indexes stay valid, no change is logged
        with for_store(store) as batch:
            out["rebuilt"] = b.rebuild_vectors(batch, progress=lambda n: tally("rebuilt", n))
    hi = b.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_changes").fetchone()[0]
    if core.index is not None and b.local_vector_index:
        # the persisted in-process index is rewritten here, by the job, not by the writes and
        # recalls that catch up (150 MB at 100k memories); before the log it catches up from is trimmed
        out["snapshot_written"] = int(core.index.refresh_snapshot(b, trim_to=hi - m.vector_changes_keep))
    out["changes_trimmed"] = delete_rows(
        store, "vector_changes", "seq <= ?", [hi - m.vector_changes_keep], "changes_trimmed", key="seq"
    )
    converge = getattr(b, "converge_vector_index", None)
    if converge is not None:  # PostgreSQL: the index maintenance.vector_index asks for (built concurrently)
        out.update(converge(m.vector_index))
    # VACUUM rewrites the whole file under the write lock (seconds at 100k memories): only when
    # asked; SQLite reuses free pages anyway, so the file does not grow meanwhile
    with for_store(store) as batch:
        out["vacuumed"] = b.optimize(vacuum=vacuum, batches=batch)
    return out
