"""LoCoMo with one memory for every project: the development conversations in ONE vault, each
conversation a project, against each conversation in a vault of its own, all in one run.

    LOCOMO_DIR=/work/shared/bench/locomo .venv/bin/python benchmarks/locomo_projects.py
    .venv/bin/python benchmarks/locomo_projects.py --budgets 500,2000 --no-jobs

Three systems, scored by the official scorer (`locomo_eval.evaluate`, one call per conversation):

* alone: `locomo_adapter.BrainiacSystem`, a fresh vault per conversation (the figure of
  docs/benchmarks.md, "Recall").
* scoped: one vault holding every conversation, each turn remembered with `project=<sample id>`
  (the sessions of all conversations interleaved by their start time, as four projects worked on
  side by side; the memory jobs at each session's end, at its time); a question is asked with
  `project=` its conversation (docs/projects.md).
* unscoped: the same vault, asked without a project: what one undifferentiated memory gives.

It prints the 1-4 macro recall of each conversation and overall per system and budget, the
scoped - alone difference, whether every conversation is within `--tolerance` (0.005) of
itself alone at each budget, the median and mean CPU time of a context per system with
scoped / alone (issue 35: within 1.1x; each index merged as an idle daemon leaves it, the
systems asked in turn question by question so that the load of a shared machine falls on each
alike), and the questions whose evidence found scoped differs from alone; exit status 1 when
a conversation is not within the tolerance. Skipped (exit status 0) without the data.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from brainiac import Memory
from brainiac.search.project_search import own_event_keys
from brainiac.store import projects
from brainiac.store.locations import Locations
from locomo_adapter import (
    BrainiacNoJobs,
    BrainiacSystem,
    add_data_arguments,
    load_scorer,
    turn_text,
)

HERE = Path(__file__).resolve().parent


class SharedVault:
    """One vault with every conversation, each a project (built once, asked by many views)."""

    def __init__(self, conversations: Sequence[Any], run_jobs: bool) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="brainiac_locomo_projects_"))
        vault = self.tmp / "vault"
        Memory.init(vault)
        locations = Locations(
            cache=self.tmp / "cache", state=self.tmp / "state", runtime=self.tmp / "run"
        )
        self.memory = Memory(vault, locations=locations)
        started = time.perf_counter()
        sessions = sorted(
            ((s.start, c.sample_id, s) for c in conversations for s in c.sessions),
            key=lambda x: (x[0], x[1]),
        )
        for _start, project, session in sessions:
            for turn in session.turns:
                text = turn_text(turn)
                if not text.strip():
                    continue
                self.memory.remember(
                    text,
                    role=turn.speaker,
                    session=f"session {session.index}",
                    at=turn.timestamp,
                    project=project,
                )
            ends = [t.timestamp for t in session.turns if t.timestamp is not None]
            if run_jobs and ends:
                self.memory.run_job("all", now=max(ends))
        self.memory.refresh(force=True)
        merge_like_the_daemon(self.memory)
        self.ingest_s = time.perf_counter() - started

    def close(self) -> None:
        self.memory.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def merge_like_the_daemon(memory: Memory) -> None:
    """The index's segments merged as an idle daemon merges them (runtime/service.py's idle
    work: a merging commit when they have piled up, then the large ones merged beside the
    writer, search/index_merge.py), so that the contexts are timed on the index a daemon
    leaves, for the shared vault and each conversation's own alike (a vault built in one go
    may be left in two large segments, and every segment adds to every query's time)."""
    index = memory.indexer.index
    index.merge_segments()
    job = index.merge_beside_start()
    if job is not None:
        index.merge_beside_finish(job)


