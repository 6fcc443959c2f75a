"""The daemon during a first fill of the vectors, started as a user would (issue 34).

    .venv/bin/python benchmarks/first_fill.py --notes 10000 --workdir /tmp/ff
    .venv/bin/python benchmarks/first_fill.py --notes 10000 --workdir /tmp/ff --src /tmp/base/daemon

A benchmark, not a timed test. The first run generates the vault (`generate_vault.py`) in
WORKDIR and indexes it without vectors (`brainiac reindex`, as `scale.py` does), then keeps a
pristine copy of the vault, its cache and its state; every run (`--runs`) puts that copy back
at the same path (the cache is keyed by the vault's path), so runs and checkouts (`--src`: another
checkout's `daemon/` first on PYTHONPATH) start from the same files. Each run:

- `brainiac run` with the default settings (jobs on unless `--jobs-off`, recall by meaning on),
  no vectors yet;
- the daemon's memory every 0.5 s until every event has its vector: its VmRSS and VmHWM, of
  which anonymous (heap) and file pages (the mapped vectors, libraries), the largest RSS among its
  children (the fill and the merge beside it), and the summed RSS of its process tree;
- meanwhile, CLI calls answered by the daemon in turn (`context --prompt P --budget 2000`, then
  `hook user-prompt-submit` with the event's JSON on stdin, then `--pause` seconds), their wall
  time from spawn to exit; then `--after` more of each once the vectors are made;
- the fill's wall time (daemon spawn to the status saying nothing is pending) and the daemon's CPU
  time over it (its own and its children's), and the load average at the start and at the end.

`--fill-only`: the fill alone in one process (`Memory` and its embedding, as the daemon's
embedder slices it, no daemon): its CPU time and resident memory, the model's share of the
daemon's.

The daemon's count of answers is checked: a call the daemon did not answer (the CLI answered it
in its own process) would not be a measurement of the daemon.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate_vault  # noqa: E402
import scale  # noqa: E402

BRAINIAC = scale.BRAINIAC
SAMPLE_S = 0.5


def _environment(work: Path, src: Path | None) -> dict[str, str]:
    drop = {"XDG_RUNTIME_DIR", "PYTHONDONTWRITEBYTECODE"}
    env = {k: v for k, v in os.environ.items() if k not in drop and not k.startswith("BRAINIAC_")}
    env.update(
        XDG_CACHE_HOME=str(work / "run" / "cache"),
        XDG_STATE_HOME=str(work / "run" / "state"),
        PYTHONHASHSEED="0",
    )
    # The model's products on one thread in `--fill-only`'s child too, as the `brainiac` command
    # has them (interfaces/entry.py).
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    if src is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(src), env.get("PYTHONPATH")]))
    return env


def prepare(work: Path, notes: int, seed: int, env: dict[str, str]) -> None:
    """The vault indexed without vectors, kept as `pristine/`, put back in `run/` for each run."""
    pristine, run = work / "pristine", work / "run"
    if pristine.is_dir():
        return
    shutil.rmtree(run, ignore_errors=True)
    info = generate_vault.generate(run / "vault", notes, seed)
    scale.log(f"vault generated: {info}")
    scale.run([BRAINIAC, "--vault", str(run / "vault"), "reindex", "--json"], env)
    shutil.copytree(run, pristine, symlinks=True)


def restore(work: Path, env: dict[str, str]) -> None:
    """`run/` as `pristine/` left it. The copy gives every file a new inode, which the manifest
    notices; one call without the daemon takes the files in as they are (each is read once and
    found the same), so the daemon's start is a start on a freshly indexed vault."""
    run = work / "run"
    shutil.rmtree(run, ignore_errors=True)
    shutil.copytree(work / "pristine", run, symlinks=True)
    words = {**env, "BRAINIAC_SOCKET": "off", "BRAINIAC_RETRIEVAL_MEANING": "false"}
    scale.run([BRAINIAC, "--vault", str(run / "vault"), "search", "restore"], words)


