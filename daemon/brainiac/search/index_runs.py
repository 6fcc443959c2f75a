"""Whoosh's sorted runs, written and read a batch at a time.

A Whoosh writer gathers every posting (field, term, document, weight, value) of what it indexes in
a pool, and when the pool outgrows `limitmb` it sorts it and writes it to disk as a *run*; at the
commit the runs are merged back in term order. Whoosh writes a run one posting per `pickle.dump`
and reads it back one `pickle.load` at a time: in a large build every posting goes to a run
and back, and a Python call per posting is a large share of the build's CPU (docs/benchmarks.md,
"Speed").

`BatchedPostingPool` is Whoosh's pool with its runs written and read here: a run is a sequence of
pickled lists of up to `BATCH` postings. Everything else is Whoosh's own: the same size estimate
decides when a run is written (so a build holds no more postings in memory than before), the
same runs are merged in the same order, and the index written is the same, posting for posting.
A reader still accepts Whoosh's one-posting-per-pickle runs, so a run written by a stock pool
(a sub-writer started without this module, e.g. under the spawn start method) is read correctly.

The pool's run methods are private names of Whoosh's, so whoosh_internals.py makes the pool
(`pool_with_runs`) and points every writer at it (`use_pool`); `install()` does that once, when
the index module is imported, and the sub-writers of a multi-process build are forked from that
process and inherit it. A Whoosh without these names (whoosh_internals.py checks them) keeps
its own pool, and an error is logged.
"""

from __future__ import annotations

import itertools
import pickle
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

from brainiac.search import whoosh_internals

# Postings per pickled batch: large enough that pickle's per-call cost vanishes, small enough
# that a merge of Whoosh's maximum of 128 open runs holds one batch of each, ~128 × 1,024
# postings.
BATCH = 1024


def write_run(f: BinaryIO, items: Iterable[Any]) -> None:
    """A run: the postings pickled `BATCH` at a time; the file is closed after."""
    source = iter(items)
    while batch := list(itertools.islice(source, BATCH)):
        pickle.dump(batch, f, pickle.HIGHEST_PROTOCOL)
    f.close()


def read_run(f: BinaryIO) -> Iterator[Any]:
    """The postings of a run, batched or written a posting per pickle by Whoosh's own pool."""
    while True:
        try:
            batch = pickle.load(f)
        except EOFError:
            return
        if isinstance(batch, list):
            yield from batch
        else:  # a posting (a tuple) from a stock pool's run
            yield batch


BatchedPostingPool = whoosh_internals.pool_with_runs("BatchedPostingPool", write_run, read_run)


def install() -> None:
    """Make every Whoosh writer of this process (and of the processes it forks) use the
    batched pool, when Whoosh has the names it replaces and uses."""
    whoosh_internals.use_pool(BatchedPostingPool)