class SharedView:
    """The scorer's system for one conversation, asked of the shared vault."""

    def __init__(self, shared: SharedVault, scoped: bool) -> None:
        self.shared = shared
        self.scoped = scoped
        self.name = "scoped" if scoped else "unscoped"
        self._project: str | None = None
        self._now: Any = None

    def ingest(self, conversation: Any) -> None:  # already in the shared vault
        self._project = conversation.sample_id if self.scoped else None
        self._now = conversation.end_time

    def context(self, question: str, budget: int) -> str:
        memory = self.shared.memory
        return memory.context(question, budget=budget, now=self._now, project=self._project).text

    def close(self) -> None:
        pass


class Replay:
    """The scorer's system for one conversation: the contexts already asked, in the order the
    scorer asks for them (its questions, then its budgets), so the official `evaluate` scores
    them while the asking itself is interleaved across systems (`ask_interleaved`)."""

    def __init__(self, name: str, contexts: dict[str, list[str]]) -> None:
        self.name = name
        self.contexts = contexts
        self._queue: list[str] = []

    def ingest(self, conversation: Any) -> None:
        self._queue = list(reversed(self.contexts[conversation.sample_id]))

    def context(self, question: str, budget: int) -> str:
        return self._queue.pop()

    def close(self) -> None:
        pass


def embed_prompt(system: Any, question: str, nothing_kept: bool = False) -> None:
    """Make the events' vectors not made yet and keep the prompt's vector in `system`'s memory
    (semantic.py keeps the last few prompts'), so the timed contexts measure the search and not
    the model, which costs every system the same but would fall on whichever of two views of
    one memory asks first. `nothing_kept`: forget what the index keeps of each project's
    postings of the words prompts came back to (scope_postings.py), so that every word of the
    question is read as new."""
    memory = system.shared.memory if isinstance(system, SharedView) else system._memory
    if memory is not None and nothing_kept:
        memory.indexer.index._slices.clear()
    if memory is None or memory.semantic is None:
        return
    memory.semantic.fill()
    project = system._project if isinstance(system, SharedView) else None
    scope = projects.Scope.of(project, memory.config)
    # As the context asks: in a project, among its events (its speakers' names taken out).
    memory.semantic.nearness(question, among=own_event_keys(memory.indexer.index, scope))


def ask_interleaved(
    convs: Sequence[Any],
    systems: dict[str, Callable[[Any], Any]],
    budgets: Sequence[int],
    limit: int | None,
    on_done: Callable[[Any, dict[str, dict[str, list[str]]]], None] | None = None,
    nothing_kept: bool = False,
) -> tuple[dict[str, dict[str, list[str]]], dict[str, dict[int, list[float]]]]:
    """Every system's context for every question and budget, asked in turn, question by question:
    the systems' order rotates with each question, so a machine shared with other processes
    loads each system alike and none is always the first to ask (the prompt's embedding is
    made before the timing: `embed_prompt`). `systems` maps a name to the system of a
    conversation; `on_done` gets each conversation asked and the contexts so far;
    `nothing_kept` as `embed_prompt`'s. The CPU seconds of this process per context, by system
    and budget."""
    contexts: dict[str, dict[str, list[str]]] = {name: {} for name in systems}
    cpu: dict[str, dict[int, list[float]]] = {name: {b: [] for b in budgets} for name in systems}
    names = list(systems)
    for c in convs:
        asked = {name: systems[name](c) for name in names}
        qas = [q for q in c.qa if q.evidence][: limit or None]
        for name in names:
            contexts[name][c.sample_id] = []
        for i, qa in enumerate(qas):
            for name in names:  # the prompt's embedding, untimed: the same cost for every system
                embed_prompt(asked[name], qa.question, nothing_kept)
            order = names[i % len(names) :] + names[: i % len(names)]
            for budget in budgets:
                for name in order:
                    started = time.process_time()
                    text: str = asked[name].context(qa.question, budget)
                    cpu[name][budget].append(time.process_time() - started)
                    contexts[name][c.sample_id].append(text)
        print(f"asked {c.sample_id}: {len(qas)} questions", file=sys.stderr, flush=True)
        if on_done is not None:
            on_done(c, contexts)
    return contexts, cpu


