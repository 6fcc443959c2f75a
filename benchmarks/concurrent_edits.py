"""Concurrent editors: a person saving notes in a tight loop while brainiac writes the same files.

    .venv/bin/python benchmarks/concurrent_edits.py [--seconds 120] [--seed 0] [--keep DIR]

Three processes share one vault for `--seconds`:

- the daemon, `python -m brainiac --vault V run`, with its memory jobs due every few seconds
  (`[jobs] reflection/promotion/organization` in the vault's config), so it rewrites
  `memory/short_term.md` and the long-term notes while the others write them;
- an agent process appending events through `Memory.remember` (the code `brainiac remember` runs)
  as fast as it can, each with a known id;
- an editor process that, in a tight loop (0-200 ms between saves, about 10 a second), reads
  `memory/short_term.md` or a long-term note, waits 0-40 ms (the person typing: the window in
  which brainiac's writes land on the file the editor holds an older copy of), adds one line with
  a unique marker, and saves the way
  - vim does: write the new text to a new inode and rename it over the note;
  - nano does: open with O_TRUNC and write into the same inode;
  - Obsidian Sync does: write in place and set a foreign (past) modification time.

A person's save always wins: brainiac's writes are compare-and-swap (safe_io.py), so it never
overwrites a version it did not read. The editor's saves do overwrite brainiac's when the editor
holds an older copy; the events those saves remove are put back by the event journal
(journal.py) when promotion next runs. So at the end, after the daemon is stopped and one
`brainiac jobs run all` has run:

1. every marker the editor saved is in the vault (edits lost: 0); one that is only in a conflict
   copy (safe_io keeps a save there when a newer save of the person's took its place while
   brainiac gave it back) is counted apart, not as lost;
2. every event the agent's `remember` completed is in `memory/` exactly once (events lost: 0,
   events doubled: 0);
3. every `.md` file parses, and the daemon did not die.

Exit status 1 if anything was lost. The figures go to docs/reliability.md.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import os
import random
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from brainiac import Memory
from brainiac.core.errors import BrainiacError
from brainiac.formats import note
from brainiac.store.vault import is_conflict_copy

ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")
MARKER_RE = re.compile(r"person-edit-(\d+)")
STYLES = ("vim", "nano", "obsidian-sync")
CONFIG = """[jobs]
reflection = 0.05
promotion = 0.05
organization = 0.1
rescan = 0.5
"""
TOPICS = (
    "the Lisbon trip budget",
    "Project Atlas deploy",
    "Anna's birthday present",
    "the garden shed roof",
    "the quarterly tax return",
    "piano lessons on Thursday",
)


@dataclasses.dataclass
class Result:
    seconds: float
    saves: Counter[str]  # by style
    saves_by_target: Counter[str]  # short-term / long-term
    remembered: int
    remember_failures: int
    markers_lost: list[int]
    markers_in_conflict_copies: list[int]
    events_lost: list[str]
    events_doubled: list[str]
    doubled_in: dict[str, list[str]]  # a doubled event -> the files that hold it (what to read)
    unparsable: list[str]
    put_back: int
    missing_before_recovery: int
    daemon_alive: bool
    daemon_log_tail: str

    @property
    def ok(self) -> bool:
        return not (
            self.markers_lost
            or self.events_lost
            or self.events_doubled
            or self.unparsable
            or not self.daemon_alive
        )

    def report(self) -> str:
        saves = sum(self.saves.values())
        styles = ", ".join(f"{k} {v}" for k, v in sorted(self.saves.items()))
        targets = ", ".join(f"{k} {v}" for k, v in sorted(self.saves_by_target.items()))
        lines = [
            f"editor saves: {saves} ({styles}; {targets})",
            f"events remembered: {self.remembered} (remember gave up: {self.remember_failures})",
            f"put-backs by the journal: {self.put_back} (events missing when the editor stopped:"
            f" {self.missing_before_recovery})",
            f"edits lost: {len(self.markers_lost)} {self.markers_lost[:10]}",
            f"edits kept only in a conflict copy: {len(self.markers_in_conflict_copies)}"
            f" {self.markers_in_conflict_copies[:10]}",
            f"events lost: {len(self.events_lost)} {self.events_lost[:10]}",
            f"events doubled: {len(self.events_doubled)} {self.events_doubled[:10]}",
            *(f"  {i} in {self.doubled_in[i]}" for i in self.events_doubled[:10]),
            f"files that do not parse: {self.unparsable}",
            f"daemon alive to the end: {self.daemon_alive}",
            f"wall time: {self.seconds:.1f} s",
        ]
        return "\n".join(lines)


def _save(path: Path, text: str, style: str, rng: random.Random) -> None:
    data = text.encode("utf-8")
    if style == "vim":
        tmp = path.with_name(f".{path.name}.swpx")
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return
    with open(path, "wb") as f:  # open(O_TRUNC) then write: nano and sync clients
        f.write(data)
    if style == "obsidian-sync":
        past = time.time() - rng.uniform(60, 86_400)  # the other device's mtime
        os.utime(path, (past, past))


def _with_marker(text: str, marker: str, short_term: bool) -> str:
    line = f"- {marker}: the person's note"
    if short_term and "## Working Memory" in text:
        return text.replace("## Working Memory\n", f"## Working Memory\n{line}\n", 1)
    return text.rstrip("\n") + f"\n\n{line}\n"


def editor(vault: str, seconds: float, seed: int, log_path: str) -> None:
    until = time.time() + seconds
    rng = random.Random(seed)
    root = Path(vault)
    counter = 0
    with open(log_path, "a", encoding="utf-8") as log:
        while time.time() < until:
            notes = sorted((root / "memory/long_term").glob("*.md"))
            short_term = not notes or rng.random() < 0.5
            path = root / "memory/short_term.md" if short_term else rng.choice(notes)
            try:
                text = path.read_text(encoding="utf-8")
            except (FileNotFoundError, UnicodeDecodeError):
                continue  # between a rename and its replacement, or mid-write: try another
            if not text:
                continue  # another writer's open(O_TRUNC): a person would see it loading
            time.sleep(rng.uniform(0, 0.04))
            counter += 1
            style = rng.choice(STYLES)
            marker = f"person-edit-{counter}"
            try:
                _save(path, _with_marker(text, marker, short_term), style, rng)
            except FileNotFoundError:
                continue  # the folder went away (an archive move): nothing saved
            log.write(
                json.dumps(
                    {
                        "marker": counter,
                        "style": style,
                        "short_term": short_term,
                        "path": str(path.relative_to(root)),
                    }
                )
                + "\n"
            )
            log.flush()
            time.sleep(rng.uniform(0, 0.2))  # a few saves a second, each file every second or so


def agent(vault: str, seconds: float, seed: int, log_path: str) -> None:
    rng = random.Random(seed)
    at = dt.datetime.now().replace(microsecond=0) - dt.timedelta(hours=6)
    with Memory(vault, refresh_interval_s=3600) as memory, open(log_path, "a") as log:
        memory.index_writes = False  # the daemon keeps the index; this process only writes
        until = time.time() + seconds
        i = 0
        while time.time() < until:
            i += 1
            at += dt.timedelta(seconds=rng.randint(20, 90))
            text = f"step {i}: about {rng.choice(TOPICS)}, detail {rng.randint(0, 10**6)}"
            try:
                # `now=at`: the agent's clock runs ahead of the real one (4,000 events in two
                # minutes), which `remember` would otherwise clamp to the real time.
                event = memory.remember(text, session=f"s{i // 25}", at=at, now=at)
                log.write(json.dumps({"id": event.id, "ok": True}) + "\n")
            except BrainiacError as exc:
                log.write(json.dumps({"ok": False, "error": str(exc)}) + "\n")
            log.flush()


def _read_log(path: Path) -> list[dict[str, object]]:
    try:
        return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    except FileNotFoundError:
        return []


def run(seconds: float, seed: int = 0, workdir: Path | None = None) -> Result:
    started = time.monotonic()
    root = Path(workdir or tempfile.mkdtemp(prefix="brainiac-concurrent-"))
    vault = root / "vault"
    env = dict(os.environ)
    for var, name in (
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_RUNTIME_DIR", "run"),
    ):
        (root / "xdg" / name).mkdir(parents=True, exist_ok=True, mode=0o700)
        env[var] = str(root / "xdg" / name)
    cli = [sys.executable, "-m", "brainiac", "--vault", str(vault)]
    subprocess.run([*cli, "init"], env=env, check=True, capture_output=True)
    (vault / ".brainiac").mkdir(exist_ok=True)
    (vault / ".brainiac/config.toml").write_text(CONFIG)
    daemon_log = root / "daemon.log"
    with open(daemon_log, "w") as out:
        daemon = subprocess.Popen([*cli, "run"], env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        _wait_ready(vault, daemon)
        edits_log, agent_log = root / "editor.jsonl", root / "agent.jsonl"
        # Separate processes, as a person's editor and an agent are: the script runs itself.
        # Each races for `seconds` from when it is running (imports done, the agent's memory
        # open), so that a slow start on busy cores does not eat a short run's window.
        workers = [
            subprocess.Popen(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    role,
                    "--vault",
                    str(vault),
                    "--seconds",
                    str(seconds),
                    "--seed",
                    str(seed + n),
                    "--log",
                    str(log),
                ],
                env=env,
            )
            for n, (role, log) in enumerate((("editor", edits_log), ("agent", agent_log)))
        ]
        for w in workers:
            w.wait(timeout=seconds + 120)
        daemon_alive = daemon.poll() is None
    finally:
        if daemon.poll() is None:
            daemon.send_signal(signal.SIGTERM)
            try:
                daemon.wait(timeout=60)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
    # What the editor's saves had removed when it stopped: lost, but for the journal.
    ok_before = [str(r["id"]) for r in _read_log(root / "agent.jsonl") if r.get("ok")]
    present_before = _holders(vault)
    missing_before_recovery = sum(1 for i in ok_before if i not in present_before)
    final = subprocess.run(
        [*cli, "jobs", "run", "all", "--json"], env=env, capture_output=True, text=True
    )
    # The daemon logs each put-back; the final run says it in its summary.
    put_back = sum(
        int(n) for n in re.findall(r"(\d+) event\(s\) were missing", daemon_log.read_text())
    ) + sum(int(n) for n in re.findall(r"put back (\d+) event", final.stdout))

    edits = _read_log(edits_log)
    remembered = _read_log(agent_log)

    def markers(copies: bool) -> set[int]:
        text = "\n".join(
            p.read_text(encoding="utf-8", errors="replace")
            for p in vault.rglob("*.md")
            if is_conflict_copy(p.name) == copies
        )
        return {int(m) for m in MARKER_RE.findall(text)}

    present_markers, in_copies = markers(False), markers(True)
    saved = sorted(int(str(e["marker"])) for e in edits)
    held = _holders(vault)
    unparsable = []
    for path in vault.rglob("*.md"):
        try:
            note.parse(path.read_text(encoding="utf-8"), str(path.relative_to(vault)))
        except (BrainiacError, UnicodeDecodeError) as exc:
            unparsable.append(f"{path.relative_to(vault)}: {exc}")
    ok_ids = [str(r["id"]) for r in remembered if r.get("ok")]
    doubled = [i for i in ok_ids if len(held.get(i, ())) > 1]
    tail = "\n".join(daemon_log.read_text(errors="replace").splitlines()[-15:])
    return Result(
        seconds=time.monotonic() - started,
        saves=Counter(str(e["style"]) for e in edits),
        saves_by_target=Counter("short-term" if e["short_term"] else "long-term" for e in edits),
        remembered=len(ok_ids),
        remember_failures=sum(1 for r in remembered if not r.get("ok")),
        markers_lost=[m for m in saved if m not in present_markers | in_copies],
        markers_in_conflict_copies=[
            m for m in saved if m not in present_markers and m in in_copies
        ],
        events_lost=[i for i in ok_ids if i not in held],
        events_doubled=doubled,
        doubled_in={i: held[i] for i in doubled},
        unparsable=unparsable
        + ([] if final.returncode == 0 else [f"final jobs run: {final.stderr}"]),
        put_back=put_back,
        missing_before_recovery=missing_before_recovery,
        daemon_alive=daemon_alive,
        daemon_log_tail=tail,
    )


def _holders(vault: Path) -> dict[str, list[str]]:
    """The files of memory/ that hold each event id, once per time it is written there (kept
    raw exports and conflict copies, which the daemon never reads as memory, aside)."""
    held: dict[str, list[str]] = {}
    for path in sorted((vault / "memory").rglob("*.md")):
        if "exports" not in path.relative_to(vault).parts and not is_conflict_copy(path.name):
            for i in ID_RE.findall(path.read_text(encoding="utf-8", errors="replace")):
                held.setdefault(i, []).append(str(path.relative_to(vault)))
    return held


def _wait_ready(vault: Path, daemon: subprocess.Popen[bytes], deadline_s: float = 60) -> None:
    """The daemon writes the working memory once it has indexed the vault."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if daemon.poll() is not None:
            raise RuntimeError(f"the daemon exited with {daemon.returncode} at start")
        if (vault / "context/working_memory.md").exists():
            return
        time.sleep(0.05)
    raise RuntimeError("the daemon did not write the working memory within a minute")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--keep", type=Path, help="run in this folder and keep it")
    parser.add_argument("--worker", choices=("editor", "agent"), help=argparse.SUPPRESS)
    parser.add_argument("--vault", help=argparse.SUPPRESS)
    parser.add_argument("--log", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        (editor if args.worker == "editor" else agent)(
            args.vault, args.seconds, args.seed, args.log
        )
        return 0
    result = run(args.seconds, args.seed, args.keep)
    print(result.report())
    if not result.ok:
        print("daemon log (last lines):\n" + result.daemon_log_tail)
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
