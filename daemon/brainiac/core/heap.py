"""The process's heap: freed pages handed back to the system.

glibc keeps the pages a long-lived process freed for its next allocations, so a large commit's
postings, a large sync's documents, a job's files or a fill's texts would stay resident in the
daemon after the work that needed them. Elsewhere than glibc, nothing is done.
"""

from __future__ import annotations

import contextlib
import ctypes


def release_freed_memory() -> None:
    """Hand the heap's freed pages back to the system (glibc's `malloc_trim`)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
