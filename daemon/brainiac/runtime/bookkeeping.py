"""Work an answer need not wait for, done in order on one thread of the daemon.

Each context the daemon assembles for a client records which notes it used (access.jsonl, and
last_context.json, which is written with an fsync): the client has its answer before that is
on disk. One thread, so the writes keep the order of the answers (the newest context is the
last one written) and two never race for the same temporary file. On stop, what was handed over
is done before the thread ends; what is handed over after that is done at once, by the caller.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

_JOIN_S = 10.0

Work = Callable[[], None]


class Bookkeeper:
    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Work | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="brainiac-bookkeeping", daemon=True)
        self._thread.start()

    def later(self, work: Work) -> None:
        """Do `work` after the answer in progress: on this thread's turn, or now if stopped."""
        with self._lock:
            if self._thread is not None:
                self._queue.put(work)
                return
        _do(work)

    def stop(self) -> None:
        """Finish what was handed over, then end the thread."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=_JOIN_S)

    def _run(self) -> None:
        while (work := self._queue.get()) is not None:
            _do(work)


def _do(work: Work) -> None:
    try:
        work()
    except Exception as exc:  # bookkeeping must never stop the daemon
        log.warning("bookkeeping failed (%s: %s)", type(exc).__name__, exc)
