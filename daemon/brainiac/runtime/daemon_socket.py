"""Asking the running daemon over its Unix socket: the client side of the CLI's fast path.

`brainiac context`, `search`, `check` and `hook user-prompt-submit` ask the daemon first: it has
the index, its searcher and the parsed short-term document open already, so an answer costs a
connect and a search instead of loading and opening everything. When no daemon answers (none
runs, the socket file is stale, the connection is refused or times out, or the daemon says the
command is better run here), `ask` says why and the command runs in its own process, exactly as
without a daemon: never worse than before, never a hang.

A busy daemon is waited for: while a request waits for one of the daemon's workers, the daemon
sends a space every `HEARTBEAT_S` (JSON allows white space before a value), and the client gives
up only after `ANSWER_TIMEOUT_S` without a byte (the daemon is stuck, or stopped) or `WAIT_CAP_S`
in all: so 50 agents' hooks at once are answered by the daemon, one after the other, rather than
half of them by their own processes.

This module runs before the CLI loads anything else (entry.py), so it imports only json, os, time
and _socket (the C module under `socket`, which would add selectors and enum: ~1 ms a call).
The protocol (the server is socket_server.py, the answers answers.py): one JSON object on one
line each way. A request is a typed one, {"v": 2, "op": ..., its fields, "env": {...}}
(api/socket_requests.py says each op's fields: the command's arguments, never a command line),
or {"v": 2, "op": "stats"}; an answer is {"v": 2, "parts": [[to_stderr, text], ...], "exit": n},
or {"v": 2, "fallback": why} (the client answers in its own process), or {"v": 2, "error": why}
for a request it could not read. `v` is the protocol's version: beside a daemon of another
version the client answers in its own process, and the daemon logs why (socket_server.py).
"""

from __future__ import annotations

import _socket
import json
import os
import time

SOCKET_NAME = "daemon.sock"
PROTOCOL = 2  # of the requests and answers: a peer speaking another is never answered
MAX_REQUEST_BYTES = 8 * 2**20  # a prompt or a response to check: text a person can read
MAX_ANSWER_BYTES = 64 * 2**20  # `search --limit 1000 --json` with long excerpts
CONNECT_TIMEOUT_S = 0.5
# A context at 10,000 notes takes tens of milliseconds in the daemon, and a waiting request hears
# a heartbeat every HEARTBEAT_S; no byte at all for ANSWER_TIMEOUT_S means the daemon is stuck or
# starved, and the command is answered here instead.
HEARTBEAT_S = 0.5
ANSWER_TIMEOUT_S = 5.0
# However alive the daemon: a request waits no longer than this from its connect (a queue this
# long is hundreds of requests; the prompt hook's own timeout is a minute).
WAIT_CAP_S = 20.0
OFF_ENV = "BRAINIAC_SOCKET"  # "off": never ask the daemon (measuring, debugging)
# The environment a command's answer depends on besides the vault: the configuration's
# variables and the time zone. Sent along; the daemon answers only when its own agree.
_NOT_CONFIG = ("BRAINIAC_VAULT", OFF_ENV, "BRAINIAC_FAULT")
# sun_path holds 108 bytes with its NUL; a longer path is reached through the folder's fd.
_SUN_PATH_MAX = 107


def relevant_env() -> dict[str, str]:
    """The variables an answer depends on: BRAINIAC_* settings and TZ."""
    return {
        k: v
        for k, v in os.environ.items()
        if (k.startswith("BRAINIAC_") and k not in _NOT_CONFIG) or k == "TZ"
    }


def socket_path(runtime_dir: str) -> str:
    return os.path.join(runtime_dir, SOCKET_NAME)


