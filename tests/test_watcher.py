"""The watcher: path classification, the change tracker, and a real observer on a real folder.

Observer tests never sleep to let time pass: after the operations under test they write a sentinel
note and collect hints until the sentinel's arrives. inotify delivers events in order and watchdog
keeps that order, so by then every hint the operations caused has been delivered.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import queue
import re
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from brainiac.core.errors import VaultError
from brainiac.runtime import watcher
from brainiac.runtime.watcher import ChangeTracker, Watcher, classify, inotify_limits

# watchdog 7.1 races with itself on `mkdir -p a/b/c` (the parent's walk and the child's own create
# both add a watch) and warns "Callback with id ... already exists"; harmless, but pytest's
# filterwarnings=error turns it into an exception that kills watchdog's inotify reader thread.
pytestmark = pytest.mark.filterwarnings("ignore:Callback with id .* already exists:RuntimeWarning")

NOTES = "memory/long_term"
NOTE = f"{NOTES}/note.md"

# ---------------------------------------------------------------------------------------------
# classify


@pytest.mark.parametrize(
    ("rel", "expected"),
    [
        (NOTE, "note"),
        ("memory/short_term.md", "note"),
        ("system/core_identity.md", "note"),
        ("Anna Karenina.md", "note"),
        ("projects/2026/résumé.md", "note"),
        # vim, neovim, nano, emacs helpers
        (f"{NOTES}/.note.md.swp", "ignore"),
        (f"{NOTES}/.note.md.swx", "ignore"),
        (f"{NOTES}/4913", "ignore"),
        (f"{NOTES}/5036", "ignore"),
        (f"{NOTES}/note.md~", "ignore"),
        (f"{NOTES}/.#note.md", "ignore"),
        (f"{NOTES}/#note.md#", "ignore"),
        # IDEs, sync tools and our own temp files
        (f"{NOTES}/note.md___jb_tmp___", "ignore"),
        (f"{NOTES}/note.md___jb_old___", "ignore"),
        (f"{NOTES}/note.md.vsctmp", "ignore"),
        (f"{NOTES}/.syncthing.note.md.tmp", "ignore"),
        (f"{NOTES}/.note.md.k3j9x_a1.brainiac-tmp", "ignore"),
        # tool folders, at any depth
        (".obsidian/workspace.json", "ignore"),
        (".obsidian-awesome/snippets/x.md", "ignore"),
        (".obsidian/.sync.lock", "ignore"),
        (".git/index.lock", "ignore"),
        (".trash/old note.md", "ignore"),
        (".stversions/note~20260101-101010.md", "ignore"),
        ("memory/.stfolder", "ignore"),
        # the folder the daemon generates, and things that are not notes
        ("context/working_memory.md", "ignore"),
        ("context/sub/x.md", "ignore"),
        ("memory/context/x.md", "note"),  # only the top-level generated folder is ours
        (f"{NOTES}/photo.png", "ignore"),
        (f"{NOTES}/note.MD.bak", "ignore"),
        ("", "ignore"),
        # conflict copies end in .md
        (f"{NOTES}/note.sync-conflict-20260818-173636-D4LGQYW.md", "conflict"),
        (f"{NOTES}/note (Conflicted copy laptop 202611221030).md", "conflict"),
        (f"{NOTES}/note (Conflicted copy).md", "conflict"),
        (f"{NOTES}/note (Anna's conflicted copy 2026-11-22).md", "conflict"),
        (f"{NOTES}/note (CONFLICTED COPY 2026-11-22).md", "conflict"),
        (f"{NOTES}/how I fixed a conflicted copy.md", "note"),
        (f"{NOTES}/.note.sync-conflict-20260818-173636-D4LGQYW.md.tmp", "ignore"),
    ],
)
def test_classify(rel: str, expected: str) -> None:
    assert classify(rel) == expected


# ---------------------------------------------------------------------------------------------
# ChangeTracker


def test_a_completed_write_is_due_at_once() -> None:
    t = ChangeTracker()
    t.hint("a.md", True, now=10.0)
    assert t.next_deadline() == 10.0
    assert t.due(10.0) == ["a.md"]
    assert t.due(99.0) == []  # forgotten once returned
    assert t.next_deadline() is None


def test_a_bare_hint_waits_for_quiet_and_each_hint_restarts_it() -> None:
    t = ChangeTracker(quiet_s=0.3, cap_s=2.0)
    t.hint("a.md", False, now=0.0)
    assert t.due(0.29) == []
    t.hint("a.md", False, now=0.2)
    assert t.due(0.49) == []
    assert t.next_deadline() == pytest.approx(0.5)
    assert t.due(0.5) == ["a.md"]


def test_a_writer_that_never_pauses_is_read_at_the_cap() -> None:
    t = ChangeTracker(quiet_s=0.3, cap_s=2.0)
    now = 0.0
    while now < 1.9:
        t.hint("log.md", False, now)
        assert t.due(now) == []
        now += 0.1
    t.hint("log.md", False, now=1.95)
    assert t.next_deadline() == 2.0
    assert t.due(2.0) == ["log.md"]


def test_a_bare_hint_after_a_completed_one_waits_again() -> None:
    # vim: closed, then attrib; or a new in-place write starting right after a finished one.
    t = ChangeTracker(quiet_s=0.3)
    t.hint("a.md", True, now=0.0)
    t.hint("a.md", False, now=0.01)
    assert t.due(0.2) == []
    assert t.due(0.31) == ["a.md"]


def test_due_returns_only_ready_paths_sorted() -> None:
    t = ChangeTracker(quiet_s=0.3)
    t.hint("b.md", True, now=0.0)
    t.hint("c.md", False, now=0.0)
    t.hint("a.md", True, now=0.0)
    assert t.pending() == 3
    assert t.due(0.1) == ["a.md", "b.md"]
    assert t.due(0.3) == ["c.md"]


def test_a_missing_file_is_deleted_only_after_the_grace_period() -> None:
    t = ChangeTracker(grace_s=1.0)
    t.hint("a.md", False, now=0.0)
    assert t.due(0.3) == ["a.md"]
    assert t.hint_missing("a.md", now=0.3) is False  # perhaps a rename-save in the middle
    assert t.next_deadline() == pytest.approx(1.3)
    assert t.due(1.2) == []
    assert t.due(1.3) == ["a.md"]
    assert t.hint_missing("a.md", now=1.3) is True


def test_an_event_during_the_grace_period_restarts_it() -> None:
    t = ChangeTracker(quiet_s=0.3, grace_s=1.0)
    assert t.hint_missing("a.md", now=0.0) is False
    t.hint("a.md", False, now=0.5)  # created and deleted again, say
    assert t.due(0.8) == ["a.md"]
    assert t.hint_missing("a.md", now=0.8) is False
    assert t.due(1.79) == []
    assert t.due(1.8) == ["a.md"]
    assert t.hint_missing("a.md", now=1.8) is True


def test_tracker_rejects_settings_that_cannot_work() -> None:
    with pytest.raises(ValueError):
        ChangeTracker(quiet_s=3.0, cap_s=2.0)
    with pytest.raises(ValueError):
        ChangeTracker(grace_s=-1.0)


@dataclass
class _Episode:
    """The model's view of one path between two emissions."""

    first: float
    last: float
    last_completed: bool


