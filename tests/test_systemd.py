"""sd_notify over a real datagram socket, journal log prefixes, and the user unit.

The unit is checked by `systemd-analyze --user verify`, which must print nothing: it exits 0 on
typos and unknown keys too, only saying so (docs/foundations.md, section 3).
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import socket
import stat
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac.core.errors import ConfigError
from brainiac.runtime import daemon_socket, systemd
from brainiac.store.locations import Locations
from brainiac.store.vault_key import vault_key

STATUS = "STATUS=Übersicht: 12 notes ✓"


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[tuple[socket.socket, str]]:
    """A bound datagram socket standing in for systemd's notify socket."""
    path = tmp_path / "notify"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
        sock.settimeout(5)
        yield sock, str(path)


# --- notify --------------------------------------------------------------------------------------


def test_notify_sends_utf8_intact(receiver: tuple[socket.socket, str]) -> None:
    sock, path = receiver
    assert systemd.notify("READY=1", STATUS, environ={"NOTIFY_SOCKET": path})
    assert sock.recv(4096).decode("utf-8") == f"READY=1\n{STATUS}"


def test_notify_abstract_namespace() -> None:
    name = f"brainiac-test-{uuid.uuid4().hex}"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind("\0" + name)
        sock.settimeout(5)
        assert systemd.notify("WATCHDOG=1", environ={"NOTIFY_SOCKET": "@" + name})
        assert sock.recv(4096) == b"WATCHDOG=1"


def test_a_newline_in_a_status_cannot_forge_an_assignment(
    receiver: tuple[socket.socket, str],
) -> None:
    sock, path = receiver
    assert systemd.notify("STATUS=two\nREADY=1", environ={"NOTIFY_SOCKET": path})
    assert sock.recv(4096) == b"STATUS=two READY=1"


@pytest.mark.parametrize("env", [{}, {"NOTIFY_SOCKET": ""}, {"NOTIFY_SOCKET": "vsock:2:1234"}])
def test_notify_without_a_usable_socket_is_a_no_op(env: dict[str, str]) -> None:
    assert systemd.notify("READY=1", environ=env) is False


def test_notify_reads_os_environ_by_default(
    receiver: tuple[socket.socket, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    sock, path = receiver
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    assert systemd.notify("STOPPING=1")
    assert sock.recv(4096) == b"STOPPING=1"
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert systemd.notify("STOPPING=1") is False


def test_a_vanished_socket_is_logged_not_raised(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "gone"
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as sock:
        sock.bind(str(path))
    path.unlink()
    with caplog.at_level(logging.WARNING, logger="brainiac.runtime.systemd"):
        assert systemd.notify("WATCHDOG=1", environ={"NOTIFY_SOCKET": str(path)}) is False
    assert "sd_notify" in caplog.text and str(path) in caplog.text


def test_a_socket_nobody_reads_is_refused_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "closed"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.close()  # the path stays, nobody listens: ECONNREFUSED
    assert systemd.notify("READY=1", environ={"NOTIFY_SOCKET": str(path)}) is False


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({"WATCHDOG_USEC": "60000000"}, 30.0),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": str(os.getpid())}, 30.0),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": str(os.getpid() + 1)}, None),
        ({}, None),
        ({"WATCHDOG_USEC": "0"}, None),
        ({"WATCHDOG_USEC": "soon"}, None),
        ({"WATCHDOG_USEC": "60000000", "WATCHDOG_PID": "me"}, None),
    ],
)
def test_watchdog_interval(env: dict[str, str], expected: float | None) -> None:
    assert systemd.watchdog_interval(env) == expected


# --- logging -------------------------------------------------------------------------------------


def _record(level: int, msg: str) -> logging.LogRecord:
    return logging.LogRecord("brainiac.test", level, __file__, 1, msg, None, None)


@pytest.mark.parametrize(
    ("level", "prefix"),
    [
        (logging.CRITICAL, "<2>"),
        (logging.ERROR, "<3>"),
        (logging.WARNING, "<4>"),
        (logging.INFO, "<6>"),
        (logging.DEBUG, "<7>"),
    ],
)
def test_journal_formatter_prefixes(level: int, prefix: str) -> None:
    assert systemd.JournalFormatter().format(_record(level, "hello")) == f"{prefix}hello"


