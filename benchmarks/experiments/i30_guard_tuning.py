"""Issue 30: how much the guard's decisions depend on numbers set on one corpus.

Checks every response of a labelled LoCoMo corpus (tests/check_corpus_locomo/ by default) on
copies of kept vaults (knowledge.py's `DIR/<sample_id>/` layout) and reports:

- which path decided each flag (the facts or the events) and by which kind of value, recall per
  conversation, per value type of the corpus and per LoCoMo question category;
- with `--sweep`, the figures per conversation as each numeric threshold of the event path moves
  over a range, and a leave-one-conversation-out choice: the value the three other conversations
  would pick (highest recall with precision >= 0.95 and right answers flagged <= 2%), measured
  on the fourth. A rule that carries shows the same choice and the same figures everywhere.

    LOCOMO_DIR=../shared/bench/locomo .venv/bin/python benchmarks/experiments/i30_guard_tuning.py \\
        --vaults DIR [--sweep]

A measurement only: nothing is written outside a temporary folder. Never run it on a hold-out
corpus: it prints per-case detail.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import brainiac.guard.evidence as evidence
import brainiac.guard.evidence.alignment as alignment
from brainiac import Memory
from brainiac.store.locations import Locations
from locomo_adapter import add_data_arguments, load_scorer

CORPUS = Path(__file__).resolve().parents[2] / "tests" / "check_corpus_locomo" / "cases.yaml"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

# (module, name, values tried): the event path's numbers
SWEEPS: list[tuple[Any, str, list[Any]]] = [
    (evidence, "_ALIGNED", [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.7]),
    (evidence, "_ALIGNED_CLAUSES", [0.45, 0.5, 0.6, 0.7, 0.8]),
    (evidence, "_MARGIN", [0.0, 0.1, 0.25, 0.4, 1.0]),
    (alignment, "_RELATED", [0.25, 0.3, 0.4, 0.5]),
    (evidence, "_DATE_SLACK", [dt.timedelta(days=d) for d in (0, 1, 3, 7, 14)]),
]


def _open(built: Path, tmp: Path) -> Memory:
    vault = tmp / "vault"
    shutil.copytree(built, vault)
    locations = Locations(cache=tmp / "cache", state=tmp / "state", runtime=tmp / "run")
    memory = Memory(vault, locations=locations)
    memory.refresh(force=True)
    return memory


def _run(memories: dict[str, tuple[Memory, Any]], cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Per case: flagged, and the path that flagged it."""
    out: dict[str, Any] = {}
    for case in cases:
        memory, now = memories[case["conversation"]]
        result = memory.check(case["response"], now=now)
        by = sorted({f.source or "?" for f in result.findings if f.status == "conflict"})
        out[case["id"]] = (bool(result.conflicts), ",".join(by))
    return out


def _figures(cases: list[dict[str, Any]], got: dict[str, Any]) -> dict[str, float]:
    n = Counter(c["label"] for c in cases)
    flagged = Counter(c["label"] for c in cases if got[c["id"]][0])
    total = sum(flagged.values())
    return {
        "precision": flagged["conflict"] / total if total else 1.0,
        "recall": flagged["conflict"] / max(n["conflict"], 1),
        "right": flagged["consistent"] / max(n["consistent"], 1),
        "neutral": flagged["neutral"] / max(n["neutral"], 1),
        "fp": flagged["consistent"] + flagged["neutral"],
    }