_PATHS = ["a.md", "b.md", "c.md"]
_ops = st.lists(
    st.tuples(
        st.sampled_from(["hint", "hint", "due", "missing"]),
        st.sampled_from(_PATHS),
        st.booleans(),
        # Steps around the quiet time, and runs of small ones long enough to reach the cap (which is
        # short here so that they are found often).
        st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.29, 0.3, 0.31, 0.5, 0.7, 1.0])
        | st.floats(min_value=0.0, max_value=0.35, allow_nan=False),
    ),
    max_size=80,
)


@settings(max_examples=300)
@given(_ops)
def test_tracker_properties(ops: list[tuple[str, str, bool, float]]) -> None:
    """Every hinted path comes out exactly once; never before its quiet time unless its last hint
    was completed; never later than the cap (or, at once, after a completed hint). A missing path
    is re-checked not before, and not after, the grace period; deletion is declared only then."""
    quiet, cap, grace = 0.3, 0.7, 0.5
    t = ChangeTracker(quiet_s=quiet, cap_s=cap, grace_s=grace)
    open_: dict[str, _Episode] = {}  # hinted and not yet returned
    rechecks: dict[str, float] = {}  # scheduled by hint_missing: when it is due
    missing_since: dict[str, float] = {}
    now = 0.0

    def check(out: list[str]) -> None:
        assert out == sorted(set(out))
        for rel in out:
            assert rel in open_ or rel in rechecks, f"{rel} came out without being hinted"
            ep = open_.pop(rel, None)
            recheck_at = rechecks.pop(rel, None)
            if ep is not None and not ep.last_completed:
                assert now >= min(ep.last + quiet, ep.first + cap) - 1e-9, f"{rel} too early"
            if ep is None and recheck_at is not None:
                assert now >= recheck_at - 1e-9, f"{rel} re-checked before the grace period"
        for rel, ep in open_.items():  # what is still waiting must not be overdue
            assert now < ep.first + cap, f"{rel} held past the cap"
            assert not ep.last_completed, f"{rel}: a completed write was held"
        for rel, at in rechecks.items():
            assert rel in open_ or now < at, f"{rel}: re-check held past the grace period"

    for op, rel, completed, dt in ops:
        now += dt
        if op == "hint":
            t.hint(rel, completed, now)
            missing_since.pop(rel, None)
            rechecks.pop(rel, None)  # the hint supersedes a scheduled re-check
            ep = open_.get(rel)
            open_[rel] = _Episode(ep.first if ep else now, now, completed)
        elif op == "missing":
            if rel in open_ or rel in rechecks:
                continue  # the consumer only asks about a path it was just given
            since = missing_since.setdefault(rel, now)
            gone = now >= since + grace
            assert t.hint_missing(rel, now) is gone
            if gone:
                del missing_since[rel]
            else:
                rechecks[rel] = since + grace
        else:
            check(t.due(now))
    now += cap + grace
    check(t.due(now))
    assert not open_ and not rechecks and t.next_deadline() is None


