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
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar
from typing import Any

MAX_BATCH = 5_000  # rows per statement: well under every engine's bound-parameter limit
ID_PAGE = 50_000  # ids read per search by in_batches (outside the lock)
GAP = 0.005  # seconds between two batches with the lock released
CHECKPOINT_EVERY = 0.5  # seconds of batches' lock holds between two WAL checkpoints the job runs (SQLite)
SHARED_FOR = 2.0  # seconds after another connection's commit was seen during which batches checkpoint as SQLite does
STEP = 64  # at most this many rows per statement inside a batch, the clock checked between two (see run_steps)
STEP_SHARE = 8  # a step is sized to take at most 1/STEP_SHARE of the batch's budget at the last measured rate

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
    def __init__(
        self,
        target: float = 0.05,
        *,
        start: int = 50,
        lo: int = 10,
        hi: int = MAX_BATCH,
        gap: float = GAP,
        clock: Callable[[], float] = time.perf_counter,
    ):
        self.target, self.lo, self.hi, self.gap = target, lo, hi, gap
        self.size = max(lo, min(hi, start))
        self.clock = clock  # what run_steps reads between steps (a test gives a counter)
        self.per_key: float | None = None  # seconds a key took in the last step (None: no step measured yet)
        self.batches = 0
        self.unchecked = 0.0  # seconds of batches committed since the last checkpoint this batcher ran
        self.seen: int | None = None  # SQLite's data_version at the start of the last batch
        self.shared = False  # another connection committed between two batches less than SHARED_FOR ago
        self.shared_until = 0.0
        self.pinning = False  # inside ``with batcher``: a read transaction pins the WAL between checkpoints
        self.pin: Any = None  # the connection holding that read transaction, while it is open
        self.pin_backend: Any = None  # the batcher's own backend handle (SQLite), kept for its whole use
        self.backend: Any = None  # the backend its batches write to (checkpointed at the end)

    def step(self) -> int:
        """Keys for the next step of :func:`run_steps`: ``STEP``, or fewer once a step showed them
        slow, so that a step at the last measured rate takes at most ``1 / STEP_SHARE`` of the
        budget (a batch then ends within about that of its budget even when its keys cost far more
        than its size was sized for: the 64 vec0 moves of a vector rebuild step took 118 ms of CPU
        under load); at least one."""
        if not self.per_key:
            return STEP
        return max(1, min(STEP, int(self.target / STEP_SHARE / self.per_key)))

    def record(self, seconds: float) -> None:
        if seconds < self.target / 2:
            self.size = min(self.hi, self.size * 2)
        elif seconds > self.target:
            self.size = max(self.lo, int(self.size * self.target / seconds))

    @contextmanager
    def transaction(self, backend, *, cascades_off: bool = False) -> Iterator[Any]:
        """``backend.write()`` for one batch, timed from the moment it holds the lock to its commit
        (the wait for the lock is not the batch's cost: counting it, a batch behind another
        writer's transaction looked slow and the batches shrank to a few rows each).
        ``cascades_off``: SQLite's foreign-key actions off for this transaction (see
        :func:`delete_where`: the caller does what they would have done, set-based).

        On SQLite the batch's COMMIT runs no WAL checkpoint: the batches commit with the
        connection's automatic checkpoint off, and between two batches, once about
        ``CHECKPOINT_EVERY`` seconds of them have committed, the batcher checkpoints the WAL
        itself with the write lock free (:meth:`checkpoint`). Left on, SQLite checkpointed after
        every commit that found more than 1,000 pages in the WAL, which a bulk delete's batch
        (each row changes pages of a dozen indexes) crossed every batch or two: each checkpoint
        copied the same index pages again and synced the file twice; that was most of an 80k-row
        expire's time (39-73 s -> 26-30 s, docs/benchmarks.md).

        Another writer's commit would run that checkpoint instead, inside its own call, once the
        job's pages take the WAL past its threshold (measured: the probe's p50 28 -> 91 ms). Used
        as a context manager (``with Batcher(...) as batch``), the batcher keeps a read
        transaction open on a connection of its own from each of its checkpoints to the next (see
        :meth:`_pin`): a checkpoint copies no page while a reader may still need the database
        file as it was, so another writer's automatic checkpoint finds nothing it may copy and
        returns at once, and the job's pages are copied once every ``CHECKPOINT_EVERY`` seconds,
        by the job, as when it writes alone. Without the context manager (no place to close that
        connection), while another connection writes between batches (``PRAGMA data_version``
        changed) the batch's commit checkpoints as SQLite does, for ``SHARED_FOR`` seconds."""
        if self.gap and self.batches:
            # the pause after the previous batch, taken here (before this one) so that the caller
            # counts a committed batch before anything can interrupt it
            if self.unchecked >= CHECKPOINT_EVERY:
                self.checkpoint(backend)
            time.sleep(self.gap)
        if self.pinning and self.pin is None:
            self._pin(backend)
        self.batches += 1
        with (
            _foreign_keys_off(backend) if cascades_off else nullcontext(),
            _no_autocheckpoint(backend) as automatic,
            backend.write() as c,
        ):
            t0 = time.perf_counter()
            if getattr(backend, "dialect", None) == "sqlite" and self.pin is None:
                version = c.execute("PRAGMA data_version").fetchone()[0]
                if self.seen is not None and version != self.seen:
                    # another writer: it may skip a gap (sleeping between its calls), so one is
                    # assumed for a while after its last commit seen
                    self.shared_until = time.monotonic() + SHARED_FOR
                self.shared = time.monotonic() < self.shared_until
                self.seen = version
                if self.shared and automatic:  # another writer: SQLite checkpoints at this commit, as before
                    c.execute(f"PRAGMA wal_autocheckpoint = {int(automatic)}")
            yield c
        spent = time.perf_counter() - t0
        self.unchecked = 0.0 if self.shared else self.unchecked + spent
        self.record(spent)

    def __enter__(self) -> Batcher:
        self.pinning = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.pinning = False
        try:
            self._unpin()
        finally:
            if self.pin_backend is not None:
                self.pin_backend.close()
                self.pin_backend = None
        if self.unchecked and self.backend is not None:
            self.checkpoint(self.backend)

    def _pin(self, backend) -> None:
        """Open a read transaction on the batcher's own connection (SQLite, a file). Begun right
        after a complete checkpoint it reads the database file itself, so no checkpoint may copy
        a page into that file while it lasts (https://www.sqlite.org/wal.html, "checkpoint
        starvation"); begun later, none past the WAL's end at that moment. :meth:`checkpoint`
        ends it first and begins it again after."""
        self.backend = backend
        if getattr(backend, "dialect", None) != "sqlite" or str(getattr(backend, "path", ":memory:")) == ":memory:":
            return
        if self.pin_backend is None:
            self.pin_backend = backend.fork()
        conn = self.pin_backend.conn
        conn.execute("BEGIN")
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()  # a read starts the snapshot
        self.pin = conn

    def _unpin(self) -> None:
        if self.pin is not None:
            pin, self.pin = self.pin, None
            pin.execute("COMMIT")

    def checkpoint(self, backend) -> None:
        """A passive WAL checkpoint (SQLite; nothing elsewhere), run with the write lock free: it
        copies what the batches committed into the database file without waiting for anyone (a
        reader's snapshot or another checkpoint leaves the rest to the next one)."""
        self.unchecked = 0.0
        if getattr(backend, "dialect", None) == "sqlite" and not backend.in_transaction:
            pinned = self.pin is not None
            self._unpin()
            backend.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
            if pinned and self.pinning:
                self._pin(backend)


