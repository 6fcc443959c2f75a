"""Issue 30: what reading the notes' `## Observations` costs `check`, in milliseconds per check.

Checks every response of one conversation of tests/check_corpus_locomo/ in-process
(`Memory.check`) on a copy of a kept vault (knowledge.py's `DIR/<sample_id>/` layout), first
with the observations read as evidence, then with that reader switched off:

    LOCOMO_DIR=../shared/bench/locomo .venv/bin/python \\
        benchmarks/experiments/i30_guard_observation_cost.py --vaults /tmp/knowledge_proto1

A measurement only: nothing is written outside a temporary folder.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import brainiac.guard.evidence as evidence
from brainiac import Memory
from brainiac.store.locations import Locations
from locomo_adapter import add_data_arguments, load_scorer

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "check_corpus_locomo" / "cases.yaml"


def _per_check(memory: Memory, cases: list[dict[str, Any]], now: Any) -> float:
    start = time.perf_counter()
    for case in cases:
        memory.check(case["response"], now=now)
    return 1000 * (time.perf_counter() - start) / len(cases)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--vaults", required=True, help="kept vaults, DIR/<sample_id>/")
    ap.add_argument("--conversation", default="conv-26")
    args = ap.parse_args()
    found = load_scorer(args, "observation cost")
    if found is None:
        return 0
    locomo_eval, data = found
    now = {c.sample_id: c.end_time for c in locomo_eval.load_locomo(str(data))}[args.conversation]
    cases = [
        c
        for c in yaml.safe_load(CORPUS.read_text(encoding="utf-8"))
        if c["conversation"] == args.conversation
    ]
    tmp = Path(tempfile.mkdtemp(prefix="i30_cost_"))
    try:
        shutil.copytree(Path(args.vaults) / args.conversation, tmp / "vault")
        where = Locations(cache=tmp / "cache", state=tmp / "state", runtime=tmp / "run")
        with Memory(tmp / "vault", locations=where) as memory:
            memory.refresh(force=True)
            _per_check(memory, cases[:5], now)  # warm: the index opened, files read once
            with_observations = _per_check(memory, cases, now)
            evidence.observation_lines_of = lambda memory, hits: []  # type: ignore[assignment]
            without = _per_check(memory, cases, now)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.conversation}, {len(cases)} checks: {with_observations:.1f} ms per check with")
    print(f"the observations read, {without:.1f} ms without")
    return 0


if __name__ == "__main__":
    sys.exit(main())