def connectable(path: str) -> tuple[str, int | None]:
    """An address for `path` that fits sun_path, and the folder fd to close after using it."""
    if len(os.fsencode(path)) <= _SUN_PATH_MAX:
        return path, None
    folder, name = os.path.split(path)
    fd = os.open(folder, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    return f"/proc/self/fd/{fd}/{name}", fd


def ask(runtime_dir: str, request: dict[str, object]) -> dict[str, object]:
    """The daemon's answer to `request` (an op and its fields: api/socket_requests.py), or
    {"fallback": why} when it cannot be had."""
    if os.environ.get(OFF_ENV) == "off":
        return {"fallback": f"{OFF_ENV}=off"}
    answer = exchange(socket_path(runtime_dir), {"v": PROTOCOL, **request, "env": relevant_env()})
    if "fallback" in answer:
        return answer
    if answer.get("v") != PROTOCOL:
        return {"fallback": f"the daemon speaks protocol {answer.get('v')!r}, not {PROTOCOL}"}
    if "error" in answer:
        return {"fallback": f"the daemon could not read the request: {answer['error']}"}
    parts, code = answer.get("parts"), answer.get("exit")
    if not isinstance(parts, list) or not isinstance(code, int):
        return {"fallback": "the daemon's answer has no parts or exit status"}
    return answer


def stats(path: str) -> dict[str, object]:
    """The daemon's pid and counts ({"pid": n, "stats": {...}}), or {"fallback": why}."""
    return exchange(path, {"v": PROTOCOL, "op": "stats"})


def exchange(path: str, request: dict[str, object]) -> dict[str, object]:
    """Send one request line and read one answer line; {"fallback": why} on any failure."""
    line = json.dumps(request).encode("utf-8") + b"\n"
    if len(line) > MAX_REQUEST_BYTES:
        return {"fallback": f"the request is over {MAX_REQUEST_BYTES} bytes"}
    try:
        address, fd = connectable(path)
    except FileNotFoundError:
        return {"fallback": f"{path}: no daemon (no runtime folder)"}
    except OSError as exc:
        return {"fallback": f"{path}: {exc.strerror or exc}"}
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM | _socket.SOCK_CLOEXEC)
    try:
        sock.settimeout(CONNECT_TIMEOUT_S)
        sock.connect(address)
        give_up = time.monotonic() + WAIT_CAP_S
        sock.settimeout(ANSWER_TIMEOUT_S)
        sock.sendall(line)
        raw = read_line(sock, MAX_ANSWER_BYTES, give_up)
    except FileNotFoundError:
        return {"fallback": f"{path}: no daemon (no socket)"}
    except ConnectionRefusedError:
        return {"fallback": f"{path}: stale socket (nobody listens)"}
    except TimeoutError:
        return {"fallback": f"{path}: the daemon did not answer in time"}
    except OSError as exc:
        return {"fallback": f"{path}: {exc.strerror or exc}"}
    finally:
        sock.close()
        if fd is not None:
            os.close(fd)
    if isinstance(raw, str):  # closed, or an answer past the limit: not one this client reads
        return {"fallback": f"{path}: the daemon closed the connection without an answer"}
    try:
        answer = json.loads(raw)
    except ValueError:
        return {"fallback": f"{path}: the daemon's answer is not JSON"}
    if not isinstance(answer, dict):
        return {"fallback": f"{path}: the daemon's answer is not a JSON object"}
    return answer


CLOSED = "closed"  # read_line: the peer closed before a whole line
TOO_LONG = "too long"  # read_line: no newline within the limit


def read_line(sock: _socket.socket, limit: int, give_up: float) -> bytes | str:
    """The bytes before the first newline (both sides of the socket send one JSON line), the
    heartbeat's spaces before it left out, or why there is none: CLOSED or TOO_LONG.
    TimeoutError after ANSWER_TIMEOUT_S without a byte, or at `give_up` (monotonic)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        left = give_up - time.monotonic()
        if left <= 0:
            raise TimeoutError
        sock.settimeout(min(ANSWER_TIMEOUT_S, left))
        chunk = sock.recv(1 << 16)
        if not chunk:
            return CLOSED
        if not chunks:
            chunk = chunk.lstrip(b" ")
            if not chunk:
                continue
        end = chunk.find(b"\n")
        size += len(chunk) if end < 0 else end
        if size > limit:
            return TOO_LONG
        if end >= 0:
            chunks.append(chunk[:end])
            return b"".join(chunks)
        chunks.append(chunk)
