"""Resource faults with real parts (issue 6, part 5; docs/reliability.md).

A disk that fills up (a size-limited tmpfs; `ulimit -f`), a vault on a read-only mount, the index
deleted or damaged under the running daemon, and inotify's watch limit really lowered (in a user
namespace of its own, so no other process on the machine sees it). Each runs the real CLI and the
real daemon (`python -m brainiac --vault V run`) as subprocesses and checks what a person would:
one clear line naming the file, the problem and the fix; not a byte of the vault changed by a
failed write and no truncated file; the daemon still running and answering, and catching up by
itself once the fault is gone.

The mounts need root (or CAP_SYS_ADMIN); where that is missing these tests skip and say so.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import resource
import shutil
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core.errors import BrainiacError, SearchError, StorageError
from brainiac.formats.note import parse as parse_note
from brainiac.store import working_memory as working
from brainiac.store.daemon_requests import read_status
from brainiac.store.locations import Locations
from brainiac.store.vault import Vault
from conftest import run_cli
from helpers import DEADLINE_S, Notifications, nano_save, vim_save, wait_for

WM = "context/working_memory.md"


# -- real parts ---------------------------------------------------------------------------------
@contextlib.contextmanager
def tmpfs(path: Path, size: str) -> Iterator[Path]:
    """A size-limited tmpfs mounted on `path` for the block, always unmounted after."""
    path.mkdir(parents=True, exist_ok=True)
    try:
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(path)],
            capture_output=True,
            text=True,
        )
    except FileNotFoundError:
        pytest.skip("no `mount` command here; the resource-fault tests need a tmpfs")
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs ({done.stderr.strip()}); needs root or CAP_SYS_ADMIN")
    try:
        yield path
    finally:
        if subprocess.run(["umount", str(path)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "-l", str(path)], capture_output=True)


def remount(path: Path, mode: str) -> None:
    """Remount read-only or read-write; `remount,ro` is refused (EBUSY) while a file is open for
    writing there, e.g. while the daemon's job writes a note, so it is tried until it takes."""
    wait_for(
        lambda: subprocess.run(["mount", "-o", f"remount,{mode}", str(path)]).returncode == 0,
        f"the remount {mode}",
        5.0,
    )


def overwrite_in_place(path: Path, text: str) -> None:
    """An in-place save that keeps the file's blocks while it writes (the new text, then the
    tail cut): on a full disk a save that truncates first frees its blocks, and any other
    writer, the daemon's own retries included, may take them before the text is written back."""
    with open(path, "r+", encoding="utf-8") as f:
        f.write(text)
        f.truncate()


def fill(disk: Path) -> Path:
    """Write a file on `disk` until the file system has not one free byte left."""
    filler = disk / "filler"
    with open(filler, "wb", buffering=0) as f:
        chunk = b"\0" * 65536
        with contextlib.suppress(OSError):
            while f.write(chunk):
                pass
    st = os.statvfs(disk)
    assert st.f_bfree == 0, "the tmpfs still has room"
    return filler


@contextlib.contextmanager
def running(
    tmp_path: Path, vault: Path, prefix: tuple[str, ...] = ()
) -> Iterator[tuple[subprocess.Popen[str], Notifications, Path]]:
    """`brainiac run` on `vault`, its log in a file (outside any tmpfs), until READY=1."""
    log_path = tmp_path / "daemon.log"
    notes = Notifications(tmp_path / "notify.sock")
    with open(log_path, "w") as log_file:
        proc = subprocess.Popen(
            [*prefix, sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
            env={**os.environ, "NOTIFY_SOCKET": str(notes.path)},
            stdout=subprocess.DEVNULL,
            stderr=log_file,
            text=True,
        )
    try:
        notes.expect("READY=1")
        yield proc, notes, log_path
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=10)
        notes.close()


def stop(proc: subprocess.Popen[str], log_path: Path) -> str:
    """SIGTERM, as systemd stops it: exit status 0, and a log without a traceback."""
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0, log_path.read_text()
    log = log_path.read_text()
    assert "Traceback" not in log, log
    return log


def files(vault: Path) -> dict[str, bytes]:
    """Every file's bytes, but for the daemon's temp files (a write in flight; see assert_whole)."""
    return {
        p.relative_to(vault).as_posix(): p.read_bytes()
        for p in sorted(vault.rglob("*"))
        if p.is_file() and not p.name.endswith(".brainiac-tmp")
    }


def assert_whole(vault: Path) -> None:
    """No temp file left behind (one may exist for a moment while the daemon writes), and every
    note whole (not empty, parses)."""
    wait_for(lambda: not list(vault.rglob("*.brainiac-tmp")), "no temp file left", 5.0)
    for path in vault.rglob("*.md"):
        text = path.read_text(encoding="utf-8")
        assert text, f"{path} is empty"
        parse_note(text, path.relative_to(vault).as_posix())