# ---------------------------------------------------------------------------------------------
# the observer


Hint = tuple[str, bool]


class Recorder:
    """What the watcher reported, through queues, as the daemon's main loop would receive it."""

    def __init__(self) -> None:
        self.hints: queue.Queue[Hint] = queue.Queue()
        self.overflows: queue.Queue[None] = queue.Queue()
        self.fail_on: Callable[[str], bool] = lambda rel: False

    def on_hint(self, rel: str, completed: bool) -> None:
        if self.fail_on(rel):
            raise RuntimeError(f"consumer failed on {rel}")
        self.hints.put((rel, completed))

    def on_overflow(self) -> None:
        self.overflows.put(None)

    def until(
        self,
        root: Path,
        sentinel: str = "zz_sentinel.md",
        timeout: float = 5.0,
    ) -> list[Hint]:
        """Write a sentinel note, and return every hint delivered before its own.

        Waits for the sentinel's last hint (the close after its write), so that none of its hints
        is left in the queue for the next call."""
        (root / sentinel).write_text("sync point\n")
        seen: list[Hint] = []
        while True:
            rel, completed = self.hints.get(timeout=timeout)
            if rel == sentinel:
                if completed:
                    return seen
                continue
            seen.append((rel, completed))

    def overflowed(self, timeout: float = 5.0) -> bool:
        try:
            self.overflows.get(timeout=timeout)
        except queue.Empty:
            return False
        return True


@pytest.fixture
def root(tmp_path: Path) -> Path:
    path = tmp_path / "vault"
    (path / NOTES).mkdir(parents=True)
    (path / NOTE).write_text("# Note\n\nfirst version\n")
    return path


@pytest.fixture
def rec() -> Recorder:
    return Recorder()


@pytest.fixture
def watching(root: Path, rec: Recorder) -> Iterator[Watcher]:
    w = Watcher(root, rec.on_hint, rec.on_overflow)
    w.start()
    try:
        yield w
    finally:
        w.stop()


