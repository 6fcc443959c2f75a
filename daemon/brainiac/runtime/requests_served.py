"""What the daemon does for other processes that ask it (store/daemon_requests.py): a request
file in the state folder, carried out by the index's owner and answered beside it.

Only `forget` is asked this way (docs/forget.md): a CLI beside a running daemon must not write
the index, so it leaves the request, wakes the daemon and waits for the answer.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import BrainiacError, VaultError
from brainiac.store import daemon_requests

if TYPE_CHECKING:
    from brainiac.api.memory import Memory

log = logging.getLogger(__name__)


def serve(memory: Memory, state_failed: Callable[[OSError, Path], None]) -> bool:
    """Carry out what other processes asked, oldest first; whether any was carried out (the
    status file then says so at once). `state_failed` hears of an answer that could not be
    written."""
    served = False
    for path, request in daemon_requests.pending(memory.locations.state):
        kind = request.get("kind")
        args = request.get("args")
        try:
            if kind != "forget" or not isinstance(args, dict):
                raise VaultError(
                    f"{path}: not a request this daemon carries out ({kind!r}); it is dropped"
                )
            result = _forget(memory, args)
            served = True
        except BrainiacError as exc:
            ok, result, error = False, None, str(exc)
        except Exception as exc:  # a bug: logged whole, the asker gets one line
            log.exception("request %s failed", path.name)
            ok, result, error = False, None, f"the daemon failed to carry it out: {exc}"
        else:
            ok, error = True, ""
        try:
            daemon_requests.answer(path, ok, result, error)
        except OSError as exc:
            state_failed(exc, path)
    return served


def _forget(memory: Memory, args: dict[str, object]) -> dict[str, object]:
    from brainiac.exchange.forget.selection import Selection

    selection = Selection.from_args(args)
    report = memory.forget(selection, now=clock.now())
    log.info("forget %s, asked by another process: %s", report.selection, report.counts())
    return report.as_json()
