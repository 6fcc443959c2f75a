"""How long importing a chat export takes, against the floor of only parsing it.

    .venv/bin/python benchmarks/import_speed.py [--conversations 500] [--messages 40] [--runs 3]

A ChatGPT-shaped `conversations.json` (the largest common export) is generated with the given
size, then, in fresh vaults, each run measures:

- parse: `chatlogs.parse` alone (the floor: reading and walking the JSON);
- first import: parse, keys, the write-ahead intent, the archived copy, the events into the
  short-term Event Log in time order, the records;
- re-import: the same file again (everything a duplicate);
- grown: the export with one more message in every conversation.

Medians of the runs are printed with the ratio to the floor, and the peak RSS of the process.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from brainiac import Memory
from brainiac.exchange import chatlogs
from brainiac.store.locations import Locations


def export(conversations: int, messages: int, extra: int = 0) -> list[dict[str, object]]:
    out = []
    base = 1_760_000_000
    for c in range(conversations):
        mapping: dict[str, dict[str, object]] = {
            "root": {"id": "root", "message": None, "parent": None, "children": ["m0"]}
        }
        total = messages + extra
        for i in range(total):
            node = f"m{i}"
            mapping[node] = {
                "id": node,
                "message": {
                    "id": f"{c}-{i}",
                    "author": {"role": "user" if i % 2 == 0 else "assistant"},
                    "create_time": base + c * 3600 + i * 30,
                    "content": {
                        "content_type": "text",
                        "parts": [f"Message {i} of chat {c}: planning the trip to city {c % 97}."],
                    },
                },
                "parent": "root" if i == 0 else f"m{i - 1}",
                "children": [f"m{i + 1}"] if i + 1 < total else [],
            }
        out.append(
            {
                "title": f"Chat {c}",
                "create_time": base + c * 3600,
                "conversation_id": f"conv-{c:05d}",
                "current_node": f"m{total - 1}",
                "mapping": mapping,
            }
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--messages", type=int, default=40)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    os.environ.pop("BRAINIAC_VAULT", None)
    results: dict[str, list[float]] = {"parse": [], "first": [], "again": [], "grown": []}
    with tempfile.TemporaryDirectory() as tmp:
        small = Path(tmp) / "conversations.json"
        small.write_text(json.dumps(export(args.conversations, args.messages)), encoding="utf-8")
        grown = Path(tmp) / "grown" / "conversations.json"
        grown.parent.mkdir()
        grown.write_text(
            json.dumps(export(args.conversations, args.messages, extra=1)), encoding="utf-8"
        )
        size_mb = small.stat().st_size / 1e6
        for run in range(args.runs):
            vault = Path(tmp) / f"vault{run}"
            Memory.init(vault)
            env = {"XDG_CACHE_HOME": f"{tmp}/cache{run}", "XDG_STATE_HOME": f"{tmp}/state{run}"}
            with Memory(vault, locations=Locations.for_vault(vault, env)) as memory:
                start = time.perf_counter()
                chatlogs.parse(small)
                results["parse"].append(time.perf_counter() - start)
                for name, path in (("first", small), ("again", small), ("grown", grown)):
                    start = time.perf_counter()
                    (report,) = memory.import_files([path])
                    results[name].append(time.perf_counter() - start)
                    if name == "first":
                        assert report.new == args.conversations * args.messages, report
    floor = statistics.median(results["parse"])
    total = args.conversations * args.messages
    print(
        f"export: {args.conversations} conversations x {args.messages} messages = {total} "
        f"messages, {size_mb:.1f} MB; {args.runs} runs (medians)"
    )
    for name, label in (
        ("parse", "parse only (floor)"),
        ("first", "first import"),
        ("again", "re-import, all duplicates"),
        ("grown", f"grown by {args.conversations} messages"),
    ):
        t = statistics.median(results[name])
        print(f"  {label:<28} {t:7.2f} s  {t / floor:5.1f}x floor")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"  peak RSS of the process: {peak:.0f} MB")
    sys.exit(0)


if __name__ == "__main__":
    main()