def questions_apart(
    convs: Sequence[Any],
    contexts: dict[str, dict[str, list[str]]],
    budgets: Sequence[int],
    limit: int | None,
    locomo_eval: Any,
) -> list[dict[str, Any]]:
    """The questions whose evidence found scoped differs from alone: which, at which budget,
    and which evidence each context holds (what a gap between the two is made of)."""
    out = []
    for c, i, qa, budget, texts in _pairs(convs, contexts, budgets, limit):
        found = {
            s: [
                e
                for e in qa.evidence
                if locomo_eval.norm_ws(c.by_id[e].text) in locomo_eval.norm_ws(t)
            ]
            for s, t in texts.items()
        }
        if found["alone"] != found["scoped"]:
            out.append(
                {
                    "conversation": c.sample_id,
                    "question": i,
                    "category": qa.category,
                    "budget": budget,
                    "text": qa.question,
                    "evidence": qa.evidence,
                    **found,
                }
            )
    return out


def _pairs(
    convs: Sequence[Any],
    contexts: dict[str, dict[str, list[str]]],
    budgets: Sequence[int],
    limit: int | None,
) -> Iterator[tuple[Any, int, Any, int, dict[str, str]]]:
    """Each question's alone and scoped contexts at each budget, in the order they were asked:
    (conversation, question's number, question, budget, {"alone": ..., "scoped": ...})."""
    for c in convs:
        qas = [q for q in c.qa if q.evidence][: limit or None]
        for i, qa in enumerate(qas):
            for j, budget in enumerate(budgets):
                k = i * len(budgets) + j
                yield (
                    c,
                    i,
                    qa,
                    budget,
                    {s: contexts[s][c.sample_id][k] for s in ("alone", "scoped")},
                )


def write_contexts(
    folder: Path,
    convs: Sequence[Any],
    contexts: dict[str, dict[str, list[str]]],
    budgets: Sequence[int],
    limit: int | None,
) -> int:
    """Every question's alone and scoped contexts that differ, side by side in `folder`
    (`<conversation>-q<i>-<budget>.alone.md` and `.scoped.md`, to diff), and how many differ."""
    folder.mkdir(parents=True, exist_ok=True)
    written = 0
    kinds: dict[str, int] = {}
    for c, i, qa, budget, texts in _pairs(convs, contexts, budgets, limit):
        if texts["alone"] == texts["scoped"]:
            continue
        written += 1
        for kind in kinds_apart(texts["alone"], texts["scoped"]):
            kinds[kind] = kinds.get(kind, 0) + 1
        for system, text in texts.items():
            name = f"{c.sample_id}-q{i}-{budget}.{system}.md"
            (folder / name).write_text(f"<!-- {qa.question} -->\n{text}")
    by_kind = ", ".join(f"{k} {n}" for k, n in sorted(kinds.items(), key=lambda x: -x[1]))
    print(f"contexts apart, by section (a pair may count twice): {by_kind}", file=sys.stderr)
    return written


def _sections(text: str) -> dict[str, list[str]]:
    """A context's lines by section: `## X`, and `## Short-Term Memory/### Y` within it."""
    out: dict[str, list[str]] = {}
    top = current = "(head)"
    for line in text.splitlines():
        if line.startswith("## "):
            top = current = line[3:]
        elif line.startswith("### ") and top.startswith("Short-Term"):
            current = f"{top}/{line[4:]}"
        else:
            out.setdefault(current, []).append(line)
            continue
        out.setdefault(current, [])
    return out