@contextmanager
def _no_autocheckpoint(backend) -> Iterator[int]:
    """SQLite's automatic WAL checkpoint off for one batch's commit on this connection (restored
    after it); yields the connection's setting (0 elsewhere); see :meth:`Batcher.transaction`."""
    if getattr(backend, "dialect", None) != "sqlite":
        yield 0
        return
    with backend.lock:
        before = backend.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0]
        backend.conn.execute("PRAGMA wal_autocheckpoint = 0")
        try:
            yield int(before)
        finally:
            backend.conn.execute(f"PRAGMA wal_autocheckpoint = {int(before)}")


@contextmanager
def _foreign_keys_off(backend) -> Iterator[None]:
    """SQLite's ``foreign_keys`` off around one write transaction of this connection (the pragma
    is a no-op inside a transaction, so it is set before ``BEGIN`` and restored after ``COMMIT``),
    with the connection's lock held throughout so no other thread of the process writes
    meanwhile. Nested in an open transaction it changes nothing (the actions then run as well,
    finding nothing left to do)."""
    with backend.lock:
        if backend.in_transaction:
            yield
            return
        backend.conn.execute("PRAGMA foreign_keys = OFF")
        try:
            yield
        finally:
            backend.conn.execute("PRAGMA foreign_keys = ON")


