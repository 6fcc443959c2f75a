"""Sync-conflict copies merged back by event id, and the one device that runs the memory jobs.

Real vaults, the real CLI (`jobs run conflicts`, `status`), copies named as Syncthing, Dropbox and
Obsidian Sync name them. The two-device test with real Syncthing instances is test_syncthing.py.
"""

from __future__ import annotations

import datetime as dt
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from brainiac.formats import events as ev
from brainiac.formats import ltm, stm, sync_merge
from brainiac.lifecycle.jobs import job_lock
from brainiac.store.locations import Locations
from brainiac.store.vault import SHORT_TERM
from conftest import remember_steps, run_cli
from helpers import JOBS_OFF, run_daemon, stop, wait_for

STM_COPY = "memory/short_term.sync-conflict-20261129-101010-ABCDEFG.md"
NOTE = "memory/long_term/kitchen.md"
NOTE_COPY = "memory/long_term/kitchen.sync-conflict-20261129-101011-HIJKLMN.md"
_ID_RE = re.compile(rf"(?<!\\)\^({ev.ID})\b")


def remember(vault: Path, text: str, at: str, env: dict[str, str] | None = None) -> str:
    out = run_cli("--vault", str(vault), "remember", text, "--at", at, check=True, env=env)
    return out.stdout.strip().split()[-1].lstrip("^")


def ids_in_memory(vault: Path) -> Counter[str]:
    """How many times each event id is written in the vault's memory files (no conflict copy)."""
    counts: Counter[str] = Counter()
    for path in sorted((vault / "memory").rglob("*.md")):
        if "sync-conflict" in path.name or "onflicted copy" in path.name:
            continue
        counts.update(_ID_RE.findall(path.read_text(encoding="utf-8")))
    return counts


def assert_once(vault: Path, *ids: str) -> None:
    """Each of `ids` is written exactly once, and no event twice."""
    counts = ids_in_memory(vault)
    assert all(counts[i] == 1 for i in ids), {i: counts[i] for i in ids}
    assert set(counts.values()) == {1}


def jobs_run(vault: Path, name: str, env: dict[str, str] | None = None) -> str:
    return run_cli("--vault", str(vault), "jobs", "run", name, check=True, env=env).stdout


def _note(extra: str = "", sources: str = "") -> str:
    return (
        "---\ntitle: Kitchen\nstrength: 1.0\nupdated: 2026-11-20\n---\n"
        f"## Summary\nThe kitchen renovation.\n{extra}\n## Sources\n{sources}"
    )


def _line(text: str, minute: int) -> tuple[str, str]:
    event = ev.make_event(text, at=dt.datetime(2026, 11, 20, 9, minute))
    return ev.render(event), event.id


def test_original_of_strips_every_sync_tools_marker() -> None:
    assert sync_merge.original_of(STM_COPY) == SHORT_TERM
    assert sync_merge.original_of("a.sync-conflict-20261129-101010-ABCDEFG.md") == "a.md"
    nested = "n/a.sync-conflict-20261129-101010-ABCDEFG.sync-conflict-20261129-111111-XYZXYZ1.md"
    assert sync_merge.original_of(nested) == "n/a.md"
    assert sync_merge.original_of("n/a (Ann's conflicted copy 2026-11-22).md") == "n/a.md"
    assert sync_merge.original_of("n/a (Conflicted copy laptop 202611221030).md") == "n/a.md"
    assert sync_merge.original_of("n/a.md") is None


def test_a_syncthing_copy_of_the_short_term_memory_is_merged_by_event_id(vault: Path) -> None:
    shared = remember(vault, "We chose oak for the floor", "2026-11-20T09:00")
    original_before = (vault / SHORT_TERM).read_text(encoding="utf-8")
    # The other device's version: the shared event, then two of its own, interleaved in time
    # with two more remembered here.
    theirs, _ = stm.append_events(
        original_before,
        [
            ev.make_event("Desk: the tiler comes Tuesday", at=_at("2026-11-20T09:01")),
            ev.make_event("Desk: grout is grey", at=_at("2026-11-20T09:03")),
        ],
    )
    mine = [
        remember(vault, "Laptop: ordered the tiles", "2026-11-20T09:02"),
        remember(vault, "Laptop: paid the deposit", "2026-11-20T09:04"),
    ]
    (vault / STM_COPY).write_text(theirs, encoding="utf-8")

    out = jobs_run(vault, "conflicts")

    assert "merged 1 copy(ies), 2 event(s) brought in" in out
    assert not (vault / STM_COPY).exists()
    doc = stm.parse((vault / SHORT_TERM).read_text(encoding="utf-8"))
    texts = [e.text for e in doc.events]
    assert texts == [
        "We chose oak for the floor",
        "Desk: the tiler comes Tuesday",
        "Laptop: ordered the tiles",
        "Desk: grout is grey",
        "Laptop: paid the deposit",
    ]
    counts = ids_in_memory(vault)
    assert counts[shared] == 1 and all(counts[i] == 1 for i in mine)
    assert set(counts.values()) == {1}
    # Run again: nothing left to merge, nothing written.
    assert "no sync-conflict copy" in jobs_run(vault, "conflicts")
    # Searchable on this device at once.
    found = run_cli("--vault", str(vault), "search", "tiler Tuesday", check=True).stdout
    assert "tiler comes Tuesday" in found


