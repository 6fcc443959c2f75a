"""Issue 13: why LoCoMo's recall with the jobs falls below recall without them at 2,000 tokens.

Scores every question (categories 1-4) on two kept vaults of each conversation, one made with the
jobs at each session end and one without, and says which questions each gets better, with an
optional diagnostic patch of the search applied to both (docs/changelog.md, "History of the
measurements", "Recall on LoCoMo"):

    export LOCOMO_DIR=../shared/bench/locomo
    .venv/bin/python benchmarks/experiments/r13_dense_fusion.py --model /unused \\
        --vaults /tmp/r14v ingest                                      # the kept vaults, once
    .venv/bin/python benchmarks/experiments/r13_jobs_vs_nojobs.py --vaults /tmp/r14v \\
        --budget 2000 [--patch NAME] [conv-30 conv-42]

Patches (each a diagnostic, not a design): no-note-docs (the index rebuilt without note
documents), rebuild (the control: rebuilt with them), length-by-kind (BM25F lengths against
each kind's own average), idf-events (document frequencies over events only). The index itself
keeps each field's statistics over the documents that have it
(index_weighting.SegmentLengthsBM25F), which the last two only approximated.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import shutil
import sys
import tempfile
from array import array
from collections.abc import Callable
from math import log
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import r13_dense_fusion as r13

from brainiac.api.memory import Memory
from brainiac.search import corpus
from brainiac.search import index_weighting as scoring
from brainiac.store.locations import Locations

_REBUILD = {"no-note-docs", "rebuild"}


def _events_of(reader: Any, cache: dict[Any, Any]) -> set[int]:
    key = ("events", id(reader))
    if key not in cache:
        inside = ("kind", corpus.EVENT) in reader
        cache[key] = set(reader.postings("kind", corpus.EVENT).all_ids()) if inside else set()
    found: set[int] = cache[key]
    return found


def _patch(name: str) -> None:
    cache: dict[Any, Any] = {}
    if name == "no-note-docs":
        documents = corpus.documents

        def without_notes(rel: str, text: str) -> list[corpus.Document]:
            return [d for d in documents(rel, text) if d.kind != corpus.NOTE]

        corpus.documents = without_notes  # type: ignore[assignment]
        return
    if name not in ("length-by-kind", "idf-events"):
        return
    scorer_of: Callable[..., Any] = scoring.SegmentLengthsBM25F.scorer

    def scorer(self: Any, searcher: Any, fieldname: str, text: str, qf: int = 1) -> Any:
        made = scorer_of(self, searcher, fieldname, text, qf)
        parent = searcher.get_parent()
        everything = parent.reader()
        events = _events_of(everything, cache)
        if name == "idf-events" and hasattr(made, "idf"):
            count = 0
            if (fieldname, text) in everything:
                postings = everything.postings(fieldname, text)
                count = sum(1 for d in postings.all_ids() if d in events)
            made.idf = log(max(len(events), 1) / (count + 1)) + 1
        if name == "length-by-kind" and hasattr(made, "dfl"):
            key = ("averages", id(everything), fieldname)
            if key not in cache:
                sums = [0, 0, 0, 0]  # event length, events, other length, others
                for leaf, offset in everything.leaf_readers():
                    lengths = (self.segment_lengths(leaf, fieldname) or (array("I"), 0))[0]
                    for d in range(len(lengths)):
                        if leaf.is_deleted(d):
                            continue
                        at = 0 if offset + d in events else 2
                        sums[at] += lengths[d]
                        sums[at + 1] += 1
                cache[key] = (sums[0] / max(sums[1], 1), sums[2] / max(sums[3], 1))
            event_avg, other_avg = cache[key]
            leaf = searcher.reader()
            lengths = (self.segment_lengths(leaf, fieldname) or (array("I"), 0))[0]
            mine = _events_of(leaf, cache)
            scale = made.avgfl
            made.dfl = array(
                "f",
                [
                    lengths[d] * scale / max(event_avg if d in mine else other_avg, 1e-9)
                    for d in range(len(lengths))
                ],
            ).__getitem__
        return made

    scoring.SegmentLengthsBM25F.scorer = scorer  # type: ignore[method-assign]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vaults", type=Path, required=True, help="kept by r13_dense_fusion ingest")
    ap.add_argument("--budget", type=int, default=2000)
    ap.add_argument("--patch", default="", help="no-note-docs, rebuild, length-by-kind, idf-events")
    ap.add_argument("conversations", nargs="*")
    args = ap.parse_args()
    _patch(args.patch)
    le = r13.scorer()
    convs = {c.sample_id: c for c in le.load_locomo(str(r13.BENCH / "locomo-dev.json"))}
    for conv_id in args.conversations or sorted(convs):
        conv = convs[conv_id]
        questions = [q for q in conv.qa if q.evidence and q.category in (1, 2, 3, 4)]
        recall: dict[str, list[float]] = {}
        for kind in ("jobs", "nojobs"):
            with tempfile.TemporaryDirectory() as tmp:
                copy = Path(tmp) / "v"
                shutil.copytree(args.vaults / kind / conv_id, copy, symlinks=True)
                if args.patch in _REBUILD:
                    shutil.rmtree(copy / "cache", ignore_errors=True)
                now = dt.datetime.fromisoformat((copy / "now").read_text())
                places = Locations(cache=copy / "cache", state=copy / "state", runtime=copy / "run")
                with Memory(copy / "vault", locations=places) as memory:
                    for qa in questions:
                        text = memory.context(qa.question, budget=args.budget, now=now).text
                        cut = text[: le.budget_chars(args.budget)]
                        n, hit, *_ = le.score_context(cut, qa, conv)
                        recall.setdefault(kind, []).append(hit / n)
        jobs, nojobs = recall["jobs"], recall["nojobs"]
        worse = [i for i in range(len(questions)) if jobs[i] < nojobs[i]]
        better = [i for i in range(len(questions)) if jobs[i] > nojobs[i]]
        by_category = collections.Counter(questions[i].category for i in worse)
        print(
            f"{conv_id} @{args.budget}: jobs {sum(jobs) / len(jobs):.3f}, "
            f"without {sum(nojobs) / len(nojobs):.3f}; jobs worse on {len(worse)} "
            f"(by category {dict(by_category)}), better on {len(better)}"
        )
        for i in worse:
            print(f"  worse: {questions[i].question} {questions[i].evidence}")


if __name__ == "__main__":
    main()
