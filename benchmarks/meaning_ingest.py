"""What recall by meaning adds to taking in a conversation (issue 13: ingest with the jobs at most
2x the time without): each LoCoMo development conversation ingested as benchmarks/locomo.py does
(one `remember` per turn, the memory jobs at each session's end, the index built), then its first
question asked, which is when a library caller's new events are embedded; meaning on and off in
turn, in the same run.

    LOCOMO_DIR=../shared/bench/locomo .venv/bin/python benchmarks/meaning_ingest.py [--rounds 2]

Skipped (exit 0) when the data is absent. Prints, per conversation, the medians over the rounds
of ingest seconds, first-question seconds and their sum, each way, and the ratio of the sums.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

from locomo_adapter import BrainiacSystem, add_data_arguments, load_scorer


def _once(conversation: object, meaning: bool) -> tuple[float, float]:
    os.environ["BRAINIAC_RETRIEVAL_MEANING"] = "true" if meaning else "false"
    system = BrainiacSystem()
    try:
        started = time.perf_counter()
        system.ingest(conversation)
        ingested = time.perf_counter()
        system.context("What did they talk about first?", 2000)
        return ingested - started, time.perf_counter() - ingested
    finally:
        system.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--rounds", type=int, default=2)
    args = ap.parse_args(argv)
    found = load_scorer(args, "meaning_ingest")
    if found is None:
        return 0
    locomo_eval, data = found
    conversations = locomo_eval.load_locomo(str(data))
    print(
        "| conversation | turns | meaning: ingest + first question (s) | words only (s) | ratio |"
    )
    print("|---|---:|---:|---:|---:|")
    totals = {True: 0.0, False: 0.0}
    for conv in conversations:
        times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
        for i in range(args.rounds):
            for meaning in (True, False) if i % 2 == 0 else (False, True):
                times[meaning].append(_once(conv, meaning))
        turns = sum(len(s.turns) for s in conv.sessions)
        cells = {}
        for meaning in (True, False):
            ingest = statistics.median(t[0] for t in times[meaning])
            first = statistics.median(t[1] for t in times[meaning])
            cells[meaning] = (ingest, first)
            totals[meaning] += ingest + first
        on, off = cells[True], cells[False]
        print(
            f"| {conv.sample_id} | {turns} | {on[0]:.1f} + {on[1]:.1f} = {sum(on):.1f} "
            f"| {off[0]:.1f} + {off[1]:.1f} = {sum(off):.1f} | {sum(on) / sum(off):.2f}x |"
        )
    print(
        f"| all | | {totals[True]:.1f} | {totals[False]:.1f} | "
        f"{totals[True] / totals[False]:.2f}x |"
    )
    print(f"\ncommand: {' '.join([sys.executable, *sys.argv])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
