"""`brainiac serve --http` under many remote agents: the latency of the `context` tool, called by
many concurrent clients of the official MCP SDK over streamable HTTP on loopback, at 10,000 notes.

The server is the real command (`brainiac serve --http --port 0 --token-file ...`) as a
subprocess; the clients are SDK sessions (`streamable_http_client` + `ClientSession`) in this
process, each with the bearer token, each opened before the clock starts. Three loads:

- `single`: one client, one call after another: the floor of one context over HTTP;
- `paced`: every client calls `context` at random times, `--interval` seconds apart on average
  (an exponential wait: agents prompting independently), `--calls` times each;
- `closed`: every client calls again as soon as it is answered, `--calls` times each: the
  saturated server, where a call waits for every call before it (the Memory answers one at a
  time).

    .venv/bin/python benchmarks/mcp_http_load.py --vault /tmp/v10k --clients 50

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


def start_server(vault: Path, token_file: Path, log: Path) -> tuple[subprocess.Popen[str], str]:
    command = [sys.executable, "-m", "brainiac", "--vault", str(vault), "serve", "--http"]
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [*command, "--port", "0", "--token-file", str(token_file)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
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
    url: str, token: str, clients: int, calls: int, interval: float, prompts: list[str]
) -> dict[str, dict[str, float]]:
    from contextlib import AsyncExitStack

    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

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
        warm: list[float] = []
        for prompt in prompts[:5]:  # the server's first calls load what later calls reuse
            await call(sessions[0], prompt, warm)
        single: list[float] = []
        for i in range(calls):
            await call(sessions[0], prompts[i % len(prompts)], single)
        results["single"] = _summary(single)

        paced: list[float] = []
        rng = random.Random(1)

        async def paced_client(n: int) -> None:
            for i in range(calls):
                await anyio.sleep(rng.expovariate(1 / interval))
                await call(sessions[n], prompts[(n * calls + i) % len(prompts)], paced)

        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(paced_client, n)
        results["paced"] = _summary(paced)

        closed: list[float] = []

        async def closed_client(n: int) -> None:
            for i in range(calls):
                await call(sessions[n], prompts[(n * calls + i) % len(prompts)], closed)

        start = time.perf_counter()
        async with anyio.create_task_group() as tg:
            for n in range(clients):
                tg.start_soon(closed_client, n)
        results["closed"] = _summary(closed)
        results["closed"]["calls_per_s"] = round(len(closed) / (time.perf_counter() - start), 1)
        return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--vault", type=Path, required=True, help="generated there when missing")
    ap.add_argument("--notes", type=int, default=10000, help="notes of a generated vault")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--calls", type=int, default=10, help="context calls per client and load")
    ap.add_argument("--interval", type=float, default=5.0, help="paced: mean seconds between")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

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
        proc, url = start_server(args.vault, token_file, Path(tmp) / "serve.log")
        try:
            token = token_file.read_text().strip()
            results: dict[str, Any] = anyio.run(
                run_loads, url, token, args.clients, args.calls, args.interval, prompts
            )
        finally:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=60)
    results["setup"] = {
        "notes": sum(1 for _ in (args.vault / "memory/long_term").rglob("*.md")),
        "clients": args.clients,
        "calls": args.calls,
        "interval_s": args.interval,
        "cpus": os.cpu_count(),
    }
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    print(json.dumps(results["setup"]))
    for name in ("single", "paced", "closed"):
        print(f"{name:7} " + "  ".join(f"{k} {v}" for k, v in results[name].items()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
