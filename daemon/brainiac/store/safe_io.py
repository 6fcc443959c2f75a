"""Reading files with a fingerprint, and writing them by compare-and-swap.

A person's editor, a sync tool and brainiac may all write the same file. Every write here is read ->
compute -> swap-if-unchanged: the new text goes to a hidden temp file in the same directory
(fsynced, the old file's mode kept), the target is checked against what was read, and the temp file
is swapped in with Linux `renameat2(RENAME_EXCHANGE)`. What was swapped out is held open and
checked: if a save landed between the check and the swap, the person's version is given back (and a
save they made over ours in that instant is kept too), and the write raises `StaleWriteError`. It is
read once more after the folder's fsync, so a save that went into it after it left the path (an
editor's open found the file just before the swap) goes back over ours. Nothing that is not exactly
what we wrote or what we read is ever deleted. Where the exchange is unsupported it falls back to
`os.replace`, which has a window of microseconds instead of none (docs/foundations.md, section 2).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import hashlib
import os
import stat
import time
from collections.abc import Callable
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

    `expected=None` means "the file must not exist yet". Raises StaleWriteError when the file
    changed since it was read, or when someone saved it while we wrote: the file then holds
    their version, not ours (and, if they saved twice in that instant, a conflict copy beside it
    holds the other save). Returns the fingerprint of what we wrote. Creates missing parent
    directories (0700).
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
    if expected.size == 0:
        # Empty and written to all along: an in-place saver truncating it save after save, most
        # likely. Its next empty moment would pass the compare-and-swap as the one we read.
        raise StaleWriteError(
            f"{path}: empty and being written all the time; nothing was written, try again "
            "once it is saved"
        )


def _write_bytes(path: Path, data: bytes, expected: Fingerprint | None) -> Fingerprint:
    if expected is not None:
        _wait_until_quiet(path, expected)
    directory = path.parent
    directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    import tempfile  # here, not at the top: it loads shutil, random and more on every CLI call

    fd, tmp_name = tempfile.mkstemp(dir=directory, prefix=f".{path.name}.", suffix=TMP_SUFFIX)
    tmp = Path(tmp_name)
    swapped_out: _Displaced | None = None
    exchanged = False
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
            with contextlib.suppress(FileNotFoundError):
                os.fchmod(f.fileno(), stat.S_IMODE(os.stat(path).st_mode))  # keep the user's mode
            st = os.fstat(f.fileno())
        ours = Fingerprint(st.st_ino, st.st_size, st.st_mtime_ns, sha256_hex(data))
        current = current_fingerprint(path)
        if not _unchanged(current, expected):
            raise StaleWriteError(f"{path}: changed since it was read; nothing was written")
        if current is not None and not same_file_still(path, current):
            # The content check took a while (a read and a hash); one stat just before the
            # exchange makes a give-back (and the instant our version shows while it runs)
            # rarer. It narrows the window only: the read-back below closes it.
            raise StaleWriteError(f"{path}: changed since it was read; nothing was written")
        if current is not None and expected is not None and _rename_exchange(tmp, path):
            # From here `tmp` names what was the person's file: it is unlinked only once it is
            # known to be exactly what we read.
            exchanged = True
            swapped_out = _Displaced(tmp)
            if sha256_hex(swapped_out.data) != expected.sha256:
                _give_back(path, tmp, data)  # a save landed between the check and the exchange
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
        _written_here[str(path)] = ours.sha256
        # As late as we can look: a save that landed in the inode we replaced, after it left
        # the path, goes back over ours (compare-and-swap) or, failing that, beside it.
        if swapped_out is not None and swapped_out.written_since():
            theirs = swapped_out.settled()
            if theirs != swapped_out.data:
                _put_back_late_save(path, theirs, ours)
        return ours
    except BaseException:
        if not exchanged:
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
        raise
    finally:
        if swapped_out is not None:
            swapped_out.close()


def same_file_still(path: Path, seen: Fingerprint) -> bool:
    """Whether `path` is still the file `seen` describes (inode, size, modification time: a
    stat, no read); False when it is gone."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return False
    return (st.st_ino, st.st_size, st.st_mtime_ns) == (seen.ino, seen.size, seen.mtime_ns)


class _Displaced:
    """A file that an exchange took off its path, held open by descriptor.

    An editor that saves in place may have opened the path just before the exchange (its path
    lookup done, its O_TRUNC and write still to come): it then writes into this inode after it
    left the path, and once it is unlinked nobody would see that save again. The descriptor
    keeps the inode readable, so a look after our write can tell whether such a save came."""

    def __init__(self, path: Path) -> None:
        self.fd = _open_regular(path)
        try:
            self.data = self._read()
        except BaseException:
            self.close()
            raise

    def _read(self) -> bytes:
        chunks, offset = [], 0
        while chunk := os.pread(self.fd, 1 << 20, offset):
            chunks.append(chunk)
            offset += len(chunk)
        return b"".join(chunks)

    def written_since(self) -> bool:
        """Whether anyone wrote into it after we read it, or has it open to write. The bytes
        are compared, not the times: a write in the same clock tick as the exchange may leave
        ctime as it was. And an editor whose open waited (on the inode's lock, which the
        exchange and the unlink take, or for a CPU) may have it open and not have written yet,
        for milliseconds under load (docs/reliability.md, "The lost save")."""
        return self._read() != self.data or _open_for_writing(self.fd)

    def settled(self) -> bytes:
        """Its bytes once the late writer has finished: closed and quiet as `_wait_until_quiet`
        means it (at most _MAX_WAIT_S)."""
        end = time.monotonic() + _MAX_WAIT_S
        while time.monotonic() < end:
            st = os.fstat(self.fd)
            quiet = EMPTY_QUIET_S if st.st_size == 0 else QUIET_S
            age = time.time() - st.st_ctime
            if age >= quiet and not _open_for_writing(self.fd):
                break
            time.sleep(min(max(quiet - age, 0.005), 0.05))
        return self._read()

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1