def _at(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text)


def test_hand_edits_on_both_sides_keep_the_copy_beside_and_report_it(vault: Path) -> None:
    ours_line, ours_id = _line("Laptop: chose the oak", 0)
    theirs_line, theirs_id = _line("Desk: chose grey grout", 1)
    (vault / NOTE).write_text(_note("Laptop: the budget is 12k.\n", ours_line), encoding="utf-8")
    (vault / NOTE_COPY).write_text(
        _note("Desk: the plumber says Friday.\n", theirs_line), encoding="utf-8"
    )

    out = jobs_run(vault, "conflicts")

    assert "its own text differs" in out and NOTE_COPY in out
    note = (vault / NOTE).read_text(encoding="utf-8")
    copy = (vault / NOTE_COPY).read_text(encoding="utf-8")
    assert "Laptop: the budget is 12k." in note and "Desk: the plumber says Friday." in copy
    parsed = ltm.parse(note, NOTE)
    assert {e.id for e in parsed.sources} == {ours_id, theirs_id}
    assert_once(vault, ours_id, theirs_id)
    status = run_cli("--vault", str(vault), "status").stdout
    assert f"conflicts: 1\n  {NOTE_COPY}: a sync-conflict copy" in status
    # Deleted by the person once compared: no longer reported.
    (vault / NOTE_COPY).unlink()
    assert "conflicts: 0" in run_cli("--vault", str(vault), "status").stdout


def test_a_hand_edit_on_one_side_only_is_taken_and_the_copy_deleted(vault: Path) -> None:
    ours_line, ours_id = _line("Laptop: chose the oak", 0)
    theirs_line, theirs_id = _line("Desk: chose grey grout", 1)
    # The copy has the person's added line (and a strength the jobs changed here since).
    (vault / NOTE).write_text(_note("", ours_line), encoding="utf-8")
    copy = _note("Desk: the plumber says Friday.\n", theirs_line).replace(
        "strength: 1.0", "strength: 0.8"
    )
    (vault / NOTE_COPY).write_text(copy, encoding="utf-8")

    out = jobs_run(vault, "conflicts")

    assert "merged 1 copy(ies)" in out
    assert not (vault / NOTE_COPY).exists()
    note = (vault / NOTE).read_text(encoding="utf-8")
    assert "Desk: the plumber says Friday." in note
    assert_once(vault, ours_id, theirs_id)


def test_the_stale_side_of_a_conflict_never_brings_promoted_events_back(vault: Path) -> None:
    """This device promoted e1 into a note while the other still logged it and added e2."""
    promoted_line, promoted = _line("Laptop: the old sink goes", 0)
    new_line, new = _line("Desk: the new sink is white", 2)
    base = (vault / SHORT_TERM).read_text(encoding="utf-8")
    (vault / NOTE).write_text(_note("", promoted_line), encoding="utf-8")
    stale, _ = stm.append_events(base, ev.parse_text(promoted_line + new_line))
    # Case 1: the stale version lost (it is the copy).
    (vault / STM_COPY).write_text(stale, encoding="utf-8")
    jobs_run(vault, "conflicts")
    assert_once(vault, promoted, new)
    # Case 2: the stale version won (it is the original; ours is the copy).
    (vault / STM_COPY).write_text(base, encoding="utf-8")
    (vault / SHORT_TERM).write_text(stale, encoding="utf-8")
    jobs_run(vault, "conflicts")
    assert not (vault / STM_COPY).exists()
    assert_once(vault, promoted, new)
    logged = {e.id for e in stm.parse((vault / SHORT_TERM).read_text()).events}
    assert logged == {new}


