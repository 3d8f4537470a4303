"""Run the maintenance jobs on schedules with APScheduler 3.11.

Schedules come from ``Settings.maintenance.schedules``: ``interval:SECONDS`` or
``cron:MIN HOUR DOM MON DOW`` (UTC). Misfires are coalesced into one catch-up run within
``misfire_grace_seconds`` (a laptop that slept runs each job once, not once per missed
slot). Each run opens its own connection and goes through :func:`run_job` (lease + record),
with ``min_interval`` = half the period, so several schedulers on one database run each job
once per period.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from harness_memory.settings import Settings

log = logging.getLogger("harness_memory.jobs")


def parse_schedule(spec: str):
    """``(trigger, period_seconds)`` for ``interval:SECONDS`` or ``cron:m h dom mon dow``."""
    from apscheduler.triggers.cron import CronTrigger
    from apscheduler.triggers.interval import IntervalTrigger

    from harness_memory.errors import ConfigurationError

    kind, _, arg = spec.partition(":")
    if kind == "interval":
        try:
            seconds = float(arg)
        except ValueError as exc:
            raise ConfigurationError(f"bad schedule {spec!r}") from exc
        if seconds <= 0:
            raise ConfigurationError(f"bad schedule {spec!r}")
        return IntervalTrigger(seconds=seconds, timezone="UTC"), seconds
    if kind == "cron":
        fields = arg.split()
        if len(fields) != 5:
            raise ConfigurationError(f"cron schedules need 5 fields, got {spec!r}")
        minute, hour, day, month, dow = fields
        try:
            trig = CronTrigger(minute=minute, hour=hour, day=day, month=month, day_of_week=dow, timezone="UTC")
        except ValueError as exc:
            raise ConfigurationError(f"bad schedule {spec!r}: {exc}") from exc
        period = 7 * 86400 if dow != "*" else 86400 if hour != "*" else 3600
        return trig, period
    raise ConfigurationError(f"schedules are interval:SECONDS or cron:FIELDS, got {spec!r}")


def _run_scheduled(db: str, settings_json: str, name: str, min_interval: float, holder: str) -> None:
    from harness_memory.settings import Settings
    from harness_memory.store import MemoryStore

    from .runner import run_job

    settings = Settings.model_validate_json(settings_json)
    try:
        with MemoryStore(db, settings=settings) as store:
            run = run_job(store, name, holder=holder, min_interval=min_interval)
            log.info("job %s: %s %s", name, run.status, run.counts or run.error or "")
    except Exception:  # a failed run is recorded by run_job; keep the scheduler alive
        log.exception("job %s failed", name)


def build_scheduler(db: str | Path, settings: Settings, *, blocking: bool = False, only: list[str] | None = None):
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.schedulers.blocking import BlockingScheduler

    from . import JOBS
    from .runner import new_holder

    m = settings.maintenance
    cls = BlockingScheduler if blocking else BackgroundScheduler
    sched = cls(
        timezone="UTC",
        job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": m.misfire_grace_seconds},
    )
    holder = new_holder()
    payload = settings.model_dump_json()
    for name, spec in m.schedules.items():
        if only is not None and name not in only:
            continue
        if name not in JOBS:
            from harness_memory.errors import ConfigurationError

            raise ConfigurationError(f"schedule for unknown job {name!r}")
        trigger, period = parse_schedule(spec)
        sched.add_job(
            _run_scheduled,
            trigger,
            args=[str(db), payload, name, period / 2, holder],
            id=name,
            name=name,
            replace_existing=True,
        )
    return sched


def jobs_summary(sched) -> list[dict[str, Any]]:
    """Each scheduled job and its next run time (None before the scheduler starts: APScheduler's
    pending jobs have no next run time yet)."""
    return [{"job": j.id, "next_run": getattr(j, "next_run_time", None)} for j in sched.get_jobs()]
