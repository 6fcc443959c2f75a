"""Running under systemd as a user service: sd_notify, journal-friendly logs, and the unit file.

Nothing here needs systemd or libsystemd to import or to test. `notify()` is the datagram
protocol of sd_notify(3) in a few lines (the `sdnotify` package encodes with Latin-1 and silently
drops a STATUS such as "12 notes ✓"). `listen_socket()` takes the socket systemd passes
(sd_listen_fds(3), socket activation). `unit_text()`, `socket_unit_text()` and `install()` write
the user units; they never call systemctl, so the CLI can tell the user the commands to run
instead. See docs/foundations.md, section 3.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import tempfile
from collections.abc import Mapping, MutableMapping, Sequence
from pathlib import Path
from typing import TextIO

from brainiac.core.errors import ConfigError
from brainiac.runtime.daemon_socket import SOCKET_NAME
from brainiac.store.vault_key import vault_key

log = logging.getLogger(__name__)

UNIT_NAME = "brainiac.service"
# Listens on the daemon's socket while no daemon runs: the first CLI call starts brainiac.service
# and waits in the listen backlog until the daemon answers it (docs/service.md).
SOCKET_UNIT_NAME = "brainiac.socket"
# The first line of every unit brainiac writes: install() and uninstall() only touch a file that
# starts with it, so a unit a person wrote by hand under the same name is never lost.
MARKER = "# Written by brainiac"

# A hung service manager must not hang the daemon's main loop on a blocking send.
_NOTIFY_TIMEOUT_S = 0.25  # a full queue must not stall the daemon; systemd drains it quickly


# --- sd_notify -----------------------------------------------------------------------------------


def notify(*assignments: str, environ: Mapping[str, str] | None = None) -> bool:
    """Send `notify("READY=1", "STATUS=watching 12 notes")` to systemd; True if it was sent.

    False when not run under systemd (no NOTIFY_SOCKET), for an address type this client does not
    speak (vsock: on newer systemd), and when the send fails: a daemon must not die because the
    notify socket vanished, so the error is logged and the caller carries on.
    """
    env = os.environ if environ is None else environ
    address = env.get("NOTIFY_SOCKET", "")
    if address.startswith("@"):
        address = "\0" + address[1:]  # Linux abstract namespace
    elif not address.startswith("/"):
        return False
    # Each assignment is one line of the datagram, so a newline inside a STATUS would start a new
    # assignment (or forge one, e.g. "READY=1"); STATUS is a single line by definition anyway.
    lines = [a.replace("\n", " ") for a in assignments]
    # "replace": a filename with undecodable bytes reaches Python as lone surrogates; systemd wants
    # UTF-8, and a "?" in a status line is better than no status at all.
    payload = "\n".join(lines).encode("utf-8", errors="replace")
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.settimeout(_NOTIFY_TIMEOUT_S)
            sent = sock.sendto(payload, address)
    except OSError as exc:
        log.warning(
            "sd_notify to %s failed (%s); carrying on without it", env.get("NOTIFY_SOCKET"), exc
        )
        return False
    return sent == len(payload)


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between WATCHDOG=1 pings (half of WATCHDOG_USEC, as systemd advises), or None.

    None when the watchdog is off, or when WATCHDOG_PID names another process: the variables were
    inherited from a parent that systemd watches, not meant for us.
    """
    env = os.environ if environ is None else environ
    usec, pid = env.get("WATCHDOG_USEC", ""), env.get("WATCHDOG_PID", "")
    try:
        if pid and int(pid) != os.getpid():
            return None
        value = int(usec) if usec else 0
    except ValueError:
        log.warning(
            "ignoring a malformed watchdog setting: WATCHDOG_USEC=%r WATCHDOG_PID=%r", usec, pid
        )
        return None
    return value / 2 / 1_000_000 if value > 0 else None


# --- socket activation ---------------------------------------------------------------------------

_LISTEN_FDS_START = 3  # SD_LISTEN_FDS_START: the first fd systemd passes
_LISTEN_VARS = ("LISTEN_PID", "LISTEN_FDS", "LISTEN_FDNAMES")


