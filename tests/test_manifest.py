"""The manifest in SQLite: it round-trips, saves only what changed, migrates the old manifest.json,
and a damaged or foreign one makes the index build again from the vault (manifest.py)."""

from __future__ import annotations

import gc
import json
import sqlite3
from pathlib import Path

from brainiac import Memory
from brainiac.runtime.daemon_status import Counters, StatusFile
from brainiac.runtime.resource_faults import ResourceFaults
from brainiac.runtime.watcher import ChangeTracker
from brainiac.store.daemon_requests import STATUS_FILE
from brainiac.store.manifest import FileState, Manifest
from conftest import run_cli

NOTE = "memory/long_term/project-atlas.md"


def _old_json(manifest: Manifest) -> bytes:
    """The manifest.json the previous version wrote (indexer.py before the SQLite manifest)."""
    files = {
        rel: {
            "size": s.size,
            "mtime_ns": s.mtime_ns,
            "ctime_ns": s.ctime_ns,
            "ino": s.ino,
            "sha256": s.sha256,
            "docs": s.docs,
            "problem": s.problem,
        }
        for rel, s in sorted(manifest.files.items())
    }
    payload = {"version": 1, "index_id": manifest.index_id, "files": files}
    return json.dumps(payload, separators=(",", ":")).encode("utf-8")


def _rows(path: Path) -> dict[str, tuple[object, ...]]:
    with sqlite3.connect(path) as db:
        return {r[0]: r[1:] for r in db.execute("SELECT * FROM files")}


def test_a_saved_manifest_loads_equal(memory: Memory) -> None:
    memory.refresh(force=True)
    saved = memory.indexer.manifest
    loaded = Manifest.load(memory.locations.manifest_path)
    assert loaded.index_id == saved.index_id == memory.indexer.index.identity
    assert set(loaded.files) == set(saved.files) and len(loaded.files) >= 3
    assert all(loaded.files[rel] == saved.files[rel] for rel in saved.files)
    assert loaded.files[NOTE].docs == saved.files[NOTE].docs and saved.files[NOTE].docs


def test_a_save_writes_only_the_rows_that_changed(memory: Memory, vault: Path) -> None:
    memory.refresh(force=True)
    path = memory.locations.manifest_path
    before = _rows(path)
    note = vault / NOTE
    note.write_text(note.read_text() + "\nThe kickoff moved to the harbour office.\n")
    report = memory.refresh(force=True)
    assert report is not None and report.changed == (NOTE,)
    after = _rows(path)
    assert {rel for rel in after if after[rel] != before.get(rel)} == {NOTE}
    (vault / NOTE).unlink()
    memory.refresh(force=True)
    assert NOTE not in _rows(path) and set(_rows(path)) == set(after) - {NOTE}
    # A fresh process reads what the last save wrote: no file changed since.
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None
        assert (report.changed, report.removed, report.full_build) == ((), (), False)


def test_an_old_manifest_json_is_migrated_without_a_rebuild(memory: Memory, vault: Path) -> None:
    memory.refresh(force=True)
    manifest = memory.indexer.manifest
    path = memory.locations.manifest_path
    legacy = path.with_name("manifest.json")
    legacy.write_bytes(_old_json(manifest))
    memory.close()
    for p in path.parent.glob("manifest.sqlite3*"):
        p.unlink()
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None
        # The index was kept: the old manifest named it and described every file as it is.
        assert (report.changed, report.removed, report.full_build) == ((), (), False)
        assert again.indexer.manifest.files[NOTE] == manifest.files[NOTE]
        assert NOTE in [r.path for r in again.search("atlas")]
    assert not legacy.exists() and path.is_file()
    assert set(Manifest.load(path).files) == set(manifest.files)


def test_an_unreadable_old_manifest_json_means_a_full_build(memory: Memory, vault: Path) -> None:
    memory.refresh(force=True)
    path = memory.locations.manifest_path
    memory.close()
    for p in path.parent.glob("manifest.sqlite3*"):
        p.unlink()
    path.with_name("manifest.json").write_text('{"version": 1, "files": {"a.md": 3}}')
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None and report.full_build
        assert NOTE in [r.path for r in again.search("atlas")]


def test_a_damaged_manifest_database_is_rebuilt(memory: Memory, vault: Path) -> None:
    memory.refresh(force=True)
    path = memory.locations.manifest_path
    memory.close()
    for p in path.parent.glob("manifest.sqlite3-*"):
        p.unlink()
    path.write_bytes(b"this is not a database" * 100)
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None and report.full_build
        assert NOTE in [r.path for r in again.search("atlas")]
        files = set(again.indexer.manifest.files)
    # Written afresh and whole: the next process trusts it again.
    assert set(Manifest.load(path).files) == files
    with Memory(vault) as third:
        report = third.refresh(force=True)
        assert report is not None and not report.full_build and not report.changed


def test_a_manifest_of_another_version_means_a_full_build(memory: Memory, vault: Path) -> None:
    memory.refresh(force=True)
    path = memory.locations.manifest_path
    memory.close()
    with sqlite3.connect(path) as db:
        db.execute("PRAGMA user_version = 99")
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None and report.full_build


