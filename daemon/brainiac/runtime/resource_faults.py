"""Resource faults of the running daemon: what it cannot write just now, and trying again.

Resource faults never stop the daemon (docs/reliability.md). A write refused by the system (a full
disk, a read-only vault, no permission) is logged once as one line with the fix, and tried again:
every second while the file system still says full or read-only (a statvfs), otherwise with a
back-off. Meanwhile search and context keep answering from the index, and the memory jobs that
write the vault wait (`postponed`, run once it can be written). An index that cannot be read or
updated for any other reason (deleted, damaged) is rebuilt from the vault.

Three things can be in trouble: "vault", "index" and "state" (brainiac's own records). This
module keeps them and decides what a failure means; the daemon (service.py) hands it the actions
it retries with (a reconcile, the working memory, the status file, a job). Not faults.py, which
holds the points where a test kills the process.
"""

from __future__ import annotations

import contextlib
import logging
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core.errors import (
    IndexLockedError,
    SearchError,
    StorageError,
    VaultError,
    is_storage_problem,
)

if TYPE_CHECKING:
    from brainiac.api.memory import Memory

log = logging.getLogger(__name__)

# A write the system refused: looked at again every second while statvfs still says read-only or
# full (no write is tried), otherwise tried again after 1, 2, 4 ... 30 s.
_RETRY_S = 1.0
_RETRY_MAX_S = 30.0
_READ_ONLY = "the file system is mounted read-only"


@dataclass
class Trouble:
    """Something the daemon cannot write just now (the vault, the index or its state)."""

    message: str  # the one line logged: file, problem, fix
    problem: str  # short, for STATUS= and for telling a new problem from the same one
    probe: Path  # where statvfs says whether trying again can succeed
    retry_at: float
    delay: float = _RETRY_S


def _blocked(path: Path) -> bool:
    """Whether the file system holding `path` is read-only or has no free block (no write can
    succeed; a quota or a permission does not show here, so those are simply tried again)."""
    try:
        st = os.statvfs(path)
    except OSError:
        return False
    free = st.f_bfree if os.geteuid() == 0 else st.f_bavail
    return bool(st.f_flag & os.ST_RDONLY) or free == 0