def _memory(pid: int) -> dict[str, float]:
    """VmRSS, VmHWM, RssAnon and RssFile of `pid` (MB), the largest VmRSS among its
    descendants (a fill or a merge beside it), and the summed VmRSS of its process tree."""
    fields: dict[str, float] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM", "RssAnon", "RssFile", "RssShmem"):
            fields[name] = int(value.split()[0]) / 1024
    tree = fields.get("VmRSS", 0.0)
    largest = 0.0
    for child in _descendants(pid):
        try:
            for line in Path(f"/proc/{child}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    rss = int(line.split()[1]) / 1024
                    tree += rss
                    largest = max(largest, rss)
        except OSError:
            continue
    fields["tree"] = tree
    fields["child"] = largest
    return fields


def _descendants(pid: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _cpu(pid: int) -> float:
    """The process's CPU seconds, its own and its waited-for children's."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")


def one_run(work: Path, env: dict[str, str], prompts: list[str], args: Any) -> dict[str, Any]:
    restore(work, env)
    vault = work / "run" / "vault"
    samples: list[dict[str, float]] = []
    calls: dict[str, list[float]] = {k: [] for k in ("context", "hook")}
    after: dict[str, list[float]] = {k: [] for k in ("context", "hook")}
    stop = threading.Event()
    load_start = os.getloadavg()
    log_path = work / "daemon.log"
    started = time.monotonic()
    with log_path.open("wb") as log_f:
        daemon = subprocess.Popen(
            [BRAINIAC, "--vault", str(vault), "run"], env=env, stdout=log_f, stderr=log_f
        )

        def sampler() -> None:
            while not stop.is_set():
                try:
                    samples.append({"t": time.monotonic() - started, **_memory(daemon.pid)})
                except OSError:
                    return
                stop.wait(SAMPLE_S)

        thread = threading.Thread(target=sampler, daemon=True)
        thread.start()
        try:
            while scale._socket_stats(vault, env) is None:
                if daemon.poll() is not None or time.monotonic() - started > 300:
                    raise RuntimeError(f"the daemon did not answer: {log_path.read_text()[-2000:]}")
                time.sleep(0.1)
            ready = time.monotonic() - started
            answered_before = (scale._socket_stats(vault, env) or {})["stats"]["answered"]
            fill: dict[str, Any] | None = None
            i = 0
            while fill is None:
                p = prompts[i % len(prompts)]
                i += 1
                calls["context"].append(_call(_context(vault, p), env))
                calls["hook"].append(_call(_hook(vault), env, _hook_input(p)))
                fill = _caught_up(vault, env, daemon.pid)
                if fill is None:
                    time.sleep(args.pause)
            fill_s = time.monotonic() - started
            fill_cpu = _cpu(daemon.pid)
            load_end = os.getloadavg()
            for k in range(args.after):
                p = prompts[(i + k) % len(prompts)]
                after["context"].append(_call(_context(vault, p), env))
                after["hook"].append(_call(_hook(vault), env, _hook_input(p)))
            answered = (scale._socket_stats(vault, env) or {})["stats"]["answered"]
            answered -= answered_before
        finally:
            stop.set()
            thread.join()
            daemon.terminate()
            daemon.wait(timeout=120)
    total = 2 * (i + args.after)
    if answered != total:
        raise RuntimeError(f"the daemon answered {answered} of {total} calls")
    kinds = ("VmRSS", "VmHWM", "RssAnon", "RssFile", "child", "tree")
    peak = {k: max(s.get(k, 0.0) for s in samples) for k in kinds}
    out = {
        "ready_s": ready,
        "fill_s": fill_s,
        "fill_cpu_s": fill_cpu,
        "events": fill["events"] if fill else None,
        "peak_mb": peak,
        "load_start": load_start,
        "load_end": load_end,
        "during": {k: _percentiles(v) for k, v in calls.items()},
        "after": {k: _percentiles(v) for k, v in after.items()},
        "samples": samples,
    }
    scale.log(
        f"ready {ready:.1f} s; fill {fill_s:.0f} s, daemon CPU {fill_cpu:.0f} s; peak RSS "
        + ", ".join(f"{k} {v:.0f}" for k, v in peak.items())
        + f" MB; load {load_start[0]:.1f} -> {load_end[0]:.1f}"
    )
    for when in ("during", "after"):
        for k, v in out[when].items():
            scale.log(
                f"{when} the fill, {k} via the daemon: p50 {v['p50'] * 1e3:.0f} ms, "
                f"p95 {v['p95'] * 1e3:.0f} ms, max {v['max'] * 1e3:.0f} ms ({v['n']} calls)"
            )
    return out


# `--fill-only`: the fill alone in a child process, as the daemon's embedder runs it (half-second
# slices), without the daemon's other threads; its CPU time and resident memory.
_FILL_ONLY = r"""
import json, sys, time
from pathlib import Path
from brainiac import Memory
def rss():
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {k: int(fields[k].split()[0]) / 1024 for k in ("VmRSS", "RssAnon", "RssFile")}
with Memory(sys.argv[1], refresh_interval_s=float("inf")) as memory:
    memory.fill_before_context = False
    semantic = memory.semantic
    opened, peak = rss(), rss()
    wall, cpu, made = time.monotonic(), time.process_time(), 0
    while done := semantic.fill(seconds=0.5):
        made += done
        peak = {k: max(v, rss()[k]) for k, v in peak.items()}
    semantic.save()
    print(json.dumps({"made": made, "wall": time.monotonic() - wall,
                      "cpu": time.process_time() - cpu, "opened": opened, "peak": peak}))
"""


def fill_only(work: Path, env: dict[str, str]) -> dict[str, Any]:
    restore(work, env)
    done = scale.run([scale.PY, "-c", _FILL_ONLY, str(work / "run" / "vault")], env)
    info: dict[str, Any] = scale.last_json(done["stdout"])
    scale.log(
        f"fill alone: {info['made']:,} vectors in {info['wall']:.0f} s, CPU {info['cpu']:.1f} s "
        f"({info['made'] / info['cpu']:.0f} a CPU second); RSS at open "
        f"{info['opened']['VmRSS']:.0f} MB, peak {info['peak']['VmRSS']:.0f} MB "
        f"(heap {info['peak']['RssAnon']:.0f} MB)"
    )
    return info


def _context(vault: Path, prompt: str) -> list[str]:
    return [BRAINIAC, "--vault", str(vault), "context", "--prompt", prompt, "--budget", "2000"]


def _hook(vault: Path) -> list[str]:
    return [BRAINIAC, "--vault", str(vault), "hook", "user-prompt-submit", "--budget", "2000"]


def _hook_input(prompt: str) -> str:
    event = {"session_id": "bench", "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    return json.dumps(event)


def _call(cmd: list[str], env: dict[str, str], stdin: str = "") -> float:
    done = scale.run(cmd, env, stdin=stdin)
    if not done["stdout"]:
        raise RuntimeError(f"{cmd[3:5]} printed nothing:\n{done['stderr'][-2000:]}")
    return float(done["wall"])


def _caught_up(vault: Path, env: dict[str, str], pid: int) -> dict[str, Any] | None:
    status = scale._daemon_status(vault, env)
    meaning = status.get("meaning")
    if status.get("pid") == pid and meaning and meaning["events"] and not meaning["pending"]:
        return dict(meaning)
    return None


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0, "p50": 0.0, "p95": 0.0, "max": 0.0}
    return {
        "n": len(values),
        "p50": scale.pct(values, 50),
        "p95": scale.pct(values, 95),
        "max": max(values),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--workdir", type=Path, required=True, help="kept: reused by later runs")
    ap.add_argument("--src", type=Path, default=None, help="another checkout's daemon/ to run")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--pause", type=float, default=1.0, help="seconds between pairs of calls")
    ap.add_argument("--after", type=int, default=30, help="calls of each kind after the fill")
    ap.add_argument(
        "--jobs-off", action="store_true", help="the daemon's jobs off (not a user's default)"
    )
    ap.add_argument(
        "--fill-only", action="store_true", help="the fill alone in a process, no daemon"
    )
    ap.add_argument("--json", type=Path, default=None, help="write the results here")
    args = ap.parse_args(argv)
    work = args.workdir.resolve()
    env = _environment(work, args.src)
    if args.jobs_off:
        env.update(scale._JOBS_OFF)
    prepare(work, args.notes, args.seed, env)
    prompts = generate_vault.prompts(args.seed, 200, args.notes)
    if args.fill_only:
        results = [fill_only(work, env) for _ in range(args.runs)]
    else:
        results = [one_run(work, env, prompts, args) for _ in range(args.runs)]
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
