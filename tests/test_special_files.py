"""What the file system can hold besides notes (issue 14): a FIFO or a socket named `.md` in the
vault, the index folder deleted under a search, a newline in a file name, two paths to one vault
folder, another process holding Whoosh's write lock. Each is a real file-system object (a real
`os.mkfifo`, a real bound AF_UNIX socket, a real symlink or bind mount), and the real CLI and the
real daemon run on them as subprocesses with a deadline, so a hang fails the test instead of
stalling it.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core.errors import BrainiacError, SearchError
from brainiac.store.vault import Vault
from helpers import wait_for

DEADLINE_S = 30.0
# A command on a three-note vault takes about a second; a hang is what this catches.
COMMAND_TIMEOUT_S = 30.0


def _cli(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The real CLI with a deadline: a command that hangs fails here instead of stalling."""
    try:
        return subprocess.run(
            [sys.executable, "-m", "brainiac", "--vault", str(vault), *args],
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=COMMAND_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"brainiac {' '.join(args)} hung (> {COMMAND_TIMEOUT_S:g} s)") from exc


# ------------------------------------------------------------- FIFOs and sockets named *.md

FIFO = "memory/long_term/pipe.md"
SOCKET = "memory/long_term/sock.md"


@contextlib.contextmanager
def _special_files(vault: Path) -> Iterator[None]:
    """A FIFO nobody writes to and a bound, listening AF_UNIX socket, both named like notes."""
    os.mkfifo(vault / FIFO)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(str(vault / SOCKET))
        sock.listen(1)
        yield
    finally:
        sock.close()


def _note(vault: Path, name: str, title: str, body: str) -> None:
    (vault / "memory/long_term" / name).write_text(
        f"---\ntitle: {title}\n---\n\n{body}\n", encoding="utf-8"
    )


def test_cli_commands_finish_and_status_names_fifo_and_socket_as_skipped(vault: Path) -> None:
    _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
    with _special_files(vault):
        found = _cli(vault, "search", "kayak boathouse")
        assert found.returncode == 0, found.stderr
        assert "memory/long_term/kayak.md" in found.stdout
        assert "Traceback" not in found.stderr

        context = _cli(vault, "context", "--prompt", "where is the kayak?")
        assert context.returncode == 0, context.stderr
        assert "boathouse" in context.stdout

        status = _cli(vault, "status", "--json")
        assert status.returncode == 0, status.stderr
        problems = json.loads(status.stdout)["problems"]
        for rel in (FIFO, SOCKET):
            assert "not a regular file" in problems[rel], problems
        human = _cli(vault, "status").stdout
        assert f"{FIFO}: is not a regular file" in human
        assert f"{SOCKET}: is not a regular file" in human

        jobs = _cli(vault, "jobs", "run", "all")
        assert jobs.returncode == 0, jobs.stderr
        assert "Traceback" not in jobs.stderr

        reindex = _cli(vault, "reindex")
        assert reindex.returncode == 0, reindex.stderr
        assert f"skipped: {FIFO}: is not a regular file" in reindex.stderr
        assert f"skipped: {SOCKET}: is not a regular file" in reindex.stderr
        assert "kayak.md" in _cli(vault, "search", "kayak").stdout

        # Nothing was opened, written or replaced: they are what they were.
        assert (vault / FIFO).is_fifo() and (vault / SOCKET).is_socket()


@pytest.mark.timeout(20)
def test_a_fifo_swapped_in_after_the_check_is_refused_not_waited_on(vault: Path) -> None:
    """Between the scan's lstat and the open, a FIFO may take a note's place: the open itself
    must not wait for a writer (O_NONBLOCK), and the read refuses it (fstat)."""
    from brainiac.core.errors import NoteParseError

    v = Vault.open(vault)
    rel = "memory/long_term/swapped.md"
    os.mkfifo(vault / rel)
    with pytest.raises(NoteParseError, match="is not a regular file"):
        v.read(rel)