def listen_socket(environ: MutableMapping[str, str] | None = None) -> socket.socket | None:
    """The listening Unix stream socket systemd passed (fd 3), or None: not socket-activated.

    The variables are removed whatever they say, so a process this one starts does not take
    them for its own (sd_listen_fds(3) with unset_environment). They count only when LISTEN_PID
    is this process: otherwise they were inherited from a parent that systemd started. An fd
    that is not a listening Unix stream socket is logged and left alone: the daemon then binds
    its own socket, as without systemd.
    """
    env = os.environ if environ is None else environ
    pid, count = env.get("LISTEN_PID", ""), env.get("LISTEN_FDS", "")
    for name in _LISTEN_VARS:
        env.pop(name, None)
    if not pid and not count:
        return None
    try:
        if int(pid) != os.getpid():
            return None
        fds = int(count)
    except ValueError:
        log.warning("ignoring a malformed LISTEN_PID=%r LISTEN_FDS=%r", pid, count)
        return None
    if fds < 1:
        return None
    if fds > 1:
        log.warning("systemd passed %d sockets; brainiac listens on the first one only", fds)
    fd = _LISTEN_FDS_START
    try:
        sock = socket.socket(fileno=fd)  # family and type are read from the fd itself
    except OSError as exc:
        log.warning("fd %d from systemd is not a socket (%s); binding our own", fd, exc)
        return None
    listening = sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN)
    if sock.family != socket.AF_UNIX or sock.type != socket.SOCK_STREAM or not listening:
        log.warning(
            "fd %d from systemd is not a listening Unix stream socket; binding our own "
            "(the socket unit needs ListenStream= with a path)",
            fd,
        )
        sock.detach()  # not ours to close: whoever passed it decides
        return None
    sock.set_inheritable(False)  # systemd passes it without O_CLOEXEC
    return sock


# --- logging -------------------------------------------------------------------------------------


def _priority(levelno: int) -> int:
    """The syslog priority of sd-daemon(3) (SD_CRIT 2, SD_ERR 3, SD_WARNING 4, SD_INFO 6, ...)."""
    if levelno >= logging.CRITICAL:
        return 2
    if levelno >= logging.ERROR:
        return 3
    if levelno >= logging.WARNING:
        return 4
    if levelno >= logging.INFO:
        return 6
    return 7


class JournalFormatter(logging.Formatter):
    """`<3>message` for an error, `<4>` warning, `<6>` info, `<7>` debug; journald strips it.

    Journald reads each line of the stream as its own entry, so every line of a multi-line record
    (a traceback) carries the prefix; otherwise all but the first would be logged as info. No
    timestamp or program name: the journal records both itself (SyslogIdentifier=brainiac).
    """

    def __init__(self, fmt: str = "%(message)s") -> None:
        super().__init__(fmt)

    def format(self, record: logging.LogRecord) -> str:
        prefix = f"<{_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).split("\n"))


def journal_stream(stream: TextIO, environ: Mapping[str, str] | None = None) -> bool:
    """True if `stream` is the journal: systemd sets JOURNAL_STREAM=<device>:<inode> for it.

    The comparison with the stream's own file, which systemd.exec(5) recommends, keeps the prefixes
    out of a file the output was redirected to (`brainiac run 2>log`) inside a service.
    """
    env = os.environ if environ is None else environ
    value = env.get("JOURNAL_STREAM", "")
    if not value:
        return False
    try:
        st = os.fstat(stream.fileno())
        device, inode = (int(part) for part in value.split(":"))
    except (OSError, ValueError, AttributeError):
        # Not a real file (a test's StringIO) or a malformed value: trust the variable, which
        # systemd sets only when stderr does go to the journal.
        return True
    return (st.st_dev, st.st_ino) == (device, inode)


def configure_logging(
    level: int | str = logging.INFO, stream: TextIO | None = None, journal: bool | None = None
) -> logging.Handler:
    """Send every log record to `stream` (stderr), replacing the root logger's handlers.

    journal=None decides by JOURNAL_STREAM: `<N>` priority prefixes under systemd, and
    `brainiac: LEVEL: message` in a terminal. Only entry points (the CLI) call this.
    """
    stream = sys.stderr if stream is None else stream
    if journal is None:
        journal = journal_stream(stream)
    handler = logging.StreamHandler(stream)
    handler.setFormatter(
        JournalFormatter() if journal else logging.Formatter("brainiac: %(levelname)s: %(message)s")
    )
    # force=True: the CLI group has already configured a terminal handler before `run` starts.
    logging.basicConfig(level=level, handlers=[handler], force=True)
    return handler


