"""Daemon benchmark: `brainiac run` on generated vaults, edit → working memory, beside a floor.

    .venv/bin/python benchmarks/freshness.py                  # sizes 1000 and 10000, 60 edits
    .venv/bin/python benchmarks/freshness.py --quick          # 200 notes, 10 edits, no burst
    .venv/bin/python benchmarks/freshness.py --sizes 10000 --edits 100

A benchmark, not a timed test: it prints a Markdown table and writes JSON to benchmarks/results/.
The daemon runs as a real subprocess (`brainiac --vault V run`) with XDG_CACHE_HOME,
XDG_STATE_HOME and XDG_RUNTIME_DIR in a temporary directory and NOTIFY_SOCKET bound here, so that
READY=1 (sent after its first reconcile) says when it serves. Per size, in this order:

- cold start: the daemon on a vault with no index (it builds it): spawn → READY, peak RSS of its
  process tree (Whoosh's procs=2 build forks a sub-writer) and its RSS at READY. Then SIGTERM.
- warm start (the normal case): the same daemon again on the built index: spawn → READY, RSS.
- freshness, two series of `--edits` saves each, alternating a rename-save (vim-like: write a
  hidden temp file, os.rename onto the note) and an in-place save (nano-like: truncate + write
  the same inode), with a random 0.2-0.4 s pause between saves:
  * `stm`: a `- probe: <token>` line in `## Facts` of memory/short_term.md (always shown);
  * `ltm`: a long-term note put into the working memory first (`brainiac remember` of an event
    naming a project note, then waiting for its `### Title` block), a unique token appended to
    one of its fact lines that the working memory shows.
  Latency = from just before the save to the moment context/working_memory.md contains the token
  (an inotify watch on context/ in this process, with a 10 ms poll as a fallback).
- RSS after the edits; idle CPU: after `--settle` seconds (the daemon merges segments 30 s after
  the last change), the daemon's user+system CPU time over `--idle` seconds.
- burst (largest size only, not with --quick): the vault is a git repository (branch `a`, made
  before the daemon first starts); branch `b` changes one word in the summary of 5,000 notes (a
  unique token per note), made with `git fast-import` so the work tree is not touched. With the
  daemon running, `git checkout b`; converged = the daemon's manifest records the new SHA-256 of
  all 5,000 notes (it is saved after the index commit). Then exactness: the manifest against every
  file on disk, the daemon's index against a fresh `brainiac reindex` into separate XDG dirs (all
  stored fields of every live document, duplicates counted), every token found in its note
  through brainiac's read-only Index.search (what `brainiac search` uses), and one real
  `brainiac search --json` call.
- the lifecycle jobs (reflection, promotion, organization) are turned off through the
  environment: this measures the edit path; they would catch up at the first start and rewrite
  the generated notes while the edits are timed.
- floor, measured in the same run with the daemon stopped: a separate process with a watchdog
  observer on the vault (recursive, as the daemon's) that, on the `closed` / `moved` event of a
  note, reads it and does one `update_document` + `commit(merge=False)` on a raw Whoosh index of
  the same notes (an ID field and one TEXT field). The same two series and save styles. Its
  latency is from before the save to the end of that commit.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import hashlib
import json
import os
import platform
import random
import re
import select
import shutil
import signal
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import generate_vault  # noqa: E402
import scale  # noqa: E402  (shared helpers: pct, run, log, last_json_block, _git, _version)

PY = sys.executable
BRAINIAC = str(Path(PY).with_name("brainiac"))
STM = "memory/short_term.md"
WM = "context/working_memory.md"
BURST_FILES = 5000
EDIT_TIMEOUT_S = 15.0
pct, log = scale.pct, scale.log

# -- child programs ---------------------------------------------------------------------------

_BUILD_FLOOR = r"""
import json, sys, time
from pathlib import Path
from whoosh import index
from whoosh.fields import ID, TEXT, Schema
vault, target = Path(sys.argv[1]), Path(sys.argv[2])
files = sorted((vault / "memory" / "long_term").glob("*.md")) + [vault / "memory/short_term.md"]
t0 = time.perf_counter()
target.mkdir(parents=True, exist_ok=True)
ix = index.create_in(target, Schema(path=ID(unique=True, stored=True), content=TEXT()))
kw = {"limitmb": 128}
if len(files) > 2000:
    kw.update(procs=2, multisegment=True)
w = ix.writer(**kw)
for f in files:
    w.add_document(path=f.relative_to(vault).as_posix(), content=f.read_text(encoding="utf-8"))
w.commit(merge=False)
ix.writer().commit(merge=True)
print(json.dumps({"seconds": time.perf_counter() - t0, "docs": len(files)}))
"""

# Watchdog delivery + one Whoosh update: the least any watcher-driven indexer has to do.
_FLOOR_WATCH = r"""
import json, os, sys, time
from whoosh import index
from watchdog.events import FileSystemEventHandler
from watchdog.observers import Observer
root, ixdir = os.path.abspath(sys.argv[1]), sys.argv[2]
ix = index.open_dir(ixdir)

class Handler(FileSystemEventHandler):
    def dispatch(self, event):
        t_event = time.monotonic()
        if event.is_directory or event.event_type not in ("closed", "moved"):
            return
        path = os.fsdecode(event.dest_path if event.event_type == "moved" else event.src_path)
        rel = os.path.relpath(path, root)
        if not rel.endswith(".md") or rel.startswith("context/") or any(
                p.startswith(".") for p in rel.split("/")):
            return
        with open(path, encoding="utf-8") as f:
            text = f.read()
        w = ix.writer(timeout=30)
        w.update_document(path=rel, content=text)
        w.commit(merge=False)
        print(json.dumps({"rel": rel, "event": t_event, "done": time.monotonic()}), flush=True)

