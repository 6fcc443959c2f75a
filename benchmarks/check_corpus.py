"""Precision and recall of `brainiac check` on the labelled corpus in tests/check_corpus/.

    .venv/bin/python benchmarks/check_corpus.py [--show-errors]

The corpus (written blind to the checker) is a vault and a list of responses, each labelled with
the facts it contradicts (note and key) and how (a current value contradicted, or a superseded
value restated as current). A reported conflict counts as correct when its key and its note match
a label; the figures are per conflict, with the case-level figures (does a response with a
conflict get flagged at all, does a consistent one pass) beside them. tests/test_check.py runs
the same evaluation and holds it to the targets (precision >= 0.9, recall >= 0.8).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from brainiac import Memory
from brainiac.store.locations import Locations
from brainiac.store.vault import SHORT_TERM

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "check_corpus"


@dataclass
class Scores:
    cases: int = 0
    labelled: int = 0  # conflicts in the labels
    reported: int = 0  # conflicts the checker reported
    correct: int = 0  # reported conflicts that match a label
    found: int = 0  # labels matched by a report
    kind_right: int = 0  # matched reports whose kind (current/superseded) is the label's
    flagged_right: int = 0  # cases with conflicts that were flagged
    with_conflicts: int = 0
    passed_right: int = 0  # consistent cases that passed
    consistent: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def precision(self) -> float:
        return self.correct / self.reported if self.reported else 1.0

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0


def _matches(report: dict[str, str | None], label: dict[str, str]) -> bool:
    if report["key"] != " ".join(label["key"].casefold().split()):
        return False
    # A fact a recent event overrode lives in the short-term Event Log line that said it.
    return report["file"] == label["note"] or report["file"] == SHORT_TERM


def evaluate(corpus: Path = CORPUS) -> Scores:
    cases = yaml.safe_load((corpus / "cases.yaml").read_text(encoding="utf-8"))
    scores = Scores()
    with tempfile.TemporaryDirectory() as tmp:
        vault = Path(tmp) / "vault"
        shutil.copytree(corpus / "vault", vault)
        env = {"XDG_CACHE_HOME": f"{tmp}/cache", "XDG_STATE_HOME": f"{tmp}/state"}
        with Memory(vault, locations=Locations.for_vault(vault, env)) as memory:
            for case in cases:
                _score(memory, case, scores)
    return scores


def _score(memory: Memory, case: dict[str, object], scores: Scores) -> None:
    labels = list(case.get("conflicts") or [])  # type: ignore[call-overload]
    # The corpus's present is its last event: "today" and "tomorrow" are read from it.
    events = memory.short_term().events
    now = max((e.at for e in events if e.at), default=None)
    result = memory.check(str(case["response"]), now=now)
    reports = [{"key": c.key, "file": c.file, "kind": c.kind} for c in result.conflicts]
    scores.cases += 1
    scores.labelled += len(labels)
    scores.reported += len(reports)
    for r in reports:
        hit = next((lab for lab in labels if _matches(r, lab)), None)
        if hit is not None:
            scores.correct += 1
            scores.kind_right += r["kind"] == hit.get("kind")
        else:
            scores.errors.append(
                f"{case['id']} false alarm {r['file']} {r['key']}: {case['response']}"
            )
    for lab in labels:
        if any(_matches(r, lab) for r in reports):
            scores.found += 1
        else:
            scores.errors.append(
                f"{case['id']} missed {lab['note']} {lab['key']}: {case['response']}"
            )
    if labels:
        scores.with_conflicts += 1
        scores.flagged_right += bool(reports)
    else:
        scores.consistent += 1
        scores.passed_right += not reports


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--show-errors", action="store_true", help="List every miss and alarm.")
    parser.add_argument(
        "--corpus",
        type=Path,
        default=CORPUS,
        help="The corpus folder (default tests/check_corpus; the held-out one is "
        "tests/check_corpus_heldout).",
    )
    args = parser.parse_args()
    os.environ.pop("BRAINIAC_VAULT", None)
    s = evaluate(args.corpus)
    print(f"cases: {s.cases} ({s.with_conflicts} with conflicts, {s.consistent} consistent)")
    print(f"conflicts: {s.labelled} labelled, {s.reported} reported, {s.correct} correct")
    print(f"precision {s.precision:.3f}  recall {s.recall:.3f}  (targets 0.9 and 0.8)")
    print(f"kind right (current/superseded): {s.kind_right}/{s.correct}")
    print(
        f"responses with a conflict flagged: {s.flagged_right}/{s.with_conflicts}; "
        f"consistent responses passed: {s.passed_right}/{s.consistent}"
    )
    if args.show_errors:
        for line in s.errors:
            print("  " + line)
    sys.exit(0)


if __name__ == "__main__":
    main()