# --- the user unit -------------------------------------------------------------------------------


def _quote(arg: str) -> str:
    """One ExecStart word, quoted and escaped as systemd.service(5) and systemd.syntax(7) parse it.

    Order matters: systemd first replaces %-specifiers in the whole line, then splits it into
    words (undoing quotes and C escapes), and at exec time expands $VARIABLES in each word.
    """
    text = arg.replace("%", "%%").replace("$", "$$")
    plain = text and not any(c.isspace() or c in "\"'\\;" or not c.isprintable() for c in text)
    if plain:
        return text
    escaped = "".join(
        "\\\\"
        if c == "\\"
        else '\\"'
        if c == '"'
        else c
        if c.isprintable() or c == " "
        else f"\\x{ord(c):02x}"
        for c in text
    )
    return f'"{escaped}"'


def _absolute(path: Path) -> Path:
    # Absolute but not resolved: a vault reached through a symlink keeps working when the link
    # is pointed elsewhere, as it does for the person's own shell.
    return Path(os.path.abspath(path.expanduser()))


def unit_text(exec_start: Sequence[str], vault: Path) -> str:
    """The user unit that runs `<exec_start> --vault <vault> run` (section 7a of the note).

    exec_start is the command that starts brainiac, beginning with an absolute path: the user
    manager's PATH is not the shell's, so a bare `brainiac` may not be found.
    """
    if not exec_start or not os.path.isabs(exec_start[0]):
        raise ConfigError(
            f"{exec_start[0] if exec_start else '(empty command)'}: the service "
            "needs the absolute path of the brainiac executable; run brainiac by "
            "its full path or from its installed location"
        )
    command = " ".join(_quote(a) for a in [*exec_start, "--vault", str(_absolute(vault)), "run"])
    return f"""\
{MARKER} (`brainiac service install`); it is replaced on the next install.
# Put local changes in a drop-in instead: systemctl --user edit {UNIT_NAME}

[Unit]
Description=brainiac - memory daemon for an AI agent's Markdown vault
# Set-up and troubleshooting: docs/service.md in brainiac (the project has no public URL yet)
# Stop restarting after 5 failures within 5 minutes.
StartLimitIntervalSec=300
StartLimitBurst=5

[Service]
Type=notify
NotifyAccess=main
ExecStart={command}
# SIGHUP reloads the configuration; brainiac sends RELOADING=1, then READY=1.
ExecReload=/bin/kill -HUP $MAINPID
Restart=on-failure
RestartSec=5s
# brainiac pings every 30 s while its file watcher is alive; a dead watcher means a restart.
WatchdogSec=60s
# The first scan of a large vault comes before READY=1.
TimeoutStartSec=120s
TimeoutStopSec=30s
# SIGTERM to the main process only; brainiac finishes the write in flight, then exits.
KillMode=mixed
Environment=PYTHONUNBUFFERED=1
# stderr goes to the journal; "<3>..." prefixes set the priority (SyslogLevelPrefix=yes).
StandardError=journal
SyslogIdentifier=brainiac
# Hardening that works in a per-user manager without PrivateUsers=.
NoNewPrivileges=yes
LockPersonality=yes
RestrictRealtime=yes
RestrictSUIDSGID=yes
SystemCallArchitectures=native

[Install]
WantedBy=default.target
# Enabling the service enables the socket too: a call while the daemon is stopped starts it.
Also={SOCKET_UNIT_NAME}
"""


def socket_unit_text(vault: Path) -> str:
    """The socket unit beside the service: systemd listens on the daemon's socket path.

    The path is the runtime folder's (vault_key.py) under %t, which is $XDG_RUNTIME_DIR in the
    user manager: the folder the daemon and the CLI compute for this vault in a login session.
    """
    key = vault_key(_absolute(vault))
    return f"""\
{MARKER} (`brainiac service install`); it is replaced on the next install.
# Put local changes in a drop-in instead: systemctl --user edit {SOCKET_UNIT_NAME}

[Unit]
Description=brainiac - socket of the memory daemon; the first CLI call starts it

[Socket]
ListenStream=%t/brainiac/{key}/{SOCKET_NAME}
# Only this user may connect; the daemon checks each peer's uid as well (SO_PEERCRED).
SocketMode=0600
DirectoryMode=0700
# As many calls as the daemon holds at once (socket_server.MAX_CONNECTIONS) wait while it starts.
Backlog=256
RemoveOnStop=yes

[Install]
WantedBy=sockets.target
"""


