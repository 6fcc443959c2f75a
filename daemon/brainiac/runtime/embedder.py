"""The daemon's thread that makes the vectors of new events (search/semantic.py).

Making a vector is the daemon's costliest work by far (docs/benchmarks.md, "Ingest": minutes of
a core for a 10,000-note vault): a burst of imported messages, or a first start on a large
vault, must not hold up an edit's path, the daemon's start or an agent's call. So the writer
loop only indexes, and wakes this thread after each sync; it embeds in short batches (the
semantic index's lock is held only to take a batch and to add its vectors, so contexts are
assembled meanwhile with the vectors there are), saves the vectors once it has caught up, and
says so (the working memory is then ranked again, when idle).

A large fill (a first start on a large vault) is made in a child process instead
(search/fill_beside.py), so the model's temporaries never swell the daemon's heap: this thread
only starts it, follows the vectors it commits, and takes the files back once it exits; what is
left then (events indexed meanwhile) is embedded here, as an edit's few are.

Calls answered over the socket come first: while one is being answered (`answering`), no next
batch starts, so the call has the interpreter and the cores to itself but for the end of the
batch already running. A steady stream of calls still lets a batch through every
`_YIELD_AT_MOST_S`, so the vectors are made in the end whatever the traffic.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

from brainiac.search.fill_beside import FILL_BESIDE_FROM, FOLLOW_EVERY_S, FillBeside

if TYPE_CHECKING:
    from brainiac.search.semantic import SemanticIndex

log = logging.getLogger(__name__)

_SLICE_S = 0.5  # between looks at the stop flag (a batch may run past it)
_STOP_WAIT_S = 10.0
# The longest a batch waits for the calls being answered: a call is short, so only calls one
# after another without a pause keep a batch waiting this long, and the fill still advances.
_YIELD_AT_MOST_S = 2.0


class Embedder:
    """One thread: `wake()` after the index changed; `stop()` to end it; each call answered
    meanwhile inside `answering()`."""

    def __init__(
        self,
        semantic: SemanticIndex,
        on_caught_up: Callable[[int], None],
        beside: Callable[[], FillBeside] | None = None,
    ) -> None:
        self.semantic = semantic
        # Starts a large fill in a child process (fill_beside.py); None: every fill is made here.
        self._start_beside = beside
        self.filling: FillBeside | None = None  # the child filling now
        self._beside_failed = False  # a child failed: this daemon fills in its own process
        self._before = 0  # the vectors there were when the child started
        self._on_caught_up = on_caught_up  # told how many vectors were made, once none is left
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._calls = 0  # calls being answered now (see answering)
        self.held = False  # a batch waits for the calls being answered now
        self._calls_done = threading.Condition()
        self._thread = threading.Thread(target=self._run, name="brainiac-embedder", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._wake.set()  # what the start's reconcile found

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        with self._calls_done:
            self._calls_done.notify_all()
        self._thread.join(timeout=_STOP_WAIT_S)
        if self._thread.is_alive():
            log.warning("the embedder did not stop within %.0f s", _STOP_WAIT_S)
        elif self.filling is not None:  # what it committed stays; the next start goes on
            self.filling.end()
            self.filling = None

    @contextlib.contextmanager
    def answering(self) -> Iterator[None]:
        """Around a call's answer (any thread): no batch starts until it is given."""
        with self._calls_done:
            self._calls += 1
        try:
            yield
        finally:
            with self._calls_done:
                self._calls -= 1
                if not self._calls:
                    self._calls_done.notify_all()

    def _after_calls(self) -> None:
        """Wait, before a batch, until no call is being answered (at most _YIELD_AT_MOST_S)."""
        with self._calls_done:
            self.held = bool(self._calls)
            self._calls_done.wait_for(
                lambda: not self._calls or self._stop.is_set(), timeout=_YIELD_AT_MOST_S
            )
            self.held = False

    def _beside(self) -> int | None:
        """A fill in a child process: started when many events wait, followed while it runs.
        None while it runs; otherwise how many vectors it made (0 when there was none)."""
        semantic = self.semantic
        if self.filling is None:
            if (
                self._start_beside is None
                or self._beside_failed
                or semantic.pending < FILL_BESIDE_FROM
            ):
                return 0
            semantic.hand_over()
            try:
                self.filling = self._start_beside()
            except OSError as exc:
                log.warning("the vectors are made in the daemon: no child process (%s)", exc)
                self._beside_failed = True
                semantic.take_back()
                return 0
            self._before = semantic.stats()["vectors"]
            log.info("making %d events' vectors in process %d", semantic.pending, self.filling.pid)
            return None
        semantic.follow_beside()
        if not self.filling.done():
            return None
        failure = self.filling.failure()
        self.filling = None
        semantic.take_back()
        if failure:
            log.warning("%s; the rest are made in the daemon's process", failure)
            self._beside_failed = True
        return max(0, semantic.stats()["vectors"] - self._before)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(timeout=FOLLOW_EVERY_S if self.filling is not None else None)
            self._wake.clear()
            made = 0
            try:
                beside = self._beside()
                if beside is None:
                    continue  # the child still fills: followed at the next look
                made = beside
                while not self._stop.is_set():
                    done = self.semantic.fill(seconds=_SLICE_S, before_batch=self._after_calls)
                    made += done
                    if not done:
                        break
                if made:
                    self.semantic.save()
            except Exception:  # a failure here must not end the thread: words still work
                log.exception("making the events' vectors failed; trying again at the next change")
                continue
            if made and not self._stop.is_set():
                self._on_caught_up(made)
