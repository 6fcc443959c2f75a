"""Where a LoCoMo context's tokens go: the budget audit of issue 13.

    .venv/bin/python benchmarks/budget_audit.py                    # jobs, 500/2000/4000
    .venv/bin/python benchmarks/budget_audit.py --no-jobs --budgets 2000

Each development conversation (../shared/bench/locomo, not copied here) is ingested as the LoCoMo
benchmark does it (benchmarks/locomo_adapter.py), then every answerable question (categories 1-4)
gets its context, and each line of it is put in one part; the table gives each part's mean
tokens per context (characters / 4, the scorer's count) and its share of the context, per
conversation and budget:

- `identity`: Core Identity, headings and text (never cut).
- `frame`: the four `## ` section headings and the prompt.
- `short-term`: the short-term sections other than the recent events (summary, working memory,
  goals, facts, tasks), with their `### ` headings.
- `recent markup` / `recent text`: the recent-events block's header, run headings and line
  prefixes (`- 17:04 Caroline: `) / the text of the recent events.
- `headings`: long-term group headings (`### 2023-05-25`) and note titles.
- `prefixes`: long-term line prefixes (`- Caroline: `, `> `).
- `captions`: the ` [image: ...]` an imported turn carries (the scorer matches the turn's text).
- `evidence`: text of the question's evidence turns; `other text`: every other line's text
  (turns that are not this question's evidence, and notes' facts).

So every token not in `evidence` is either another question's evidence or markup; markup saved is
a turn that fits. Exit status 0 (it measures; docs/benchmarks.md says what the figures were).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections import defaultdict
from typing import Any

from locomo_adapter import BrainiacNoJobs, BrainiacSystem, add_data_arguments, load_scorer

PARTS = (
    "identity",
    "frame",
    "short-term",
    "recent markup",
    "recent text",
    "headings",
    "prefixes",
    "captions",
    "evidence",
    "other text",
)
_CAPTION = re.compile(r" \[image: [^\]]*\]")
_EVENT_LINE = re.compile(r"^(- (?:\d\d:\d\d )?[^:\n]{1,60}: )(.*)$")


def parts_of(context: str, evidence: list[str], norm: Any) -> dict[str, int]:
    """Characters per part (PARTS) of one context; `evidence` the normalised evidence texts."""
    out: dict[str, int] = defaultdict(int)
    section = ""
    in_recent = False
    for line in context.split("\n"):
        size = len(line) + 1  # with its newline
        if line.startswith("## "):
            section = line[3:]
            in_recent = False
            out["frame"] += size
            continue
        if section == "Core Identity":
            out["identity"] += size
        elif section == "User Prompt":
            out["frame"] += size
        elif section == "Short-Term Memory" and (line == "### Recent Events" or in_recent):
            in_recent = True
            _split_line(out, line, size, "recent markup", "recent text", evidence, norm)
        elif section == "Short-Term Memory":
            out["short-term"] += size
        elif line.startswith("### "):
            out["headings"] += size
        else:
            _split_line(out, line, size, "prefixes", "", evidence, norm)
    return out


def _split_line(
    out: dict[str, int],
    line: str,
    size: int,
    markup: str,
    text_part: str,
    evidence: list[str],
    norm: Any,
) -> None:
    match = _EVENT_LINE.match(line)
    if line.startswith("> "):
        prefix, text = "> ", line[2:]
    elif match:
        prefix, text = match.group(1), match.group(2)
    else:
        out[markup if not line.strip() or line.startswith(("#", "[")) else "other text"] += size
        return
    captions = sum(len(c) for c in _CAPTION.findall(text))
    said = _CAPTION.sub("", text)
    out[markup] += len(prefix) + 1
    out["captions"] += captions
    if text_part:
        out[text_part] += len(said)
    elif any(e and e in norm(said) for e in evidence):
        out["evidence"] += len(said)
    else:
        out["other text"] += len(said)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--budgets", default="500,2000,4000")
    ap.add_argument("--no-jobs", action="store_true", help="without the memory jobs")
    ap.add_argument("--limit-questions", type=int, default=0, help="per conversation")
    args = ap.parse_args(argv)
    found = load_scorer(args, "budget audit")
    if found is None:
        return 0
    locomo_eval, data = found
    budgets = [int(b) for b in args.budgets.split(",") if b]
    system_class = BrainiacNoJobs if args.no_jobs else BrainiacSystem
    rows: list[str] = []
    header = "| conversation | budget | " + " | ".join(PARTS) + " |"
    for conv in locomo_eval.load_locomo(str(data)):
        system = system_class()
        system.ingest(conv)
        try:
            qas = [q for q in conv.qa if q.evidence and q.category in (1, 2, 3, 4)]
            if args.limit_questions:
                qas = qas[: args.limit_questions]
            for budget in budgets:
                total: dict[str, int] = defaultdict(int)
                for qa in qas:
                    evidence = [locomo_eval.norm_ws(conv.by_id[e].text) for e in qa.evidence]
                    ctx = system.context(qa.question, budget)
                    for part, chars in parts_of(ctx, evidence, locomo_eval.norm_ws).items():
                        total[part] += chars
                whole = sum(total.values()) or 1
                cells = " | ".join(
                    f"{total[p] / 4 / len(qas):.0f} ({100 * total[p] / whole:.1f}%)" for p in PARTS
                )
                rows.append(f"| {conv.sample_id} | {budget} | {cells} |")
                print(rows[-1], file=sys.stderr, flush=True)
        finally:
            system.close()
    print(
        "Mean tokens per context (share of the context), "
        + ("without" if args.no_jobs else "with")
        + " the memory jobs\n"
    )
    print(header)
    print("|" + "---|" * (len(PARTS) + 2))
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
