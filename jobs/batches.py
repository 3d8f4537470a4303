"""Bounded write batches: a bulk operation commits often, so no other writer waits long.

A :class:`Batcher` sizes each batch so that its write transaction holds the lock about ``target``
seconds (``settings.maintenance.job_batch_seconds``, 50 ms by default; the wait for the lock is
not counted): it starts small, doubles while transactions are quick, and shrinks in proportion
when one was slow. Between two
batches it pauses ``GAP`` seconds with the lock released, longer than a waiting writer's poll
interval (``SQLiteBackend._begin``), so a writer in another process takes the lock in that gap
and waits about one batch at most (without the pause the job took the lock back at once and a
waiter could miss many gaps in a row).
Every batch re-checks its condition inside its transaction (rows may have changed since they
were read), so a bulk operation interrupted anywhere is resumed by running it again.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

MAX_BATCH = 5_000  # rows per statement: well under every engine's bound-parameter limit
ID_PAGE = 50_000  # ids read per search by in_batches (outside the lock)
GAP = 0.005  # seconds between two batches with the lock released
STEP = 64  # rows per statement inside a batch, the clock checked between two (see run_steps)

# what the running job has committed so far, batch by batch: the run record of a job that is
# interrupted (SIGINT, SIGTERM, an error) still says what it changed (a batch that committed in
# the instant a signal arrived may be missing: Python can raise between a COMMIT and the count)
_TALLY: ContextVar[dict | None] = ContextVar("harness_memory_job_tally", default=None)


def tally(key: str, n: int) -> None:
    """Count ``n`` committed changes of kind ``key`` for the running job's record."""
    t = _TALLY.get()
    if t is not None and n:
        t[key] = t.get(key, 0) + n


@contextmanager
def tallying() -> Iterator[dict]:
    t: dict = {}
    token = _TALLY.set(t)
    try:
        yield t
    finally:
        _TALLY.reset(token)


class Batcher:
    def __init__(self, target: float = 0.05, *, start: int = 50, lo: int = 10, hi: int = MAX_BATCH, gap: float = GAP):
        self.target, self.lo, self.hi, self.gap = target, lo, hi, gap
        self.size = max(lo, min(hi, start))
        self.batches = 0

    def record(self, seconds: float) -> None:
        if seconds < self.target / 2:
            self.size = min(self.hi, self.size * 2)
        elif seconds > self.target:
            self.size = max(self.lo, int(self.size * self.target / seconds))

    @contextmanager
    def transaction(self, backend) -> Iterator[Any]:
        """``backend.write()`` for one batch, timed from the moment it holds the lock to its commit
        (the wait for the lock is not the batch's cost: counting it, a batch behind another
        writer's transaction looked slow and the batches shrank to a few rows each)."""
        if self.gap and self.batches:
            # the pause after the previous batch, taken here (before this one) so that the caller
            # counts a committed batch before anything can interrupt it
            time.sleep(self.gap)
        self.batches += 1
        with backend.write() as c:
            t0 = time.perf_counter()
            yield c
        self.record(time.perf_counter() - t0)


def for_store(store) -> Batcher:
    return Batcher(store.settings.maintenance.job_batch_seconds)


def run_steps(batch: Batcher, keys: list, k: int, apply) -> tuple[int, int]:
    """One batch inside its transaction: ``apply(keys)`` over ``keys[k:]`` in steps of at most
    ``STEP`` keys, up to ``batch.size`` keys or until the batch's time budget is spent, whichever
    comes first; returns ``(next k, changed)``. The budget bounds the lock hold even when rows
    suddenly cost more than the batch size was sized for (a busy machine, a cold cache): a batch
    sized from quick ones could otherwise hold the lock for seconds (issue 17: 1.8 s seen in a
    clear)."""
    t0 = time.perf_counter()
    end = min(len(keys), k + batch.size)
    n = 0
    while k < end:
        part = keys[k : min(end, k + STEP)]
        k += len(part)
        n += apply(part)
        if time.perf_counter() - t0 >= batch.target:
            break
    return k, n


