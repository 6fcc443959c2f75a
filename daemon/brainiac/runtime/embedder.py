"""The daemon's thread that makes the vectors of new events (search/semantic.py).

The sentence model embeds about 100 events a second on one core: a burst of imported messages,
or the first start on a 10,000-note vault (44,854 events, about 8 minutes), must not hold up an
edit's path or the daemon's start. So the writer loop only indexes, and wakes this thread after
each sync; it embeds in short slices (the semantic index's lock is held only to take a batch and
to add its vectors, so contexts are assembled meanwhile with the vectors there are), saves the
vectors once it has caught up, and says so (the working memory is then ranked again, when idle).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from brainiac.search.semantic import SemanticIndex

log = logging.getLogger(__name__)

_SLICE_S = 0.5  # between looks at the stop flag (a batch may run past it: about 0.6 s)
_STOP_WAIT_S = 10.0


class Embedder:
    """One thread: `wake()` after the index changed; `stop()` to end it."""

    def __init__(self, semantic: SemanticIndex, on_caught_up: Callable[[int], None]) -> None:
        self.semantic = semantic
        self._on_caught_up = on_caught_up  # told how many vectors were made, once none is left
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="brainiac-embedder", daemon=True)

    def start(self) -> None:
        self._thread.start()
        self._wake.set()  # what the start's reconcile found

    def wake(self) -> None:
        self._wake.set()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=_STOP_WAIT_S)
        if self._thread.is_alive():
            log.warning("the embedder did not stop within %.0f s", _STOP_WAIT_S)

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            made = 0
            try:
                while not self._stop.is_set():
                    done = self.semantic.fill(seconds=_SLICE_S)
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
