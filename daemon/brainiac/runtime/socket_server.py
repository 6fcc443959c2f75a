"""The daemon's Unix socket: where the CLI's fast path asks it (the client is daemon_socket.py).

The socket is `<runtime>/daemon.sock`, mode 0600, in the runtime folder, which must belong to
the daemon's user and is made owner-only. Each connection is checked before anything is read:
the kernel's SO_PEERCRED names the uid of the process that connected, and any uid other than the
daemon's own is closed without an answer (one line in the log). So another user cannot read
this user's memory, even through a folder made reachable by mistake.

One thread accepts and reads every connection without blocking (a selector), and `WORKERS`
threads answer the requests it has read whole, in the order they came. A request is one JSON line
of at most `MAX_REQUEST_BYTES`, which must arrive whole within `READ_DEADLINE_S` of the accept
(the monotonic clock, whatever the pace of its bytes): a client that sends a byte now and then
holds no worker and delays nobody, and is closed with an error answer at its deadline. While a
request waits for a worker, its client gets a space every `daemon_socket.HEARTBEAT_S` (JSON
allows white space before a value), so the client waits for a daemon that is alive and busy
instead of answering in its own process; a client that left meanwhile is not answered. At most
`MAX_CONNECTIONS` are held at once; past that a connection is told the daemon is busy and the
client answers in its own process. Whatever arrives (too long, not JSON, not an object, an
unknown command, a failure while answering) gets an error answer or is closed, and the daemon
goes on.

A second daemon never takes a live socket: the instance lock keeps a second daemon from getting
this far, and a socket file that still answers is left alone even so. A file nobody answers on
is the leftover of a killed daemon, and is replaced. On stop the file is removed if it is still
the one this server bound.

Under socket activation (brainiac.socket, systemd.listen_socket) systemd has bound the socket
already and passes it: the server listens on that one, and leaves the file to systemd on stop,
which goes on listening and starts the daemon again at the next call. A passed socket at another
path than this vault's is not used (the CLI would never find it): the server binds its own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import os
import queue
import select
import selectors
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from brainiac.core.errors import VaultError
from brainiac.runtime.daemon_socket import (
    HEARTBEAT_S,
    MAX_REQUEST_BYTES,
    PROTOCOL,
    connectable,
    socket_path,
)

log = logging.getLogger(__name__)

# Answering is mostly Python holding the GIL: more workers would not answer faster, but one slow
# request (a search of a thousand results) should not hold up the hooks queued behind it.
WORKERS = 4
# Connections held at once (being read, waiting, being answered): 50 agents' hooks and searches
# at once fit with room to spare; past this the daemon says it is busy.
MAX_CONNECTIONS = 256
READ_DEADLINE_S = 2.0  # from the accept to the request's last byte
_SEND_DEADLINE_S = 5.0  # for the whole answer: a client that does not read it loses it
_JOIN_S = 5.0
_UCRED = struct.Struct("3i")  # struct ucred: pid, uid, gid
_HEARTBEAT = b" "

Respond = Callable[[dict[str, Any]], dict[str, Any]]


@dataclasses.dataclass(eq=False)
class _Client:
    """One connection, from its accept to its answer."""

    conn: socket.socket
    deadline: float  # monotonic: the whole request must have arrived by then
    chunks: list[bytes] = dataclasses.field(default_factory=list)
    size: int = 0


class SocketServer:
    """Answers requests on `<runtime_dir>/daemon.sock` with `respond(request) -> answer`."""

    def __init__(
        self, runtime_dir: Path, respond: Respond, passed: socket.socket | None = None
    ) -> None:
        self.path = Path(socket_path(str(runtime_dir)))
        self._respond = respond
        self._passed = passed  # systemd's listening socket, when socket-activated
        self._listener: socket.socket | None = None
        self._inode: tuple[int, int] | None = None
        self._thread: threading.Thread | None = None
        self._workers: list[threading.Thread] = []
        self._queue: queue.SimpleQueue[_Client | None] = queue.SimpleQueue()
        self._reading: dict[int, _Client] = {}  # by fd; the selector thread's own
        self._waiting: dict[_Client, bytes] = {}  # read whole, no worker yet: heartbeats
        self._held = 0  # connections accepted and not closed yet
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._wake: tuple[socket.socket, socket.socket] | None = None  # stop() wakes select()
        self._versions_seen: set[str] = set()  # other protocol versions, logged once each
        self.counts = {
            "answered": 0,
            "refused": 0,
            "malformed": 0,
            "busy": 0,
            "failed": 0,
            "gone": 0,
        }

    # -- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Listen and answer; VaultError (one line) when the folder or the path cannot be used."""
        self.listen()
        self.answer()

    def listen(self) -> None:
        """Bind and listen, or take the socket systemd passed, and read the requests: until
        `answer()` they wait (hearing heartbeats) for the workers. VaultError (one line) when the
        folder or the path cannot be used."""
        _owner_only(self.path.parent)
        listener = self._adopt()
        if listener is None:
            listener = self._bind()
        listener.setblocking(False)
        self._listener = listener
        self._wake = socket.socketpair()
        self._thread = threading.Thread(target=self._select, name="brainiac-socket", daemon=True)
        self._thread.start()

    def answer(self) -> None:
        """Start the workers: the requests read so far, and every later one, are answered."""
        self._start_workers()
        log.info("answering the CLI on %s", self.path)

    def _start_workers(self) -> None:
        if self._workers:
            return
        for i in range(WORKERS):
            worker = threading.Thread(target=self._work, name=f"brainiac-socket-{i}", daemon=True)
            worker.start()
            self._workers.append(worker)

    def _adopt(self) -> socket.socket | None:
        """systemd's socket if it is this vault's `daemon.sock`; its file stays systemd's."""
        passed, self._passed = self._passed, None
        if passed is None:
            return None
        name = passed.getsockname()
        try:
            theirs, ours = os.stat(name), os.stat(self.path)
            same = (theirs.st_dev, theirs.st_ino) == (ours.st_dev, ours.st_ino)
        except (OSError, TypeError, ValueError):  # TypeError: an abstract or unnamed socket
            same = False
        if not same:
            log.warning(
                "%r: systemd passed a socket at another path than %s, where the CLI looks; "
                "brainiac binds its own there (run `brainiac service install` again, then "
                "`systemctl --user daemon-reload`)",
                name,
                self.path,
            )
            passed.close()
            return None
        log.info("listening on the socket systemd passed")
        return passed

    def _bind(self) -> socket.socket:
        _claim(self.path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        address, fd = connectable(str(self.path))
        try:
            listener.bind(address)
            os.chmod(self.path, 0o600)  # the folder is owner-only already; the file says so too
            st = os.stat(self.path)
            listener.listen(MAX_CONNECTIONS)
        except OSError:
            listener.close()
            raise
        finally:
            if fd is not None:
                os.close(fd)
        self._inode = (st.st_dev, st.st_ino)  # removed on stop: the file is this server's
        return listener

    def stop(self) -> None:
        """Stop accepting, let answers in progress finish (bounded; a request still waiting is
        told to answer itself), remove the socket file. A second call does nothing."""
        if self._stopping.is_set():
            return
        self._stopping.set()
        if self._wake is not None:
            with contextlib.suppress(OSError):
                self._wake[1].send(b"x")
        if self._thread is not None:
            self._thread.join(timeout=_JOIN_S)
        if self._listener is not None:
            self._listener.close()
        if self._thread is not None:
            self._start_workers()  # stopped before answering: the workers tell the waiting to go
        for _ in self._workers:
            self._queue.put(None)
        for worker in self._workers:
            worker.join(timeout=_JOIN_S)
        if self._wake is not None:
            for end in self._wake:
                end.close()
        self._remove_file()

    def _remove_file(self) -> None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return
        if (st.st_dev, st.st_ino) == self._inode:  # ours: not one a later daemon bound
            with contextlib.suppress(FileNotFoundError):
                os.unlink(self.path)

    # -- accepting and reading (one thread) ------------------------------------------------------
    def _select(self) -> None:
        assert self._listener is not None and self._wake is not None
        selector = selectors.DefaultSelector()
        selector.register(self._listener, selectors.EVENT_READ, None)
        selector.register(self._wake[0], selectors.EVENT_READ, None)
        beat = time.monotonic() + HEARTBEAT_S
        try:
            while not self._stopping.is_set():
                try:
                    beat = self._turn(selector, beat)
                except Exception:  # a bug here must not stop the answers: the next turn goes on
                    log.exception("socket: reading the connections failed")
                    self._stopping.wait(0.05)
        finally:
            for client in list(self._reading.values()):
                self._unwatch(selector, client)
                self._close(client)
            selector.close()

    def _turn(self, selector: selectors.BaseSelector, beat: float) -> float:
        """One wait for connections and bytes, the reads past their deadline cut off, the
        heartbeat when due; the next heartbeat's time."""
        deadlines = [c.deadline for c in self._reading.values()]
        wait = min([beat, *deadlines]) - time.monotonic()
        for key, _ in selector.select(max(wait, 0.0)):
            if key.fileobj is self._listener:
                self._accept(selector)
            elif isinstance(key.data, _Client):
                self._read(selector, key.data)
        now = time.monotonic()
        late = {"error": f"no whole request line within {READ_DEADLINE_S:g} s"}
        for client in [c for c in self._reading.values() if c.deadline <= now]:
            self._unwatch(selector, client)
            self._refuse(client, "malformed", late)
        if now < beat:
            return beat
        self._heartbeat()
        return now + HEARTBEAT_S

    def _accept(self, selector: selectors.BaseSelector) -> None:
        assert self._listener is not None
        while True:
            try:
                conn, _ = self._listener.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as exc:
                # ECONNABORTED (that client is gone) or EMFILE (no fd left): the next select
                # tries again; the clients meanwhile wait in the listen queue or answer themselves
                log.debug("socket: accept failed: %s", exc)
                self._stopping.wait(0.05)  # the listener stays readable: not in a busy loop
                return
            conn.setblocking(False)
            if not self._peer_allowed(conn):
                conn.close()
                continue
            client = _Client(conn, time.monotonic() + READ_DEADLINE_S)
            with self._lock:
                full = self._held >= MAX_CONNECTIONS
                self._held += 1
            if full:
                self._refuse(
                    client,
                    "busy",
                    {"fallback": f"the daemon is busy ({MAX_CONNECTIONS} requests at once)"},
                )
                continue
            self._reading[conn.fileno()] = client
            selector.register(conn, selectors.EVENT_READ, client)

    def _read(self, selector: selectors.BaseSelector, client: _Client) -> None:
        try:
            chunk = client.conn.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as exc:  # the client went away: its loss only
            log.debug("socket client gone: %s", exc)
            self._unwatch(selector, client)
            self._close(client)
            return
        if not chunk:
            self._unwatch(selector, client)
            self._refuse(
                client, "malformed", {"error": "the connection closed before a whole request line"}
            )
            return
        end = chunk.find(b"\n")
        client.size += len(chunk) if end < 0 else end
        if client.size > MAX_REQUEST_BYTES:
            self._unwatch(selector, client)
            self._refuse(
                client, "malformed", {"error": f"the request is over {MAX_REQUEST_BYTES} bytes"}
            )
            return
        if end < 0:
            client.chunks.append(chunk)
            return
        self._unwatch(selector, client)
        line = b"".join([*client.chunks, chunk[:end]])
        client.chunks = []
        with self._lock:
            self._waiting[client] = line
        self._queue.put(client)

    def _unwatch(self, selector: selectors.BaseSelector, client: _Client) -> None:
        self._reading.pop(client.conn.fileno(), None)
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(client.conn)

    def _heartbeat(self) -> None:
        """A space to each client whose request waits for a worker: the daemon is alive."""
        with self._lock:  # a worker takes a client under the lock: never mid-answer
            for client in self._waiting:
                with contextlib.suppress(OSError):  # a full buffer or a client gone: no matter
                    client.conn.send(_HEARTBEAT)

    def _refuse(self, client: _Client, count: str, answer: dict[str, Any]) -> None:
        """A short answer without a worker (it fits the socket's buffer: never blocks), then
        the connection closed."""
        self._count(count)
        with contextlib.suppress(OSError):
            client.conn.send(json.dumps({"v": PROTOCOL, **answer}).encode("utf-8") + b"\n")
        self._close(client)

    def _close(self, client: _Client) -> None:
        client.conn.close()
        with self._lock:
            self._held -= 1

    # -- answering (the workers) -----------------------------------------------------------------
    def _work(self) -> None:
        while True:
            client = self._queue.get()
            if client is None:
                return
            with self._lock:  # out of the heartbeat's list before a byte of the answer goes
                line = self._waiting.pop(client)
            try:
                self._serve(client, line)
            except OSError as exc:  # the client went away (timed out, killed): its loss only
                log.debug("socket client gone: %s", exc)
            finally:
                self._close(client)

    def _serve(self, client: _Client, line: bytes) -> None:
        if self._stopping.is_set():
            answer: dict[str, Any] = {"v": PROTOCOL, "fallback": "the daemon is stopping"}
        elif _hung_up(client.conn):
            self._count("gone")  # it gave up waiting and answered in its own process
            return
        else:
            answer = self._answer(line)
        data = memoryview(json.dumps(answer).encode("utf-8") + b"\n")
        give_up = time.monotonic() + _SEND_DEADLINE_S
        while data:
            left = give_up - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the answer was not taken within {_SEND_DEADLINE_S:g} s")
            client.conn.settimeout(left)
            data = data[client.conn.send(data) :]

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

    def _answer(self, raw: bytes) -> dict[str, Any]:
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
            return {"v": PROTOCOL, "error": self._other_version(request.get("v"))}
        if request.get("op") == "stats":
            with self._lock:
                return {"v": PROTOCOL, "pid": os.getpid(), "stats": dict(self.counts)}
        try:
            answer = self._respond(request)
        except Exception as exc:  # a bug or a fault while answering: the client answers itself
            self._count("failed")
            log.warning(
                "socket: answering %r failed (%s: %s)",
                request.get("op"),
                type(exc).__name__,
                exc,
            )
            return {"v": PROTOCOL, "fallback": f"the daemon failed ({type(exc).__name__})"}
        if "error" in answer:
            self._count("malformed")
        elif "parts" in answer:  # not a fallback, nor a request for the client's stdin
            self._count("answered")
        return {"v": PROTOCOL, **answer}

    def _other_version(self, version: object) -> str:
        """The error answer to a client of another protocol version, logged once a version: the
        client answers in its own process (slower, the same output) until both are the same
        brainiac."""
        said = f"protocol {version!r} is not {PROTOCOL}"
        with self._lock:
            first = repr(version) not in self._versions_seen
            self._versions_seen.add(repr(version))
        if first:
            log.warning(
                "%s: a client asked in protocol %r, and this daemon speaks %d: the client "
                "answers in its own process; restart the daemon after upgrading brainiac "
                "(`systemctl --user restart brainiac`)",
                self.path,
                version,
                PROTOCOL,
            )
        return said

    def _count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1


def _hung_up(conn: socket.socket) -> bool:
    """Whether the client closed its end (it stopped waiting): POLLHUP. A client that only shut
    its writing side down still waits for the answer (POLLRDHUP alone)."""
    poller = select.poll()
    poller.register(conn, select.POLLHUP)
    return any(events & select.POLLHUP for _, events in poller.poll(0))


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