def one_line_error(proc: subprocess.CompletedProcess[str], *parts: str) -> str:
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    message = proc.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    for part in parts:
        assert part in message, (part, message)
    return message


def wm(vault: Path) -> str:
    try:
        return (vault / WM).read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def found(vault: Path, query: str, rel: str) -> bool:
    """Whether a search beside the running daemon finds `rel` (in-process, to poll cheaply; it
    reads the daemon's index as `brainiac search` does and writes nothing)."""
    try:
        with Memory(vault) as memory:
            assert not memory.index_writes, "the daemon should own the index"
            return rel in {r.path for r in memory.search(query)}
    except SearchError:  # the daemon is building a new index this moment
        return False


def status(vault: Path) -> str:
    """What `brainiac status` prints (a subprocess: use it for what a person reads)."""
    return run_cli("--vault", str(vault), "status", check=True).stdout


def troubles(vault: Path) -> str:
    """The faults the daemon reports in its status file, which `brainiac status` prints (read
    directly: cheap enough to poll)."""
    reported = (read_status(Locations.for_vault(vault).state) or {}).get("troubles")
    return " ".join(str(m) for m in reported.values()) if isinstance(reported, dict) else ""


# -- disk full ----------------------------------------------------------------------------------
@pytest.mark.parametrize("on_disk", ["everything", "vault"])
def test_a_full_disk_loses_nothing_and_the_daemon_catches_up_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, on_disk: str
) -> None:
    """Two layouts: `everything`, the vault, index and state on the full disk (a full home
    folder); `vault`, only the vault's file system full (a vault on a partition of its own)."""
    with tmpfs(tmp_path / "disk", "2m") as disk:
        vault = disk / "vault"
        if on_disk == "everything":  # for the daemon and every CLI run below
            monkeypatch.setenv("XDG_CACHE_HOME", str(disk / "cache"))
            monkeypatch.setenv("XDG_STATE_HOME", str(disk / "state"))
        Memory.init(vault)
        with running(tmp_path, vault) as (proc, notes, log_path):
            wait_for(lambda: "## Core Identity" in wm(vault), "the first working memory")
            filler = fill(disk)
            before = files(vault)

            # The CLI: one line naming the file, the problem and the fix; not a byte changed.
            failed = run_cli("--vault", str(vault), "remember", "The ferry leaves at noon.")
            one_line_error(failed, "memory/short_term.md", "the file system is full", "free some")
            assert files(vault) == before
            assert_whole(vault)

            # A person's in-place edits (each fits in the block its file already had) ask the
            # daemon for writes it cannot make: it says so once and keeps running.
            stm = vault / "memory/short_term.md"
            edited = stm.read_text().replace("## Goals\n", "## Goals\n- learn the cello\n")
            overwrite_in_place(stm, edited)
            atlas = vault / "memory/long_term/project-atlas.md"
            budget = atlas.read_text().replace(
                "- owner: the user\n", "- owner: the user\n- budget: 40k euro\n"
            )
            overwrite_in_place(atlas, budget)
            wait_for(
                lambda: "cannot be written, the file system is full" in log_path.read_text(),
                "the daemon to report the full disk",
            )
            wait_for(
                lambda: any("not writable: the file system is full" in m for m in notes.seen),
                "STATUS= to say what cannot be written",
            )
            assert proc.poll() is None, log_path.read_text()
            edits = {"memory/short_term.md": edited, "memory/long_term/project-atlas.md": budget}
            assert files(vault) == {**before, **{k: v.encode() for k, v in edits.items()}}
            assert_whole(vault)
            if on_disk == "vault":  # the index has room: search already has the edit
                wait_for(lambda: found(vault, "euro", "memory/long_term/project-atlas.md"), "index")

            # Room again: the daemon catches up by itself, nothing lost, nothing set aside.
            filler.unlink()
            wait_for(lambda: "learn the cello" in wm(vault), "the working memory to catch up")
            wait_for(lambda: found(vault, "euro", "memory/long_term/project-atlas.md"), "the index")
            run_cli("--vault", str(vault), "remember", "The ferry leaves at noon.", check=True)
            wait_for(lambda: "The ferry leaves at noon." in wm(vault), "a new event to show")
            assert_whole(vault)
            assert not list((vault / "context").glob("working_memory.edited-*"))
            # Each fault ends at its own next retry (the state's may come after the working
            # memory has caught up), so wait for the daemon to say so rather than stop at once.
            wait_for(
                lambda: "can be written again" in log_path.read_text(), "the all-clear in the log"
            )
            log = stop(proc, log_path)
        full = [line for line in log.splitlines() if "cannot be written" in line]
        assert full and len(full) == len(set(full)), "each fault is logged once, not per retry"
        assert "can be written again" in log