def test_a_manifest_damaged_while_open_is_written_afresh(tmp_path: Path) -> None:
    """Held whole (a new manifest, as after a full build): the save writes all of it again."""
    path = tmp_path / "state" / "manifest.sqlite3"
    first = Manifest("ix-1", {"a.md": FileState(1, 2, 3, 4, "ab" * 32, {"a.md": "d1"}, None)})
    path.parent.mkdir()
    path.write_bytes(b"\0garbage" * 512)
    first.files["b.md"] = FileState(5, 6, 7, 8, "cd" * 32, {"b.md#e-1": "d2"}, "bad YAML")
    first.save(path)
    again = Manifest.load(path)
    assert again.index_id == "ix-1"
    assert again.files == first.files and again.problems == {"b.md": "bad YAML"}


def test_a_manifest_damaged_while_a_process_reads_it_loses_nothing(
    memory: Memory, vault: Path
) -> None:
    """Loaded, the rows stay in the database, which the process keeps open: damaged under it,
    the edit is still indexed and the next process finds the index as the vault is (or, when
    the rows are unreadable, builds it again: manifest.Manifest._lose_saved)."""
    memory.refresh(force=True)
    assert NOTE in memory.indexer.manifest.files  # the database is open
    path = memory.locations.manifest_path
    for p in path.parent.glob("manifest.sqlite3-*"):
        p.unlink()
    path.write_bytes(b"\0garbage" * 512)
    note = vault / NOTE
    note.write_text(note.read_text() + "\nThe kickoff moved to the harbour office.\n")
    memory.refresh(force=True)
    memory.refresh(force=True)
    assert NOTE in [r.path for r in memory.search("harbour")]
    memory.close()
    with Memory(vault) as again:
        report = again.refresh(force=True)
        assert report is not None and not report.changed
        assert NOTE in [r.path for r in again.search("harbour")]
        assert again.indexer.manifest.count() == len(set(again.indexer.manifest.files)) >= 3


def test_a_manifest_found_damaged_while_in_use_names_no_index(tmp_path: Path) -> None:
    """Its rows are in the database only: unreadable, they are gone, and the index they
    described is built again (the manifest names none); the file is set aside."""
    path = tmp_path / "state" / "manifest.sqlite3"
    Manifest("ix-1", {"a.md": FileState(1, 2, 3, 4, "ab" * 32, {"a.md": "d1"}, "bad")}).save(path)
    loaded = Manifest.load(path)
    loaded.close()  # reopened by the next read, as after Indexer.close
    for p in path.parent.glob("manifest.sqlite3*"):
        p.unlink()
    path.write_bytes(b"\0garbage" * 512)
    assert (loaded.count(), loaded.problems, loaded.files.get("a.md")) == (0, {}, None)
    assert loaded.index_id == "" and not path.exists()
    loaded.files["b.md"] = FileState(5, 6, 7, 8, "cd" * 32, {"b.md": "d2"}, None)
    loaded.save(path)
    again = Manifest.load(path)
    assert again.index_id == "" and set(again.files) == {"b.md"} and again.count() == 1


def test_status_reads_the_manifest_from_the_cli(vault: Path) -> None:
    run_cli("--vault", str(vault), "reindex", check=True, in_process=True)
    status = json.loads(
        run_cli("--vault", str(vault), "status", "--json", check=True, in_process=True).stdout
    )
    with Memory(vault) as memory:
        manifest = Manifest.load(memory.locations.manifest_path)
    assert status["files_indexed"] == len(manifest.files) > 0


def _file_states() -> int:
    """FileState objects alive in this process."""
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, FileState))


def _note(i: int, said: str) -> str:
    return f"---\ntitle: Topic {i}\ncreated: 2026-10-02\n---\n## Summary\n{said}\n"


def test_the_daemons_status_and_a_one_file_sync_hold_no_row_per_file(vault: Path) -> None:
    """The daemon's status write counts the files, and an edit's sync reads the edited file's
    row only: neither keeps a row per file of the vault (the manifest stays in SQLite)."""
    notes = vault / "memory" / "long_term"
    for i in range(300):
        (notes / f"topic-{i:03}.md").write_text(_note(i, f"The harbour crane number {i}."))
    (notes / "broken.md").write_text("---\ntitle: [unclosed\n---\nBroken.\n")
    with Memory(vault) as first:
        first.refresh(force=True)
    with Memory(vault, index_writes=True, refresh_interval_s=float("inf")) as memory:
        memory.refresh(force=True)  # as the daemon starts: nothing changed
        faults = ResourceFaults(memory, print, print, lambda: True, print, lambda: None)
        status = StatusFile(memory, faults, Counters(), {})
        assert status.write(ChangeTracker(), None, None, True, force=True)
        edited = notes / "topic-007.md"
        edited.write_text(_note(7, "The harbour crane moved to the east pier."))
        report = memory.indexer.sync(["memory/long_term/topic-007.md"])
        assert report.changed == ("memory/long_term/topic-007.md",)
        assert status.write(ChangeTracker(), None, None, True, force=True)
        written = json.loads((memory.locations.state / STATUS_FILE).read_text())
        assert written["files_indexed"] == 300 + 3  # the template's notes besides these
        assert list(written["problems"]) == ["memory/long_term/broken.md"]
        assert status.line().startswith("304 files indexed, 1 skipped")
        assert _file_states() < 10
        assert "memory/long_term/topic-007.md" in [r.path for r in memory.search("east pier")]
        memory.indexer.flush()
    with Memory(vault) as again:  # the save kept every other file's row
        report = again.refresh(force=True)
        assert report is not None and (report.changed, report.full_build) == ((), False)
        assert len(again.indexer.manifest.files) == 304
