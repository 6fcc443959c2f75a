"""Asking the running daemon to do what only the index's owner may do (for now: forget).

While `brainiac run` runs, it is the index's one writer, so `forget` (which rebuilds the index)
cannot run in another process. The other process asks the daemon instead:

1. it writes a request, `requests/<id>.json` in the vault's state directory (owner-only, like
   everything there), whole, by rename (safe_io.replace_file);
2. it wakes the daemon with SIGUSR1 (the pid is the instance lock's); the daemon's handler only
   puts a wake-up on its queue, as SIGHUP's does, and its main loop carries the request out;
3. the daemon writes the answer, `requests/<id>.answer.json`, and removes the request; the asker
   reads the answer (waiting for it with a deadline) and removes it.

The daemon also looks for requests when it starts and at every status tick, so a lost signal
only delays one. A daemon says it takes requests in its status file (`"requests": true`, with
its pid): an older daemon, for which SIGUSR1 is fatal, is never sent the signal.

No socket: the state directory's permissions already say who may ask (its owner), and the
request and its answer are plain files a person can read when something goes wrong.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import time
from pathlib import Path
from typing import Any

from brainiac.core.errors import VaultError
from brainiac.store import safe_io

REQUESTS_DIR = "requests"
STATUS_FILE = "daemon.json"  # the daemon's status (daemon_status.py writes it, anyone reads)
WAKE_SIGNAL = signal.SIGUSR1
KINDS = ("forget",)
ANSWER_SUFFIX = ".answer.json"
_POLL_S = 0.05
_UNREAD_ANSWER_S = 86400.0


def read_status(state_dir: Path) -> dict[str, object] | None:
    """The running daemon's status file (daemon_status.py), or None when there is none readable.
    Here, not in service.py, so that a reader does not import the daemon with it."""
    try:
        data = json.loads((state_dir / STATUS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def daemon_takes_requests(state: Path, pid: int) -> bool:
    """Whether the daemon with `pid` says, in its status file, that it takes requests."""
    data = read_status(state)
    return data is not None and data.get("pid") == pid and data.get("requests") is True


def ask(state: Path, pid: int, kind: str, args: dict[str, Any], timeout_s: float) -> Any:
    """Ask the daemon `pid` to carry out `kind` with `args`; returns its answer's `result`.

    VaultError (one line) when the daemon answers with an error, or does not answer in time
    (the request then stays queued and the daemon still carries it out).
    """
    folder = state / REQUESTS_DIR
    ident = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(4)}"
    request = folder / f"{ident}.json"
    answer_path = folder / f"{ident}{ANSWER_SUFFIX}"
    payload = {"kind": kind, "args": args, "asked_by": os.getpid()}
    safe_io.replace_file(request, json.dumps(payload).encode("utf-8"))
    try:
        os.kill(pid, WAKE_SIGNAL)
    except ProcessLookupError:
        request.unlink(missing_ok=True)
        raise VaultError(
            f"the daemon (pid {pid}) stopped before it could be asked; run the command again"
        ) from None
    deadline = time.monotonic() + timeout_s
    while not answer_path.exists():
        if time.monotonic() >= deadline:
            raise VaultError(
                f"the daemon (pid {pid}) has not answered within {timeout_s:g} s; it has the "
                f"request ({request}) and carries it out: look again in a minute"
            )
        time.sleep(_POLL_S)  # the daemon's answer is a rename: there when it is whole
    try:
        answer = json.loads(answer_path.read_text(encoding="utf-8"))
    finally:
        answer_path.unlink(missing_ok=True)
    if not isinstance(answer, dict) or not answer.get("ok"):
        error = answer.get("error") if isinstance(answer, dict) else None
        raise VaultError(str(error or f"the daemon (pid {pid}) could not carry out {kind}"))
    return answer.get("result")


def pending(state: Path) -> list[tuple[Path, dict[str, Any]]]:
    """The requests waiting for the daemon, oldest first: (path, request). A file that is not a
    request (unreadable, not JSON) is answered with an error by `answer_unreadable`."""
    folder = state / REQUESTS_DIR
    try:
        listed = os.listdir(folder)
    except FileNotFoundError:
        return []
    names = sorted(n for n in listed if n.endswith(".json") and not n.endswith(ANSWER_SUFFIX))
    for name in listed:
        if name.endswith(ANSWER_SUFFIX):
            # An answer nobody read (the asker gave up or was killed) goes after a day.
            with contextlib.suppress(OSError):
                if time.time() - (folder / name).stat().st_mtime > _UNREAD_ANSWER_S:
                    (folder / name).unlink()
    out = []
    for name in names:
        path = folder / name
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            data = None
        if not isinstance(data, dict):
            data = {"kind": None, "args": {}}
        out.append((path, data))
    return out


def answer(request: Path, ok: bool, result: Any = None, error: str = "") -> None:
    """Write the answer to `request` (whole, by rename), then remove the request."""
    body = {"ok": ok, "result": result, "error": error}
    target = request.with_name(request.name[: -len(".json")] + ANSWER_SUFFIX)
    safe_io.replace_file(target, json.dumps(body, default=str).encode("utf-8"))
    with contextlib.suppress(FileNotFoundError):
        request.unlink()
