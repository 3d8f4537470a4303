"""Recall's access bookkeeping, and the thread that writes it when a recall could not (issue 11).

A recall counts its hits (``access_count``, ``last_accessed``, a small relevance boost) and logs a
``'query'`` row per hit. It writes them at once when the write lock is free at that moment
(``try_write``, no waiting), in its own short transaction, as before this module. When another
writer holds the lock, the rows go to the store's :class:`AccessWriter` instead, and a background
thread of the store writes that backlog as soon as the lock is free, trying every
:data:`FLUSH_INTERVAL` seconds on its own connection (``Backend.fork``); while a backlog is
pending, later recalls add to it without trying the lock themselves (eight recallers trying it on
every call starved two writers in SQLite's busy waits). So a recall never waits for another
writer, and the rows of a recall that met a busy lock land within about ``FLUSH_INTERVAL`` of the
lock's release, without needing a later recall or ``close()``.

Why not always in the background: measured on 100k memories (docs/benchmarks.md, eleventh round),
a thread writing every recall's rows made a tight loop of recalls slower (p95 16-19 ms against
12-13 ms written inline, about 1 ms more CPU a recall): the thread's commits competed with the
recalls for the interpreter and the cores. Paced recalls gained little (p99 better, p95 the same).

What readers see: the store's other verbs first write a backlog (:meth:`AccessWriter.settle`,
without waiting for a busy lock), so ``get()``, ``stats()``, exports, jobs and ``apply()`` after a
recall see its bookkeeping; other processes see it when it is written. What can be lost: a process
killed without closing its store loses its backlog (only rows of recalls that met a busy lock); a
clean ``close()`` writes everything, waiting for the lock, and so does the interpreter's exit with
the store still open. Past :data:`MAX_PENDING_ROWS` of backlog a recall writes it itself, waiting
for the lock (back-pressure instead of unbounded memory).
"""

from __future__ import annotations

import dataclasses
import logging
import os
import threading
import time
from typing import TYPE_CHECKING, Any

from .errors import HarnessMemoryError

if TYPE_CHECKING:  # pragma: no cover
    from .core import Core

__all__ = ["FLUSH_INTERVAL", "MAX_PENDING_ROWS", "AccessWriter"]

log = logging.getLogger("harness_memory.access")

FLUSH_INTERVAL = 0.1  # seconds between the thread's attempts while a backlog waits for the lock
MAX_PENDING_ROWS = 4096  # past this many rows a recall writes them itself, waiting for the lock
ERROR_BACKOFF = 1.0  # seconds before the thread tries again after a write failed

# one recall's bookkeeping: (time of the recall, memory ids, fields of its log rows)
Entry = tuple[float, list[int], dict[str, Any]]


