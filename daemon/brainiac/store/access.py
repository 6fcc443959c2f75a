"""Which long-term notes were used, and when: being retrieved into a context counts as access.

Every assembled context appends one line to `access.jsonl` in the state directory (an O_APPEND
write of one short line: the daemon and CLI processes can both record without a lock, and notes
are not rewritten on every query). The organization job folds the log into each note's
`last_accessed` once a day, which is what decay counts from.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable
from pathlib import Path

LOG_FILE = "access.jsonl"
_FOLDING = "access.folding.jsonl"


def record(state_dir: Path, paths: Iterable[str], now: dt.datetime) -> None:
    paths = sorted(set(paths))
    if not paths:
        return
    line = json.dumps({"at": now.isoformat(timespec="seconds"), "paths": paths}) + "\n"
    state_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(state_dir / LOG_FILE, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, line.encode("utf-8"))
    finally:
        os.close(fd)


def fold(state_dir: Path, dry_run: bool = False) -> dict[str, dt.datetime]:
    """The latest access of each note since the last fold; the log is emptied unless `dry_run`.

    The log is renamed aside before reading, so accesses recorded meanwhile start a new log; a
    crash after the rename leaves the aside file, which the next fold reads first.
    """
    log, aside = state_dir / LOG_FILE, state_dir / _FOLDING
    if not dry_run and log.exists() and not aside.exists():
        os.replace(log, aside)
    latest: dict[str, dt.datetime] = {}
    for path in (aside, log) if dry_run else (aside,):
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except FileNotFoundError:
            continue
        for line in lines:
            try:
                item = json.loads(line)
                at = dt.datetime.fromisoformat(item["at"])
                paths = [str(p) for p in item["paths"]]
            except (ValueError, KeyError, TypeError):
                continue  # a torn last line after a crash: skip it
            for p in paths:
                if p not in latest or latest[p] < at:
                    latest[p] = at
    return latest


def done(state_dir: Path) -> None:
    """The folded accesses are in the notes: drop the aside file."""
    (state_dir / _FOLDING).unlink(missing_ok=True)
