"""The jobs the daemon runs on a schedule, each also runnable by hand (`brainiac jobs run NAME`).

A job is a plain function of the memory and `now` that returns a `JobReport`; it never sleeps and
never reads the clock itself, so tests run a month of schedules in milliseconds. In the daemon,
index jobs (rescan, merge) run on the writer thread, and the memory jobs, which only write vault
files, on one job thread; the CLI runs them in its own process through the same functions. A memory
job takes an exclusive lock (`jobs.lock` in the state directory) for its run, so the daemon's run
and one started by hand never work on the same events at once: the second is skipped, reported,
and runs on its next turn.

Each job's run is recorded in the state directory (`jobs.json`: last run, result, duration), and
each run that changed something, or failed, adds its report to `jobs.log.jsonl` (`brainiac jobs
log`), with a unified diff of each file it changed (`jobs log --diff`; cut to `DIFF_LINES` lines a
file and `DIFF_BYTES` a run, so that one large run cannot push the others out of the log). The
memory lifecycle jobs (reflection, promotion, organization) live in their own modules;
`LIFECYCLE` is their order when run together ("all").
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac import safe_io
from brainiac.lock import lock_file

if TYPE_CHECKING:
    from brainiac.memory import Memory


@dataclass(frozen=True)
class JobReport:
    name: str
    ok: bool
    summary: str
    changed: tuple[str, ...] = ()
    dry_run: bool = False


@dataclass(frozen=True)
class Job:
    name: str
    description: str
    run: Callable[[Memory, dt.datetime, bool], JobReport]
    needs_index_writer: bool = False  # runs only where the index may be written
    # Seconds of CPU over a large vault (reads every note or file): never in the daemon's first
    # minute (scheduler.QUIET_START_S), when agents make their first calls.
    heavy: bool = False


@dataclass
class JobRecord:
    last_run: str | None = None  # ISO time of the last start ("now" as the job saw it)
    last_ok: bool | None = None
    last_summary: str = ""
    last_seconds: float = 0.0
    runs: int = 0
    failures: int = 0
    extra: dict[str, str] = field(default_factory=dict)


def _rescan(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
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


def _merge(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    """Merge index segments when they have piled up (queries slow down ~1 ms per segment)."""
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


def _reflection(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.jobs.reflection import reflect

    return reflect(memory, now, dry_run)


def _promotion(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.jobs.promotion import promote

    return promote(memory, now, dry_run)


def _organization(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.jobs.organization import organize

    return organize(memory, now, dry_run)


def _inbox(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac.importer import finish_interrupted, import_inbox

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


def _recovery(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    """Put back the events a save from an older copy removed (journal.py). Promotion does this
    first too; the daemon runs it on its own when a save takes event lines out of the log, a
    note or the archive."""
    from brainiac import journal

    found = journal.recover(memory, now, dry_run)
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


def _backup(memory: Memory, now: dt.datetime, dry_run: bool) -> JobReport:
    from brainiac import backup

    if dry_run:
        files, size, folder = backup.preview(memory)
        return JobReport(
            "backup",
            True,
            f"dry run: would store {files} file(s), {backup.human_size(size)} before "
            f"compression, in {folder}",
            dry_run=True,
        )
    snap = backup.create(memory, now)
    skipped = f"; {len(snap.skipped)} skipped: {'; '.join(snap.skipped)}" if snap.skipped else ""
    # No `changed`: the snapshot lies outside the vault, and `changed` names vault files to index.
    return JobReport(
        "backup",
        True,
        f"{snap.path}: {backup.human_size(snap.size)}, {snap.files} file(s), verified; "
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
_RECORDS_LOCK = threading.Lock()
LOG_FILE = "jobs.log.jsonl"
_LOG_KEEP_BYTES = 2_000_000
DIFF_LINES = 200  # of one file's diff in the log
DIFF_BYTES = 100_000  # of all of one run's diffs (the log keeps 2 MB: 20 such runs at least)


def run(job: Job, memory: Memory, now: dt.datetime, dry_run: bool, state_dir: Path) -> JobReport:
    """Run one job, record the outcome; a failing job is reported, never raised."""
    from brainiac.jobs import edits

    started = time.perf_counter()
    texts: dict[str, tuple[str | None, str | None]] = edits.Recording()
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
                )
    except Exception as exc:  # a job's failure must not stop the daemon; it retries next turn
        report = JobReport(job.name, False, f"failed: {exc}", dry_run=dry_run)
    if not dry_run:
        with _RECORDS_LOCK:  # the daemon's writer loop and its job thread both record runs
            records = load_records(state_dir)
            rec = records.setdefault(job.name, JobRecord())
            rec.last_run = now.isoformat(timespec="seconds")
            rec.last_ok = report.ok
            rec.last_summary = report.summary
            rec.last_seconds = round(time.perf_counter() - started, 3)
            rec.runs += 1
            rec.failures += 0 if report.ok else 1
            save_records(state_dir, records)
            if report.changed or not report.ok:
                append_log(state_dir, now, report, rec.last_seconds, file_diffs(texts))
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


@contextlib.contextmanager
def job_lock(state_dir: Path, wait_s: float = 0.0) -> Iterator[bool]:
    """The vault's job lock (`jobs.lock`), which memory jobs and imports hold while they move
    events; waits up to `wait_s` for it, then yields whether it is held."""
    with lock_file(state_dir / "jobs.lock", wait_s) as held:
        yield held


_NOT_KEPT = "(diff not kept: this run's diffs are over the log's size limit)\n"


def file_diffs(texts: dict[str, tuple[str | None, str | None]]) -> dict[str, str]:
    """A unified diff per changed file (from `edits.recording`), each cut to DIFF_LINES lines
    and all together to DIFF_BYTES; a file past the budget says so instead."""
    out: dict[str, str] = {rel: _NOT_KEPT for rel in getattr(texts, "dropped", ())}
    budget = DIFF_BYTES
    for rel, (before, after) in sorted(texts.items()):
        if before == after:
            continue
        if budget <= 0:
            out[rel] = _NOT_KEPT  # nothing fits any more: not even computed
            continue
        lines = list(
            difflib.unified_diff(
                (before or "").splitlines(keepends=True),
                (after or "").splitlines(keepends=True),
                f"a/{rel}" if before is not None else "/dev/null",
                f"b/{rel}" if after is not None else "/dev/null",
            )
        )
        lines = [line if line.endswith("\n") else line + "\n" for line in lines]
        if len(lines) > DIFF_LINES:
            more = len(lines) - DIFF_LINES
            lines = [*lines[:DIFF_LINES], f"... {more} more diff line(s) not kept\n"]
        text = "".join(lines)
        size = len(text.encode("utf-8"))
        if size > budget:
            out[rel] = _NOT_KEPT
            continue
        budget -= size
        out[rel] = text
    return out


def append_log(
    state_dir: Path,
    now: dt.datetime,
    report: JobReport,
    seconds: float,
    diffs: dict[str, str] | None = None,
) -> None:
    """One JSON line per run that did something; the log is cut to its newest half when large."""
    path = state_dir / LOG_FILE
    entry: dict[str, object] = {
        "at": now.isoformat(timespec="seconds"),
        "job": report.name,
        "ok": report.ok,
        "summary": report.summary,
        "changed": list(report.changed),
        "seconds": seconds,
    }
    if diffs:
        entry["diffs"] = diffs
    line = json.dumps(entry)
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        f.write(line + "\n")
    if path.stat().st_size > _LOG_KEEP_BYTES:
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        safe_io.replace_file(path, "".join(lines[len(lines) // 2 :]).encode("utf-8"))


def read_log(state_dir: Path, limit: int = 20, job: str | None = None) -> list[dict[str, object]]:
    try:
        lines = (state_dir / LOG_FILE).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return []
    out: list[dict[str, object]] = []
    for line in reversed(lines):
        try:
            item = json.loads(line)
        except ValueError:
            continue
        if job is None or item.get("job") == job:
            out.append(item)
        if len(out) >= limit:
            break
    return out


def entry_text(line: str) -> str:
    """The text a log line quotes, decoded (JSON escapes hide non-ASCII text and line breaks):
    what `brainiac forget` looks for in it."""
    try:
        item = json.loads(line)
    except ValueError:
        return line
    if not isinstance(item, dict):
        return line
    diffs = item.get("diffs")
    parts = [str(item.get("summary", "")), *(map(str, item.get("changed") or []))]
    parts += [str(d) for d in diffs.values()] if isinstance(diffs, dict) else []
    return "\n".join(parts)


def keep_extra(state_dir: Path, name: str, key: str, value: str) -> None:
    """Keep a value of a job's own in its record (`extra`), for its next run."""
    with _RECORDS_LOCK:  # `run` records the outcome into the same file afterwards
        records = load_records(state_dir)
        records.setdefault(name, JobRecord()).extra[key] = value
        save_records(state_dir, records)


def load_records(state_dir: Path) -> dict[str, JobRecord]:
    try:
        raw = json.loads((state_dir / "jobs.json").read_text(encoding="utf-8"))
        return {name: JobRecord(**value) for name, value in raw.items()}
    except (OSError, ValueError, TypeError):
        return {}


def save_records(state_dir: Path, records: dict[str, JobRecord]) -> None:
    data = json.dumps({k: asdict(v) for k, v in records.items()}, indent=1)
    safe_io.replace_file(state_dir / "jobs.json", data.encode("utf-8"))
