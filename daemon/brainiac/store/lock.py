"""Locks between brainiac's processes: one daemon per vault, and the flock primitives every other
lock (the job lock, the journal's, a backup's temp file) is made of.

One daemon per vault: an exclusive lock file outside the vault, in the runtime directory.

The lock is an `flock` on `<runtime>/daemon.lock`, released by the kernel when the process dies,
so a crashed daemon never blocks the next one. The file also holds the daemon's pid and start
time, which `brainiac status` reads. Advisory locks coordinate only brainiac's own processes.

The runtime directory is keyed by the vault's resolved path (locations.py), which a symlink
shares but a bind mount does not: one folder mounted at two paths would get two daemons writing
the same files. So the daemon also holds an `flock` on the vault folder itself, which belongs to
the folder (its device and inode), whatever path reached it; a process on another path finds the
daemon's own path through that lock (`folder_daemon_path`), and with it the daemon's runtime and
state folders.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from brainiac.core.errors import VaultError

LOCK_NAME = "daemon.lock"
_POLL_S = 0.05  # a lock held by another process is held for seconds at most (a job, an import)


def try_flock(fd: int, *, shared: bool = False) -> bool:
    """Take an flock on `fd` without waiting; False when another open file holds it."""
    try:
        fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def wait_flock(fd: int) -> None:
    """Take an exclusive flock on `fd`, waiting as long as another holds it."""
    fcntl.flock(fd, fcntl.LOCK_EX)


def unlock(fd: int) -> None:
    fcntl.flock(fd, fcntl.LOCK_UN)


@contextlib.contextmanager
def lock_file(path: Path, wait_s: float | None = None) -> Iterator[bool]:
    """An exclusive flock on `path` (created owner-only, its folder too) for a `with` block.
    Waits as long as it takes when `wait_s` is None; otherwise up to `wait_s`, and yields whether
    it is held. Closing the descriptor releases the lock, also when the process dies."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        if wait_s is None:
            wait_flock(fd)
        else:
            deadline = time.monotonic() + wait_s
            while not try_flock(fd):
                if time.monotonic() >= deadline:
                    yield False
                    return
                time.sleep(_POLL_S)
        yield True
    finally:
        os.close(fd)


@dataclass(frozen=True)
class Holder:
    pid: int
    started: float  # epoch seconds


class InstanceLock:
    """Held for the daemon's lifetime; `acquire` fails at once if another daemon holds it."""

    def __init__(self, runtime_dir: Path, vault: Path) -> None:
        self.path = runtime_dir / LOCK_NAME
        self.vault = vault
        self._fd: int | None = None
        self._folder_fd: int | None = None

    def acquire(self) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        if not try_flock(fd):
            os.close(fd)
            holder = holder_of(self.path.parent)
            who = f" (pid {holder.pid})" if holder else ""
            raise VaultError(
                f"{self.vault}: another brainiac daemon is already running on this vault{who}; "
                "stop it first (systemctl --user stop brainiac, or kill it)"
            ) from None
        try:
            self._folder_fd = _lock_folder(self.vault)
        except BaseException:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": time.time()}).encode())
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, 0)
            os.close(self._fd)  # closing drops the flock
            self._fd = None
        if self._folder_fd is not None:
            os.close(self._folder_fd)
            self._folder_fd = None

    def __enter__(self) -> InstanceLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _lock_folder(vault: Path) -> int:
    """An exclusive flock on the vault folder's own inode, held open; VaultError naming the
    other daemon when one holds it through another path (a bind mount)."""
    try:
        fd = os.open(vault, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as exc:
        raise VaultError(
            f"{vault}: the vault folder cannot be opened ({exc.strerror}); check that it exists "
            "and that your user may read it"
        ) from exc
    if not try_flock(fd):
        st = os.fstat(fd)
        os.close(fd)
        pid = _flock_holder(st.st_dev, st.st_ino)
        who = f" (pid {pid})" if pid else ""
        raise VaultError(
            f"{vault}: another brainiac daemon is already running on this folder{who}, reached "
            "by another path (a bind mount of it); stop it first (systemctl --user stop "
            "brainiac, or kill it)"
        ) from None
    return fd


def _flock_holder(dev: int, ino: int) -> int | None:
    """The pid that holds an flock on (dev, ino), from /proc/locks; None when it cannot tell."""
    want = f"{os.major(dev):02x}:{os.minor(dev):02x}:{ino}"
    with (
        contextlib.suppress(OSError, ValueError),
        open("/proc/locks", encoding="ascii", errors="replace") as f,
    ):
        for line in f:
            fields = line.split()
            # "1: FLOCK  ADVISORY  WRITE 1234 fd:00:5678 0 EOF"; "->" marks a waiter
            if len(fields) >= 6 and fields[1] == "FLOCK" and fields[5] == want:
                return int(fields[4])
    return None


def folder_daemon_path(vault: Path) -> Path | None:
    """The path by which the daemon holding the flock on the `vault` folder opened it, when that
    path reaches the same folder from here too; None when no daemon holds it, or when it cannot
    tell (no /proc, the daemon another user's). Reads /proc only: it takes no lock, so it never
    stands in the way of a daemon starting."""
    try:
        here = os.stat(vault)
    except OSError:
        return None
    pid = _flock_holder(here.st_dev, here.st_ino)
    if not pid or pid == os.getpid():
        return None
    fds = f"/proc/{pid}/fd"
    try:
        names = os.listdir(fds)
    except OSError:
        return None
    for name in names:
        link = os.path.join(fds, name)
        try:
            opened = os.stat(link)  # what the descriptor holds, whatever its path
            if (opened.st_dev, opened.st_ino) != (here.st_dev, here.st_ino):
                continue
            path = os.readlink(link)
            there = os.stat(path)  # the daemon's path, as seen from this mount namespace
        except OSError:
            continue
        if stat.S_ISDIR(there.st_mode) and (there.st_dev, there.st_ino) == (
            here.st_dev,
            here.st_ino,
        ):
            return Path(path)
    return None


def holder_of(runtime_dir: Path) -> Holder | None:
    """The running daemon's pid and start time, or None when no daemon holds the lock."""
    path = runtime_dir / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    try:
        if try_flock(fd, shared=True):
            unlock(fd)
            return None
        # held: a daemon is running; read who it is
        raw = os.read(fd, 4096)
    finally:
        os.close(fd)
    try:
        data = json.loads(raw.decode() or "{}")
        return Holder(int(data["pid"]), float(data["started"]))
    except (ValueError, KeyError, TypeError):
        return Holder(0, 0.0)  # held, but mid-write of its details
