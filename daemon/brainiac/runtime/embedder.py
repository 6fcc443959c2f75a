"""The daemon's thread that makes the vectors of new events (search/semantic.py).

Making a vector is the daemon's costliest work by far (docs/benchmarks.md, "Ingest": minutes of
a core for a 10,000-note vault): a burst of imported messages, or a first start on a large
vault, must not hold up an edit's path, the daemon's start or an agent's call. So the writer
loop only indexes, and wakes this thread after each sync; it embeds in short batches (the
semantic index's lock is held only to take a batch and to add its vectors, so contexts are
assembled meanwhile with the vectors there are), saves the vectors once it has caught up, and
says so (the working memory is then ranked again, when idle).

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

    def __init__(self, semantic: SemanticIndex, on_caught_up: Callable[[int], None]) -> None:
        self.semantic = semantic
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

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            made = 0
            try:
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
