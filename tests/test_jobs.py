"""Jobs and their schedule: plain functions of the memory and `now`, runnable by hand."""

from __future__ import annotations

import datetime as dt
import json
import threading
from pathlib import Path

from brainiac import Memory
from brainiac.api import job_table
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.runtime.scheduler import Scheduler, first_run
from conftest import remember_steps, run_cli
from helpers import run_all_jobs

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
    assert {"backup", "rescan"} <= job_table.HEAVY
    assert not {"reflection", "promotion", "recovery", "inbox"} & job_table.HEAVY


def test_the_scheduler_holds_heavy_jobs_past_the_first_minute() -> None:
    scheduler = Scheduler(lambda name: None)
    now = dt.datetime.now(dt.UTC).replace(tzinfo=None)
    long_ago = now - dt.timedelta(days=1)
    scheduler.start(
        {"backup": 60, "rescan": 60, "reflection": 15},
        {"backup": None, "rescan": long_ago, "reflection": long_ago},
        now,
        job_table.HEAVY,
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
    out = run_cli(
        "--vault", str(vault), "jobs", "run", "rescan", check=True, in_process=True
    ).stdout
    assert "rescan:" in out and "changed" in out
    listing = run_cli("--vault", str(vault), "jobs", "list", check=True, in_process=True).stdout
    assert "rescan" in listing and "merge" in listing and "ok" in listing
    assert "never run" in listing  # merge has not run yet
    dry = run_cli(
        "--vault", str(vault), "jobs", "run", "merge", "--dry-run", check=True, in_process=True
    ).stdout
    assert "dry run" in dry
    bad = run_cli("--vault", str(vault), "jobs", "run", "nope", in_process=True)
    assert bad.returncode == 2 and "no job 'nope'" in bad.stderr


def test_a_failing_job_is_recorded_not_raised(memory: Memory, tmp_path: Path) -> None:
    def boom(m: Memory, now: dt.datetime, dry_run: bool) -> jobs_mod.JobReport:
        raise RuntimeError("disk on fire")

    job = job_table.Job("boom", "fails", boom)
    report = job_table.run(job, memory, NOW, False, tmp_path)
    assert not report.ok and "disk on fire" in report.summary
    record = jobs_mod.load_records(tmp_path)["boom"]
    assert (record.last_ok, record.failures, record.last_run) == (False, 1, NOW.isoformat())


def test_jobs_log_diff_shows_what_each_run_changed_in_each_file(vault: Path) -> None:
    from brainiac.store.vault import SHORT_TERM

    remember_steps(vault, check=True)
    before = (vault / SHORT_TERM).read_text(encoding="utf-8")
    run_all_jobs(vault, check=True)
    after = (vault / SHORT_TERM).read_text(encoding="utf-8")
    assert before != after

    runs = json.loads(
        run_cli("--vault", str(vault), "jobs", "log", "--diff", "--json", in_process=True).stdout
    )
    by_job = {r["job"]: r for r in runs}
    promotion = by_job["promotion"]
    # Each changed file has its diff; promotion moved three events out of the short-term log
    # into a long-term note it created.
    assert set(promotion["changed"]) <= set(promotion["diffs"])
    stm_diff = promotion["diffs"][SHORT_TERM]
    assert stm_diff.startswith(f"--- a/{SHORT_TERM}\n+++ b/{SHORT_TERM}\n")
    removed = [line for line in stm_diff.splitlines() if line.startswith("-") and "Step 0" in line]
    assert removed, stm_diff
    new_notes = [rel for rel in promotion["diffs"] if rel.startswith("memory/long_term/")]
    assert new_notes
    assert "Step 0: tiling the bathroom floor" in promotion["diffs"][new_notes[0]]
    # Without --diff the JSON stays as it was (no diffs), and the text output shows them.
    plain = json.loads(
        run_cli("--vault", str(vault), "jobs", "log", "--json", in_process=True).stdout
    )
    assert all("diffs" not in r for r in plain)
    text = run_cli(
        "--vault", str(vault), "jobs", "log", "--diff", "--job", "promotion", in_process=True
    ).stdout
    assert f"--- a/{SHORT_TERM}" in text and "Step 0: tiling the bathroom floor" in text

    # Applying every run's diffs, oldest first, to the file as it was gives the file as it is.
    applied = before
    for run in reversed(runs):
        diff = run.get("diffs", {}).get(SHORT_TERM)
        if diff:
            applied = _apply_unified(applied, diff)
    assert applied == after

    # The diffs quote the memory: what `forget` removes goes from the job log too.
    gone = run_cli(
        "--vault", str(vault), "forget", "--matching", "bathroom floor", "--yes", in_process=True
    )
    assert gone.returncode == 0, gone.stderr
    left = run_cli("--vault", str(vault), "jobs", "log", "--diff", "--json", in_process=True).stdout
    assert "bathroom floor" not in left


def _apply_unified(text: str, diff: str) -> str:
    """A unified diff applied to `text` (hunks in order; enough for the test's check)."""
    import re

    old = text.splitlines(keepends=True)
    out: list[str] = []
    i = 0
    lines = diff.splitlines(keepends=True)[2:]
    for line in lines:
        m = re.match(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@", line)
        if m:
            start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
            out.extend(old[i:start])
            i = start
        elif line.startswith(" "):
            out.append(old[i])
            i += 1
        elif line.startswith("-"):
            i += 1
        elif line.startswith("+"):
            out.append(line[1:])
    out.extend(old[i:])
    return "".join(out)


def test_jobs_log_diffs_are_bounded_and_old_entries_still_print(vault: Path) -> None:
    big_before = "".join(f"line {i}\n" for i in range(1000))
    big_after = "".join(f"line {i} changed\n" for i in range(1000))
    diffs = jobs_mod.file_diffs({"memory/long_term/a.md": (big_before, big_after)})
    lines = diffs["memory/long_term/a.md"].splitlines()
    assert len(lines) == jobs_mod.DIFF_LINES + 1
    assert lines[-1].startswith("... ") and "more diff line(s) not kept" in lines[-1]
    # Many files: the run's diffs together stay under DIFF_BYTES.
    many = {f"memory/long_term/n{i}.md": (big_before, big_after) for i in range(100)}
    kept = jobs_mod.file_diffs(many)
    assert len(kept) == 100
    whole = [d for d in kept.values() if not d.startswith("(diff not kept")]
    assert 0 < len(whole) < 100
    assert sum(len(d.encode()) for d in whole) <= jobs_mod.DIFF_BYTES
    assert kept["memory/long_term/n99.md"].startswith("(diff not kept: this run's diffs are over")

    # A run recorded before diffs were kept (the old line format) still prints.
    with Memory(vault) as memory:
        state = memory.locations.state
    state.mkdir(parents=True, exist_ok=True)
    old = {
        "at": "2026-11-01T10:00:00",
        "job": "reflection",
        "ok": True,
        "summary": "refreshed the summary",
        "changed": ["memory/short_term.md"],
        "seconds": 0.1,
    }
    (state / jobs_mod.LOG_FILE).write_text(json.dumps(old) + "\n", encoding="utf-8")
    proc = run_cli("--vault", str(vault), "jobs", "log", "--diff", in_process=True)
    assert proc.returncode == 0, proc.stderr
    assert "2026-11-01T10:00:00 reflection ok: refreshed the summary" in proc.stdout
    assert "    memory/short_term.md" in proc.stdout
    assert "no diff: this run was recorded before brainiac kept diffs" in proc.stdout


def test_the_daemon_schedules_no_heavy_job_in_its_first_minute(tmp_path: Path) -> None:
    from brainiac.store.daemon_requests import read_status
    from helpers import Notifications, running_daemon, wait_for

    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True)  # no job has ever run: all are due at once
    ready = Notifications(tmp_path / "notify.sock")
    try:
        with running_daemon(vault, ready):
            with Memory(vault) as memory:
                state = memory.locations.state
            wait_for(lambda: bool((read_status(state) or {}).get("next_runs")), "the schedule")
            status = read_status(state) or {}
            started = dt.datetime.fromtimestamp(float(status["started"]), dt.UTC)  # type: ignore[arg-type]
            runs = {
                name: dt.datetime.fromisoformat(at)
                for name, at in status["next_runs"].items()  # type: ignore[union-attr]
                if at
            }
            for name in job_table.HEAVY & set(runs):
                assert runs[name] >= started + dt.timedelta(seconds=59), (name, runs[name])
            assert {"backup", "rescan"} <= set(runs)
            light = [runs[n] for n in ("reflection", "promotion", "inbox") if n in runs]
            assert light and all(at < started + dt.timedelta(seconds=30) for at in light)
    finally:
        ready.close()


def test_events_without_a_session_grow_one_note_per_day_over_many_runs(vault: Path) -> None:
    """Events said outside any session are grouped by day: a later run adds a day's later
    events to the note an earlier run started for it, never a second note that organization
    then merges away into a redirect stub."""
    (vault / ".brainiac/config.toml").write_text("[lifecycle]\nshort_term_window = 1\n")
    cli = ("--vault", str(vault))
    said: dict[str, str] = {}  # event id -> its day
    for day in ("2026-11-16", "2026-11-17", "2026-11-18"):
        for run, times in (("13:00", ("09:00", "09:01")), ("20:00", ("15:00", "15:01"))):
            for at in times:
                text = f"Glaze test at {at}: the celadon glaze crazed on the stoneware bowl"
                out = run_cli(
                    *cli, "remember", text, "--at", f"{day}T{at}", check=True, in_process=True
                ).stdout
                said[out.strip().removeprefix("^")] = day
            run_cli(
                *cli, "jobs", "run", "all", "--now", f"{day}T{run}", check=True, in_process=True
            )

    samples = ("anna-berg.md", "project-atlas.md")  # the new vault's example notes
    notes = {p: p.read_text() for p in (vault / "memory/long_term").glob("*.md")}
    notes = {p: text for p, text in notes.items() if p.name not in samples}
    assert not [p.name for p, text in notes.items() if "status: merged" in text]
    days = sorted({day for i, day in said.items() for text in notes.values() if f"^{i}" in text})
    assert days == ["2026-11-16", "2026-11-17", "2026-11-18"]
    for day in days:  # one note holds the day's promoted events, and nothing else
        [holder] = [p for p, text in notes.items() if f"({day})" in text.split("\n---", 1)[0]]
        held = {i for i in said if f"^{i}" in notes[holder]}
        assert held and {said[i] for i in held} == {day}
    everywhere = [
        i
        for p in (vault / "memory").rglob("*.md")
        if "indexes" not in p.parts
        for i in said
        for _ in range(p.read_text().count(f"^{i}"))
    ]
    assert sorted(everywhere) == sorted(said)  # every event once, wherever it lives
    assert len(notes) == 3