def test_a_file_size_limit_fails_remember_in_one_line_and_changes_nothing(
    tmp_path: Path, vault: Path
) -> None:
    """`ulimit -f` (RLIMIT_FSIZE) below the size the short-term file would grow to: EFBIG
    (Python ignores SIGXFSZ). Works without root, unlike the tmpfs tests."""
    stm = vault / "memory/short_term.md"
    limit = stm.stat().st_size + 16

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    before = files(vault)
    failed = subprocess.run(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "remember", "x" * 200],
        capture_output=True,
        text=True,
        preexec_fn=small_files,
        timeout=60,
    )
    one_line_error(failed, "memory/short_term.md", "file size limit", "ulimit -f")
    assert files(vault) == before
    assert_whole(vault)


def test_a_working_memory_record_that_cannot_be_saved_never_makes_a_hand_edit(
    tmp_path: Path, vault: Path
) -> None:
    """The record of what brainiac wrote (state folder) and the file (vault) can sit on different
    disks. The record is written first: a full state disk leaves the file as it was, and once
    there is room the next write is not mistaken for a person's edit (nothing set aside)."""
    when = dt.datetime(2026, 11, 22, 9, 0)
    notes = Vault.open(vault)
    with tmpfs(tmp_path / "state", "1m") as state:
        assert working.write(notes, state, "the first context\n", when).written
        before = (vault / WM).read_bytes()
        filler = fill(state)
        with pytest.raises(StorageError, match=r"working_memory\.json: cannot be written"):
            working.write(notes, state, "the second context\n", when)
        assert (vault / WM).read_bytes() == before
        filler.unlink()
        again = working.write(notes, state, "the second context\n", when)
        assert again.written and again.kept_aside is None
        assert "the second context" in wm(vault)
        assert not list((vault / "context").glob("working_memory.edited-*"))


