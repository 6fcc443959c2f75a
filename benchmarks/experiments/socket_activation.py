"""The first CLI call with no daemon running: socket activation against the in-process path.

    .venv/bin/python benchmarks/experiments/socket_activation.py [IDLE_S] [words]
    .venv/bin/python benchmarks/experiments/socket_activation.py --reuse WORK/n100000 \\
        --rounds 5 --calls 20 words

Without --reuse: a generated 1,000-note vault in a temporary folder. With --reuse: a kept
`benchmarks/scale.py --keep` vault as it is (`n<N>/vault` with its `cache` and `state` folders,
used as XDG_CACHE_HOME and XDG_STATE_HOME; the daemon writes its status and records there, so
use a copy another run does not read). Interleaved rounds of: `context` in process
(BRAINIAC_SOCKET=off), the first call under `systemd-socket-activate` (it starts the daemon, as
brainiac.socket does), the next CALLS calls at once, CALLS more after the daemon said READY=1,
and one after IDLE_S seconds; medians and p95 printed. `words` turns recall by meaning off;
--jobs-off turns the daemon's jobs off (BRAINIAC_JOBS_*=0, as scale.py --daemon does).
--base-src DIR: each round also runs the daemon and the CLI of that checkout (its `daemon`
folder first on PYTHONPATH), so the two are compared in the same run. Needs
systemd-socket-activate on PATH.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PROMPT = "When is the Atlas deadline?"
JOBS = ("rescan", "merge", "reflection", "promotion", "organization", "inbox", "backup")


def parse() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("idle", nargs="?", type=float, default=60.0, help="seconds before the last")
    ap.add_argument("words", nargs="?", choices=["words"], help="recall by meaning off")
    ap.add_argument("--reuse", type=Path, help="a scale.py work dir's n<N> folder")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=1, help="timed calls after the first")
    ap.add_argument("--base-src", type=Path, help="another checkout, measured in turn")
    ap.add_argument(
        "--jobs-off", action="store_true", help="the daemon's jobs off, as scale.py's --daemon"
    )
    return ap.parse_args()


def setup(args: argparse.Namespace, base: Path) -> tuple[Path, dict[str, str], list[str]]:
    run = base / "run"
    run.mkdir(mode=0o700)
    prompts = [PROMPT]
    if args.reuse is not None:
        top = args.reuse.resolve()
        vault = top / "vault"
        env = {
            **os.environ,
            "XDG_RUNTIME_DIR": str(run),
            "XDG_STATE_HOME": str(top / "state"),
            "XDG_CACHE_HOME": str(top / "cache"),
        }
        if (top / "prompts.json").exists():
            prompts = json.loads((top / "prompts.json").read_text())
    else:
        env = {
            **os.environ,
            "XDG_RUNTIME_DIR": str(run),
            "XDG_STATE_HOME": str(base / "state"),
            "XDG_CACHE_HOME": str(base / "cache"),
            "XDG_CONFIG_HOME": str(base / "config"),
        }
        vault = base / "vault"
        subprocess.run(
            [PY, "benchmarks/generate_vault.py", "--notes", "1000", str(vault)],
            check=True,
            cwd=ROOT,
            env=env,
            capture_output=True,
        )
    if args.jobs_off:  # every call and the daemon the same: the CLI compares the configuration
        env.update({f"BRAINIAC_JOBS_{job.upper()}": "0" for job in JOBS})
    if args.words:
        if args.reuse is not None:  # the kept vault's configuration stays as it is
            env["BRAINIAC_RETRIEVAL_MEANING"] = "false"
        else:
            cfg = vault / ".brainiac" / "config.toml"
            text = cfg.read_text()
            cfg.write_text(re.sub(r"^# meaning = .*$", "meaning = false", text, flags=re.M))
    return vault, env, prompts


def socket_of(vault: Path, env: dict[str, str]) -> str:
    return subprocess.run(
        [
            PY,
            "-c",
            "from brainiac.store.locations import Locations;"
            "from brainiac.runtime.daemon_socket import socket_path;import sys;"
            "print(socket_path(str(Locations.for_vault(sys.argv[1]).runtime)))",
            str(vault),
        ],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


def main() -> None:
    args = parse()
    base = Path(tempfile.mkdtemp(prefix="sab-", dir="/tmp"))
    vault, env, prompts = setup(args, base)
    sock = socket_of(vault, env)
    Path(sock).parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    notify_path = str(base / "notify.sock")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    daemon_log = base / "daemon.log"
    variants = {"this": env}
    if args.base_src is not None:
        path = str(args.base_src.resolve() / "daemon")
        old = env.get("PYTHONPATH")
        variants["base"] = {**env, "PYTHONPATH": path + (os.pathsep + old if old else "")}

    def timed(e: dict[str, str], prompt: str, extra: dict[str, str] | None = None) -> float:
        call = [PY, "-m", "brainiac", "--debug", "--vault", str(vault), "context"]
        t = time.perf_counter()
        p = subprocess.run(
            [*call, "--prompt", prompt], env={**e, **(extra or {})}, capture_output=True, text=True
        )
        dt = time.perf_counter() - t
        assert p.returncode == 0, p.stderr
        way = "daemon" if "answered by the daemon" in p.stderr else "in-process"
        if (way == "daemon") != (extra is None):
            print(f"note: a call answered {way}", file=sys.stderr)
        return dt

    def activated(e: dict[str, str]) -> subprocess.Popen[bytes]:
        daemon_env = {**e, "NOTIFY_SOCKET": notify_path}
        return subprocess.Popen(
            [
                "systemd-socket-activate",
                "-l",
                sock,
                *[f"--setenv={k}" for k in daemon_env],
                PY,
                "-m",
                "brainiac",
                "--vault",
                str(vault),
                "run",
            ],
            env=daemon_env,
            stdout=subprocess.DEVNULL,
            stderr=daemon_log.open("ab"),
        )

    def wait_sock() -> None:
        while not os.path.exists(sock):
            time.sleep(0.01)

    def wait_ready() -> None:
        notify.settimeout(600)
        while b"READY=1" not in notify.recv(4096):
            pass

    def stop(p: subprocess.Popen[bytes]) -> None:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=120)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(sock)  # systemd-socket-activate may leave its socket file behind

    # Warm-up: the index built (or the kept one reconciled), then a daemon run once so its
    # vectors are saved.
    timed(env, PROMPT, {"BRAINIAC_SOCKET": "off"})
    p = activated(env)
    wait_sock()
    timed(env, PROMPT)
    wait_ready()
    stop(p)

    labels = [
        "in-process",
        "activated first",
        "next calls (at once)",
        "calls after READY",
        f"settled ({args.idle:g} s later)",
        "python floor",
    ]
    rows: dict[tuple[str, str], list[float]] = {(v, k): [] for v in variants for k in labels}
    others = [q for q in prompts if q != PROMPT] or [PROMPT]
    for round_ in range(args.rounds):
        for name, e in variants.items():
            row = {k: rows[name, k] for k in labels}
            row["in-process"].append(timed(e, PROMPT, {"BRAINIAC_SOCKET": "off"}))
            p = activated(e)
            wait_sock()
            row["activated first"].append(timed(e, PROMPT))
            for i in range(args.calls):
                q = others[(round_ * args.calls + i) % len(others)]
                row["next calls (at once)"].append(timed(e, q))
            wait_ready()
            for i in range(args.calls):
                q = others[(round_ * args.calls + i + 7) % len(others)]
                row["calls after READY"].append(timed(e, q))
            time.sleep(args.idle)
            row[labels[4]].append(timed(e, PROMPT))
            t = time.perf_counter()
            subprocess.run([PY, "-c", "pass"], check=True)
            row["python floor"].append(time.perf_counter() - t)
            stop(p)
    for (name, k), v in rows.items():
        ms = sorted(x * 1000 for x in v)
        p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
        shown = [round(x * 1000) for x in v] if len(v) <= 10 else f"{len(v)} calls"
        print(f"{name:5s} {k:22s} p50 {statistics.median(ms):7.0f} ms  p95 {p95:7.0f} ms  {shown}")
    shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
