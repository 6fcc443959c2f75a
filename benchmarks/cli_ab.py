"""CLI calls of two versions of brainiac, interleaved on one vault: wall time and CPU time.

    .venv/bin/python benchmarks/cli_ab.py --vault /tmp/v --base-src /tmp/base --runs 15

A benchmark, not a timed test. `--base-src` is a checkout of the other version (a folder holding
`daemon/brainiac/`, e.g. `git worktree add /tmp/base main`); it runs through this venv's
`brainiac` script with PYTHONPATH pointing at it. The vault must be indexed already by this
version (`brainiac --vault V reindex`, with the XDG directories of this process); the base gets
its own state directory holding the same manifest in the old `manifest.json` form, so both
versions share one index and neither rebuilds. Each round runs `context`, `hook
user-prompt-submit`, `--version` and a bare `python -c pass` for each version in turn, so a noisy
machine weighs on both alike; CPU time (user + sys, from wait4) is the figure least moved by the
load of other processes. Prints medians and minima (s).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROMPTS = [
    "Who owns the budget roadmap and what is the status of the project?",
    "When is the deadline for the harbour office move?",
    "What did Anna say about the quarry?",
]


def _old_manifest(vault: Path, new_env: dict[str, str], old_env: dict[str, str]) -> None:
    from brainiac.store.locations import Locations
    from brainiac.store.manifest import Manifest

    current = Manifest.load(Locations.for_vault(vault, new_env).manifest_path)
    if not current.files:
        raise SystemExit(f"{vault}: not indexed with these XDG directories; run reindex first")
    files = {
        rel: {
            "size": s.size,
            "mtime_ns": s.mtime_ns,
            "ctime_ns": s.ctime_ns,
            "ino": s.ino,
            "sha256": s.sha256,
            "docs": s.docs,
            "problem": s.problem,
        }
        for rel, s in current.files.items()
    }
    state = Locations.for_vault(vault, old_env).state
    state.mkdir(parents=True, exist_ok=True)
    payload = {"version": 1, "index_id": current.index_id, "files": files}
    (state / "manifest.json").write_text(json.dumps(payload), encoding="utf-8")


def _run(cmd: list[str], env: dict[str, str], stdin: str = "") -> tuple[float, float]:
    with (
        tempfile.TemporaryFile("w+") as in_f,
        tempfile.TemporaryFile("w+") as out_f,
        tempfile.TemporaryFile("w+") as err_f,
    ):
        in_f.write(stdin)
        in_f.seek(0)
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdin=in_f, stdout=out_f, stderr=err_f)
        _, status, usage = os.wait4(proc.pid, 0)  # wait4: the child's own CPU time too
        wall = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err_f.seek(0)
            raise RuntimeError(f"{cmd[:4]} failed:\n{err_f.read()[-2000:]}")
        return wall, usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, required=True)
    ap.add_argument("--base-src", type=Path, required=True, help="holds daemon/brainiac/")
    ap.add_argument("--runs", type=int, default=15)
    args = ap.parse_args(argv)
    brainiac = str(Path(sys.executable).with_name("brainiac"))
    vault = str(args.vault)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    state = Path(env.get("XDG_STATE_HOME") or Path.home() / ".local/state")
    new_env = dict(env, PYTHONHASHSEED="0")
    old_env = dict(
        new_env,
        XDG_STATE_HOME=str(state.with_name(state.name + "-ab-base")),
        PYTHONPATH=str(args.base_src / "daemon"),
    )
    _old_manifest(args.vault, new_env, old_env)
    samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
    for i in range(args.runs):
        prompt = PROMPTS[i % len(PROMPTS)]
        payload = json.dumps({"hook_event_name": "UserPromptSubmit", "prompt": prompt})
        for tag, e in (("base", old_env), ("this", new_env)):
            calls = (
                ("context", ["--vault", vault, "context", "--prompt", prompt, "--budget", "2000"]),
                ("hook", ["--vault", vault, "hook", "user-prompt-submit", "--budget", "2000"]),
                ("--version", ["--version"]),
            )
            for name, rest in calls:
                stdin = payload if name == "hook" else ""
                samples.setdefault((name, tag), []).append(_run([brainiac, *rest], e, stdin))
            samples.setdefault(("python -c pass", tag), []).append(
                _run([sys.executable, "-c", "pass"], e)
            )
    print(f"{args.runs} rounds, load average at the end {os.getloadavg()[0]:.1f}")
    print("| call | version | wall median | wall min | CPU median | CPU min |")
    print("|---|---|---:|---:|---:|---:|")
    for (name, tag), rows in samples.items():
        wall, cpu = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"| {name} | {tag} | {statistics.median(wall):.3f} | {min(wall):.3f} "
            f"| {statistics.median(cpu):.3f} | {min(cpu):.3f} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
