"""Compact: rebuild the vec0 table when deletes left it sparse, trim the change log, optimise
the FTS index, ANALYZE, and VACUUM when much of the file is free pages."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore


def vector_fill(store: "MemoryStore") -> tuple[int, int]:
    """``(live rows, slots)`` of the vec0 table (sqlite-vec never frees deleted slots)."""
    b = store._core.backend
    live = b.execute(f"SELECT COUNT(*) FROM {b.VEC_TABLE}_rowids").fetchone()[0]
    slots = b.execute(f"SELECT COALESCE(SUM(size), 0) FROM {b.VEC_TABLE}_chunks").fetchone()[0]
    return live, slots


def compact(store: "MemoryStore", *, dry_run: bool = False, force: bool = False, **_: object) -> dict:
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
        with b.write() as c:
            rows = c.execute(f"SELECT memory_id, namespace, agent_id, scope, memory_type, archived, embedding "
                             f"FROM {b.VEC_TABLE}").fetchall()
            dims = b.vector_dimensions()
            b.create_vector_table(dims)
            c.executemany(f"INSERT INTO {b.VEC_TABLE}(memory_id, namespace, agent_id, scope, memory_type, archived, "
                          "embedding) VALUES (?, ?, ?, ?, ?, ?, ?)", rows)
        out["rebuilt"] = len(rows)  # same vectors: in-process indexes stay valid, no change is logged
    with b.write() as c:
        hi = c.execute("SELECT COALESCE(MAX(seq), 0) FROM vector_changes").fetchone()[0]
        out["changes_trimmed"] = c.execute("DELETE FROM vector_changes WHERE seq <= ?",
                                           (hi - m.vector_changes_keep,)).rowcount
        c.execute("INSERT INTO memories_fts(memories_fts) VALUES ('optimize')")
    b.execute("ANALYZE")
    free, pages = b.execute("PRAGMA freelist_count").fetchone()[0], b.execute("PRAGMA page_count").fetchone()[0]
    if pages and free / pages > 0.2:
        b.execute("VACUUM")
        out["vacuumed"] = 1
    return out