def only(where: str) -> str:
    """``where`` as a condition no index can serve: a batch looks its rows up by key (``id IN
    (...)``) and re-checks ``where`` on each. Written plainly, SQLite's planner preferred an index
    on ``where``'s column (``namespace = ?`` for ``clear``: the namespace index) and scanned every
    matching row of the table for each batch, which made a bulk delete quadratic (a clear of 100k
    memories spent a third of its time in these re-checks)."""
    return f"(CASE WHEN ({where}) THEN 1 ELSE 0 END) = 1"


def in_batches(store, where: str, params: list, apply, kind: str) -> int:
    """Run ``apply(conn, ids, marks)`` over the memories matching ``where`` in bounded batches:
    ids read outside the write lock (keyset order, a page of up to ``ID_PAGE`` at a time: one
    search per page, not one per batch, which at 100k rows cost more than the writes), ``apply``
    re-checks ``where`` for them inside its transaction (through :func:`only`) and returns how many it changed; counted
    in the job's tally as ``kind``. Rows that start matching while it runs (a later id) are taken
    by the next page; the loop ends when a page comes back empty."""
    b = store._core.backend
    batch = for_store(store)
    total, last = 0, 0
    while True:
        page = [
            r[0]
            for r in b.execute(
                f"SELECT id FROM memories WHERE id > ? AND ({where}) ORDER BY id LIMIT ?", [last, *params, ID_PAGE]
            ).fetchall()
        ]
        if not page:
            return total
        k = 0
        while k < len(page):
            with batch.transaction(b) as c:
                k, n = run_steps(batch, page, k, lambda ids: apply(c, ids, ",".join("?" * len(ids))))
            total += n
            tally(kind, n)
        last = page[-1]


def delete_where(store, where: str, params: list) -> int:
    """Delete the memories matching ``where`` (with their index rows and vectors) in bounded
    batches, ids read outside the write lock and re-checked inside it; returns the count. On
    SQLite the vec0 rows are left for the compact job (``Core.delete(bulk=True)``), unless vec0 is
    what recall searches and more than ``VEC0_PURGE_AT`` wait: then they are purged at once."""
    core = store._core

    def delete(c, ids, marks):
        return core.delete(
            [
                r[0]
                for r in c.execute(
                    f"SELECT id FROM memories WHERE id IN ({marks}) AND {only(where)}", [*ids, *params]
                ).fetchall()
            ],
            bulk=True,
        )

    n = in_batches(store, where, params, delete, "deleted")
    b = core.backend
    removed, purge = getattr(b, "removed_vectors", None), getattr(b, "purge_removed_vectors", None)
    if core.settings.vector_search == "vec0" and removed is not None and purge is not None:
        from harness_memory import sqlite_backend

        # searching vec0 itself, recall and the near-duplicate check step over the orphans a KNN
        # returns; past its largest k they would take the slow exact path until the weekly
        # compact: purged now, in the same bounded batches
        if removed() > sqlite_backend.VEC0_PURGE_AT:
            purge(for_store(store), progress=lambda k: tally("vectors_purged", k))
    return n


def delete_rows(store, table: str, where: str, params: list, kind: str, key: str = "id") -> int:
    """Delete the rows of ``table`` (a plain table with integer key ``key``) matching ``where`` in
    bounded batches: keys read outside the write lock, ``where`` re-checked inside each batch's
    transaction; counted in the job's tally as ``kind``; returns the count."""
    b = store._core.backend
    batch = for_store(store)
    total, last = 0, None
    while True:
        after = "" if last is None else f"{key} > ? AND "
        page = [
            r[0]
            for r in b.execute(
                f"SELECT {key} FROM {table} WHERE {after}({where}) ORDER BY {key} LIMIT ?",
                [*([] if last is None else [last]), *params, ID_PAGE],
            ).fetchall()
        ]
        if not page:
            return total
        k = 0
        while k < len(page):
            with batch.transaction(b) as c:
                k, n = run_steps(
                    batch,
                    page,
                    k,
                    lambda keys: (
                        c.execute(
                            f"DELETE FROM {table} WHERE {key} IN ({','.join('?' * len(keys))}) AND {only(where)}",
                            [*keys, *params],
                        ).rowcount
                    ),
                )
            total += n
            tally(kind, n)
        last = page[-1]
