"""Decay: relevance fades with time since it was last decayed; long-unused faint memories are archived.

relevance <- max(floor, relevance * (1 - rate) ** days_elapsed), applied from each memory's
``decayed_at`` (or creation) to now. Multiplication by powers is split-invariant, so running
twice, daily or once after a skipped week gives the same relevance; memories already at or
below the floor are left alone (decay never raises them). Recall adds a small boost.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore

from harness_memory.jobs.batches import for_store, in_batches, only, tally


def _rate_sql(store: MemoryStore) -> tuple[str, list]:
    return _rate_sql_of(store.settings.maintenance)


def _rate_sql_of(m) -> tuple[str, list]:
    rates = {t: r for t, r in m.decay_rates.items()}
    for t in m.decay_exempt_types:
        rates[t] = 0.0
    if not rates:
        return "?", [m.decay_rate_per_day]
    cases = " ".join("WHEN ? THEN ?" for _ in rates)
    params: list = []
    for t, r in rates.items():
        params += [t, float(r)]
    return f"(CASE memory_type {cases} ELSE ? END)", params + [m.decay_rate_per_day]


def current_relevance(settings, backend) -> tuple[str, list]:
    """``(sql, params)``: a memory's relevance decayed to now (the last parameter, to be given
    by the caller after these), without writing it. Pinned and archived memories and those at or
    below the floor keep their stored relevance. Every event that resets ``decayed_at`` (an
    access, a reinforcement, pinning or unpinning) first takes this value, so decay follows one
    rule whatever happens in between: relevance(t) = max(floor, r0 * (1 - rate) ** days) over
    the unpinned time since the last event, plus ``recall_boost`` per access."""
    m = settings.maintenance
    rate, rate_params = _rate_sql_of(m)
    elapsed = backend.greatest("0.0", "? - COALESCE(decayed_at, created_at)")
    sql = (
        f"(CASE WHEN pinned = 1 OR archived = 1 OR relevance_score <= ? THEN relevance_score "
        f"ELSE {backend.greatest('?', f'relevance_score * pow(1.0 - {rate}, {elapsed} / 86400.0)')} END)"
    )
    return sql, [m.decay_floor, m.decay_floor, *rate_params]


def decay(store: MemoryStore, *, progress: Callable[[int, int], None] | None = None, dry_run: bool = False) -> dict:
    core = store._core
    m = store.settings.maintenance
    now = core.now()
    b = core.backend
    lo, hi, n = b.execute("SELECT COALESCE(MIN(id), 0), COALESCE(MAX(id), 0), COUNT(*) FROM memories").fetchone()
    rate, rate_params = _rate_sql(store)
    elapsed = b.greatest("0.0", "? - COALESCE(decayed_at, created_at)")
    decayed = done = 0
    if not dry_run and n:
        with for_store(store) as batch:  # pins the WAL between its checkpoints, as every bulk job does
            last = lo - 1
            while last < hi:
                # the id range of the next batch, read outside the write lock
                size = batch.size
                row = b.execute(
                    "SELECT id FROM memories WHERE id > ? ORDER BY id LIMIT 1 OFFSET ?", (last, size - 1)
                ).fetchone()
                end = hi if row is None else row[0]
                with batch.transaction(b) as c:  # a short transaction per batch: writers wait one batch at most
                    cur = c.execute(
                        f"UPDATE memories SET relevance_score = CASE WHEN relevance_score <= ? THEN relevance_score "
                        f"ELSE {b.greatest('?', f'relevance_score * pow(1.0 - {rate}, {elapsed} / 86400.0)')} END, "
                        "decayed_at = ? "
                        f"WHERE id > ? AND id <= ? AND archived = 0 AND pinned = 0",
                        (m.decay_floor, m.decay_floor, *rate_params, now, now, last, end),
                    )
                    decayed += cur.rowcount
                tally("decayed", cur.rowcount)
                done += size  # (the batcher may have resized itself meanwhile)
                if progress:
                    progress(min(done, n), n)
                last = end
    archived = archive(store, now=now, dry_run=dry_run)
    return {"decayed": decayed, "archived": archived}


def archive(store: MemoryStore, *, now: float, dry_run: bool = False) -> int:
    """Archive memories unused for ``archive_after_days`` whose relevance fell below ``archive_below``
    (in bounded batches; each re-checks the condition inside its transaction)."""
    core = store._core
    b = core.backend
    m = store.settings.maintenance
    exempt = list(m.decay_exempt_types) + [t for t, r in m.decay_rates.items() if r == 0]
    placeholders = ",".join("?" * len(exempt)) or "''"
    cond = (
        "archived = 0 AND pinned = 0 AND relevance_score < ? AND COALESCE(last_accessed, created_at) < ? "
        f"AND memory_type NOT IN ({placeholders})"
    )
    params = [m.archive_below, now - m.archive_after_days * 86400, *exempt]
    if dry_run:
        return b.execute(f"SELECT COUNT(*) FROM memories WHERE {cond}", params).fetchone()[0]

    def archive_batch(c, ids, marks):
        done = [
            r[0]
            for r in c.execute(
                f"UPDATE memories SET archived = 1, relevance_score = ? WHERE id IN ({marks}) AND {only(cond)} RETURNING id",
                (m.archived_relevance, *ids, *params),
            )
        ]
        if done:  # the run's counts in job_runs record the archiving; no per-memory log rows
            b.set_vectors_archived(done, True)  # vec0 metadata + change log
        return len(done)

    return in_batches(store, cond, params, archive_batch, "archived")
