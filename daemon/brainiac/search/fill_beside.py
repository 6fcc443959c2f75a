"""A large fill of the events' vectors (a first start on a large vault) in a child process.

Making the vectors is minutes of a core for a large vault (docs/benchmarks.md, "Ingest"), and the
model's temporaries, made in the daemon, would stay in its heap: the daemon is resident all day,
and its memory must not grow with one start's work. So when many events wait for their vector,
the daemon's embedder (runtime/embedder.py) runs this module as a child process (`python -m
brainiac.search.fill_beside INDEX_DIR VECTORS_DIR PARENT_PID`), niced, as the index's merge
beside the writer is run (index_merge.py):

1. The daemon commits the vectors it has and hands the vectors' files over
   (`SemanticIndex.hand_over`): from then on it only reads them, as a server beside it does
   (vector_store.py's `read_only`), and keeps answering with the vectors there are.
2. The child opens the index read-only, learns every event from it, and embeds those without a
   vector in short slices, the texts read back from the index a batch at a time; each slice's
   vectors are committed (vector_store.py: written, synced, then counted in the header), so a
   kill loses at most the slice in flight. A row is stored under the digest of the very text it
   was made from, so no vector is ever paired with another event's text.
3. The daemon follows the child's commits every `FOLLOW_EVERY_S` (a stat when nothing changed),
   never waiting for the child, and takes the files back once it has exited
   (`SemanticIndex.take_back`): whatever is still missing (events indexed meanwhile, a slice a
   kill lost) is embedded in the daemon's own process, as after an edit.

The child ends with its parent: the kernel kills it when the daemon goes (Linux's parent-death
signal), and it looks at its parent before each slice besides. A daemon that starts again finds
the vectors committed so far and a fill that resumes where it stopped.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from brainiac.core.child_process import ChildProcess, in_the_background

log = logging.getLogger(__name__)

# Events waiting for their vector from which the daemon fills beside itself: fewer (an edit's, a
# remembered chat's) are embedded in its own process, sooner than a child's model would load.
FILL_BESIDE_FROM = 256
# How often the daemon reads the vectors the child committed meanwhile.
FOLLOW_EVERY_S = 2.0
# The child's slices: each is committed before the next starts, so a kill loses at most one.
_SLICE_S = 2.0
_PR_SET_PDEATHSIG = 1


class FillBeside(ChildProcess):
    """One fill beside the daemon: its child process, until it exits."""

    def __init__(self, index_dir: Path, folder: Path) -> None:
        self.folder = folder
        super().__init__(__name__, [str(index_dir), str(folder), str(os.getpid())])

    def failure(self) -> str:
        """Once `done`: empty when the child filled every vector it found, else why not."""
        why = self.outcome()[1]
        return f"{self.folder}: the fill beside the daemon failed ({why})" if why else ""


def _end_with_parent() -> None:
    """Ask the kernel to kill this process when its parent goes (Linux; elsewhere the look at
    the parent before each slice does it)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def fill(index_dir: Path, folder: Path, parent: int) -> int:
    """The child's work: every indexed event's vector that `folder` lacks, committed a slice at a
    time; how many were made. Stops early when `parent` is no longer its parent."""
    from brainiac.search.index import Index
    from brainiac.search.semantic import SemanticIndex

    index = Index(index_dir, writable=False)

    def texts_of(keys: list[str]) -> Mapping[str, str]:
        # A segment the daemon merged away meanwhile: its files may be gone; its documents are
        # in the segment that replaced it.
        try:
            return index.event_texts(keys)
        except Exception:
            index.catch_up()
            return index.event_texts(keys)

    semantic = SemanticIndex(folder, texts_of=texts_of)
    made = 0
    try:
        if not semantic.available:
            raise RuntimeError(semantic.unavailable)
        semantic.known(index.each_event())
        while os.getppid() == parent:
            done = semantic.fill(seconds=_SLICE_S)
            semantic.save(compact=False)
            made += done
            if not done:
                break
    finally:
        semantic.close()
        index.close()
    return made


def main(argv: Sequence[str]) -> int:
    index_dir, folder, parent = argv
    _end_with_parent()
    in_the_background()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    fill(Path(index_dir), Path(folder), int(parent))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
