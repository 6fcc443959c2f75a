"""A person's in-place save racing brainiac's compare-and-swap, each interleaving driven exactly.

safe_io commits with renameat2(RENAME_EXCHANGE). These tests put the person's saves at the
moments where saves were lost (docs/reliability.md, "The lost save"): the test wraps the real
exchange (or the folder fsync that follows it) and saves the way nano and Obsidian Sync do, in
place, at that point. Real files, real renames; nothing waits on the clock except `settled()`,
which waits for the file to be quiet, and one thread that waits on an event with a deadline.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from brainiac.core.errors import StaleWriteError
from brainiac.store import safe_io
from brainiac.store.vault import is_conflict_copy

# The time a write spends in fsync on a real disk shapes where the kills and races land.
pytestmark = pytest.mark.on_disk


def _folder(tmp_path: Path) -> Path:
    """A folder of its own (tmp_path holds the test's XDG folders too)."""
    folder = tmp_path / "memory"
    folder.mkdir()
    return folder


def _save_in_place(path: Path, data: bytes) -> None:
    with open(path, "wb") as f:  # open(O_TRUNC), then write: nano, Obsidian Sync
        f.write(data)


def _everything_beside(path: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(path.parent.iterdir())}


def _conflict_copies(path: Path) -> list[Path]:
    return [p for p in sorted(path.parent.iterdir()) if is_conflict_copy(p.name)]


def _wrap_exchange(
    monkeypatch: pytest.MonkeyPatch, before: Callable[[int], None], after: Callable[[int], None]
) -> list[int]:
    real = safe_io._rename_exchange
    calls: list[int] = []

    def exchange(a: Path, b: Path) -> bool:
        n = len(calls)
        calls.append(n)
        before(n)
        done = real(a, b)
        after(n)
        return done

    monkeypatch.setattr(safe_io, "_rename_exchange", exchange)
    return calls


def _late_save(
    monkeypatch: pytest.MonkeyPatch,
    path: Path,
    data: bytes,
    then: Callable[[], None] = lambda: None,
) -> list[int]:
    """An editor whose open finds `path` just before our exchange and whose truncation and
    write come at the folder fsync after it (then `then`). Returns its descriptors still to
    write (empty once the save is done)."""
    editor: list[int] = []

    def before(n: int) -> None:
        if n == 0:
            editor.append(os.open(path, os.O_WRONLY))

    real_fsync_dir = safe_io.fsync_dir

    def fsync_dir(directory: Path) -> None:
        real_fsync_dir(directory)
        if editor:
            fd = editor.pop()
            os.ftruncate(fd, 0)
            os.write(fd, data)
            os.close(fd)
            then()

    _wrap_exchange(monkeypatch, before, lambda n: None)
    monkeypatch.setattr(safe_io, "fsync_dir", fsync_dir)
    return editor


def test_a_save_over_our_version_before_the_give_back_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The harness's lost save: the person saves between our check and our exchange (so ours
    # must give theirs back), and in the instant our version stands at the path they read it
    # and save again, in place, into our inode. A bare swap back then took that inode off the
    # path and unlinked it with the newest save inside.
    p = _folder(tmp_path) / "short_term.md"
    p.write_bytes(b"base\n")
    _, fp = safe_io.read_bytes(p)

    def before(n: int) -> None:
        if n == 0:
            _save_in_place(p, b"base\nfirst save\n")

    def after(n: int) -> None:
        if n == 0:
            _save_in_place(p, p.read_bytes() + b"second save\n")  # reads ours, saves in place

    calls = _wrap_exchange(monkeypatch, before, after)
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"base\nbrainiac's line\n", fp)

    assert len(calls) >= 2  # the exchange, then the give-back
    files = _everything_beside(p)
    # The newest save is at the path; the one it displaced is kept beside it, not deleted.
    assert p.read_bytes() == b"base\nbrainiac's line\nsecond save\n", files
    copies = _conflict_copies(p)
    assert [c.read_bytes() for c in copies] == [b"base\nfirst save\n"], files
    assert not [n for n in files if n.endswith(safe_io.TMP_SUFFIX)], files


def test_a_save_that_lands_before_the_exchange_is_given_back_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The common give-back: nobody touches our version while it stands at the path, so it is
    # unlinked and theirs is the file again, with no conflict copy.
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"base\n")
    _, fp = safe_io.read_bytes(p)

    def before(n: int) -> None:
        if n == 0:
            _save_in_place(p, b"base\ntheirs\n")

    _wrap_exchange(monkeypatch, before, lambda n: None)
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours\n", fp)
    assert _everything_beside(p) == {"n.md": b"base\ntheirs\n"}


