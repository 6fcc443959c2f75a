"""The CLI's fast path: a running daemon answers `context`, `search`, `check` and the prompt hook
over its Unix socket, byte for byte as the CLI's own process would; without a daemon (or with a
stale socket, a silent one, another configuration) the CLI answers itself; a stranger's uid is
refused; a malformed request gets an error answer and the daemon goes on. Under load every
client is answered by the daemon in turn, a client dripping its request holds nothing, and a
context the CLI answers itself beside the daemon says it is by words only."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import json
import os
import re
import select
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from brainiac.core.errors import VaultError
from brainiac.runtime import daemon_socket
from brainiac.runtime.socket_server import SocketServer
from brainiac.store.locations import Locations
from conftest import run_cli
from helpers import DEADLINE_S, Notifications, run_daemon, stop, stop_or_kill, wait_for

NOW = "2026-11-24T10:00"
NOBODY = 65534
HOOK_EVENT = json.dumps(
    {
        "session_id": "s1",
        "transcript_path": "",
        "cwd": "/",
        "hook_event_name": "UserPromptSubmit",
        "prompt": "When is the Atlas deadline?",
    }
)
# (arguments, stdin): every command the daemon answers, in text and in JSON, with an exit status
# of 1 (check finds a conflict) and a context without a prompt.
CALLS: list[tuple[tuple[str, ...], str | None]] = [
    (("context", "--prompt", "When is the Atlas deadline?", "--now", NOW), None),
    (("context", "--prompt", "Who is Anna?", "--budget", "300", "--now", NOW, "--json"), None),
    (("context", "--now", NOW), None),
    (("search", "deadline"), None),
    (("search", "Anna Atlas", "--limit", "3", "--json"), None),
    (("search", "xylophone"), None),  # no matches: only stderr
    (("check", "The Atlas deadline is on Friday 4 December.", "--now", NOW), None),
    (("check", "-", "--json"), "The Atlas deadline is on Monday 30 November."),
    (("hook", "user-prompt-submit"), HOOK_EVENT),
    (("hook", "user-prompt-submit", "--budget", "400"), HOOK_EVENT),
    # docs/projects.md: the project goes through the socket as well
    (("context", "--prompt", "When is the review?", "--project", "atlas", "--now", NOW), None),
    (("search", "review", "--project", "website", "--json"), None),
    (("check", "The review of the homepage is on Monday.", "--project", "website"), None),
]


def _socket_path(vault: Path) -> str:
    return daemon_socket.socket_path(str(Locations.for_vault(vault).runtime))


def _stats(vault: Path) -> dict[str, Any]:
    answer = daemon_socket.stats(_socket_path(vault))
    assert "stats" in answer, answer
    return answer


def _answers(vault: Path) -> bool:
    return "stats" in daemon_socket.stats(_socket_path(vault))


def _cli(vault: Path, args: tuple[str, ...], stdin: str | None, **env: str) -> tuple[str, str, int]:
    done = run_cli("--vault", str(vault), *args, input=stdin, env=env)
    return done.stdout, done.stderr, done.returncode


@contextlib.contextmanager
def _serving(vault: Path, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """`brainiac run` on `vault` until its socket answers; stopped with SIGTERM (exit 0) after
    the block. Its log is in tmp_path/daemon.log."""
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        wait_for(lambda: _answers(vault), "the daemon's socket")
        yield proc
        stop(proc)


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    return quiet_vault(tmp_path)


@pytest.fixture
def daemon(vault: Path, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """The quiet vault's daemon, answering on its socket for the whole test."""
    with _serving(vault, tmp_path) as proc:
        yield proc


@pytest.fixture
def runtime(tmp_path: Path) -> Path:
    """A runtime folder for a SocketServer of the test's own, private as the daemon's is."""
    path = tmp_path / "rt"
    path.mkdir(mode=0o700)
    return path


def _nothing(request: dict[str, Any]) -> dict[str, Any]:
    """An answer that says nothing, exit status 0."""
    return {"parts": [], "exit": 0}


@contextlib.contextmanager
def _started(server: SocketServer) -> Iterator[SocketServer]:
    """`server` bound and answering for the block, stopped after it."""
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def short_runtime(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """XDG_RUNTIME_DIR in a new folder with a short path under /tmp (a socket's path must fit
    sun_path), removed after the test."""
    base = Path(tempfile.mkdtemp(prefix="brainiac-run-", dir="/tmp"))
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base))
    yield base
    shutil.rmtree(base, ignore_errors=True)


