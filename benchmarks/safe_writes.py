"""What a compare-and-swap write costs over the floor of any crash-safe replace.

    .venv/bin/python benchmarks/safe_writes.py [--writes 300] [--sizes 4096,102400]

Each round, for each size, in alternation (so both see the same machine):

- **write_bytes**: what a job or `remember` does to a note: `safe_io.read_bytes`, then
  `safe_io.write_bytes` of one more line (temp file, fsync, check, exchange, the checks of what
  was swapped out, folder fsync);
- **floor**: a temp file, fsync, `os.replace`, folder fsync: the least a write that survives a
  crash and never shows a torn file can do.

Prints the median and p95 of each in milliseconds and the ratio of the medians. Run it with the
code before and after a change to safe_io (e.g. `PYTHONPATH=<old checkout>/daemon`) to see what
the change costs; the figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainiac.store import safe_io


def _floor_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.floor{safe_io.TMP_SUFFIX}")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    safe_io.fsync_dir(path.parent)


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(len(values) * 0.95) - 1)]


def run(writes: int, sizes: list[int], folder: Path) -> list[str]:
    lines = []
    for size in sizes:
        ours, floor = folder / f"cas-{size}.md", folder / f"floor-{size}.md"
        base = b"x" * (size - 1) + b"\n"
        ours.write_bytes(base)
        floor.write_bytes(base)
        _, fp = safe_io.read_bytes(ours)  # a first write waits for the file to be quiet
        safe_io.write_bytes(ours, base, fp)
        cas_ms: list[float] = []
        floor_ms: list[float] = []
        for i in range(writes):
            line = f"line {i}\n".encode()
            t = time.perf_counter()
            _, fp = safe_io.read_bytes(ours)
            safe_io.write_bytes(ours, base + line, fp)
            cas_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            _floor_write(floor, base + line)
            floor_ms.append((time.perf_counter() - t) * 1000)
        med_cas, med_floor = statistics.median(cas_ms), statistics.median(floor_ms)
        lines.append(
            f"{size:>7} B  write_bytes median {med_cas:.3f} ms p95 {_p95(cas_ms):.3f} ms | "
            f"floor median {med_floor:.3f} ms p95 {_p95(floor_ms):.3f} ms | "
            f"ratio {med_cas / med_floor:.2f}x"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--writes", type=int, default=300)
    parser.add_argument("--sizes", default="4096,102400")
    args = parser.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    with tempfile.TemporaryDirectory(prefix="brainiac-safe-writes-") as d:
        print(f"safe_io from {safe_io.__file__}; {args.writes} writes per size")
        for line in run(args.writes, sizes, Path(d)):
            print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
