"""Whoosh's sorted runs, written and read a batch at a time.

A Whoosh writer gathers every posting (field, term, document, weight, value) of what it indexes in
a pool, and when the pool outgrows `limitmb` it sorts it and writes it to disk as a *run*; at the
commit the runs are merged back in term order. Whoosh writes a run one posting per `pickle.dump`
and reads it back one `pickle.load` at a time: in a large build every posting goes to a run
and back, and a Python call per posting is a large share of the build's CPU (docs/benchmarks.md,
"Speed").

`BatchedPostingPool` is Whoosh's pool with its two run methods replaced: a run is a sequence of
pickled lists of up to `BATCH` postings. Everything else is Whoosh's own: the same size estimate
decides when a run is written (so a build holds no more postings in memory than before), the
same runs are merged in the same order, and the index written is the same, posting for posting.
A reader still accepts Whoosh's one-posting-per-pickle runs, so a run written by a stock pool
(a sub-writer started without this module, e.g. under the spawn start method) is read correctly.

Whoosh's `SegmentWriter` makes its pool from the module-level name `whoosh.writing.PostingPool`
(its `poolclass` argument is accepted and ignored, in whoosh3 and 2.7.4 alike), so `install()`
points that name at this class. The index module calls it once when it is imported; the
sub-writers of a multi-process build are forked from that process and inherit it. A Whoosh
without these names (whoosh_internals.py checks them) keeps its own pool, and an error is logged.
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

import whoosh.writing

from brainiac.search import whoosh_internals

# Postings per pickled batch: large enough that pickle's per-call cost vanishes, small enough
# that a merge of Whoosh's maximum of 128 open runs holds one batch of each, ~128 × 1,024
# postings.
BATCH = 1024


# Whoosh's pool, or a stand-in base when Whoosh has renamed it (then `install` does nothing).
_WhooshPool: Any = getattr(whoosh.writing, "PostingPool", object)


class BatchedPostingPool(_WhooshPool):  # type: ignore[misc]
    """Whoosh's posting pool, its runs pickled `BATCH` postings at a time."""

    def _write_run(self, f: BinaryIO, items: Iterable[Any]) -> None:
        source = iter(items)
        while batch := list(itertools.islice(source, BATCH)):
            pickle.dump(batch, f, pickle.HIGHEST_PROTOCOL)
        f.close()

    def _read_run(self, path: str) -> Iterator[Any]:
        f = self._open_run(path)
        try:
            while True:
                try:
                    batch = pickle.load(f)
                except EOFError:
                    return
                if isinstance(batch, list):
                    yield from batch
                else:  # a posting (a tuple) from a stock pool's run
                    yield batch
        finally:
            f.close()
            self._remove_run(path)


def install() -> None:
    """Make every Whoosh writer of this process (and of the processes it forks) use the
    batched pool, when Whoosh has the names it replaces and uses."""
    if "batched runs" in whoosh_internals.USABLE:
        whoosh.writing.PostingPool = BatchedPostingPool
