"""Real editors against the real daemon: vim and nano, driven through tmux as a person types.

The vault lies outside /tmp (under ~/.cache/brainiac-tests/): vim's `backupskip` covers /tmp, and
there vim writes in place instead of its usual rename save. vim runs with `-u NONE -N -i NONE`
(its defaults, no vimrc, no viminfo) and keeps its swap file beside the note; nano runs with
`-I --locking` (no nanorc, and the lock file Debian's nanorc turns on). nano comes from PATH or
from .ci/tools/nano/ (.ci/fetch-nano); without it the nano tests skip.

The daemon's scheduled memory jobs are off, so that no job rewrites a file while an editor has it
open, unless the test does it.

When brainiac appends an event to a file an editor has open, the editor warns on save. A person
who saves anyway removes the event from the file: their save wins, and the event journal
(journal.py) puts the event back: the daemon runs its recovery job as soon as it sees event lines
leave the log. Declining, or reloading first, keeps both.
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac import Memory
from helpers import JOBS_OFF, STM, found, recover_events, remember, run_daemon, stop, wait_for

REPO = Path(__file__).resolve().parents[1]
_FETCHED_NANO = REPO / ".ci" / "tools" / "nano" / "bin" / "nano"
NANO = shutil.which("nano") or (str(_FETCHED_NANO) if _FETCHED_NANO.is_file() else None)
VIM = shutil.which("vim")

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
needs_vim = pytest.mark.skipif(VIM is None, reason="vim is not installed")
needs_nano = pytest.mark.skipif(
    NANO is None,
    reason="nano is neither on PATH nor in .ci/tools/nano/ (run .ci/fetch-nano: apt-get download)",
)

SCREEN_DEADLINE_S = 30.0  # a hang guard: four test workers share two cores


class Tmux:
    """One tmux server of our own (its own socket), one window 200x50, one program in it."""

    def __init__(self, socket: str, config: Path) -> None:
        self.base = ["tmux", "-L", socket, "-f", str(config)]
        self.socket_path: Path | None = None

    def start(self, cwd: Path, command: list[str]) -> None:
        self._tmux(
            "new-session", "-d", "-x", "200", "-y", "50", "-c", str(cwd), shlex.join(command)
        )
        self.socket_path = Path(
            self._tmux("display-message", "-p", "#{socket_path}").stdout.strip()
        )

    def keys(self, *keys: str) -> None:
        """Keys by tmux's names: Enter, Escape, C-o, M-/."""
        self._tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", "--", text)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p").stdout

    def wait(self, text: str) -> str:
        """The screen once it shows `text` (AssertionError with the screen if it never does)."""
        end = time.monotonic() + SCREEN_DEADLINE_S
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            if time.monotonic() > end:
                raise AssertionError(f"the screen never showed {text!r}:\n{screen}")
            time.sleep(0.05)  # polling the screen: the condition, not the sleep, decides

    def close(self) -> None:
        subprocess.run([*self.base, "kill-server"], capture_output=True, timeout=10)
        if self.socket_path is not None:  # kill-server leaves the socket file behind
            self.socket_path.unlink(missing_ok=True)

    def _tmux(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self.base, *args], capture_output=True, text=True, timeout=10, check=True
        )


def vim(rel: str) -> list[str]:
    assert VIM is not None
    return [VIM, "-u", "NONE", "-N", "-i", "NONE", rel]


def nano(rel: str) -> list[str]:
    assert NANO is not None
    return [NANO, "-I", "--locking", rel]


@pytest.fixture
def vault() -> Iterator[Path]:
    """A fresh vault outside /tmp, removed afterwards."""
    base = Path.home() / ".cache" / "brainiac-tests"
    if base.resolve().is_relative_to("/tmp"):
        pytest.skip(f"{base} is under /tmp, where vim saves in place ('backupskip')")
    folder = base / uuid.uuid4().hex[:12]
    folder.mkdir(parents=True)
    try:
        path = folder / "vault"
        Memory.init(path)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        with contextlib.suppress(OSError):
            base.rmdir()  # only when no other run is using it


