"""The jobs the daemon runs on a schedule, each also runnable by hand (`brainiac jobs run NAME`).

A job is a plain function of the memory and `now` that returns a `JobReport`; it never sleeps and
never reads the clock itself, so tests run a month of schedules in milliseconds. In the daemon,
index jobs (rescan, merge) run on the writer thread, and the memory jobs, which only write vault
files, on one job thread; the CLI runs them in its own process through the same functions. A memory
job holds the vault's job lock for its run (`jobs.job_lock`): the daemon's run and one started by
hand never work on the same events at once; the second is skipped, reported, and runs on its next
turn. The memory lifecycle jobs (reflection, promotion, organization) live in their own modules;
`LIFECYCLE` is their order when run together ("all").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.lifecycle.jobs import JobReport, job_lock, record_run
from brainiac.store import config

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


@dataclass(frozen=True)
class Job:
    name: str
    description: str
    run: Callable[[MemoryLike, dt.datetime, bool], JobReport]
    needs_index_writer: bool = False  # runs only where the index may be written
    # Seconds of CPU over a large vault (reads every note or file): never in the daemon's first
    # minute (scheduler.QUIET_START_S), when agents make their first calls.
    heavy: bool = False


def _rescan(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    """The safety net under the watcher: stat every file and re-index what changed."""
    if dry_run:
        return JobReport(
            "rescan", True, "dry run: would stat every note and re-index changes", dry_run=True
        )
    report = memory.refresh(force=True)
    if report is None:
        return JobReport("rescan", True, "skipped: the daemon owns the index")
    changed = report.changed + report.removed
    return JobReport(
        "rescan", True, f"{report.scanned} files checked, {len(changed)} changed", tuple(changed)
    )


def _merge(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    """Merge index segments when they have piled up (every segment adds to every query's time)."""
    index = memory.indexer.index
    before = index.segment_count()
    if dry_run:
        return JobReport("merge", True, f"dry run: {before} segment(s)", dry_run=True)
    merged = index.merge_segments()
    after = index.segment_count()
    return JobReport(
        "merge",
        True,
        f"{before} -> {after} segment(s)" if merged else f"{before} segment(s), nothing to merge",
    )


def _reflection(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs.reflection import reflect

    return reflect(memory, now, dry_run)


def _promotion(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs.promotion import promote

    return promote(memory, now, dry_run)


def _organization(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs.organization import organize

    return organize(memory, now, dry_run)


def _inbox(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.exchange.importer import finish_interrupted, import_inbox

    finished = not dry_run and finish_interrupted(memory)
    reports = import_inbox(memory, now, dry_run)
    prefix = "finished an interrupted import; " if finished else ""
    if not reports:
        return JobReport("inbox", True, prefix + "nothing waiting in inbox/", dry_run=dry_run)
    parts = [
        f"{Path(r.path).name}: {r.new} new, {r.duplicate} duplicate, {r.skipped} skipped"
        if r.ok
        else f"{Path(r.path).name}: rejected ({r.error})"
        for r in reports
    ]
    changed = () if dry_run or not any(r.new for r in reports) else ("memory/short_term.md",)
    return JobReport(
        "inbox",
        all(r.ok for r in reports),
        ("dry run: " if dry_run else "") + prefix + "; ".join(parts),
        changed,
        dry_run,
    )


def _recovery(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    """Put back the events a save from an older copy removed (journal.py). Promotion does this
    first too; the daemon runs it on its own when a save takes event lines out of the log, a
    note or the archive."""
    from brainiac.lifecycle.jobs.placement import recover

    found = recover(memory, now, dry_run)
    if not found.events:
        return JobReport("recovery", True, "no journalled event is missing", dry_run=dry_run)
    ids = ", ".join(sorted(e.id for e in found.events)[:10])
    more = " ..." if len(found.events) > 10 else ""
    verb = "dry run: would put back" if dry_run else "put back"
    return JobReport(
        "recovery",
        True,
        f"{verb} {len(found.events)} event(s) missing from the vault: {ids}{more}",
        tuple(found.changed),
        dry_run,
    )


def _conflicts(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.lifecycle.jobs.conflicts import merge_conflicts

    return merge_conflicts(memory, now, dry_run)


def _backup(memory: MemoryLike, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.exchange.backup import creation, snapshots

    if dry_run:
        files, size, folder = creation.preview(memory)
        return JobReport(
            "backup",
            True,
            f"dry run: would store {files} file(s), {snapshots.human_size(size)} before "
            f"compression, in {folder}",
            dry_run=True,
        )
    snap = creation.create(memory, now)
    skipped = f"; {len(snap.skipped)} skipped: {'; '.join(snap.skipped)}" if snap.skipped else ""
    # No `changed`: the snapshot lies outside the vault, and `changed` names vault files to index.
    return JobReport(
        "backup",
        True,
        f"{snap.path}: {snapshots.human_size(snap.size)}, {snap.files} file(s), verified; "
        f"{len(snap.removed)} old snapshot(s) removed{skipped}",
    )


JOBS: dict[str, Job] = {
    "reflection": Job(
        "reflection",
        "refresh the short-term summary, working memory, goals, facts and tasks from the events",
        _reflection,
    ),
    "promotion": Job(
        "promotion",
        "move events that left the short-term window into long-term notes (or the archive)",
        _promotion,
    ),
    "organization": Job(
        "organization",
        "decay strengths, archive faded notes, merge duplicates, repair facts, link, index",
        _organization,
        heavy=True,
    ),
    "recovery": Job(
        "recovery",
        "put back events that a save from an older copy removed (the event journal); promotion "
        "does it too, and the daemon whenever a save takes event lines out of the log or a note",
        _recovery,
    ),
    "inbox": Job(
        "inbox",
        "import the chat exports dropped into inbox/ and archive them (docs/import.md)",
        _inbox,
    ),
    "conflicts": Job(
        "conflicts",
        "merge the sync-conflict copies of the short-term memory and notes back into them "
        "(events by id, a person's text kept); the daemon runs it when one arrives",
        _conflicts,
    ),
    "backup": Job(
        "backup",
        "write a verified snapshot of the vault outside it; keep the last [backup] keep",
        _backup,
        heavy=True,
    ),
    "rescan": Job(
        "rescan",
        "re-index whatever the file watcher missed (a full stat of the vault)",
        _rescan,
        needs_index_writer=True,
        heavy=True,
    ),
    "merge": Job(
        "merge",
        "merge search-index segments when they pile up",
        _merge,
        needs_index_writer=True,
        heavy=True,
    ),
}


LIFECYCLE = ("reflection", "promotion", "organization")
HEAVY = frozenset(name for name, job in JOBS.items() if job.heavy)
# The jobs that move, merge or write events: on a vault synced between devices only the one
# device named in `[jobs] device` runs them (docs/multi-device.md), so no event is promoted or
# merged twice and no two devices rewrite one note. The others remember, import nothing, index.
DEVICE_JOBS = frozenset((*LIFECYCLE, "recovery", "inbox", "conflicts"))


def run(
    job: Job, memory: MemoryLike, now: dt.datetime, dry_run: bool, state_dir: Path
) -> JobReport:
    """Run one job, record the outcome; a failing job is reported, never raised."""
    from brainiac.lifecycle.jobs import edits

    started = time.perf_counter()
    texts: dict[str, tuple[str | None, str | None]] = edits.Recording()
    if job.name in DEVICE_JOBS and not config.runs_jobs(memory.config):
        # Not recorded as a run: the device that runs the jobs keeps their schedule.
        return JobReport(
            job.name, True, f"not run: {config.jobs_elsewhere(memory.config)}", dry_run=dry_run
        )
    try:
        with _exclusive(state_dir, job) as held:
            if held:
                with edits.recording() as texts:
                    report = job.run(memory, now, dry_run)
            else:
                report = JobReport(
                    job.name,
                    False,
                    "skipped: another memory job is running on this vault (the daemon's or one "
                    "started by hand); it runs again on its next turn",
                    dry_run=dry_run,
                    again=True,
                )
    except Exception as exc:  # a job's failure must not stop the daemon; it retries next turn
        report = JobReport(job.name, False, f"failed: {exc}", dry_run=dry_run)
    if not dry_run:
        record_run(state_dir, now, report, time.perf_counter() - started, texts)
    return report


@contextlib.contextmanager
def _exclusive(state_dir: Path, job: Job) -> Iterator[bool]:
    """Hold the vault's job lock for a memory job (yields False if another process holds it).

    Index jobs need no lock: only the index's owner runs them.
    """
    if job.needs_index_writer:
        yield True
        return
    with job_lock(state_dir) as held:
        yield held