class AccessWriter:
    """The pending bookkeeping of one store's recalls and the thread that writes it."""

    def __init__(self, core: Core, write: Any) -> None:
        # ``write(core, connection, entries)`` writes entries in the caller's transaction
        self._core = core
        self._write_entries = write
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._mutex = threading.Lock()  # the pending list
        self._writing = threading.Lock()  # one batch at a time: the thread's, or a settle's
        self._wake = threading.Event()
        self._pending: list[Entry] = []
        self._rows = 0
        self._inflight = 0  # rows of the batch being written now (taken from _pending, not yet committed)
        self._thread: threading.Thread | None = None
        self._own: Core | None = None  # the thread's view of the core: its own backend handle
        self._closed = False
        self.failures = 0  # writes that failed (kept pending and retried)

    def _same_process(self) -> None:
        # a forked child inherits the parent's pending rows (the parent writes them), its locks in
        # whatever state the parent's threads held them, and no thread: start afresh
        if self._pid != os.getpid():
            self._reset()

    @property
    def pending_rows(self) -> int:
        """Rows (one per hit) not written yet, including a batch being written at this moment."""
        with self._mutex:
            return self._rows + self._inflight

    def add(self, entry: Entry) -> None:
        """One recall's bookkeeping: written now if the write lock is free and no backlog waits;
        otherwise added to the backlog, which the thread writes once the lock is free."""
        self._same_process()
        with self._mutex:
            # rows already pending are a backlog (a recall that found the lock free wrote its own): the thread's
            backlog = self._rows > 0
            self._pending.append(entry)
            self._rows += len(entry[1])
            rows = self._rows
        if rows >= MAX_PENDING_ROWS or self._closed:
            self.settle(wait=True)
            return
        if not backlog and self._writing.acquire(blocking=False):
            try:
                if self._write(self._core, wait=False):
                    return
            finally:
                self._writing.release()
        if self._thread is None:
            t = threading.Thread(target=self._run, name="harness-memory-access", daemon=True)
            self._thread = t
            t.start()
        elif not backlog:  # this call found the lock busy: the thread (asleep) starts trying
            self._wake.set()

    def _take(self) -> list[Entry]:
        with self._mutex:
            batch, self._pending, self._inflight, self._rows = self._pending, [], self._rows, 0
        return batch

    def _put_back(self, batch: list[Entry]) -> None:
        with self._mutex:
            self._pending[:0] = batch
            self._rows += sum(len(e[1]) for e in batch)
            self._inflight = 0

    def _written(self) -> None:
        with self._mutex:
            self._inflight = 0

    def _write(self, core: Core, *, wait: bool) -> bool:
        """Write everything pending through ``core``'s backend in one transaction (caller holds
        ``_writing``). ``wait=False``: only if the write lock is free now. True when it was written."""
        batch = self._take()
        if not batch:
            return True
        b = core.backend
        try_write = getattr(b, "try_write", None)
        try:
            with b.write() if wait or try_write is None else try_write() as c:
                if c is None:  # another writer holds the lock: later
                    self._put_back(batch)
                    return False
                self._write_entries(core, c, batch)
        except BaseException:
            self._put_back(batch)
            raise
        self._written()
        return True

    def _run(self) -> None:
        pause: float | None = FLUSH_INTERVAL
        while True:
            self._wake.wait(pause)  # (asleep without a backlog: add() wakes it when one forms)
            self._wake.clear()
            if self._closed or self._pid != os.getpid():
                return
            pause = FLUSH_INTERVAL
            if not self._rows:
                pause = None
                continue
            with self._writing:
                if self._closed:
                    return
                try:
                    if self._own is None:
                        self._own = dataclasses.replace(self._core, backend=self._core.backend.fork())
                    self._write(self._own, wait=False)
                except (HarnessMemoryError, OSError, self._core.backend.DatabaseError) as exc:
                    # kept pending; no row content in the message (a recall's rows carry no text)
                    self.failures += 1
                    log.warning("access bookkeeping not written yet (%s); retrying", type(exc).__name__)
                    pause = ERROR_BACKOFF

    def settle(self, *, wait: bool = False) -> bool:
        """Write what is pending now on the store's own handle, after any batch the thread is writing.
        ``wait=False``: only if the write lock is free now (a read of this process never waits for
        another writer). Inside a write transaction of the caller's it does nothing (the thread may be
        waiting for that very transaction). True when nothing is left pending."""
        self._same_process()
        if not self._rows and not self._writing.locked():
            return True
        if self._core.backend.in_transaction:
            return False
        with self._writing:
            return self._write(self._core, wait=wait)

    def close(self) -> None:
        """Stop the thread and write what is left, waiting for the lock (a clean close loses nothing)."""
        self._same_process()
        self._closed = True
        self._wake.set()
        t = self._thread
        if t is not None and t is not threading.current_thread():
            t.join(timeout=max(5.0, getattr(self._core.backend, "busy_timeout_ms", 30_000) / 1000 + 5.0))
        try:
            with self._writing:
                self._write(self._core, wait=True)
        finally:
            own, self._own = self._own, None
            if own is not None:
                own.backend.close()

    def wait_written(self, timeout: float = 5.0) -> bool:
        """Wait (polling) until the thread has written everything pending, without writing it on the
        caller's thread: for tests and benchmarks that look at the database from another process."""
        deadline = time.monotonic() + timeout
        while (self._rows or self._writing.locked()) and time.monotonic() < deadline:
            time.sleep(0.005)
        return not self._rows and not self._writing.locked()
