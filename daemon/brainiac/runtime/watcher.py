"""Watching the vault: which paths matter, when a changed path is ready, and the watchdog observer.

Events are hints about paths, never facts (docs/foundations.md, section 1): vim
reports a save as `moved note.md -> note.md~` followed by a fresh `note.md`, git unlinks and
recreates, Syncthing and brainiac itself rename a hidden temp file over the note, and nano, VS Code
and Obsidian's sync client truncate and rewrite in place, so a reader can catch an empty file. So:

* `classify` keeps only note paths (and sync-conflict copies); every helper file editors and sync
  tools leave beside a note is hidden or does not end in `.md`.
* `ChangeTracker` turns a stream of hints into "stat and read this path now": at once after a
  finished write (close-after-write, or the destination of a rename), after a quiet period
  otherwise, and a missing path only after a grace period, since a rename-save briefly leaves no
  file at all. It is pure and takes the time as a parameter.
* `Watcher` owns the watchdog observer. Its handler never raises (an exception kills watchdog's
  thread without a trace), and it asks for a full rescan whenever events may have been lost: an
  inotify queue overflow, which watchdog only logs, or a folder deleted or moved away. When the
  inotify limits leave the vault (or part of it) unwatched, it either fails with the sysctl that
  fixes it or, for the daemon (`polling_fallback`), polls the vault's notes instead and says so.

This is the only module that imports watchdog.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

from watchdog.events import (
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
    FileClosedEvent,
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileSystemEvent,
    FileSystemEventHandler,
)
from watchdog.observers import Observer
from watchdog.observers.polling import PollingObserverVFS

from brainiac.core.errors import VaultError
from brainiac.store.vault import WORKING_MEMORY, is_temp_file

logger = logging.getLogger(__name__)

NOTE = "note"
CONFLICT = "conflict"
IGNORE = "ignore"

# The folder the daemon generates itself: watching it would make every write of ours a hint.
_GENERATED_TOP = WORKING_MEMORY.split("/")[0]

# Conflict copies end in `.md` like any note, so they are told apart by name. Every one of these
# names a second version beside the note; none of them should ever be written or merged by us.
CONFLICT_RE = re.compile(
    # Syncthing: note.sync-conflict-20260818-173636-D4LGQYW.md
    r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}"
    # Obsidian Sync "(Conflicted copy laptop 202611221030)", its headless client "(Conflicted
    # copy)", and Dropbox "(Anna's conflicted copy 2026-11-22)". Only inside parentheses, so a
    # note titled "how I resolved a conflicted copy.md" stays a note.
    r"|\([^()]*conflicted copy[^()]*\)",
    re.IGNORECASE,
)

# watchdog 7.1 reports an inotify queue overflow only as a WARNING on these loggers; the events
# lost are gone and the handler is never told (notes, section 3.2).
_OVERFLOW_LOGGERS = ("watchdog.observers.inotify_c", "watchdog.observers.inotify")

_LIMIT_FILES = ("max_user_watches", "max_user_instances", "max_queued_events")

# The polling fallback stats every note each time, so a shorter interval would cost a large vault
# a real share of a core; an edit shows within 2 s plus the quiet period.
POLL_INTERVAL_S = 2.0


def classify(rel: str) -> str:
    """What a vault-relative POSIX path is to the daemon: "note", "conflict" or "ignore".

    One rule removes every helper file in the notes' tables: a note ends in `.md` and no component
    of its path starts with a dot. That drops swap and lock files (`.note.md.swp`, `.#note.md`),
    probes and backups (`4913`, `note.md~`, `#note.md#`), temp names (`.syncthing.x.tmp`,
    `___jb_tmp___`, `.vsctmp`, our own `.brainiac-tmp`) and tool folders (`.obsidian*/`, `.git/`,
    `.trash/`, `.stversions/`). The generated `context/` folder is ours and is ignored too. The
    temp names that backups leave out are one list, vault.is_temp_file, checked here as well.
    """
    parts = rel.split("/")
    if not rel or any(not p or p.startswith(".") for p in parts):
        return IGNORE
    if parts[0] == _GENERATED_TOP and len(parts) > 1:
        return IGNORE
    name = parts[-1]
    if not name.endswith(".md") or is_temp_file(name):
        return IGNORE
    if CONFLICT_RE.search(name):
        return CONFLICT
    return NOTE


def _folder_ignored(rel: str) -> bool:
    """Whether nothing below this folder can be a note (a dot-folder, or the generated folder)."""
    parts = rel.split("/") if rel else []
    return any(p.startswith(".") for p in parts) or parts[:1] == [_GENERATED_TOP]


class ChangeTracker:
    """When each hinted path is ready to be stat'ed and read. Pure: no threads, no clock.

    `hint(rel, completed=True)` is a finished write (close-after-write, or a rename's destination):
    the path is due at once. A bare hint (create, modify, delete, a rename's source) may be an
    in-place writer half way through, so the path waits until `quiet_s` have passed without
    another hint, but never more than `cap_s` after the first hint: a file appended to forever is
    still read. The latest hint decides: a bare hint after a completed one means someone started
    writing again, so the path waits again (still within the cap).

    Deletions are decided by the consumer, which stats the file. A missing file may be a rename-save
    caught in the middle, so the consumer calls `hint_missing`, which is True only once the path has
    been missing for `grace_s` with no hint in between; until then the path comes out of `due` again
    for a re-check. Not thread-safe: one consumer thread owns it.
    """

    def __init__(self, quiet_s: float = 0.3, cap_s: float = 2.0, grace_s: float = 1.0) -> None:
        if not 0 <= quiet_s <= cap_s or grace_s < 0:
            raise ValueError(
                f"need 0 <= quiet_s <= cap_s and grace_s >= 0, got {quiet_s}, {cap_s}, {grace_s}"
            )
        self.quiet_s = quiet_s
        self.cap_s = cap_s
        self.grace_s = grace_s
        # rel -> (time of the first hint, or None for a re-check of a missing file; deadline)
        self._pending: dict[str, tuple[float | None, float]] = {}
        self._missing_since: dict[str, float] = {}

    def hint(self, rel: str, completed: bool, now: float) -> None:
        """Record that `rel` may have changed."""
        # Any event restarts the deletion clock: the path may have come back, or gone again.
        self._missing_since.pop(rel, None)
        first = self._pending.get(rel, (None, 0.0))[0]
        if first is None:  # nothing pending, or only a re-check of a missing file
            first = now
        deadline = now if completed else now + self.quiet_s
        self._pending[rel] = (first, min(deadline, first + self.cap_s))

    def hint_missing(self, rel: str, now: float) -> bool:
        """The consumer found `rel` missing. True: it has been missing for the grace period, treat
        it as deleted. False: a re-check is scheduled and `due` returns the path again then."""
        since = self._missing_since.setdefault(rel, now)
        if now >= since + self.grace_s:
            del self._missing_since[rel]
            return True
        # If a hint is already pending the path comes out with it, and the consumer asks again.
        self._pending.setdefault(rel, (None, since + self.grace_s))
        return False

    def due(self, now: float) -> list[str]:
        """The paths ready at `now`, sorted; they are forgotten until hinted again."""
        ready = sorted(rel for rel, (_, deadline) in self._pending.items() if deadline <= now)
        for rel in ready:
            del self._pending[rel]
        return ready

    def next_deadline(self) -> float | None:
        """When the next path becomes due (to bound a wait), or None when nothing is pending."""
        return min((deadline for _, deadline in self._pending.values()), default=None)

    def pending(self) -> int:
        """How many paths are waiting (for the status file)."""
        return len(self._pending)


def inotify_limits() -> dict[str, int | None]:
    """The kernel's per-user inotify limits (None where unreadable, e.g. not Linux)."""
    limits: dict[str, int | None] = {}
    for name in _LIMIT_FILES:
        try:
            limits[name] = int(Path("/proc/sys/fs/inotify", name).read_text().strip())
        except (OSError, ValueError):
            limits[name] = None
    return limits


def _watch_limit() -> str:
    """The watch limit as it applies here. Since Linux 5.11 a user namespace (a container) has a
    cap of its own, /proc/sys/user/max_inotify_watches, which may be lower than the sysctl."""
    limit = inotify_limits()["max_user_watches"]
    text = f"max_user_watches={limit}"
    try:
        own = int(Path("/proc/sys/user/max_inotify_watches").read_text().strip())
    except (OSError, ValueError):
        return text
    if limit is None or own < limit:
        text += f", and this user namespace allows {own} (user.max_inotify_watches)"
    return text


def _watch_error(root: Path, exc: OSError) -> VaultError:
    """A one-line message for a watch that could not be set up, with the fix where there is one."""
    limits = inotify_limits()
    if exc.errno == errno.ENOSPC:
        return VaultError(
            f"{root}: cannot watch the vault, the inotify watch limit is reached "
            f"({_watch_limit()}; one per folder, shared with every "
            "watcher you run); raise it with `sudo sysctl fs.inotify.max_user_watches=524288` "
            "and keep it in /etc/sysctl.d/"
        )
    if exc.errno == errno.EMFILE:
        return VaultError(
            f"{root}: cannot watch the vault, the inotify instance limit is reached "
            f"(max_user_instances={limits['max_user_instances']}); raise it with "
            "`sudo sysctl fs.inotify.max_user_instances=1024` and keep it in /etc/sysctl.d/ "
            "(or, if it is the open-file limit, raise `ulimit -n`)"
        )
    return VaultError(
        f"{root}: cannot watch the vault ({exc.strerror or exc}); check that the "
        "folder exists and is readable"
    )


def _count_folders(root: Path) -> int:
    """Folders below `root`, itself included, as watchdog watches them (symlinks not entered)."""
    return sum(1 for _ in os.walk(root))


def _count_inotify_watches() -> int | None:
    """Watches held by this process's inotify instances (from /proc/self/fdinfo), None off Linux."""
    total = 0
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as info:
                total += sum(1 for line in info if line.startswith("inotify wd:"))
        except OSError:
            continue  # closed meanwhile (listing /proc/self/fd opens one more fd)
    return total


class _OverflowHook(logging.Handler):
    """Turns watchdog's "Inotify queue overflowed" warning into a request for a full rescan."""

    def __init__(self, on_overflow: Callable[[], None]) -> None:
        super().__init__(logging.WARNING)
        self._on_overflow = on_overflow

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if "overflow" in record.getMessage().lower():
                self._on_overflow()
        except Exception:  # a logging handler must not raise into watchdog's inotify thread
            logger.exception("watcher: the overflow callback failed")


def _not_a_stop_race(record: logging.LogRecord) -> bool:
    """Drops watchdog 7.1's ERROR "queue_events() called when the thread is inactive": its emitter
    thread logs it when a stop lands while it is reading, which is every stop, now and then."""
    return "called when the thread is inactive" not in record.getMessage()


# The events the handler acts on, and so the only ones inotify is asked for: an open, a close
# after reading and a folder's own change alter no note, and every context an agent asks for opens
# notes (two events a note read, which the observer's thread would parse only to drop them).
_EVENTS = [
    FileCreatedEvent,
    FileDeletedEvent,
    FileModifiedEvent,
    FileMovedEvent,
    FileClosedEvent,
    DirCreatedEvent,
    DirDeletedEvent,
    DirMovedEvent,
]


class _Handler(FileSystemEventHandler):  # type: ignore[misc]  # watchdog is untyped for mypy
    """Turns watchdog events into path hints. Never raises: that would kill the observer."""

    def __init__(
        self, root: str, on_hint: Callable[[str, bool], None], on_overflow: Callable[[], None]
    ) -> None:
        super().__init__()
        self._root = root
        self._on_hint = on_hint
        self._on_overflow = on_overflow

    def dispatch(self, event: FileSystemEvent) -> None:
        try:
            self._route(event)
        except Exception:
            # The hint this event carried is lost; a full rescan finds whatever it was about.
            logger.exception("watcher: could not handle %r; asking for a full rescan", event)
            try:
                self._on_overflow()
            except Exception:
                logger.exception("watcher: the rescan callback failed too")

    def _route(self, event: FileSystemEvent) -> None:
        kind = event.event_type
        if kind in ("opened", "closed_no_write", "attrib"):
            # Reads (Obsidian and indexers open notes all the time) and metadata changes: neither
            # changes content. An attrib also follows vim's close-after-write, and as a bare hint
            # it would make a finished save wait for the quiet period.
            return
        src = self._rel(event.src_path)
        dest = self._rel(event.dest_path) if kind == "moved" else None
        if event.is_directory:
            # A folder's own modified/attrib events say nothing about its notes.
            if kind in ("deleted", "moved") and src is not None and not _folder_ignored(src):
                # The notes that were below it are gone; rescanning is simpler than remembering
                # them here (watchdog does report most of them one by one, but not on a move out).
                self._on_overflow()
            if kind in ("created", "moved"):
                # A folder moved in (or a `git checkout` creating one) may already hold notes,
                # written before any watch on it existed.
                target = dest if kind == "moved" else src
                if target is not None and not _folder_ignored(target):
                    for rel in self._notes_below(target):
                        self._on_hint(rel, True)
            return
        if src is not None and classify(src) != IGNORE:
            self._on_hint(src, kind == "closed")
        if dest is not None and classify(dest) != IGNORE:
            self._on_hint(dest, True)  # a rename's destination is a finished file

    def _rel(self, path: bytes | str) -> str | None:
        """The vault-relative POSIX path, or None when outside the root (or empty)."""
        text = os.fsdecode(path)
        if text == self._root:
            return ""
        prefix = self._root.rstrip(os.sep) + os.sep
        if not text.startswith(prefix):
            return None
        return text[len(prefix) :].replace(os.sep, "/")

    def _notes_below(self, rel_dir: str) -> Iterator[str]:
        top = os.path.join(self._root, rel_dir)
        for dirpath, dirnames, filenames in os.walk(top):  # symlinked folders are not entered
            base = os.path.relpath(dirpath, self._root).replace(os.sep, "/")
            dirnames[:] = [d for d in dirnames if not _folder_ignored(f"{base}/{d}")]
            for name in filenames:
                rel = f"{base}/{name}"
                if classify(rel) != IGNORE:
                    yield rel


class Watcher:
    """The watchdog observer on one vault, recursive, reporting path hints and rescan requests.

    `on_hint(rel, completed)` and `on_overflow()` are called on watchdog's threads and must be
    quick (put on a queue, set an event). An exception from them is logged, turned into a rescan
    request, and the watcher goes on.

    With `polling_fallback`, an inotify limit that leaves the vault or some of its folders
    unwatched does not fail the start: the watcher polls the notes every `poll_interval_s` instead
    (`polling` is then True) and logs one warning naming the sysctl that would bring inotify back.
    """

    def __init__(
        self,
        root: Path,
        on_hint: Callable[[str, bool], None],
        on_overflow: Callable[[], None],
        polling_fallback: bool = False,
        poll_interval_s: float = POLL_INTERVAL_S,
    ) -> None:
        self.root = Path(os.path.abspath(root))
        self._on_hint = on_hint
        self._on_overflow = on_overflow
        self.polling_fallback = polling_fallback
        self.poll_interval_s = poll_interval_s
        self.polling = False
        self._observer: Observer | None = None
        self._hooks: list[tuple[logging.Logger, _OverflowHook, int | None]] = []

    def start(self) -> None:
        """Watch the vault; VaultError (naming the sysctl to run) when an inotify limit is hit,
        unless `polling_fallback`."""
        if self._observer is not None:
            raise RuntimeError("watcher already started")
        self._install_hooks()
        observer = None
        try:
            observer = Observer()  # starts its inotify reader thread; EMFILE surfaces here
            observer.name = "brainiac-watcher"
            observer.schedule(self._handler(), str(self.root), recursive=True, event_filter=_EVENTS)
            observer.start()  # adds one inotify watch per folder; ENOSPC surfaces here
        except OSError as exc:
            self._abort(observer)
            error = _watch_error(self.root, exc)
            if not (self.polling_fallback and exc.errno in (errno.ENOSPC, errno.EMFILE)):
                raise error from exc
            self._start_polling(
                f"{error}; until then brainiac watches by polling every "
                f"{self.poll_interval_s:g} s, which costs more CPU (restart it after raising it)"
            )
            return
        except BaseException:
            self._abort(observer)
            raise
        self._observer = observer
        self._check_watches()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop watching and join the observer's threads. Safe to call twice or before start()."""
        observer, self._observer = self._observer, None
        try:
            if observer is not None:
                observer.stop()  # also stops and joins the emitter and the inotify reader
                observer.join(timeout)
                if observer.is_alive():
                    logger.warning(
                        "watcher: the observer thread did not stop within %.1f s", timeout
                    )
        finally:
            self._remove_hooks()

    def is_alive(self) -> bool:
        """Whether events are still being delivered (the daemon exits for a restart when not)."""
        observer = self._observer
        if observer is None or not observer.is_alive():
            return False  # the dispatcher: dies when a handler raises
        if not all(e.is_alive() for e in observer.emitters):
            return False  # an emitter stops itself when the vault folder is deleted
        # The inotify reader thread (watchdog 7.1, private) dies on any exception in watchdog's own
        # code, e.g. ENOSPC when adding the watch for a new folder once the limit is reached; the
        # dispatcher then waits forever and the daemon would be deaf without knowing it.
        reader = getattr(observer, "_inotify_fd", None)
        return not isinstance(reader, threading.Thread) or reader.is_alive()

    def __enter__(self) -> Watcher:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _handler(self) -> _Handler:
        return _Handler(str(self.root), self._on_hint, self._on_overflow)

    def _start_polling(self, why: str) -> None:
        """Watch by polling: a snapshot of the note folders (stat only) every poll interval."""
        observer = PollingObserverVFS(
            os.lstat, self._listdir, polling_interval=self.poll_interval_s
        )
        observer.name = "brainiac-watcher"
        try:
            observer.schedule(self._handler(), str(self.root), recursive=True, event_filter=_EVENTS)
            observer.start()  # takes the first snapshot here
        except BaseException:
            self._abort(observer)
            raise
        self._observer = observer
        self.polling = True
        logger.warning("%s", why)

    def _listdir(self, path: str | None) -> Iterator[os.DirEntry[str]]:
        """What polling looks at: no dot-entries (`.git`, `.obsidian`, temp files), not the
        generated folder; the same notes `classify` keeps, at a fraction of the stats."""
        generated = os.path.join(str(self.root), _GENERATED_TOP)
        with os.scandir(path) as entries:
            for entry in entries:
                if not entry.name.startswith(".") and entry.path != generated:
                    yield entry

    def _check_watches(self) -> None:
        """Warn when some folders got no watch. watchdog 7.1 raises only when the vault folder
        itself cannot be watched; a sub-folder whose watch fails (ENOSPC once the per-user limit is
        reached, or unreadable) is skipped silently, and changes there are seen only by a rescan.
        With `polling_fallback`, the watcher polls instead."""
        folders, watches = _count_folders(self.root), _count_inotify_watches()
        if watches is None or watches >= folders:
            return
        limit = _watch_limit()
        if self.polling_fallback:
            observer, self._observer = self._observer, None
            self._abort(observer)
            self._start_polling(
                f"{self.root}: only {watches} of {folders} folders are watched by inotify "
                f"({limit}; shared with every watcher you run); brainiac "
                f"watches by polling every {self.poll_interval_s:g} s instead, which costs more "
                "CPU. Raise the limit with `sudo sysctl fs.inotify.max_user_watches=524288`, keep "
                "it in /etc/sysctl.d/, and restart brainiac"
            )
            return
        logger.warning(
            "%s: only %d of %d folders are watched (%s; shared with every watcher "
            "you run); edits in the others are seen only by the periodic rescan. If the limit is "
            "the cause, raise it with `sudo sysctl fs.inotify.max_user_watches=524288` and keep it "
            "in /etc/sysctl.d/",
            self.root,
            watches,
            folders,
            limit,
        )

    def _abort(self, observer: Observer | None) -> None:
        try:
            if observer is not None:
                observer.stop()
                if observer.is_alive():
                    observer.join(5.0)
        except Exception:
            logger.exception("watcher: cleaning up after a failed start failed")
        finally:
            self._remove_hooks()

    def _install_hooks(self) -> None:
        for name in _OVERFLOW_LOGGERS:
            log = logging.getLogger(name)
            hook = _OverflowHook(self._on_overflow)
            old_level = None
            # A configuration that silences watchdog below ERROR would also hide the overflow.
            if log.getEffectiveLevel() > logging.WARNING:
                old_level = log.level
                log.setLevel(logging.WARNING)
            log.addHandler(hook)
            log.addFilter(_not_a_stop_race)
            self._hooks.append((log, hook, old_level))

    def _remove_hooks(self) -> None:
        while self._hooks:
            log, hook, old_level = self._hooks.pop()
            log.removeHandler(hook)
            log.removeFilter(_not_a_stop_race)
            if old_level is not None:
                log.setLevel(old_level)