def test_a_copy_that_is_no_note_loses_nothing_and_names_the_file(vault: Path) -> None:
    bad = "memory/long_term/kitchen.sync-conflict-20261129-101012-OPQRSTU.md"
    (vault / NOTE).write_text(_note(), encoding="utf-8")
    (vault / bad).write_bytes(b"---\ntitle: [unclosed\n---\nbody\n")
    before = (vault / NOTE).read_bytes()
    out = run_cli("--vault", str(vault), "jobs", "run", "conflicts")
    assert bad in out.stdout and "compare it by hand" in out.stdout
    assert (vault / bad).exists() and (vault / NOTE).read_bytes() == before


def _config(vault: Path, device: str) -> None:
    path = vault / ".brainiac/config.toml"
    text = path.read_text(encoding="utf-8").replace("[jobs]\n", f'[jobs]\ndevice = "{device}"\n')
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("job", ["promotion", "conflicts"])
def test_only_the_device_named_in_the_vault_runs_the_memory_jobs(vault: Path, job: str) -> None:
    remember_steps(vault, 13, check=True)
    (vault / STM_COPY).write_text((vault / SHORT_TERM).read_text(), encoding="utf-8")
    _config(vault, "desk")
    before = (vault / SHORT_TERM).read_bytes()
    laptop = {"BRAINIAC_DEVICE": "laptop"}

    out = run_cli(
        "--vault", str(vault), "jobs", "run", job, "--now", "2026-11-01T10:00", env=laptop
    )

    assert out.returncode == 0
    assert "not run: the vault's [jobs] device is 'desk' and this device is 'laptop'" in out.stdout
    assert (vault / SHORT_TERM).read_bytes() == before and (vault / STM_COPY).exists()
    status = run_cli("--vault", str(vault), "status", env=laptop).stdout
    assert "memory jobs: not here: the vault's [jobs] device is 'desk'" in status
    desk = {"BRAINIAC_DEVICE": "DESK"}  # host names compare without regard to case
    out = run_cli("--vault", str(vault), "jobs", "run", job, "--now", "2026-11-01T10:00", env=desk)
    assert "not run" not in out.stdout
    if job == "promotion":
        assert (vault / SHORT_TERM).read_bytes() != before
    else:
        assert not (vault / STM_COPY).exists()
    assert (
        "memory jobs: run on this device"
        in run_cli("--vault", str(vault), "status", env=desk).stdout
    )


def test_the_daemon_merges_a_copy_as_it_arrives_and_only_on_the_jobs_device(
    vault: Path, tmp_path: Path
) -> None:
    remember(vault, "We chose oak for the floor", "2026-11-20T09:00")
    theirs, _ = stm.append_events(
        (vault / SHORT_TERM).read_text(encoding="utf-8"),
        [ev.make_event("Desk: the tiler comes Tuesday", at=_at("2026-11-20T09:01"))],
    )
    _config(vault, "desk")

    def arrive() -> None:  # as Syncthing delivers a file: a hidden temp file renamed into place
        tmp = vault / "memory/.syncthing.short_term.sync-conflict.tmp"
        tmp.write_text(theirs, encoding="utf-8")
        os.replace(tmp, vault / STM_COPY)

    laptop_log = tmp_path / "laptop.log"
    with run_daemon(vault, laptop_log, {**JOBS_OFF, "BRAINIAC_DEVICE": "laptop"}) as proc:
        arrive()
        wait_for(lambda: STM_COPY in laptop_log.read_text(), "the laptop to report the copy")
        assert "the device that runs the jobs merges it" in laptop_log.read_text()
        stop(proc)
    assert (vault / STM_COPY).read_text(encoding="utf-8") == theirs  # left for the desk
    with run_daemon(vault, tmp_path / "desk.log", {**JOBS_OFF, "BRAINIAC_DEVICE": "desk"}) as proc:
        wait_for(lambda: not (vault / STM_COPY).exists(), "the desk's daemon to merge the copy")
        texts = [e.text for e in stm.parse((vault / SHORT_TERM).read_text()).events]
        assert texts == ["We chose oak for the floor", "Desk: the tiler comes Tuesday"]
        arrive()  # a copy arriving while it runs is merged as well (nothing new in it)
        wait_for(lambda: not (vault / STM_COPY).exists(), "the second copy to be merged")
        stop(proc)
    assert_once(vault, *(e.id for e in stm.parse((vault / SHORT_TERM).read_text()).events))