def unit_path(environ: Mapping[str, str] | None = None) -> Path:
    """`$XDG_CONFIG_HOME/systemd/user/brainiac.service` (default ~/.config): the user's units."""
    env = os.environ if environ is None else environ
    base = env.get("XDG_CONFIG_HOME", "")
    # The XDG spec: a relative path in the variable is invalid and must be ignored.
    config = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return config / "systemd" / "user" / UNIT_NAME


def _written_by_us(path: Path) -> bool:
    # We never write a symlink: one here belongs to the person's dotfiles, whatever it points at.
    if path.is_symlink():
        return False
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            return f.readline().startswith(MARKER)
    except OSError:
        return False


def socket_unit_path(environ: Mapping[str, str] | None = None) -> Path:
    """`brainiac.socket` beside the service's unit."""
    return unit_path(environ).with_name(SOCKET_UNIT_NAME)


def install(
    exec_start: Sequence[str],
    vault: Path,
    environ: Mapping[str, str] | None = None,
    force: bool = False,
) -> list[Path]:
    """Write the service and the socket unit atomically (mode 0644); return their paths.

    A unit already there is replaced only if brainiac wrote it, or with force=True; both are
    checked before either is written, so a refusal leaves both as they were.
    """
    units = [
        (unit_path(environ), unit_text(exec_start, vault)),
        (socket_unit_path(environ), socket_unit_text(vault)),
    ]
    for path, _ in units:
        if (path.exists() or path.is_symlink()) and not force and not _written_by_us(path):
            raise ConfigError(
                f"{path}: a unit brainiac did not write is already there; move it "
                "away, or replace it with `brainiac service install --force`"
            )
    for path, text in units:
        _write_unit(path, text)
    return [path for path, _ in units]


def _write_unit(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A temp file in the same directory, renamed over the unit: systemd (or a concurrent
        # daemon-reload) sees the old unit or the new one, never half of one. Its hidden name is
        # not a valid unit name, so systemd ignores it if a crash leaves it behind.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
                f.flush()
                os.fchmod(f.fileno(), 0o644)
                os.fsync(f.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
        from brainiac.store.safe_io import fsync_dir  # here: only `service install` writes a unit

        fsync_dir(path.parent)
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot write the unit ({exc.strerror or exc}); check that "
            f"{path.parent} is writable by you"
        ) from exc
    log.info("wrote %s", path)


def uninstall(environ: Mapping[str, str] | None = None) -> list[Path]:
    """Remove the units brainiac wrote; return their paths (none: there were none).

    A unit brainiac did not write stops the removal before anything is removed.
    """
    paths = [
        path
        for path in (unit_path(environ), socket_unit_path(environ))
        if path.exists() or path.is_symlink()
    ]
    for path in paths:
        if not _written_by_us(path):
            raise ConfigError(
                f"{path}: brainiac did not write this unit, so it is left in place; "
                "remove it yourself if it should go"
            )
    for path in paths:
        try:
            path.unlink()
        except OSError as exc:
            raise ConfigError(
                f"{path}: cannot remove the unit ({exc.strerror or exc}); check that "
                f"{path.parent} is writable by you"
            ) from exc
        log.info("removed %s", path)
    return paths


def next_steps(paths: Sequence[Path]) -> list[str]:
    """The commands to run after install(), in order, for the CLI to print."""
    # The socket unit listens from now on; the service runs at login too, so the vault is
    # watched before the first call (systemd starts the socket before its service).
    names = " ".join(p.name for p in sorted(paths, key=lambda p: p.suffix != ".socket"))
    service = next(p for p in paths if p.suffix == ".service")
    return [
        "systemctl --user daemon-reload",
        f"systemctl --user enable --now {names}",
        # Without lingering the user manager, and brainiac with it, stops at logout.
        'loginctl enable-linger "$USER"',
        f"journalctl --user-unit {service.stem} -f",
    ]