def test_a_fifo_where_brainiac_writes_is_one_line_and_stays(vault: Path) -> None:
    wm = vault / "context/working_memory.md"
    wm.unlink(missing_ok=True)
    os.mkfifo(wm)
    result = _cli(vault, "context", "--write")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith("brainiac: ") and line.endswith(
        "context/working_memory.md: is not a regular file but a named pipe (FIFO); brainiac "
        "neither reads nor replaces it; remove it or move it out of the vault"
    )
    assert wm.is_fifo() and not [p for p in wm.parent.iterdir() if p.name.startswith(".")]


@contextlib.contextmanager
def _daemon(vault: Path) -> Iterator[subprocess.Popen[str]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        yield proc
    except BaseException:
        if proc.poll() is None:
            proc.kill()
        print("the daemon's log:\n" + proc.communicate(timeout=10)[1])  # shown on failure
        raise
    finally:
        if proc.poll() is None:
            proc.kill()
        with contextlib.suppress(ValueError):  # already read above
            proc.communicate(timeout=10)


def test_the_daemon_indexes_the_rest_stops_on_sigterm_and_does_not_rebuild_in_a_loop(
    vault: Path, xdg_dirs: dict[str, str]
) -> None:
    _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
    with _special_files(vault), _daemon(vault) as proc:
        status_file = Path(xdg_dirs["XDG_STATE_HOME"])
        wait_for(
            lambda: any(status_file.rglob("daemon.json")) and proc.poll() is None,
            "the daemon to start",
            DEADLINE_S,
        )
        wait_for(
            lambda: "kayak.md" in _cli(vault, "search", "kayak boathouse").stdout,
            "the daemon to index the notes beside the FIFO and the socket",
            DEADLINE_S,
        )
        ids = list(Path(xdg_dirs["XDG_CACHE_HOME"]).rglob("brainiac-index-id"))
        assert len(ids) == 1
        first_id = ids[0].read_text()
        # A new note is indexed by an edit sync, after the start's reconcile: by then a rebuild
        # loop would have replaced the index at least once.
        _note(vault, "canoe.md", "Canoe", "The red canoe hangs in the barn.")
        wait_for(
            lambda: "canoe.md" in _cli(vault, "search", "canoe barn").stdout,
            "the daemon to index a new note",
            DEADLINE_S,
        )

        def both_reported() -> bool:
            # Beside the daemon, status reads the manifest the daemon saves when idle.
            problems = json.loads(_cli(vault, "status", "--json").stdout)["problems"]
            return all("not a regular file" in problems.get(rel, "") for rel in (FIFO, SOCKET))

        wait_for(both_reported, "status to name the FIFO and the socket as skipped", DEADLINE_S)
        assert ids[0].read_text() == first_id, "the index was rebuilt"
        proc.send_signal(signal.SIGTERM)
        try:
            assert proc.wait(timeout=DEADLINE_S) == 0
        except subprocess.TimeoutExpired as exc:
            raise AssertionError("the daemon ignored SIGTERM") from exc
        _out, err = proc.communicate(timeout=10)
    assert "rebuild" not in err, err
    assert "Traceback" not in err, err


# ------------------------------------------------------------------ the index folder deleted


def _index_dir(memory: Memory) -> Path:
    return memory.locations.index_dir


def test_deleting_the_index_between_searches_rebuilds_it(memory: Memory, vault: Path) -> None:
    assert memory.search("Anna")
    shutil.rmtree(_index_dir(memory))
    _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
    assert [r.path for r in memory.search("kayak boathouse")][:1] == ["memory/long_term/kayak.md"]
    assert (_index_dir(memory) / "brainiac-index-id").is_file()


@contextlib.contextmanager
def _deleting(folder: Path, every_s: float) -> Iterator[None]:
    """A person clearing the cache, again and again, while the block runs."""
    stop = threading.Event()

    def clear() -> None:
        while not stop.is_set():
            shutil.rmtree(folder, ignore_errors=True)
            stop.wait(every_s)

    thread = threading.Thread(target=clear, name="cache-clearer")
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


# A Whoosh writer whose folder vanishes half-way leaves its temp files open until the garbage
# collector closes them (ResourceWarning); that is Whoosh's, and harmless, not a failure here.
@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_deleting_the_index_while_searches_run_is_a_rebuild_or_one_line(vault: Path) -> None:
    """Each search answers, or raises the one-line SearchError: never Whoosh's FileNotFoundError,
    EmptyIndexError or LockError from a folder that vanished mid-write."""
    with Memory(vault, refresh_interval_s=0) as first:
        first.search("Anna")
        folder = _index_dir(first)
    answered = failed = 0
    # At least 4 s and more than ten opens raced against the deletes, however busy the cores
    # (DEADLINE_S bounds it).
    started = time.monotonic()
    with _deleting(folder, every_s=0.005):
        while time.monotonic() < started + 4.0 or answered + failed <= 10:
            assert time.monotonic() < started + DEADLINE_S, (answered, failed)
            try:
                # A fresh Memory opens (or creates) the index too: both paths are exercised.
                with Memory(vault, refresh_interval_s=0) as m:
                    m.search("Anna")
                    m.search("Friday update")
                answered += 1
            except BrainiacError as exc:
                assert isinstance(exc, SearchError), repr(exc)
                assert "\n" not in str(exc) and str(folder) in str(exc)
                failed += 1
    assert answered + failed > 10
    with Memory(vault, refresh_interval_s=0) as after:  # and the next one rebuilds it
        assert after.search("Anna")


def test_cli_search_while_the_index_is_deleted_is_never_a_traceback(vault: Path) -> None:
    folder = Path(os.environ["XDG_CACHE_HOME"])
    assert "anna-berg.md" in _cli(vault, "search", "Anna").stdout
    shutil.rmtree(folder / "brainiac")
    between = _cli(vault, "search", "Anna")
    assert between.returncode == 0 and "anna-berg.md" in between.stdout, between.stderr
    with _deleting(folder / "brainiac", every_s=0.01):
        for _ in range(6):
            result = _cli(vault, "search", "Anna")
            assert "Traceback" not in result.stderr, result.stderr
            if result.returncode != 0:
                assert result.returncode == 2
                assert result.stderr.startswith("brainiac: "), result.stderr
    assert "anna-berg.md" in _cli(vault, "search", "Anna").stdout


# ------------------------------------------------------------ Whoosh's write lock held elsewhere


def test_a_held_write_lock_is_one_index_locked_error_and_loses_nothing(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from whoosh import index as windex
    from whoosh.index import LockError

    from brainiac.core.errors import IndexLockedError
    from brainiac.search import index_open

    memory.search("Anna")
    # Writers wait 30 s for the lock; the wait is a setting, and the test need not spend it.
    monkeypatch.setitem(index_open.WRITER_OPTIONS, "timeout", 0.2)
    folder = _index_dir(memory)
    holder = windex.open_dir(folder).writer()  # another process's writer, as Whoosh sees it
    try:
        _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
        with pytest.raises(IndexLockedError) as caught:
            memory.search("kayak")
        message = str(caught.value)
        assert str(folder) in message and "another writer holds" in message and "\n" not in message
        assert isinstance(caught.value.__cause__, LockError)
    finally:
        holder.cancel()
    # Nothing lost: the manifest did not record the note as indexed, so the next sync does.
    assert [r.path for r in memory.search("kayak boathouse")][:1] == ["memory/long_term/kayak.md"]


# ------------------------------------------------------------------ two paths to one vault folder


@contextlib.contextmanager
def _bind_mount(source: Path, target: Path) -> Iterator[Path]:
    target.mkdir()
    try:
        done = subprocess.run(
            ["mount", "--bind", str(source), str(target)], capture_output=True, text=True
        )
    except FileNotFoundError:
        pytest.skip("no mount command here")
    if done.returncode != 0:
        pytest.skip(f"mount --bind is not permitted here: {done.stderr.strip()}")
    try:
        yield target
    finally:
        subprocess.run(["umount", str(target)], check=True)


def _second_path(kind: str, vault: Path, tmp_path: Path) -> contextlib.AbstractContextManager[Path]:
    if kind == "symlink":
        link = tmp_path / "vault-link"
        link.symlink_to(vault)
        return contextlib.nullcontext(link)
    return _bind_mount(vault, tmp_path / "vault-bind")


@pytest.mark.parametrize("kind", ["symlink", "bind mount"])
def test_two_paths_to_one_vault_share_one_daemon_lock(
    kind: str, vault: Path, tmp_path: Path
) -> None:
    from brainiac.core.errors import VaultError
    from brainiac.store.locations import Locations
    from brainiac.store.lock import InstanceLock

    with _second_path(kind, vault, tmp_path) as other:
        first = InstanceLock(Locations.for_vault(vault).runtime, vault.resolve())
        second = InstanceLock(Locations.for_vault(other).runtime, Vault.open(other).root)
        with (
            first,
            pytest.raises(VaultError, match="another brainiac daemon is already running"),
        ):
            second.acquire()
        with second:  # released: the other path may take it now
            pass


def test_a_daemon_on_a_bind_mount_of_a_running_daemons_vault_refuses_to_start(
    vault: Path, tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    with _bind_mount(vault, tmp_path / "vault-bind") as other, _daemon(vault) as proc:
        wait_for(
            lambda: any(Path(xdg_dirs["XDG_STATE_HOME"]).rglob("daemon.json")),
            "the first daemon to start",
            DEADLINE_S,
        )
        second = subprocess.run(
            [sys.executable, "-m", "brainiac", "--vault", str(other), "run"],
            capture_output=True,
            text=True,
            timeout=COMMAND_TIMEOUT_S,
        )
        assert second.returncode == 2, second.stderr
        assert "another brainiac daemon is already running" in second.stderr
        assert f"(pid {proc.pid})" in second.stderr
        assert len(second.stderr.strip().splitlines()) == 1, second.stderr
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0


def _status_json(vault: Path) -> dict[str, object]:
    """`status --json` without what differs from one call to the next, or by the path asked."""
    info = json.loads(_cli(vault, "status", "--json").stdout)
    del info["vault"], info["daemon"]["uptime_s"]
    return info  # type: ignore[no-any-return]


def test_status_through_a_bind_mount_finds_the_daemon_running_on_the_other_path(
    vault: Path, tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    """The daemon's runtime and state folders are keyed by the path it was started on; `status`
    and the other commands given the second path find them through the folder's own lock."""
    from brainiac.store.locations import Locations

    _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
    with _bind_mount(vault, tmp_path / "vault-bind") as other, _daemon(vault) as proc:
        wait_for(
            lambda: any(Path(xdg_dirs["XDG_STATE_HOME"]).rglob("daemon.json")),
            "the daemon to start",
            DEADLINE_S,
        )
        human = _cli(other, "status")
        assert human.returncode == 0, human.stderr
        assert human.stdout.startswith(f"daemon: running, pid {proc.pid}, up "), human.stdout
        assert f"vault: {other}\n" in human.stdout
        assert f"index: {Locations.for_vault(vault).index_dir}\n" in human.stdout

        there = _status_json(other)
        assert there["daemon"]["pid"] == proc.pid and there["documents"] >= 1
        # The same daemon, index and state (its jobs' records), whichever path asks, once the
        # daemon's start (its first jobs) is over.
        wait_for(lambda: _status_json(vault) == _status_json(other), "the same status", DEADLINE_S)
        found = _cli(other, "search", "kayak boathouse")
        assert "memory/long_term/kayak.md" in found.stdout, found.stderr
        # The daemon's index served them: none was built for the second path.
        assert not Locations.for_vault(other).cache.exists()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0


# ------------------------------------------------------------------- a newline in a file name


def test_a_newline_in_a_file_name_is_one_escaped_line_and_exact_in_json(vault: Path) -> None:
    name = "two\nlines\tand\\more.md"
    _note(vault, name, "Kayak", "The sea kayak is stored in the boathouse.")
    rel = f"memory/long_term/{name}"

    human = _cli(vault, "search", "kayak boathouse")
    assert human.returncode == 0, human.stderr
    # Every line is one hit (a score first); the name is escaped as `ls -b` shows it.
    assert all(re.match(r" *\d+\.\d\d  ", line) for line in human.stdout.splitlines()), human.stdout
    shown = "memory/long_term/two\\nlines\\tand\\\\more.md"
    assert any(shown in line for line in human.stdout.splitlines()), human.stdout

    exact = json.loads(_cli(vault, "search", "kayak boathouse", "--json").stdout)
    assert {hit["path"].split("#")[0] for hit in exact} == {rel}


@pytest.mark.slow
@pytest.mark.timeout(180)
def test_the_daemon_waits_out_a_held_write_lock_instead_of_rebuilding_over_it(
    vault: Path, xdg_dirs: dict[str, str]
) -> None:
    """Another brainiac process writing the index (one opened before the daemon started) holds
    Whoosh's lock past the daemon's 30 s wait: the daemon says so and tries again later; a
    rebuild would delete the index under that writer."""
    from whoosh import index as windex

    with _daemon(vault) as proc:
        # The daemon first: a search before it holds its lock would build the index itself,
        # and the daemon would then build it again (the manifest it loaded names no index).
        wait_for(
            lambda: any(Path(xdg_dirs["XDG_STATE_HOME"]).rglob("daemon.json")),
            "the daemon to start",
            DEADLINE_S,
        )
        wait_for(
            lambda: "anna-berg.md" in _cli(vault, "search", "Anna").stdout,
            "the daemon to index the vault",
            DEADLINE_S,
        )
        [id_file] = Path(xdg_dirs["XDG_CACHE_HOME"]).rglob("brainiac-index-id")
        first_id = id_file.read_text()
        holder = windex.open_dir(id_file.parent).writer()
        try:
            _note(vault, "kayak.md", "Kayak", "The sea kayak is stored in the boathouse.")
            wait_for(
                lambda: (
                    "another writer holds"
                    in json.dumps(
                        json.loads(_cli(vault, "status", "--json").stdout)["daemon"]["troubles"]
                    )
                ),
                "the daemon to report the held lock",
                deadline_s=90.0,
            )
        finally:
            holder.cancel()
        wait_for(
            lambda: "kayak.md" in _cli(vault, "search", "kayak boathouse").stdout,
            "the daemon to index the note once the lock is free",
            deadline_s=90.0,
        )
        assert id_file.read_text() == first_id, "the index was rebuilt over the other writer"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
        _out, err = proc.communicate(timeout=10)
    assert "another writer holds the index's write lock" in err
    assert "rebuilding" not in err and "Traceback" not in err, err


def test_importing_a_fifo_or_a_config_that_is_a_fifo_is_one_line_not_a_hang(
    vault: Path, tmp_path: Path
) -> None:
    pipe = tmp_path / "export.jsonl"
    os.mkfifo(pipe)
    done = _cli(vault, "import", str(pipe))
    assert done.returncode == 2, done.stderr
    assert "not a regular file" in done.stderr and "Traceback" not in done.stderr
    config = vault / ".brainiac" / "config.toml"
    config.unlink()
    os.mkfifo(config)
    done = _cli(vault, "status")
    assert done.returncode == 2 and "config.toml" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
