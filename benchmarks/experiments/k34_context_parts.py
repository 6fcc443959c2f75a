"""Issue 34: where a context's time goes at 10,000 notes, part by part, beside another checkout,
and whether the two give the same contexts byte for byte.

    .venv/bin/python benchmarks/scale.py --sizes 10000 --context-only --rounds 1 \
        --loops context-assembly --workdir W --keep          # the vault, its index and vectors
    .venv/bin/python benchmarks/experiments/k34_context_parts.py W/brainiac-scale-*/n10000 \
        --baseline BASE --rounds 3

BASE: a checkout of another commit (`git archive c38062a | tar -x -C BASE`), its `daemon/`
first on PYTHONPATH. Each tree runs in its own process, in turn, on the same vault, index and
vectors (scale.py's `n<N>` folder: `vault/`, `cache/`, `state/`, `prompts.json`), with a fresh
copy of the state folder (a context records which notes it used) and one BLAS thread, as
scale.py's loops. `Memory.context(prompt, budget=2000)` over the prompts after 20 warm-up
calls; each part's CPU time (the process's: the cosines' helper thread counts) and the whole
call's wall and CPU time, medians and p95 over the prompts. Then the contexts of the first
`--hash` prompts at budgets 500, 2,000 and 4,000, at one fixed time, hashed per budget.
A measurement only: the vault and its index are not changed.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[2]
WARMUP = 20

# The parts, by where they are defined (the same names in the trees compared); each is timed
# inclusive, so the parts nest: nearness holds embed and cosines, assemble holds the rest.
_CHILD = r"""
import collections, datetime as dt, functools, hashlib, json, statistics, sys, time
vault, prompts_file, count, hashed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
prompts = json.loads(open(prompts_file, encoding="utf-8").read())
from brainiac import Memory
from brainiac.api import memory
from brainiac.search import context, index, retrieval, semantic, sentence_model
spent = collections.Counter()
def timed(owner, name, label):
    inner = getattr(owner, name)
    @functools.wraps(inner)
    def wrapper(*args, **kwargs):
        c = time.process_time()
        try:
            return inner(*args, **kwargs)
        finally:
            spent[label] += time.process_time() - c
    setattr(owner, name, wrapper)
for owner, name, label in [
    (sentence_model.SentenceModel, "encode", "prompt's embedding"),
    (semantic, "_cosines", "cosines"),
    (semantic.SemanticIndex, "nearness", "nearness (embedding, cosines)"),
    (index.Index, "search", "search"),
    (context, "assemble", "assembly (ranking, notes, rendering)"),
    (retrieval.ParsedNotes, "parse", "notes read and parsed"),
    (semantic.SemanticIndex, "diversified", "diversified"),
    (memory.Memory, "_record_use", "record of use"),
]:
    timed(owner, name, label)
m = Memory(vault, refresh_interval_s=float("inf"))
m.refresh(force=True)
for p in prompts[:20]:
    m.context(p, budget=2000)
parts = collections.defaultdict(list)
for p in prompts[20 : 20 + count]:
    spent.clear()
    t, c = time.perf_counter(), time.process_time()
    m.context(p, budget=2000)
    parts["whole call, wall"].append(time.perf_counter() - t)
    parts["whole call, CPU"].append(time.process_time() - c)
    for label, seconds in spent.items():
        parts[label].append(seconds)
now = dt.datetime(2026, 11, 29, 12, 0, tzinfo=dt.timezone.utc)
hashes = {}
for budget in (500, 2000, 4000):
    h = hashlib.sha256()
    for p in prompts[20 : 20 + hashed]:
        h.update(m.context(p, budget=budget, now=now).text.encode("utf-8") + b"\0")
    hashes[budget] = h.hexdigest()[:16]
print(json.dumps({"parts": parts, "hashes": hashes}))
"""


def _run(tree: Path, folder: Path, count: int, hashed: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="k34-parts-") as tmp:
        state = Path(tmp) / "state"
        shutil.copytree(folder / "state", state)
        env = {
            **os.environ,
            "XDG_CACHE_HOME": str(folder / "cache"),
            "XDG_STATE_HOME": str(state),
            "PYTHONHASHSEED": "0",
            "OPENBLAS_NUM_THREADS": "1",
            "PYTHONPATH": str(tree / "daemon"),
        }
        args = [str(folder / "vault"), str(folder / "prompts.json"), str(count), str(hashed)]
        done = subprocess.run(
            [sys.executable, "-c", _CHILD, *args], env=env, capture_output=True, text=True
        )
    if done.returncode:
        sys.exit(f"{tree}: the child failed:\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * len(ordered)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder", type=Path, help="scale.py's n<N> folder of a kept run")
    ap.add_argument("--baseline", type=Path, help="a checkout of another commit")
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--prompts", type=int, default=200, help="timed context calls")
    ap.add_argument("--hash", type=int, default=120, help="prompts whose contexts are hashed")
    args = ap.parse_args()
    trees = {"this tree": HERE}
    if args.baseline:
        trees["baseline"] = args.baseline.resolve()
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs[name].append(_run(tree, args.folder, args.prompts, args.hash))
    print(f"load average at the end: {os.getloadavg()}")
    print(
        "| part, ms (median of the rounds) | " + " | ".join(f"{n} p50 / p95" for n in trees) + " |"
    )
    print("|---|" + "---:|" * len(trees))
    for label in runs["this tree"][0]["parts"]:
        cells = []
        for name in trees:
            values = [r["parts"].get(label, [0.0]) for r in runs[name]]
            p50 = statistics.median(statistics.median(v) for v in values) * 1e3
            p95 = statistics.median(_p95(v) for v in values) * 1e3
            cells.append(f"{p50:.2f} / {p95:.2f}")
        print(f"| {label} | " + " | ".join(cells) + " |")
    for name in trees:
        print(f"{name}: contexts' hashes {runs[name][0]['hashes']}")
    hashes = {json.dumps(r["hashes"]) for rs in runs.values() for r in rs}
    print("the same contexts byte for byte" if len(hashes) == 1 else "THE CONTEXTS DIFFER")
    return 0 if len(hashes) == 1 else 1


if __name__ == "__main__":
    sys.exit(main())
