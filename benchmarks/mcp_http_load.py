"""`brainiac serve --http` under many remote agents: the latency of the `context` tool, called by
many concurrent clients of the official MCP SDK over streamable HTTP on loopback, at 10,000 notes.

The server is the real command (`brainiac serve --http --port 0 --token-file ...`) as a
subprocess; the clients are SDK sessions (`streamable_http_client` + `ClientSession`) in this
process, each with the bearer token, each opened before the clock starts. The loads:

- `single`: one client, one call after another: the floor of one context over HTTP;
- `paced Ns`, one per `--intervals` value: every client calls `context` at random times, N
  seconds apart on average (an exponential wait: agents prompting independently), `--calls`
  times each; 50 agents a prompt every 30 s each is 1.7 calls a second in all;
- `closed`: every client calls again as soon as it is answered, `--calls` times each: the
  saturated server; its calls a second are the most the server answers.

Each load also gives the server's CPU time per call (user + system, from /proc): on a machine
whose other work moves the wall times, what the server spent is the steadier figure; the same
less what the server spends at rest with every session open (`idle`, measured over `--idle-s`
before the loads: its timers and the pings of the sessions' event streams, which a sparse load
divides among few calls); the time its threads were ready to run but waited for a core, summed
over them (from /proc's schedstat: the machine's other work, or the server's own threads queued
behind one another), per call; and the load average when the load ended.

    .venv/bin/python benchmarks/mcp_http_load.py --vault /tmp/v10k --clients 50

`--server-path DIR` puts DIR first on the server's PYTHONPATH: another checkout's server
(`git archive REV daemon | tar -x -C DIR`, then `--server-path DIR/daemon`) against the same
clients, vault and machine, for a before and after in one run.

A `--vault` that does not exist is generated there (benchmarks/generate_vault.py) and indexed
first, which takes minutes at 10,000 notes; the index lives in the XDG state folder as usual.
Prints p50 / p95 / max per load, in milliseconds, and the same as JSON with --json.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_vault

_SERVING = re.compile(r"serving .* at (http://\S+)/mcp ")


def _pct(xs: list[float], q: float) -> float:
    return sorted(xs)[max(0, round(q * len(xs)) - 1)]


def _summary(ms: list[float]) -> dict[str, float]:
    return {
        "calls": len(ms),
        "p50_ms": round(statistics.median(ms), 1),
        "p95_ms": round(_pct(ms, 0.95), 1),
        "max_ms": round(max(ms), 1),
    }


def server_cpu_s(pid: int) -> float:
    """The user + system CPU seconds process `pid` has used so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_waited_s(pid: int) -> float:
    """The seconds the threads of process `pid` alive now have spent ready to run but waiting
    for a core (Linux schedstat; threads that have ended are not counted)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[1])
        except (OSError, IndexError, ValueError):
            continue  # a thread that ended meanwhile
    return total / 1e9


def start_server(
    vault: Path, token_file: Path, log: Path, server_path: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "brainiac", "--vault", str(vault), "serve", "--http"]
    env = dict(os.environ)
    if server_path is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(server_path), env.get("PYTHONPATH")]))
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [*command, "--port", "0", "--token-file", str(token_file)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
            env=env,
        )
    end = time.monotonic() + 300
    while time.monotonic() < end:
        found = _SERVING.search(log.read_text())
        if found:
            return proc, found.group(1)
        if proc.poll() is not None:
            break
        time.sleep(0.1)  # polling the server's log for its one line
    proc.kill()
    raise SystemExit(f"the server did not start:\n{log.read_text()}")


async def run_loads(
    url: str, token: str, pid: int, setup: argparse.Namespace, prompts: list[str]
) -> dict[str, dict[str, float]]:
    from contextlib import AsyncExitStack

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    clients, calls = setup.clients, setup.calls
    async with AsyncExitStack() as stack:
        sessions: list[ClientSession] = []
        for _ in range(clients):
            http = await stack.enter_async_context(
                create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
            )
            read, write = await stack.enter_async_context(
                streamable_http_client(f"{url}/mcp", http_client=http)
            )
            session = await stack.enter_async_context(ClientSession(read, write))
            await session.initialize()
            sessions.append(session)

        async def call(session: ClientSession, prompt: str, into: list[float]) -> None:
            start = time.perf_counter()
            result = await session.call_tool("context", {"prompt": prompt})
            into.append((time.perf_counter() - start) * 1000)
            assert not result.is_error, result.content

        results: dict[str, dict[str, float]] = {}

        waited = [0.0]
        idle_cpu_per_s = [0.0]

        def measured(name: str, ms: list[float], cpu_before: float, began: float) -> None:
            took = time.perf_counter() - began
            results[name] = _summary(ms)
            results[name]["calls_per_s"] = round(len(ms) / took, 2)
            cpu = server_cpu_s(pid) - cpu_before
            results[name]["server_cpu_ms_per_call"] = round(1000 * cpu / len(ms), 1)
            busy = cpu - idle_cpu_per_s[0] * took
            results[name]["server_busy_cpu_ms_per_call"] = round(1000 * busy / len(ms), 1)
            now = server_waited_s(pid)
            results[name]["server_wait_ms_per_call"] = round(1000 * (now - waited[0]) / len(ms), 1)
            results[name]["load_average"] = round(os.getloadavg()[0], 1)

        def start() -> tuple[float, float]:
            waited[0] = server_waited_s(pid)
            return server_cpu_s(pid), time.perf_counter()

        warm: list[float] = []
        for prompt in prompts[:5]:  # the server's first calls load what later calls reuse
            await call(sessions[0], prompt, warm)
        # What the server spends with every session open and no call (its timers, the pings
        # of the sessions' event streams): over a sparse load, a share of each call's CPU.
        cpu, began = start()
        await anyio.sleep(setup.idle_s)
        idle_cpu_per_s[0] = (server_cpu_s(pid) - cpu) / (time.perf_counter() - began)
        results["idle"] = {"server_cpu_ms_per_s": round(1000 * idle_cpu_per_s[0], 1)}
        single: list[float] = []
        cpu, began = start()
        for i in range(calls * 2):
            await call(sessions[0], prompts[i % len(prompts)], single)
        measured("single", single, cpu, began)

        for interval in setup.intervals:
            paced: list[float] = []
            rng = random.Random(1)

            async def paced_client(
                n: int, into: list[float], mean_s: float, rng: random.Random
            ) -> None:
                for i in range(calls):
                    await anyio.sleep(rng.expovariate(1 / mean_s))
                    await call(sessions[n], prompts[(n * calls + i) % len(prompts)], into)

            cpu, began = start()
            async with anyio.create_task_group() as tg:
                for n in range(clients):
                    tg.start_soon(paced_client, n, paced, interval, rng)
            measured(f"paced {interval:g}s", paced, cpu, began)
            results[f"paced {interval:g}s"]["offered_per_s"] = round(clients / interval, 2)

        closed: list[float] = []

        async def closed_client(n: int) -> None:
            for i in range(calls):
                await call(sessions[n], prompts[(n * calls + i) % len(prompts)], closed)

        cpu, began = start()
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(closed_client, n)
        measured("closed", closed, cpu, began)
        return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, required=True, help="generated there when missing")
    ap.add_argument("--notes", type=int, default=10000, help="notes of a generated vault")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--calls", type=int, default=4, help="context calls per client and load")
    ap.add_argument(
        "--intervals",
        type=lambda text: [float(x) for x in text.split(",")],
        default=[30.0, 10.0, 5.0, 2.5],
        help="paced loads: each client's mean seconds between prompts, comma-separated",
    )
    ap.add_argument("--interval", type=float, help="one paced load only: --intervals N")
    ap.add_argument("--server-path", type=Path, help="first on the server's PYTHONPATH")
    ap.add_argument(
        "--idle-s",
        type=float,
        default=10.0,
        help="seconds of no calls, every session open, to measure the server's CPU at rest",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if args.interval is not None:
        args.intervals = [args.interval]

    if not args.vault.exists():
        generate_vault.generate(args.vault, args.notes, seed=1)
        subprocess.run(
            [sys.executable, "-m", "brainiac", "--vault", str(args.vault), "reindex"],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    prompts = generate_vault.prompts(7, 200, args.notes)
    with tempfile.TemporaryDirectory(prefix="brainiac-http-") as tmp:
        token_file = Path(tmp) / "token"
        proc, url = start_server(args.vault, token_file, Path(tmp) / "serve.log", args.server_path)
        try:
            token = token_file.read_text().strip()
            results: dict[str, Any] = anyio.run(run_loads, url, token, proc.pid, args, prompts)
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    results["setup"] = {
        "notes": sum(1 for _ in (args.vault / "memory/long_term").rglob("*.md")),
        "clients": args.clients,
        "calls": args.calls,
        "server": str(args.server_path or "this checkout"),
        "cpus": os.cpu_count(),
        "load_average": os.getloadavg()[0],
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(json.dumps(results["setup"]))
    for name, figures in results.items():
        if name != "setup":
            print(f"{name:11} " + "  ".join(f"{k} {v}" for k, v in figures.items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
