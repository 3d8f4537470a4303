"""Re-embedding a store with another embedder without stalling the fleet (issue 17).

``reembed`` runs in three steps, none of which holds the write lock for long:

1. every memory's vector is computed with the new embedder, in batches, outside any transaction;
2. one short transaction swaps: the vector table is recreated empty for the new dimensions, the
   vector change log is emptied (every process's in-process index reloads), the embedder record
   changes (every other open process gets :class:`EmbedderMismatchError` at its next embedding and
   reopens), and ``embedder_info.refill_after`` is set to 0: "memories above this id may lack a
   vector";
3. :func:`fill` puts the vectors in, memory id by memory id, in the bounded batches of every bulk
   operation (``maintenance.job_batch_seconds``), advancing ``refill_after`` in the same
   transactions, and clears it at the end.

Until the fill has passed a memory, that memory is found by keyword, tag and signature but not by
vector, and a writer's near-duplicate check does not see it (a duplicate written meanwhile is kept
as its own memory). A crash during the fill leaves ``refill_after`` where the last batch put it:
:meth:`MemoryStore.backfill_embeddings` (and the ``backfill`` job) resume from there, embedding what
they find (the vectors computed in step 1 were only in the crashed process's memory). A crash before
the swap leaves the old vectors and record as they were.

A memory written or changed between step 1 and its batch is embedded in step 3, before its batch's
transaction; one a writer with the new embedder already gave a vector is left as that writer wrote
it; one that changed after its vector was made is flagged ``embedding_pending`` for the backfill.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from .embedders import check_vectors
from .vector_index import VectorIndex

if TYPE_CHECKING:
    from .store import MemoryStore

__all__ = ["reembed", "fill", "refill_after"]

PAGE = 2_000  # memories read (and, when not embedded beforehand, embedded) per page of the fill


def refill_after(store: MemoryStore) -> int | None:
    """The id above which memories may still lack their vector (a fill in progress or
    interrupted), or None when none may."""
    row = store._core.backend.execute("SELECT refill_after FROM embedder_info WHERE id = 1").fetchone()
    return None if row is None or row[0] is None else int(row[0])


def reembed(store: MemoryStore, batch_size: int, progress: Callable[[int, int], None] | None) -> int:
    """See :meth:`MemoryStore.reembed`; returns how many memories the store held at the swap."""
    c = store._core
    e = c.embedder
    rows = c.backend.execute("SELECT id, content FROM memories ORDER BY id").fetchall()
    total = len(rows)
    staged: dict[int, tuple[str, np.ndarray]] = {}
    for i in range(0, total, batch_size):
        chunk = rows[i : i + batch_size]
        vecs = check_vectors(e, [r[1] for r in chunk], e.embed_batch([r[1] for r in chunk]))
        for (mid, content), vec in zip(chunk, vecs):
            staged[mid] = (content, np.asarray(vec, dtype=np.float32))
        if progress:
            progress(min(i + batch_size, total), total)
    with c.backend.write() as conn:
        c.backend.create_vector_table(e.dimensions)
        conn.execute("DELETE FROM vector_changes")
        conn.execute(
            "UPDATE embedder_info SET name = ?, dimensions = ?, recorded_at = ?, refill_after = 0 WHERE id = 1",
            (e.name, e.dimensions, c.now()),
        )
        held = int(conn.execute("SELECT COUNT(*) FROM memories").fetchone()[0])
    c.vectors_enabled = True
    c.embedder_record = (e.name, e.dimensions)
    c.index = (
        VectorIndex(e.dimensions) if store.settings.vector_search == "memory" and c.backend.local_vector_index else None
    )
    fill(store, staged)
    return held


def fill(store: MemoryStore, staged: dict[int, tuple[str, np.ndarray]] | None = None) -> int:
    """Give every memory above ``refill_after`` its vector, in bounded batches; return how many
    vectors were put. ``staged``: vectors already computed by id (with the content they are of)."""
    from .jobs.batches import for_store, run_steps

    c = store._core
    b = c.backend
    last = refill_after(store)
    if last is None:
        return 0
    staged = staged or {}
    done = 0
    with for_store(store) as batch:
        while True:
            page = b.execute(
                "SELECT id, content FROM memories WHERE id > ? ORDER BY id LIMIT ?", (last, PAGE)
            ).fetchall()
            if not page:
                with batch.transaction(b) as conn:
                    c.check_embedder()
                    conn.execute("UPDATE embedder_info SET refill_after = NULL WHERE id = 1")
                return done
            vectors = _page_vectors(store, page, staged)
            ids = [int(r[0]) for r in page]
            k = 0
            while k < len(ids):
                with batch.transaction(b) as conn:
                    c.check_embedder()  # another reembed since: its fill is not this one's
                    k, n = run_steps(
                        batch, ids, k, lambda part, conn=conn, vectors=vectors: _put(store, conn, part, vectors)
                    )
                    conn.execute("UPDATE embedder_info SET refill_after = ? WHERE id = 1", (ids[k - 1],))
                done += n
            last = ids[-1]


def _page_vectors(
    store: MemoryStore, page: list, staged: dict[int, tuple[str, np.ndarray]]
) -> dict[int, tuple[str, np.ndarray | None]]:
    """The vector of each memory of ``page`` (outside any transaction): the one computed before
    the swap when the content is still the same, else made now (None when the embedder is down and
    the store's policy is to flag the memory for the backfill instead)."""
    out: dict[int, tuple[str, np.ndarray | None]] = {}
    fresh: list[tuple[int, str]] = []
    for mid, content in page:
        got = staged.get(mid)
        if got is not None and got[0] == content:
            out[mid] = got
        else:
            fresh.append((mid, content))
    if fresh:
        vecs = store._core.embed([t for _, t in fresh])
        for k, (mid, content) in enumerate(fresh):
            out[mid] = (content, None if vecs is None else vecs[k])
    return out


def _put(store: MemoryStore, conn: Any, ids: list[int], vectors: dict[int, tuple[str, np.ndarray | None]]) -> int:
    """Inside a batch's transaction: the vectors of ``ids`` whose memory is still as it was read
    and has none yet; a memory whose content changed since, or whose vector could not be made, is
    flagged for the backfill."""
    c = store._core
    marks = ",".join("?" * len(ids))
    rows = conn.execute(
        "SELECT id, content, namespace, agent_id, scope, memory_type, archived, embedding_pending "
        f"FROM memories WHERE id IN ({marks})",
        ids,
    ).fetchall()
    have = c.backend.get_vectors([int(r[0]) for r in rows]).keys()
    puts, flag, unflag = [], [], []
    for mid, content, ns, agent, scope, mtype, archived, pending in rows:
        if mid in have:
            continue  # a writer with the new embedder gave it one
        got = vectors.get(mid)
        if got is None or got[0] != content or got[1] is None:
            flag.append(mid)
            continue
        puts.append((mid, ns, agent, scope, mtype, bool(archived), got[1]))
        if pending:
            unflag.append(mid)
    c.backend.put_vectors(puts)
    for value, part in ((1, flag), (0, unflag)):
        if part:
            conn.execute(
                f"UPDATE memories SET embedding_pending = {value} WHERE id IN ({','.join('?' * len(part))})", part
            )
    return len(puts)
