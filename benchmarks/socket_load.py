"""The daemon's socket under load (issue 31): many agents' hooks and searches at the same instant,
with clients dripping their requests meanwhile, on a generated vault (generate_vault.py).

    .venv/bin/python benchmarks/socket_load.py --notes 10000 --rounds 3 --work /tmp/socket-load
    .venv/bin/python benchmarks/socket_load.py --notes 200 --rounds 1          # a smoke run

Each round starts `--clients` real `brainiac` processes at once (a barrier, then spawn): half
`hook user-prompt-submit` (Claude Code's event JSON on stdin), half `search`, each with its own
generated prompt, while `--drippers` connections send a request a byte every 1.5 s. It counts
the calls the daemon answered (its own `stats` count, before and after) against those the CLI
answered in its own process, and takes each call's wall time (spawn to exit): p50 and p95 per
kind. The daemon runs as `brainiac run` with its jobs off; the first start builds the index, and
with `--wait-vectors` the run waits until the embedder has saved every event's vector (recall by
meaning in full). `--baseline DIR` runs the same rounds with the daemon and the clients of
another checkout (its `daemon/` first on PYTHONPATH), right after, on the same vault.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import generate_vault
import scale

_DRIP_S = 1.5


def _env(work: Path, baseline: Path | None) -> dict[str, str]:
    env = {**os.environ, **scale._JOBS_OFF, "OPENBLAS_NUM_THREADS": "1"}
    for var, name in (
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_RUNTIME_DIR", "run"),
        ("XDG_CONFIG_HOME", "config"),
    ):
        (work / name).mkdir(mode=0o700, parents=True, exist_ok=True)
        env[var] = str(work / name)
    if baseline is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(baseline / "daemon"), env.get("PYTHONPATH", "")])
    return env


def _socket(vault: Path, env: dict[str, str]) -> str:
    from brainiac.runtime import daemon_socket
    from brainiac.store.locations import Locations

    return daemon_socket.socket_path(str(Locations.for_vault(vault, env).runtime))


def _stats(path: str) -> dict[str, int] | None:
    from brainiac.runtime import daemon_socket

    answer = daemon_socket.stats(path)
    if "stats" not in answer:  # a baseline of the first protocol
        answer = daemon_socket.exchange(path, {"v": 1, "command": "stats"})
    stats = answer.get("stats")
    return stats if isinstance(stats, dict) else None


def _every_vector_made(vault: Path, env: dict[str, str]) -> bool:
    meaning = scale._daemon_status(vault, env).get("meaning")
    return bool(meaning) and not meaning["pending"] and meaning["vectors"] >= meaning["events"]


@contextlib.contextmanager
def _daemon(vault: Path, env: dict[str, str], log_path: Path, vectors: bool) -> Any:
    path = _socket(vault, env)

    with log_path.open("ab") as log_f:
        proc = subprocess.Popen(
            [scale.PY, "-m", "brainiac", "--vault", str(vault), "run"],
            env=env,
            stdout=log_f,
            stderr=log_f,
        )
        try:
            deadline = time.monotonic() + 3600  # a first start indexes 10,000 notes
            while _stats(path) is None or (vectors and not _every_vector_made(vault, env)):
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the daemon did not answer: {log_path.read_text()[-2000:]}")
                time.sleep(0.5)
            yield path
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=120)


def _drip(path: str, stop: threading.Event, cut_off: list[float]) -> None:
    """Clients, one after the other, that send a request a byte every _DRIP_S; records how long
    the daemon kept each before it answered or closed."""
    request = b'{"v": 1, "command": "search", "args": {"query": "x"}, "env": {}}\n'
    while not stop.is_set():
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            started = time.monotonic()
            try:
                s.connect(path)
                for byte in request[:-1]:
                    s.send(bytes([byte]))
                    if select.select([s], [], [], _DRIP_S)[0]:  # answered, or closed
                        break
                    if stop.is_set():  # kept the whole round
                        cut_off.append(time.monotonic() - started)
                        return
            except OSError:  # cut off by the daemon: what it should do
                pass
            cut_off.append(time.monotonic() - started)


def _round(
    vault: Path, env: dict[str, str], path: str, prompts: list[str], drippers: int
) -> dict[str, Any]:
    clients = len(prompts)
    start = threading.Barrier(clients)
    walls: list[tuple[str, float, bool]] = []
    lock = threading.Lock()

    def call(i: int) -> None:
        if i % 2:
            kind = "hook"
            cmd = [scale.BRAINIAC, "--vault", str(vault), "hook", "user-prompt-submit"]
            event = {"session_id": f"load{i}", "hook_event_name": "UserPromptSubmit"}
            stdin = json.dumps({**event, "prompt": prompts[i]})
        else:
            kind = "search"
            cmd = [scale.BRAINIAC, "--vault", str(vault), "search", prompts[i]]
            stdin = ""
        start.wait()
        t0 = time.perf_counter()
        done = subprocess.run(cmd, env=env, input=stdin, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        with lock:
            walls.append((kind, wall, done.returncode == 0))

    stop = threading.Event()
    cut_off: list[float] = []
    dripping = [threading.Thread(target=_drip, args=(path, stop, cut_off)) for _ in range(drippers)]
    for t in dripping:
        t.start()
    before = _stats(path) or {}
    threads = [threading.Thread(target=call, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    after = _stats(path) or {}
    stop.set()
    for t in dripping:
        t.join()
    answered = after.get("answered", 0) - before.get("answered", 0)
    out: dict[str, Any] = {
        "clients": clients,
        "answered_by_daemon": answered,
        "answered_by_cli": clients - answered,
        "failed_calls": sum(1 for *_, ok in walls if not ok),
        "busy": after.get("busy", 0) - before.get("busy", 0),
        "drippers_cut_off_s": max(cut_off) if cut_off else None,
    }
    for kind in ("hook", "search", "all"):
        times = [w for k, w, _ in walls if kind in (k, "all")]
        out[kind] = {"p50": scale.pct(times, 50), "p95": scale.pct(times, 95)}
    scale.log(json.dumps(out))
    return out


def _floor(clients: int, env: dict[str, str]) -> dict[str, Any]:
    """The same number of bare `python -c pass` started at once: what the machine's cores take
    to start that many interpreters, whoever answers."""
    start = threading.Barrier(clients)
    walls: list[float] = []
    lock = threading.Lock()

    def call() -> None:
        start.wait()
        t0 = time.perf_counter()
        subprocess.run([scale.PY, "-c", "pass"], env=env, capture_output=True)
        with lock:
            walls.append(time.perf_counter() - t0)

    threads = [threading.Thread(target=call) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    out = {"p50": scale.pct(walls, 50), "p95": scale.pct(walls, 95)}
    scale.log(f"python -c pass, {clients} at once: {json.dumps(out)}")
    return out


def bench(args: argparse.Namespace, work: Path, baseline: Path | None) -> list[dict[str, Any]]:
    env = _env(work, baseline)
    vault = work / "vault"
    if not vault.exists():
        scale.log(f"generating {args.notes} notes")
        generate_vault.generate(vault, args.notes)
    label = f"baseline {baseline}" if baseline else "this tree"
    rounds = []
    with _daemon(vault, env, work / "daemon.log", args.wait_vectors) as path:
        warm = generate_vault.prompts(7, 5, args.notes)
        for p in warm:  # the daemon's first searches read the segments
            subprocess.run(
                [scale.BRAINIAC, "--vault", str(vault), "context", "--prompt", p],
                env=env,
                capture_output=True,
            )
        for r in range(args.rounds):
            scale.log(f"{label}: round {r + 1}")
            prompts = generate_vault.prompts(100 + r, args.clients, args.notes)
            rounds.append(_round(vault, env, path, prompts, args.drippers))
            rounds[-1]["python -c pass"] = _floor(args.clients, env)
    return rounds


def _summary(label: str, rounds: list[dict[str, Any]]) -> str:
    def med(kind: str, q: str) -> float:
        return statistics.median(r[kind][q] for r in rounds) * 1e3

    answered = ", ".join(f"{r['answered_by_daemon']}/{r['clients']}" for r in rounds)
    cut = [r["drippers_cut_off_s"] for r in rounds if r["drippers_cut_off_s"] is not None]
    kept = f"{max(cut):.1f} s" if cut else "-"
    return (
        f"| {label} | {answered} | {med('hook', 'p50'):.0f} / {med('hook', 'p95'):.0f} | "
        f"{med('search', 'p50'):.0f} / {med('search', 'p95'):.0f} | "
        f"{med('all', 'p50'):.0f} / {med('all', 'p95'):.0f} | {kept} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--drippers", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--wait-vectors", action="store_true", help="every event's vector first")
    ap.add_argument("--work", type=Path, default=None, help="kept (default: a temporary folder)")
    ap.add_argument("--baseline", type=Path, default=None, help="another checkout, after")
    args = ap.parse_args(argv)
    work = args.work or Path(tempfile.mkdtemp(prefix="brainiac-socket-load-"))
    work.mkdir(parents=True, exist_ok=True)
    results = {"this tree": bench(args, work, None)}
    if args.baseline is not None:
        results[f"baseline ({args.baseline})"] = bench(args, work, args.baseline)
    print(f"\n### The socket under load: {args.clients} clients at once, {args.notes:,} notes\n")
    print(f"Medians of {args.rounds} rounds; {args.drippers} clients dripping meanwhile.\n")
    print(
        "| code | answered by the daemon, each round | hook p50 / p95 (ms) | "
        "search p50 / p95 (ms) | all p50 / p95 (ms) | longest drip kept |"
    )
    print("|---|---|---|---|---|---|")
    for label, rounds in results.items():
        print(_summary(label, rounds))
    floor = [r["python -c pass"] for r in results["this tree"]]
    p50, p95 = (statistics.median(f[q] for f in floor) * 1e3 for q in ("p50", "p95"))
    print(f"| `python -c pass`, as many at once | | | | {p50:.0f} / {p95:.0f} | |")
    (work / "socket_load.json").write_text(json.dumps(results, indent=2))
    print(f"\nwork folder: {work}; command: {' '.join([sys.executable, *sys.argv])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