def _line(name: str, f: dict[str, float]) -> str:
    return (
        f"{name:<28} P {f['precision']:.3f}  R {f['recall']:.3f}  right {f['right']:.3f}"
        f"  neutral {f['neutral']:.3f}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--vaults", required=True, help="kept vaults, DIR/<sample_id>/")
    ap.add_argument("--corpus", default=str(CORPUS))
    ap.add_argument("--sweep", action="store_true", help="move each threshold (slow)")
    ap.add_argument("--json", default="", help="write the per-case outcomes here")
    args = ap.parse_args()
    found = load_scorer(args, "guard tuning")
    if found is None:
        return 0
    locomo_eval, data = found
    cases: list[dict[str, Any]] = yaml.safe_load(Path(args.corpus).read_text(encoding="utf-8"))
    raw = json.loads(Path(data).read_text(encoding="utf-8"))
    category = {(c["sample_id"], q["question"]): q.get("category") for c in raw for q in c["qa"]}
    convs = {c.sample_id: c for c in locomo_eval.load_locomo(str(data))}
    order = list(dict.fromkeys(c["conversation"] for c in cases))
    tmp = Path(tempfile.mkdtemp(prefix="guard_tuning_"))
    memories = {
        sid: (_open(Path(args.vaults) / sid, tmp / sid), convs[sid].end_time) for sid in order
    }
    try:
        got = _run(memories, cases)
        _report(cases, got, category)
        if args.json:
            Path(args.json).write_text(json.dumps(got, indent=1), encoding="utf-8")
        if args.sweep:
            _sweep(memories, cases, order)
    finally:
        for memory, _ in memories.values():
            memory.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


def _report(
    cases: list[dict[str, Any]], got: dict[str, Any], category: dict[tuple[str, str], Any]
) -> None:
    print(_line("all", _figures(cases, got)))
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for c in cases:
        groups[f"conv {c['conversation']}"].append(c)
        groups[f"type {c['type']}"].append(c)
        cat = CATEGORIES.get(category.get((c["conversation"], c["qa"])) or 0, "other")
        groups[f"category {cat}"].append(c)
    for name in sorted(groups):
        members = groups[name]
        n = sum(c["label"] == "conflict" for c in members)
        print(_line(f"{name} ({n})", _figures(members, got)))
    paths = Counter(got[c["id"]][1] for c in cases if got[c["id"]][0] and c["label"] == "conflict")
    print("flags on wrong values, by path:", dict(paths))
    by_conv: dict[str, Counter[str]] = defaultdict(Counter)
    for c in cases:
        if got[c["id"]][0] and c["label"] == "conflict":
            by_conv[c["conversation"]][f"{got[c['id']][1]}:{c['type']}"] += 1
    for sid, counts in sorted(by_conv.items()):
        print(f"  {sid}: {dict(sorted(counts.items()))}")


def _sweep(
    memories: dict[str, tuple[Memory, Any]], cases: list[dict[str, Any]], order: list[str]
) -> None:
    of = {sid: [c for c in cases if c["conversation"] == sid] for sid in order}
    for module, name, values in SWEEPS:
        base = getattr(module, name)
        runs: dict[Any, dict[str, Any]] = {}
        try:
            for v in values:
                setattr(module, name, v)
                runs[v] = _run(memories, cases)
        finally:
            setattr(module, name, base)
        print(f"\n{name} (now {base}):")
        for v, got in runs.items():
            each = {sid: _figures(of[sid], got) for sid in order}
            per = "  ".join(
                f"{sid[-2:]} {f['recall']:.2f}/{f['fp']:.0f}" for sid, f in each.items()
            )
            print(f"  {v!s:>10}: {_line('', _figures(cases, got))}   recall/false flags: {per}")
        for held in order:
            # the value the three others would choose, on their cases pooled
            others = [c for c in cases if c["conversation"] != held]
            pooled = {v: _figures(others, got) for v, got in runs.items()}
            ok = [v for v, f in pooled.items() if f["precision"] >= 0.95 and f["right"] <= 0.02]
            pick = max(ok, key=lambda v: pooled[v]["recall"]) if ok else base
            f = _figures(of[held], runs[pick])
            print(
                f"  leave out {held}: the others pick {pick}; on {held} P {f['precision']:.3f}"
                f" R {f['recall']:.3f} right {f['right']:.3f}"
            )


if __name__ == "__main__":
    sys.exit(main())
