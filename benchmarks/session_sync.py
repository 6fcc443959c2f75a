"""A long session's edit path: `remember` (which syncs the short-term document) as one session
grows to `--events` messages, this version beside a base version, interleaved.

    .venv/bin/python benchmarks/session_sync.py --events 1500 --base-src /tmp/base/daemon

A benchmark, not a timed test. Each version runs in its own child process (the base with
`--base-src` first on PYTHONPATH) on its own fresh vault; the parent has them remember `--chunk`
events in turn, so both see the same load of a shared machine. Per version it prints the median
and p95 wall time of one `remember` (its sync included) over each third of the session, and the
CPU time of each third. Without `--base-src` only this version runs.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

T0 = dt.datetime(2026, 1, 5, 9, 0)
WORDS = [
    "the",
    "deadline",
    "moved",
    "to",
    "Monday",
    "and",
    "the",
    "design",
    "review",
    "needs",
    "the",
    "new",
    "budget",
    "figures",
    "before",
    "we",
    "ship",
    "atlas",
    "to",
    "the",
    "customer",
    "in",
    "Lisbon",
    "next",
    "week",
    "with",
    "the",
    "updated",
    "tiles",
]


def _worker(vault: Path) -> None:
    """Child: remember the events the parent asks for, one line of JSON timings per request."""
    from brainiac import Memory

    Memory.init(vault)
    memory = Memory(vault)
    memory.refresh(force=True)
    for line in sys.stdin:
        first, count = json.loads(line)
        walls, cpu = [], time.process_time()
        for k in range(first, first + count):
            text = " ".join(WORDS[(k * 7 + j) % len(WORDS)] for j in range(12)) + f" #{k}"
            started = time.perf_counter()
            memory.remember(
                text,
                role="user" if k % 2 else "assistant",
                session="long",
                at=T0 + dt.timedelta(minutes=k),
                now=T0 + dt.timedelta(days=30),
            )
            walls.append(time.perf_counter() - started)
        print(json.dumps({"walls": walls, "cpu": time.process_time() - cpu}), flush=True)
    memory.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--events", type=int, default=1500)
    ap.add_argument("--chunk", type=int, default=50)
    ap.add_argument("--base-src", type=Path, help="the base version's daemon/ folder")
    ap.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        _worker(args.worker)
        return 0
    versions = {"this": None, "base": args.base_src} if args.base_src else {"this": None}
    with tempfile.TemporaryDirectory(prefix="brainiac-session-sync-") as tmp:
        children = {}
        for name, src in versions.items():
            env = {
                **os.environ,
                "XDG_CACHE_HOME": f"{tmp}/{name}/cache",
                "XDG_STATE_HOME": f"{tmp}/{name}/state",
                "PYTHONHASHSEED": "0",
            }
            if src is not None:
                env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
            children[name] = subprocess.Popen(
                [sys.executable, __file__, "--worker", f"{tmp}/{name}/vault"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            )
        results: dict[str, dict[str, list[float]]] = {n: {"walls": [], "cpu": []} for n in versions}
        for first in range(0, args.events, args.chunk):
            count = min(args.chunk, args.events - first)
            for name, child in children.items():
                assert child.stdin is not None and child.stdout is not None
                child.stdin.write(json.dumps([first, count]) + "\n")
                child.stdin.flush()
                reply = json.loads(child.stdout.readline())
                results[name]["walls"] += reply["walls"]
                results[name]["cpu"].append(reply["cpu"])
        for child in children.values():
            assert child.stdin is not None
            child.stdin.close()
            child.wait()
    third = args.events // 3
    chunks_per_third = max(third // args.chunk, 1)
    print(f"| version | events | median ms | p95 ms | CPU s |  (load {os.getloadavg()[0]:.1f})")
    print("|---|---|---:|---:|---:|")
    for name, res in results.items():
        for i in range(3):
            walls = sorted(res["walls"][i * third : (i + 1) * third])
            cpu = sum(res["cpu"][i * chunks_per_third : (i + 1) * chunks_per_third])
            p95 = walls[int(len(walls) * 0.95) - 1]
            print(
                f"| {name} | {i * third}-{(i + 1) * third - 1} | "
                f"{statistics.median(walls) * 1000:.1f} | {p95 * 1000:.1f} | {cpu:.2f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
