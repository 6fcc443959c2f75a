"""Draw observations and facts at random across the vaults benchmarks/knowledge.py built, to
label by hand (issue 30: precision on 100; the labels are benchmarks/knowledge_labels.jsonl).

    .venv/bin/python benchmarks/experiments/k30_draw.py --vaults DIR --data FILE [--n N] [--seed S]

Each line printed is a JSON object: conversation, note, kind (observation or fact), text,
source (event id), turn (LoCoMo dia id), speaker and the source turn's text, in the order drawn
(`--seed`, 30 unless given, over the pool sorted by conversation, kind, text and source, so the
draw is the same for the same vaults). Lines without an event id are not drawn. A new seed draws
a set the extractor was not tuned on: benchmarks/knowledge_labels.jsonl is the draw of seed 35.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import knowledge  # benchmarks/, on the path above


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=30)
    args = ap.parse_args()
    pool = []
    for conv in knowledge.load(Path(args.data)):
        ids = knowledge.turn_event_ids(conv)
        by_event = {ids[t.dia_id]: t for t in conv.turns() if t.dia_id in ids}
        speakers = {s.casefold() for s in conv.speakers}
        seen = set()
        for held in knowledge.read_vault(Path(args.vaults) / conv.sample_id, speakers).held:
            key = (held.kind, held.text, held.sources)
            turn = by_event.get(min(held.sources)) if held.sources else None
            if key in seen or turn is None:
                continue
            seen.add(key)
            pool.append(
                {
                    "conversation": conv.sample_id,
                    "note": held.note,
                    "kind": held.kind,
                    "text": held.text,
                    "source": min(held.sources),
                    "turn": turn.dia_id,
                    "speaker": turn.speaker,
                    "source_text": turn.text,
                }
            )
    pool.sort(key=lambda r: (r["conversation"], r["kind"], r["text"], r["source"]))
    random.seed(args.seed)
    for row in random.sample(pool, min(args.n, len(pool))):
        print(json.dumps(row, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