def kinds_apart(alone: str, scoped: str) -> set[str]:
    """How two contexts of one question differ, by section: a short-term section's name, or, in
    the long-term memory, "long-term order" (the same lines in another order), "long-term
    headings" (the same lines under other note headings: a note's file name or title) or
    "long-term lines" (other lines)."""
    a, s = _sections(alone), _sections(scoped)
    kinds: set[str] = set()
    for key in sorted(set(a) | set(s)):
        mine, theirs = a.get(key, []), s.get(key, [])
        if mine == theirs:
            continue
        if not key.startswith("Relevant"):
            kinds.add(key.removeprefix("Short-Term Memory/"))
            continue
        lines = [[x for x in side if x.startswith("- ")] for side in (mine, theirs)]
        if lines[0] == lines[1]:
            kinds.add("long-term headings")
        elif sorted(lines[0]) == sorted(lines[1]):
            kinds.add("long-term order")
        else:
            kinds.add("long-term lines")
    return kinds


def recall(result: dict[str, Any], budget: int) -> tuple[float, int]:
    """The 1-4 macro recall of one `evaluate` result at `budget`, and its question count."""
    summary = result["budgets"][str(budget)]["answerable_1_4"]
    return float(summary.get("macro", 0.0)), int(summary.get("n_q", 0))


