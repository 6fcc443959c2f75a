"""An in-place save loop against brainiac's compare-and-swap writes, on one file, flat out.

    .venv/bin/python benchmarks/in_place_race.py [--seconds 10] [--writers 1] [--style nano]

benchmarks/concurrent_edits.py races the whole daemon at a person's pace, and a save lost in the
instants around `safe_io.write_bytes`'s exchange shows there about once in a dozen 15 s runs.
This loop puts the same instants under a microscope, so that one run of seconds says whether
they lose anything:

- `--writers` processes each read the file with `safe_io.read_bytes` and write it back with
  one more line (`safe_io.write_bytes`), as fast as they can. Their quiet wait for a file
  someone else wrote (`QUIET_S`, 0.1 s) is set to 0, or they would hardly ever write while the
  editor saves; the wait for an empty file stays, and a writer that reads an empty file skips
  it (the empty-file window is a different fault, docs/reliability.md);
- one editor process reads the file, adds a line with a numbered marker and saves it, every
  0-2 ms: `nano` in place (open with O_TRUNC, write), `vim` by renaming a new file over it, or
  `mix` (either at random).

At the end every marker the editor saved must be in the file, or in a conflict copy beside it
(safe_io keeps one there when the person's newest save took the place of the one it gave back).
Prints the saves, the markers lost, the markers only in conflict copies and the writers'
outcomes; exit status 1 if any marker was lost.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import random
import sys
import tempfile
import time
from pathlib import Path

from brainiac.core.errors import StaleWriteError
from brainiac.store import safe_io
from brainiac.store.vault import is_conflict_copy


def writer(path: Path, until: float, tag: str, results: mp.Queue[str]) -> None:
    safe_io.QUIET_S = 0.0
    written = stale = 0
    n = 0
    while time.time() < until:
        n += 1
        try:
            data, fp = safe_io.read_bytes(path)
            if not data:
                continue
            safe_io.write_bytes(path, data + f"{tag}-{n}\n".encode(), fp)
            written += 1
        except StaleWriteError:
            stale += 1
    results.put(f"writer {tag}: {written} written, {stale} refused as stale")


def editor(path: Path, until: float, style: str, saved: mp.Queue[list[int]]) -> None:
    rng = random.Random(0)
    markers: list[int] = []
    while time.time() < until:
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            continue
        if not text:
            continue
        marker = len(markers) + 1
        data = text + f"E-{marker}\n".encode()
        how = rng.choice(("nano", "vim")) if style == "mix" else style
        if how == "vim":
            tmp = path.with_name(f".{path.name}.swp")
            tmp.write_bytes(data)
            os.replace(tmp, path)
        else:
            with open(path, "wb") as f:
                f.write(data)
        markers.append(marker)
        time.sleep(rng.uniform(0, 0.002))
    saved.put(markers)


def _markers(path: Path) -> set[int]:
    return {int(line[2:]) for line in path.read_text().splitlines() if line.startswith("E-")}


def run(seconds: float, writers: int, style: str, folder: Path) -> tuple[list[str], int]:
    path = folder / "note.md"
    path.write_bytes(b"start\n")
    until = time.time() + seconds
    saved: mp.Queue[list[int]] = mp.Queue()
    results: mp.Queue[str] = mp.Queue()
    procs = [
        mp.Process(target=writer, args=(path, until, f"B{i}", results)) for i in range(writers)
    ]
    procs.append(mp.Process(target=editor, args=(path, until, style, saved)))
    for p in procs:
        p.start()
    markers = saved.get(timeout=seconds + 60)
    lines = [results.get(timeout=60) for _ in range(writers)]
    for p in procs:
        p.join(timeout=60)
    present = _markers(path)
    copies = [p for p in folder.iterdir() if is_conflict_copy(p.name)]
    in_copies = set().union(*(_markers(c) for c in copies)) if copies else set()
    lost = [m for m in markers if m not in present | in_copies]
    only_in_copies = [m for m in markers if m not in present and m in in_copies]
    leftovers = [p.name for p in folder.iterdir() if p.name.endswith(safe_io.TMP_SUFFIX)]
    lines[:0] = [
        f"editor ({style}) saves: {len(markers)}",
        f"saves lost: {len(lost)} {lost[:10]}",
        f"saves only in a conflict copy: {len(only_in_copies)} ({len(copies)} copies)",
        f"temp files left: {leftovers}",
    ]
    return lines, len(lost)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--writers", type=int, default=1)
    parser.add_argument("--style", choices=("nano", "vim", "mix"), default="nano")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="brainiac-in-place-race-") as d:
        lines, lost = run(args.seconds, args.writers, args.style, Path(d))
    print(f"safe_io from {safe_io.__file__}")
    print("\n".join(lines))
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
