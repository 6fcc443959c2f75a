"""A fresh process's reconcile that finds nothing changed skips loading the manifest
(indexer.Indexer._unchanged, manifest.stat_snapshot), and decides as the full sync would: a note
rewritten in place with its old size and mtime, a deleted or new note, a folder made private with
no file touched, a symlink led elsewhere are all seen; problems and conflict copies are reported
alike. Each `Memory(...)` here is what a new CLI call opens."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brainiac import Memory
from brainiac.runtime.daemon_status import Counters, StatusFile
from brainiac.runtime.resource_faults import ResourceFaults
from brainiac.search import indexer as indexer_mod
from brainiac.search.indexer import SyncReport
from brainiac.store import vault as vault_mod
from brainiac.store.manifest import Manifest, stat_snapshot
from brainiac.store.vault import is_conflict_copy
from conftest import run_cli

NOTE = "memory/long_term/project-atlas.md"


def _fresh_sync(vault: Path) -> tuple[SyncReport, bool]:
    """A new Memory's first reconcile, and whether it loaded the manifest (the full sync)."""
    with Memory(vault) as m:
        report = m.refresh(force=True)
        assert report is not None
        return report, m.indexer._manifest is not None


def _full_sync(vault: Path) -> SyncReport:
    """The same reconcile, made file by file from the loaded manifest."""
    with Memory(vault) as m:
        assert m.indexer.manifest.files  # loaded first: the full sync checks file by file
        report = m.refresh(force=True)
        assert report is not None
        return report


def _found(vault: Path, query: str) -> set[str]:
    with Memory(vault) as m:
        return {r.path for r in m.search(query)}


def _same(a: SyncReport, b: SyncReport) -> None:
    assert (a.scanned, a.changed, a.removed, a.docs_written, a.docs_deleted, a.problems) == (
        b.scanned,
        b.changed,
        b.removed,
        b.docs_written,
        b.docs_deleted,
        b.problems,
    )
    assert not a.full_build and not b.full_build


def test_nothing_changed_is_answered_without_loading_the_manifest(vault: Path) -> None:
    _fresh_sync(vault)  # the first build
    quick, loaded = _fresh_sync(vault)
    assert not loaded
    assert quick.changed == quick.removed == () and quick.scanned >= 3
    _same(quick, _full_sync(vault))


def test_a_note_rewritten_in_place_with_its_old_size_and_mtime_is_indexed_again(
    vault: Path,
) -> None:
    _fresh_sync(vault)
    note = vault / NOTE
    folder = note.parent.stat()
    st = note.stat()
    text = note.read_text()
    rewritten = text.replace("Atlas", "Zebra", 1)
    assert rewritten != text and len(rewritten) == len(text)
    with note.open("r+", encoding="utf-8") as f:  # in place: same inode, folder untouched
        f.write(rewritten)
    os.utime(note, ns=(st.st_atime_ns, st.st_mtime_ns))  # a sync tool restoring the mtime
    assert note.stat().st_size == st.st_size and note.stat().st_mtime_ns == st.st_mtime_ns
    assert note.parent.stat().st_mtime_ns == folder.st_mtime_ns
    report, loaded = _fresh_sync(vault)
    assert loaded and report.changed == (NOTE,)
    assert NOTE in _found(vault, "zebra")


def test_a_deleted_and_a_new_note_are_seen(vault: Path) -> None:
    _fresh_sync(vault)
    (vault / NOTE).unlink()
    report, loaded = _fresh_sync(vault)
    assert loaded and report.removed == (NOTE,)
    new = "memory/long_term/quokka.md"
    (vault / new).write_text("# Quokka\n\nThe quokka smiles at the harbour.\n", encoding="utf-8")
    report, loaded = _fresh_sync(vault)
    assert loaded and report.changed == (new,)
    assert _found(vault, "quokka") == {new}
    report, loaded = _fresh_sync(vault)
    assert not loaded and report.changed == report.removed == ()


def test_a_folder_made_private_leaves_the_index_with_no_file_touched(vault: Path) -> None:
    mine = vault / "memory/long_term/mine"
    mine.mkdir()
    (mine / "secret.md").write_text("# Secret\n\nThe quokka code is 4471.\n", encoding="utf-8")
    _fresh_sync(vault)
    assert _found(vault, "quokka") == {"memory/long_term/mine/secret.md"}
    (vault / ".brainiac/config.toml").write_text(
        '[vault]\nprivate_folders = ["memory/long_term/mine"]\n', encoding="utf-8"
    )
    report, loaded = _fresh_sync(vault)
    assert loaded and report.removed == ("memory/long_term/mine/secret.md",)
    assert _found(vault, "quokka") == set()
    # From now on the private note is walked and refused, and nothing else changed.
    report, loaded = _fresh_sync(vault)
    assert not loaded and report.removed == ()
    _same(report, _full_sync(vault))


