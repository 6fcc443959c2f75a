"""What every job shares, whoever runs it: its report, the vault's job lock, the record of its
runs and their log.

Each job's run is recorded in the state directory (`jobs.json`: last run, result, duration), and
each run that changed something, or failed, adds its report to `jobs.log.jsonl` (`brainiac jobs
log`), with a unified diff of each file it changed (`jobs log --diff`; cut to `DIFF_LINES` lines a
file and `DIFF_BYTES` a run, so that one large run cannot push the others out of the log). A
memory job takes an exclusive lock (`jobs.lock` in the state directory) for its run, so the
daemon's run and one started by hand never work on the same events at once.

The jobs themselves live in this package's modules (reflection, promotion, organization); the table
of jobs the daemon schedules, and `run`, are in `jobs.table`, above them all.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import difflib
import json
import threading
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from brainiac.store import safe_io
from brainiac.store.lock import lock_file


@dataclass(frozen=True)
class JobReport:
    name: str
    ok: bool
    summary: str
    changed: tuple[str, ...] = ()
    dry_run: bool = False
    # Work was left that a run soon after can do (a file busy, the job lock held elsewhere): the
    # daemon runs the job again shortly, not only on its next turn.
    again: bool = False


@dataclass
class JobRecord:
    last_run: str | None = None  # ISO time of the last start ("now" as the job saw it)
    last_ok: bool | None = None
    last_summary: str = ""
    last_seconds: float = 0.0
    runs: int = 0
    failures: int = 0
    extra: dict[str, str] = field(default_factory=dict)


_RECORDS_LOCK = threading.Lock()
LOG_FILE = "jobs.log.jsonl"
_LOG_KEEP_BYTES = 2_000_000
DIFF_LINES = 200  # of one file's diff in the log
DIFF_BYTES = 100_000  # of all of one run's diffs (the log keeps 2 MB: 20 such runs at least)


def record_run(
    state_dir: Path,
    now: dt.datetime,
    report: JobReport,
    seconds: float,
    texts: dict[str, tuple[str | None, str | None]],
) -> None:
    """Record a run's outcome in `jobs.json`, and in the log (with a diff of each file in
    `texts`, from `edits.recording`) when it changed something or failed."""
    with _RECORDS_LOCK:  # the daemon's writer loop and its job thread both record runs
        records = load_records(state_dir)
        rec = records.setdefault(report.name, JobRecord())
        rec.last_run = now.isoformat(timespec="seconds")
        rec.last_ok = report.ok
        rec.last_summary = report.summary
        rec.last_seconds = round(seconds, 3)
        rec.runs += 1
        rec.failures += 0 if report.ok else 1
        save_records(state_dir, records)
        if report.changed or not report.ok:
            append_log(state_dir, now, report, rec.last_seconds, file_diffs(texts))


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
