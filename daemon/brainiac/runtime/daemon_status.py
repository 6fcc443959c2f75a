"""What the running daemon says about itself: daemon.json in the state folder, systemd's STATUS=.

`brainiac status`, the MCP server and a process asking the daemon for something read the file
(daemon_requests.py names it); systemd shows the line. An idle daemon rewrites it only once a
minute. What is counted (`Counters`) is counted by the daemon's loop (service.py); what is in
trouble is resource_faults.py's.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from brainiac.runtime import systemd
from brainiac.store import safe_io
from brainiac.store.daemon_requests import STATUS_FILE

if TYPE_CHECKING:
    from brainiac.api.memory import Memory
    from brainiac.runtime.embedder import Embedder
    from brainiac.runtime.resource_faults import ResourceFaults
    from brainiac.runtime.scheduler import Scheduler
    from brainiac.runtime.watcher import ChangeTracker, Watcher

_STATUS_HEARTBEAT_S = 60.0


@dataclass
class Counters:
    """What the daemon's loop counts and when things last happened, for the status file."""

    started: float = field(default_factory=time.time)
    last_reconcile: float | None = None
    syncs: int = 0
    jobs_run: int = 0
    working_memory_writes: int = 0
    conflicts: set[str] = field(default_factory=set)
    last_change: float = field(default_factory=time.monotonic)


class StatusFile:
    """The daemon's status file and STATUS= line, for one vault's daemon."""

    def __init__(
        self,
        memory: Memory,
        faults: ResourceFaults,
        counters: Counters,
        environ: dict[str, str],
    ) -> None:
        self.memory = memory
        self.environ = environ
        self._faults = faults
        self._counters = counters
        self._last: tuple[tuple[object, ...], float] = ((), -float("inf"))
        self.embedder: Embedder | None = None  # the daemon's, once it runs (embedder.py)

    def line(self) -> str:
        manifest = self.memory.indexer.manifest  # counted, not read row by row (manifest.py)
        line = (
            f"{manifest.count()} files indexed, {len(manifest.problems)} skipped, "
            f"{len(self._counters.conflicts)} conflicts"
        )
        for what, trouble in sorted(self._faults.troubles.items()):
            line += f"; {what} not writable: {trouble.problem} (see the log)"
        return line

    def write(
        self,
        tracker: ChangeTracker,
        scheduler: Scheduler | None,
        watcher: Watcher | None,
        takes_requests: bool,
        stopping: bool = False,
        force: bool = False,
    ) -> bool:
        # An idle daemon must cost nothing measurable: rewrite the status only when something
        # happened since the last write, or once a minute (so `status` can tell it is alive).
        # Recall by meaning as far as the embedder has got (None: off, or no model).
        embedder = self.embedder
        meaning = dict(embedder.semantic.stats()) if embedder is not None else None
        stamp = (
            self._counters.syncs,
            self._counters.working_memory_writes,
            self._counters.jobs_run,
            len(self._counters.conflicts),
            tracker.pending(),
            meaning and meaning["pending"],
            tuple(sorted((k, t.problem) for k, t in self._faults.troubles.items())),
            stopping,
        )
        now = time.monotonic()
        if not force and stamp == self._last[0] and now - self._last[1] < _STATUS_HEARTBEAT_S:
            return True
        self._last = (stamp, now)
        manifest = self.memory.indexer.manifest  # counted, not read row by row (manifest.py)
        problems = manifest.problems
        next_runs = scheduler.next_runs() if scheduler else {}
        data = {
            "pid": os.getpid(),
            "started": self._counters.started,
            "stopping": stopping,
            "updated": time.time(),
            "last_reconcile": self._counters.last_reconcile,
            "files_indexed": manifest.count() - len(problems),
            "pending_changes": tracker.pending(),
            "syncs": self._counters.syncs,
            "working_memory_writes": self._counters.working_memory_writes,
            "conflicts": sorted(self._counters.conflicts),
            "problems": problems,
            "next_runs": {k: v.isoformat() if v else None for k, v in next_runs.items()},
            "watcher_alive": bool(watcher and watcher.is_alive()),
            "watcher_polling": bool(watcher and watcher.polling),
            "troubles": {k: t.message for k, t in sorted(self._faults.troubles.items())},
            "requests": takes_requests,
            # recall by meaning (semantic.py): how far the embedder is; None when it is off
            "meaning": meaning,
        }
        path = self.memory.locations.state / STATUS_FILE
        try:
            safe_io.replace_file(path, json.dumps(data, indent=1).encode("utf-8"))
        except OSError as exc:
            self._last = ((), -float("inf"))  # write it at the next chance
            self._faults.state_failed(exc, path)
            written = False
        else:
            written = True
        if not stopping:
            systemd.notify(f"STATUS={self.line()}", environ=self.environ)
        return written
