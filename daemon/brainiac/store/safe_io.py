"""Reading files with a fingerprint, and writing them by compare-and-swap.

A person's editor, a sync tool and brainiac may all write the same file. Every write here is
read -> compute -> swap-if-unchanged: the new text goes to a hidden temp file in the same directory
(fsynced, the old file's mode kept), the target is checked against what was read, and the temp file
is swapped in with Linux `renameat2(RENAME_EXCHANGE)`. What was swapped out is checked once more: if
a save landed between the check and the swap, the person's version is swapped back and the write
raises `StaleWriteError`. Where the exchange is unsupported it falls back to `os.replace`, which has
a window of microseconds instead of none. See docs/foundations.md, section 2.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainiac.core.errors import (
    NotRegularFileError,
    StaleWriteError,
    StorageError,
    is_storage_problem,
)

# Our temp names: ".<name>.<random>.brainiac-tmp". They start with a dot, so the watcher and the
# scanner ignore them, and the suffix lets a start-up sweep find the ones a crash left behind.
TMP_SUFFIX = ".brainiac-tmp"


@dataclass(frozen=True)
class Fingerprint:
    """What a file was when we read it: enough to tell any later change, including a rename-save."""

    ino: int
    size: int
    mtime_ns: int
    sha256: str


StatKey = tuple[int, int, int, int]


def stat_key(st: os.stat_result) -> StatKey:
    """What says a file is still the one parsed before: its inode, size, modification and change
    times. The caches of parsed files (the short-term document, the Core Identity, the notes a
    context shows, the daemon's settings) are kept while it holds."""
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def read_bytes(path: Path) -> tuple[bytes, Fingerprint]:
    """The file's bytes and a fingerprint of the same inode (stat of the open descriptor).

    Only a regular file is read: anything else raises NotRegularFileError, unopened or closed
    unread."""
    for _attempt in range(5):
        with os.fdopen(_open_regular(path), "rb") as f:
            before = os.fstat(f.fileno())
            data = f.read()
            after = os.fstat(f.fileno())
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns) and len(
            data
        ) == after.st_size:
            return data, Fingerprint(
                after.st_ino, after.st_size, after.st_mtime_ns, sha256_hex(data)
            )
        time.sleep(0.005)  # an in-place writer is mid-write; read again
    raise StaleWriteError(f"{path}: kept changing while being read; try again when it is saved")


def _file_kind(mode: int) -> str:
    """What a stat's mode says the path is, as a message names it."""
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a regular file" if stat.S_ISREG(mode) else "a special file"


def _open_regular(path: Path) -> int:
    """A read-only descriptor of `path`, which must be a regular file.

    A scan's lstat cannot settle it: a FIFO may take the file's place before the open. So the
    open itself must not wait (O_NONBLOCK: a FIFO without a writer opens at once instead of
    blocking until one comes), and the open descriptor's fstat decides. A socket cannot be
    opened at all (ENXIO); a stat then names it. O_NONBLOCK changes nothing for a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno not in (errno.ENXIO, errno.EOPNOTSUPP, errno.ENODEV):
            raise
        try:
            mode = os.stat(path).st_mode
        except OSError:
            raise exc from None
        if stat.S_ISREG(mode):
            raise
        raise NotRegularFileError(path, _file_kind(mode)) from exc
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise NotRegularFileError(path, _file_kind(mode))
    return fd


def current_fingerprint(path: Path) -> Fingerprint | None:
    try:
        return read_bytes(path)[1]
    except FileNotFoundError:
        return None


@functools.cache
def _renameat2() -> Any:
    """libc's renameat2, or None. Looked up on first use, not at import: find_library runs
    ldconfig, a cost every `brainiac` call would pay (most never rename)."""
    import ctypes
    import ctypes.util

    return getattr(ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True), "renameat2", None)


def _errno() -> int:
    import ctypes

    return ctypes.get_errno()


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_RENAME_NOREPLACE = 1


def _rename_exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths; False where the kernel or filesystem cannot."""
    fn = _renameat2()
    if fn is None:
        return False
    if fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = _errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def rename_noreplace(src: Path, dst: Path) -> bool:
    """Move `src` to `dst` in one step, never over an existing file; False if `dst` exists.

    renameat2(RENAME_NOREPLACE) where the filesystem has it; elsewhere link + unlink, which can
    leave both names after a crash in between (the caller's re-run then finds and finishes it).
    """
    fn = _renameat2()
    if fn is not None:
        if fn(_AT_FDCWD, os.fsencode(src), _AT_FDCWD, os.fsencode(dst), _RENAME_NOREPLACE) == 0:
            fsync_dir(dst.parent)
            return True
        err = _errno()
        if err == errno.EEXIST:
            return False
        if err not in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
            raise OSError(err, os.strerror(err), str(src))
    try:
        os.link(src, dst)
    except FileExistsError:
        return False
    os.unlink(src)
    fsync_dir(dst.parent)
    return True


