"""A child process the daemon runs beside itself and looks at between its other work.

Work that would hold the index's writer for long or swell the daemon's heap for good (the copy
of large segments, search/index_merge.py; a first fill of the vectors, search/fill_beside.py)
runs as `python -m MODULE ARGS...` in a child: the daemon asks whether it is `done` without
waiting, reads how it ended once it is, and ends it (`end`) when the daemon stops first.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Sequence

# A child's work is background work: the daemon's answers and edits come first for the cores.
_NICENESS = 10


def in_the_background() -> None:
    """Called first in a child: lower its priority (where the system allows)."""
    with contextlib.suppress(OSError):
        os.nice(_NICENESS)


class ChildProcess:
    """`python -m module args...`, started at once; its stdout kept when `keep_output`, its
    stderr kept for the one line that says why it failed."""

    def __init__(self, module: str, args: Sequence[str], keep_output: bool = False) -> None:
        self._child = subprocess.Popen(
            [sys.executable, "-m", module, *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE if keep_output else subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    @property
    def pid(self) -> int:
        return self._child.pid

    def done(self) -> bool:
        return self._child.poll() is not None

    def outcome(self) -> tuple[bytes, str]:
        """Wait for the child: its output, and why it failed ("exit N: its last line of
        stderr"), empty when it exited 0."""
        out, err = self._child.communicate()
        code = self._child.returncode
        if code == 0:
            return out or b"", ""
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return out or b"", f"exit {code}: {last[0]}"

    def end(self) -> None:
        """Kill the child (if it runs) and wait for it."""
        with contextlib.suppress(OSError):
            self._child.kill()
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            self._child.communicate(timeout=10)