def _paths(hints: list[Hint]) -> set[str]:
    return {rel for rel, _ in hints}


@pytest.mark.usefixtures("watching")
def test_vim_rename_save_is_one_completed_note_and_no_helper(root: Path, rec: Recorder) -> None:
    d = root / NOTES
    (d / ".note.md.swp").write_bytes(b"\0" * 4096)
    (d / "4913").write_bytes(b"")
    (d / "4913").unlink()
    (d / "note.md").rename(d / "note.md~")
    with open(d / "note.md", "w") as f:
        f.write("# Note\n\nsecond version\n")
    (d / "note.md~").unlink()
    (d / ".note.md.swp").unlink()
    hints = rec.until(root)
    assert (NOTE, True) in hints
    assert _paths(hints) == {NOTE}


@pytest.mark.usefixtures("watching")
def test_nano_in_place_rewrite_is_hinted(root: Path, rec: Recorder) -> None:
    (root / NOTES / ".note.md.swp").write_bytes(b"nano lock")
    with open(root / NOTE, "r+") as f:
        f.truncate(0)
        f.flush()
        f.write("# Note\n\nrewritten in place\n")
    (root / NOTES / ".note.md.swp").unlink()
    hints = rec.until(root)
    assert _paths(hints) == {NOTE}
    assert hints[-1] == (NOTE, True)  # the close after the write
    assert (NOTE, False) in hints  # the modify before it, when the file may be half written


@pytest.mark.usefixtures("watching")
def test_syncthing_temp_renamed_onto_a_note_is_a_completed_hint(
    root: Path,
    rec: Recorder,
) -> None:
    tmp = root / NOTES / ".syncthing.note.md.tmp"
    tmp.write_text("# Note\n\nfrom the other laptop\n")
    os.replace(tmp, root / NOTE)
    hints = rec.until(root)
    assert hints == [(NOTE, True)]


@pytest.mark.usefixtures("watching")
def test_obsidian_config_churn_and_git_are_silent(root: Path, rec: Recorder) -> None:
    cfg = root / ".obsidian"
    (cfg / "plugins" / "x").mkdir(parents=True)
    for i in range(5):
        (cfg / "workspace.json").write_text(f'{{"active": {i}}}')
    (cfg / ".sync.lock").mkdir()
    (cfg / "plugins" / "x" / "README.md").write_text("a plugin's own notes")
    (root / ".git").mkdir()
    (root / ".git" / "index.lock").write_text("")
    os.replace(root / ".git" / "index.lock", root / ".git" / "index")
    (root / ".trash").mkdir()
    (root / "context").mkdir()
    (root / "context" / "working_memory.md").write_text("generated")
    shutil.rmtree(cfg / "plugins")
    assert rec.until(root) == []


@pytest.mark.usefixtures("watching")
def test_a_conflict_copy_is_hinted_for_the_consumer_to_decide(root: Path, rec: Recorder) -> None:
    rel = f"{NOTES}/note.sync-conflict-20260818-173636-D4LGQYW.md"
    tmp = root / NOTES / ".syncthing.note.sync-conflict-20260818-173636-D4LGQYW.md.tmp"
    tmp.write_text("the other version")
    os.replace(tmp, root / rel)
    assert classify(rel) == "conflict"
    assert rec.until(root) == [(rel, True)]


