"""What recall by meaning costs (issue 13): the daemon's memory with the vectors loaded, the time
to make them, and a context's time in-process, each beside the same with `[retrieval] meaning =
false` in the same run, on a generated vault (benchmarks/generate_vault.py).

    .venv/bin/python benchmarks/meaning_costs.py --notes 10000            # ~20 min
    .venv/bin/python benchmarks/meaning_costs.py --notes 1000 --rounds 1  # ~3 min

Steps, each in its own process, with the run's own XDG folders under --work:
0. a first daemon start builds the index (not measured: the starts below are warm);
1. the daemon, words only: RSS (VmRSS) at READY and after 10 s of quiet;
2. the daemon with meaning: RSS at READY, the time until its embedder has made every event's
   vector (its status says none is pending), RSS 10 s after that;
3. `Memory.context(prompt, budget=2000)` in-process over 200 generated prompts after a warm-up
   of 20 (scale.py's loop), meaning on and off in turn, `--rounds` times: p50 / p95; one BLAS
   thread, as the `brainiac` command sets (two took the same wall time and twice the CPU).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import generate_vault
import scale

_QUIET_S = 10.0


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _daemon(vault: Path, env: dict[str, str], work: Path, meaning: bool) -> dict[str, float]:
    notify = work / f"notify-{os.getpid()}.sock"
    with contextlib.suppress(FileNotFoundError):
        notify.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(notify))
    sock.settimeout(600)
    env = {
        **env,
        **scale._JOBS_OFF,
        "NOTIFY_SOCKET": str(notify),
        "BRAINIAC_RETRIEVAL_MEANING": "true" if meaning else "false",
    }
    from brainiac.store.locations import Locations

    vectors = Locations.for_vault(vault, env).vectors_dir / "vectors.table"
    with contextlib.suppress(FileNotFoundError):
        vectors.unlink()  # made again: step 2 times the embedder from nothing
    log_path = work / f"daemon-{'meaning' if meaning else 'words'}.log"
    out: dict[str, float] = {}
    with log_path.open("wb") as log_f:
        started = time.monotonic()
        proc = subprocess.Popen(
            [scale.BRAINIAC, "--vault", str(vault), "run"], env=env, stdout=log_f, stderr=log_f
        )
        try:
            while b"READY=1" not in sock.recv(4096):
                pass
            out["ready_s"] = time.monotonic() - started
            out["rss_ready_mb"] = _rss_mb(proc.pid)
            if meaning:  # until the daemon's status says every event has its vector
                caught_up = scale._wait_caught_up(vault, env, proc.pid)
                if proc.poll() is not None or not caught_up["meaning"]:
                    raise RuntimeError(log_path.read_text()[-2000:])
                out["vectors_s"] = time.monotonic() - started - out["ready_s"]
                out["vectors"] = caught_up["meaning"]["events"]
            time.sleep(_QUIET_S)
            out["rss_quiet_mb"] = _rss_mb(proc.pid)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)
            sock.close()
    scale.log(f"daemon {'meaning' if meaning else 'words only'}: {json.dumps(out)}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--work", type=Path, default=None, help="kept (default: a temporary folder)")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="brainiac-meaning-"))
    work.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    for var, name in (
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_CONFIG_HOME", "config"),
    ):
        (work / name).mkdir(mode=0o700, exist_ok=True)
        env[var] = str(work / name)
    vault = work / "vault"
    if not vault.exists():
        scale.log(f"generating {args.notes} notes")
        generate_vault.generate(vault, args.notes)
    # A first start builds the index (a cold start holds more memory afterwards): both measured
    # starts below are warm, as a daemon's restarts are.
    _daemon(vault, env, work, meaning=False)
    words = _daemon(vault, env, work, meaning=False)
    meaning = _daemon(vault, env, work, meaning=True)
    prompts_file = work / "prompts.json"
    prompts_file.write_text(json.dumps(generate_vault.prompts(1, 220, args.notes)))
    loops: dict[str, list[dict[str, Any]]] = {"meaning": [], "words only": []}
    for _ in range(args.rounds):
        for label, on in (("meaning", "true"), ("words only", "false")):
            # One BLAS thread, as the `brainiac` command runs (interfaces/entry.py).
            loop_env = {**env, "BRAINIAC_RETRIEVAL_MEANING": on, "OPENBLAS_NUM_THREADS": "1"}
            loops[label].append(scale._loop("context-assembly", vault, prompts_file, loop_env, 0))
    print(f"\n### Recall by meaning at {args.notes:,} notes: its costs\n")
    print("| measurement | meaning | words only | ratio |")
    print("|---|---:|---:|---:|")

    def row(label: str, on: float, off: float, digits: int = 0) -> None:
        print(f"| {label} | {on:.{digits}f} | {off:.{digits}f} | {on / off:.2f}x |")

    row("daemon RSS at READY (MB)", meaning["rss_ready_mb"], words["rss_ready_mb"])
    row("daemon RSS, quiet (MB; vectors loaded)", meaning["rss_quiet_mb"], words["rss_quiet_mb"])
    row("daemon start to READY (s)", meaning["ready_s"], words["ready_s"], 1)
    made, took = meaning["vectors"], meaning["vectors_s"]
    print(f"| events' vectors made after READY | {took:.0f} s ({made:,.0f}, {made / took:.0f}/s) |")
    for q in ("p50", "p95"):
        on = statistics.median(r[q] for r in loops["meaning"]) * 1e3
        off = statistics.median(r[q] for r in loops["words only"]) * 1e3
        row(f"context in-process {q} (ms), median of {args.rounds}", on, off, 1)
    row(
        "context loop peak RSS (MB)",
        max(r["maxrss_mb"] for r in loops["meaning"]),
        max(r["maxrss_mb"] for r in loops["words only"]),
    )
    print(f"\nwork folder: {work}; command: {' '.join([sys.executable, *sys.argv])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