def test_a_symlink_led_to_another_note_is_indexed_again(vault: Path) -> None:
    lt = vault / "memory/long_term"
    (lt / "ferry.md").write_text("# Ferry\n\nThe ferry leaves at nine.\n", encoding="utf-8")
    (lt / "tram.md").write_text("# Tram\n\nThe tram stops at the quay.\n", encoding="utf-8")
    link = lt / "ride.md"
    link.symlink_to(lt / "ferry.md")
    _fresh_sync(vault)
    assert "memory/long_term/ride.md" in _found(vault, "ferry")
    link.unlink()
    link.symlink_to(lt / "tram.md")
    report, loaded = _fresh_sync(vault)
    assert loaded and "memory/long_term/ride.md" in report.changed
    assert "memory/long_term/ride.md" in _found(vault, "tram")
    assert "memory/long_term/ride.md" not in _found(vault, "ferry")


def test_problems_and_conflict_copies_are_reported_as_the_full_sync_reports_them(
    vault: Path,
) -> None:
    lt = vault / "memory/long_term"
    (lt / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n", encoding="utf-8")
    (lt / "project-atlas.sync-conflict-20261120-101010-ABCDEF1.md").write_text("# copy\n")
    _fresh_sync(vault)
    with Memory(vault) as m:
        quick = m.refresh(force=True)
        assert quick is not None and m.indexer._manifest is None
        conflicts = m.indexer.conflicts
    assert "memory/long_term/broken.md" in quick.problems
    assert conflicts == ["memory/long_term/project-atlas.sync-conflict-20261120-101010-ABCDEF1.md"]
    _same(quick, _full_sync(vault))


def test_the_daemons_status_counts_after_nothing_changed_and_after_a_change(vault: Path) -> None:
    # The daemon's status line and daemon.json (daemon_status.py) need the number of files and
    # their problems, counted in the manifest's database (test_manifest.py: no row per file).
    (vault / "memory/long_term/broken.md").write_text(
        "---\ntitle: [unclosed\n---\n# Broken\n", encoding="utf-8"
    )
    _fresh_sync(vault)
    with Memory(vault) as m:
        m.refresh(force=True)
        files, problems = len(m.indexer.manifest.files), m.indexer.manifest.problems
    assert list(problems) == ["memory/long_term/broken.md"] and files >= 3
    expected = f"{files} files indexed, 1 skipped, 0 conflicts"
    with Memory(vault, index_writes=True, refresh_interval_s=float("inf")) as m:  # the daemon's
        m.refresh(force=True)
        status = _daemon_status(m)
        assert status.line() == expected
        (vault / "memory/long_term/new.md").write_text("# New\n\nA new note.\n")
        m.refresh(force=True)
        assert status.line() == f"{files + 1} files indexed, 1 skipped, 0 conflicts"


def _daemon_status(m: Memory) -> StatusFile:
    """The daemon's status (daemon_status.py) over `m`, nothing in trouble."""
    faults = ResourceFaults(
        m,
        full_reconcile=lambda why: None,
        write_working_memory=lambda: None,
        write_status_now=lambda: True,
        submit_job=lambda name: None,
        changed=lambda: None,
    )
    return StatusFile(m, faults, Counters(), {})


def test_the_snapshot_reads_only_a_whole_manifest_and_creates_none(tmp_path: Path) -> None:
    missing = tmp_path / "state" / "manifest.sqlite3"
    assert stat_snapshot(missing) is None and not missing.exists()
    missing.parent.mkdir()
    with sqlite3.connect(missing) as db:  # a database, never written by brainiac
        db.execute("CREATE TABLE other (x)")
    assert stat_snapshot(missing) is None
    missing.write_bytes(b"not a database at all, just bytes" * 200)
    assert stat_snapshot(missing) is None


def test_the_cli_sees_an_edit_made_between_two_calls(vault: Path) -> None:
    assert run_cli("--vault", str(vault), "search", "harbour").returncode == 0
    note = vault / NOTE
    note.write_text(note.read_text() + "\nThe quokka census is on Friday.\n", encoding="utf-8")
    done = run_cli("--vault", str(vault), "search", "quokka")
    assert done.returncode == 0 and NOTE in done.stdout
    # Nothing changed since: the same answer, from the reconcile that loads no manifest.
    done = run_cli("--vault", str(vault), "search", "quokka")
    assert done.returncode == 0 and NOTE in done.stdout


def test_a_manifest_saved_before_the_digest_was_kept_is_checked_file_by_file(vault: Path) -> None:
    _fresh_sync(vault)
    with Memory(vault) as m:
        path = m.locations.manifest_path
    with sqlite3.connect(path) as db:  # as the version before the digest left it
        db.execute("DELETE FROM meta WHERE key = 'stat_digest'")
    db.close()
    assert stat_snapshot(path) is None
    report, loaded = _fresh_sync(vault)
    assert loaded and report.changed == report.removed == ()
    note = vault / NOTE
    note.write_text(note.read_text() + "\nThe quokka census is on Friday.\n", encoding="utf-8")
    report, loaded = _fresh_sync(vault)  # the save of this change stores the digest
    assert loaded and report.changed == (NOTE,)
    report, loaded = _fresh_sync(vault)
    assert not loaded and report.changed == ()


def test_a_sync_in_batches_stores_the_digest_at_its_last_save_only(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save between two batches removes the digest rather than summing every row again (a
    mass sync's saves would grow with the vault times its batches); the sync's last save
    stores it, and the next start needs no manifest."""
    _fresh_sync(vault)
    monkeypatch.setattr(indexer_mod, "SYNC_BATCH_FILES", 1)
    digests: list[bool] = []
    save = Manifest.save

    def noting(self: Manifest, path: Path, digest: bool = True) -> None:
        save(self, path, digest)
        digests.append(stat_snapshot(path) is not None)

    monkeypatch.setattr(Manifest, "save", noting)
    for i in range(3):
        note = vault / f"memory/long_term/batch-{i}.md"
        note.write_text(f"# Batch {i}\n\nThe quokka count {i}.\n", encoding="utf-8")
    report, loaded = _fresh_sync(vault)
    assert loaded and len(report.changed) == 3
    assert digests == [False, False, False, True]
    report, loaded = _fresh_sync(vault)
    assert not loaded and report.changed == ()


_PIECES = st.sampled_from(
    [".sync-conflict-20261120-101010-ABCDEF1", "(Conflicted copy", ")", "conflicted copy", "ı"]
)


# A file name: no folder separator (the rule reads the last part of a path).
_NAME_TEXT = st.text(max_size=8).filter(lambda text: "/" not in text)


@given(st.lists(st.one_of(_PIECES, _NAME_TEXT), max_size=6), st.booleans())
def test_the_conflict_copy_pretest_never_changes_the_answer(parts: list[str], upper: bool) -> None:
    name = "".join(parts)
    name = name.upper() if upper else name
    assert is_conflict_copy("memory/" + name) == bool(vault_mod._CONFLICT_RE.search(name))


def test_the_rules_by_folder_and_by_name_decide_as_the_full_sync_does(vault: Path) -> None:
    """The quick reconcile decides a folder's kind and privacy once for its files; what a file's
    own name decides (a private_folders entry naming the file, a conflict copy where nothing is
    indexed, a symlink into a private folder, short-term memory beside long-term folders) must
    still be decided per file, or the digests would differ and every call pay the full sync."""
    lt = vault / "memory/long_term"
    (lt / "mine").mkdir()
    (lt / "mine/secret.md").write_text("# Secret\n\nThe quokka code is 4471.\n", encoding="utf-8")
    (lt / "diary.md").write_text("# Diary\n\nThe quokka slept.\n", encoding="utf-8")
    (lt / "door.md").symlink_to(lt / "mine/secret.md")
    (vault / "system/notes.sync-conflict-20261120-101010-ABCDEF1.md").write_text("# copy\n")
    (vault / "memory/archive").mkdir(parents=True, exist_ok=True)
    (vault / "memory/archive/old.md").write_text("# Old\n\nThe old quay.\n", encoding="utf-8")
    (vault / ".brainiac/config.toml").write_text(
        '[vault]\nprivate_folders = ["Memory/Long_Term/Mine", "memory/long_term/diary.md"]\n',
        encoding="utf-8",
    )
    _fresh_sync(vault)
    assert _found(vault, "quokka") == set()
    with Memory(vault) as m:
        quick = m.refresh(force=True)
        assert quick is not None and m.indexer._manifest is None
        conflicts = m.indexer.conflicts
    assert conflicts == ["system/notes.sync-conflict-20261120-101010-ABCDEF1.md"]
    full = _full_sync(vault)
    _same(quick, full)
    assert quick.scanned >= 6  # the private files and the link are walked, then refused


def test_notes_touched_with_their_text_unchanged_are_checked_once_not_at_every_call(
    vault: Path,
) -> None:
    """A backup restored, a checkout or `touch` gives every note new times and the same text:
    the full sync reads each once, finds nothing to index, and keeps the new stats, so the next
    call is answered by the quick reconcile again instead of reading every note at every call."""
    _fresh_sync(vault)
    later = (vault / NOTE).stat().st_mtime_ns + 60 * 10**9
    for note in (vault / "memory").rglob("*.md"):
        os.utime(note, ns=(later, later))
    report, loaded = _fresh_sync(vault)
    assert loaded and report.changed == report.removed == ()
    report, loaded = _fresh_sync(vault)
    assert not loaded and report.changed == report.removed == ()
    _same(report, _full_sync(vault))
