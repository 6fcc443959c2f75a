"""The daemon's Unix socket: where the CLI's fast path asks it (the client is daemon_socket.py).

The socket is `<runtime>/daemon.sock`, mode 0600, in the runtime folder, which must belong to
the daemon's user and is made owner-only. Each connection is checked before anything is read:
the kernel's SO_PEERCRED names the uid of the process that connected, and any uid other than the
daemon's own is closed without an answer (one line in the log). So another user cannot read
this user's memory, even through a folder made reachable by mistake.

One accepting thread, and one short-lived thread per connection (at most `MAX_CLIENTS` at a
time; past that a connection is closed at once and the client answers in its own process). A
request is one JSON line of at most `MAX_REQUEST_BYTES`; whatever arrives (too long, not JSON,
not an object, an unknown command, a failure while answering) gets an error answer or is
closed, and the daemon goes on.

A second daemon never takes a live socket: the instance lock keeps a second daemon from getting
this far, and a socket file that still answers is left alone even so. A file nobody answers on
is the leftover of a killed daemon, and is replaced. On stop the file is removed if it is still
the one this server bound.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import stat
import struct
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brainiac.core.errors import VaultError
from brainiac.runtime.daemon_socket import (
    CLOSED,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    TOO_LONG,
    connectable,
    read_line,
    socket_path,
)

log = logging.getLogger(__name__)

MAX_CLIENTS = 8
_READ_TIMEOUT_S = 2.0  # a client that connects and says nothing holds a thread this long
_JOIN_S = 5.0
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid

Respond = Callable[[dict[str, Any]], dict[str, Any]]


class SocketServer:
    """Answers requests on `<runtime_dir>/daemon.sock` with `respond(request) -> answer`."""

    def __init__(self, runtime_dir: Path, respond: Respond) -> None:
        self.path = Path(socket_path(str(runtime_dir)))
        self._respond = respond
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._slots = threading.BoundedSemaphore(MAX_CLIENTS)
        self._handlers: set[threading.Thread] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.counts = {"answered": 0, "refused": 0, "malformed": 0, "busy": 0, "failed": 0}

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Bind and listen; VaultError (one line) when the folder or the path cannot be used."""
        _owner_only(self.path.parent)
        _claim(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        address, fd = connectable(str(self.path))
        try:
            listener.bind(address)
            os.chmod(self.path, 0o600)  # the folder is owner-only already; the file says so too
            st = os.stat(self.path)
            listener.listen(MAX_CLIENTS)
        except OSError:
            listener.close()
            raise
        finally:
            if fd is not None:
                os.close(fd)
        self._inode = (st.st_dev, st.st_ino)
        self._listener = listener
        self._thread = threading.Thread(target=self._accept, name="brainiac-socket", daemon=True)
        self._thread.start()
        log.info("answering the CLI on %s", self.path)

    def stop(self) -> None:
        """Stop accepting, let answers in progress finish (bounded), remove the socket file."""
        self._stopping.set()
        if self._listener is not None:
            # shutdown wakes the accept() blocked in the other thread; close alone would not
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)
            self._listener.close()
        if self._thread is not None:
            self._thread.join(timeout=_JOIN_S)
        with self._lock:
            handlers = list(self._handlers)
        for thread in handlers:
            thread.join(timeout=_JOIN_S)
        self._remove_file()

    def _remove_file(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) == self._inode:  # ours: not one a later daemon bound
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)

    # -- connections -----------------------------------------------------------------------------
    def _accept(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except OSError:
                if self._stopping.is_set():
                    return
                # ECONNABORTED (that client is gone) or EMFILE (no fd left): not in a busy loop
                self._stopping.wait(0.05)
                continue
            if not self._slots.acquire(blocking=False):
                self._count("busy")
                conn.close()  # the client answers in its own process
                continue
            thread = threading.Thread(
                target=self._serve, args=(conn,), name="brainiac-socket-client", daemon=True
            )
            with self._lock:
                self._handlers.add(thread)
            try:
                thread.start()
            except RuntimeError:  # no thread can be started now: the client answers itself
                with self._lock:
                    self._handlers.discard(thread)
                self._slots.release()
                conn.close()

    def _serve(self, conn: socket.socket) -> None:
        try:
            with conn:
                if not self._peer_allowed(conn):
                    return
                conn.settimeout(_READ_TIMEOUT_S)
                answer = self._answer(_read_request(conn))
                conn.sendall(json.dumps(answer).encode("utf-8") + b"\n")
        except OSError as exc:  # the client went away (timed out, killed): its loss only
            log.debug("socket client gone: %s", exc)
        finally:
            self._slots.release()
            with self._lock:
                self._handlers.discard(threading.current_thread())

    def _peer_allowed(self, conn: socket.socket) -> bool:
        pid, uid, _gid = _UCRED.unpack(
            conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, _UCRED.size)
        )
        if uid == os.geteuid():
            return True
        self._count("refused")
        log.warning(
            "%s: refused a connection from uid %d (pid %d): only the daemon's own user may ask "
            "it; check who can reach this folder",
            self.path,
            uid,
            pid,
        )
        return False

    def _answer(self, raw: bytes | str) -> dict[str, Any]:
        if isinstance(raw, str):  # what was wrong with the bytes
            self._count("malformed")
            return {"v": PROTOCOL, "error": raw}
        try:
            request = json.loads(raw)
        except (ValueError, RecursionError) as exc:  # RecursionError: "[[[[..." nested deep
            self._count("malformed")
            return {"v": PROTOCOL, "error": f"the request is not JSON ({exc})"}
        if not isinstance(request, dict):
            self._count("malformed")
            return {"v": PROTOCOL, "error": "the request is not a JSON object"}
        if request.get("v") != PROTOCOL:
            self._count("malformed")
            return {"v": PROTOCOL, "error": f"protocol {request.get('v')!r} is not {PROTOCOL}"}
        if request.get("command") == "stats":
            with self._lock:
                return {"v": PROTOCOL, "pid": os.getpid(), "stats": dict(self.counts)}
        try:
            answer = self._respond(request)
        except Exception as exc:  # a bug or a fault while answering: the client answers itself
            self._count("failed")
            log.warning(
                "socket: answering %r failed (%s: %s)",
                request.get("command"),
                type(exc).__name__,
                exc,
            )
            return {"v": PROTOCOL, "fallback": f"the daemon failed ({type(exc).__name__})"}
        if "error" in answer:
            self._count("malformed")
        elif "parts" in answer:  # not a fallback, nor a request for the client's stdin
            self._count("answered")
        return {"v": PROTOCOL, **answer}

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1