def test_a_copy_arriving_while_a_jobs_run_holds_the_lock_is_merged_once_it_ends(
    vault: Path, tmp_path: Path
) -> None:
    """The daemon's conflicts run finds the job lock held (`brainiac jobs run all` by hand, say)
    and is skipped; nothing else happens to the copy afterwards, yet it is merged soon after the
    lock is free, not at the next hourly rescan."""
    remember(vault, "We chose oak for the floor", "2026-11-20T09:00")
    theirs, _ = stm.append_events(
        (vault / SHORT_TERM).read_text(encoding="utf-8"),
        [ev.make_event("Desk: the tiler comes Tuesday", at=_at("2026-11-20T09:01"))],
    )
    _config(vault, "desk")
    log = tmp_path / "desk.log"
    with run_daemon(vault, log, {**JOBS_OFF, "BRAINIAC_DEVICE": "desk"}) as proc:
        with job_lock(Locations.for_vault(vault).state) as held:
            assert held
            tmp = vault / "memory/.syncthing.short_term.sync-conflict.tmp"
            tmp.write_text(theirs, encoding="utf-8")
            os.replace(tmp, vault / STM_COPY)  # as Syncthing delivers a file
            wait_for(lambda: "another memory job is running" in log.read_text(), "a skipped run")
            assert (vault / STM_COPY).exists()
        wait_for(lambda: not (vault / STM_COPY).exists(), "the copy to be merged", 20)
        texts = [e.text for e in stm.parse((vault / SHORT_TERM).read_text()).events]
        assert texts == ["We chose oak for the floor", "Desk: the tiler comes Tuesday"]
        stop(proc)


def test_a_merge_that_could_not_be_written_keeps_the_copy(vault: Path) -> None:
    """The short-term document keeps being replaced while the conflicts job merges a copy of it
    (a sync tool delivering, an agent appending), so every compare-and-swap write loses: the
    copy, whose events are in no other file, must stay for a later run, not be deleted. (The
    scheduler decides whether the writes lose this time; in most runs they do.)"""
    remember(vault, "We chose oak for the floor", "2026-11-20T09:00")
    mine = (vault / SHORT_TERM).read_text(encoding="utf-8")
    # A large copy: its merge takes far longer than the 1 ms between two replacements.
    theirs, _ = stm.append_events(
        mine,
        [
            ev.make_event(f"Desk: tile row {i} is laid", at=_at("2026-11-20T10:00"))
            for i in range(300)
        ],
    )
    (vault / STM_COPY).write_text(theirs, encoding="utf-8")
    stop_writing = threading.Event()
    merged_seen = threading.Event()

    def replace_again_and_again() -> None:  # the same text, a new file each time (as a sync tool)
        i = 0
        while not stop_writing.is_set():
            if "Desk: tile row 0 is laid" in (vault / SHORT_TERM).read_text(encoding="utf-8"):
                merged_seen.set()  # a merge was written: replacing it now would undo it
                return
            tmp = vault / "memory/.syncthing.short_term.md.tmp"
            tmp.write_text(mine + "\n" * (i % 2), encoding="utf-8")
            os.replace(tmp, vault / SHORT_TERM)
            i += 1
            time.sleep(0.001)

    writer = threading.Thread(target=replace_again_and_again)
    writer.start()
    try:
        out = jobs_run(vault, "conflicts")
    finally:
        stop_writing.set()
        writer.join()
    if "kept changing" in out:  # the writes lost (most runs): the copy kept for a later run
        assert "merged on a later run" in out, out
        assert (vault / STM_COPY).read_text(encoding="utf-8") == theirs
        assert "merged 1 copy" in jobs_run(vault, "conflicts")  # once nothing replaces it
        assert not (vault / STM_COPY).exists()
        assert_once(vault, *(e.id for e in stm.parse(theirs).events))
    else:  # a write won: the merge is in the file, and only then the copy deleted
        assert "merged 1 copy" in out, out
        assert merged_seen.is_set() or "Desk: tile row 0 is laid" in (vault / SHORT_TERM).read_text(
            encoding="utf-8"
        )
        assert not (vault / STM_COPY).exists()
        assert_once(vault, *(e.id for e in stm.parse(theirs).events))