def test_a_save_into_the_swapped_out_file_after_the_exchange_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The window the quiet wait cannot close: the editor's open found the file before our
    # exchange (in the kernel, open(O_TRUNC) looks the path up, then truncates), and its
    # truncation and write come after we read back what was swapped out and unlinked it. The
    # test holds a descriptor opened before the exchange, and truncates and writes through it
    # at the folder fsync that follows the unlink: the save lands in the inode that left.
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"base\n")
    _, fp = safe_io.read_bytes(p)
    editor = _late_save(monkeypatch, p, b"base\nthe person's late save\n")
    with pytest.raises(StaleWriteError, match="kept theirs"):
        safe_io.write_bytes(p, b"base\nbrainiac's line\n", fp)

    assert not editor  # the late save really happened, after the exchange
    assert _everything_beside(p) == {"n.md": b"base\nthe person's late save\n"}


def test_an_editor_still_opening_the_swapped_out_file_is_waited_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The open that waited 8 ms under load: the editor has the replaced inode open to write
    # but has written nothing when we look after our write. Its bytes still say nothing; that it
    # holds the file open for writing does, and the write waits for it to finish. Here the
    # editor writes only once our write has asked (a thread, released by that question).
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"base\n")
    _, fp = safe_io.read_bytes(p)
    editor: list[int] = []
    asked = threading.Event()
    real_probe = safe_io._open_for_writing

    def probe(fd: int) -> bool:
        answer = real_probe(fd)
        if answer:
            asked.set()
        return answer

    def before(n: int) -> None:
        if n == 0:
            editor.append(os.open(p, os.O_WRONLY))  # its open is done, its write to come

    def save_late() -> None:
        assert asked.wait(timeout=10)
        fd = editor.pop()
        os.ftruncate(fd, 0)
        os.write(fd, b"base\nthe stalled editor's save\n")
        os.close(fd)

    _wrap_exchange(monkeypatch, before, lambda n: None)
    monkeypatch.setattr(safe_io, "_open_for_writing", probe)
    late = threading.Thread(target=save_late)
    late.start()
    try:
        with pytest.raises(StaleWriteError, match="kept theirs"):
            safe_io.write_bytes(p, b"base\nbrainiac's line\n", fp)
    finally:
        asked.set()
        late.join(timeout=10)
    assert _everything_beside(p) == {"n.md": b"base\nthe stalled editor's save\n"}


def test_a_late_save_is_kept_beside_when_the_file_changed_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As above, but someone saves the path again before the late save can go back over ours:
    # the compare-and-swap refuses, and the late save is kept as a conflict copy.
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"base\n")
    _, fp = safe_io.read_bytes(p)

    def rename_save() -> None:
        vim = p.with_name(".n.md.swp")
        vim.write_bytes(b"a rename-save after it\n")
        os.replace(vim, p)

    _late_save(monkeypatch, p, b"late save\n", then=rename_save)
    with pytest.raises(StaleWriteError):
        safe_io.write_bytes(p, b"ours\n", fp)

    assert p.read_bytes() == b"a rename-save after it\n"
    assert [c.read_bytes() for c in _conflict_copies(p)] == [b"late save\n"]
    assert not [n for n in _everything_beside(p) if n.endswith(safe_io.TMP_SUFFIX)]


def test_an_empty_file_that_never_goes_quiet_is_not_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # An editor truncating the file save after save: each empty moment looks like the one we
    # read, so a write computed from "empty" must not go in after the wait gives up.
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"")  # just written: its ctime is fresh, and stays so for the short wait
    _, fp = safe_io.read_bytes(p)
    monkeypatch.setattr(safe_io, "_MAX_WAIT_S", 0.05)
    with pytest.raises(StaleWriteError, match="empty and being written"):
        safe_io.write_bytes(p, b"computed from nothing\n", fp)
    assert _everything_beside(p) == {"n.md": b""}


def test_a_write_with_nobody_racing_leaves_no_copy_and_no_descriptor(tmp_path: Path) -> None:
    p = _folder(tmp_path) / "n.md"
    p.write_bytes(b"base\n")
    fds_before = set(os.listdir("/proc/self/fd"))
    for i in range(20):
        data, fp = safe_io.read_bytes(p)
        safe_io.write_bytes(p, data + f"line {i}\n".encode(), fp)
    assert set(os.listdir("/proc/self/fd")) == fds_before
    assert list(_everything_beside(p)) == ["n.md"]
    assert p.read_bytes().count(b"line") == 20


def test_a_conflict_copy_name_is_one_the_vault_knows() -> None:
    name = safe_io.conflict_copy_path(Path("memory/long_term/anna.md"), 2).name
    assert is_conflict_copy(name), name
    assert name.startswith("anna (Conflicted copy brainiac ") and name.endswith(" 2).md")
