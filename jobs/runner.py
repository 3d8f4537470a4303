"""Run a job safely among many processes: a lease row per job, a record per run.

APScheduler's job stores cannot be shared between processes, so every run first takes a
lease in our own database (``job_leases``): two schedulers on one database never run the
same job at once. The holder (``host:pid:nonce``) renews its lease from a heartbeat thread
every ``lease_heartbeat_seconds`` (default a third of ``lease_seconds``), so a live holder
keeps it however long the job runs. A lease whose holder is gone is taken over:

- same host, dead pid: at once;
- another host (its pid cannot be checked from here): once the lease was not renewed for
  ``lease_seconds`` (60 s by default).

With ``min_interval`` a run is skipped when another process already completed the job
within that interval (once per period, whoever fires first). Every run is recorded in
``job_runs`` with its status, counts and error.
"""

from __future__ import annotations

import json
import logging
import os
import socket
import threading
import traceback
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from harness_memory.jobs.batches import tallying
from harness_memory.redact import redact_text

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.store import MemoryStore


class JobRun(BaseModel):
    id: int | None
    job: str
    status: str
    counts: dict[str, Any] = {}
    error: str | None = None
    started_at: float
    finished_at: float | None = None
    holder: str


log = logging.getLogger("harness_memory.jobs")


def new_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this host (a zombie counts as gone)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # it exists, owned by another user
    except OSError:
        return True  # cannot tell: assume alive, the lease then expires on its own
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
        return stat[stat.rindex(b")") + 2 : stat.rindex(b")") + 3] not in (b"Z", b"X")
    except (OSError, ValueError):
        return True  # no /proc: os.kill said it exists


def holder_gone(holder: str) -> bool:
    """True when ``holder`` names a process of this host that no longer runs."""
    try:
        host, pid, _nonce = holder.rsplit(":", 2)
        pid_n = int(pid)
    except ValueError:
        return False
    if host != socket.gethostname() or pid_n == os.getpid():
        return False
    return not pid_alive(pid_n)


