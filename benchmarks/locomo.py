"""LoCoMo evidence recall: brainiac against the scorer's Whoosh baseline, at several budgets.

    .venv/bin/python benchmarks/locomo.py                      # both systems, 500/2000/4000
    .venv/bin/python benchmarks/locomo.py --systems brainiac --budgets 2000

Uses the official scorer and data from `../shared/bench/locomo/` (override with --bench-dir or
the LOCOMO_DIR environment variable); neither is copied into this repository. When the data file
is absent the benchmark is skipped with a message and exit status 0. It prints the scorer's
Markdown tables (recall per category, the "1-4 macro" aggregate, mean context tokens, budget
violations, mean query ms, ingest seconds), then the 1-4 macro recall of each conversation on
its own with the spread (min, max, max - min) per system and budget, and writes the full results
JSON to `benchmarks/results/locomo-<timestamp>.json` (gitignored).

Each conversation is scored by its own `evaluate` call (the scorer builds a fresh system per
conversation anyway), and the all-conversation figures are merged from those exactly; only the
secondary "answer in context" share is merged weighted by questions.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shlex
import sys
import time
from pathlib import Path
from typing import Any

from locomo_adapter import BrainiacNoJobs, BrainiacSystem, add_data_arguments, load_scorer

HERE = Path(__file__).resolve().parent


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument(
        "--systems",
        default="whoosh_turns,brainiac",
        help="comma list: brainiac (memory jobs at each session's end), "
        "brainiac_nojobs, and/or the scorer's built-in systems",
    )
    ap.add_argument("--budgets", default="500,2000,4000")
    ap.add_argument("--limit-questions", type=int, default=0, help="per conversation (smoke runs)")
    ap.add_argument("--out", default="", help="results JSON (default: benchmarks/results/...)")
    args = ap.parse_args(argv)

    found = load_scorer(args, "LoCoMo benchmark")
    if found is None:
        return 0
    locomo_eval, data = found

    budgets = [int(b) for b in args.budgets.split(",") if b]
    factories = []
    for name in [s for s in args.systems.split(",") if s]:
        if name == "brainiac":
            factories.append(BrainiacSystem)
        elif name == "brainiac_nojobs":
            factories.append(BrainiacNoJobs)
        elif name in locomo_eval.BUILTIN:
            factories.append(locomo_eval.BUILTIN[name])
        else:
            ap.error(f"unknown system {name!r}")

    convs = locomo_eval.load_locomo(str(data))
    t_all = time.perf_counter()
    results = []
    for factory in factories:
        t0 = time.perf_counter()
        per_conv = {
            c.sample_id: locomo_eval.evaluate([c], factory, budgets, args.limit_questions or None)
            for c in convs
        }
        r = merge_results(list(per_conv.values()), budgets)
        r["per_conversation"] = per_conv
        r["wall_s"] = time.perf_counter() - t0
        results.append(r)

    md = locomo_eval.markdown_report(results, budgets)
    print(md)
    print(per_conversation_report(results, budgets, [c.sample_id for c in convs]))
    print("| system | ingest s (total) | " + " | ".join(f"query ms B={b}" for b in budgets) + " |")
    print("|" + "---|" * (len(budgets) + 2))
    for r in results:
        ms = " | ".join(f"{r['budgets'][str(b)]['mean_query_ms']:.1f}" for b in budgets)
        print(f"| {r['system']} | {r['ingest_s']:.2f} | {ms} |")

    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out = Path(args.out) if args.out else HERE / "results" / f"locomo-{stamp}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    report = {
        "data": data.name,
        "budgets": budgets,
        "conversations": [c.sample_id for c in convs],
        "versions": locomo_eval.versions(),
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "command": shlex.join([sys.executable, *sys.argv]),
        "total_wall_s": time.perf_counter() - t_all,
        "results": results,
    }
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(f"\nresults written to {out}")
    return 0


# The scorer's summary fields that are per-question means (weighted by n_q when merged) and the
# one that is per evidence turn (weighted by n_ev).
_PER_QUESTION = ("macro", "all", "loose", "soft", "ans")


def _merge_summaries(parts: list[dict[str, Any]]) -> dict[str, Any]:
    parts = [p for p in parts if p.get("n_q")]
    if not parts:
        return {"n_q": 0}
    n_q = sum(p["n_q"] for p in parts)
    n_ev = sum(p["n_ev"] for p in parts)
    out: dict[str, Any] = {"n_q": n_q, "n_ev": n_ev}
    out["micro"] = sum(p["micro"] * p["n_ev"] for p in parts) / n_ev
    for key in _PER_QUESTION:
        have = [p for p in parts if p.get(key) is not None]
        weight = sum(p["n_q"] for p in have)
        out[key] = sum(p[key] * p["n_q"] for p in have) / weight if weight else None
    return out


def merge_results(parts: list[dict[str, Any]], budgets: list[int]) -> dict[str, Any]:
    """One result over all conversations from per-conversation results of `evaluate`."""
    merged: dict[str, Any] = {
        "system": parts[0]["system"],
        "ingest_s": sum(p["ingest_s"] for p in parts),
        "budgets": {},
    }
    for b in budgets:
        rbs = [p["budgets"][str(b)] for p in parts]
        queries = sum(rb["queries"] for rb in rbs)
        cats = rbs[0]["categories"].keys()
        merged["budgets"][str(b)] = {
            "categories": {c: _merge_summaries([rb["categories"][c] for rb in rbs]) for c in cats},
            "answerable_1_4": _merge_summaries([rb["answerable_1_4"] for rb in rbs]),
            "adversarial_5": _merge_summaries([rb["adversarial_5"] for rb in rbs]),
            "mean_query_ms": sum(rb["mean_query_ms"] * rb["queries"] for rb in rbs)
            / max(1, queries),
            "mean_context_tokens": sum(rb["mean_context_tokens"] * rb["queries"] for rb in rbs)
            / max(1, queries),
            "budget_violations": sum(rb["budget_violations"] for rb in rbs),
            "queries": queries,
        }
    return merged


def per_conversation_report(
    results: list[dict[str, Any]], budgets: list[int], ids: list[str]
) -> str:
    """1-4 macro recall per conversation, with the spread, per system and budget."""
    out = ["\n### Per conversation, categories 1-4 macro recall (spread = max - min)\n"]
    out.append("| system | budget | " + " | ".join(ids) + " | min | max | spread |")
    out.append("|" + "---|" * (len(ids) + 5))
    for r in results:
        for b in budgets:
            vals = [
                r["per_conversation"][i]["budgets"][str(b)]["answerable_1_4"].get("macro")
                for i in ids
            ]
            got = [v for v in vals if v is not None]
            cells = " | ".join("-" if v is None else f"{v:.3f}" for v in vals)
            lo, hi = (min(got), max(got)) if got else (0.0, 0.0)
            out.append(f"| {r['system']} | {b} | {cells} | {lo:.3f} | {hi:.3f} | {hi - lo:.3f} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
