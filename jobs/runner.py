"""Run a job safely among many processes: a lease row per job, a record per run.

APScheduler's job stores cannot be shared between processes, so every run first takes a
lease in our own database (``job_leases``): two schedulers on one database never run the
same job at once, and a crashed holder's lease expires after ``lease_seconds``. With
``min_interval`` a run is skipped when another process already completed the job within
that interval (once per period, whoever fires first). Every run is recorded in
``job_runs`` with its status, counts and error.
"""

from __future__ import annotations

import json
import os
import socket
import traceback
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

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


def new_holder() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"


def run_job(store: "MemoryStore", name: str, *, holder: str | None = None, min_interval: float | None = None,
            **kwargs: Any) -> JobRun:
    from . import JOBS

    if name not in JOBS:
        from harness_memory.errors import InvalidInputError

        raise InvalidInputError(f"unknown job {name!r}; jobs: {', '.join(sorted(JOBS))}")
    core = store._core
    holder = holder or new_holder()
    if kwargs.get("dry_run"):  # a plan changes nothing: no lease, no run record
        started = core.now()
        counts = JOBS[name](store, **kwargs)
        return JobRun(id=None, job=name, status="dry_run", counts=counts, started_at=started,
                      finished_at=core.now(), holder=holder)
    lease = store.settings.maintenance.lease_seconds
    now = core.now()
    with core.backend.write() as c:
        held = c.execute("SELECT holder, expires_at FROM job_leases WHERE job = ?", (name,)).fetchone()
        if held is not None and held[1] > now and held[0] != holder:
            return JobRun(id=None, job=name, status="skipped", started_at=now, holder=holder,
                          error=f"lease held by {held[0]}")
        if held is not None:  # an expired lease: its holder died mid-run
            c.execute("UPDATE job_runs SET status = 'failed', finished_at = ?, error = 'lease expired: holder died' "
                      "WHERE job = ? AND status = 'running' AND holder = ?", (now, name, held[0]))
        if min_interval is not None:
            last = c.execute("SELECT MAX(started_at) FROM job_runs WHERE job = ? AND status = 'ok'", (name,)).fetchone()[0]
            if last is not None and now - last < min_interval:
                return JobRun(id=None, job=name, status="skipped", started_at=now, holder=holder,
                              error="already run this period")
        c.execute("INSERT OR REPLACE INTO job_leases(job, holder, acquired_at, expires_at) VALUES (?, ?, ?, ?)",
                  (name, holder, now, now + lease))
        run_id = c.execute("INSERT INTO job_runs(job, started_at, status, holder) VALUES (?, ?, 'running', ?)",
                           (name, now, holder)).lastrowid
    status, counts, error = "ok", {}, None
    try:
        counts = JOBS[name](store, **kwargs)
    except Exception as exc:  # recorded, then re-raised for on-demand callers
        status, error = "failed", "".join(traceback.format_exception_only(type(exc), exc)).strip()
        raise
    finally:
        end = core.now()
        with core.backend.write() as c:
            c.execute("UPDATE job_runs SET status = ?, finished_at = ?, counts = ?, error = ? WHERE id = ?",
                      (status, end, json.dumps({k: v for k, v in counts.items() if k != "plan"}, default=str), error,
                       run_id))
            c.execute("DELETE FROM job_leases WHERE job = ? AND holder = ?", (name, holder))
    return JobRun(id=run_id, job=name, status=status, counts=counts, error=error, started_at=now, finished_at=end,
                  holder=holder)


def job_status(store: "MemoryStore", limit: int = 20) -> dict[str, Any]:
    b = store._core.backend
    runs = [dict(zip(("job", "status", "started_at", "finished_at", "counts", "error", "holder"), r))
            for r in b.execute("SELECT job, status, started_at, finished_at, counts, error, holder FROM job_runs "
                               "ORDER BY id DESC LIMIT ?", (limit,))]
    leases = [dict(zip(("job", "holder", "acquired_at", "expires_at"), r))
              for r in b.execute("SELECT job, holder, acquired_at, expires_at FROM job_leases ORDER BY job")]
    last = {r[0]: dict(zip(("status", "started_at", "finished_at", "counts"), r[1:])) for r in b.execute(
        "SELECT job, status, started_at, finished_at, counts FROM job_runs WHERE id IN "
        "(SELECT MAX(id) FROM job_runs GROUP BY job)")}
    return {"runs": runs, "leases": leases, "last": last}