@pytest.mark.usefixtures("watching")
def test_a_folder_moved_into_the_vault_hints_its_notes(
    root: Path, rec: Recorder, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere" / "project"
    (outside / "sub").mkdir(parents=True)
    (outside / ".hidden").mkdir()
    (outside / "a.md").write_text("a")
    (outside / "sub" / "b.md").write_text("b")
    (outside / ".hidden" / "c.md").write_text("c")
    (outside / "x.txt").write_text("x")
    os.rename(outside, root / NOTES / "project")
    hints = rec.until(root)
    assert _paths(hints) == {f"{NOTES}/project/a.md", f"{NOTES}/project/sub/b.md"}
    assert (f"{NOTES}/project/a.md", True) in hints
    assert (f"{NOTES}/project/sub/b.md", True) in hints


@pytest.mark.usefixtures("watching")
def test_a_folder_renamed_in_the_vault_hints_both_sides_and_asks_for_a_rescan(
    root: Path, rec: Recorder
) -> None:
    (root / "old" / "sub").mkdir(parents=True)
    (root / "old" / "sub" / "b.md").write_text("b")
    rec.until(root)
    os.rename(root / "old", root / "new")
    hints = rec.until(root, sentinel="zz_sentinel2.md")
    assert ("new/sub/b.md", True) in hints
    assert "old/sub/b.md" in _paths(hints)  # watchdog's own per-file move events
    assert rec.overflowed()


@pytest.mark.usefixtures("watching")
def test_a_deleted_folder_asks_for_a_rescan(root: Path, rec: Recorder) -> None:
    shutil.rmtree(root / "memory")
    hints = rec.until(root)
    assert NOTE in _paths(hints)
    assert rec.overflowed()


def test_a_failing_consumer_does_not_kill_the_observer(
    root: Path, rec: Recorder, watching: Watcher, caplog: pytest.LogCaptureFixture
) -> None:
    rec.fail_on = lambda rel: rel.endswith("boom.md")
    with caplog.at_level(logging.ERROR, logger="brainiac.runtime.watcher"):
        (root / "boom.md").write_text("x")
        assert _paths(rec.until(root)) == set()
    assert "consumer failed on boom.md" in caplog.text
    assert rec.overflowed()  # the lost hint is made good by a rescan
    assert watching.is_alive()
    (root / NOTE).write_text("later edit")
    assert NOTE in _paths(rec.until(root, sentinel="zz_sentinel2.md"))


def test_an_overflow_warning_asks_for_a_rescan(rec: Recorder, watching: Watcher) -> None:
    # watchdog 7.1 reports a kernel queue overflow only as this warning (the real overflow needs
    # the reader stopped while ~20,000 files are created; the notes did that, section 3.2).
    logging.getLogger("watchdog.observers.inotify_c").warning(
        "Inotify queue overflowed; filesystem events were lost"
    )
    assert rec.overflowed()
    logging.getLogger("watchdog.observers.inotify_c").warning("something else")
    assert rec.overflows.empty()
    watching.stop()
    for name in ("watchdog.observers.inotify_c", "watchdog.observers.inotify"):
        assert not any(
            isinstance(h, watcher._OverflowHook) for h in logging.getLogger(name).handlers
        )


def test_stop_joins_every_thread_and_can_be_repeated(root: Path, rec: Recorder) -> None:
    before = set(threading.enumerate())
    w = Watcher(root, rec.on_hint, rec.on_overflow)
    assert not w.is_alive()
    w.stop()  # before start: nothing to do
    with w:
        assert w.is_alive()
        assert set(threading.enumerate()) - before
    assert not w.is_alive()
    assert {t for t in threading.enumerate() if t.is_alive()} - before == set()
    w.stop()


@pytest.mark.usefixtures("watching")
def test_nested_folders_created_at_once_are_all_watched(root: Path, rec: Recorder) -> None:
    for i in range(20):
        (root / f"d{i}" / "a" / "b" / "c").mkdir(parents=True)
        (root / f"d{i}" / "a" / "b" / "c" / "n.md").write_text("x")
    hints = rec.until(root)
    assert _paths(hints) == {f"d{i}/a/b/c/n.md" for i in range(20)}


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_inotify_reader_is_reported(
    root: Path, rec: Recorder, watching: Watcher, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Any exception in watchdog's own reader thread kills it (pytest's filterwarnings=error did,
    # with the warning above); the dispatcher then waits forever. The daemon must see that the
    # watcher is dead (and exit, so that it is restarted).
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in watchdog's reader")

    monkeypatch.setattr("watchdog.observers.inotify_c.InotifyFD.add_callback", broken)
    assert watching.is_alive()
    (root / "new folder").mkdir()
    deadline = time.monotonic() + 5
    while watching.is_alive() and time.monotonic() < deadline:
        threading.Event().wait(0.01)
    assert not watching.is_alive()


@pytest.mark.parametrize(
    ("err", "fix"),
    [
        (errno.ENOSPC, "sudo sysctl fs.inotify.max_user_watches=524288"),
        (errno.EMFILE, "sudo sysctl fs.inotify.max_user_instances="),
    ],
)
def test_an_inotify_limit_is_one_line_with_the_fix(
    root: Path, rec: Recorder, monkeypatch: pytest.MonkeyPatch, err: int, fix: str
) -> None:
    # The limits cannot be lowered for one test (they are per user, system-wide), so the
    # observer's schedule() raises what watchdog raises when inotify_add_watch fails.
    def full(*args: object, **kwargs: object) -> None:
        raise OSError(err, os.strerror(err))

    monkeypatch.setattr("brainiac.runtime.watcher.Observer.schedule", full)
    w = Watcher(root, rec.on_hint, rec.on_overflow)
    with pytest.raises(VaultError) as info:
        w.start()
    message = str(info.value)
    assert fix in message and "\n" not in message and str(root) in message
    assert not w.is_alive()
    assert not any(
        isinstance(h, watcher._OverflowHook)
        for h in logging.getLogger("watchdog.observers.inotify_c").handlers
    )


def test_folders_left_unwatched_at_start_are_reported(
    root: Path, rec: Recorder, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # watchdog skips a sub-folder whose watch fails (ENOSPC included) without a word.
    import watchdog.observers.inotify_c as inotify_c  # only to fake the limit for one folder

    real = inotify_c.InotifyFD.add_callback

    def limited(self: object, path: bytes, *args: object, **kwargs: object) -> object:
        if path.endswith(b"long_term"):
            raise OSError(errno.ENOSPC, "inotify watch limit reached")
        return real(self, path, *args, **kwargs)

    monkeypatch.setattr(inotify_c.InotifyFD, "add_callback", limited)
    with (
        caplog.at_level(logging.WARNING, logger="brainiac.runtime.watcher"),
        Watcher(root, rec.on_hint, rec.on_overflow) as w,
    ):
        assert w.is_alive()
    assert "only 2 of 3 folders are watched" in caplog.text
    assert "fs.inotify.max_user_watches=524288" in caplog.text


def test_a_fully_watched_vault_logs_nothing(
    root: Path, rec: Recorder, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING), Watcher(root, rec.on_hint, rec.on_overflow):
        pass
    # Nothing from us, and not watchdog's "called when the thread is inactive" at stop either.
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == []


def test_a_missing_vault_is_a_vault_error(tmp_path: Path, rec: Recorder) -> None:
    w = Watcher(tmp_path / "nope", rec.on_hint, rec.on_overflow)
    with pytest.raises(VaultError, match="cannot watch the vault"):
        w.start()
    assert not w.is_alive()


def test_inotify_limits_are_read_from_proc() -> None:
    limits = inotify_limits()
    assert set(limits) == {"max_user_watches", "max_user_instances", "max_queued_events"}
    if Path("/proc/sys/fs/inotify").is_dir():
        assert all(isinstance(v, int) and v > 0 for v in limits.values())


def _inotify_masks() -> list[int]:
    """The event masks of this process's inotify watches, as the kernel keeps them."""
    masks = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            info = Path(f"/proc/self/fdinfo/{fd}").read_text()
            masks += [int(m, 16) for m in re.findall(r"^inotify .* mask:([0-9a-f]+)", info, re.M)]
    return masks


def test_reading_notes_queues_no_event(watching: Watcher) -> None:
    """Every context opens and reads notes: the watcher asks inotify for changes only, so the
    kernel queues nothing for a read (IN_OPEN 0x20, IN_CLOSE_NOWRITE 0x10) for its thread to
    parse and drop; a change (IN_MODIFY 0x2, IN_CLOSE_WRITE 0x8) is still asked for."""
    masks = _inotify_masks()
    assert masks, "the watcher's inotify watches"
    for mask in masks:
        assert mask & 0x30 == 0, hex(mask)
        assert mask & 0x0A == 0x0A, hex(mask)
