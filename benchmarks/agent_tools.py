"""What the issue-16 agent tools cost on a large vault, each beside a floor from the same run.

- `list_notes` (the MCP tool's function, `mcp_server.list_long_term`): the first call (the name
  book reads every note) and warm calls (only changed notes are re-read), beside the floor of a
  bare walk of the same notes (`Vault.markdown_files` plus an `os.stat` each).
- `jobs log --diff`: the diffs of a run over many notes (`jobs.file_diffs` on what the run
  recorded), beside the run itself: organization's first run on a vault of `--job-notes`, which
  rewrites most of its notes.

    .venv/bin/python benchmarks/agent_tools.py --notes 10000 --job-notes 1000
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainiac import Memory
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.lifecycle.jobs import edits

sys.path.insert(0, str(Path(__file__).resolve().parent))
import generate_vault


def _p95(xs: list[float]) -> float:
    return sorted(xs)[max(0, round(0.95 * len(xs)) - 1)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--notes", type=int, default=10000)
    ap.add_argument("--calls", type=int, default=20, help="warm list_notes calls")
    ap.add_argument(
        "--job-notes",
        type=int,
        default=1000,
        help="notes of the vault organization runs on (its first run on 10,000 takes minutes)",
    )
    args = ap.parse_args(argv)
    from brainiac.interfaces.mcp_server import list_long_term

    with tempfile.TemporaryDirectory() as tmp:
        for var in ("XDG_CACHE_HOME", "XDG_STATE_HOME", "XDG_RUNTIME_DIR"):
            os.environ[var] = str(Path(tmp) / var)
        vault = Path(tmp) / "vault"
        generate_vault.generate(vault, args.notes, seed=1)
        out: dict[str, object] = {"notes": args.notes}
        with Memory(vault) as memory:
            memory.refresh(force=True)

            def floor() -> float:
                t = time.perf_counter()
                for rel in memory.vault.markdown_files("memory/long_term"):
                    os.stat(memory.vault.path(rel))
                return time.perf_counter() - t

            t = time.perf_counter()
            listed = list_long_term(memory, None, False)
            out["list_notes_first_s"] = round(time.perf_counter() - t, 3)
            out["listed"] = len(listed)
            warm = []
            floors = []
            for _ in range(args.calls):
                floors.append(floor())
                t = time.perf_counter()
                list_long_term(memory, None, False)
                warm.append(time.perf_counter() - t)
            out["list_notes_warm_median_ms"] = round(statistics.median(warm) * 1000, 1)
            out["list_notes_warm_p95_ms"] = round(_p95(warm) * 1000, 1)
            out["walk_floor_median_ms"] = round(statistics.median(floors) * 1000, 1)
            out["list_notes_vs_floor"] = round(
                statistics.median(warm) / statistics.median(floors), 2
            )
        print(json.dumps(out), file=sys.stderr, flush=True)  # kept if the job part is cut short

        if args.job_notes != args.notes:
            vault = Path(tmp) / "vault-jobs"
            generate_vault.generate(vault, args.job_notes, seed=2)
        out["job_notes"] = args.job_notes
        with Memory(vault) as memory:
            now = dt.datetime(2027, 6, 1, 12, 0)  # months later: decay and archiving have work
            t = time.perf_counter()
            with edits.recording() as texts:
                report = jobs_mod.JOBS["organization"].run(memory, now, False)
            out["organization_s"] = round(time.perf_counter() - t, 3)
            out["organization_files_changed"] = len(texts)
            t = time.perf_counter()
            diffs = jobs_mod.file_diffs(texts)
            out["diffs_s"] = round(time.perf_counter() - t, 3)
            out["diffs_kept_bytes"] = sum(
                len(d.encode()) for d in diffs.values() if not d.startswith("(diff not kept")
            )
            out["diffs_vs_run"] = round(out["diffs_s"] / max(out["organization_s"], 1e-9), 3)  # type: ignore[operator]
            out["organization_summary"] = report.summary[:120]
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
