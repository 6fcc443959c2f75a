"""The event journal: a save from an older copy cannot make an event disappear (journal.py)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
import threading
import time
from pathlib import Path

import pytest

from brainiac import Memory
from brainiac.core.errors import StaleWriteError
from brainiac.lifecycle import journal
from brainiac.lifecycle.jobs import placement
from brainiac.store.vault import SHORT_TERM
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)
ID_RE = re.compile(r"\^(e-[0-9a-f]{6,32})\b")


def _ids_everywhere(vault: Path) -> list[str]:
    found: list[str] = []
    for path in sorted((vault / "memory").rglob("*.md")):
        if "exports" not in path.parts:
            found += ID_RE.findall(path.read_text())
    return found


def _remember(memory: Memory, n: int, start: dt.datetime) -> list[str]:
    return [
        memory.remember(
            f"step {i}: the kiln reached {900 + i} degrees", at=start + dt.timedelta(minutes=i)
        ).id
        for i in range(n)
    ]


def test_an_event_removed_by_a_save_from_an_older_copy_is_put_back(
    memory: Memory, vault: Path
) -> None:
    stm_path = vault / SHORT_TERM
    first = _remember(memory, 3, NOW - dt.timedelta(hours=1))
    older_copy = stm_path.read_text()
    late = _remember(memory, 1, NOW - dt.timedelta(minutes=5))[0]
    # The person's editor saves the copy it read before the last event, with their own change.
    stm_path.write_text(older_copy.replace("## Tasks", "## Tasks\n\n- [ ] glaze the bowls", 1))
    assert late not in stm_path.read_text()

    [report] = memory.run_job("promotion", now=NOW)

    text = stm_path.read_text()
    assert "- [ ] glaze the bowls" in text  # the person's edit stands
    assert late in text and text.index(late) > text.index(first[-1])  # back, in time order
    assert "put back 1 event(s)" in report.summary
    everywhere = _ids_everywhere(vault)
    assert all(everywhere.count(i) == 1 for i in [*first, late])


def test_sources_dropped_from_a_note_come_back_somewhere(memory: Memory, vault: Path) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=2))
    ids = _remember(memory, 6, NOW - dt.timedelta(days=2))
    memory.run_job("promotion", now=NOW)
    promoted = [i for i in ids if i not in (vault / SHORT_TERM).read_text()]
    assert promoted
    # A sync client restores an older version of every note: the Sources lines are gone.
    for note in (vault / "memory").rglob("*.md"):
        if note.name != "short_term.md" and "exports" not in note.parts:
            kept = [line for line in note.read_text().splitlines() if not ID_RE.search(line)]
            note.write_text("\n".join(kept) + "\n")
    assert not set(promoted) & set(_ids_everywhere(vault))

    memory.run_job("promotion", now=NOW + dt.timedelta(minutes=1))

    everywhere = _ids_everywhere(vault)
    assert all(everywhere.count(i) == 1 for i in ids)


def test_a_forgotten_event_stays_gone(memory: Memory, vault: Path) -> None:
    ids = _remember(memory, 2, NOW - dt.timedelta(hours=1))
    stm_path = vault / SHORT_TERM
    stm_path.write_text(
        "\n".join(line for line in stm_path.read_text().splitlines() if ids[1] not in line) + "\n"
    )
    assert journal.forget(memory.locations.state, {ids[1]}) == 1

    memory.run_job("promotion", now=NOW)

    assert ids[1] not in stm_path.read_text()
    assert set(journal.read(memory.locations.state)) == {ids[0]}


def test_a_dry_run_reports_and_writes_nothing(memory: Memory, vault: Path) -> None:
    stm_path = vault / SHORT_TERM
    before = stm_path.read_text()
    _remember(memory, 1, NOW - dt.timedelta(hours=1))
    stm_path.write_text(before)
    [report] = memory.run_job("promotion", now=NOW, dry_run=True)
    assert "would put back 1 event(s)" in report.summary
    assert stm_path.read_text() == before


def test_a_torn_last_line_is_skipped(memory: Memory) -> None:
    ids = _remember(memory, 2, NOW - dt.timedelta(hours=1))
    with open(memory.locations.state / journal.JOURNAL_FILE, "a") as f:
        f.write('{"id": "e-0123456789", "event": "- 2026-11')  # a crash mid-append
    assert set(journal.read(memory.locations.state)) == set(ids)


def test_a_write_over_an_empty_file_waits_for_an_in_place_save(memory: Memory, vault: Path) -> None:
    """nano truncates, then writes: a change computed from the empty moment must not win."""
    path = vault / SHORT_TERM
    saved = path.read_text() + "\n- the person's line\n"
    with open(path, "w"):
        pass  # the editor's open(O_TRUNC)
    empty = memory.vault.read(SHORT_TERM)
    assert empty.text == ""

    def finish_save() -> None:
        time.sleep(0.5)  # the editor's write, stalled a while after its open
        with open(path, "r+") as f:
            f.write(saved)

    editor = threading.Thread(target=finish_save)
    editor.start()
    try:
        with pytest.raises(StaleWriteError):
            memory.vault.write(SHORT_TERM, "computed from nothing\n", empty.fingerprint)
    finally:
        editor.join()
    assert path.read_text() == saved


def test_event_lines_a_stale_save_brings_back_only_leave_the_log(
    memory: Memory, vault: Path
) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=2))
    stm_path = vault / SHORT_TERM
    ids = _remember(memory, 5, NOW - dt.timedelta(days=1))
    older_copy = stm_path.read_text()  # the editor's buffer, before promotion
    memory.run_job("promotion", now=NOW)
    promoted = [i for i in ids if i not in stm_path.read_text()]
    assert len(promoted) == 3
    stm_path.write_text(older_copy)  # saved: the promoted lines are back in the Event Log

    [report] = memory.run_job("promotion", now=NOW + dt.timedelta(minutes=5))

    assert "dropped 3 Event Log line(s) already in a note" in report.summary
    everywhere = _ids_everywhere(vault)
    assert all(everywhere.count(i) == 1 for i in ids), everywhere
    assert all(i not in stm_path.read_text() for i in promoted)


def test_sources_an_older_copy_brings_back_into_a_merged_stub_leave_it(
    memory: Memory, vault: Path
) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=0))
    ids = _remember(memory, 2, NOW - dt.timedelta(days=1))
    memory.run_job("promotion", now=NOW)
    [home] = [p for p in (vault / "memory/long_term").glob("*.md") if ids[0] in p.read_text()]
    line = next(x for x in home.read_text().splitlines() if ids[0] in x)
    stub = vault / "memory/long_term/kiln-old.md"
    stub.write_text(
        '---\ntitle: Kiln (old)\nstatus: merged\nredirect: "[[x]]"\n---\n'
        f"A person's words stay.\n\n## Sources\n\n{line}\n"
    )

    memory.run_job("promotion", now=NOW + dt.timedelta(minutes=5))

    assert ids[0] not in stub.read_text() and "A person's words stay." in stub.read_text()
    assert ids[0] in home.read_text()


def test_ids_since_reads_only_what_was_appended_and_whole_lines(memory: Memory) -> None:
    state = memory.locations.state
    first = _remember(memory, 2, NOW - dt.timedelta(hours=1))
    ids, offset = journal.ids_since(state, 0)
    assert ids == set(first)
    later = _remember(memory, 1, NOW)
    with open(state / journal.JOURNAL_FILE, "a") as f:
        f.write('{"id": "e-0123456789", "ev')  # being appended
    ids, offset = journal.ids_since(state, offset)
    assert ids == set(later)
    journal.forget(state, {first[0]})  # rewritten shorter: read again from the start
    ids, _ = journal.ids_since(state, offset + 10_000)
    assert first[0] not in ids and {first[1], *later} <= ids


def _ids_in_vault(vault: Path) -> list[str]:
    """Every event id written in the vault's notes, wherever a person keeps them (not the
    working memory, which quotes events, nor kept raw exports)."""
    found: list[str] = []
    for path in sorted(vault.rglob("*.md")):
        parts = path.relative_to(vault).parts
        if parts[0] not in ("context", "inbox") and "exports" not in parts:
            found += ID_RE.findall(path.read_text())
    return found


def test_a_note_moved_to_a_persons_own_folder_keeps_its_events(memory: Memory, vault: Path) -> None:
    memory.reconfigure(dataclasses.replace(memory.config, short_term_window=1))
    ids = _remember(memory, 4, NOW - dt.timedelta(days=1))
    memory.run_job("promotion", now=NOW)
    [note] = [p for p in (vault / "memory/long_term").glob("*.md") if ids[0] in p.read_text()]
    # The person files the note with their own project notes, outside memory/.
    (vault / "projects").mkdir()
    moved = vault / "projects" / note.name
    note.rename(moved)

    [report] = memory.run_job("promotion", now=NOW + dt.timedelta(minutes=5))

    assert "put back" not in report.summary, report.summary
    assert not [p for p in vault.rglob("*.md") if "(2)" in p.name]
    everywhere = _ids_in_vault(vault)
    assert all(everywhere.count(i) == 1 for i in ids), everywhere
    assert sum(moved.read_text().count(i) for i in ids) == 3
    found = placement.recover(memory, NOW + dt.timedelta(minutes=6), dry_run=True)
    assert not found.events


def test_a_remember_landing_during_promotions_scan_stays_in_the_event_log(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Promotion reads where every event is, then the journal: two events remembered (written,
    then journalled) between the two reads are not missing, and stay in the recent window."""
    stm_path = vault / SHORT_TERM
    earlier = _remember(memory, 3, NOW - dt.timedelta(hours=1))
    landed: list[str] = []
    scan = journal.event_locations

    def scan_then_remember(m: Memory) -> dict[str, set[str]]:
        where = scan(m)
        if not landed:  # the agent's turn arrives right after the vault was read
            for i, text in enumerate(["the glaze cracked at 1200", "try a slower cool-down"]):
                landed.append(memory.remember(text, at=NOW - dt.timedelta(seconds=30 - i)).id)
        return where

    monkeypatch.setattr(journal, "event_locations", scan_then_remember)

    [report] = memory.run_job("promotion", now=NOW)
    memory.run_job("promotion", now=NOW + dt.timedelta(minutes=1))

    assert len(landed) == 2
    assert "put back" not in report.summary, report.summary
    log_ids = [e.id for e in memory.short_term().events]
    assert log_ids == [*earlier, *landed]
    everywhere = _ids_in_vault(vault)
    assert all(everywhere.count(i) == 1 for i in [*earlier, *landed]), everywhere
    assert all(stm_path.read_text().count(i) == 1 for i in landed)