def fsync_dir(directory: Path) -> None:
    """Make the names in `directory` (a rename, a new file) survive a crash."""
    fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _unchanged(current: Fingerprint | None, expected: Fingerprint | None) -> bool:
    if current is None or expected is None:
        return current is None and expected is None
    return (current.sha256, current.ino, current.size) == (
        expected.sha256,
        expected.ino,
        expected.size,
    )


def write_bytes(path: Path, data: bytes, expected: Fingerprint | None) -> Fingerprint:
    """Replace `path` with `data` if it is still what `expected` describes.

    `expected=None` means "the file must not exist yet". Raises StaleWriteError, having written
    nothing, when the file changed since it was read. Creates missing parent directories (0700).
    A full disk, a read-only file system or a refused permission raises StorageError (one line
    with the fix); the file is then as it was and no temp file is left.
    """
    try:
        return _write_bytes(path, data, expected)
    except OSError as exc:
        if not is_storage_problem(exc) or isinstance(exc, StorageError):
            raise
        raise StorageError(path, exc) from exc


# An editor that saves in place (nano, Obsidian Sync) opens the file with O_TRUNC and then writes,
# and a large write lands a page at a time: a read in between sees an empty or cut-short file that
# no fingerprint can tell from a complete one. A change computed from it and swapped in while the
# editor is stalled would take the file from under the editor's open descriptor, and its write
# would land in the swapped-out inode, lost. So a write waits until the file it read has been
# quiet (its ctime, which every write and utime moves, is QUIET_S old; an empty file, the most
# likely moment of all, EMPTY_QUIET_S), then the compare-and-swap sees any write that came.
# Files this process wrote itself (renamed in whole) need no wait.
QUIET_S = 0.1
EMPTY_QUIET_S = 2.0
_MAX_WAIT_S = 5.0
_written_here: dict[str, str] = {}  # path -> sha256 of what this process last swapped in


def _wait_until_quiet(path: Path, expected: Fingerprint) -> None:
    if _written_here.get(str(path)) == expected.sha256:
        return
    quiet = EMPTY_QUIET_S if expected.size == 0 else QUIET_S
    end = time.monotonic() + _MAX_WAIT_S
    while time.monotonic() < end:
        try:
            st = path.stat()
        except FileNotFoundError:
            return  # the compare-and-swap reports it
        if (st.st_ino, st.st_size) != (expected.ino, expected.size):
            return  # changed: the compare-and-swap reports it
        age = time.time() - st.st_ctime
        if age >= quiet:
            return
        time.sleep(min(quiet - age, 0.05))


def _write_bytes(path: Path, data: bytes, expected: Fingerprint | None) -> Fingerprint:
    if expected is not None:
        _wait_until_quiet(path, expected)
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    import tempfile  # here, not at the top: it loads shutil, random and more on every CLI call

    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(f.fileno(), stat.S_IMODE(os.stat(path).st_mode))  # keep the user's mode
        current = current_fingerprint(path)
        if not _unchanged(current, expected):
            raise StaleWriteError(f"{path}: changed since it was read; nothing was written")
        if current is not None and _rename_exchange(tmp, path):
            swapped_out, _ = read_bytes(tmp)
            if expected is None or sha256_hex(swapped_out) != expected.sha256:
                _rename_exchange(tmp, path)  # a save landed in the gap: give it back
                raise StaleWriteError(
                    f"{path}: saved by someone else during our write; kept theirs"
                )
            tmp.unlink()
        elif current is None:
            # Creating: link() fails if someone created the file meanwhile, unlike rename().
            try:
                os.link(tmp, path)
            except FileExistsError:
                raise StaleWriteError(
                    f"{path}: created by someone else meanwhile; kept theirs"
                ) from None
            tmp.unlink()
        else:
            os.replace(tmp, path)
        fsync_dir(directory)
        _written_here[str(path)] = sha256_hex(data)
        return read_bytes(path)[1]
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def replace_file(path: Path, data: bytes) -> None:
    """Write a file brainiac owns outright (state outside the vault): temp file, fsync, rename.

    No compare-and-swap: nobody else edits these files, and the rename means a reader sees the
    old or the new content, never a torn one. StorageError as for `write_bytes`.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as exc:
        with contextlib.suppress(OSError):  # on a read-only file system even this fails
            tmp.unlink()
        if is_storage_problem(exc):
            raise StorageError(path, exc) from exc
        raise


def remove_stale_temps(
    root: Path, older_than_s: float = 300.0, now: float | None = None
) -> list[Path]:
    """Delete our temp files that a crash left behind (only ours, only old ones)."""
    now = time.time() if now is None else now
    removed = []
    for dirpath, _dirnames, filenames in os.walk(root):
        for name in filenames:
            if name.startswith(".") and name.endswith(TMP_SUFFIX):
                p = Path(dirpath, name)
                with contextlib.suppress(FileNotFoundError):
                    if now - p.lstat().st_mtime >= older_than_s:
                        p.unlink()
                        removed.append(p)
    return removed


def make_private_dirs(path: Path) -> None:
    """mkdir -p, each folder it creates 0700 (Path.mkdir gives the parents the default mode)."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
