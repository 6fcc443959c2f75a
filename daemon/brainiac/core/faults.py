"""Fault points: named instants at which a test can make this process die, as a crash would.

`BRAINIAC_FAULT=import.events-written` in the environment makes the process SIGKILL itself when it
reaches that point, so a test can stop a real subprocess at an exact step of a multi-file write and
check that the next run finishes the work with nothing lost or doubled. Unset (always, outside
tests) a point costs one environment lookup.
"""

from __future__ import annotations

import os

ENV = "BRAINIAC_FAULT"


def point(name: str) -> None:
    if os.environ.get(ENV) == name:
        import signal  # only when it fires: every CLI call would pay for the import

        os.kill(os.getpid(), signal.SIGKILL)
