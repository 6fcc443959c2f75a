"""Draw sessions at random across the vaults benchmarks/knowledge.py built and show, for each,
its turns and the titles of the notes its events ended in, to judge by hand whether a title
names the session's main event (issue 30: "judge 20 sessions by hand"; the labels are
benchmarks/knowledge_session_labels.jsonl).

    .venv/bin/python benchmarks/experiments/k30_sessions.py --vaults DIR --data FILE [--n 20]

The draw depends only on the data file (seed 30 over every (conversation, session) pair in file
order), so the same sessions are judged on vaults built by different code. Each session prints
as one JSON object (conversation, session, date, titles: note title -> events of the session it
holds, and the turns), followed by the turns for reading when `--show` is given.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import knowledge  # benchmarks/, on the path above


def draw(data: Path, n: int) -> list[tuple[knowledge.Conversation, knowledge.Session]]:
    """`n` sessions drawn across the file's conversations, the same for the same file."""
    pool = [(c, s) for c in knowledge.load(data) for s in c.sessions]
    random.seed(30)
    return random.sample(pool, min(n, len(pool)))


def homes(vault: Path) -> dict[str, str]:
    """Event id -> the title of the note (long-term, faded or month file) whose Sources hold it."""
    from brainiac.formats import ltm

    out: dict[str, str] = {}
    for path in sorted((vault / "memory").rglob("*.md")):
        rel = path.relative_to(vault).as_posix()
        if rel == "memory/short_term.md" or rel.startswith("memory/indexes/"):
            continue
        note = ltm.parse(path.read_text(encoding="utf-8"), rel)
        if note.status == "merged":
            continue
        for event in note.sources:
            out.setdefault(event.id, note.title or rel)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--show", action="store_true", help="print each session's turns too")
    args = ap.parse_args()
    found: dict[str, dict[str, str]] = {}
    for conv, session in draw(Path(args.data), args.n):
        if conv.sample_id not in found:
            found[conv.sample_id] = homes(Path(args.vaults) / conv.sample_id)
        ids = knowledge.turn_event_ids(conv)
        titles = Counter(
            found[conv.sample_id].get(ids.get(t.dia_id, ""), "(not in a note)")
            for t in session.turns
        )
        row = {
            "conversation": conv.sample_id,
            "session": session.index,
            "date": session.turns[0].timestamp.date().isoformat(),
            "titles": dict(titles.most_common()),
        }
        print(json.dumps(row, ensure_ascii=False))
        if args.show:
            for t in session.turns:
                print(f"    {t.dia_id} {t.speaker}: {t.text}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