def for_store(store) -> Batcher:
    """The store's batcher (``maintenance.job_batch_seconds``); use it as a context manager
    (``with for_store(store) as batch``) so that it pins the WAL between its checkpoints and
    checkpoints at the end (:meth:`Batcher.transaction`)."""
    return Batcher(store.settings.maintenance.job_batch_seconds)


def run_steps(batch: Batcher, keys: list, k: int, apply) -> tuple[int, int]:
    """One batch inside its transaction: ``apply(keys)`` over ``keys[k:]`` in steps of
    ``batch.step()`` keys (at most ``STEP``; fewer once keys showed slow), up to ``batch.size``
    keys or until the batch's time budget is spent, whichever comes first; returns ``(next k,
    changed)``. The budget bounds the lock hold even when rows suddenly cost more than the batch
    size was sized for (a busy machine, a cold cache): a batch sized from quick ones could
    otherwise hold the lock for seconds (issue 17: 1.8 s seen in a clear), and the step size
    bounds how far past its budget the last step takes it."""
    clock = batch.clock
    t0 = now = clock()
    end = min(len(keys), k + batch.size)
    n = 0
    while k < end:
        part = keys[k : min(end, k + batch.step())]
        k += len(part)
        s0 = now
        n += apply(part)
        now = clock()
        batch.per_key = (now - s0) / len(part)
        if now - t0 >= batch.target:
            break
    return k, n


def only(where: str) -> str:
    """``where`` as a condition no index can serve: a batch looks its rows up by key (``id IN
    (...)``) and re-checks ``where`` on each. Written plainly, SQLite's planner preferred an index
    on ``where``'s column (``namespace = ?`` for ``clear``: the namespace index) and scanned every
    matching row of the table for each batch, which made a bulk delete quadratic (a clear of 100k
    memories spent a third of its time in these re-checks)."""
    return f"(CASE WHEN ({where}) THEN 1 ELSE 0 END) = 1"


def in_batches(store, where: str, params: list, apply, kind: str, *, cascades_off: bool = False) -> int:
    """Run ``apply(conn, ids, marks)`` over the memories matching ``where`` in bounded batches:
    ids read outside the write lock (keyset order, a page of up to ``ID_PAGE`` at a time: one
    search per page, not one per batch, which at 100k rows cost more than the writes), ``apply``
    re-checks ``where`` for them inside its transaction (through :func:`only`) and returns how many it changed; counted
    in the job's tally as ``kind``. Rows that start matching while it runs (a later id) are taken
    by the next page; the loop ends when a page comes back empty."""
    b = store._core.backend
    total, last = 0, 0
    with for_store(store) as batch:
        while True:
            page = [
                r[0]
                for r in b.execute(
                    f"SELECT id FROM memories WHERE id > ? AND ({where}) ORDER BY id LIMIT ?", [last, *params, ID_PAGE]
                ).fetchall()
            ]
            if not page:
                return total  # (leaving the batcher checkpoints what its batches wrote)
            k = 0
            while k < len(page):
                with batch.transaction(b, cascades_off=cascades_off) as c:
                    k, n = run_steps(batch, page, k, lambda ids: apply(c, ids, ",".join("?" * len(ids))))
                total += n
                tally(kind, n)
            last = page[-1]


