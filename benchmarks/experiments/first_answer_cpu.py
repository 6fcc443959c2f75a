"""A starting daemon's CPU until it answers its first call, and that first answer's own CPU.

    .venv/bin/python benchmarks/experiments/first_answer_cpu.py VAULT_TOP [--runs 5]
        [--base-src DIR]

VAULT_TOP is a kept `benchmarks/scale.py --keep` folder (`n<N>`: `vault`, `cache`, `state`).
Each run is a fresh `brainiac run` process (words only, jobs off) whose socket server, when it
begins to answer, records the process's CPU time (every thread) and wall time since the process
began and answers one `context` request in that process; when the daemon says READY=1, the CPU
of the rest of its start (from the answers' beginning, less that answer) is recorded too, and
the process exits. CPU seconds hold still on a shared machine where wall times do not.
--base-src DIR runs the same with another checkout's `daemon` folder first on PYTHONPATH,
alternating with this one.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROBE = """
import json, os, sys, time
t0 = time.perf_counter()
from brainiac.runtime import service, socket_server
answer, notify = socket_server.SocketServer.answer, service.systemd.notify
seen = {}
def timed(self):
    seen["wall"], seen["cpu"] = time.perf_counter() - t0, time.process_time()
    request = {"v": 2, "op": "context", "prompt": "When is the Atlas deadline?",
               "env": json.loads(os.environ["PROBE_ENV"])}
    c = time.process_time()
    assert "parts" in self._respond(request)
    seen["first_answer_cpu"] = time.process_time() - c
    answer(self)
def ready(*lines, **kw):
    if "READY=1" in lines:
        rest = time.process_time() - seen["cpu"] - seen["first_answer_cpu"]
        print(json.dumps({**seen, "rest_of_start_cpu": rest}), flush=True)
        os._exit(0)
    notify(*lines, **kw)
socket_server.SocketServer.answer, service.systemd.notify = timed, ready
sys.argv = ["brainiac", "--vault", sys.argv[1], "run"]
from brainiac.interfaces.entry import main
main()
"""
JOBS = ("rescan", "merge", "reflection", "promotion", "organization", "inbox", "backup")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("top", type=Path)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--base-src", type=Path)
    args = ap.parse_args()
    top = args.top.resolve()
    run = Path(tempfile.mkdtemp(prefix="fac-", dir="/tmp"))
    brainiac = {f"BRAINIAC_JOBS_{job.upper()}": "0" for job in JOBS}
    brainiac["BRAINIAC_RETRIEVAL_MEANING"] = "false"
    env = {
        **os.environ,
        **brainiac,
        "XDG_RUNTIME_DIR": str(run),
        "XDG_STATE_HOME": str(top / "state"),
        "XDG_CACHE_HOME": str(top / "cache"),
        "PROBE_ENV": json.dumps(brainiac),
    }
    variants = {"this": env}
    if args.base_src is not None:
        variants["base"] = {**env, "PYTHONPATH": str(args.base_src.resolve() / "daemon")}
    rows: dict[str, list[dict[str, float]]] = {name: [] for name in variants}
    for _ in range(args.runs):
        for name, e in variants.items():
            done = subprocess.run(
                [sys.executable, "-c", PROBE, str(top / "vault")],
                env=e,
                capture_output=True,
                text=True,
                check=True,
            )
            rows[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    for name, runs in rows.items():
        keys = ("cpu", "first_answer_cpu", "rest_of_start_cpu", "wall")
        med = {k: statistics.median(r[k] for r in runs) for k in keys}
        print(
            f"{name}: to the first answer, CPU {med['cpu']:.3f} s (the answer itself "
            f"{med['first_answer_cpu']:.3f}), wall {med['wall']:.3f} s; the rest of the start "
            f"to READY=1, CPU {med['rest_of_start_cpu']:.3f} s; medians of {len(runs)}: "
            f"CPU {[round(r['cpu'], 3) for r in runs]}"
        )


if __name__ == "__main__":
    main()
