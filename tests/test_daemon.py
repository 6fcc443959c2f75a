"""`brainiac run` as a real subprocess: editors' saves reach the working memory; the systemd
protocol."""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from brainiac.formats.stm import parse as parse_stm
from brainiac.lifecycle.jobs import LOG_FILE
from brainiac.store.locations import Locations
from conftest import run_cli
from helpers import (
    DEADLINE_S,
    Notifications,
    nano_save,
    remember,
    run_daemon,
    vim_save,
    wait_for,
)
from helpers import running_daemon as _daemon  # test_mcp.py imports it from here


@pytest.fixture
def daemon(
    tmp_path: Path, xdg_dirs: dict[str, str]
) -> Iterator[tuple[Path, subprocess.Popen[str], Notifications]]:
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    stale = vault / "memory" / f".short_term.md.abc{'.brainiac-tmp'}"
    stale.write_text("left by a crash")
    os.utime(stale, (1000, 1000))
    notes = Notifications(tmp_path / "notify.sock")
    env = {**os.environ, "NOTIFY_SOCKET": str(notes.path), "WATCHDOG_USEC": "200000"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "brainiac", "--vault", str(vault), "run"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        notes.expect("READY=1")
        yield vault, proc, notes
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
        notes.close()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except FileNotFoundError:
        return ""


def _wm(vault: Path) -> str:
    return _read(vault / "context/working_memory.md")


def test_editors_saves_reach_the_working_memory_and_sigterm_stops_cleanly(daemon) -> None:  # type: ignore[no-untyped-def]
    vault, proc, notes = daemon
    stm = vault / "memory/short_term.md"
    assert not list((vault / "memory").glob("*.brainiac-tmp")), "stale temp not swept at start"
    wait_for(lambda: "## Core Identity" in _wm(vault), "the first working memory")
    inode = stm.stat().st_ino
    vim_save(stm, stm.read_text().replace("## Goals\n", "## Goals\n- learn the cello\n"))
    assert stm.stat().st_ino != inode
    wait_for(lambda: "learn the cello" in _wm(vault), "a vim save to show")
    nano_save(stm, stm.read_text().replace("## Facts\n", "## Facts\n- ferry: leaves at noon\n"))
    wait_for(lambda: "ferry: leaves at noon" in _wm(vault), "a nano save to show")
    # An event through the CLI (which hands the write to the file, not the index) pulls in a
    # note; an in-place edit of that note then shows too.
    run_cli("--vault", str(vault), "remember", "How is the Atlas migration going?", check=True)
    wait_for(lambda: "### Project Atlas" in _wm(vault), "the related note")
    atlas = vault / "memory/long_term/project-atlas.md"
    nano_save(
        atlas,
        atlas.read_text().replace("- owner: the user\n", "- owner: the user\n- budget: 40k euro\n"),
    )
    wait_for(lambda: "budget: 40k euro" in _wm(vault), "a note edit to show")
    found = run_cli("--vault", str(vault), "search", "euro", "--json", check=True).stdout
    assert "project-atlas.md" in found
    notes.expect("WATCHDOG=1")
    second = run_cli("--vault", str(vault), "run")
    assert second.returncode == 2 and "already running" in second.stderr
    status = run_cli("--vault", str(vault), "status", check=True).stdout
    assert f"running, pid {proc.pid}" in status
    proc.send_signal(signal.SIGTERM)
    notes.expect("STOPPING=1")
    assert proc.wait(timeout=DEADLINE_S) == 0
    assert "not running" in run_cli("--vault", str(vault), "status", check=True).stdout


def test_a_deleted_note_leaves_the_index_and_a_rename_save_does_not(daemon) -> None:  # type: ignore[no-untyped-def]
    vault, proc, _notes = daemon
    kestrel = vault / "memory/long_term/kestrel.md"
    kestrel.write_text("---\ntitle: Kestrel\n---\nA falcon over the quarry.\n")

    def found(word: str) -> bool:
        out = run_cli("--vault", str(vault), "search", word, "--json", check=True).stdout
        return "kestrel.md" in out

    wait_for(lambda: found("falcon"), "a new note to be indexed")
    vim_save(kestrel, "---\ntitle: Kestrel\n---\nA falcon over the old quarry, hovering.\n")
    wait_for(lambda: found("hovering"), "the rename-saved note")
    kestrel.unlink()
    wait_for(lambda: not found("falcon"), "the deleted note to leave the index")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0


def test_conflict_copies_are_reported_not_indexed(daemon) -> None:  # type: ignore[no-untyped-def]
    vault, proc, _notes = daemon
    copy = vault / "memory/long_term/anna-berg.sync-conflict-20261120-101010-ABCDEFG.md"
    copy.write_text("---\ntitle: Anna\n---\nzebrafish\n")
    wait_for(
        lambda: copy.name in run_cli("--vault", str(vault), "status", check=True).stdout,
        "the conflict to be reported",
    )
    assert (
        run_cli("--vault", str(vault), "search", "zebrafish", "--json", check=True).stdout.strip()
        == "[]"
    )
    assert copy.read_text() == "---\ntitle: Anna\n---\nzebrafish\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0


def test_sighup_reloads_the_configuration(daemon) -> None:  # type: ignore[no-untyped-def]
    vault, proc, notes = daemon
    for i in range(4):
        run_cli("--vault", str(vault), "remember", f"reload probe {i}", check=True)
    wait_for(
        lambda: "reload probe 3" in _wm(vault) and "reload probe 0" in _wm(vault),
        "four events in the working memory",
    )
    config = vault / ".brainiac/config.toml"
    config.write_text(config.read_text().replace("# recent_events = 10", "recent_events = 2"))
    notes.clear()
    proc.send_signal(signal.SIGHUP)
    notes.expect("RELOADING=1")
    notes.expect("READY=1")
    recent = lambda: _wm(vault).split("[CRITICAL_CONTEXT_LAST_10_STEPS]")[-1].split("## Rel")[0]  # noqa: E731
    wait_for(
        lambda: "reload probe 3" in recent() and "reload probe 1" not in recent(),
        "the reloaded setting to apply",
    )
    config.write_text("[context\n")  # broken: the old configuration stays, the daemon runs on
    notes.clear()
    proc.send_signal(signal.SIGHUP)
    notes.expect("RELOADING=1")
    notes.expect("READY=1")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=DEADLINE_S) == 0
    assert "configuration not reloaded" in proc.stderr.read()  # type: ignore[union-attr]