obs = Observer()
obs.schedule(Handler(), root, recursive=True)
obs.start()
print("READY", flush=True)
sys.stdin.read()
obs.stop()
obs.join()
"""

# Compares the daemon's index with a fresh rebuild, and finds every burst token in its note.
_COMPARE = r"""
import json, sys, time
from pathlib import Path
from whoosh import index
from brainiac.search.index import Index
daemon_dir, fresh_dir, tokens_file = sys.argv[1:4]
def stored(d):
    ix = index.open_dir(d)
    with ix.searcher() as s:
        docs = list(s.all_stored_fields())
    by_key = {}
    for doc in docs:
        by_key[doc["key"]] = json.dumps(doc, sort_keys=True, default=str)
    return len(docs), by_key
n_d, d = stored(daemon_dir)
n_f, f = stored(fresh_dir)
diff = sorted(k for k in set(d) | set(f) if d.get(k) != f.get(k))
tokens = json.loads(Path(tokens_file).read_text())
ix = Index(Path(daemon_dir), writable=False)
t = time.perf_counter()
missing = [rel for rel, tok in tokens.items()
           if rel not in {h.path for h in ix.search(tok, limit=5)}]
print(json.dumps({"daemon_docs": n_d, "daemon_keys": len(d), "fresh_docs": n_f,
                  "fresh_keys": len(f), "differing_keys": len(diff), "examples": diff[:5],
                  "tokens": len(tokens), "tokens_missing": len(missing),
                  "missing_examples": missing[:5], "search_s": time.perf_counter() - t}))
"""


# -- the daemon -------------------------------------------------------------------------------


class Notifications:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET (as in tests/test_daemon.py),
    drained by a thread as systemd would: a full socket queue makes the daemon's sd_notify wait
    (0.25 s) and would show up as latency."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.2)
        self.path = path
        self.seen: list[str] = []
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._drain, daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._closed.is_set():
            try:
                self.seen.append(self.sock.recv(4096).decode("utf-8"))
            except TimeoutError:
                continue
            except OSError:
                return

    def expect(self, assignment: str, deadline_s: float, proc: subprocess.Popen[bytes]) -> None:
        end = time.monotonic() + deadline_s
        while not any(assignment in m.split("\n") for m in list(self.seen)):
            if proc.poll() is not None:
                raise RuntimeError(f"the daemon exited ({proc.returncode}) before {assignment}")
            if time.monotonic() > end:
                raise RuntimeError(f"no {assignment} within {deadline_s} s: {self.seen}")
            time.sleep(0.005)

    def close(self) -> None:
        self._closed.set()
        self._thread.join()
        self.sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()


class Daemon:
    """`brainiac --vault V run` as a child, with its tree's RSS sampled every 50 ms."""

    def __init__(
        self, vault: Path, env: dict[str, str], base: Path, name: str, debug: bool = False
    ) -> None:
        self.vault, self.env, self.base, self.name = vault, env, base, name
        self.log_path = base / f"daemon-{name}.log"
        self.notes = Notifications(base / f"notify-{name}.sock")
        argv = [BRAINIAC, *(["--debug"] if debug else []), "--vault", str(vault), "run"]
        self._log = open(self.log_path, "wb")  # noqa: SIM115  (closed in stop())
        self.spawned = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            env={**env, "NOTIFY_SOCKET": str(self.notes.path)},
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.ps = psutil.Process(self.proc.pid)
        self.peak_tree = 0
        self._stop = threading.Event()
        self._sampler = threading.Thread(target=self._sample, daemon=True)
        self._sampler.start()

    def _sample(self) -> None:
        while not self._stop.is_set():
            total = 0
            with contextlib.suppress(psutil.Error):
                for p in [self.ps, *self.ps.children(recursive=True)]:
                    with contextlib.suppress(psutil.Error):
                        total += p.memory_info().rss
            self.peak_tree = max(self.peak_tree, total)
            self._stop.wait(0.05)

    def ready(self, deadline_s: float = 900.0) -> float:
        self.notes.expect("READY=1", deadline_s, self.proc)
        return time.monotonic() - self.spawned

    def rss_mb(self) -> float:
        return self.ps.memory_info().rss / 2**20

    def rss_split_mb(self) -> dict[str, float]:
        """RssAnon (the daemon's own heap) and RssFile (mostly Whoosh's mmapped segment files:
        page cache, shared and reclaimable) from /proc; empty where unreadable."""
        try:
            lines = Path(f"/proc/{self.proc.pid}/status").read_text().splitlines()
        except OSError:
            return {}
        return {
            k: int(v.split()[0]) / 1024
            for k, v in (ln.split(":", 1) for ln in lines)
            if k in ("RssAnon", "RssFile")
        }

    def cpu_s(self) -> float:
        t = self.ps.cpu_times()
        return t.user + t.system

    def wait_quiet(self, quiet_s: float = 1.0, limit_s: float = 60.0) -> None:
        """Until the daemon used < 20 ms of CPU over `quiet_s`."""
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            before = self.cpu_s()
            time.sleep(quiet_s)
            if self.cpu_s() - before < 0.02:
                return

    def log_lines(self, needle: str) -> list[str]:
        try:
            text = self.log_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return []
        return [line for line in text.splitlines() if needle in line]

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._stop.set()
        self._sampler.join()
        self.notes.close()
        self._log.close()
        return self.proc.returncode