@contextlib.contextmanager
def _bound_at_socket_path(vault: Path) -> Iterator[socket.socket]:
    """A socket bound at `vault`'s daemon socket path (not listening: the block decides), closed
    after the block."""
    path = _socket_path(vault)
    Path(path).parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    address, fd = daemon_socket.connectable(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(address)
        yield sock
    finally:
        sock.close()
        if fd is not None:
            os.close(fd)


def quiet_vault(tmp_path: Path) -> Path:
    """A vault with one remembered event and every job off."""
    path = tmp_path / "vault"
    run_cli("init", str(path), check=True)
    run_cli("--vault", str(path), "remember", "Anna moved the Atlas review to Thursday", check=True)
    for project, text in (
        ("atlas", "The review of the API is on Monday"),
        ("website", "The review of the homepage is on Friday"),
    ):
        run_cli("--vault", str(path), "remember", text, "--project", project, check=True)
    # No job runs: a job changing notes between two calls would change what they answer.
    config = path / ".brainiac" / "config.toml"
    text = config.read_text(encoding="utf-8")
    for job in ("rescan", "merge", "reflection", "promotion", "organization", "inbox", "backup"):
        text = re.sub(rf"^# {job} = .*$", f"{job} = 0", text, flags=re.M)
    # Words only, as the CLI's own process answers (opening.py): the transport is under test
    # here; the daemon's recall by meaning has its own test (tests/test_semantic.py).
    text = re.sub(r"^# meaning = .*$", "meaning = false", text, flags=re.M)
    config.write_text(text, encoding="utf-8")
    return path


def test_the_daemon_answers_each_command_byte_for_byte_as_the_cli_itself(
    vault: Path, daemon: subprocess.Popen[str]
) -> None:
    for args, stdin in CALLS:
        before = _stats(vault)["stats"]["answered"]
        via_daemon = _cli(vault, args, stdin)
        after = _stats(vault)
        # Answered over the socket (the daemon counted it), by this daemon:
        assert after["stats"]["answered"] == before + 1, args
        assert after["pid"] == daemon.pid
        in_process = _cli(vault, args, stdin, BRAINIAC_SOCKET="off")
        assert via_daemon == in_process, args
        assert via_daemon[0] or via_daemon[1], args  # something was said
    assert _stats(vault)["stats"]["answered"] == len(CALLS)
    # the daemon scoped it: the other project's recent event is not in atlas's context
    scoped = _cli(vault, CALLS[10][0], None)[0]
    assert "review of the API" in scoped and "homepage" not in scoped
    # the codes came through: a conflict is exit status 1 either way
    assert _cli(vault, *CALLS[6])[2] == 1
    assert _stats(vault)["stats"]["failed"] == 0
    debug = run_cli("--debug", "--vault", str(vault), "search", "deadline")
    assert "search: answered by the daemon over its socket" in debug.stderr


@pytest.mark.usefixtures("daemon")
def test_an_answered_command_loads_neither_the_index_nor_the_parser(vault: Path) -> None:
    done = subprocess.run(
        [
            *(sys.executable, "-X", "importtime", "-m", "brainiac", "--vault", str(vault)),
            *("context", "--prompt", "When is the Atlas deadline?"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "Project Atlas" in done.stdout
    loaded = {line.split("|")[-1].strip() for line in done.stderr.splitlines() if "|" in line}
    assert "brainiac.runtime.daemon_socket" in loaded
    heavy = {
        "brainiac.api.memory",
        "brainiac.search.index",
        "whoosh",
        "markdown_it",
        "yaml",
        "brainiac.formats.note",
    }
    heavy |= {
        "click",
        "brainiac.interfaces.cli",
        "pathlib",
        "dataclasses",
        "typing",
    }  # entry.py asked
    assert not loaded & heavy, loaded & heavy


def _is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


def test_the_entry_point_and_the_client_import_only_the_standard_library() -> None:
    """What runs before the daemon answers: entry.py, fast_argv.py, daemon_socket.py,
    vault_key.py, vault_choice.py. Anything else they import (click, pathlib, dataclasses,
    brainiac's own modules) every agent hook pays."""
    from brainiac.interfaces import entry, fast_argv
    from brainiac.store import vault_choice, vault_key

    allowed = {"__future__", "_socket", "_sha256", "collections", "hashlib", "io", "json"}
    allowed |= {"os", "re", "sys", "time", "tomllib", "brainiac"}
    allowed |= {"gc"}  # built into the interpreter: entry turns the cycle collector off
    for module in (daemon_socket, entry, fast_argv, vault_key, vault_choice):
        source = Path(module.__file__ or "").read_text(encoding="utf-8")
        imported = {
            line.split()[1].split(".")[0]
            for line in source.splitlines()
            if line.strip().startswith(("import ", "from "))
        }
        assert imported <= allowed, (module.__name__, imported - allowed)
        brainiac_modules = set()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("brainiac"):
                for alias in node.names:  # a module of the package, or a name in one
                    candidate = f"{node.module}.{alias.name}"
                    brainiac_modules.add(candidate if _is_module(candidate) else node.module or "")
        # entry.py hands what the daemon did not answer to brainiac.interfaces.cli (after asking:
        # the import-time test above shows an answered call never loads it), and a hook to
        # remote_hook.py only when BRAINIAC_URL names a server (the variable is read first)
        fallback = set()
        if module is entry:
            fallback = {"brainiac.interfaces.cli.root", "brainiac.interfaces.remote_hook"}
        lean = {
            "brainiac.interfaces.fast_argv",
            "brainiac.runtime.daemon_socket",
            "brainiac.store.vault_key",
            "brainiac.store.vault_choice",
        }
        assert brainiac_modules <= lean | fallback, (module.__name__, brainiac_modules)


def test_without_a_daemon_the_cli_answers_itself(vault: Path) -> None:
    assert not Path(_socket_path(vault)).exists()
    for args, stdin in CALLS[:1] + CALLS[6:7] + CALLS[8:9]:
        out, err, code = _cli(vault, args, stdin)
        assert (out, err, code) == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")
        assert out
    debug = run_cli("--debug", "--vault", str(vault), "search", "deadline")
    assert "search: in this process: " in debug.stderr and "no daemon" in debug.stderr
    assert "deadline" in debug.stdout


def test_a_stale_socket_is_passed_over_by_the_cli_and_replaced_by_the_next_daemon(
    vault: Path, tmp_path: Path
) -> None:
    path = _socket_path(vault)
    with _bound_at_socket_path(vault):
        pass  # bound, never listening, then closed: what a killed daemon leaves
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    args, stdin = CALLS[0]
    debug = run_cli("--debug", "--vault", str(vault), *args)
    assert "stale socket" in debug.stderr
    assert debug.returncode == 0
    assert debug.stdout == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")[0]
    with _serving(vault, tmp_path) as proc:  # the leftover is replaced, and answers again
        assert _stats(vault)["pid"] == proc.pid
        before = _stats(vault)["stats"]["answered"]
        assert _cli(vault, args, stdin)[0] == debug.stdout
        assert _stats(vault)["stats"]["answered"] == before + 1
    assert not os.path.lexists(path), "the daemon's stop removes its socket"


def test_a_daemon_killed_outright_leaves_a_socket_the_cli_passes_over(
    vault: Path, tmp_path: Path
) -> None:
    with run_daemon(vault, tmp_path / "daemon.log") as proc:
        wait_for(lambda: _answers(vault), "the daemon's socket")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=DEADLINE_S)
    assert os.path.lexists(_socket_path(vault))
    args, stdin = CALLS[3]
    out, err, code = _cli(vault, args, stdin)
    assert code == 0 and "deadline" in out.lower()
    assert (out, err, code) == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")


def test_a_silent_socket_costs_a_timeout_never_a_hang(vault: Path) -> None:
    with _bound_at_socket_path(vault) as silent:
        silent.listen(4)  # connections queue up; nobody ever answers
        debug = run_cli("--debug", "--vault", str(vault), *CALLS[3][0])
    assert "did not answer in time" in debug.stderr
    assert debug.returncode == 0 and "deadline" in debug.stdout.lower()


@pytest.mark.usefixtures("daemon")
def test_another_configuration_or_time_zone_is_answered_by_the_cli(vault: Path) -> None:
    args, stdin = CALLS[0]
    for env in ({"BRAINIAC_CONTEXT_BUDGET": "300"}, {"TZ": "Pacific/Auckland"}):
        before = _stats(vault)["stats"]["answered"]
        debug = run_cli("--debug", "--vault", str(vault), *args, env=env)
        assert "in this process: " in debug.stderr, env
        assert _stats(vault)["stats"]["answered"] == before, env
        assert debug.stdout == _cli(vault, args, stdin, BRAINIAC_SOCKET="off", **env)[0]
    config = vault / ".brainiac" / "config.toml"
    config.write_text(config.read_text().replace("# budget = 2000", "budget = 300"))
    before = _stats(vault)["stats"]["answered"]
    short = _cli(vault, args, stdin)
    assert _stats(vault)["stats"]["answered"] == before  # not the daemon's configuration
    assert short == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")


@pytest.mark.usefixtures("daemon")
def test_malformed_requests_get_an_error_answer_and_the_daemon_goes_on(vault: Path) -> None:
    def raw(data: bytes) -> bytes:
        with _connected(vault) as s:
            s.sendall(data)
            s.shutdown(socket.SHUT_WR)
            return b"".join(iter(lambda: s.recv(65536), b""))

    for data, says in (
        (b"not json\n", "not JSON"),
        (b"[1, 2]\n", "not a JSON object"),
        (b'{"v": 99, "op": "search"}\n', "protocol 99"),
        (b'{"v": 2, "op": "rm -rf", "env": {}}\n', "unknown op 'rm -rf'"),
        (b'{"v": 2, "op": "search", "query": 3, "env": {}}\n', "query must be a string"),
        (b'{"v": 2, "op": "search", "query": "x", "env": []}\n', "env must be a JSON object"),
        (b'{"v": 2, "op": "search"', "closed before a whole request line"),
        (b"x" * (daemon_socket.MAX_REQUEST_BYTES + 10), "over"),
        (b"\xff\xfe\n", "not JSON"),
        (b"[" * 200_000 + b"\n", "not JSON"),
    ):
        answer = json.loads(raw(data))
        assert says in answer["error"], (data[:40], answer)
        assert "parts" not in answer
    assert _stats(vault)["stats"]["malformed"] == 10
    out, _, code = _cli(vault, *CALLS[3])
    assert code == 0 and "deadline" in out.lower()  # still answering
    assert _stats(vault)["stats"]["answered"] == 1


@pytest.mark.skipif(os.geteuid() != 0, reason="acting as another uid needs root")
def test_a_strangers_uid_is_refused_without_an_answer(
    vault: Path, tmp_path: Path, short_runtime: Path
) -> None:
    # A runtime folder the user nobody can reach (a short path under /tmp, made traversable
    # below): the kernel's SO_PEERCRED check is then all that stands between them and the memory.
    # Connected (connect() succeeds: the path is reachable), then cut off without an answer: the
    # close may come before the request is sent (a broken pipe), after (a reset), or as an EOF.
    child = (
        "import socket, sys\n"
        "s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)\n"
        "s.settimeout(10)\n"
        "s.connect(sys.argv[1])\n"
        "try:\n"
        '    s.sendall(b\'{"v": 2, "op": "search", "query": "Atlas", "limit": 10, \'\n'
        '              b\'"json": true, "env": {}}\\n\')\n'
        "    got = s.recv(65536)\n"
        "except (BrokenPipeError, ConnectionResetError):\n"
        "    got = b''\n"
        "sys.stdout.write(repr(got))\n"
    )
    with _serving(vault, tmp_path):
        path = Path(_socket_path(vault))
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700
        for folder in (short_runtime, short_runtime / "brainiac", path.parent):
            os.chmod(folder, 0o711)
        os.chmod(path, 0o666)
        done = subprocess.run(
            ["/usr/bin/python3", "-I", "-S", "-c", child, str(path)],
            user=NOBODY,
            capture_output=True,
            text=True,
            timeout=60,
            cwd="/",
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout == "b''"  # connected, then closed without a byte of answer
        stats = _stats(vault)["stats"]
        assert stats["refused"] == 1 and stats["answered"] == 0
        code = _cli(vault, *CALLS[3])[2]  # its own user is still answered
        assert code == 0 and _stats(vault)["stats"]["answered"] == 1
    log = (tmp_path / "daemon.log").read_text(encoding="utf-8")
    assert f"refused a connection from uid {NOBODY}" in log


def test_a_second_server_never_takes_a_live_socket(runtime: Path) -> None:
    with _started(SocketServer(runtime, _nothing)) as first:
        inode = os.stat(first.path).st_ino
        second = SocketServer(runtime, _nothing)
        with pytest.raises(VaultError, match="another process answers on this socket"):
            second.start()
        assert os.stat(first.path).st_ino == inode
        assert "stats" in daemon_socket.stats(str(first.path))
    assert not first.path.exists()


def test_a_second_daemon_leaves_the_first_ones_socket_alone(
    vault: Path, daemon: subprocess.Popen[str]
) -> None:
    second = run_cli("--vault", str(vault), "run")
    assert second.returncode != 0
    assert "already running" in second.stderr
    assert _stats(vault)["pid"] == daemon.pid
    assert _cli(vault, *CALLS[3])[2] == 0
    assert _stats(vault)["stats"]["answered"] == 1


def test_searches_on_other_threads_while_the_writer_commits(tmp_path: Path) -> None:
    """The daemon's socket threads search while its writer commits and swaps the searcher: no
    query meets a searcher closed under it, and every query sees a whole index."""
    import threading

    from brainiac.search.corpus import Document
    from brainiac.search.index import Index

    def note(i: int) -> Document:
        return Document(
            key=f"n{i}.md", path=f"n{i}.md", kind="note", title=f"Note {i}", body=f"cello {i}"
        )

    index = Index(tmp_path / "index")
    index.apply([note(i) for i in range(20)], [])
    errors: list[BaseException] = []
    counts: list[int] = []
    stop = threading.Event()

    def search() -> None:
        while not stop.is_set():
            try:
                counts.append(len(index.search("cello", limit=100)))
                index.frequency("cello")
            except BaseException as exc:
                errors.append(exc)
                return

    readers = [threading.Thread(target=search) for _ in range(3)]
    for t in readers:
        t.start()
    try:
        for i in range(20, 60):  # each commit replaces the searcher
            index.apply([note(i)], [f"n{i - 20}.md"])
    finally:
        stop.set()
        for t in readers:
            t.join(timeout=DEADLINE_S)
        index.close()
    assert not errors, errors
    assert counts and all(c == 20 for c in counts)  # one add and one delete per commit


def test_a_hook_that_cannot_even_find_its_vault_still_exits_1(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    """Asking the daemon comes before anything else; an error on the way (here an unreadable
    user config, which names the vault) is still said where the command says it: a hook exits
    1, never 2 (which Claude Code reads as "block the prompt")."""
    config = Path(xdg_dirs["XDG_CONFIG_HOME"]) / "brainiac" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('vault = "unclosed\n', encoding="utf-8")
    hook = run_cli("hook", "user-prompt-submit", input=HOOK_EVENT)
    assert hook.returncode == 1
    assert hook.stderr.startswith("brainiac: ") and "config.toml" in hook.stderr
    assert len(hook.stderr.splitlines()) == 1
    context = run_cli("context", "--prompt", "x")
    assert context.returncode == 2 and "config.toml" in context.stderr


# -- under load (issue 31): every client answered by the daemon, none held up by a slow one ------
def _connected(vault: Path) -> socket.socket:
    address, fd = daemon_socket.connectable(_socket_path(vault))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(DEADLINE_S)
    try:
        s.connect(address)
    finally:
        if fd is not None:
            os.close(fd)
    return s


@pytest.mark.usefixtures("daemon")
def test_fifty_clients_at_once_are_all_answered_by_the_daemon(vault: Path) -> None:
    """25 prompt hooks and 25 searches sent at the same instant, through the client entry.py
    uses: the daemon answers every one (it closed 42 of 50 at once when it held 8), each the
    CLI's own answer."""
    import threading

    hook = {"op": "prompt-hook", "stdin": HOOK_EVENT}
    search = {"op": "search", "query": "Atlas"}
    runtime = str(Locations.for_vault(vault).runtime)
    start = threading.Barrier(50)
    answers: list[dict[str, object]] = [{} for _ in range(50)]

    def ask(i: int) -> None:
        request: dict[str, object] = hook if i % 2 else search
        start.wait()
        answers[i] = daemon_socket.ask(runtime, request)

    threads = [threading.Thread(target=ask, args=(i,)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    stats = _stats(vault)["stats"]
    assert [a.get("fallback") for a in answers] == [None] * 50
    assert stats["answered"] == 50 and stats["busy"] == 0, stats
    for i, (args, stdin) in ((1, CALLS[8]), (0, (("search", "Atlas"), None))):
        parts = answers[i]["parts"]
        assert isinstance(parts, list)
        said = tuple("".join(text for to_err, text in parts if to_err == e) for e in (False, True))
        assert (*said, answers[i]["exit"]) == _cli(vault, args, stdin, BRAINIAC_SOCKET="off")


@pytest.mark.usefixtures("daemon")
def test_a_client_dripping_its_request_holds_no_slot_and_is_cut_off_at_its_deadline(
    vault: Path,
) -> None:
    """Twelve clients that send their request a byte at a time (more than the daemon has
    workers): another client is answered by the daemon meanwhile, and each dripping one gets an
    error answer once READ_DEADLINE_S has passed since its connect, however often it sent a
    byte (its reads had a timeout each: a byte a second held a thread for good)."""
    from brainiac.runtime.socket_server import READ_DEADLINE_S

    request = b'{"v": 2, "op": "search", "query": "Atlas", "env": {}}\n'
    drippers = [_connected(vault) for _ in range(12)]
    connected = time.monotonic()
    stop = threading.Event()
    replies: list[tuple[float, bytes]] = []

    def drip(s: socket.socket) -> None:
        got = b""
        with contextlib.suppress(OSError):
            for byte in request[:-1]:  # never the newline: the request stays unfinished
                if stop.is_set() or select.select([s], [], [], 0)[0]:
                    break
                s.send(bytes([byte]))
                stop.wait(0.3)  # the client's pace under test, not time made to pass
            got = b"".join(iter(lambda: s.recv(65536), b""))
        replies.append((time.monotonic() - connected, got))

    threads = [threading.Thread(target=drip, args=(s,)) for s in drippers]
    for t in threads:
        t.start()
    try:
        before = _stats(vault)["stats"]["answered"]
        out, _, code = _cli(vault, *CALLS[3])
        assert code == 0 and "deadline" in out.lower()
        assert _stats(vault)["stats"]["answered"] == before + 1  # by the daemon
    finally:
        for t in threads:
            t.join(timeout=DEADLINE_S)
        stop.set()
        for s in drippers:
            s.close()
    assert len(replies) == 12
    for took, got in replies:
        assert f"no whole request line within {READ_DEADLINE_S:g} s" in got.decode(), got
        assert took < READ_DEADLINE_S + 1.5, took
    assert _stats(vault)["stats"]["malformed"] == 12


def test_a_busy_daemon_is_waited_for_and_a_client_that_left_is_not_answered(
    runtime: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three times as many requests as the daemon has workers (more than the 8 it once took),
    each answer slow: those waiting behind the others longer than the client's ANSWER_TIMEOUT_S
    hear the heartbeat and are answered in turn, instead of being closed at once or timing out;
    one whose client left meanwhile is not answered at all."""
    from brainiac.runtime import socket_server

    monkeypatch.setattr(daemon_socket, "ANSWER_TIMEOUT_S", 1.0)  # two heartbeats' time
    answering = threading.Semaphore(0)

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        answering.release()
        time.sleep(0.6)  # a slow answer: the last third waits 1.2 s for a worker
        return {"parts": [[False, str(request["i"])]], "exit": 0}

    with _started(SocketServer(runtime, respond)) as server:
        answers: dict[int, dict[str, object]] = {}

        def ask(i: int) -> None:
            answers[i] = daemon_socket.ask(str(runtime), {"op": "search", "i": i})

        many = 3 * socket_server.WORKERS
        threads = [threading.Thread(target=ask, args=(i,)) for i in range(many)]
        for t in threads:
            t.start()
        for _ in range(socket_server.WORKERS):  # every worker busy: the next one waits
            assert answering.acquire(timeout=DEADLINE_S)
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as leaving:
            leaving.settimeout(DEADLINE_S)
            leaving.connect(str(server.path))
            leaving.sendall(b'{"v": 2, "op": "search", "env": {}}\n')
            assert leaving.recv(1) == b" "  # a heartbeat; then it leaves
        for t in threads:
            t.join(timeout=DEADLINE_S)
        assert sorted(answers) == list(range(many))
        for i, answer in answers.items():
            assert answer.get("parts") == [[False, str(i)]], answer
        wait_for(lambda: server.counts["gone"] == 1, "the client that left, passed over")
        assert server.counts["answered"] == many and server.counts["busy"] == 0


def test_beside_the_daemon_a_context_answered_here_says_it_is_by_words_only(
    tmp_path: Path,
) -> None:
    """The daemon ranks by meaning as well; the CLI's own process by words only (opening.py says
    what that would cost). A context or prompt hook the CLI answers itself while the daemon runs
    (here: another time zone) says so on stderr, so its answer is not taken for the daemon's;
    the daemon's answers and a CLI without any daemon say nothing."""
    from brainiac.interfaces.cli.opening import WORDS_ONLY_NOTE

    vault = quiet_vault(tmp_path)
    config = vault / ".brainiac" / "config.toml"
    config.write_text(config.read_text().replace("meaning = false", "meaning = true"))
    for args, stdin in (CALLS[0], CALLS[8]):
        assert WORDS_ONLY_NOTE not in _cli(vault, args, stdin)[1]  # no daemon: nothing to tell
    with _serving(vault, tmp_path):
        for args, stdin in (CALLS[0], CALLS[8]):
            before = _stats(vault)["stats"]["answered"]
            out, err, code = _cli(vault, args, stdin)
            assert _stats(vault)["stats"]["answered"] == before + 1
            assert code == 0 and out and WORDS_ONLY_NOTE not in err
            out, err, code = _cli(vault, args, stdin, TZ="Pacific/Auckland")
            assert _stats(vault)["stats"]["answered"] == before + 1  # answered here
            assert code == 0 and out and err.count(WORDS_ONLY_NOTE) == 1, err


def _listening(path: Path) -> socket.socket:
    """A listening socket at `path`, as systemd binds one for brainiac.socket."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind(str(path))
    sock.listen(8)
    return sock


def test_a_passed_socket_is_listened_on_and_its_calls_wait_for_the_answers(
    runtime: Path,
) -> None:
    passed = _listening(Path(daemon_socket.socket_path(str(runtime))))
    keep = passed.dup()  # systemd's own copy: it outlives the daemon
    server = SocketServer(runtime, lambda request: {"parts": [[False, "hi\n"]], "exit": 0}, passed)
    server.listen()
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(DEADLINE_S)
        client.connect(str(server.path))
        client.sendall(b'{"v": 2, "op": "context"}\n')
        # Read whole while the daemon starts: the client hears that it is alive, no answer yet.
        assert client.recv(1) == b" "
        server.answer()
        raw = daemon_socket.read_line(client, 1 << 16, time.monotonic() + DEADLINE_S)
        assert isinstance(raw, bytes)
        assert json.loads(raw) == {"v": 2, "parts": [[False, "hi\n"]], "exit": 0}
        client.close()
    finally:
        server.stop()
    assert stat.S_ISSOCK(os.lstat(server.path).st_mode), "the file stays systemd's"
    keep.close()


def test_a_daemon_stopped_while_it_starts_tells_the_waiting_calls_to_answer_themselves(
    runtime: Path,
) -> None:
    passed = _listening(Path(daemon_socket.socket_path(str(runtime))))
    server = SocketServer(runtime, _nothing, passed)
    server.listen()
    client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    client.settimeout(DEADLINE_S)
    client.connect(str(server.path))
    client.sendall(b'{"v": 2, "op": "context"}\n')
    assert client.recv(1) == b" "  # read whole, waiting for the start to finish
    server.stop()  # SIGTERM during the first reconcile: never answered by the daemon
    raw = daemon_socket.read_line(client, 1 << 16, time.monotonic() + DEADLINE_S)
    client.close()
    assert isinstance(raw, bytes)
    assert json.loads(raw) == {"v": 2, "fallback": "the daemon is stopping"}


def test_a_passed_socket_elsewhere_is_not_used_and_the_daemon_binds_its_own(
    runtime: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    elsewhere = _listening(tmp_path / "old.sock")
    with _started(SocketServer(runtime, _nothing, elsewhere)) as server:
        assert "stats" in daemon_socket.stats(str(server.path))
    assert "old.sock" in caplog.text and "service install" in caplog.text
    assert not server.path.exists()  # bound by the server itself: removed on stop


_NEEDS_ACTIVATE = pytest.mark.skipif(
    shutil.which("systemd-socket-activate") is None, reason="systemd-socket-activate not installed"
)


@contextlib.contextmanager
def _socket_activated(
    vault: Path, tmp_path: Path, command: list[str]
) -> Iterator[tuple[subprocess.Popen[bytes], Notifications, str]]:
    """`command` (the daemon) under systemd-socket-activate, which binds the vault's socket
    path, waits for a connection, then execs the daemon with the socket as fd 3 and
    LISTEN_FDS/LISTEN_PID: what brainiac.socket does in the user manager. Yields the process,
    the daemon's notifications and the socket's path once the socket is there; stopped after
    the block. XDG_RUNTIME_DIR must be short: it takes no path longer than sun_path."""
    path = _socket_path(vault)
    Path(path).parent.mkdir(parents=True, mode=0o700, exist_ok=True)
    notes = Notifications(tmp_path / "notify.sock")
    env = {**os.environ, "NOTIFY_SOCKET": str(notes.path)}
    log = (tmp_path / "daemon.log").open("wb")
    # It passes on only the variables named: the test's XDG folders among them.
    setenv = [f"--setenv={name}" for name in env]
    proc = subprocess.Popen(
        ["systemd-socket-activate", "--listen", path, *setenv, *command],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=log,
    )
    try:
        wait_for(lambda: os.path.exists(path), "systemd-socket-activate's socket")
        assert not notes.seen, "no daemon before the first call"
        yield proc, notes, path
    finally:
        stop_or_kill(proc, log.close, notes.close)


@_NEEDS_ACTIVATE
@pytest.mark.usefixtures("short_runtime")
def test_socket_activation_the_first_call_starts_the_daemon_and_it_answers_every_call(
    vault: Path, tmp_path: Path
) -> None:
    expected = [_cli(vault, *call, BRAINIAC_SOCKET="off") for call in (CALLS[0], CALLS[3])]
    command = [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"]
    with _socket_activated(vault, tmp_path, command) as (proc, notes, path):
        for (args, stdin), (out, _err, code) in zip((CALLS[0], CALLS[3]), expected, strict=True):
            debug = run_cli("--debug", "--vault", str(vault), *args, input=stdin)
            assert "answered by the daemon over its socket" in debug.stderr, debug.stderr
            assert (debug.stdout, debug.returncode) == (out, code)
        notes.expect("READY=1")
        stats = _stats(vault)
        assert stats["pid"] == proc.pid and stats["stats"]["answered"] == 2
    assert "listening on the socket systemd passed" in (tmp_path / "daemon.log").read_text()
    assert os.path.lexists(path), "the socket file is systemd's: the daemon leaves it"


# `brainiac run`, its start held where the file watcher would begin until the test opens the
# FIFO named first on its command line for writing: the steps that follow the start's reconcile
# (stale temps, the working memory, the watcher, the jobs) take as long as the test likes, as
# they take seconds on a vault of 100,000 notes.
_HELD_AT_THE_WATCHER = """
import sys
from brainiac.interfaces.entry import main
from brainiac.runtime import watcher
gate, start = sys.argv.pop(1), watcher.Watcher.start
def held(self):
    with open(gate, "rb"):
        pass
    start(self)
watcher.Watcher.start = held
main()
"""


def _opened_for_writing(fifo: Path) -> bool:
    """Open `fifo` for writing and close it: True once a reader has it open (its open returns)."""
    try:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    except OSError:  # ENXIO: nobody reads it yet
        return False
    return True


@_NEEDS_ACTIVATE
@pytest.mark.usefixtures("short_runtime")
def test_socket_activation_answers_the_first_call_once_the_reconcile_is_done(
    vault: Path, tmp_path: Path
) -> None:
    # The first call waits only for what an answer needs: the index, reconciled with the vault.
    # The rest of the start runs beside the answers.
    (vault / "memory" / "offline.md").write_text(
        "# Offline\n\nThe Zephyr launch moved to Tuesday.\n", encoding="utf-8"
    )  # saved while no daemon ran: the first answer has it
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    command = [sys.executable, "-c", _HELD_AT_THE_WATCHER, str(gate), "--vault", str(vault)]
    with _socket_activated(vault, tmp_path, [*command, "run"]) as (proc, notes, _path):
        try:
            first = run_cli("--debug", "--vault", str(vault), "search", "Zephyr launch")
            assert "answered by the daemon over its socket" in first.stderr, first.stderr
            assert "memory/offline.md" in first.stdout
            assert not any("READY=1" in m for m in notes.seen), "the start is still held"
        finally:
            wait_for(lambda: _opened_for_writing(gate), "the daemon's start at the watcher")
        notes.expect("READY=1")
        (args, stdin) = CALLS[0]
        later = run_cli("--debug", "--vault", str(vault), *args, input=stdin)
        assert "answered by the daemon over its socket" in later.stderr, later.stderr
        assert _stats(vault)["stats"]["answered"] == 2 and _stats(vault)["pid"] == proc.pid
