"""Recall by meaning in a process beside the daemon (`brainiac serve --http`, `brainiac mcp`):
the daemon's vectors, read, never written.

The daemon owns the index and the events' vectors (semantic.py, vector_store.py): it embeds
every event and commits the vectors. A process beside it reads its index already; this module
lets it read the vectors too, so its contexts rank by meaning as the daemon's do. Only the
prompt is embedded here (the sentence model is loaded in this process for that).

What is followed, before each read (`catch_up`, after the index's own catch-up):

- the vectors: the daemon's latest commit of them, when their table changed (a stat when it
  did not); an event the daemon has not embedded yet is found by its words, as in the daemon;
- which events exist, for the nearness is by event: read from the index a segment at a time.
  A segment is immutable but for deletions, so only segments new since the last look are read
  (a remember adds a small one); the index's first segments once, at the first context. An
  event deleted from a segment that stays (a note edited, then reindexed) keeps its place in
  the comparison until the daemon merges that segment away; its key then finds no document, so
  it lifts nothing.
"""

from __future__ import annotations

import itertools
import logging
import threading
from array import array
from pathlib import Path

from brainiac.search import semantic as semantic_mod
from brainiac.search.index import Index

log = logging.getLogger(__name__)

# A segment's events: their keys, the digests of their texts (in the same order) and the roles
# that speak in them: arrays, not a tuple an event (hundreds of thousands of them).
_Events = tuple[list[str], "array[int]", set[str]]


class DaemonVectors:
    """The daemon's vectors for the events of `index` (a reader of the daemon's index)."""

    def __init__(self, index: Index, folder: Path) -> None:
        self.index = index
        self.semantic = semantic_mod.SemanticIndex(folder, read_only=True)
        self._segments: dict[str, _Events] = {}  # segment id -> its events, when first read
        self._order: list[str] = []
        self._lock = threading.Lock()  # one catch-up at a time: reads run side by side

    @classmethod
    def attached(cls, index: Index, folder: Path) -> DaemonVectors | None:
        """None when the model cannot be had (semantic.py has logged why)."""
        reader = cls(index, folder)
        if not reader.semantic.available:
            return None
        reader.catch_up()
        return reader

    def catch_up(self, index_changed: bool = True) -> None:
        """The daemon's latest vectors and, when the index's searcher changed (or may have),
        its events as the searcher has them now."""
        with self._lock:
            if not index_changed and self._order:
                self.semantic.follow(None, ())
                return
            order, read = self.index.segment_events(self._segments.keys())
            if order == self._order:
                self.semantic.follow(None, ())
                return
            for segment, events in read.items():
                digests = (semantic_mod.text_digest(text) for _, text, _ in events)
                self._segments[segment] = (
                    [key for key, _, _ in events],
                    array("Q", digests),
                    {role for _, _, role in events if role},
                )
            self._segments = {s: self._segments[s] for s in order}
            self._order = order
            every = self._segments.values()
            self.semantic.follow(
                itertools.chain.from_iterable(
                    zip(keys, digests, strict=True) for keys, digests, _ in every
                ),
                set().union(*(roles for _, _, roles in every)),
            )

    def close(self) -> None:
        self.semantic.close()
