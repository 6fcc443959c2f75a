"""What the tests of the daemon and of files changing under it share: waiting for a condition,
the daemon as a real `brainiac run` subprocess (systemd's notification socket stood in for), the
saves of editors, and the CLI calls they check the daemon's work with."""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from conftest import run_cli

STM = "memory/short_term.md"

# How long a wait for a daemon, a file or a reply may take before the test calls it a hang: the
# condition decides, this only bounds it. Four workers (pyproject.toml) and their daemons share
# two cores, where a daemon's start on 5,000 notes can take tens of seconds.
DEADLINE_S = 60.0


def wait_for(condition: Callable[[], bool], what: str, deadline_s: float = DEADLINE_S) -> None:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.02)  # polling a file: the condition, not the sleep, decides
    raise AssertionError(f"timed out waiting for {what}")


class Notifications:
    """A datagram socket standing in for systemd's NOTIFY_SOCKET, drained by a thread as systemd
    would (an unread socket fills after ten datagrams)."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(str(path))
        self.sock.settimeout(0.1)
        self.path = path
        self.seen: list[str] = []
        self._cond = threading.Condition()
        self._closed = False
        self._thread = threading.Thread(target=self._drain, name="notify-drain", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        while not self._closed:
            try:
                message = self.sock.recv(4096).decode("utf-8")
            except (TimeoutError, OSError):
                continue
            with self._cond:
                self.seen.append(message)
                self._cond.notify_all()

    def expect(self, assignment: str, deadline_s: float = DEADLINE_S) -> None:
        with self._cond:
            ok = self._cond.wait_for(
                lambda: any(assignment in m.split("\n") for m in self.seen), timeout=deadline_s
            )
        assert ok, f"no {assignment} in {self.seen}"

    def clear(self) -> None:
        with self._cond:
            self.seen.clear()

    def close(self) -> None:
        self._closed = True
        self._thread.join(timeout=5)
        self.sock.close()


def vim_save(path: Path, text: str) -> None:
    """vim's default save: probe file, rename the note away as a backup, write a new inode."""
    swap = path.with_name(f".{path.name}.swp")
    swap.write_text("swap")
    probe = path.parent / "4913"
    probe.write_text("")
    probe.unlink()
    backup = path.with_name(path.name + "~")
    os.rename(path, backup)
    path.write_text(text)
    backup.unlink()
    swap.unlink()


def nano_save(path: Path, text: str) -> None:
    """nano (and Obsidian's sync client): truncate and rewrite the same inode."""
    with open(path, "r+", encoding="utf-8") as f:
        f.truncate(0)
        f.write(text)


@contextlib.contextmanager
def running_daemon(
    vault: Path, ready: Notifications | None = None
) -> Iterator[subprocess.Popen[str]]:
    """`brainiac run` on `vault` for the block, then stopped as systemd would (SIGTERM); with
    `ready`, the block starts once it said READY=1 (its watcher is running)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        env={**os.environ, "NOTIFY_SOCKET": str(ready.path)} if ready else None,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if ready is not None:
            ready.expect("READY=1")
        yield proc
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
        proc.communicate(timeout=10)


# Jobs the daemon would otherwise run a few seconds after its start (a first run is "missed").
JOBS_OFF = {
    f"BRAINIAC_JOBS_{name}": "0"
    for name in ("REFLECTION", "PROMOTION", "ORGANIZATION", "BACKUP", "INBOX")
}


@contextlib.contextmanager
def run_daemon(
    vault: Path, log: Path, env: dict[str, str] | None = None
) -> Iterator[subprocess.Popen[str]]:
    """`brainiac run` on `vault` until the block ends, its log (stderr) in `log`; READY awaited."""
    notes = Notifications(log.with_name(f"{log.stem}.notify.sock"))
    with open(log, "w", encoding="utf-8") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
            env={**os.environ, **(env or {}), "NOTIFY_SOCKET": str(notes.path)},
            stdout=subprocess.DEVNULL,
            stderr=err,
            text=True,
        )
    try:
        try:
            notes.expect("READY=1")
        except AssertionError:
            raise AssertionError(f"the daemon did not start:\n{log.read_text()}") from None
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        notes.close()


def stop(proc: subprocess.Popen[Any]) -> None:
    """Stop the daemon as systemd does; it must exit cleanly."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0


def stop_or_kill(proc: subprocess.Popen[Any], *then: Callable[[], object]) -> None:
    """`stop`, and the daemon killed should it not exit in time (the test fails either way);
    then each of `then` called (closing the daemon's log, its notification socket)."""
    try:
        stop(proc)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for close in then:
            close()


def remember(vault: Path, text: str) -> str:
    """An event through the CLI (beside the daemon, it writes the file); returns its id."""
    out = run_cli("--vault", str(vault), "remember", text, "--json", check=True).stdout
    event_id = json.loads(out)["id"]
    assert isinstance(event_id, str)
    return event_id


def found(vault: Path, query: str, rel: str) -> Callable[[], bool]:
    def check() -> bool:
        out = run_cli("--vault", str(vault), "search", query, "--json", check=True).stdout
        return any(hit["path"] == rel for hit in json.loads(out))

    return check


def recover_events(vault: Path) -> str:
    """`brainiac jobs run promotion`, which first puts back journalled events missing from
    memory/ (as the daemon's recovery job does); returns its report and its log."""
    now = dt.datetime.now().isoformat(timespec="seconds")
    done = run_cli("--vault", str(vault), "jobs", "run", "promotion", "--now", now, check=True)
    return done.stdout + done.stderr


STEPS_DONE = "2026-11-01T10:00"  # an hour after the first of conftest.remember_steps' events


def run_all_jobs(
    vault: Path, *options: str, check: bool = False
) -> subprocess.CompletedProcess[str]:
    """`brainiac jobs run all` at STEPS_DONE, in this process (its output and files are what is
    checked)."""
    args = ("--vault", str(vault), "jobs", "run", "all", "--now", STEPS_DONE, *options)
    return run_cli(*args, check=check, in_process=True)


def say_turns(memory: Any, turns: list[tuple[str, str]], session: str, start: dt.datetime) -> None:
    """A conversation's turns remembered a minute apart from `start`, each with its speaker."""
    for i, (role, text) in enumerate(turns):
        memory.remember(text, role=role, session=session, at=start + dt.timedelta(minutes=i))


def sourced_notes(vault: Path) -> list[Any]:
    """Every long-term note of the vault that holds events, parsed (`ltm.LongTermNote`)."""
    from brainiac.formats import ltm
    from brainiac.store.vault import LONG_TERM_DIR

    parsed = (
        ltm.parse(path.read_text(encoding="utf-8"), path.name)
        for path in sorted((vault / LONG_TERM_DIR).glob("*.md"))
    )
    return [note for note in parsed if note.sources]