# -- watching the working memory ------------------------------------------------------------


class WorkingMemoryWatch:
    """Tells when context/working_memory.md first contains a token: inotify on context/ (the
    daemon replaces the file by rename), with a 10 ms poll as a fallback."""

    def __init__(self, vault: Path) -> None:
        from watchdog.events import FileSystemEventHandler
        from watchdog.observers import Observer

        self.path = vault / WM
        self._token: str | None = None
        self._seen_at: float | None = None
        self._found = threading.Event()
        self._lock = threading.Lock()
        watch = self

        class Handler(FileSystemEventHandler):  # type: ignore[misc]
            def dispatch(self, event: Any) -> None:
                watch._check(time.monotonic())

        self._observer = Observer()
        self._observer.schedule(Handler(), str(vault / "context"), recursive=False)
        self._observer.start()

    def text(self) -> str:
        try:
            return self.path.read_text(encoding="utf-8")
        except (FileNotFoundError, UnicodeDecodeError):
            return ""

    def _check(self, when: float) -> None:
        with self._lock:
            token = self._token
            if token is None or self._found.is_set():
                return
            if token in self.text():
                self._seen_at = when
                self._found.set()

    def arm(self, token: str) -> None:
        with self._lock:
            self._token, self._seen_at = token, None
            self._found.clear()

    def wait(self, timeout: float) -> float | None:
        end = time.monotonic() + timeout
        while not self._found.wait(0.01):
            self._check(time.monotonic())
            if time.monotonic() > end:
                return None
        return self._seen_at

    def wait_for(self, predicate: Any, timeout: float) -> bool:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if predicate(self.text()):
                return True
            time.sleep(0.02)
        return False

    def close(self) -> None:
        self._observer.stop()
        self._observer.join()


# -- saves and edits ----------------------------------------------------------------------------


def save_rename(path: Path, text: str) -> None:
    """vim-like: a hidden temp file renamed onto the note (a new inode)."""
    tmp = path.with_name(f".{path.name}.bench-tmp")
    tmp.write_text(text, encoding="utf-8")
    os.rename(tmp, path)


def save_inplace(path: Path, text: str) -> None:
    """nano-like: truncate and rewrite the same inode."""
    with open(path, "r+", encoding="utf-8") as f:
        f.truncate(0)
        f.write(text)


SAVES = (("rename", save_rename), ("inplace", save_inplace))
_PROBE_RE = re.compile(r"^- probe: .*\n", re.M)


def stm_edit(vault: Path, token: str) -> tuple[Path, str]:
    """short_term.md with a `- probe: <token>` line in ## Facts (the previous one replaced)."""
    path = vault / STM
    text = _PROBE_RE.sub("", path.read_text(encoding="utf-8"))
    if "## Facts\n" not in text:
        raise RuntimeError(f"{STM} has no ## Facts section")
    return path, text.replace("## Facts\n", f"## Facts\n- probe: {token}\n", 1)


def make_token(series: str, i: int, rng: random.Random) -> str:
    return f"zq{series}{i:03d}{''.join(rng.choices('bcdfghjklmnpqrstvwxz', k=6))}"


def _title(path: Path) -> str:
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("title: "):
                return line[len("title: ") :].strip()
            if line.startswith("## "):
                break
    return path.stem


def pick_target(vault: Path) -> tuple[str, str]:
    """(rel, title) of the long-term note the ltm series edits: the first project note by name."""
    for path in sorted((vault / "memory/long_term").glob("project-*.md")):
        if not re.search(r"-\d+\.md$", path.name):
            return path.relative_to(vault).as_posix(), _title(path)
    path = sorted((vault / "memory/long_term").glob("*.md"))[0]
    return path.relative_to(vault).as_posix(), _title(path)


def shown_fact(wm_text: str, rel: str, note_text: str) -> str | None:
    """A fact line of the note at `rel` that the working memory shows verbatim."""
    block = None
    for part in wm_text.split("\n### "):
        if part.split("\n", 1)[0].endswith(f"({rel})"):
            block = part
    if block is None:
        return None
    note_lines = set(note_text.split("\n"))
    for line in block.split("\n")[1:]:
        if line.startswith("- ") and ": " in line and line in note_lines:
            return line
    return None


def timed_series(series: str, n: int, rng: random.Random, apply: Any) -> list[dict[str, Any]]:
    """n saves, alternating the two styles; apply(i, token, save, style) saves and times one."""
    out = []
    for i in range(n):
        style, save = SAVES[i % 2]
        token = make_token(series, i, rng)
        res = apply(i, token, save, style)
        out.append({"series": series, "style": style, **res})
        if len(out) >= 3 and all(r.get("latency") is None for r in out[-3:]):
            log(f"  {series}: three saves in a row never showed; series stopped")
            break
        time.sleep(rng.uniform(0.2, 0.4))
    return out


def summarise(rows: list[dict[str, Any]], key: str = "latency") -> dict[str, Any]:
    vals = [r[key] for r in rows if r.get(key) is not None]
    missed = sum(1 for r in rows if r.get(key) is None)
    if not vals:
        return {"n": 0, "missed": missed}
    return {
        "n": len(vals),
        "missed": missed,
        "p50": pct(vals, 50),
        "p95": pct(vals, 95),
        "max": max(vals),
        "mean": statistics.fmean(vals),
    }


# -- daemon freshness ---------------------------------------------------------------------------