class _Heartbeat:
    """Renews a lease from a daemon thread on its own connection until stopped."""

    def __init__(self, store: MemoryStore, name: str, holder: str):
        m = store.settings.maintenance
        self.store, self.name, self.holder = store, name, holder
        self.lease = m.lease_seconds
        # at least twice per lease, whatever is configured: a renewal must land before expiry
        self.every = min(m.lease_heartbeat_seconds or self.lease / 3, self.lease / 2)
        self.lost = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{name}", daemon=True)

    def start(self) -> _Heartbeat:
        self._thread.start()
        return self

    def _run(self) -> None:
        from harness_memory.errors import StorageError

        core = self.store._core
        try:
            side = core.backend.fork()  # its own connection: the job's transactions do not block it
        except (StorageError, OSError) as exc:
            log.warning("lease heartbeat for %s cannot open the database: %s", self.name, exc)
            return
        except core.backend.DatabaseError as exc:
            log.warning("lease heartbeat for %s cannot open the database: %s", self.name, type(exc).__name__)
            return
        try:
            while not self._stop.wait(self.every):
                try:
                    with side.write() as c:
                        cur = c.execute(
                            "UPDATE job_leases SET expires_at = ? WHERE job = ? AND holder = ?",
                            (core.now() + self.lease, self.name, self.holder),
                        )
                except (StorageError, side.DatabaseError) as exc:  # busy beyond the timeout: next beat
                    log.warning("lease heartbeat for %s failed: %s", self.name, exc)
                    continue
                if cur.rowcount == 0:
                    self.lost = True
                    log.warning("lease of %s held by %s was taken over", self.name, self.holder)
                    return
        finally:
            side.close()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def run_job(
    store: MemoryStore, name: str, *, holder: str | None = None, min_interval: float | None = None, **kwargs: Any
) -> JobRun:
    from . import JOBS

    if name not in JOBS:
        from harness_memory.errors import InvalidInputError

        raise InvalidInputError(f"unknown job {name!r}; jobs: {', '.join(sorted(JOBS))}")
    core = store._core
    holder = holder or new_holder()
    if kwargs.get("dry_run"):  # a plan changes nothing: no lease, no run record
        started = core.now()
        counts = JOBS[name](store, **kwargs)
        return JobRun(
            id=None,
            job=name,
            status="dry_run",
            counts=counts,
            started_at=started,
            finished_at=core.now(),
            holder=holder,
        )
    lease = store.settings.maintenance.lease_seconds
    now = core.now()
    with core.backend.write() as c:
        held = c.execute("SELECT holder, expires_at FROM job_leases WHERE job = ?", (name,)).fetchone()
        if held is not None and held[1] > now and held[0] != holder and not holder_gone(held[0]):
            return JobRun(
                id=None, job=name, status="skipped", started_at=now, holder=holder, error=f"lease held by {held[0]}"
            )
        if held is not None:  # an expired lease or a dead holder: it died mid-run
            c.execute(
                "UPDATE job_runs SET status = 'failed', finished_at = ?, error = 'lease expired: holder died' "
                "WHERE job = ? AND status = 'running' AND holder = ?",
                (now, name, held[0]),
            )
        if min_interval is not None:
            last = c.execute(
                "SELECT MAX(started_at) FROM job_runs WHERE job = ? AND status = 'ok'", (name,)
            ).fetchone()[0]
            if last is not None and now - last < min_interval:
                return JobRun(
                    id=None, job=name, status="skipped", started_at=now, holder=holder, error="already run this period"
                )
        c.execute(
            "INSERT INTO job_leases(job, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?) "
            "ON CONFLICT(job) DO UPDATE SET holder = excluded.holder, acquired_at = excluded.acquired_at, "
            "expires_at = excluded.expires_at",
            (name, holder, now, now + lease),
        )
        run_id = c.execute(
            "INSERT INTO job_runs(job, started_at, status, holder) VALUES (?, ?, 'running', ?) RETURNING id",
            (name, now, holder),
        ).fetchone()[0]
    status, counts, error = "ok", {}, None
    beat = _Heartbeat(store, name, holder).start()
    try:
        with tallying() as committed:
            try:
                counts = JOBS[name](store, **kwargs)
            except BaseException as exc:  # recorded, then re-raised for on-demand callers
                # the batches committed before the failure stay (every job resumes by running again):
                # the record says what they changed; the message may quote data, so it is redacted
                status = "failed" if isinstance(exc, Exception) else "interrupted"
                error = (
                    redact_text("".join(traceback.format_exception_only(type(exc), exc)).strip()) or type(exc).__name__
                )
                counts = {**committed, "committed_before_stop": True}
                raise
    finally:
        beat.stop()
        if beat.lost and error is None:
            error = "the lease was taken over while the job ran"
        end = core.now()
        with core.backend.write() as c:
            c.execute(
                "UPDATE job_runs SET status = ?, finished_at = ?, counts = ?, error = ? WHERE id = ?",
                (status, end, json.dumps({k: v for k, v in counts.items() if k != "plan"}, default=str), error, run_id),
            )
            c.execute("DELETE FROM job_leases WHERE job = ? AND holder = ?", (name, holder))
    return JobRun(
        id=run_id, job=name, status=status, counts=counts, error=error, started_at=now, finished_at=end, holder=holder
    )


def job_status(store: MemoryStore, limit: int = 20) -> dict[str, Any]:
    b = store._core.backend
    runs = [
        dict(zip(("job", "status", "started_at", "finished_at", "counts", "error", "holder"), r))
        for r in b.execute(
            "SELECT job, status, started_at, finished_at, counts, error, holder FROM job_runs ORDER BY id DESC LIMIT ?",
            (limit,),
        )
    ]
    leases = [
        dict(zip(("job", "holder", "acquired_at", "expires_at"), r))
        for r in b.execute("SELECT job, holder, acquired_at, expires_at FROM job_leases ORDER BY job")
    ]
    last = {
        r[0]: dict(zip(("status", "started_at", "finished_at", "counts"), r[1:]))
        for r in b.execute(
            "SELECT job, status, started_at, finished_at, counts FROM job_runs WHERE id IN "
            "(SELECT MAX(id) FROM job_runs GROUP BY job)"
        )
    }
    return {"runs": runs, "leases": leases, "last": last}
