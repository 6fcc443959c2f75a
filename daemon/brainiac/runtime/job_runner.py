"""How the daemon's jobs are run: their schedule started from their records, and the one thread
memory jobs run on, one at a time, in the order they were asked for.

The mechanics only: whether a job may run now (the vault gone or not writable) is service.py's,
when one is due is scheduler.py's, and what it does is api/job_table.py's. Index jobs never come to
the thread: they run on the daemon's writer loop.
"""

from __future__ import annotations

import datetime as dt
import logging
import queue
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from brainiac.api import job_table
from brainiac.core import clock
from brainiac.core.heap import release_freed_memory
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.store import config as config_mod

if TYPE_CHECKING:
    from brainiac.api.memory import Memory
    from brainiac.runtime.scheduler import Scheduler

log = logging.getLogger(__name__)

_JOB_STOP_WAIT_S = 30.0


def start_schedule(scheduler: Scheduler, memory: Memory, started: dt.datetime) -> None:
    """Start `scheduler` with every job's interval (the configuration) and last run (jobs.json);
    `started`, when the daemon started, naive UTC (heavy jobs wait out its first minute)."""
    records = jobs_mod.load_records(memory.locations.state)
    last = {name: _parse(rec.last_run) for name, rec in records.items()}
    here = config_mod.runs_jobs(memory.config)
    intervals = {
        name: config_mod.job_interval_minutes(memory.config, name)
        if here or name not in job_table.DEVICE_JOBS
        else 0.0  # another device runs it (`[jobs] device`)
        for name in job_table.JOBS
    }
    scheduler.start(intervals, last, utcnow(), job_table.HEAVY, started)


def utcnow() -> dt.datetime:
    """Now as naive UTC, the scheduler's time (clock.py)."""
    return dt.datetime.now(dt.UTC).replace(tzinfo=None)


def _parse(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return clock.to_utc(dt.datetime.fromisoformat(value))  # records hold local times
    except ValueError:
        return None


class JobRunner:
    """One thread that runs the memory jobs, one at a time, in the order they were asked for.

    On stop it lets the job in progress finish (every job writes file by file with
    compare-and-swap, and promotion keeps a write-ahead plan, so even a kill mid-job loses
    nothing); jobs still queued are dropped and run on their next turn.
    """

    def __init__(self, done: Callable[[jobs_mod.JobReport], None]) -> None:
        self._queue: queue.SimpleQueue[tuple[job_table.Job, Memory] | None] = queue.SimpleQueue()
        self._done = done
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._work, name="brainiac-jobs", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def submit(self, job: job_table.Job, memory: Memory) -> None:
        self._queue.put((job, memory))

    def stop(self) -> None:
        self._stopping.set()
        self._queue.put(None)
        self._thread.join(timeout=_JOB_STOP_WAIT_S)
        if self._thread.is_alive():
            log.warning("a memory job is still running; stopping without waiting for it")

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None or self._stopping.is_set():
                return
            job, memory = item
            try:
                report = job_table.run(job, memory, clock.now(), False, memory.locations.state)
                release_freed_memory()  # a job that read every file: its pages, given back
                self._done(report)
            except OSError as exc:  # the job ran; recording it failed (a full disk): one line
                log.error("job %s: its run could not be recorded: %s", job.name, exc)
            except Exception:  # job_table.run reports failures; this is a last resort
                log.exception("job %s failed", job.name)