def overall(per_conv: dict[str, dict[str, Any]], budget: int) -> float:
    pairs = [recall(r, budget) for r in per_conv.values()]
    questions = sum(n for _, n in pairs)
    return sum(m * n for m, n in pairs) / questions if questions else 0.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_data_arguments(ap)
    ap.add_argument("--budgets", default="2000")
    ap.add_argument("--no-jobs", action="store_true", help="no memory jobs (brainiac_nojobs)")
    ap.add_argument("--tolerance", type=float, default=0.005)
    ap.add_argument(
        "--nothing-kept",
        action="store_true",
        help="forget the projects' kept postings before each question (every word read as new)",
    )
    ap.add_argument(
        "--shared-first",
        action="store_true",
        help="build the shared vault first, then each conversation's own",
    )
    ap.add_argument("--limit-questions", type=int, default=0, help="per conversation (smoke runs)")
    ap.add_argument("--out", default="", help="results JSON (default: benchmarks/results/...)")
    ap.add_argument(
        "--contexts",
        default="",
        help="a folder to write every question's alone and scoped contexts to, where they differ",
    )
    args = ap.parse_args(argv)

    found = load_scorer(args, "LoCoMo projects benchmark")
    if found is None:
        return 0
    locomo_eval, data = found
    budgets = [int(b) for b in args.budgets.split(",") if b]
    convs = locomo_eval.load_locomo(str(data))
    limit = args.limit_questions or None
    alone_factory: Callable[[], Any] = BrainiacNoJobs if args.no_jobs else BrainiacSystem

    alone: dict[str, Any] = {}
    alone_ingest = 0.0

    def build_alone() -> None:
        nonlocal alone_ingest
        for c in convs:
            started = time.perf_counter()
            alone[c.sample_id] = system = alone_factory()
            system.ingest(c)
            if system._memory is not None:
                merge_like_the_daemon(system._memory)
            alone_ingest += time.perf_counter() - started

    if not args.shared_first:
        build_alone()
    shared = SharedVault(convs, run_jobs=not args.no_jobs)
    try:
        if args.shared_first:
            build_alone()
        views = {}
        for scoped in (True, False):
            view = SharedView(shared, scoped)
            views[view.name] = view

        def viewed(name: str) -> Callable[[Any], Any]:
            def system(c: Any) -> Any:
                views[name].ingest(c)
                return views[name]

            return system

        results: dict[str, dict[str, dict[str, Any]]] = {}

        def score(c: Any, contexts: dict[str, dict[str, list[str]]]) -> None:
            """One conversation's figures as soon as it is asked (a long run's, to stderr)."""
            for name, asked in contexts.items():
                replay = Replay(name, asked)
                results.setdefault(name, {})[c.sample_id] = found = locomo_eval.evaluate(
                    [c], lambda replay=replay: replay, budgets, limit, progress=False
                )
                cells = ", ".join(f"{b}: {recall(found, b)[0]:.3f}" for b in budgets)
                print(f"{name} {c.sample_id}: {cells}", file=sys.stderr, flush=True)

        contexts, cpu = ask_interleaved(
            convs,
            {
                "alone": lambda c: alone[c.sample_id],
                "scoped": viewed("scoped"),
                "unscoped": viewed("unscoped"),
            },
            budgets,
            limit,
            score,
            args.nothing_kept,
        )
        status = shared.memory.indexer.index.project_counts()
        segments = shared.memory.indexer.index.segment_count()
    finally:
        shared.close()
        for system in alone.values():
            system.close()

    differing = questions_apart(convs, contexts, budgets, limit, locomo_eval)
    if args.contexts:
        written = write_contexts(Path(args.contexts), convs, contexts, budgets, limit)
        print(f"contexts that differ, scoped against alone: {written}", file=sys.stderr)

    jobs = "without jobs" if args.no_jobs else "with jobs at each session's end"
    print(f"LoCoMo, {len(convs)} conversations, {jobs}: 1-4 macro recall")
    print(f"ingest: alone {alone_ingest:.1f} s in all; one shared vault {shared.ingest_s:.1f} s")
    print(f"documents per project in the shared vault: {status}; {segments} segment(s)\n")
    within = True
    for budget in budgets:
        names = list(results["alone"])
        print(f"| budget {budget} | " + " | ".join(names) + " | all |")
        print("|---" * (len(names) + 2) + "|")
        for system, per_conv in results.items():
            cells = [f"{recall(per_conv[n], budget)[0]:.3f}" for n in names]
            print(f"| {system} | " + " | ".join(cells) + f" | {overall(per_conv, budget):.3f} |")
        diffs = [
            recall(results["scoped"][n], budget)[0] - recall(results["alone"][n], budget)[0]
            for n in names
        ]
        whole = overall(results["scoped"], budget) - overall(results["alone"], budget)
        print("| scoped - alone | " + " | ".join(f"{d:+.3f}" for d in diffs) + f" | {whole:+.3f} |")
        ok = all(abs(d) <= args.tolerance for d in diffs)
        within &= ok
        verdict = "yes" if ok else "NO"
        print(f"\nevery conversation within {args.tolerance} of itself alone: {verdict}")
        apart = [d for d in differing if d["budget"] == budget]
        for d in apart:
            print(
                f"  {d['conversation']} q{d['question']} (category {d['category']}): evidence"
                f" found alone {d['alone']}, scoped {d['scoped']} of {d['evidence']}"
            )
        median = {s: 1000 * statistics.median(t[budget]) for s, t in cpu.items() if t[budget]}
        mean = {s: 1000 * statistics.fmean(t[budget]) for s, t in cpu.items() if t[budget]}
        for label, ms in (("median", median), ("mean", mean)):
            ratio = ms["scoped"] / ms["alone"] if ms.get("alone") else 0.0
            print(
                f"{label} context ms (CPU, asked in turn): "
                + ", ".join(f"{s} {v:.1f}" for s, v in ms.items())
                + f"; scoped / alone {ratio:.2f}x"
            )
        # Each question's two contexts were asked one after the other: the median of their
        # ratios moves less from run to run on a shared machine than the ratio of the medians.
        asked = zip(cpu["scoped"][budget], cpu["alone"][budget], strict=True)
        pairs = [s / a for s, a in asked if a > 0]
        if pairs:
            print(f"median of each question's scoped / alone: {statistics.median(pairs):.2f}x")
        print()
    out = (
        Path(args.out)
        if args.out
        else HERE / "results" / f"locomo-projects-{time.strftime('%Y%m%d-%H%M%S')}.json"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    record = {"argv": sys.argv, "results": results, "cpu_s": cpu, "scoped_vs_alone": differing}
    out.write_text(json.dumps(record, indent=1, default=str))
    print(f"results: {out}")
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