def test_every_line_of_a_multiline_record_keeps_its_priority() -> None:
    assert systemd.JournalFormatter().format(_record(logging.ERROR, "a\nb")) == "<3>a\n<3>b"


@pytest.fixture
def root_logger() -> Iterator[logging.Logger]:
    """configure_logging() replaces the root handlers; give pytest's back afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield root
    root.handlers[:] = handlers
    root.setLevel(level)


@pytest.mark.usefixtures("root_logger")
@pytest.mark.parametrize(
    ("journal", "expected"),
    [
        (True, "<4>careful\n"),
        (False, "brainiac: WARNING: careful\n"),
    ],
)
def test_configure_logging(journal: bool, expected: str) -> None:
    stream = io.StringIO()
    systemd.configure_logging(logging.INFO, stream=stream, journal=journal)
    logging.getLogger("brainiac.x").debug("not shown at INFO")
    logging.getLogger("brainiac.x").warning("careful")
    assert stream.getvalue() == expected


def test_journal_is_detected_by_journal_stream(
    tmp_path: Path, root_logger: logging.Logger, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (
        (tmp_path / "journal").open("w+", encoding="utf-8") as journal,
        (tmp_path / "redirected").open("w+", encoding="utf-8") as other,
    ):
        st = os.fstat(journal.fileno())
        env = {"JOURNAL_STREAM": f"{st.st_dev}:{st.st_ino}"}
        assert systemd.journal_stream(journal, env)
        assert not systemd.journal_stream(other, env)  # `brainiac run 2>file` under systemd
        assert not systemd.journal_stream(journal, {})
        monkeypatch.setenv("JOURNAL_STREAM", env["JOURNAL_STREAM"])
        systemd.configure_logging(logging.INFO, stream=journal)
        logging.getLogger("brainiac.x").info("ready")
        journal.seek(0)
        assert journal.read() == "<6>ready\n"


# --- the unit ------------------------------------------------------------------------------------


def _lines(text: str) -> list[str]:
    return text.splitlines()


def test_unit_text_contents(tmp_path: Path) -> None:
    text = systemd.unit_text(["/opt/brainiac/bin/brainiac"], tmp_path / "vault")
    lines = _lines(text)
    assert lines[0].startswith(systemd.MARKER)
    assert f"ExecStart=/opt/brainiac/bin/brainiac --vault {tmp_path / 'vault'} run" in lines
    for line in [
        "Type=notify",
        "NotifyAccess=main",
        "ExecReload=/bin/kill -HUP $MAINPID",
        "Restart=on-failure",
        "RestartSec=5s",
        "WatchdogSec=60s",
        "TimeoutStartSec=120s",
        "TimeoutStopSec=30s",
        "KillMode=mixed",
        "Environment=PYTHONUNBUFFERED=1",
        "StandardError=journal",
        "SyslogIdentifier=brainiac",
        "NoNewPrivileges=yes",
        "LockPersonality=yes",
        "RestrictRealtime=yes",
        "RestrictSUIDSGID=yes",
        "SystemCallArchitectures=native",
        "StartLimitIntervalSec=300",
        "StartLimitBurst=5",
        "WantedBy=default.target",
        "[Unit]",
        "[Service]",
        "[Install]",
    ]:
        assert line in lines, line
    # No Documentation= until the project has a real address (an invented URL would mislead).
    assert not any(line.startswith("Documentation=") for line in lines)
    # Settings that need namespacing do nothing in a user unit without PrivateUsers= (7b).
    namespaced = ("ProtectSystem", "ProtectHome", "PrivateTmp")
    assert not any(line.startswith(namespaced) for line in lines)


@pytest.mark.parametrize(
    ("arg", "word"),
    [
        ("/usr/bin/brainiac", "/usr/bin/brainiac"),
        ("/home/a b/brainiac", '"/home/a b/brainiac"'),
        ("/v/100%", "/v/100%%"),
        ("/v/$HOME", "/v/$$HOME"),
        ('/v/say "hi"', '"/v/say \\"hi\\""'),
        ("/v/back\\slash", '"/v/back\\\\slash"'),
        ("/v/tab\there", '"/v/tab\\x09here"'),
        (";", '";"'),
        ("", '""'),
        ("/v/Übersicht", "/v/Übersicht"),
    ],
)
def test_exec_start_words_are_quoted_and_escaped(arg: str, word: str) -> None:
    assert systemd._quote(arg) == word


def test_unit_text_needs_an_absolute_executable(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="absolute path"):
        systemd.unit_text(["brainiac"], tmp_path)
    with pytest.raises(ConfigError):
        systemd.unit_text([], tmp_path)


def test_unit_path_follows_xdg_config_home(tmp_path: Path) -> None:
    assert systemd.unit_path({"XDG_CONFIG_HOME": str(tmp_path)}) == (
        tmp_path / "systemd/user/brainiac.service"
    )
    expected = Path.home() / ".config/systemd/user/brainiac.service"
    assert systemd.unit_path({}) == expected
    assert systemd.unit_path({"XDG_CONFIG_HOME": "relative/ignored"}) == expected


def test_install_uninstall_round_trip(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    paths = systemd.install(["/usr/bin/brainiac"], tmp_path / "vault", environ=env)
    path, sock = paths
    assert path == tmp_path / "config/systemd/user/brainiac.service"
    assert sock == tmp_path / "config/systemd/user/brainiac.socket"
    assert path.read_text(encoding="utf-8") == systemd.unit_text(
        ["/usr/bin/brainiac"], tmp_path / "vault"
    )
    assert sock.read_text(encoding="utf-8") == systemd.socket_unit_text(tmp_path / "vault")
    assert stat.S_IMODE(path.stat().st_mode) == stat.S_IMODE(sock.stat().st_mode) == 0o644
    # Installing again replaces our own units, and leaves no temp file behind.
    systemd.install(["/usr/local/bin/brainiac"], tmp_path / "other", environ=env)
    assert "/usr/local/bin/brainiac" in path.read_text(encoding="utf-8")
    assert vault_key(tmp_path / "other") in sock.read_text(encoding="utf-8")
    assert sorted(p.name for p in path.parent.iterdir()) == ["brainiac.service", "brainiac.socket"]
    assert systemd.uninstall(environ=env) == paths
    assert not path.exists() and not sock.exists()
    assert systemd.uninstall(environ=env) == []


def test_the_socket_unit_listens_where_the_daemon_and_the_cli_look(tmp_path: Path) -> None:
    vault = tmp_path / "My Notes"
    vault.mkdir()
    lines = _lines(systemd.socket_unit_text(vault))
    assert lines[0].startswith(systemd.MARKER)
    listen = next(line for line in lines if line.startswith("ListenStream="))
    runtime = tmp_path / "run"  # %t in the user manager is $XDG_RUNTIME_DIR
    path = listen.removeprefix("ListenStream=").replace("%t", str(runtime))
    where = Locations.for_vault(vault, environ={"XDG_RUNTIME_DIR": str(runtime)}).runtime
    assert path == daemon_socket.socket_path(str(where))
    for line in ["SocketMode=0600", "DirectoryMode=0700", "WantedBy=sockets.target"]:
        assert line in lines, line
    assert f"Also={systemd.SOCKET_UNIT_NAME}" in _lines(
        systemd.unit_text(["/usr/bin/brainiac"], vault)
    )


def test_a_foreign_socket_unit_stops_the_install_before_anything_is_written(
    tmp_path: Path,
) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    sock = systemd.socket_unit_path(env)
    sock.parent.mkdir(parents=True)
    mine = "[Socket]\nListenStream=/run/me.sock\n"
    sock.write_text(mine, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"brainiac\.socket: .*--force"):
        systemd.install(["/usr/bin/brainiac"], tmp_path, environ=env)
    assert not systemd.unit_path(env).exists()
    with pytest.raises(ConfigError, match="did not write"):
        systemd.uninstall(environ=env)
    assert sock.read_text(encoding="utf-8") == mine


def test_listen_socket_takes_only_this_process_variables_and_unsets_them() -> None:
    env = {"LISTEN_PID": str(os.getpid() + 1), "LISTEN_FDS": "1", "LISTEN_FDNAMES": "x", "A": "1"}
    assert systemd.listen_socket(env) is None  # a parent's, inherited
    assert env == {"A": "1"}
    env = {"LISTEN_PID": "me", "LISTEN_FDS": "1"}
    assert systemd.listen_socket(env) is None
    assert env == {}
    assert systemd.listen_socket({"LISTEN_PID": str(os.getpid()), "LISTEN_FDS": "0"}) is None
    assert systemd.listen_socket({}) is None


def test_a_foreign_unit_is_refused_unless_forced(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    path = systemd.unit_path(env)
    path.parent.mkdir(parents=True)
    mine = "[Service]\nExecStart=/home/me/bin/my-brainiac\n"
    path.write_text(mine, encoding="utf-8")
    with pytest.raises(ConfigError, match=r"brainiac\.service: .*--force") as info:
        systemd.install(["/usr/bin/brainiac"], tmp_path, environ=env)
    assert "\n" not in str(info.value)
    with pytest.raises(ConfigError, match="did not write"):
        systemd.uninstall(environ=env)
    assert path.read_text(encoding="utf-8") == mine
    systemd.install(["/usr/bin/brainiac"], tmp_path, environ=env, force=True)
    assert systemd.uninstall(environ=env)[0] == path


def test_a_symlinked_unit_is_not_ours(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config")}
    target = tmp_path / "dotfiles/brainiac.service"
    target.parent.mkdir()
    target.write_text(systemd.unit_text(["/usr/bin/brainiac"], tmp_path), encoding="utf-8")
    path = systemd.unit_path(env)
    path.parent.mkdir(parents=True)
    path.symlink_to(target)
    with pytest.raises(ConfigError):
        systemd.install(["/usr/bin/brainiac"], tmp_path, environ=env)
    with pytest.raises(ConfigError):
        systemd.uninstall(environ=env)
    assert path.is_symlink()


def test_next_steps() -> None:
    paths = [Path("/x/brainiac.service"), Path("/x/brainiac.socket")]
    assert systemd.next_steps(paths) == [
        "systemctl --user daemon-reload",
        "systemctl --user enable --now brainiac.socket brainiac.service",
        'loginctl enable-linger "$USER"',
        "journalctl --user-unit brainiac -f",
    ]


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze not installed")
def test_systemd_analyze_verify_prints_nothing(tmp_path: Path) -> None:
    # A scratch home whose ExecStart target exists (verify checks that it is executable) in a
    # folder with a space, and a private 0700 runtime dir (without one the user manager cannot
    # start: note 7a). verify cannot judge %% and $$ (it is silent about a bare "%" too); the
    # quoting test above covers those.
    home = tmp_path / "home"
    exe = home / "my apps/bin/brainiac"
    exe.parent.mkdir(parents=True)
    exe.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    exe.chmod(0o755)
    # Short, as /run/user/<uid> is: the socket unit's %t/brainiac/<key>/daemon.sock must fit
    # sun_path, which a runtime folder under pytest's tmp_path would overflow.
    runtime = Path(tempfile.mkdtemp(prefix="brainiac-run-", dir="/tmp"))
    env = {
        "HOME": str(home),
        "XDG_RUNTIME_DIR": str(runtime),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PATH": os.environ.get("PATH", "/usr/bin"),
        "LANG": "C.UTF-8",
    }
    path, sock = systemd.install([str(exe)], home / "100% $HOME notes", environ=env)
    text = path.read_text(encoding="utf-8")
    assert f'ExecStart="{exe}" --vault "{home}/100%% $$HOME notes" run' in text

    def verify() -> tuple[int, str, str]:
        proc = subprocess.run(
            ["systemd-analyze", "--user", "verify", str(path), str(sock)],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        return proc.returncode, proc.stdout, proc.stderr

    assert verify() == (0, "", ""), verify()
    # The control: the same unit without the quotes fails, so verify did look at ExecStart.
    path.write_text(text.replace(f'"{exe}"', str(exe)), encoding="utf-8")
    code, out, err = verify()
    shutil.rmtree(runtime)
    assert code != 0 and "is not executable" in out + err
