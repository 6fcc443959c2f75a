"""CLI calls answered by a running daemon, two versions interleaved: wall time and CPU time.

    .venv/bin/python benchmarks/daemon_ab.py --vault V --base-src /tmp/base --runs 30

A benchmark, not a timed test. `--base-src` holds the other version's `daemon/brainiac/` (e.g.
`git archive main daemon | tar -x -C /tmp/base`); it runs as `python -m brainiac` with
PYTHONPATH pointing at it. The vault must be indexed already by this version, with this
process's XDG directories (scale.py --keep leaves one: its `n10000/` folder, with XDG_CACHE_HOME
and XDG_STATE_HOME set to its `cache` and `state`). The base gets a copy of the vault and of its
index and manifest, and each version its own daemon (jobs off), so each answers with its own
code. Each round runs, for one prompt: `context`, `hook user-prompt-submit` and `--version` of
each version (all as `python -m brainiac`, and this version's console script too) and `python -c
pass`; a noisy machine weighs on all alike. CPU time is the child's user + system time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "daemon"))

from brainiac.runtime import daemon_socket  # noqa: E402
from brainiac.store.locations import Locations  # noqa: E402

PY = sys.executable
BRAINIAC = str(Path(PY).with_name("brainiac"))
PROMPTS = [
    "Who owns the budget roadmap and what is the status of the project?",
    "When is the deadline for the harbour office move?",
    "What did Anna say about the quarry?",
    "How did the meeting with Daria go last week?",
    "What is the plan for the launch?",
]
_JOBS_OFF = {
    f"BRAINIAC_JOBS_{job.upper()}": "0"
    for job in ("rescan", "merge", "reflection", "promotion", "organization", "inbox", "backup")
}


def _copy_for_base(vault: Path, copy: Path, env: dict[str, str]) -> None:
    shutil.copytree(vault, copy, symlinks=True)
    ours, theirs = Locations.for_vault(vault, env), Locations.for_vault(copy, env)
    shutil.copytree(ours.cache, theirs.cache)
    theirs.state.mkdir(parents=True, mode=0o700)
    for f in ours.state.glob("manifest.sqlite3*"):
        shutil.copy2(f, theirs.state / f.name)


def _answering(vault: Path, env: dict[str, str]) -> int | None:
    path = daemon_socket.socket_path(str(Locations.for_vault(vault, env).runtime))
    answer = daemon_socket.stats(path)
    if "stats" not in answer:  # a base version of the first protocol
        answer = daemon_socket.exchange(path, {"v": 1, "command": "stats"})
    stats = answer.get("stats")
    return stats["answered"] if isinstance(stats, dict) else None


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--base-src", type=Path, required=True, help="holds daemon/brainiac/")
    ap.add_argument("--runs", type=int, default=30)
    args = ap.parse_args()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(_JOBS_OFF)
    base_env = {**env, "PYTHONPATH": str(args.base_src / "daemon")}
    work = Path(tempfile.mkdtemp(prefix="brainiac-daemon-ab-"))
    base_vault = work / args.vault.name
    daemons: list[subprocess.Popen[bytes]] = []
    try:
        _copy_for_base(args.vault, base_vault, env)
        for vault, e in ((args.vault, env), (base_vault, base_env)):
            cmd = [PY, "-m", "brainiac", "--vault", str(vault), "run"]
            log = (work / f"daemon-{len(daemons)}.log").open("wb")
            daemons.append(subprocess.Popen(cmd, env=e, stdout=log, stderr=log))
        deadline = time.monotonic() + 300
        while _answering(args.vault, env) is None or _answering(base_vault, env) is None:
            if time.monotonic() > deadline or any(d.poll() is not None for d in daemons):
                raise SystemExit(f"a daemon did not start; see {work}")
            time.sleep(0.2)

        def context(vault: Path) -> list[str]:
            return ["--vault", str(vault), "context", "--budget", "2000", "--prompt"]

        def hook(vault: Path) -> list[str]:
            return ["--vault", str(vault), "hook", "user-prompt-submit"]

        calls = {
            "context, base (python -m)": ([PY, "-m", "brainiac", *context(base_vault)], base_env),
            "context, this (python -m)": ([PY, "-m", "brainiac", *context(args.vault)], env),
            "context, this (console script)": ([BRAINIAC, *context(args.vault)], env),
            "hook, base (python -m)": ([PY, "-m", "brainiac", *hook(base_vault)], base_env),
            "hook, this (python -m)": ([PY, "-m", "brainiac", *hook(args.vault)], env),
            "--version, base (python -m)": ([PY, "-m", "brainiac", "--version"], base_env),
            "--version, this (python -m)": ([PY, "-m", "brainiac", "--version"], env),
            "--version, this (console script)": ([BRAINIAC, "--version"], env),
            "python -c pass": ([PY, "-c", "pass"], env),
        }
        before = (_answering(args.vault, env), _answering(base_vault, env))
        wall: dict[str, list[float]] = {k: [] for k in calls}
        cpu: dict[str, list[float]] = {k: [] for k in calls}
        for i in range(args.runs):
            prompt = PROMPTS[i % len(PROMPTS)]
            event = {"session_id": "ab", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
            for name, (cmd, e) in calls.items():
                is_hook = name.startswith("hook")
                full = [*cmd, prompt] if name.startswith("context") else cmd
                used = resource.getrusage(resource.RUSAGE_CHILDREN)
                started = time.perf_counter()
                done = subprocess.run(
                    full,
                    env=e,
                    input=json.dumps(event) if is_hook else None,
                    capture_output=True,
                    text=True,
                )
                wall[name].append(time.perf_counter() - started)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                cpu[name].append(after.ru_utime + after.ru_stime - used.ru_utime - used.ru_stime)
                if done.returncode != 0:
                    raise SystemExit(f"{name} failed ({done.returncode}): {done.stderr[-2000:]}")
        answered = (_answering(args.vault, env), _answering(base_vault, env))
    finally:
        for d in daemons:
            d.terminate()
            d.wait(timeout=120)
        shutil.rmtree(work, ignore_errors=True)
    counts = [
        a - b for a, b in zip(answered, before, strict=True) if a is not None and b is not None
    ]
    print(
        f"{args.runs} rounds; answered by the daemons (this, base): {counts}; "
        f"load at the end {os.getloadavg()}"
    )
    print("| call | wall p50 (ms) | wall p95 (ms) | CPU p50 (ms) | CPU p95 (ms) |")
    print("|---|---:|---:|---:|---:|")
    for name in calls:
        w, c = wall[name], cpu[name]
        print(
            f"| {name} | {_pct(w, 50) * 1e3:.0f} | {_pct(w, 95) * 1e3:.0f} | "
            f"{_pct(c, 50) * 1e3:.0f} | {_pct(c, 95) * 1e3:.0f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
