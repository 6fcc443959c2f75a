"""Crash consistency: SIGKILL the real CLI at random instants and check the vault after each.

    .venv/bin/python benchmarks/crash.py [--trials 1000] [--seed 0] [--max-kill-ms 1200]
                                         [--max-daemon-ms 8000]

One vault lives through all the trials. Each trial starts one command as a subprocess,
`[sys.executable, "-m", "brainiac", "--vault", V, ...]`, with its own XDG directories:

- `remember TEXT --at T` (the event id is known in advance: `events.make_event(...).id`);
- `import EXPORT.jsonl` of a small new export, or again of an earlier one (ids from
  `importer.message_key`); a third of the imports die instead at a named fault point
  (`BRAINIAC_FAULT=import.…`, brainiac/core/faults.py);
- `jobs run all --now T` (reflection, promotion, organization), with T advancing a few hours
  per trial so promotion moves events into notes and the monthly archive;
- `context --write` (context/working_memory.md);
- `run`, the daemon, with a new export dropped into its inbox: it is killed at a random instant
  of 0 to --max-daemon-ms (while it starts, reconciles the index, writes the working memory,
  imports from the inbox, or runs its memory jobs, which the vault's config makes due every few
  seconds). The daemon never completes by itself; its export is completed by the final imports.

The harness sleeps a random 0 to --max-kill-ms ms, then SIGKILLs the process; if it had already
exited, the trial counts as "completed". The default, 1200 ms, spans a whole command on a 2-core
machine: the interpreter and brainiac alone take ~400 ms to start, so with 0-400 ms almost every
kill lands before brainiac writes anything (docs/reliability.md). Where a whole command (the
`init` that starts a run) takes longer than half the window, as on busy cores, the window grows
to twice that command's time, so that kills still land along whole commands. And since a
command's time varies with the load of the moment (four test workers on two cores), the window
then follows it, a staircase: it grows by half after three kills in a row that all landed
mid-command, and shrinks by a third (never below where it started) after three commands in a
row that completed first. So about half the kills land mid-command however slow or fast the
cores have become; the report gives the window at the start and at the end.

Then the invariants are checked, and the next trial goes on from that state (the next
`jobs run` finishes a promotion plan left behind, the next `import` an import left behind):

1. every `.md` file of the vault decodes and `note.parse` accepts it, and no `.md` file is empty
   that was not empty before (a reader never sees a truncated note);
2. no event id appears more than once across `memory/` (outside `memory/archive/exports/`),
   except while a killed promotion's plan (`promotion.intent.json`) is pending: docs/lifecycle.md
   allows an event to be in the Event Log and in its note until the next run finishes the plan,
   so those trials are counted and listed apart, and the final check allows no exception;
3. every event whose command exited 0 is present exactly once.

At the end, `jobs run all` and an import of every export run once more without faults; then
every event ever attempted must appear at most once and every completed one exactly once, and
the temp files the kills left behind are counted and swept (`safe_io.remove_stale_temps`).
Exit status 1 if any invariant was violated.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from brainiac.exchange import importer
from brainiac.exchange.chatlogs import Message
from brainiac.formats import events as ev
from brainiac.formats import note
from brainiac.store import safe_io
from brainiac.store.vault import EXPORTS_DIR, INBOX_DIR

FAULTS = (
    "import.intent-written",
    "import.archived",
    "import.history-placed",
    "import.events-written",
    "import.recorded",
)
OPERATIONS = ("remember", "import", "jobs", "context", "daemon")
WEIGHTS = (5, 3, 2, 1, 1)
# The daemon's memory jobs are due every few seconds (after its 5 s start delay), and its inbox
# job every second, so a daemon trial of up to --max-daemon-ms sees them run and die mid-run.
DAEMON_CONFIG = """[jobs]
inbox = 0.02
reflection = 0.05
promotion = 0.05
organization = 0.1
"""
START = dt.datetime(2026, 9, 1, 8, 0)
WORDS = (
    "Lisbon trip budget",
    "the Atlas deploy",
    "Anna's birthday present",
    "the garden shed roof",
    "a Rust borrow checker error",
    "the quarterly tax return",
    "piano lessons on Thursday",
    "the kitchen tap leak",
)
PROMOTION_INTENT = "promotion.intent.json"  # brainiac/lifecycle/jobs/moving.py
ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")


@dataclasses.dataclass
class Violation:
    trial: int
    operation: str
    invariant: str
    details: str
    outcome: str = ""

    def __str__(self) -> str:
        op = f"{self.operation}, {self.outcome}" if self.outcome else self.operation
        return f"trial {self.trial} ({op}): {self.invariant}: {self.details}"


@dataclasses.dataclass
class Result:
    trials: int = 0
    killed: Counter[str] = dataclasses.field(default_factory=Counter)
    completed: Counter[str] = dataclasses.field(default_factory=Counter)
    failed: Counter[str] = dataclasses.field(default_factory=Counter)
    fault_points: Counter[str] = dataclasses.field(default_factory=Counter)
    violations: list[Violation] = dataclasses.field(default_factory=list)
    attempted_events: int = 0
    completed_events: int = 0
    present_events: int = 0
    stale_temps: int = 0
    pending_doubles: list[tuple[int, int]] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    kill_window_ms: tuple[int, int] = (0, 0)  # at the start and at the end

    def report(self) -> str:
        lines = [f"trials run: {self.trials}"]
        lines.append(f"{'operation':<10} {'killed mid-command':>19} {'completed first':>16}")
        for op in OPERATIONS:
            lines.append(f"{op:<10} {self.killed[op]:>19} {self.completed[op]:>16}")
        lines.append(
            f"{'total':<10} {sum(self.killed.values()):>19} {sum(self.completed.values()):>16}"
        )
        if self.fault_points:
            points = ", ".join(f"{p} {n}" for p, n in sorted(self.fault_points.items()))
            lines.append(f"imports killed at a named fault point: {points}")
        if self.failed:
            lines.append(f"commands that exited non-zero unkilled: {dict(self.failed)}")
        lines.append(
            f"events attempted {self.attempted_events}, completed {self.completed_events}, "
            f"present at the end {self.present_events}"
        )
        lines.append(f"stale temp files left by kills (swept): {self.stale_temps}")
        first, last = self.kill_window_ms
        lines.append(f"kill window: {first} ms at the start, {last} ms at the end")
        if self.pending_doubles:
            trials = ", ".join(f"{t} ({n})" for t, n in self.pending_doubles[:20])
            more = " ..." if len(self.pending_doubles) > 20 else ""
            lines.append(
                f"trials ending with ids twice while a killed promotion's plan was pending "
                f"(documented, not counted as violations): {len(self.pending_doubles)}: "
                f"trial (ids) {trials}{more}"
            )
        lines.append(f"invariant violations: {len(self.violations)}")
        lines.extend(f"  {v}" for v in self.violations)
        lines.append(f"wall time: {self.seconds:.1f} s")
        return "\n".join(lines)


def ids_in_memory(vault: Path) -> Counter[str]:
    """How often each event id is written across short-term, long-term and archive."""
    counts: Counter[str] = Counter()
    for path in (vault / "memory").rglob("*.md"):
        if EXPORTS_DIR in path.relative_to(vault).as_posix():
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue  # reported by the parse check
        counts.update(ID_RE.findall(text))
    return counts


def import_id(session: str, position: int, role: str, text: str) -> str:
    message = Message(session, None, position, None, role, text, None)
    return "e-" + importer.message_key(message)[:10]


class Harness:
    def __init__(
        self, root: Path, seed: int, max_kill_ms: int = 1200, max_daemon_ms: int = 8000
    ) -> None:
        self.root = root
        self.rng = random.Random(seed)
        self.max_kill_ms = max_kill_ms
        self.max_daemon_ms = max_daemon_ms
        self.vault = root / "vault"
        self.env = dict(os.environ)
        for key in list(self.env):
            if key.startswith("BRAINIAC_"):
                del self.env[key]
        for var, name in (
            ("XDG_CACHE_HOME", "cache"),
            ("XDG_STATE_HOME", "state"),
            ("XDG_CONFIG_HOME", "config"),
            ("XDG_RUNTIME_DIR", "run"),
        ):
            path = root / "xdg" / name
            path.mkdir(parents=True, mode=0o700, exist_ok=True)
            self.env[var] = str(path)
        self.exports_dir = root / "exports"
        self.exports_dir.mkdir(exist_ok=True)
        self.exports: list[tuple[Path, list[str]]] = []
        self.attempted: dict[str, int] = {}  # event id -> the trial that first tried it
        self.completed: dict[str, int] = {}  # event id -> the trial whose command wrote it
        self.clock = START
        self.empty: set[Path] = set()
        self.result = Result()
        self.outcomes: dict[int, str] = {}  # trial -> "killed", "completed" or "exit N"
        # The last random kills' (not the daemon's) outcomes alike: how many, and whether killed.
        self.streak, self.streak_killed = 0, False
        self.first_window = max_kill_ms

    # -- commands ---------------------------------------------------------------------------

    def command(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "brainiac", "--vault", str(self.vault), *args]

    def run(self, *args: str, fault: str | None = None) -> int:
        """Run to the end (or to the named fault point); the exit status."""
        env = {**self.env, "BRAINIAC_FAULT": fault} if fault else self.env
        proc = subprocess.run(
            self.command(*args), env=env, capture_output=True, text=True, timeout=300
        )
        return proc.returncode

    def run_and_kill(self, *args: str, max_ms: int | None = None) -> tuple[int, bool]:
        """Start, sleep 0-max ms, SIGKILL: (exit status, whether the kill landed mid-command)."""
        proc = subprocess.Popen(
            self.command(*args),
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        time.sleep(self.rng.uniform(0, max_ms or self.max_kill_ms) / 1000)
        if proc.poll() is None:
            # Until it is waited for, the process (even a zombie) keeps its id: this is safe.
            os.killpg(proc.pid, signal.SIGKILL)
        status = proc.wait(timeout=300)
        return status, status == -signal.SIGKILL

    # -- operations -------------------------------------------------------------------------

    def new_export(self, trial: int) -> tuple[Path, list[str]]:
        session = f"chat-{trial}"
        rows, ids = [], []
        for i in range(self.rng.randint(2, 6)):
            role = "user" if i % 2 == 0 else "assistant"
            at = self.clock - dt.timedelta(minutes=30) + dt.timedelta(minutes=i)
            text = f"{self.rng.choice(WORDS)}: message {i} of chat {trial}, detail {trial * 7 + i}"
            rows.append({"text": text, "role": role, "session": session, "at": at.isoformat()})
            ids.append(import_id(session, i, role, text))
        path = self.exports_dir / f"chat-{trial}.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
        self.exports.append((path, ids))
        return path, ids

    def trial(self, n: int) -> str:
        op = self.rng.choices(OPERATIONS, WEIGHTS)[0]
        self.clock += dt.timedelta(minutes=self.rng.randint(20, 240))
        ids: list[str] = []
        fault = None
        if op == "remember":
            text = f"I noted {self.rng.choice(WORDS)} in trial {n} (number {self.rng.random():.6f})"
            ids = [ev.make_event(text, "user", "crash", self.clock).id]
            args = ["remember", text, "--session", "crash", "--at", self.clock.isoformat()]
        elif op == "import":
            if self.exports and self.rng.random() < 0.3:
                path, ids = self.rng.choice(self.exports)
            else:
                path, ids = self.new_export(n)
            args = ["import", str(path), "--now", self.clock.isoformat()]
            if self.rng.random() < 1 / 3:
                fault = self.rng.choice(FAULTS)
        elif op == "jobs":
            args = ["jobs", "run", "all", "--now", self.clock.isoformat()]
        elif op == "daemon":
            # `brainiac run` with a new export in its inbox: killed while it starts, reconciles
            # the index, writes the working memory, imports, or runs its jobs.
            path, ids = self.new_export(n)
            (self.vault / INBOX_DIR).mkdir(exist_ok=True)
            shutil.copyfile(path, self.vault / INBOX_DIR / path.name)
            args = ["run"]
        else:
            args = ["context", "--write", "--now", self.clock.isoformat()]
        for i in ids:
            self.attempted.setdefault(i, n)
        if fault is not None:
            status = self.run(*args, fault=fault)
            killed = status == -signal.SIGKILL
            if killed:
                self.result.fault_points[fault] += 1
        else:
            max_ms = self.max_daemon_ms if op == "daemon" else None
            status, killed = self.run_and_kill(*args, max_ms=max_ms)
            if op != "daemon":
                self.adapt_window(killed)
        self.outcomes[n] = "killed" if killed else "completed" if status == 0 else f"exit {status}"
        if killed:
            self.result.killed[op] += 1
        elif status == 0:
            self.result.completed[op] += 1
            for i in ids:
                self.completed.setdefault(i, n)
        else:
            self.result.failed[op] += 1
            self.violation(n, op, "exit status", f"`{' '.join(args)}` exited {status}")
        return op

    def adapt_window(self, killed: bool) -> None:
        """A staircase that holds the kills near half mid-command: three kills in a row widen
        the window by half (the commands outgrew it), three commands completed in a row narrow
        it back by a third, never below the window the run started with."""
        self.streak = self.streak + 1 if killed == self.streak_killed else 1
        self.streak_killed = killed
        if self.streak == 3:
            if killed:
                self.max_kill_ms = self.max_kill_ms * 3 // 2
            else:
                self.max_kill_ms = max(self.first_window, self.max_kill_ms * 2 // 3)
            self.streak = 0

    # -- invariants -------------------------------------------------------------------------

    def violation(self, trial: int, op: str, invariant: str, details: str) -> None:
        outcome = self.outcomes.get(trial, "")
        self.result.violations.append(Violation(trial, op, invariant, details, outcome))

    def promotion_pending(self) -> bool:
        state = Path(self.env["XDG_STATE_HOME"])
        return any(state.rglob(PROMOTION_INTENT))

    def check(self, trial: int, op: str, final: bool = False) -> None:
        empty = set()
        for path in sorted(self.vault.rglob("*.md")):
            rel = path.relative_to(self.vault).as_posix()
            try:
                text = path.read_text(encoding="utf-8")
                note.parse(text, rel)
            except Exception as exc:  # any failure to read or parse is reported
                self.violation(trial, op, "1 parses", f"{rel}: {type(exc).__name__}: {exc}")
                continue
            if not text:
                empty.add(path)
                if path not in self.empty:
                    self.violation(trial, op, "1 not emptied", f"{rel} is empty")
        self.empty = empty
        counts = ids_in_memory(self.vault)
        doubled = {i: c for i, c in counts.items() if c > 1}
        if doubled and not final and self.promotion_pending():
            # Documented (docs/lifecycle.md): between a killed promotion and the next run that
            # finishes its plan, an event can be in the Event Log and in its note.
            self.result.pending_doubles.append((trial, len(doubled)))
        elif doubled:
            self.violation(trial, op, "2 once", f"ids more than once: {_short(doubled)}")
        missing = {i: t for i, t in self.completed.items() if counts[i] == 0}
        if missing:
            self.violation(
                trial, op, "3 completed present", f"missing (id: trial): {_short(missing)}"
            )
        if final:
            never = {i for i in self.attempted if counts[i] > 1}
            if never:
                self.violation(trial, op, "final at most once", f"{_short(never)}")
            if self.promotion_pending():
                self.violation(trial, op, "recovery", "a promotion plan is still pending")
            self.result.present_events = sum(1 for i in self.attempted if counts[i] == 1)

    # -- a run ------------------------------------------------------------------------------

    def run_all(self, trials: int, progress: bool = False) -> Result:
        started = time.monotonic()
        if self.run("init", str(self.vault)) != 0:
            raise SystemExit("brainiac init failed")
        # A fixed window shorter than a command's start would kill every command before it ends.
        self.max_kill_ms = max(self.max_kill_ms, int(2000 * (time.monotonic() - started)))
        self.first_window = self.max_kill_ms
        (self.vault / ".brainiac").mkdir(exist_ok=True)
        (self.vault / ".brainiac/config.toml").write_text(DAEMON_CONFIG)
        self.check(0, "init")
        for n in range(1, trials + 1):
            op = self.trial(n)
            self.check(n, op)
            self.result.trials = n
            if progress and n % 50 == 0:
                elapsed = time.monotonic() - started
                print(
                    f"  {n} trials, {elapsed:.0f} s, {len(self.result.violations)} violations",
                    flush=True,
                )
        # Recovery, without faults: finish any plan, then every export once more.
        final = trials + 1
        self.clock += dt.timedelta(hours=3)
        status = self.run("jobs", "run", "all", "--now", self.clock.isoformat())
        if status != 0:
            self.violation(final, "recovery", "exit status", f"jobs run all exited {status}")
        for path, ids in self.exports:
            status = self.run("import", str(path), "--now", self.clock.isoformat())
            if status != 0:
                self.violation(final, "recovery", "exit status", f"import {path} exited {status}")
                continue
            for i in ids:
                self.completed.setdefault(i, final)
        self.result.stale_temps = len(
            [p for p in self.vault.rglob("*") if p.name.endswith(safe_io.TMP_SUFFIX)]
        )
        safe_io.remove_stale_temps(self.vault, older_than_s=0)
        left = [p for p in self.vault.rglob("*") if p.name.endswith(safe_io.TMP_SUFFIX)]
        if left:
            self.violation(final, "recovery", "temps swept", f"left after the sweep: {left}")
        self.check(final, "recovery", final=True)
        self.result.attempted_events = len(self.attempted)
        self.result.completed_events = len(self.completed)
        self.result.seconds = time.monotonic() - started
        self.result.kill_window_ms = (self.first_window, self.max_kill_ms)
        return self.result


def _short(items: object, limit: int = 8) -> str:
    seq = list(items.items()) if isinstance(items, dict) else sorted(items)  # type: ignore[attr-defined]
    more = f" (+{len(seq) - limit} more)" if len(seq) > limit else ""
    return ", ".join(str(x) for x in seq[:limit]) + more


def crash_run(
    trials: int,
    seed: int = 0,
    max_kill_ms: int = 1200,
    workdir: Path | None = None,
    max_daemon_ms: int = 8000,
) -> Result:
    if workdir is not None:
        return Harness(workdir, seed, max_kill_ms, max_daemon_ms).run_all(trials)
    with tempfile.TemporaryDirectory(prefix="brainiac-crash-") as tmp:
        return Harness(Path(tmp), seed, max_kill_ms, max_daemon_ms).run_all(trials)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--max-kill-ms", type=int, default=1200)
    parser.add_argument("--max-daemon-ms", type=int, default=8000)
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it (to inspect)")
    args = parser.parse_args(argv)
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        result = Harness(args.keep, args.seed, args.max_kill_ms, args.max_daemon_ms).run_all(
            args.trials, True
        )
    else:
        with tempfile.TemporaryDirectory(prefix="brainiac-crash-") as tmp:
            harness = Harness(Path(tmp), args.seed, args.max_kill_ms, args.max_daemon_ms)
            result = harness.run_all(args.trials, progress=True)
    print(result.report())
    return 1 if result.violations else 0


if __name__ == "__main__":
    sys.exit(main())