def daemon_edits(
    d: Daemon, vault: Path, env: dict[str, str], edits: int, seed: int, target: tuple[str, str]
) -> dict[str, Any]:
    watch = WorkingMemoryWatch(vault)
    rng = random.Random(f"edits-{seed}")
    try:
        if not watch.wait_for(lambda t: "## Short-Term Memory" in t, 30):
            raise RuntimeError("no working memory after READY")

        def stm_apply(i: int, token: str, save: Any, style: str) -> dict[str, Any]:
            path, text = stm_edit(vault, token)
            watch.arm(token)
            t0 = time.monotonic()
            save(path, text)
            seen = watch.wait(EDIT_TIMEOUT_S)
            return {"latency": None if seen is None else seen - t0}

        stm_rows = timed_series("stm", edits, rng, stm_apply)
        log(f"  daemon stm: {fmt_summary(summarise(stm_rows))}")

        rel, title = target
        marker = make_token("mark", 0, rng)
        r = subprocess.run(
            [
                BRAINIAC,
                "--vault",
                str(vault),
                "remember",
                f"Let us review {title} today ({marker}): what is the status of {title}?",
            ],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        if not watch.wait_for(lambda t: marker in t, 30):
            raise RuntimeError(f"the remembered event never reached the working memory: {r}")
        shown = watch.wait_for(lambda t: f"### {title} ({rel})" in t, 5)
        note_path = vault / rel
        if not shown:  # fall back to the first long-term note the working memory shows
            m = re.search(r"^### (.+) \((memory/long_term/[^)]+\.md)\)$", watch.text(), re.M)
            if not m:
                raise RuntimeError("no long-term note in the working memory")
            title, rel = m.group(1), m.group(2)
            note_path = vault / rel
            log(f"  {target[1]} did not show; using {rel}")
        cur: dict[str, Any] = {"rel": rel, "path": note_path, "retargets": 0}
        cur["original"] = note_path.read_text(encoding="utf-8")
        cur["fact"] = shown_fact(watch.text(), rel, cur["original"])
        if cur["fact"] is None:
            raise RuntimeError(f"no fact line of {rel} shown in the working memory")
        first = (rel, cur["fact"], len(cur["original"].encode()))

        def retarget() -> None:
            """The note left the working memory (its ranking moved): restore it and edit the
            first note shown now."""
            cur["path"].write_text(cur["original"], encoding="utf-8")
            time.sleep(1.0)
            for m in re.finditer(r"^### .+ \((memory/long_term/[^)]+\.md)\)$", watch.text(), re.M):
                text = (vault / m.group(1)).read_text(encoding="utf-8")
                fact = shown_fact(watch.text(), m.group(1), text)
                if fact is not None:
                    cur.update(
                        rel=m.group(1),
                        path=vault / m.group(1),
                        original=text,
                        fact=fact,
                        retargets=cur["retargets"] + 1,
                    )
                    log(f"  ltm: the note left the working memory; now editing {m.group(1)}")
                    return

        def ltm_apply(i: int, token: str, save: Any, style: str) -> dict[str, Any]:
            text = cur["original"].replace(cur["fact"] + "\n", f"{cur['fact']} {token}\n", 1)
            watch.arm(token)
            t0 = time.monotonic()
            save(cur["path"], text)
            seen = watch.wait(EDIT_TIMEOUT_S)
            if seen is None and f"({cur['rel']})" not in watch.text():
                retarget()
            return {"latency": None if seen is None else seen - t0, "note": cur["rel"]}

        ltm_rows = timed_series("ltm", edits, rng, ltm_apply)
        cur["path"].write_text(cur["original"], encoding="utf-8")  # the floor edits it again
        log(f"  daemon ltm ({rel}): {fmt_summary(summarise(ltm_rows))}")
    finally:
        watch.close()
    return {
        "rows": stm_rows + ltm_rows,
        "ltm_note": first[0],
        "ltm_fact": first[1],
        "ltm_note_bytes": first[2],
        "ltm_retargets": cur["retargets"],
    }


def fmt_summary(s: dict[str, Any]) -> str:
    if not s.get("n"):
        return f"no samples ({s.get('missed')} missed)"
    return (
        f"p50 {s['p50'] * 1e3:.1f} ms, p95 {s['p95'] * 1e3:.1f} ms, max {s['max'] * 1e3:.1f} "
        f"ms, n {s['n']}, missed {s['missed']}"
    )


# -- the floor ----------------------------------------------------------------------------------


def floor_edits(
    vault: Path, floor_ix: Path, env: dict[str, str], edits: int, seed: int, ltm_rel: str, fact: str
) -> list[dict[str, Any]]:
    proc = subprocess.Popen(
        [PY, "-c", _FLOOR_WATCH, str(vault), str(floor_ix)],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stdin is not None
    rng = random.Random(f"floor-{seed}")

    def wait_done(rel: str, t0: float) -> dict[str, Any]:
        end = time.monotonic() + EDIT_TIMEOUT_S
        while time.monotonic() < end:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if not ready:
                continue
            line = proc.stdout.readline()
            if not line:
                break
            info = json.loads(line)
            if info["rel"] == rel and info["event"] >= t0:
                return {
                    "latency": info["done"] - t0,
                    "delivery": info["event"] - t0,
                    "whoosh": info["done"] - info["event"],
                }
        return {"latency": None}

    try:
        if proc.stdout.readline().strip() != "READY":
            raise RuntimeError("floor watcher did not start")
        note_path = vault / ltm_rel
        original = note_path.read_text(encoding="utf-8")

        def stm_apply(i: int, token: str, save: Any, style: str) -> dict[str, Any]:
            path, text = stm_edit(vault, token)
            t0 = time.monotonic()
            save(path, text)
            return wait_done(STM, t0)

        def ltm_apply(i: int, token: str, save: Any, style: str) -> dict[str, Any]:
            text = original.replace(fact + "\n", f"{fact} {token}\n", 1)
            t0 = time.monotonic()
            save(note_path, text)
            return wait_done(ltm_rel, t0)

        rows = timed_series("stm", edits, rng, stm_apply)
        rows += timed_series("ltm", edits, rng, ltm_apply)
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    return rows


# -- the burst ------------------------------------------------------------------------------------


def _git_in(vault: Path, *argv: str, stdin: bytes | None = None) -> str:
    r = subprocess.run(
        [
            "git",
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@example.invalid",
            "-c",
            "commit.gpgsign=false",
            *argv,
        ],
        cwd=vault,
        input=stdin,
        capture_output=True,
        check=False,
    )
    if r.returncode != 0:
        raise RuntimeError(f"git {argv[:2]} failed: {r.stderr.decode(errors='replace')[-2000:]}")
    return r.stdout.decode()


def prepare_burst(vault: Path, n_files: int, exclude: set[str], seed: int) -> dict[str, Any]:
    """Branch `a` = the vault; branch `b` = 5,000 notes with one summary word replaced by a
    unique token (built with fast-import: the work tree is not touched). Returns the expected
    SHA-256 and token of every changed note."""
    t = time.perf_counter()
    (vault / ".gitignore").write_text("context/\n", encoding="utf-8")
    _git_in(vault, "init", "-q", "-b", "a")
    _git_in(vault, "add", "-A")
    _git_in(vault, "commit", "-q", "-m", "a")
    notes = sorted(
        p.relative_to(vault).as_posix() for p in (vault / "memory/long_term").glob("*.md")
    )
    notes = [rel for rel in notes if rel not in exclude]
    rng = random.Random(f"burst-{seed}")
    chosen = sorted(rng.sample(notes, min(n_files, len(notes))))
    stream = [
        b"commit refs/heads/b\n",
        b"committer bench <bench@example.invalid> 1767225600 +0000\n",
        b"data 2\nb\n",
        b"from refs/heads/a\n",
    ]
    expected: dict[str, str] = {}
    tokens: dict[str, str] = {}
    for k, rel in enumerate(chosen):
        text = (vault / rel).read_text(encoding="utf-8")
        token = f"zqburst{k:05d}x"
        new, count = re.subn(
            r"(## Summary\n)(\S+)", lambda m, tok=token: m.group(1) + tok, text, count=1
        )
        if not count:
            raise RuntimeError(f"{rel}: no summary to change")
        data = new.encode("utf-8")
        expected[rel] = hashlib.sha256(data).hexdigest()
        tokens[rel] = token
        stream += [f"M 100644 inline {rel}\n".encode(), f"data {len(data)}\n".encode(), data, b"\n"]
    _git_in(vault, "fast-import", "--quiet", stdin=b"".join(stream))
    return {"expected": expected, "tokens": tokens, "setup_s": time.perf_counter() - t}


def _load_manifest(path: Path) -> dict[str, Any]:
    """The daemon's manifest (SQLite, brainiac/store/manifest.py) as {path: {"sha256": ...}},
    read-only while the daemon writes it."""
    try:
        db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = db.execute("SELECT rel, sha256 FROM files").fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return {}
    return {rel: {"sha256": sha} for rel, sha in rows}


def run_burst(
    d: Daemon, vault: Path, env: dict[str, str], base: Path, prep: dict[str, Any], timeout_s: float
) -> dict[str, Any]:
    from brainiac.store.locations import Locations

    loc = Locations.for_vault(vault, env)
    expected: dict[str, str] = prep["expected"]
    reconciles_before = len(d.log_lines("reconcile ("))
    cpu0 = d.cpu_s()
    t0 = time.monotonic()
    r = subprocess.run(
        ["git", "checkout", "-q", "b"], cwd=vault, capture_output=True, text=True, check=False
    )
    checkout_s = time.monotonic() - t0
    if r.returncode != 0:
        raise RuntimeError(f"git checkout b failed: {r.stderr}")
    converged, last_mtime, done = None, 0, 0
    progress = []
    while time.monotonic() - t0 < timeout_s:
        with contextlib.suppress(FileNotFoundError):
            mtime = loc.manifest_path.stat().st_mtime_ns
            if mtime != last_mtime:
                last_mtime = mtime
                files = _load_manifest(loc.manifest_path)
                done = sum(
                    1 for rel, sha in expected.items() if files.get(rel, {}).get("sha256") == sha
                )
                progress.append((round(time.monotonic() - t0, 3), done))
                if done == len(expected):
                    converged = time.monotonic() - t0
                    break
        time.sleep(0.1)
    log(
        f"  burst: checkout {checkout_s:.2f} s, converged "
        f"{'no' if converged is None else f'{converged:.2f} s'} ({done}/{len(expected)})"
    )
    d.wait_quiet(2.0, 120)
    res: dict[str, Any] = {
        "files": len(expected),
        "checkout_s": checkout_s,
        "converge_s": converged,
        "converged_files": done,
        "progress": progress[-20:],
        "daemon_cpu_s": d.cpu_s() - cpu0,
        "rss_after_mb": d.rss_mb(),
        "rss_after_split_mb": d.rss_split_mb(),
        "peak_tree_rss_mb": d.peak_tree / 2**20,
        "setup_s": prep["setup_s"],
    }
    res["log_reconciles"] = d.log_lines("reconcile (")[reconciles_before:]
    res["log_overflow"] = len(d.log_lines("overflow"))

    # Exactness 1: the manifest against every file on disk.
    from brainiac.store.vault import kind_of

    files = _load_manifest(loc.manifest_path)
    on_disk = {p.relative_to(vault).as_posix() for p in vault.rglob("*.md")}
    on_disk = {
        rel
        for rel in on_disk
        if kind_of(rel) and not any(part.startswith(".") for part in rel.split("/"))
    }
    wrong = [
        rel
        for rel in sorted(on_disk | set(files))
        if rel not in files
        or rel not in on_disk
        or files[rel]["sha256"] != hashlib.sha256((vault / rel).read_bytes()).hexdigest()
    ]
    res["manifest_mismatches"] = len(wrong)
    res["manifest_mismatch_examples"] = wrong[:5]

    # Exactness 2: a fresh rebuild in separate XDG dirs, compared document by document.
    fresh_env = {
        **env,
        "XDG_CACHE_HOME": str(base / "fresh-cache"),
        "XDG_STATE_HOME": str(base / "fresh-state"),
        "XDG_RUNTIME_DIR": str(base / "fresh-run"),
    }
    (base / "fresh-run").mkdir(mode=0o700, exist_ok=True)
    t = time.perf_counter()
    scale.run([BRAINIAC, "--vault", str(vault), "reindex", "--json"], fresh_env)
    res["fresh_reindex_s"] = time.perf_counter() - t
    tokens_file = base / "burst-tokens.json"
    tokens_file.write_text(json.dumps(prep["tokens"]), encoding="utf-8")
    fresh_dir = Locations.for_vault(vault, fresh_env).index_dir
    cmp = scale.last_json(
        scale.run([PY, "-c", _COMPARE, str(loc.index_dir), str(fresh_dir), str(tokens_file)], env)[
            "stdout"
        ]
    )
    res["compare"] = cmp
    # And the CLI the brief names, on one token (reads the daemon's index, read-only).
    rel0, tok0 = next(iter(prep["tokens"].items()))
    out = scale.run([BRAINIAC, "--vault", str(vault), "search", tok0, "--json"], env)["stdout"]
    res["cli_search_found"] = any(h.get("path") == rel0 for h in json.loads(out))
    res["exact"] = bool(
        converged is not None
        and not wrong
        and cmp["differing_keys"] == 0
        and cmp["daemon_docs"] == cmp["daemon_keys"] == cmp["fresh_docs"]
        and cmp["tokens_missing"] == 0
        and res["cli_search_found"]
    )
    log(f"  burst exact: {res['exact']} (manifest mismatches {len(wrong)}, compare {cmp})")
    return res


# -- one vault size -----------------------------------------------------------------------------


def bench_size(n: int, args: argparse.Namespace, work: Path, burst: bool) -> dict[str, Any]:
    base = work / f"n{n}"
    vault = base / "vault"
    floor_ix = base / "floor-index"
    drop = {"PYTHONDONTWRITEBYTECODE", "NOTIFY_SOCKET", "WATCHDOG_USEC", "BRAINIAC_VAULT"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(
        XDG_CACHE_HOME=str(base / "cache"),
        XDG_STATE_HOME=str(base / "state"),
        XDG_RUNTIME_DIR=str(base / "run"),
        PYTHONHASHSEED="0",
    )
    # The edit path alone: the memory lifecycle jobs (which catch up at the first start and
    # would rewrite the generated notes meanwhile) are off; tests/test_lifecycle.py covers them.
    env.update(
        BRAINIAC_JOBS_REFLECTION="0", BRAINIAC_JOBS_PROMOTION="0", BRAINIAC_JOBS_ORGANIZATION="0"
    )
    (base / "run").mkdir(parents=True, mode=0o700)
    res: dict[str, Any] = {"notes": n}

    t = time.perf_counter()
    res["vault"] = generate_vault.generate(vault, n, args.seed)
    res["vault"]["generate_s"] = time.perf_counter() - t
    log(f"[{n}] vault generated in {res['vault']['generate_s']:.1f} s")
    target = pick_target(vault)
    prep = None
    if burst:
        prep = prepare_burst(vault, BURST_FILES, {STM, target[0]}, args.seed)
        log(f"[{n}] git branches a/b ready in {prep['setup_s']:.1f} s")
    scale.run(
        [PY, "-c", "import brainiac.interfaces.cli, brainiac.runtime.service"], env
    )  # compile .pyc once

    # Cold start: the daemon builds the index itself.
    d = Daemon(vault, env, base, "cold", args.debug)
    try:
        ready = d.ready()
        rss = d.rss_mb()
        cold_split = d.rss_split_mb()
    finally:
        code = d.stop()
    res["cold"] = {
        "ready_s": ready,
        "rss_ready_mb": rss,
        "rss_ready_split_mb": cold_split,
        "peak_tree_rss_mb": d.peak_tree / 2**20,
        "exit": code,
        "reconcile": d.log_lines("reconcile ("),
    }
    log(
        f"[{n}] cold start: READY {ready:.1f} s, RSS {rss:.0f} MB, peak tree "
        f"{res['cold']['peak_tree_rss_mb']:.0f} MB, exit {code}"
    )

    # Warm start: the normal case.
    d = Daemon(vault, env, base, "warm", args.debug)
    try:
        ready = d.ready()
        res["warm"] = {
            "ready_s": ready,
            "rss_ready_mb": d.rss_mb(),
            "rss_ready_split_mb": d.rss_split_mb(),
        }
        log(f"[{n}] warm start: READY {ready:.2f} s, RSS {res['warm']['rss_ready_mb']:.0f} MB")
        time.sleep(7.0)  # the scheduled jobs' first runs are due 5 s after the start
        d.wait_quiet()
        ed = daemon_edits(d, vault, env, args.edits, args.seed, target)
        res["daemon_edits"] = ed
        res["warm"]["rss_after_edits_mb"] = d.rss_mb()
        res["warm"]["rss_after_edits_split_mb"] = d.rss_split_mb()
        # Idle: let the idle-time segment merge (30 s after the last change) happen, then sample.
        c0 = d.cpu_s()
        time.sleep(args.settle)
        c1 = prev = d.cpu_s()
        per_s = []  # CPU seconds used in each second of the idle window: a spike or a tick?
        end = time.monotonic() + args.idle
        while time.monotonic() < end:
            time.sleep(1.0)
            now_cpu = d.cpu_s()
            per_s.append(round(now_cpu - prev, 3))
            prev = now_cpu
        c2 = prev
        res["idle"] = {
            "settle_s": args.settle,
            "settle_cpu_s": c1 - c0,
            "idle_s": args.idle,
            "idle_cpu_s": c2 - c1,
            "cpu_s_per_min": (c2 - c1) * 60 / args.idle,
            "per_second": per_s,
            "rss_mb": d.rss_mb(),
            "rss_split_mb": d.rss_split_mb(),
            "threads": d.ps.num_threads(),
        }
        log(
            f"[{n}] idle: {res['idle']['cpu_s_per_min']:.4f} CPU-s/min "
            f"(settle {c1 - c0:.3f} s CPU), RSS {res['idle']['rss_mb']:.0f} MB"
        )
        if prep is not None:
            res["burst"] = run_burst(d, vault, env, base, prep, args.burst_timeout)
        res["warm"]["peak_tree_rss_mb"] = d.peak_tree / 2**20
    finally:
        res["warm_exit"] = d.stop()

    # The floor, with the daemon stopped.
    t = time.perf_counter()
    info = scale.last_json(
        scale.run([PY, "-c", _BUILD_FLOOR, str(vault), str(floor_ix)], env)["stdout"]
    )
    log(f"[{n}] floor index built in {time.perf_counter() - t:.1f} s ({info['docs']} docs)")
    res["floor_rows"] = floor_edits(
        vault,
        floor_ix,
        env,
        args.edits,
        args.seed,
        res["daemon_edits"]["ltm_note"],
        res["daemon_edits"]["ltm_fact"],
    )
    for series in ("stm", "ltm"):
        rows = [r for r in res["floor_rows"] if r["series"] == series]
        log(f"  floor {series}: {fmt_summary(summarise(rows))}")
    res["summary"] = summary_of(res)
    if not args.keep:
        shutil.rmtree(base, ignore_errors=True)
    return res


def summary_of(res: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for who, rows in (("daemon", res["daemon_edits"]["rows"]), ("floor", res["floor_rows"])):
        for series in ("stm", "ltm", "all"):
            sel = [r for r in rows if series in ("all", r["series"])]
            out[f"{who}_{series}"] = summarise(sel)
            for style, _ in SAVES:
                out[f"{who}_{series}_{style}"] = summarise([r for r in sel if r["style"] == style])
    out["floor_delivery"] = summarise(res["floor_rows"], "delivery")
    out["floor_whoosh"] = summarise(res["floor_rows"], "whoosh")
    return out


# -- report -------------------------------------------------------------------------------------


def table(results: list[dict[str, Any]]) -> str:
    def ms(s: dict[str, Any], k: str) -> str:
        return f"{s[k] * 1e3:.1f}" if s.get("n") else "-"

    lines = [
        "| notes | measurement | daemon | floor: watchdog + 1 Whoosh update | ratio |",
        "|---:|---|---:|---:|---:|",
    ]
    for r in results:
        n, s = f"{r['notes']:,}", r["summary"]
        for series, label in (
            ("stm", "short_term.md Facts line"),
            ("ltm", "long-term note fact (shown in WM)"),
            ("all", "both series"),
        ):
            for q in ("p50", "p95"):
                a, f = s[f"daemon_{series}"], s[f"floor_{series}"]
                ratio = f"{a[q] / f[q]:.1f}x" if a.get("n") and f.get("n") else ""
                miss = f", {a['missed']} missed" if a.get("missed") else ""
                lines.append(
                    f"| {n} | save → WM, {label}, {q} (ms) [n={a.get('n', 0)}{miss}] "
                    f"| {ms(a, q)} | {ms(f, q)} | {ratio} |"
                )
        for style, _ in SAVES:
            a, f = s[f"daemon_all_{style}"], s[f"floor_all_{style}"]
            lines.append(
                f"| {n} | … {style} saves only, p50 / p95 (ms) | {ms(a, 'p50')} / "
                f"{ms(a, 'p95')} | {ms(f, 'p50')} / {ms(f, 'p95')} | |"
            )
        fd, fw = s["floor_delivery"], s["floor_whoosh"]
        lines.append(
            f"| {n} | floor split: watchdog delivery / Whoosh update+commit, p50 (ms) "
            f"| | {ms(fd, 'p50')} / {ms(fw, 'p50')} | |"
        )
        c, w, i = r["cold"], r["warm"], r["idle"]
        lines += [
            f"| {n} | cold start (builds the index): spawn → READY (s) | {c['ready_s']:.1f} | | |",
            f"| {n} | cold start: RSS at READY / peak RSS of the tree (MB) | "
            f"{c['rss_ready_mb']:.0f} / {c['peak_tree_rss_mb']:.0f} | | |",
            f"| {n} | warm start (index present): spawn → READY (s) | {w['ready_s']:.2f} | | |",
            f"| {n} | warm start: RSS at READY / after the edits / after idle (MB) | "
            f"{w['rss_ready_mb']:.0f} / {w['rss_after_edits_mb']:.0f} / {i['rss_mb']:.0f} | | |",
            f"| {n} | … of which anonymous / file-backed (mmapped index) at idle (MB) | "
            f"{_split(i.get('rss_split_mb'))} | | |",
            f"| {n} | idle CPU over {i['idle_s']:.0f} s after {i['settle_s']:.0f} s settle "
            f"(CPU-s per minute) | {i['cpu_s_per_min']:.4f} | | |",
        ]
        b = r.get("burst")
        if b:
            conv = "not converged" if b["converge_s"] is None else f"{b['converge_s']:.1f}"
            lines += [
                f"| {n} | burst: `git checkout` of {b['files']:,} changed notes, checkout (s) "
                f"| {b['checkout_s']:.2f} | | |",
                f"| {n} | burst: checkout start → all {b['files']:,} indexed (s) | {conv} | | |",
                f"| {n} | burst: index equal to a fresh rebuild | "
                f"{'yes' if b['exact'] else 'NO'} | | |",
                f"| {n} | burst: daemon RSS after / peak tree RSS over the run (MB) | "
                f"{b['rss_after_mb']:.0f} / {b['peak_tree_rss_mb']:.0f} | | |",
            ]
    return "\n".join(lines)


def _split(split: dict[str, float] | None) -> str:
    if not split:
        return "-"
    return f"{split.get('RssAnon', 0):.0f} / {split.get('RssFile', 0):.0f}"


def targets(results: list[dict[str, Any]]) -> list[str]:
    out = []
    for r in results:
        s, n = r["summary"], f"{r['notes']:,}"
        for series in ("stm", "ltm", "all"):
            a = s[f"daemon_{series}"]
            if a.get("n"):
                ok = a["p95"] < 0.150 and not a["missed"]
                out.append(
                    f"{n} notes, {series}: save → WM p95 {a['p95'] * 1e3:.1f} ms "
                    f"({'met' if ok else 'MISSED'}, target < 150 ms at 10,000)"
                )
        rss = max(r["warm"]["rss_ready_mb"], r["warm"]["rss_after_edits_mb"], r["idle"]["rss_mb"])
        anon = r["idle"].get("rss_split_mb", {}).get("RssAnon")
        anon_s = f" ({anon:.0f} MB anonymous at idle)" if anon is not None else ""
        out.append(
            f"{n} notes: warm daemon RSS max {rss:.0f} MB{anon_s} "
            f"({'met' if rss < 200 else 'MISSED'}, target < 200 MB); cold (built the "
            f"index) RSS at READY {r['cold']['rss_ready_mb']:.0f} MB"
        )
        idle = r["idle"]["cpu_s_per_min"]
        out.append(
            f"{n} notes: idle {idle:.4f} CPU-s/min "
            f"({'met' if idle < 0.06 else 'MISSED'}, target ~0: < 0.1% of a core)"
        )
        b = r.get("burst")
        if b:
            conv = "never" if b["converge_s"] is None else f"in {b['converge_s']:.1f} s"
            out.append(f"{n} notes: burst of {b['files']:,} converged {conv}, exact: {b['exact']}")
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="brainiac daemon freshness benchmark (see docstring)")
    ap.add_argument("--sizes", default="1000,10000", help="comma-separated note counts")
    ap.add_argument("--edits", type=int, default=60, help="saves per series (two series)")
    ap.add_argument("--quick", action="store_true", help="200 notes, 10 edits, no burst")
    ap.add_argument("--no-burst", action="store_true", help="skip the git checkout burst")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--settle", type=float, default=50.0, help="seconds before the idle window")
    ap.add_argument("--idle", type=float, default=30.0, help="idle CPU window (s)")
    ap.add_argument("--burst-timeout", type=float, default=900.0)
    ap.add_argument("--debug", action="store_true", help="run the daemon with --debug")
    ap.add_argument("--workdir", type=Path, default=None, help="where to put the vaults")
    ap.add_argument("--keep", action="store_true", help="keep vaults, indexes and daemon logs")
    ap.add_argument("--out", type=Path, default=HERE / "results")
    args = ap.parse_args(argv)
    sizes = [200] if args.quick else [int(s) for s in args.sizes.split(",") if s.strip()]
    if args.quick:
        args.edits = min(args.edits, 10)
        args.settle, args.idle = min(args.settle, 5.0), min(args.idle, 10.0)
    burst_size = None if (args.quick or args.no_burst) else max(sizes)

    work = Path(tempfile.mkdtemp(prefix="brainiac-fresh-", dir=args.workdir))
    machine = {
        "nproc": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu": platform.processor() or platform.machine(),
        "mem_gb": round(psutil.virtual_memory().total / 2**30, 1),
        "whoosh": scale._version("whoosh3") or scale._version("whoosh"),
        "watchdog": scale._version("watchdog"),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "loadavg_start": os.getloadavg(),
        "git": scale._git("rev-parse", "--short", "HEAD"),
        "git_dirty": scale._git("status", "--short", "--", "daemon"),
    }
    log(f"machine: {machine}; work dir {work}")
    results = []
    try:
        for n in sizes:
            results.append(bench_size(n, args, work, burst=(n == burst_size)))
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    scale.report("freshness", machine, args, results, table(results), targets(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
