"""brainiac as a system under test for the LoCoMo evidence-recall scorer.

The scorer (`../shared/bench/locomo/locomo_eval.py`, not part of this repository) builds one
system per conversation, calls `ingest(conversation)`, then `context(question, budget)` for every
question and budget, then `close()`. This adapter drives brainiac through its public API only:

* ingest: a fresh vault from the template (`Memory.init`) in a temporary directory, with the index
  and state kept in that directory too (`Locations`), so nothing reaches the user's home. Every turn
  is one `Memory.remember(...)` call (one event per turn, in order; the speaker is the role, the
  session is "session N", the time is the turn's timestamp). At the end of each session the
  memory jobs run as the daemon would run them, `Memory.run_job("all", now=<the session's last
  turn>)`: reflection, promotion (all but the last 10 events move into long-term notes) and
  organization (decay, archive, merge, links). `BrainiacNoJobs` is the same without the jobs.
  The turn text is kept verbatim; an image shared in the turn is appended as " [image: caption]",
  as the scorer's baselines do. The index is built once after the last turn (`Memory.refresh`),
  inside the measured ingest time.
* context: `Memory.context(question, budget=budget, now=conversation.end_time).text`, i.e. the
  whole assembled working memory (Core Identity, Short-Term Memory with the last 10 events,
  Relevant Long-Term Memory, User Prompt), all of it inside the budget.
* close: close the Memory and delete the temporary directory.

Run it with the scorer directly (PYTHONPATH must hold this folder):

    PYTHONPATH=benchmarks .venv/bin/python ../shared/bench/locomo/locomo_eval.py \
        --data ../shared/bench/locomo/locomo-dev.json --systems whoosh_turns \
        --system-class locomo_adapter:BrainiacSystem --budgets 500,2000,4000

or through `benchmarks/locomo.py`, which does the same and writes the results under
`benchmarks/results/`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

from brainiac import Memory
from brainiac.store.locations import Locations

# The shared LoCoMo scorer and data, never copied into this repository (CC BY-NC 4.0).
DEFAULT_BENCH_DIR = Path(__file__).resolve().parents[2] / "shared" / "bench" / "locomo"


def add_data_arguments(ap: argparse.ArgumentParser) -> None:
    """--bench-dir (default LOCOMO_DIR or ../shared/bench/locomo) and --data."""
    ap.add_argument(
        "--bench-dir",
        default=os.environ.get("LOCOMO_DIR", str(DEFAULT_BENCH_DIR)),
        help="folder with locomo_eval.py and locomo-dev.json",
    )
    ap.add_argument("--data", default="", help="data file (default: <bench-dir>/locomo-dev.json)")


def load_scorer(args: argparse.Namespace, what: str) -> tuple[ModuleType, Path] | None:
    """The official scorer module and the data file named by `args`; None, after saying so,
    when either is absent (a benchmark then skips with exit status 0)."""
    bench_dir = Path(args.bench_dir)
    data = Path(args.data) if args.data else bench_dir / "locomo-dev.json"
    scorer = bench_dir / "locomo_eval.py"
    missing = next((p for p in (data, scorer) if not p.is_file()), None)
    if missing is not None:
        print(f"{what} skipped: {missing} not found (set --bench-dir or LOCOMO_DIR)")
        return None
    sys.path.insert(0, str(bench_dir))
    import locomo_eval  # the official scorer, read-only, outside the repository

    return locomo_eval, data


def turn_text(turn: Any) -> str:
    """What brainiac remembers of a turn: its text, with the caption of an image it shared."""
    return f"{turn.text} [image: {turn.image_caption}]" if turn.image_caption else turn.text


class BrainiacSystem:
    """One brainiac vault per conversation, fed one `remember` per turn."""

    name = "brainiac"
    run_jobs = True  # reflection, promotion, organization at each session's end

    def __init__(self) -> None:
        self._tmp: Path | None = None
        self._memory: Memory | None = None
        self._now: Any = None

    def ingest(self, conversation: Any) -> None:
        self._tmp = Path(tempfile.mkdtemp(prefix=f"brainiac_locomo_{conversation.sample_id}_"))
        vault = self._tmp / "vault"
        Memory.init(vault)
        locations = Locations(
            cache=self._tmp / "cache", state=self._tmp / "state", runtime=self._tmp / "run"
        )
        self._memory = Memory(vault, locations=locations)
        self._now = conversation.end_time
        for session in conversation.sessions:
            label = f"session {session.index}"
            for turn in session.turns:
                text = turn_text(turn)
                if not text.strip():
                    continue
                self._memory.remember(text, role=turn.speaker, session=label, at=turn.timestamp)
            # As the daemon would: the memory jobs run when the session ends, at its time.
            ends = [t.timestamp for t in session.turns if t.timestamp is not None]
            if self.run_jobs and ends:
                self._memory.run_job("all", now=max(ends))
        # The index is opened lazily, so the turns above were only appended to the vault; build
        # it now, so ingest time includes indexing and the first question does not pay for it.
        self._memory.refresh(force=True)

    @property
    def vault(self) -> Path:
        """The ingested conversation's vault (benchmarks/readability.py reads its notes)."""
        assert self._tmp is not None, "ingest() first"
        return self._tmp / "vault"

    def context(self, question: str, budget: int) -> str:
        assert self._memory is not None, "ingest() first"
        return self._memory.context(question, budget=budget, now=self._now).text

    def close(self) -> None:
        if self._memory is not None:
            self._memory.close()
            self._memory = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None


class BrainiacNoJobs(BrainiacSystem):
    """brainiac without the memory jobs: every turn stays in the short-term Event Log."""

    name = "brainiac_nojobs"
    run_jobs = False
