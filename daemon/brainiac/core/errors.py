"""Every error brainiac raises on purpose.

    BrainiacError                 anything the CLI reports as one line and a non-zero exit
    ├── ConfigError               a setting is missing, unreadable or out of range
    ├── VaultError                the vault path is missing, not a vault, or a path escapes it
    │   ├── StaleWriteError       a file changed between our read and our write; nothing written
    │   └── NotRegularFileError   a path to read is a FIFO, socket, device or folder; not opened
    │                             (also an OSError, so `except OSError` still catches it)
    ├── StorageError              a file cannot be written: disk full, read-only, no permission
    │                             (also an OSError, so `except OSError` still catches it)
    ├── NoteParseError            a note cannot be read (bad YAML, not UTF-8, too big, binary)
    ├── TooLargeError             a write would take a file past [vault] max_note_bytes; nothing
    │                             written (brainiac never writes a note it could not read back)
    ├── BudgetError               a token budget that cannot mean anything (zero, negative, absurd)
    ├── ImportFormatError         a chat export is not a known format or is malformed; nothing read
    ├── FutureTimeError           a time a person gave is in the future (a typo); nothing written
    └── SearchError               the index cannot answer (after a rebuild attempt failed)
        └── IndexLockedError      another writer held the index's write lock past the wait

Messages name the file, the problem and the fix, in that order, so that a person reading one line
in a terminal or the journal knows what to do.
"""

from __future__ import annotations

import errno
import os
from typing import TypeGuard


class BrainiacError(Exception):
    """Base of every error the user should see as a single line."""


class ConfigError(BrainiacError):
    """A configuration value is missing, malformed or out of range."""


class VaultError(BrainiacError):
    """The vault cannot be used as asked (missing, not a directory, path outside it)."""


class StaleWriteError(VaultError):
    """The file changed since it was read; the write was abandoned and the file left as it is."""


class NotRegularFileError(VaultError, OSError):
    """A file to be read is not a regular file: a FIFO, a socket, a device or a folder.

    Opening a FIFO for reading waits for a writer, for ever, and a socket cannot be opened at
    all, so such a path is refused, never read. It is also an OSError (errno EINVAL), so code
    that skips unreadable files with `except OSError` skips it too."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        self.kind = kind
        self.message = (
            f"{path}: is not a regular file but {kind}; brainiac neither reads nor replaces "
            "it; remove it or move it out of the vault"
        )
        super().__init__(errno.EINVAL, f"not a regular file but {kind}", os.fspath(path))

    def __str__(self) -> str:
        return self.message


# What the system could not give us, and what the person can do about it. Anything else (a missing
# folder, a bug) stays a plain OSError with its traceback.
_STORAGE_PROBLEMS = {
    errno.ENOSPC: ("the file system is full", "free some space there (`df -h` shows how much)"),
    errno.EDQUOT: ("the disk quota is used up", "free some space or ask for a larger quota"),
    errno.EFBIG: (
        "the file size limit is reached",
        "raise it (`ulimit -f unlimited`, or LimitFSIZE= in the service unit)",
    ),
    errno.EROFS: (
        "the file system is mounted read-only",
        "remount it read-write (`findmnt -T` on the path shows its mount point)",
    ),
    errno.EACCES: ("permission is denied", "give your user write access to it and its folder"),
    errno.EPERM: ("the operation is not permitted", "check its permissions and attributes"),
}


def is_storage_problem(exc: BaseException) -> TypeGuard[OSError]:
    """Whether `exc` is a write refused for lack of room or rights (StorageError tells how)."""
    return isinstance(exc, OSError) and exc.errno in _STORAGE_PROBLEMS


class StorageError(BrainiacError, OSError):
    """A file could not be written: the disk is full, the file system read-only, no permission.

    One line naming the path, the problem and the fix, and what became of the file (by default:
    nothing, as every write goes through a temp file and a rename). It is also an OSError with the
    original errno, so code that handles OSError keeps working."""

    def __init__(
        self, path: str | os.PathLike[str], cause: OSError, outcome: str = "it was left as it was"
    ) -> None:
        problem, fix = _STORAGE_PROBLEMS.get(
            cause.errno or 0, ("it cannot be written", "check the disk and the folder")
        )
        detail = cause.strerror or str(cause)
        self.problem = problem
        self.message = f"{path}: cannot be written, {problem} ({detail}); {fix}; {outcome}"
        super().__init__(cause.errno, detail, os.fspath(path))

    def __str__(self) -> str:
        return self.message


class NoteParseError(BrainiacError):
    """A note could not be parsed; it is skipped and left untouched."""

    def __init__(self, path: str, problem: str, line: int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.line = line
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class TooLargeError(BrainiacError):
    """A write would make a vault file larger than `[vault] max_note_bytes`, or an event larger
    than one event may be; nothing was written. Past the limit a file can no longer be read, so
    writing it would lock brainiac out of its own file (every later `remember` failed)."""

    def __init__(self, path: str, problem: str, fix: str) -> None:
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}; {fix}; nothing was written")


class BudgetError(BrainiacError):
    """A token budget that cannot be honoured as given."""


class ImportFormatError(BrainiacError):
    """A chat export cannot be read: not a format brainiac knows, or malformed. The whole file is
    rejected; nothing of it was read."""

    def __init__(self, path: str, where: str | None, problem: str, expected: str) -> None:
        self.path = path
        self.where = where
        self.problem = problem
        self.expected = expected
        place = f"{path}, {where}" if where is not None else path
        super().__init__(f"{place}: {problem}; expected {expected}")


class FutureTimeError(BrainiacError):
    """A time typed by a person lies in the future (`remember --at 2062-...` for 2026): refused,
    as nothing can have happened then and such an event would pose as the latest for years."""

    def __init__(self, path: str, option: str, value: str, now: str) -> None:
        super().__init__(
            f"{path}: {option} {value} is in the future (it is {now} now); nothing was written; "
            "give the time it happened, or leave out the option for now"
        )


class SearchError(BrainiacError):
    """The index could not answer a query."""


class IndexLockedError(SearchError):
    """Another process held the index's write lock for longer than a writer waits; nothing was
    written, and the files stay to be indexed by the next update."""
