"""How the threads of an MCP server share its one `Memory`: which calls run at once.

`Serial` (`brainiac mcp`, one client over stdio): one call at a time.

`Shared` (`brainiac serve --http`, many agents at once) follows the daemon's rule for its
Memory: reads (a context, a search, a check, a note) run at once on several threads, as the
daemon's socket threads answer them (the index swaps its searcher under its own lock, the caches
are replaced whole); writes (remember, feedback, jobs, a note replaced, forget, a transcript
imported) run one at a time, as the daemon's one writer thread, beside the reads. At most
`READERS` reads run at once: the work is mostly Python holding the GIL, so more threads would
not answer sooner, only share the cores among more calls and finish each of them later.

A server alone (no daemon beside it) keeps the index itself. A call never reconciles: that walks
the whole vault (a stat per file), a cost no agent's call should carry. A thread of its own
reconciles, at most every `interval_s` while calls come, as a write beside the reads, and only
when the vault's watcher (runtime/watcher.py, inotify) reported a change since the last walk
began; a watcher that cannot start or has died makes every such turn a walk. A call after a quiet
spell (the last turn began over `STALE_S` ago) waits for a turn begun after it came, so an edit
made meanwhile is seen. The vectors of recall by meaning are made as part of each write, walks
included, so the first call waits until every event has one and a remembered event has its vector
by the next context; one thread at a time makes them while reads use the vectors there are, as
the daemon's embedder does. Beside a daemon the daemon does both; a read opens its latest commit
of the index and of the vectors (daemon_vectors.py).

Which notes a context used is written after the answer, on one thread (bookkeeping.py), as in
the daemon; a write waits until what was handed over before it is written (a `feedback` reads
the record of the last context).
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Protocol

from brainiac.api.memory import Memory
from brainiac.core.errors import VaultError
from brainiac.runtime.bookkeeping import Bookkeeper
from brainiac.runtime.watcher import Watcher

log = logging.getLogger(__name__)

READERS = 4  # as the daemon's socket workers: a slow call does not hold up the ones behind it
STALE_S = 5.0  # a call finding the last walk older than this waits for a new one
KEEP_WALKING_S = 60.0  # after the last call: an agent prompting every half minute never waits
_JOIN_S = 10.0


class Access(Protocol):
    """What a tool holds while it uses the Memory."""

    def reading(self) -> AbstractContextManager[None]: ...

    def writing(self) -> AbstractContextManager[None]: ...


class Serial:
    """One call at a time, reads and writes alike."""

    def __init__(self) -> None:
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        with self._lock:
            yield

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._lock:
            yield


class Shared:
    """Reads at once, writes one at a time beside them (module docstring). `start()` before the
    first call, `stop()` after the last."""

    def __init__(self, memory: Memory, interval_s: float = 1.0) -> None:
        self.memory = memory
        self.interval_s = interval_s
        self._writes = threading.Lock()
        self._reads = threading.BoundedSemaphore(READERS)
        # Which notes a context used is written after the answer, on one thread, as the daemon
        # does (bookkeeping.py): in order, never two at once (they would race for the same
        # temporary file), and a slow disk holds up no agent.
        self._bookkeeper = Bookkeeper()
        memory.record_later = self._bookkeeper.later
        self._walker: threading.Thread | None = None
        self._walked = threading.Condition()
        self._walk_began = -float("inf")  # monotonic: the start of the last walk finished
        self._last_read = -float("inf")
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._changed = threading.Event()  # set by the watcher: a walk is needed
        self._changed.set()  # the first turn walks: what changed while nothing watched
        self._watcher: Watcher | None = None

    def start(self) -> None:
        self._bookkeeper.start()
        _ = self.memory.semantic  # made here, before two calls could make it at once
        if not self.memory.index_writes:
            return  # beside a daemon: it reconciles and makes the vectors
        self.memory.fill_before_context = False  # made by the writes, one at a time
        watcher = Watcher(self.memory.vault.root, self._hint, self._changed.set)
        try:
            watcher.start()
            self._watcher = watcher
        except VaultError as exc:  # an inotify limit: correct still, by walking every turn
            log.warning(
                "%s; the server walks the vault every %g s while called", exc, self.interval_s
            )
        self._walker = threading.Thread(target=self._walk, name="brainiac-reconcile", daemon=True)
        self._walker.start()

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        with self._walked:
            self._walked.notify_all()
        if self._walker is not None:
            self._walker.join(timeout=_JOIN_S)
        if self._watcher is not None:
            self._watcher.stop()
        self._bookkeeper.stop()

    @contextlib.contextmanager
    def reading(self) -> Iterator[None]:
        self._fresh()
        with self._reads:
            yield

    @contextlib.contextmanager
    def writing(self) -> Iterator[None]:
        with self._writes:
            # The records handed over before are written first: a `feedback` reads the last.
            written = threading.Event()
            self._bookkeeper.later(written.set)
            written.wait()
            yield
            semantic = self.memory.semantic if self._walker is not None else None
            if semantic is not None:
                semantic.fill()

    def _hint(self, rel: str, completed: bool) -> None:
        self._changed.set()

    def _fresh(self) -> None:
        """Ask for a walk when the last is over `interval_s` old; wait for one after a quiet
        spell (module docstring)."""
        if self._walker is None:
            return
        now = time.monotonic()
        self._last_read = now
        age = now - self._walk_began
        if age < self.interval_s:
            return
        self._wake.set()
        if age < STALE_S:
            return
        with self._walked:
            self._walked.wait_for(lambda: self._walk_began >= now or self._stopping.is_set())

    def _walk(self) -> None:
        while not self._stopping.is_set():
            if time.monotonic() - self._last_read > KEEP_WALKING_S:
                self._wake.wait()  # quiet: walk again when a call comes
            self._wake.clear()
            if self._stopping.is_set():
                return
            began = time.monotonic()
            try:  # nothing may end this thread: a call after a quiet spell waits for it
                watched = self._watcher is not None and self._watcher.is_alive()
                if self._changed.is_set() or not watched:
                    self._changed.clear()  # before the walk: a change during it asks for another
                    with self.writing():
                        self.memory.refresh(force=True)
            except Exception as exc:  # the calls still answer, from the index as it is
                log.warning("reconciling the index failed (%s: %s)", type(exc).__name__, exc)
                self._changed.set()  # tried again at the next turn
            with self._walked:
                self._walk_began = began
                self._walked.notify_all()
            self._stopping.wait(max(0.0, self.interval_s - (time.monotonic() - began)))
