"""The journal's recovery racing a person's in-place saves of a note that holds events.

    .venv/bin/python benchmarks/in_place_survey.py [--seconds 3] [--seed 1] [--stall-ms 3]

benchmarks/concurrent_edits.py once ended with two events in two notes (seed 214, one run in 30):
the recovery job read `anna-berg.md` in the instant a nano-style save had emptied it, took its
events for removed and put them back in a new note, and the save's write then brought them back
where they were (docs/reliability.md, "The doubled events"). This loop makes that instant common:

- a person's note holds 10 journalled events (cut from the Event Log by hand, so that a put-back
  goes to another note, never back into it);
- an editor thread saves the note again and again the way nano and Obsidian Sync do: it reads
  it, opens it with O_TRUNC, waits 0-`--stall-ms` ms (a process that lost its CPU between the
  open and the write: 16 ms were seen in the seed-214 run), writes the same text and closes it,
  then rests 0-20 ms;
- the main thread runs `placement.recover` (the recovery job's work) back to back.

At the end each event must be in the vault exactly once. Prints the saves, the recoveries, the
events put back and the events doubled; exit status 1 if any event is doubled or lost.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import random
import re
import shutil
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

from brainiac import Memory
from brainiac.lifecycle.jobs import placement
from brainiac.store.vault import SHORT_TERM

ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")
NOW = dt.datetime(2026, 11, 22, 12, 0)
EVENTS = 10


def _note_with_events(memory: Memory, vault: Path) -> tuple[Path, list[str]]:
    """A person's note holding EVENTS journalled events they moved out of the Event Log."""
    start = NOW - dt.timedelta(days=1)
    ids = [
        memory.remember(
            f"step {i}: the kiln reached {900 + i} degrees", at=start + dt.timedelta(minutes=i)
        ).id
        for i in range(EVENTS)
    ]
    stm = vault / SHORT_TERM
    lines = stm.read_text().splitlines(keepends=True)
    moved = [line for line in lines if any(i in line for i in ids)]
    stm.write_text("".join(line for line in lines if line not in moved))
    note = vault / "memory/long_term/kiln-log.md"
    note.write_text("---\ntitle: Kiln log\n---\nKept by hand.\n\n## Sources\n" + "".join(moved))
    return note, ids


def run(seconds: float, seed: int, stall_s: float) -> tuple[str, bool]:
    rng = random.Random(seed)
    root = Path(tempfile.mkdtemp(prefix="brainiac-in-place-survey-"))
    try:
        for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_RUNTIME_DIR"):
            (root / var).mkdir(mode=0o700)
            os.environ[var] = str(root / var)
        vault = root / "vault"
        Memory.init(vault)
        with Memory(vault, refresh_interval_s=3600) as memory:
            note, ids = _note_with_events(memory, vault)
            until = time.monotonic() + seconds
            saves = [0]

            def editor() -> None:
                while time.monotonic() < until:
                    text = note.read_text()
                    with open(note, "w") as f:  # open(O_TRUNC): the note is empty from here
                        time.sleep(rng.uniform(0, stall_s))
                        f.write(text)  # to here
                    saves[0] += 1
                    time.sleep(rng.uniform(0, 0.02))

            thread = threading.Thread(target=editor)
            thread.start()
            recoveries = put_back = 0
            try:
                while time.monotonic() < until:
                    put_back += len(placement.recover(memory, NOW).events)
                    recoveries += 1
            finally:
                thread.join()
            counts: Counter[str] = Counter()
            for path in (vault / "memory").rglob("*.md"):
                counts.update(ID_RE.findall(path.read_text()))
        doubled = sum(1 for i in ids if counts[i] > 1)
        lost = sum(1 for i in ids if counts[i] == 0)
        line = (
            f"seed {seed}: {saves[0]} saves, {recoveries} recoveries, {put_back} event(s) put "
            f"back, doubled {doubled} of {len(ids)}, lost {lost}"
        )
        return line, not doubled and not lost
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--stall-ms", type=float, default=3.0)
    args = parser.parse_args(argv)
    line, ok = run(args.seconds, args.seed, args.stall_ms / 1000)
    print(line)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
