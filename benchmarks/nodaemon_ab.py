"""A CLI `context` call without the daemon, two versions interleaved: wall time and CPU time.

    .venv/bin/python benchmarks/nodaemon_ab.py --base N10000/ --base-src /tmp/base --runs 20

A benchmark, not a timed test. `--base-src` holds the other version's `daemon/` folder (e.g. `git
archive main daemon | tar -x -C /tmp/base`, then `--base-src /tmp/base/daemon`). `--base` is the
folder `scale.py --keep` leaves for one size (`n10000/`: `vault/`, `cache/`, `state/`,
`prompts.json`), indexed already. Both versions run the same program (the `main` of
brainiac.interfaces.entry, as the console script does; the other version through PYTHONPATH) on the
same vault, index and manifest, with no daemon running (BRAINIAC_SOCKET=off as well). Each round
runs, for one prompt, `context --prompt P --budget 2000` of each version and `python -c pass`: a
noisy machine weighs on all alike. Both trees are byte-compiled first and PYTHONDONTWRITEBYTECODE is
dropped, so that neither pays for compiling its modules. CPU time is the child's user + system time
(wait4).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PY = sys.executable
WARMUP = 20  # scale.py's: the prompts after these are the timed ones
ENTRY = "import sys; sys.argv[0] = 'brainiac'; from brainiac.interfaces.entry import main; main()"


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q / 100 * (len(ordered) - 1)))]


def run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall time (spawn to exit), CPU time of the child (wait4), and its stdout."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout is not None and proc.stderr is not None
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd[:3]} exited {proc.returncode}:\n{err.decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, required=True, help="scale.py's n<size>/ folder")
    parser.add_argument("--base-src", type=Path, required=True, help="the other daemon/ folder")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    vault = args.base / "vault"
    prompts = json.loads((args.base / "prompts.json").read_text(encoding="utf-8"))[WARMUP:]
    this_src = HERE.parent / "daemon"
    for src in (args.base_src, this_src):
        compileall.compile_dir(str(src), quiet=1)
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONDONTWRITEBYTECODE"}}
    env.update(
        XDG_CACHE_HOME=str(args.base / "cache"),
        XDG_STATE_HOME=str(args.base / "state"),
        PYTHONHASHSEED="0",
        BRAINIAC_SOCKET="off",
    )
    versions = {"base": str(args.base_src), "this branch": str(this_src)}
    samples: dict[str, list[tuple[float, float]]] = {k: [] for k in [*versions, "python -c pass"]}
    load_start = os.getloadavg()
    for i in range(args.runs):
        prompt = prompts[i % len(prompts)]
        for name, src in versions.items():
            cmd = [PY, "-c", ENTRY, "--vault", str(vault), "context", "--prompt", prompt]
            wall, cpu, out = run([*cmd, "--budget", "2000"], {**env, "PYTHONPATH": src})
            if b"## User Prompt" not in out:
                raise RuntimeError(f"{name}: no context printed")
            samples[name].append((wall, cpu))
        wall, cpu, _ = run([PY, "-c", "pass"], env)
        samples["python -c pass"].append((wall, cpu))
    print(f"load average {load_start[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")
    print("| no-daemon `context` (ms) | wall p50 | wall p95 | CPU p50 | CPU p95 |")
    print("|---|---:|---:|---:|---:|")
    for name, rows in samples.items():
        walls = [w * 1e3 for w, _ in rows]
        cpus = [c * 1e3 for _, c in rows]
        print(
            f"| {name} | {statistics.median(walls):.0f} | {pct(walls, 95):.0f} "
            f"| {statistics.median(cpus):.0f} | {pct(cpus, 95):.0f} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
