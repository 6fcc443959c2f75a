"""The running daemon, `brainiac run`: keeps the index and the working memory true to the vault.

One thread owns everything that writes (the index, the manifest, the working-memory file, job
runs): the main loop below. The file watcher and the scheduler only post work to it through a
queue, so there is one Whoosh writer and at most one job at a time.

Start, in order: the instance lock, a full reconcile (offline edits are picked up), the
requests other processes left, then the CLI's calls answered over the socket; beside them, the
watcher, stale temp files swept, the working memory written, the scheduler, then READY=1. Stop, on
SIGTERM or SIGINT, the socket first, then the rest in reverse, after the write in flight has
finished. SIGHUP reloads the configuration.

Freshness: a completed write (close-after-write, a rename onto the path) is acted on at once; a
bare modification waits for a short quiet period (an in-place writer may still be writing). The
decision is always made on content: a sync compares hashes with the manifest, so the daemon's own
writes and touch-only changes cost nothing. A path that disappeared is deleted from the index only
if it is still missing after a grace period (rename-saves recreate it).

Resource faults never stop it (docs/reliability.md): what it cannot write just now is kept, and
tried again, by resource_faults.py. When inotify's limits leave the vault unwatched, it is polled
instead. Also elsewhere: the status file (daemon_status.py) and the thread memory jobs run on
(job_runner.py); this module is the loop that drives them.

One concept: that loop, one short branch for each thing that can happen to a running daemon (a
file, the clock, a request, a fault, a conflict copy), each handing the work to its owner.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import logging
import os
import queue
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any

from brainiac.api import job_table
from brainiac.api.answers import Answerer
from brainiac.api.memory import Memory
from brainiac.core import clock
from brainiac.core.errors import (
    BrainiacError,
    SearchError,
    StorageError,
    is_storage_problem,
)
from brainiac.core.heap import release_freed_memory
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.lifecycle import journal
from brainiac.runtime import requests_served, systemd
from brainiac.runtime.bookkeeping import Bookkeeper
from brainiac.runtime.daemon_status import Counters, StatusFile
from brainiac.runtime.embedder import Embedder
from brainiac.runtime.job_runner import JobRunner, start_schedule, utcnow
from brainiac.runtime.resource_faults import ResourceFaults
from brainiac.runtime.scheduler import Scheduler
from brainiac.runtime.socket_server import SocketServer
from brainiac.runtime.watcher import ChangeTracker, Watcher
from brainiac.search.fill_beside import FillBeside
from brainiac.search.index_merge import MergeBeside
from brainiac.search.index_writes import LARGE_SYNC_DOCS
from brainiac.store import config as config_mod
from brainiac.store import daemon_requests, safe_io
from brainiac.store import working_memory as wm
from brainiac.store.lock import InstanceLock
from brainiac.store.vault import SHORT_TERM, WORKING_MEMORY, is_conflict_copy, kind_of

log = logging.getLogger(__name__)

_STATUS_EVERY_S = 5.0
# Long idle (nothing changed for a minute): the loop wakes this seldom, so an idle daemon costs
# next to nothing; the systemd watchdog pings keep their own schedule.
_QUIET_STATUS_EVERY_S = 30.0
_QUIET_AFTER_S = 60.0
_IDLE_AFTER_S = 2.0  # quiet time before the manifest is saved and index segments merged
# A conflicts run that left a copy it may merge later (its original busy, the job lock held by a
# `jobs run` by hand) runs again after this, doubling up to the cap while it keeps leaving one:
# no other event may come to start it (the copy is already there), and the hourly rescan is late.
_CONFLICTS_AGAIN_FIRST_S = 1.0
_CONFLICTS_AGAIN_MAX_S = 600.0
# The jobs that write vault files wait while the vault (or the state folder) cannot be written.
_VAULT_JOBS = (*job_table.LIFECYCLE, "inbox", "recovery", "conflicts")


# What the other threads and the signal handlers post to the main loop, one type per kind.
@dataclass(frozen=True)
class _Wake:
    """Look at stop_event and reload_event now (a signal set one)."""


@dataclass(frozen=True)
class _Hint:
    """A vault path changed; `completed`: its write is finished (close-after-write, a rename)."""

    rel: str
    completed: bool


@dataclass(frozen=True)
class _Rescan:
    """File events may have been lost: reconcile the whole vault."""


@dataclass(frozen=True)
class _RunJob:
    name: str


@dataclass(frozen=True)
class _ServeRequests:
    """Another process left requests for the daemon (daemon_requests.py)."""


@dataclass(frozen=True)
class _ConflictsRunEnded:
    """A conflicts run ended; `again`: it left a copy that a later run may merge."""

    again: bool


_Message = _Wake | _Hint | _Rescan | _RunJob | _ServeRequests | _ConflictsRunEnded


class Service:
    """The daemon for one vault. `run()` blocks until `stop` is set; returns the exit status."""

    def __init__(self, vault: Path, environ: dict[str, str] | None = None) -> None:
        self.vault_path = vault
        self.environ = dict(os.environ if environ is None else environ)
        self.memory = Memory(vault, index_writes=True, refresh_interval_s=float("inf"))
        self.stop_event = threading.Event()
        self.reload_event = threading.Event()
        # Called once the daemon is up (lock held, index current, watching): the CLI tells the
        # person what to do next; a daemon refused at start says only why.
        self.on_ready: Callable[[], None] | None = None
        self._inbox: queue.SimpleQueue[_Message] = queue.SimpleQueue()
        self._tracker = ChangeTracker()
        self._counters = Counters()
        self.memory.indexer.defer_save = True  # flushed when idle and on stop
        self.memory.indexer.on_events_removed = self._events_removed
        # A purge of a large index (most of its documents rewritten) is a copy in a child
        # process, as the large segments' merge is (_idle_work): rewritten here, the daemon's
        # heap would hold the postings of every document it copies.
        self.memory.indexer.index.purges_beside = True
        self._ranking_stale = False  # the index changed since the working memory was ranked
        self._merge_beside: MergeBeside | None = None  # the large segments' merge under way
        self._watcher: Watcher | None = None
        self._scheduler: Scheduler | None = None
        self._jobs = JobRunner(self._finish_job)
        self._vault_gone = False  # the vault folder was moved away or deleted (_vault_missing)
        self._faults = ResourceFaults(
            self.memory,
            full_reconcile=self._full_reconcile,
            write_working_memory=self._write_working_memory,
            write_status_now=lambda: self._write_status(force=True),
            submit_job=self._submit_job,
            changed=self._status_changed,
        )
        self._status = StatusFile(self.memory, self._faults, self._counters, self.environ)
        self._status_now = False  # a fault began or ended: `brainiac status` should know at once
        self._logged_ids: set[str] | None = None  # the Event Log's event ids at the last sync
        self._journal_offset = 0  # how far _watch_event_log has read the event journal
        self._recovery_queued = False
        self._conflicts_again_at: float | None = None  # when to run the conflicts job again
        self._conflicts_again_s = 0.0  # the wait before that run (doubled while copies stay)
        self._started = utcnow()  # heavy jobs wait out the first minute after it (scheduler.py)
        self._takes_requests = False  # other processes' requests (daemon_requests.py)
        self._embedder: Embedder | None = None  # makes new events' vectors (embedder.py)
        # The socket systemd listens on for brainiac.socket, taken (and its variables unset) at
        # once so that no process started from here inherits them; the calls waiting in its
        # backlog are read as soon as the lock is held (_listen_early).
        self._passed_socket = systemd.listen_socket()
        for name in ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES"):
            self.environ.pop(name, None)
        self._server: SocketServer | None = None  # listening before the answers begin

    # -- signals and hand-offs (any thread) ---------------------------------------------------
    def install_signal_handlers(self) -> None:
        def on_stop(signum: int, frame: FrameType | None) -> None:
            self.stop_event.set()
            self._inbox.put(_Wake())

        def on_hup(signum: int, frame: FrameType | None) -> None:
            self.reload_event.set()
            self._inbox.put(_Wake())

        def on_request(signum: int, frame: FrameType | None) -> None:
            self._inbox.put(_ServeRequests())  # SimpleQueue.put is safe in a handler

        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)
        signal.signal(signal.SIGHUP, on_hup)
        signal.signal(daemon_requests.WAKE_SIGNAL, on_request)
        self._takes_requests = True  # said in the status file: askers may now send the signal

    def _on_hint(self, rel: str, completed: bool) -> None:
        self._inbox.put(_Hint(rel, completed))

    def _on_overflow(self) -> None:
        self._inbox.put(_Rescan())

    def _submit_job(self, name: str) -> None:
        self._inbox.put(_RunJob(name))

    def _status_changed(self) -> None:
        self._status_now = True

    # -- the main loop (the one writer) -------------------------------------------------------
    def run(self) -> int:
        lock = InstanceLock(self.memory.locations.runtime, self.memory.vault.root)
        # The job thread's writes are indexed here, from the watcher's news (Memory.index_thread).
        self.memory.index_thread = threading.current_thread()
        with contextlib.ExitStack() as stack:
            lock.acquire()
            stack.callback(lock.release)
            stack.callback(self.memory.close)
            stack.callback(self._cancel_merge_beside)  # before the index closes
            self._listen_early(stack)
            self._full_reconcile("start")
            self._start_embedder(stack)
            self._serve_requests()  # asked while no daemon ran: a forget before any answer
            # The index is now as current as a CLI call's own reconcile would make it: the calls
            # are answered from here on (the first one started this daemon under socket
            # activation), while the rest of the start runs beside them.
            self._start_socket(stack)
            # Next the watcher: a save between the reconcile and its start is seen only by the
            # hourly rescan (or the file's next save), so that window stays as short as it can.
            self._watcher = Watcher(
                self.memory.vault.root, self._on_hint, self._on_overflow, polling_fallback=True
            )
            self._watcher.start()
            stack.callback(self._watcher.stop)
            removed = safe_io.remove_stale_temps(self.memory.vault.root)  # never indexed
            if removed:
                log.info("removed %d stale temp file(s) left by a crash", len(removed))
            if self._faults.vault_read_only():
                self._faults.read_only_begins()
            else:
                self._write_working_memory()
            self._jobs.start()
            stack.callback(self._jobs.stop)
            self._start_scheduler()
            stack.callback(self._stop_scheduler)
            stack.callback(self._stop_socket)  # at stop, before the watcher, the jobs, the index
            systemd.notify("READY=1", f"STATUS={self._status.line()}", environ=self.environ)
            log.info("watching %s", self.memory.vault.root)
            if self.on_ready is not None:
                self.on_ready()
            code = self._loop()
            systemd.notify("STOPPING=1", environ=self.environ)
            log.info("stopping")
            self._write_status(stopping=True)
            return code
        return 0  # unreachable; keeps type checkers content

    def _loop(self) -> int:
        ping_every = systemd.watchdog_interval(self.environ)
        next_ping = time.monotonic()
        next_status = time.monotonic()
        while not self.stop_event.is_set():
            now = time.monotonic()
            deadline = min(
                t
                for t in (
                    self._tracker.next_deadline(),
                    next_ping if ping_every else None,
                    next_status,
                    self._faults.next_retry(),
                    time.monotonic() + 1.0 if self._vault_gone else None,  # is it back?
                    self._conflicts_again_at,
                    # a merge beside the writer is swapped in within a second of its end
                    time.monotonic() + 1.0 if self._merge_beside is not None else None,
                )
                if t is not None
            )
            self._drain(timeout=max(0.0, deadline - now))
            if self.stop_event.is_set():
                break
            if self.reload_event.is_set():
                self._reload()
            self._process_due()
            self._finish_merge_beside()
            if (
                self._conflicts_again_at is not None
                and time.monotonic() >= self._conflicts_again_at
            ):
                self._conflicts_again_at = None
                self._submit_job("conflicts")
            retry_at = self._faults.next_retry()
            if retry_at is not None and time.monotonic() >= retry_at:
                self._faults.retry()
            if self._status_now:
                self._status_now = False
                self._write_status()
            now = time.monotonic()
            if not self._vault_missing() and (
                self._watcher is None or not self._watcher.is_alive()
            ):
                log.error(
                    "the file watcher died; exiting so that the service manager restarts "
                    "brainiac (no silent staleness)"
                )
                return 1
            if ping_every and now >= next_ping:
                systemd.notify("WATCHDOG=1", environ=self.environ)
                next_ping = now + ping_every
            if now >= next_status:
                self._serve_requests()  # a request whose signal was lost waits a tick at most
                self._idle_work()
                if "vault" not in self._faults.troubles and self._faults.vault_read_only():
                    # Remounted read-only under us (errors=remount-ro).
                    self._faults.read_only_begins()
                self._write_status()
                quiet = (
                    time.monotonic() - self._counters.last_change > _QUIET_AFTER_S
                    and not self._tracker.pending()
                )
                every = _QUIET_STATUS_EVERY_S if quiet else _STATUS_EVERY_S
                next_status = time.monotonic() + every
        return 0

    def _drain(self, timeout: float) -> None:
        """Wait for the first message (up to `timeout`), then take everything queued."""
        try:
            item = self._inbox.get(timeout=timeout) if timeout > 0 else self._inbox.get_nowait()
        except queue.Empty:
            return
        while True:
            self._handle(item)
            try:
                item = self._inbox.get_nowait()
            except queue.Empty:
                return

    def _handle(self, item: _Message) -> None:
        match item:
            case _Hint(rel, completed):
                if is_conflict_copy(rel):
                    self._conflict_copy(rel)
                    return
                if kind_of(rel) is None and not rel.startswith("system/"):
                    return
                self._tracker.hint(rel, completed, time.monotonic())
            case _Rescan():
                log.warning(
                    "file events may have been lost (a folder moved or deleted, or inotify's "
                    "queue overflowed); rescanning the vault"
                )
                self._full_reconcile("overflow")
            case _RunJob(name):
                self._run_job(name)
            case _ConflictsRunEnded(again):
                self._conflicts_left(again)
            case _ServeRequests():
                self._serve_requests()
            case _Wake():
                pass  # the loop looks at stop_event and reload_event after each drain

    def _conflict_copy(self, rel: str) -> None:
        """A sync tool's conflict copy appeared, changed or went: the device that runs the jobs
        merges it (the conflicts job), the others report it until it is gone."""
        if not os.path.lexists(self.memory.vault.path(rel)):
            self._counters.conflicts.discard(rel)  # merged and deleted: resolved
            return
        here = config_mod.runs_jobs(self.memory.config)
        if rel not in self._counters.conflicts:
            if here:
                log.warning("%s is a sync-conflict copy: merging it into its original", rel)
            else:
                log.warning(
                    "%s is a sync-conflict copy: the device that runs the jobs merges it (%s)",
                    rel,
                    config_mod.jobs_elsewhere(self.memory.config),
                )
            self._counters.conflicts.add(rel)
        if here:
            self._submit_job("conflicts")

    def _conflicts_left(self, again: bool) -> None:
        """A conflicts run ended: when it left a copy that a later run may merge, that run comes
        soon (then less and less often while it still cannot), since a copy already there
        brings no event to start one."""
        if not again:
            self._conflicts_again_s = 0.0
            self._conflicts_again_at = None
            return
        self._conflicts_again_s = min(
            max(2 * self._conflicts_again_s, _CONFLICTS_AGAIN_FIRST_S), _CONFLICTS_AGAIN_MAX_S
        )
        self._conflicts_again_at = time.monotonic() + self._conflicts_again_s

    def _process_due(self) -> None:
        now = time.monotonic()
        due = self._tracker.due(now)
        if not due or self._vault_missing():
            return  # (paths of a vanished vault: its rescan covers them when it is back)
        ready = []
        for rel in due:
            gone = not os.path.lexists(self.memory.vault.path(rel))
            if (
                gone
                and rel in self.memory.indexer.manifest.files
                and not (self._tracker.hint_missing(rel, now))
            ):
                continue  # perhaps a rename-save between unlink and create: look again later
            ready.append(rel)
        if ready:
            self._sync(ready)

    def _sync(self, paths: list[str]) -> None:
        # The working memory first, from the files as they are now and the last ranking (no
        # search): an edit shows within one write. Then the index; the ranking is refreshed once
        # the edits pause (see _idle_work), since new words may change what ranks highest.
        self._write_working_memory(reuse_ranking=True)
        try:
            report = self.memory.indexer.sync(paths)
        except Exception as exc:
            self._faults.index_failed(exc, f"updating {', '.join(paths)}")
            return
        self._counters.syncs += 1
        if report.docs_written > LARGE_SYNC_DOCS:  # a job's mass rewrite: its documents are freed
            release_freed_memory()
        if report.changed or report.removed:
            self._counters.last_change = time.monotonic()
            self._ranking_stale = True
            if self._embedder is not None:
                self._embedder.wake()
        if SHORT_TERM in paths:
            self._watch_event_log()

    def _events_removed(self, keys: list[str]) -> None:
        """The indexer took event documents out: event lines left a note or the archive (deleted
        by hand, a save from an older copy, the note deleted or moved). As for the Event Log,
        what is now nowhere in the vault is put back at once, whichever sync saw it (an edit's,
        a rescan's). Promotion's and organization's moves, and a person's move of a note into a
        folder of their own, leave the recovery job nothing to do. A private note has no
        documents: what leaves it comes back at the next promotion."""
        if any(not key.startswith(SHORT_TERM + "#") for key in keys):
            self._queue_recovery()  # (the Event Log has its own watch: _watch_event_log)

    def _watch_event_log(self) -> None:
        """A save that took event lines out of the log (an editor saving an older copy over
        brainiac's appends) gets them put back now, by the recovery job, rather than at the next
        promotion. Missing means: in the log at the last look, or journalled since then (an
        append and the save over it can reach the daemon as one change), and not there now.
        Promotion's own removals look the same; the recovery job then finds nothing missing."""
        if self._vault_missing() or not self.memory.vault.path(SHORT_TERM).exists():
            return  # gone for now (a vault moved away, a rename-save midway): compare when back
        # The journal before the log (journal.survey says why): an event remembered between the
        # two reads is then not taken for one a save removed.
        journalled, offset = journal.ids_since(self.memory.locations.state, self._journal_offset)
        try:
            ids = {e.id for e in self.memory.short_term().events}
        except (OSError, BrainiacError):
            return  # unreadable for now: the next sync looks again
        self._journal_offset = offset
        before, self._logged_ids = self._logged_ids, ids
        if before is not None and (before | journalled) - ids:
            self._queue_recovery()

    def _queue_recovery(self) -> None:
        if not config_mod.runs_jobs(self.memory.config):
            # Another device runs the jobs: events leaving the log here are its promotion
            # arriving by sync, and its note may not have arrived yet.
            return
        if not self._recovery_queued:
            self._recovery_queued = True  # one at a time: saves in a burst need one run
            self._submit_job("recovery")

    def _full_reconcile(self, why: str) -> None:
        if self._vault_missing():
            return
        started = time.perf_counter()
        try:
            report = self.memory.refresh(force=True)
        except Exception as exc:
            self._faults.index_failed(exc, f"reconciling ({why})")
            return
        self._faults.trouble_ends("index", f"the index ({self.memory.locations.index_dir})")
        self._counters.last_reconcile = time.time()
        self._counters.conflicts = set(self.memory.indexer.conflicts)  # resolved ones go
        if self._counters.conflicts and config_mod.runs_jobs(self.memory.config):
            self._submit_job("conflicts")  # copies that arrived while the daemon was down
        if report is not None:
            log.info(
                "reconcile (%s): %d files, %d changed, %d removed in %.2f s",
                why,
                report.scanned,
                len(report.changed),
                len(report.removed),
                time.perf_counter() - started,
            )
            if report.changed or report.removed:
                if why != "start":  # a start writes it once its answers have begun
                    self._write_working_memory()
                if self._embedder is not None:
                    self._embedder.wake()
        # At start, the Event Log as it is, for the next save to compare with; later, a vault
        # restored from an older copy, say.
        self._watch_event_log()

    def _start_embedder(self, stack: contextlib.ExitStack) -> None:
        """Recall by meaning (semantic.py), its vectors made on a thread of their own: the
        model loads and the indexed events are read here, once (about 0.7 s at 10,000 notes)."""
        try:
            semantic = self.memory.semantic
        except Exception as exc:  # the index unreadable: the reconcile's fault handling says so
            log.warning("recall by meaning is off until the next start: %s", exc)
            return
        if semantic is None:
            return
        self.memory.fill_before_context = False
        index_dir = self.memory.locations.index_dir
        self._embedder = self._status.embedder = Embedder(
            semantic, self._vectors_made, beside=lambda: FillBeside(index_dir, semantic.folder)
        )
        self._embedder.start()
        stack.callback(self._embedder.stop)

    def _vectors_made(self, count: int) -> None:
        # The embedder's thread: the loop ranks the working memory again when idle.
        log.debug("made %d events' vectors", count)
        self._ranking_stale = True

    def _write_working_memory(self, reuse_ranking: bool = False) -> None:
        if self._vault_missing():
            return  # the write would create a stray folder where the vault is to be put back
        self._faults.working_memory_pending = True
        try:
            ctx = self.memory.context(None, now=dt.datetime.now(), reuse_ranking=reuse_ranking)
            outcome = wm.write(
                self.memory.vault, self.memory.locations.state, ctx.text, dt.datetime.now()
            )
        except SearchError as exc:  # the index is damaged or gone: rebuilt, which writes this
            self._faults.index_failed(exc, "ranking the working memory")
            return
        except OSError as exc:
            if not is_storage_problem(exc):
                if not self._vault_missing():  # (gone meanwhile: said once, in there)
                    log.exception("could not write the working memory; will retry on a change")
                return
            path = Path(exc.filename or self.memory.vault.path(WORKING_MEMORY))
            if not path.is_relative_to(self.memory.vault.root):
                self._faults.state_failed(exc, path)
            elif exc.errno == errno.EROFS:
                self._faults.read_only_begins()
            else:
                error = exc if isinstance(exc, StorageError) else StorageError(path, exc)
                self._faults.trouble_begins(
                    "vault",
                    error.problem,
                    f"{error}; brainiac goes on answering from the index and writes the working "
                    "memory, and runs the memory jobs, once it can",
                    self.memory.vault.root,
                )
            return
        except Exception:
            log.exception("could not write the working memory; will retry on the next change")
            return
        self._faults.working_memory_pending = False
        self._faults.trouble_ends("vault", f"the vault ({self.memory.vault.root})")
        if outcome.written:
            self._counters.working_memory_writes += 1
        if outcome.kept_aside:
            log.warning(
                "%s had been edited by hand; that version is kept as %s",
                WORKING_MEMORY,
                outcome.kept_aside,
            )

    def _idle_work(self) -> None:
        if time.monotonic() - self._counters.last_change < _IDLE_AFTER_S:
            return
        if self._ranking_stale:
            self._ranking_stale = False
            self._write_working_memory()
        try:
            self.memory.indexer.flush()
        except OSError as exc:
            self._faults.state_failed(exc, self.memory.locations.manifest_path)
        if "index" in self._faults.troubles:
            return  # a merge now would fail the same way; the retry comes first
        index = self.memory.indexer.index
        # The merging commits wait for a copy beside the writer: one of them could take a
        # segment the copy reads, and drop the copy.
        if self._merge_beside is not None:
            return
        try:
            index.merge_segments()
            self._merge_beside = index.merge_beside_start()
        except Exception as exc:
            self._faults.index_failed(exc, "merging segments")

    def _finish_merge_beside(self) -> None:
        """Swap in the large segments' merge once its child is done (search/index_merge.py): the
        writer is held for the swap alone, so edits never wait for the merge itself."""
        job = self._merge_beside
        if job is None or not job.done():
            return
        self._merge_beside = None
        try:
            swapped = self.memory.indexer.index.merge_beside_finish(job)
        except RuntimeError as exc:  # the child failed: the index is as it was
            log.warning("%s; the segments stay as they are", exc)
            return
        except Exception as exc:
            self._faults.index_failed(exc, "swapping in the merged segments")
            return
        if swapped:
            log.info("merged %d large index segments into one", len(job.segment_ids))
            self._status_now = True

    def _cancel_merge_beside(self) -> None:
        if self._merge_beside is not None:
            self._merge_beside.cancel()
            self._merge_beside = None

    # -- the vault folder itself ----------------------------------------------------------------
    def _vault_missing(self) -> bool:
        """Whether the vault folder is gone: moved away, or deleted (to be restored, say).

        Asked before anything is indexed, written or run, and on every pass of the loop (every
        second while it is gone). Meanwhile nothing is done: a rescan would empty the index, and a
        write would create a stray folder where the vault is to be put back. Said once each way;
        once the folder is back, it is watched afresh and rescanned."""
        root = self.memory.vault.root
        missing = not ((root / "memory").is_dir() or (root / "system").is_dir())
        if missing and not self._vault_gone:
            self._vault_gone = True
            log.warning(
                "%s: the vault folder is gone (moved away or deleted); brainiac indexes, writes "
                "and runs nothing until it is back, and the index keeps what it had",
                root,
            )
            self._tracker = ChangeTracker()  # the rescan when it is back covers these paths
            if self._watcher is not None:
                self._watcher.stop()  # it would follow a moved folder under its old name
        elif not missing and self._vault_gone:
            self._vault_gone = False
            log.warning("%s: the vault folder is back; watching and rescanning it", root)
            if self._watcher is not None:
                self._watcher.start()
            self._full_reconcile("vault back")
            self._write_working_memory()
        return missing

    # -- requests from other processes (requests_served.py) -------------------------------------
    def _serve_requests(self) -> None:
        if requests_served.serve(self.memory, self._faults.state_failed):
            self._status_now = True

    # -- the CLI's fast path ---------------------------------------------------------------------
    def _listen_early(self, stack: contextlib.ExitStack) -> None:
        """Under socket activation, read the calls at once: the call that started the daemon
        hears heartbeats while the first reconcile runs, and waits for its answer (up to
        daemon_socket.WAIT_CAP_S) instead of answering itself after ANSWER_TIMEOUT_S of silence.
        Without a socket from systemd the socket is bound once the start's reconcile is done."""
        if self._passed_socket is None:
            return
        server = self._socket_server()
        if self._opened(server):
            self._server = server
            stack.callback(server.stop)  # if the start fails before the answers begin

    def _start_socket(self, stack: contextlib.ExitStack) -> None:
        """Answer `context`, `search`, `check` and the prompt hook over a Unix socket (on its own
        threads, with this Memory: its searcher is swapped under a lock, index_open.py). Without it
        the CLI answers in its own process: a warning, not a reason to stop."""
        # The record of which notes a context used is written after the answer has gone out;
        # the bookkeeper stops after the server (last in, first out), finishing what it holds.
        bookkeeper = Bookkeeper()
        bookkeeper.start()
        stack.callback(bookkeeper.stop)
        self.memory.record_later = bookkeeper.later
        server = self._server
        if server is None:
            server = self._socket_server()
            if not self._opened(server):
                return
        server.answer()
        self._server = server
        stack.callback(server.stop)  # a start that fails from here: before the index closes

    def _stop_socket(self) -> None:
        """Stop answering (those in progress finish): the first thing a stopping daemon does."""
        if self._server is not None:
            self._server.stop()

    def _socket_server(self) -> SocketServer:
        answerer = Answerer(self.memory)

        def respond(request: dict[str, Any]) -> dict[str, Any]:
            # The embedder starts no batch while a call is answered (embedder.py): an agent
            # waits on the call, nobody waits on the vectors.
            embedder = self._embedder
            if embedder is None:
                return answerer.respond(request)
            with embedder.answering():
                return answerer.respond(request)

        return SocketServer(self.memory.locations.runtime, respond, passed=self._passed_socket)

    def _opened(self, server: SocketServer) -> bool:
        try:
            server.listen()
        except (OSError, BrainiacError) as exc:
            log.warning(
                "%s; the CLI answers in its own process",
                exc
                if isinstance(exc, BrainiacError)
                else f"{server.path}: the socket could not be opened ({exc})",
            )
            return False
        return True

    # -- jobs ----------------------------------------------------------------------------------
    def _start_scheduler(self) -> None:
        self._scheduler = Scheduler(self._submit_job)
        start_schedule(self._scheduler, self.memory, self._started)

    def _stop_scheduler(self) -> None:
        if self._scheduler is not None:
            self._scheduler.stop()

    def _run_job(self, name: str) -> None:
        job = job_table.JOBS.get(name)
        if job is None:
            return
        if name == "recovery":
            self._recovery_queued = False  # taken off the queue: a later save may queue another
        if name in job_table.DEVICE_JOBS and not config_mod.runs_jobs(self.memory.config):
            return  # another device runs it (`[jobs] device`); a reload may change that
        if self._vault_missing():
            log.info("job %s: not run, the vault folder is gone", name)
            return
        if name in _VAULT_JOBS and self._faults.jobs_must_wait():
            if name not in self._faults.postponed:
                log.info("job %s: postponed until the vault can be written", name)
                self._faults.postponed.append(name)
            return
        if not job.needs_index_writer:
            # A memory job only writes vault files (the watcher brings its changes back here),
            # and its first run over a large vault reads every note: it runs on the job thread,
            # so edits keep reaching the working memory meanwhile.
            self._jobs.submit(job, self.memory)
            return
        try:
            report = job_table.run(
                job, self.memory, clock.now(), False, self.memory.locations.state
            )
        except OSError as exc:  # the job ran; recording it failed (a full disk)
            self._faults.state_failed(exc, self.memory.locations.state / "jobs.json")
            return
        self._finish_job(report)

    def _finish_job(self, report: jobs_mod.JobReport) -> None:
        self._counters.jobs_run += 1
        (log.info if report.ok else log.error)("job %s: %s", report.name, report.summary)
        if report.name == "conflicts":  # (this runs on the job thread: the loop decides)
            self._inbox.put(_ConflictsRunEnded(report.again))
        for rel in report.changed:  # as the watcher would report them: finished writes
            self._inbox.put(_Hint(rel, completed=True))

    def _reload(self) -> None:
        self.reload_event.clear()
        systemd.notify("RELOADING=1", environ=self.environ)
        try:
            cfg = config_mod.load(self.memory.vault.root)
        except Exception as exc:
            log.error("configuration not reloaded, the old one stays: %s", exc)
        else:
            self.memory.reconfigure(cfg)
            self._stop_scheduler()
            self._start_scheduler()
            log.info("configuration reloaded")
            self._write_working_memory()
        systemd.notify("READY=1", f"STATUS={self._status.line()}", environ=self.environ)

    # -- status ----------------------------------------------------------------------------------
    def _write_status(self, stopping: bool = False, force: bool = False) -> bool:
        """daemon.json and STATUS= (daemon_status.py); False when the file could not be written.
        `force`: even if nothing changed since the last write."""
        return self._status.write(
            self._tracker, self._scheduler, self._watcher, self._takes_requests, stopping, force
        )