def _read_request(conn: socket.socket) -> bytes | str:
    """The request line, or (a str) what was wrong with it."""
    try:
        line = read_line(conn, MAX_REQUEST_BYTES)
    except TimeoutError:
        return f"no whole request line within {_READ_TIMEOUT_S:g} s"
    if line == CLOSED:
        return "the connection closed before a whole request line"
    if line == TOO_LONG:
        return f"the request is over {MAX_REQUEST_BYTES} bytes"
    return line


def _owner_only(folder: Path) -> None:
    """The runtime folder must be this user's; it is made 0700 if it was wider."""
    st = os.stat(folder)
    if st.st_uid != os.geteuid():
        raise VaultError(
            f"{folder}: belongs to uid {st.st_uid}, not to this user; brainiac puts no socket "
            "there (the CLI answers in its own process); remove the folder and restart"
        )
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)


def _claim(path: Path) -> None:
    """Make room for the socket: a live one is refused, a stale one removed."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISSOCK(st.st_mode):
        raise VaultError(
            f"{path}: is not a socket; brainiac does not replace it (the CLI answers in its own "
            "process); remove it and restart the daemon"
        )
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
    address, fd = connectable(str(path))
    try:
        probe.settimeout(0.5)
        probe.connect(address)
    except OSError:
        os.unlink(path)  # refused: nobody listens, a killed daemon's leftover
        log.info("%s: removed the socket a stopped daemon left", path)
        return
    finally:
        probe.close()
        if fd is not None:
            os.close(fd)
    raise VaultError(
        f"{path}: another process answers on this socket; stop the other brainiac daemon "
        "(`brainiac status` names it)"
    )
