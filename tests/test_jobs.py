"""Jobs and their schedule: plain functions of the memory and `now`, runnable by hand."""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

from brainiac import Memory
from brainiac import jobs as jobs_mod
from brainiac.scheduler import Scheduler, first_run
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)


def test_first_run_catches_up_once_after_downtime() -> None:
    assert first_run(None, 60, NOW) == NOW + dt.timedelta(seconds=5)
    # last run 10 minutes ago: the next one is due in 50
    assert first_run(NOW - dt.timedelta(minutes=10), 60, NOW) == NOW + dt.timedelta(minutes=50)
    # missed three times while the laptop slept: once, soon
    assert first_run(NOW - dt.timedelta(hours=3), 60, NOW) == NOW + dt.timedelta(seconds=5)


def test_heavy_jobs_wait_out_the_first_minute_after_a_start_then_catch_up() -> None:
    minute = dt.timedelta(seconds=60)
    # Never run, or missed while the daemon was down: a light job soon, a heavy one after the
    # daemon's first minute, once.
    assert first_run(None, 60, NOW, NOW, heavy=True) == NOW + minute
    assert first_run(NOW - dt.timedelta(days=2), 60, NOW, NOW, heavy=True) == NOW + minute
    assert first_run(NOW - dt.timedelta(days=2), 60, NOW, NOW) == NOW + dt.timedelta(seconds=5)
    # Due later than the first minute anyway: its own time.
    last = NOW - dt.timedelta(minutes=30)
    assert first_run(last, 60, NOW, NOW, heavy=True) == NOW + dt.timedelta(minutes=30)
    # Scheduled again by a reload two minutes after the start: no second quiet minute.
    assert first_run(None, 60, NOW, NOW - 2 * minute, heavy=True) == NOW + dt.timedelta(seconds=5)
    # Which jobs are heavy: the backup and the full rescan (issue 16 measured 6.5 CPU-s for the
    # two at once), and the others that read every note or the whole index.
    assert {"backup", "rescan"} <= jobs_mod.HEAVY
    assert not {"reflection", "promotion", "recovery", "inbox"} & jobs_mod.HEAVY


def test_the_scheduler_holds_heavy_jobs_past_the_first_minute() -> None:
    scheduler = Scheduler(lambda name: None)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    long_ago = now - dt.timedelta(days=1)
    scheduler.start(
        {"backup": 60, "rescan": 60, "reflection": 15},
        {"backup": None, "rescan": long_ago, "reflection": long_ago},
        now,
        jobs_mod.HEAVY,
        started=now,
    )
    try:
        runs = scheduler.next_runs()
        first = now.replace(tzinfo=dt.UTC) + dt.timedelta(seconds=60)
        assert runs["backup"] == first and runs["rescan"] == first
        light = runs["reflection"]
        assert light is not None and light <= now.replace(tzinfo=dt.UTC) + dt.timedelta(seconds=5)
    finally:
        scheduler.stop()


def test_scheduler_posts_due_jobs_and_stops() -> None:
    posted: list[str] = []
    done = threading.Event()

    def submit(name: str) -> None:
        posted.append(name)
        done.set()

    scheduler = Scheduler(submit)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    # `merge` last ran long ago, so it is due at once (after the short start delay);
    # `rescan` ran a moment ago and waits its full hour; `off` is not scheduled at all.
    scheduler.start(
        {"merge": 10, "rescan": 60, "off": 0},
        {"merge": now - dt.timedelta(days=1), "rescan": now},
        now,
    )
    try:
        runs = scheduler.next_runs()
        assert set(runs) == {"merge", "rescan"}
        assert runs["rescan"] is not None and runs["merge"] is not None
        assert runs["rescan"] - runs["merge"] > dt.timedelta(minutes=59)
        assert done.wait(timeout=15)
        assert posted == ["merge"]
    finally:
        scheduler.stop()


def test_jobs_run_records_and_lists(vault: Path) -> None:
    note = vault / "memory/long_term/new.md"
    note.write_text("---\ntitle: New\n---\nsome capybara facts\n")
    out = run_cli("--vault", str(vault), "jobs", "run", "rescan", check=True).stdout
    assert "rescan:" in out and "changed" in out
    listing = run_cli("--vault", str(vault), "jobs", "list", check=True).stdout
    assert "rescan" in listing and "merge" in listing and "ok" in listing
    assert "never run" in listing  # merge has not run yet
    dry = run_cli("--vault", str(vault), "jobs", "run", "merge", "--dry-run", check=True).stdout
    assert "dry run" in dry
    bad = run_cli("--vault", str(vault), "jobs", "run", "nope")
    assert bad.returncode == 2 and "no job 'nope'" in bad.stderr


def test_a_failing_job_is_recorded_not_raised(memory: Memory, tmp_path: Path) -> None:
    def boom(m: Memory, now: dt.datetime, dry_run: bool) -> jobs_mod.JobReport:
        raise RuntimeError("disk on fire")

    job = jobs_mod.Job("boom", "fails", boom)
    report = jobs_mod.run(job, memory, NOW, False, tmp_path)
    assert not report.ok and "disk on fire" in report.summary
    record = jobs_mod.load_records(tmp_path)["boom"]
    assert (record.last_ok, record.failures, record.last_run) == (False, 1, NOW.isoformat())