_F_SETSIG = 10  # fcntl.h; Python's fcntl module does not name it


def _open_for_writing(fd: int) -> bool:
    """Whether any descriptor, in any process, has this file open for writing.

    Linux answers it one way: a read lease (F_SETLEASE) is refused with EAGAIN while one does;
    given, it is released at once. An opener that comes in that instant would be held until the
    release and its breaking the lease signals the holder, so the signal is set to SIGURG, which
    is ignored unless a program asks for it (SIGIO, the default, would end the process). Where
    leases cannot be had (a file someone else owns, a file system without them) it says no:
    the byte comparison is then all there is."""
    import fcntl
    import signal

    try:
        fcntl.fcntl(fd, _F_SETSIG, signal.SIGURG)
        fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK)
    except OSError as exc:
        return exc.errno == errno.EAGAIN
    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_UNLCK)
    return False


def being_written(path: Path) -> bool:
    """Whether some process has `path` open for writing now: an in-place save (nano's, Obsidian
    Sync's: open with O_TRUNC, then write) under way, until whose close the file may read empty or
    cut short. No where leases cannot tell (`_open_for_writing`) or `path` is no regular file."""
    try:
        fd = _open_regular(path)
    except OSError:  # gone, or not a regular file (NotRegularFileError is an OSError)
        return False
    try:
        return _open_for_writing(fd)
    finally:
        os.close(fd)


def _give_back(path: Path, tmp: Path, ours: bytes) -> None:
    """Our exchange took a person's save off `path` (it landed between our check and the
    exchange, and now sits at `tmp`): put it back, deleting nothing that is not ours.

    Our version stood at the path in between, and the person may have read it and saved over
    it, in place or by rename. So what this second exchange takes off the path is unlinked only
    if it is exactly what we wrote; otherwise it is their newest save, and it goes back to the
    path while the save we took off first is kept beside it as a conflict copy. (A bare swap
    back here would lose a save made in between: docs/reliability.md.)"""
    try:
        _rename_exchange(tmp, path)
    except FileNotFoundError:  # the path was deleted meanwhile: theirs goes back all the same
        if not rename_noreplace(tmp, path):
            _keep_as_conflict_copy(tmp, path)
        return
    came_out = _Displaced(tmp)
    try:
        if came_out.data != ours:
            _rename_exchange(tmp, path)  # their newest save back to the path
            _keep_as_conflict_copy(tmp, path)
            return
        tmp.unlink()
        fsync_dir(path.parent)
        if came_out.written_since():  # they had opened ours in place: their save is kept too
            theirs = came_out.settled()
            if theirs != ours:
                write_conflict_copy(path, theirs)
    finally:
        came_out.close()


def _put_back_late_save(path: Path, theirs: bytes, ours: Fingerprint) -> None:
    """A person's save went into the inode our write replaced (see `_Displaced`): it goes back
    over ours by compare-and-swap, or, if the file changed again meanwhile, beside it."""
    try:
        _write_bytes(path, theirs, ours)
    except StaleWriteError:
        write_conflict_copy(path, theirs)
    raise StaleWriteError(f"{path}: saved by someone else as we replaced it; kept theirs")


def conflict_copy_path(path: Path, n: int = 1) -> Path:
    """Where a save that cannot be at `path` is kept: beside it, named the way Obsidian Sync
    names its conflict copies, so the vault treats it as one (listed by `brainiac status`,
    never indexed or written)."""
    stamp = time.strftime("%Y-%m-%d %H%M%S")
    extra = f" {n}" if n > 1 else ""
    return path.with_name(f"{path.stem} (Conflicted copy brainiac {stamp}{extra}){path.suffix}")


def _keep_as_conflict_copy(tmp: Path, path: Path) -> None:
    """Rename, not copy: a late in-place write into it then lands in the copy, seen."""
    _place_conflict_copy(path, lambda target: rename_noreplace(tmp, target), f"kept one as {tmp}")


def write_conflict_copy(path: Path, data: bytes) -> Path:
    def write(target: Path) -> bool:
        try:
            write_bytes(target, data, None)
        except StaleWriteError:
            return False
        return True

    return _place_conflict_copy(path, write, "move some away")


def _place_conflict_copy(path: Path, place: Callable[[Path], bool], otherwise: str) -> Path:
    """The first free conflict-copy name beside `path` that `place` puts the copy at."""
    for n in range(1, 100):
        target = conflict_copy_path(path, n)
        if place(target):
            return target
    raise StaleWriteError(f"{path}: too many conflict copies beside it; {otherwise}")


def replace_file(path: Path, data: bytes, durable: bool = True) -> None:
    """Write a file brainiac owns outright (state outside the vault): temp file, fsync, rename.

    No compare-and-swap: nobody else edits these files, and the rename means a reader sees the
    old or the new content, never a torn one. `durable=False` skips the fsync, for bookkeeping
    whose loss in a power cut costs nothing (its reader takes a missing or empty file as none).
    StorageError as for `write_bytes`.
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}{TMP_SUFFIX}")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "wb") as f:
            f.write(data)
            if durable:
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