@pytest.fixture
def daemon(vault: Path, tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    log = tmp_path / "daemon.log"
    with run_daemon(vault, log, JOBS_OFF) as proc:
        wait_for(lambda: "## Core Identity" in _wm(vault), "the first working memory")
        yield proc
        stop(proc)  # still running, and stops cleanly
    assert "ERROR" not in log.read_text() and "Traceback" not in log.read_text(), log.read_text()


@pytest.fixture
def tmux(tmp_path: Path) -> Iterator[Tmux]:
    config = tmp_path / "tmux.conf"
    # "screen" is in every terminfo database; no escape delay, so vim's Escape is at once.
    config.write_text("set -g default-terminal screen\nset -g escape-time 0\n")
    t = Tmux(f"brainiac-test-{os.getpid()}-{uuid.uuid4().hex[:8]}", config)
    try:
        yield t
    finally:
        t.close()


def _wm(vault: Path) -> str:
    try:
        return (vault / "context/working_memory.md").read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


# ---------------------------------------------------------------------------------------------
# a person's save of a note reaches the working memory and the index


@needs_vim
@pytest.mark.usefixtures("daemon")
def test_a_vim_save_of_a_note_reaches_the_working_memory_and_search(
    vault: Path, tmux: Tmux
) -> None:
    rel = "memory/long_term/project-atlas.md"
    atlas = vault / rel
    remember(vault, "How is the Atlas migration going?")  # pulls the note into working memory
    wait_for(lambda: "### Project Atlas" in _wm(vault), "the note in the working memory")
    inode = atlas.stat().st_ino
    tmux.start(vault, vim(rel))
    tmux.wait(f'"{rel}"')
    tmux.type("/- owner")
    tmux.keys("Enter")
    tmux.type("o- budget: 40k euro")
    tmux.keys("Escape")
    tmux.type(":w")
    tmux.keys("Enter")
    tmux.wait("written")
    # Outside /tmp vim saves by renaming the note to note.md~ and writing a new file.
    assert atlas.stat().st_ino != inode
    assert "- owner: the user\n- budget: 40k euro\n" in atlas.read_text()
    wait_for(lambda: "budget: 40k euro" in _wm(vault), "the vim save in the working memory")
    wait_for(found(vault, "euro", rel), "the vim save in the index")
    assert not list(atlas.parent.glob("*~"))  # vim's backup went once the save was done
    tmux.type(":q")
    tmux.keys("Enter")
    wait_for(lambda: not any(atlas.parent.glob(".*.sw?")), "vim's swap file to go")


@needs_nano
@pytest.mark.usefixtures("daemon")
def test_a_nano_save_of_a_note_reaches_the_working_memory_and_search(
    vault: Path, tmux: Tmux
) -> None:
    rel = "memory/long_term/anna-berg.md"
    anna = vault / rel
    remember(vault, "Anna wants the Atlas update on Friday")
    wait_for(lambda: "### Anna Berg" in _wm(vault), "the note in the working memory")
    inode = anna.stat().st_ino
    tmux.start(vault, nano(rel))
    tmux.wait("GNU nano")
    tmux.keys("C-w")
    tmux.type("- prefers:")
    tmux.keys("Enter", "End", "Enter")
    tmux.type("- hobby: plays the bassoon")
    tmux.keys("C-o")
    tmux.wait("File Name to Write")
    tmux.keys("Enter")
    tmux.wait("[ Wrote")
    assert anna.stat().st_ino == inode  # nano truncates and rewrites the same file
    assert "- hobby: plays the bassoon\n" in anna.read_text()
    wait_for(lambda: "plays the bassoon" in _wm(vault), "the nano save in the working memory")
    wait_for(found(vault, "bassoon", rel), "the nano save in the index")
    tmux.keys("C-x")
    wait_for(lambda: not any(anna.parent.glob(".*.swp")), "nano's lock file to go")


# ---------------------------------------------------------------------------------------------
# brainiac writes a file the editor has open: the editor's prompt, and what each answer does


def _vim_add_goal(tmux: Tmux, goal: str) -> None:
    tmux.type("/## Goals")
    tmux.keys("Enter")
    tmux.type(f"o- {goal}")
    tmux.keys("Escape")
    tmux.type(":w")
    tmux.keys("Enter")


_VIM_WARNING = "WARNING: The file has been changed since reading it!!!"
_VIM_QUESTION = "Do you really want to write to it (y/n)?"


def _vim_goal_saves_without_a_prompt_beside(
    tmux: Tmux, vault: Path, event: str, event_words: str
) -> None:
    """With the buffer current again, a goal saves with no warning and keeps the event."""
    _vim_add_goal(tmux, "learn the cello")
    screen = tmux.wait("written")
    assert _VIM_WARNING not in screen
    text = (vault / STM).read_text()
    assert event in text and "- learn the cello" in text
    wait_for(
        lambda: "learn the cello" in _wm(vault) and event_words in _wm(vault),
        "both in the working memory",
    )


@needs_vim
@pytest.mark.usefixtures("daemon")
def test_vim_saving_over_a_new_event_loses_nothing_the_journal_puts_it_back(
    vault: Path, tmux: Tmux
) -> None:
    stm = vault / STM
    tmux.start(vault, vim(STM))
    tmux.wait(f'"{STM}"')
    event = remember(vault, "Booked the ferry to Gotland for Friday")
    assert event in stm.read_text()
    _vim_add_goal(tmux, "learn the cello")
    screen = tmux.wait(_VIM_WARNING)
    assert _VIM_QUESTION in screen
    assert "learn the cello" not in stm.read_text(), "vim wrote before the answer"
    tmux.type("y")
    screen = tmux.wait("written")
    if "Press ENTER" in screen:
        tmux.keys("Enter")
    # The person's save won: their goal is in. The event line vim never had went with that save,
    # and is not silently lost: the daemon sees it leave the log and its recovery job puts it
    # back from the journal (a second or two later), without waiting for promotion.
    assert "- learn the cello" in stm.read_text()
    wait_for(lambda: "learn the cello" in _wm(vault), "the person's save in the working memory")
    wait_for(lambda: event in stm.read_text(), "the recovery job to put the event back")
    assert "put back" not in recover_events(vault)  # nothing left missing
    text = stm.read_text()
    assert event in text and "- learn the cello" in text
    assert text.count(event) == 1
    wait_for(lambda: "ferry to Gotland" in _wm(vault), "the event back in the working memory")
    wait_for(found(vault, "Gotland ferry", STM), "the event back in the index")


@needs_vim
@pytest.mark.usefixtures("daemon")
def test_vim_declining_the_warning_then_reloading_keeps_both(vault: Path, tmux: Tmux) -> None:
    stm = vault / STM
    tmux.start(vault, vim(STM))
    tmux.wait(f'"{STM}"')
    event = remember(vault, "The plumber comes on Tuesday at eight")
    _vim_add_goal(tmux, "learn the cello")
    tmux.wait(_VIM_QUESTION)
    tmux.type("n")
    # Nothing written: the file keeps the event; the goal is still in vim's buffer.
    assert "plumber comes on Tuesday" not in tmux.wait("- learn the cello")
    text = stm.read_text()
    assert event in text and "learn the cello" not in text
    tmux.type(":e!")  # reload (the unsaved goal goes; it is typed again)
    tmux.keys("Enter")
    tmux.wait("plumber comes on Tuesday")
    _vim_goal_saves_without_a_prompt_beside(tmux, vault, event, "plumber comes")
    assert "put back" not in recover_events(vault)  # nothing was lost


@needs_vim
@pytest.mark.usefixtures("daemon")
def test_vim_w11_changed_on_disk_load_keeps_both(vault: Path, tmux: Tmux) -> None:
    tmux.start(vault, vim(STM))  # 'autoread' is off: vim asks
    tmux.wait(f'"{STM}"')
    event = remember(vault, "Renewed the library card")
    tmux.type(":checktime")  # what vim does on focus, after a shell command, ...
    tmux.keys("Enter")
    screen = tmux.wait(f'W11: Warning: File "{STM}" has changed since editing started')
    assert "(L)oad File" in screen
    tmux.type("L")
    tmux.wait("Renewed the library card")
    _vim_goal_saves_without_a_prompt_beside(tmux, vault, event, "library card")


def _nano_add_event_line(tmux: Tmux, line: str) -> None:
    tmux.keys("M-/")  # to the end of the file: the Event Log
    tmux.type(line)
    tmux.keys("Enter", "C-o")
    tmux.wait("File Name to Write")
    tmux.keys("Enter")


_NANO_QUESTION = "File was modified since you opened it; continue saving?"


@needs_nano
@pytest.mark.usefixtures("daemon")
def test_nano_declining_keeps_both_saving_anyway_loses_nothing(vault: Path, tmux: Tmux) -> None:
    stm = vault / STM
    tmux.start(vault, nano(STM))
    tmux.wait("GNU nano")
    event = remember(vault, "Ordered a new bike chain")
    _nano_add_event_line(tmux, "- called the bike shop about the chain")
    tmux.wait("[ File on disk has changed ]")
    tmux.wait(_NANO_QUESTION)
    assert "called the bike shop" not in stm.read_text(), "nano wrote before the answer"
    # No: nothing written; the event stays in the file, the line stays in nano's buffer.
    tmux.type("n")
    screen = tmux.wait("^X Exit")
    assert _NANO_QUESTION not in screen and "- called the bike shop about the chain" in screen
    text = stm.read_text()
    assert event in text and "called the bike shop" not in text
    # Saving again and answering yes: the person's save wins, the event line goes from the file.
    tmux.keys("C-o")
    tmux.wait("File Name to Write")
    tmux.keys("Enter")
    tmux.wait(_NANO_QUESTION)
    tmux.type("y")
    tmux.wait("[ Wrote")
    assert "- called the bike shop about the chain\n" in stm.read_text()
    wait_for(lambda: "called the bike shop" in _wm(vault), "the person's save in the WM")
    # Not silently lost: the daemon's recovery job puts the journalled event back.
    wait_for(lambda: event in stm.read_text(), "the recovery job to put the event back")
    assert "put back" not in recover_events(vault)  # nothing left missing
    text = stm.read_text()
    assert text.count(event) == 1 and "- called the bike shop about the chain\n" in text
    wait_for(lambda: "new bike chain" in _wm(vault), "the event back in the working memory")
