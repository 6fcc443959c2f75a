"""A context's CPU time in a project, in a vault shared by projects against the project alone,
and whether the shared vault's scoped contexts are the same text under other code (issue 35).

    .venv/bin/python benchmarks/experiments/k35_projects_timing.py build DIR [--turns 10000]
    OPENBLAS_NUM_THREADS=1 .venv/bin/python benchmarks/experiments/k35_projects_timing.py \
        time DIR OUT.json [--rounds 3] [--fresh]
    .venv/bin/python benchmarks/experiments/k35_projects_timing.py compare A.json B.json

`build` makes DIR/alone-<id> (one development conversation each) and DIR/shared (all four, each
a project, their turns interleaved), the first `--turns` turns of each, no memory jobs: quicker
than benchmarks/locomo_projects.py (no jobs, no scoring), and the vaults can be kept and asked
by one version of the code after another; each index is merged as an idle daemon leaves it
(locomo_projects.merge_like_the_daemon). `time` asks the first 25 questions of each
conversation of three systems in turn (the order rotating): alone in project=<id> ("a"), alone
without a project ("u", as locomo_projects.py asks its "alone"), and the shared vault in
project=<id> ("s"), at 500, 2,000 and 4,000 tokens, the prompt embedded before the timing (as
locomo_projects.py); with `--fresh` the caches are warmed on the next 25 questions, so that a
timed question's first context pays for its new words (as locomo_projects.py's do). It prints
the median and mean CPU milliseconds of a context per system and budget with shared / alone,
and writes them with a digest of every context to OUT.json.
`compare` counts the contexts that differ between two such files (the same DIR asked twice).
One BLAS thread: a second one spins on a shared machine and its CPU is counted too.

The data: LOCOMO_DIR (default /work/shared/bench/locomo), its locomo-dev.json only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from brainiac import Memory
from brainiac.store import projects
from brainiac.store.locations import Locations

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from locomo_projects import merge_like_the_daemon

BUDGETS = (500, 2000, 4000)
QUESTIONS = 25
START = dt.datetime(2023, 1, 1)
NOW = START + dt.timedelta(days=30)


def _data() -> list[dict[str, Any]]:
    folder = Path(os.environ.get("LOCOMO_DIR", "/work/shared/bench/locomo"))
    data: list[dict[str, Any]] = json.loads((folder / "locomo-dev.json").read_text())
    return data


def _turns(conversation: dict[str, Any], n: int) -> list[tuple[str, str, str]]:
    """The first `n` turns as (session, speaker, text), sessions in order."""
    out = []
    sessions = conversation["conversation"]
    i = 1
    while f"session_{i}" in sessions:
        out += [(f"session {i}", t["speaker"], t["text"]) for t in sessions[f"session_{i}"]]
        i += 1
    return out[:n]


def _memory(root: Path) -> Memory:
    locations = Locations(cache=root / "cache", state=root / "state", runtime=root / "run")
    return Memory(root / "vault", locations=locations)


def _build(root: Path, conversations: list[dict[str, Any]], n: int) -> None:
    """A vault of `conversations`, each a project, the j-th turns of all before the j+1-th."""
    Memory.init(root / "vault")
    m = _memory(root)
    rows = [(j, c["sample_id"], t) for c in conversations for j, t in enumerate(_turns(c, n))]
    rows.sort(key=lambda r: (r[0], r[1]))
    for j, project, (session, speaker, text) in rows:
        at = START + dt.timedelta(minutes=j)
        m.remember(text, role=speaker, session=session, at=at, project=project)
    m.refresh(force=True)
    merge_like_the_daemon(m)
    if m.semantic is not None:
        m.semantic.fill()
        m.semantic.save()
    m.close()


def build(folder: Path, turns: int) -> None:
    data = _data()
    for c in data:
        _build(folder / f"alone-{c['sample_id']}", [c], turns)
    _build(folder / "shared", data, turns)


def timed(folder: Path, out: Path, rounds: int, fresh: bool) -> None:
    data = _data()
    shared = _memory(folder / "shared")
    alone = {c["sample_id"]: _memory(folder / f"alone-{c['sample_id']}") for c in data}
    asked = [(c["sample_id"], [q["question"] for q in c["qa"][:QUESTIONS]]) for c in data]
    # Warm (the model, the searchers' caches) on the questions timed, or with `fresh` on the
    # next ones: then each timed question's first context counts its new words' statistics,
    # as in locomo_projects.py, which asks every question once per budget.
    warm = [
        (c["sample_id"], [q["question"] for q in c["qa"][QUESTIONS : 2 * QUESTIONS]]) for c in data
    ]
    for project, questions in warm if fresh else asked:
        for q in questions:
            for m, p in ((alone[project], project), (alone[project], None), (shared, project)):
                m.context(q, budget=2000, now=NOW, project=p)
    names = ("a", "u", "s")
    cpu: dict[str, dict[int, list[float]]] = {s: {b: [] for b in BUDGETS} for s in names}
    digests: dict[str, str] = {}
    for r in range(rounds):
        for project, questions in asked:
            systems = {
                "a": (alone[project], project),
                "u": (alone[project], None),
                "s": (shared, project),
            }
            for i, q in enumerate(questions):
                for m, p in systems.values():  # the prompt's embedding, untimed
                    m._nearness(q, projects.Scope.of(p, m.config))
                turn = (i + r) % len(names)
                for budget in BUDGETS:
                    for name in names[turn:] + names[:turn]:
                        m, p = systems[name]
                        started = time.process_time()
                        text = m.context(q, budget=budget, now=NOW, project=p).text
                        cpu[name][budget].append(time.process_time() - started)
                        key = f"{name} {project} {i} {budget}"
                        digests[key] = hashlib.sha256(text.encode()).hexdigest()
    figures = {}
    for budget in BUDGETS:
        median = {n: 1000 * statistics.median(cpu[n][budget]) for n in names}
        mean = {n: 1000 * statistics.mean(cpu[n][budget]) for n in names}
        figures[budget] = {"median": median, "mean": mean}
        for label, ms in (("median", median), ("mean", mean)):
            print(
                f"{budget} tokens, {label} CPU ms: alone in its project {ms['a']:.2f}, alone "
                f"unscoped {ms['u']:.2f}, shared scoped {ms['s']:.2f}; shared / alone "
                f"x{ms['s'] / ms['a']:.3f}, shared / alone unscoped x{ms['s'] / ms['u']:.3f}"
            )
    out.write_text(json.dumps({"figures": figures, "digests": digests}, indent=1))


def compare(first: Path, second: Path) -> None:
    a = json.loads(first.read_text())["digests"]
    b = json.loads(second.read_text())["digests"]
    for name, label in (("s", "shared scoped"), ("a", "alone"), ("u", "alone unscoped")):
        keys = [k for k in a if k.startswith(name + " ")]
        differ = sum(a[k] != b.get(k) for k in keys)
        print(f"{label}: {differ} of {len(keys)} contexts differ")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("folder", type=Path)
    b.add_argument("--turns", type=int, default=10_000)
    t = sub.add_parser("time")
    t.add_argument("folder", type=Path)
    t.add_argument("out", type=Path)
    t.add_argument("--rounds", type=int, default=3)
    t.add_argument("--fresh", action="store_true", help="warm on other questions than those timed")
    c = sub.add_parser("compare")
    c.add_argument("first", type=Path)
    c.add_argument("second", type=Path)
    args = parser.parse_args()
    if args.command == "build":
        build(args.folder, args.turns)
    elif args.command == "time":
        timed(args.folder, args.out, args.rounds, args.fresh)
    else:
        compare(args.first, args.second)
    return 0


if __name__ == "__main__":
    sys.exit(main())