def cascades(backend) -> list[str] | None:
    """What deleting a memory makes SQLite's foreign keys do, as set-based statements over a batch
    of ids (``{marks}`` their placeholders), read from the schema itself (a table a later
    migration adds is included without listing it): ``DELETE`` from each ``ON DELETE CASCADE``
    child by its (indexed) key column, ``UPDATE ... SET NULL`` for each ``ON DELETE SET NULL``.
    ``None`` where that would not be the same as SQLite's own actions (another action, a key of
    several columns, a child that other tables reference in turn, or not SQLite): the caller then
    leaves the actions to SQLite."""
    if getattr(backend, "dialect", None) != "sqlite":
        return None
    rows = backend.execute(
        'SELECT m.name, f.id, f.seq, f."table", f."from", f.on_delete FROM sqlite_master m '
        "JOIN pragma_foreign_key_list(m.name) f WHERE m.type = 'table'"
    ).fetchall()
    mine = [r for r in rows if r[3] == "memories"]
    children = {r[0] for r in mine} - {"memories"}
    if any(r[2] for r in mine) or any(r[3] in children for r in rows):
        return None
    out = []
    for table, _, _, _, col, action in mine:
        if action == "CASCADE":
            out.append(f'DELETE FROM "{table}" WHERE "{col}" IN ({{marks}})')
        elif action == "SET NULL":
            out.append(f'UPDATE "{table}" SET "{col}" = NULL WHERE "{col}" IN ({{marks}})')
        else:
            return None
    return out


def delete_where(store, where: str, params: list) -> int:
    """Delete the memories matching ``where`` (with their index rows and vectors) in bounded
    batches, ids read outside the write lock and re-checked inside it; returns the count. On
    SQLite the vec0 rows are left for the compact job (``Core.delete(bulk=True)``), unless vec0 is
    what recall searches and more than ``VEC0_PURGE_AT`` wait: then they are purged at once.

    On SQLite a batch runs with the foreign keys' actions off and does their work itself, one
    statement per child table for the whole batch (:func:`cascades`): SQLite's own actions look
    up every child table once per deleted row, half the cost of deleting a memory (measured at
    100k memories: 66 -> 36 us a row)."""
    core = store._core
    actions = cascades(core.backend)

    def delete(c, ids, marks):
        doomed = [
            r[0]
            for r in c.execute(
                f"SELECT id FROM memories WHERE id IN ({marks}) AND {only(where)}", [*ids, *params]
            ).fetchall()
        ]
        if actions is None or not doomed:
            return core.delete(doomed, bulk=True)
        core.backend.unindex_text(doomed)
        core.backend.remove_vectors_later(doomed)
        for i in range(0, len(doomed), 500):
            chunk = doomed[i : i + 500]
            these = ",".join("?" * len(chunk))
            for sql in actions:
                c.execute(sql.format(marks=these), chunk)
            c.execute(f"DELETE FROM memories WHERE id IN ({these})", chunk)
        return len(doomed)

    n = in_batches(store, where, params, delete, "deleted", cascades_off=actions is not None)
    b = core.backend
    removed, purge = getattr(b, "removed_vectors", None), getattr(b, "purge_removed_vectors", None)
    if core.settings.vector_search == "vec0" and removed is not None and purge is not None:
        from harness_memory import sqlite_backend

        # searching vec0 itself, recall and the near-duplicate check step over the orphans a KNN
        # returns; past its largest k they would take the slow exact path until the weekly
        # compact: purged now, in the same bounded batches
        if removed() > sqlite_backend.VEC0_PURGE_AT:
            with for_store(store) as batch:
                purge(batch, progress=lambda k: tally("vectors_purged", k))
    return n


def delete_rows(store, table: str, where: str, params: list, kind: str, key: str = "id") -> int:
    """Delete the rows of ``table`` (a plain table with integer key ``key``) matching ``where`` in
    bounded batches: keys read outside the write lock, ``where`` re-checked inside each batch's
    transaction; counted in the job's tally as ``kind``; returns the count."""
    b = store._core.backend
    total, last = 0, None
    with for_store(store) as batch:
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
                return total  # (leaving the batcher checkpoints what its batches wrote)
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