class ResourceFaults:
    """What the daemon cannot write just now ("vault", "index", "state"), and when to try again.

    The callables are the daemon's: a full reconcile (`why` names the occasion), the working
    memory written, the status file written at once (True if it was), a job queued, and "a fault
    began or ended" (the status file should say so at once).
    """

    def __init__(
        self,
        memory: Memory,
        full_reconcile: Callable[[str], None],
        write_working_memory: Callable[[], None],
        write_status_now: Callable[[], bool],
        submit_job: Callable[[str], None],
        changed: Callable[[], None],
    ) -> None:
        self.memory = memory
        self._full_reconcile = full_reconcile
        self._write_working_memory = write_working_memory
        self._write_status_now = write_status_now
        self._submit_job = submit_job
        self._changed = changed
        self.troubles: dict[str, Trouble] = {}  # "vault", "index" or "state"
        # The working memory could not be written: write it again.
        self.working_memory_pending = False
        self.postponed: list[str] = []  # vault jobs that waited for the vault to be writable
        self._rebuilding = False

    def vault_read_only(self) -> bool:
        try:
            return bool(os.statvfs(self.memory.vault.root).f_flag & os.ST_RDONLY)
        except OSError:
            return False

    def read_only_begins(self) -> None:
        self.working_memory_pending = True
        root = self.memory.vault.root
        self.trouble_begins(
            "vault",
            _READ_ONLY,
            f"{root}: the vault is on a read-only file system, so brainiac runs read-only: search "
            "and context answer from the index, the working memory and the memory jobs wait, and "
            f"`remember` fails, until it is writable; remount it read-write (`findmnt -T {root}` "
            "shows the mount point)",
            root,
        )

    def trouble_begins(self, what: str, problem: str, message: str, probe: Path) -> None:
        """A write the system refused: logged once (not at every retry), then tried again."""
        known = self.troubles.get(what)
        if known is not None and known.problem == problem:
            return
        log.warning("%s", message)
        self.troubles[what] = Trouble(message, problem, probe, time.monotonic() + _RETRY_S)
        self._changed()

    def trouble_ends(self, what: str, name: str) -> None:
        if self.troubles.pop(what, None) is None:
            return
        log.info("%s can be written again; back to normal", name)
        self._changed()
        if self.postponed and not self.jobs_must_wait():
            log.info("running the jobs that waited: %s", ", ".join(self.postponed))
            for job in self.postponed:
                self._submit_job(job)
            self.postponed.clear()

    def jobs_must_wait(self) -> bool:
        """A memory job writes vault files and its plans and records in the state folder."""
        return "vault" in self.troubles or "state" in self.troubles

    def state_failed(self, exc: OSError, path: Path) -> None:
        if not is_storage_problem(exc):
            log.warning("could not write %s (%s); will retry", path, exc)
            return
        error = exc if isinstance(exc, StorageError) else StorageError(path, exc)
        self.trouble_begins(
            "state",
            error.problem,
            f"{error}; brainiac's own records and the memory jobs wait until it can",
            self.memory.locations.state,
        )

    def index_failed(self, exc: BaseException, why: str) -> None:
        """The index could not be updated or read: wait for room, or rebuild it from the vault."""
        index_dir = self.memory.locations.index_dir
        if is_storage_problem(exc):
            error = (
                exc
                if isinstance(exc, StorageError)
                else StorageError(index_dir, exc, "search answers from the index as it was")
            )
            self.trouble_begins(
                "index", error.problem, f"{error}; brainiac updates it once it can", index_dir
            )
            return
        if isinstance(exc, VaultError):  # the vault folder went away: not the index's fault
            log.warning("%s", exc)
            return
        if isinstance(exc, IndexLockedError):
            # Another brainiac process is writing this index (one that opened it before this
            # daemon started): a rebuild would delete the index under it. Wait, and try again.
            self.trouble_begins("index", "another writer holds its lock", str(exc), index_dir)
            return
        if self._rebuilding:  # the rebuild itself failed: try again later, never in a loop
            log.error("rebuilding the index at %s failed (%s)", index_dir, str(exc))
            self.trouble_begins(
                "index",
                "the rebuild failed",
                f"{index_dir}: the index could not be rebuilt ({exc}); brainiac tries again; "
                "if it keeps failing, stop brainiac, delete that folder and start it again",
                index_dir,
            )
            return
        cause = exc.__cause__ if isinstance(exc, SearchError) and exc.__cause__ else exc
        log.warning(
            "%s: the index cannot be used (%s: %s, found while %s); rebuilding it from the vault",
            index_dir,
            type(cause).__name__,
            str(cause),
            why,
        )
        self._rebuilding = True
        try:
            with contextlib.suppress(Exception):  # an index that cannot even open: refresh reopens
                self.memory.indexer.manifest.index_id = ""  # names no index: the sync starts anew
            self._full_reconcile("rebuild")
        finally:
            self._rebuilding = False

    def next_retry(self) -> float | None:
        return min((t.retry_at for t in self.troubles.values()), default=None)

    def retry(self) -> None:
        """Try again what the system refused, unless statvfs says it would refuse again."""
        now = time.monotonic()
        for what, trouble in list(self.troubles.items()):
            if trouble.retry_at > now:
                continue
            if _blocked(trouble.probe):
                trouble.retry_at = now + _RETRY_S  # still full or read-only: look in a second
                continue
            if what == "index":
                self._full_reconcile("retry")
            elif what == "state":
                try:
                    self.memory.indexer.flush()
                except OSError as exc:
                    self.state_failed(exc, self.memory.locations.manifest_path)
                else:
                    if self._write_status_now():
                        state = self.memory.locations.state
                        self.trouble_ends("state", f"the state folder ({state})")
            if what == "vault" or (what == "state" and self.working_memory_pending):
                self._write_working_memory()
            if self.troubles.get(what) is trouble:  # still failing: wait longer next time
                trouble.delay = min(trouble.delay * 2, _RETRY_MAX_S)
                trouble.retry_at = time.monotonic() + trouble.delay