# -- read-only vault ----------------------------------------------------------------------------
def test_a_read_only_vault_runs_read_only_and_resumes_when_remounted(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    with tmpfs(tmp_path / "vault", "4m") as vault:
        Memory.init(vault)
        (vault / WM).unlink(missing_ok=True)
        remount(vault, "ro")
        before = files(vault)
        with running(tmp_path, vault) as (proc, _notes, log_path):
            assert "read-only" in log_path.read_text()
            wait_for(lambda: "runs read-only" in troubles(vault), "the status file to say so")
            shown = status(vault)
            assert "warning:" in shown and "runs read-only" in shown, shown
            assert "remount it read-write" in shown, shown
            # Serving what it can: search and context from the index.
            assert found(vault, "atlas", "memory/long_term/project-atlas.md")
            shown = run_cli("--vault", str(vault), "context", check=True).stdout
            assert "## Core Identity" in shown
            failed = run_cli("--vault", str(vault), "remember", "The ferry leaves at noon.")
            one_line_error(failed, "memory/short_term.md", "read-only", "remount it read-write")
            assert files(vault) == before

            remount(vault, "rw")
            wait_for(lambda: "## Core Identity" in wm(vault), "the working memory once writable")
            wait_for(lambda: not troubles(vault), "the status to clear")
            run_cli("--vault", str(vault), "remember", "The ferry leaves at noon.", check=True)
            wait_for(lambda: "The ferry leaves at noon." in wm(vault), "a new event to show")

            # Remounted read-only under the running daemon (ext4's errors=remount-ro), and back.
            remount(vault, "ro")
            wait_for(lambda: "runs read-only" in troubles(vault), "the remount to be noticed")
            assert proc.poll() is None
            remount(vault, "rw")
            wait_for(lambda: not troubles(vault), "the status to clear again")
            assert_whole(vault)
            log = stop(proc, log_path)
        assert log.count("runs read-only") == 2, log  # once per episode, not once per retry


# -- the index deleted or damaged under the daemon ----------------------------------------------
def deliver(path: Path, text: str) -> None:
    """A note arriving whole, as a sync tool delivers one (a temp file renamed into place)."""
    incoming = path.with_name(path.name + ".tmp")
    incoming.write_text(text)
    os.rename(incoming, path)


def test_an_index_deleted_then_damaged_under_the_daemon_is_rebuilt(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> None:
    vault = tmp_path / "vault"
    Memory.init(vault)
    index_dir = Locations.for_vault(vault).index_dir
    long_term = vault / "memory/long_term"
    with running(tmp_path, vault) as (proc, _notes, log_path):
        wait_for(lambda: "## Core Identity" in wm(vault), "the first working memory")

        # Deleted (`rm -rf ~/.cache/brainiac`): the next edit finds no index and builds a new one.
        identity = (index_dir / "brainiac-index-id").read_text()
        shutil.rmtree(index_dir)
        run_cli(
            "--vault",
            str(vault),
            "remember",
            "Have you seen the kestrel at the quarry?",
            check=True,
        )
        deliver(long_term / "kestrel.md", "---\ntitle: Kestrel\n---\nA small falcon, hovering.\n")
        wait_for(lambda: "kestrel at the quarry" in wm(vault), "the event in the working memory")
        wait_for(lambda: found(vault, "falcon", "memory/long_term/kestrel.md"), "a new index")
        wait_for(lambda: "### Kestrel" in wm(vault), "the new note ranked into the working memory")
        assert (index_dir / "brainiac-index-id").read_text() != identity

        # Damaged: every file overwritten in place but its identity, so only reading it tells.
        identity = (index_dir / "brainiac-index-id").read_text()
        for f in index_dir.iterdir():
            if f.name != "brainiac-index-id":
                f.write_bytes(b"garbage" * 8)
        run_cli(
            "--vault", str(vault), "remember", "The grey heron is back at the pond.", check=True
        )
        deliver(long_term / "heron.md", "---\ntitle: Heron\n---\nA grey heron, fishing.\n")
        wait_for(lambda: "### Heron" in wm(vault), "the rebuilt index to rank the new note")
        wait_for(lambda: found(vault, "fishing", "memory/long_term/heron.md"), "the rebuild")
        assert found(vault, "falcon", "memory/long_term/kestrel.md")  # all of it, not a part
        assert (index_dir / "brainiac-index-id").read_text() != identity
        assert proc.poll() is None
        log = stop(proc, log_path)
    assert "the index cannot be used" in log and "rebuilding it from the vault" in log


# -- the inotify watch limit --------------------------------------------------------------------
def _user_namespace_limit_works() -> bool:
    try:
        done = subprocess.run(
            ["unshare", "-r", "sh", "-c", "echo 1 > /proc/sys/user/max_inotify_watches"],
            capture_output=True,
            timeout=10,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@pytest.mark.parametrize("watches", [0, 2])
def test_the_inotify_watch_limit_falls_back_to_polling_with_the_fix(
    tmp_path: Path, xdg_dirs: dict[str, str], watches: int
) -> None:
    """The limit really lowered, for the daemon only: `unshare -r` gives it a user namespace of
    its own, whose /proc/sys/user/max_inotify_watches caps its watches. 0: the vault folder itself
    cannot be watched (watchdog raises ENOSPC); 2: some folders get a watch and the rest are
    skipped without a word by watchdog."""
    if not _user_namespace_limit_works():
        pytest.skip("no `unshare -r` with a writable /proc/sys/user/max_inotify_watches here")
    vault = tmp_path / "vault"
    Memory.init(vault)
    limited = (
        "unshare",
        "-r",
        "sh",
        "-c",
        f'echo {watches} > /proc/sys/user/max_inotify_watches && exec "$@"',
        "sh",
    )
    with running(tmp_path, vault, prefix=limited) as (proc, _notes, log_path):
        log = log_path.read_text()
        assert "sudo sysctl fs.inotify.max_user_watches=524288" in log, log
        assert f"this user namespace allows {watches} (user.max_inotify_watches)" in log, log
        assert "polling every 2 s" in log, log
        if watches:  # the case watchdog is silent about
            assert "polls the vault" in status(vault)
        # Edits still arrive, from folders with and without a watch (at most the vault folder
        # and one other have one): a vim save in memory/, an in-place save in system/.
        stm = vault / "memory/short_term.md"
        vim_save(stm, stm.read_text().replace("## Goals\n", "## Goals\n- learn the cello\n"))
        identity = vault / "system/core_identity.md"
        nano_save(identity, identity.read_text() + "\nI answer in Swedish when asked to.\n")
        wait_for(lambda: "learn the cello" in wm(vault), "a save seen by polling")
        wait_for(lambda: "answer in Swedish" in wm(vault), "the other save seen by polling")
        stop(proc, log_path)


def test_a_storage_error_keeps_its_errno_and_says_the_fix_in_one_line() -> None:
    """StorageError is an OSError with the original errno (code that handles OSError keeps
    working) and a one-line message with the fix for each errno it covers."""
    for code, fix in (
        (errno.ENOSPC, "free some space"),
        (errno.EDQUOT, "quota"),
        (errno.EFBIG, "ulimit -f"),
        (errno.EROFS, "remount it read-write"),
        (errno.EACCES, "write access"),
    ):
        err = StorageError("/v/memory/short_term.md", OSError(code, os.strerror(code)))
        assert isinstance(err, OSError) and isinstance(err, BrainiacError)
        assert err.errno == code and err.filename == "/v/memory/short_term.md"
        text = str(err)
        assert text.startswith("/v/memory/short_term.md: cannot be written, ") and fix in text
        assert "\n" not in text and "it was left as it was" in text