def test_the_daemon_runs_the_memory_jobs_on_their_schedule(tmp_path: Path) -> None:
    """Jobs never run before catch up soon after the start, on the job thread; promotion's
    changes reach the index through the watcher like anyone's edit."""
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    for i in range(14):
        run_cli(
            "--vault",
            str(vault),
            "remember",
            f"Step {i}: repainting the garden fence",
            "--session",
            "fence",
            "--at",
            f"2026-11-01T09:{i:02d}",
            check=True,
        )
    with _daemon(vault):
        stm = vault / "memory/short_term.md"
        wait_for(lambda: len(parse_stm(stm.read_text()).events) == 10, "promotion to run", 60.0)
        notes = [p for p in (vault / "memory/long_term").glob("*.md") if "fence" in p.name.lower()]
        assert notes, list((vault / "memory/long_term").iterdir())
        wait_for(
            lambda: (
                "Step 2: repainting"
                in run_cli("--vault", str(vault), "search", "Step 2 repainting", check=True).stdout
            ),
            "the promoted event to be found in its new note",
        )
        listing = run_cli("--vault", str(vault), "jobs", "list", check=True).stdout
        assert "promotion" in listing and "never run" not in listing.split("promotion")[1][:40]


def test_the_daemon_imports_what_is_dropped_into_the_inbox(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    inbox = vault / "inbox"
    inbox.mkdir(exist_ok=True)
    dropped = inbox / "holiday.jsonl"
    dropped.write_text(
        '{"text": "We booked the cabin in Abisko for February.", "session": "holiday",'
        ' "at": "2026-10-01T18:00:00"}\n',
        encoding="utf-8",
    )
    settled = time.time() - 3600  # copied in an hour ago: no longer being written
    os.utime(dropped, (settled, settled))
    with _daemon(vault):
        wait_for(lambda: not dropped.exists(), "the inbox job to take the file", 60.0)
        kept = list((vault / "memory/archive/exports").iterdir())
        assert len(kept) == 1 and kept[0].read_text(encoding="utf-8").startswith('{"text"')
        wait_for(
            lambda: (
                "Abisko"
                in run_cli("--vault", str(vault), "search", "cabin Abisko", check=True).stdout
            ),
            "the imported message to be found",
        )


def _vault_with_jobs_off(tmp_path: Path, *jobs: str) -> Path:
    """A new vault in `tmp_path` whose daemon runs none of `jobs` (on a timer or at its start)."""
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    (vault / ".brainiac").mkdir(exist_ok=True)
    (vault / ".brainiac/config.toml").write_text("[jobs]\n" + "".join(f"{j} = 0\n" for j in jobs))
    return vault


def test_an_older_copy_saved_over_new_events_gets_them_back_at_once(tmp_path: Path) -> None:
    """Not at the next promotion (off here): the daemon sees event lines leave the log and runs
    the recovery job (journal.py)."""
    vault = _vault_with_jobs_off(tmp_path, "reflection", "promotion", "organization")
    stm_path = vault / "memory/short_term.md"
    with _daemon(vault) as proc:
        wait_for(lambda: bool(_wm(vault)), "the daemon to write the working memory")
        run_cli("--vault", str(vault), "remember", "the kiln is at 900 degrees", check=True)
        older_copy = stm_path.read_text()  # what an editor opened
        out = run_cli(
            "--vault", str(vault), "remember", "the glaze is drying", "--json", check=True
        )
        event_id = json.loads(out.stdout)["id"]
        wait_for(lambda: "the glaze is drying" in _wm(vault), "the new event in the working memory")
        stm_path.write_text(older_copy.replace("## Tasks\n", "## Tasks\n- [ ] fire the bowls\n", 1))

        wait_for(lambda: event_id in stm_path.read_text(), "the event put back into the Event Log")
        text = stm_path.read_text()
        assert "- [ ] fire the bowls" in text and text.count(event_id) == 1
        wait_for(lambda: "the glaze is drying" in _wm(vault), "the working memory to follow")
        # The put-back shows before the job ends (it then records its run):
        # stopped meanwhile, the daemon would let it finish only within the job thread's stop
        # wait, and say so after "stopping" if at all.
        jobs_log = Locations.for_vault(vault).state / LOG_FILE
        wait_for(lambda: "put back 1 event(s)" in _read(jobs_log), "the recovery job's record")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
        assert "job recovery: put back 1 event(s)" in proc.stderr.read()  # type: ignore[union-attr]


def test_an_event_line_deleted_from_a_note_is_put_back_at_once(tmp_path: Path) -> None:
    """Not at the next promotion (off here): the daemon sees event lines leave a long-term note
    (deleted by hand, or lost to a save from an older copy) and runs the recovery job."""
    vault = tmp_path / "vault"
    run_cli("init", str(vault), check=True, in_process=True)
    (vault / ".brainiac").mkdir(exist_ok=True)
    (vault / ".brainiac/config.toml").write_text(
        "[lifecycle]\nshort_term_window = 1\n"
        # Off too: the start's catch-up backup (a second or more on a busy machine) would run
        # first on the job thread, and the put-back is timed here.
        "[jobs]\nreflection = 0\npromotion = 0\norganization = 0\nbackup = 0\n"
    )
    for i in range(4):
        run_cli(
            "--vault",
            str(vault),
            "remember",
            f"Step {i}: glazing the bowls at {900 + i}",
            "--session",
            "pottery",
            "--at",
            f"2026-11-01T09:{i:02d}",
            check=True,
        )
    run_cli("--vault", str(vault), "jobs", "run", "promotion", check=True)
    [note] = [p for p in (vault / "memory/long_term").glob("*.md") if "Step 0:" in p.read_text()]
    # The event's line in Sources (the Summary may quote its sentence too).
    line = next(x for x in note.read_text().splitlines() if "Step 0:" in x and "^e-" in x)
    [event_id] = re.findall(r"\^(e-[0-9a-f]+)", line)

    def count() -> int:
        return sum(
            p.read_text().count(f"^{event_id}")
            for p in (vault / "memory").rglob("*.md")
            if "exports" not in p.parts
        )

    notes = Notifications(tmp_path / "notify.sock")
    with contextlib.closing(notes), _daemon(vault, notes) as proc:
        note.write_text(note.read_text().replace(line + "\n", ""))  # the person's delete
        assert count() == 0

        wait_for(lambda: count() == 1, "the event put back into a note", deadline_s=10.0)
        assert event_id in note.read_text()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
        assert "job recovery: put back 1 event(s)" in proc.stderr.read()  # type: ignore[union-attr]
    assert count() == 1


# Loaded by the daemon's interpreter (PYTHONPATH): writes down the thread of every index sync.
_SYNC_THREADS = """\
import os, threading
from brainiac.search import indexer

_sync = indexer.Indexer.sync


def sync(self, *args, **kwargs):
    with open(os.environ["SYNC_THREADS_LOG"], "a", encoding="utf-8") as log:
        log.write(threading.current_thread().name + "\\n")
    return _sync(self, *args, **kwargs)


indexer.Indexer.sync = sync
"""


def test_a_recovery_while_events_arrive_leaves_the_index_to_the_writer_loop(
    tmp_path: Path,
) -> None:
    """The recovery job puts an event back into the Event Log on the job thread while the
    watcher brings new events to the writer loop: only the loop syncs the index and the
    manifest (the Indexer is not thread-safe), and every event is then found exactly once."""
    vault = _vault_with_jobs_off(tmp_path, "reflection", "promotion", "organization", "backup")
    spy = tmp_path / "spy"
    spy.mkdir()
    (spy / "sitecustomize.py").write_text(_SYNC_THREADS)
    threads = tmp_path / "sync-threads.log"
    env = {
        "PYTHONPATH": os.pathsep.join(p for p in (str(spy), os.environ.get("PYTHONPATH")) if p),
        "SYNC_THREADS_LOG": str(threads),
    }
    stm_path = vault / "memory/short_term.md"
    with run_daemon(vault, tmp_path / "daemon.log", env) as proc:
        run_cli("--vault", str(vault), "remember", "the kiln is at 900 degrees", check=True)
        older_copy = stm_path.read_text()
        put_back = remember(vault, "the glaze is drying")
        wait_for(lambda: "the glaze is drying" in _wm(vault), "the event in the working memory")
        stm_path.write_text(older_copy)  # an editor's save of its older copy: the recovery job
        arrived = [remember(vault, f"bowl {i} is glazed") for i in range(3)]
        jobs_log = Locations.for_vault(vault).state / LOG_FILE
        wait_for(lambda: "put back 1 event(s)" in _read(jobs_log), "the recovery job's record")
        wanted = [put_back, *arrived]
        assert all(stm_path.read_text().count(e) == 1 for e in wanted), stm_path.read_text()

        def found(event_id: str, words: str) -> int:
            out = run_cli("--vault", str(vault), "search", words, "--json", check=True).stdout
            return sum(1 for hit in json.loads(out) if hit.get("event_id") == event_id)

        queries = ["glaze drying", *(f"bowl {i} glazed" for i in range(3))]
        wait_for(
            lambda: all(found(e, q) == 1 for e, q in zip(wanted, queries, strict=True)),
            "every event in the index once",
        )
        status = json.loads(run_cli("--vault", str(vault), "status", "--json", check=True).stdout)
        assert status["problems"] == {} and status["short_term_events"] == 5, status
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=DEADLINE_S) == 0
    assert "put back 1 event(s)" in (tmp_path / "daemon.log").read_text()
    syncs = threads.read_text().split()
    assert syncs and set(syncs) == {"MainThread"}, syncs
