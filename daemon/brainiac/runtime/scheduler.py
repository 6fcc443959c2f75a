"""The job schedule: APScheduler decides when; the daemon does the work.

This is the only module that imports apscheduler. Each scheduled job only posts its name to the
daemon (`submit`): index jobs run on its writer thread between index updates, memory jobs on its
one job thread (see jobs/__init__.py), so no job runs twice at once. A run missed while the
machine slept or the daemon was down happens once, soon after (coalesced); the first run after a
start is due one interval after the job's last recorded run, or at once if that is already past.
A heavy job (a backup, a full rescan: seconds of CPU each) never runs in the daemon's first
minute, when agents are calling it for the first time: it catches up right after.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Callable, Mapping

log = logging.getLogger(__name__)
# APScheduler logs every run at INFO; the daemon logs each job's outcome itself.
logging.getLogger("apscheduler").setLevel(logging.WARNING)

_FIRST_RUN_DELAY_S = 5.0
# Backup and rescan wait a minute after a start: on a large vault they are seconds of CPU, and
# the agents' first context calls need the same cores.
QUIET_START_S = 60.0


def first_run(
    last: dt.datetime | None,
    minutes: float,
    now: dt.datetime,
    started: dt.datetime | None = None,
    heavy: bool = False,
) -> dt.datetime:
    """When a job first runs after a start: one interval after its last run, but not before a
    few seconds from now (a run missed during downtime or sleep happens once, soon), and for a
    heavy job not before QUIET_START_S after the daemon `started` (default: `now`)."""
    earliest = now + dt.timedelta(seconds=_FIRST_RUN_DELAY_S)
    if heavy:
        quiet_until = (started or now) + dt.timedelta(seconds=QUIET_START_S)
        earliest = max(earliest, quiet_until)
    if last is None:
        return earliest
    return max(last + dt.timedelta(minutes=minutes), earliest)


class Scheduler:
    def __init__(self, submit: Callable[[str], None]) -> None:
        self._submit = submit
        # Imported here: apscheduler (with asyncio and zoneinfo) would otherwise be loaded before
        # a starting daemon answers its first call, which needs none of it.
        from apscheduler.schedulers.background import BackgroundScheduler

        self._scheduler = BackgroundScheduler(
            timezone=dt.UTC,
            job_defaults={"coalesce": True, "max_instances": 1, "misfire_grace_time": None},
        )

    def start(
        self,
        intervals_minutes: Mapping[str, float],
        last_runs: Mapping[str, dt.datetime | None],
        now: dt.datetime,
        heavy: frozenset[str] = frozenset(),
        started: dt.datetime | None = None,
    ) -> None:
        """Schedule each job with a positive interval. `now`, `started` (when the daemon
        started; a reload schedules again without a second quiet minute) and `last_runs` are
        naive UTC; the `heavy` jobs wait out the daemon's first minute."""
        from apscheduler.triggers.interval import IntervalTrigger

        for name, minutes in intervals_minutes.items():
            if minutes <= 0:
                continue
            first = first_run(last_runs.get(name), minutes, now, started, name in heavy)
            self._scheduler.add_job(
                self._submit,
                IntervalTrigger(
                    minutes=minutes, start_date=first.replace(tzinfo=dt.UTC), timezone=dt.UTC
                ),
                args=[name],
                id=name,
                name=name,
                next_run_time=first.replace(tzinfo=dt.UTC),
            )
        self._scheduler.start()

    def next_runs(self) -> dict[str, dt.datetime | None]:
        return {job.id: job.next_run_time for job in self._scheduler.get_jobs()}

    def stop(self) -> None:
        if self._scheduler.running:
            self._scheduler.shutdown(wait=True)