def _events_in_a_persons_note(memory: Memory, vault: Path) -> tuple[Path, list[str]]:
    """Two journalled events a person cut from the Event Log into a note of their own."""
    ids = _remember(memory, 2, NOW - dt.timedelta(days=1))
    stm_path = vault / SHORT_TERM
    lines = stm_path.read_text().splitlines(keepends=True)
    moved = [line for line in lines if any(i in line for i in ids)]
    stm_path.write_text("".join(line for line in lines if line not in moved))
    note = vault / "memory/long_term/kiln-log.md"
    note.write_text(
        "---\ntitle: Kiln log\n---\nWhat the kiln did, kept by hand.\n\n## Sources\n"
        + "".join(moved)
    )
    assert not journal.survey(memory).missing
    return note, ids


def test_a_note_read_in_the_middle_of_an_in_place_save_keeps_its_events(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """nano and Obsidian Sync open the note with O_TRUNC, then write: a survey that read the
    empty moment took its events for removed and put them back in a second note, where the
    save's write then left them twice (benchmarks/concurrent_edits.py, seed 214)."""
    note, ids = _events_in_a_persons_note(memory, vault)
    saved = note.read_text() + "\n- the person's line\n"
    editor = open(note, "wb")  # noqa: SIM115 (the save's open, its write comes later)
    scan = journal.event_locations

    def scan_then_write(m: Memory) -> dict[str, set[str]]:
        where = scan(m)  # read the note while it was empty
        if not editor.closed:
            editor.write(saved.encode())  # the editor's write lands just after
            editor.close()
        return where

    monkeypatch.setattr(journal, "event_locations", scan_then_write)

    found = placement.recover(memory, NOW)

    assert editor.closed and note.read_text() == saved
    assert found.events == [] and found.changed == []
    everywhere = _ids_everywhere(vault)
    assert [everywhere.count(i) for i in ids] == [1, 1], everywhere


def test_a_survey_waits_for_an_in_place_save_still_under_way(
    memory: Memory, vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor's write is still to come when the survey finds events missing: it waits for
    the save to close, then reads the note again."""
    note, ids = _events_in_a_persons_note(memory, vault)
    saved = note.read_text() + "\n- the person's line\n"
    editor = open(note, "wb")  # noqa: SIM115 (the save's open; a thread writes and closes)
    scanned = threading.Event()
    scan = journal.event_locations

    def scan_then_signal(m: Memory) -> dict[str, set[str]]:
        where = scan(m)
        scanned.set()
        return where

    def finish_save() -> None:
        if scanned.wait(timeout=30):
            editor.write(saved.encode())
        editor.close()

    monkeypatch.setattr(journal, "event_locations", scan_then_signal)
    thread = threading.Thread(target=finish_save)
    thread.start()
    try:
        [report] = memory.run_job("promotion", now=NOW)
    finally:
        thread.join()

    assert "put back" not in report.summary, report.summary
    assert note.read_text() == saved
    everywhere = _ids_everywhere(vault)
    assert [everywhere.count(i) for i in ids] == [1, 1], everywhere


def test_events_missing_while_a_save_stays_open_are_left_for_the_next_run(
    memory: Memory, vault: Path
) -> None:
    """A save still open when the survey stops waiting: nothing can be said about the events,
    so none is put back now; once it is written and closed, none is missing."""
    note, ids = _events_in_a_persons_note(memory, vault)
    saved = note.read_text()
    with open(note, "wb") as editor:  # the save's open(O_TRUNC), its write stalled
        stalled = journal.survey(memory, wait_s=0)
        assert stalled.unsettled == ("memory/long_term/kiln-log.md",)
        assert placement.recover(memory, NOW, surveyed=stalled).events == []
        editor.write(saved.encode())

    assert not journal.survey(memory).missing
    everywhere = _ids_everywhere(vault)
    assert [everywhere.count(i) for i in ids] == [1, 1], everywhere


def test_an_event_a_persons_save_really_removed_is_still_put_back(
    memory: Memory, vault: Path
) -> None:
    """The second look changes nothing for a save that did take the events out (an older copy,
    saved in place a moment ago): they come back, once."""
    note, ids = _events_in_a_persons_note(memory, vault)
    with open(note, "w") as editor:
        editor.write("---\ntitle: Kiln log\n---\nWhat the kiln did, kept by hand.\n")

    found = placement.recover(memory, NOW)

    assert sorted(e.id for e in found.events) == sorted(ids)
    everywhere = _ids_everywhere(vault)
    assert [everywhere.count(i) for i in ids] == [1, 1], everywhere


def test_an_id_in_a_label_or_a_link_does_not_hide_that_events_loss(vault: Path) -> None:
    """Only a line's trailing `^e-...` is an event's home: a session or project label naming
    an id, the summary quoting that session, or a person's link to the block names it mid-line."""
    cli = ("--vault", str(vault))
    said = run_cli(*cli, "remember", "The kiln reached 900 degrees", "--session", "firing",
                   "--at", "2026-11-20T09:00", check=True)  # fmt: skip
    lost = said.stdout.strip().removeprefix("^")
    run_cli(*cli, "remember", "see the earlier one", "--session", f"ref ^{lost}",
            "--project", f"^{lost}", "--at", "2026-11-20T09:05", check=True)  # fmt: skip
    (vault / "memory/long_term/kiln-log.md").write_text(
        f"# Kiln log\n\nThe firing: [[short_term#^{lost}]] ^{lost}x\n"
    )
    stm_path = vault / SHORT_TERM
    stm_path.write_text(
        "".join(x for x in stm_path.read_text().splitlines(True) if not x.endswith(f"^{lost}\n"))
    )
    assert f"^{lost}" in stm_path.read_text()  # in the other event's head only

    run_cli(*cli, "jobs", "run", "all", "--now", "2026-11-20T10:00", check=True)

    owned = [
        x
        for p in (vault / "memory").rglob("*.md")
        for x in p.read_text().splitlines()
        if x.endswith(f" ^{lost}")
    ]
    assert [x.split(" ^")[0] for x in owned] == [
        "- 2026-11-20T09:00:00 **user** (firing): The kiln reached 900 degrees"
    ]


def test_every_block_id_of_an_existing_vault_is_still_found(memory: Memory, vault: Path) -> None:
    """The id scan reads what the event parser reads: ids at a line's end (after a space, a tab,
    before a CR), of one-line and multi-line events, and none a text quotes."""
    memory.remember("first line\nsecond line quoting \\^e-0000000000 and ^e-1111111111", at=NOW)
    memory.remember("a line of its own", at=NOW + dt.timedelta(minutes=1))
    note = vault / "memory/long_term/crlf.md"
    note.write_bytes(b"## Sources\r\n- 2026-11-20T09:00:00 **user**: crlf\t^e-2222222222 \r\n")
    # What the scan found anywhere in a line before, with nothing but events' own ids in it.
    anywhere = re.compile(r"(?<!\\)\^(e-[0-9a-f]{6,32})\b")
    before = {i for p in (vault / "memory").rglob("*.md") for i in anywhere.findall(p.read_text())}
    found = journal.vault_event_ids(memory)
    assert "e-2222222222" in found and {"e-0000000000", "e-1111111111"}.isdisjoint(found)
    assert found == before and len(found) > 4
