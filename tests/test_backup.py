"""Snapshots: what goes in, where, how many are kept, and that restore refuses anything doubtful."""

from __future__ import annotations

import datetime as dt
import fcntl
import hashlib
import io
import json
import os
import stat
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from brainiac import Memory
from brainiac.core.errors import ConfigError, VaultError
from brainiac.exchange.backup import archive, creation, restoring, snapshots
from brainiac.store import config as config_mod
from conftest import run_cli

NOW = dt.datetime(2026, 11, 22, 12, 0)
Change = Callable[[tarfile.TarInfo, bytes], tuple[tarfile.TarInfo, bytes] | None]
NOT_EMPTY = "target is not empty; restore into an empty folder and move what you need"

# What the round-trip vault holds beyond the template, and whether a snapshot carries it.
EXTRA_INCLUDED = {
    "memory/long_term/capybaras.md": "---\ntitle: Capybaras\n---\nThey like warm water.\n",
    "memory/long_term/projects/deep/nested.md": "# Nested\nthree folders down\n",
    "memory/long_term/Café Zürich — 日本.md": "# Café\nnon-ASCII name\n",
    "memory/long_term/secret.md": "# Secret\nmode 0640\n",
    "inbox/export.jsonl": '{"text": "waiting to be imported"}\n',
    "context/working_memory.edited-20261122-1000.md": "a person's edit, kept aside\n",
    ".gitignore": "*.tmp\n",
}
EXTRA_EXCLUDED = {
    ".obsidian/workspace.json": "{}\n",
    ".obsidian/plugins/x/data.json": "{}\n",
    ".git/HEAD": "ref: refs/heads/main\n",
    ".trash/old.md": "deleted note\n",
    "context/working_memory.md": "generated\n",
    "memory/indexes/topics.md": "# Topics\ngenerated\n",
    "memory/.short_term.md.abc.brainiac-tmp": "a write in flight\n",
    "memory/long_term/.hidden/inner.md": "a dot-folder below the top\n",
}


def _memory(vault: Path, **settings: object) -> Memory:
    return Memory(vault, config=config_mod.load(vault, environ={}, overrides=settings))


def _fill(vault: Path) -> None:
    for rel, text in {**EXTRA_INCLUDED, **EXTRA_EXCLUDED}.items():
        path = vault / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (vault / "memory/long_term/secret.md").chmod(0o640)
    (vault / "attachments").mkdir()
    (vault / "attachments/pic.bin").write_bytes(bytes(range(256)) * 300)  # not text, not a note
    (vault / "attachments/run.sh").write_text("#!/bin/sh\n")
    (vault / "attachments/run.sh").chmod(0o750)
    os.utime(vault / "memory/long_term/capybaras.md", ns=(1_700_000_000_123_456_789,) * 2)
    os.symlink("capybaras.md", vault / "memory/long_term/capy-alias.md")  # inside: kept as a link
    os.symlink("/etc/hostname", vault / "memory/long_term/outside.md")  # absolute: skipped
    os.symlink("../../..", vault / "memory/long_term/up.md")  # leads out: skipped


def _tree(root: Path) -> dict[str, tuple[str, int, int, str]]:
    """path -> (type, mode, mtime_ns, sha256 or link target), folders included, root excluded."""
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            path = Path(dirpath, name)
            st = path.lstat()
            rel = path.relative_to(root).as_posix()
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("symlink", 0, st.st_mtime_ns, os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns, "")
            else:
                digest = hashlib.sha256(path.read_bytes()).hexdigest()
                out[rel] = ("file", stat.S_IMODE(st.st_mode), st.st_mtime_ns, digest)
    return out


def _expected(tree: dict[str, tuple[str, int, int, str]]) -> dict[str, tuple[str, int, int, str]]:
    """The snapshot rules restated independently of backup/contents.py."""
    out = {}
    for rel, value in tree.items():
        parts = rel.split("/")
        if any(p.startswith(".") for p in parts[:-1] if p != ".brainiac") or (
            value[0] == "dir" and parts[-1].startswith(".") and rel != ".brainiac"
        ):
            continue
        if parts[0] == "context" and len(parts) > 1 and "edited-" not in rel:
            continue
        if rel.startswith("memory/indexes") or rel.endswith(".brainiac-tmp"):
            continue
        if rel in ("memory/long_term/outside.md", "memory/long_term/up.md"):
            continue
        if parts[0] == "memory" and ".hidden" in parts:
            continue
        out[rel] = value
    return out


def test_round_trip_restores_every_included_file_byte_for_byte(vault: Path, tmp_path: Path) -> None:
    _fill(vault)
    memory = _memory(vault)
    before = _tree(vault)
    snap = creation.create(memory, NOW)

    assert snap.path.name == "brainiac-vault-20261122-120000.tar.gz"
    assert snap.path.parent == memory.locations.state / "backups"
    assert not snap.path.is_relative_to(vault)
    assert stat.S_IMODE(snap.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(snap.path.parent.stat().st_mode) == 0o700
    assert snap.size == snap.path.stat().st_size and snap.removed == ()
    assert sorted(s.split(":")[0] for s in snap.skipped) == [
        "memory/long_term/outside.md",
        "memory/long_term/up.md",
    ]
    with tarfile.open(snap.path) as tar:
        member = tar.extractfile(archive.MANIFEST)
        assert member is not None
        manifest = json.load(member)
    assert manifest["format"] == 1 and manifest["files"] == snap.files
    assert {"path", "type", "mode", "size", "sha256", "mtime_ns"} <= set(manifest["entries"][-1])

    target = tmp_path / "restored" / "here"  # missing, parents too
    restored = restoring.restore(snap.path, target)
    after = _tree(target)
    expected = _expected(before)
    assert after == expected
    assert sorted(r for r, v in expected.items() if v[0] != "dir") == restored
    assert after["memory/long_term/secret.md"][1] == 0o640
    assert after["attachments/run.sh"][1] == 0o750
    assert after["memory/long_term/capybaras.md"][2] == 1_700_000_000_123_456_789
    assert after["memory/long_term/capy-alias.md"] == (
        "symlink",
        0,
        *before["memory/long_term/capy-alias.md"][2:],
    )
    for gone in EXTRA_EXCLUDED:
        assert not (target / gone).exists(), gone
    assert ".brainiac/config.toml" in restored
    assert "memory/long_term/Café Zürich — 日本.md" in restored
    assert snap.files == sum(1 for v in expected.values() if v[0] == "file")
    # The restored folder is a vault that works.
    with Memory(target) as again:
        assert "memory/long_term/capybaras.md" in [r.path for r in again.search("warm water")]


# What editors and sync tools leave beside a note while it is open or being synced: restored, a
# swap file makes vim ask to recover a note nobody is editing.
EDITOR_TEMP = {
    "memory/long_term/.capybaras.md.swp": b"b0VIM 9.1\x00swap",
    "memory/long_term/.capybaras.md.swo": b"b0VIM 9.1\x00second swap",
    ".gitignore.swp": b"b0VIM 9.1\x00",
    "memory/long_term/capybaras.md~": b"vim's backup\n",
    "memory/long_term/#capybaras.md#": b"emacs auto-save\n",
    "memory/long_term/4913": b"",  # vim's can-I-write-here probe
    "memory/long_term/.syncthing.capybaras.md.tmp": b"half a download",
    "memory/long_term/~syncthing~capybaras.md.tmp": b"half a download (Windows name)",
    "memory/.short_term.md.1234.brainiac-tmp": b"our own write in flight",
    "system/core_identity.md___jb_tmp___": b"JetBrains safe write",
    "memory/long_term/.capybaras.md.kate-swp": b"kate swap",
}


def test_editor_and_sync_temp_files_stay_out_of_snapshots(vault: Path, tmp_path: Path) -> None:
    (vault / "memory/long_term/capybaras.md").write_text("# Capybaras\nwarm water\n")
    (vault / "memory/long_term/notes~draft.md").write_text("a note with a tilde inside\n")
    (vault / "memory/long_term/4913 facts.md").write_text("a note that starts with 4913\n")
    for rel, data in EDITOR_TEMP.items():
        (vault / rel).write_bytes(data)
    # Emacs' lock file is a dangling symlink whose target says who holds the file.
    os.symlink("anna@laptop.4242:1763800000", vault / "memory/long_term/.#capybaras.md")
    before = _tree(vault)
    temp = {*EDITOR_TEMP, "memory/long_term/.#capybaras.md"}
    assert temp <= set(before)
    snap = creation.create(_memory(vault), NOW)
    target = tmp_path / "restored"
    restored = restoring.restore(snap.path, target)
    after = _tree(target)
    assert not temp & set(after), sorted(temp & set(after))
    assert after == {r: v for r, v in _expected(before).items() if r not in temp}
    assert "memory/long_term/notes~draft.md" in restored
    assert "memory/long_term/4913 facts.md" in restored


def _days(n: int) -> dt.datetime:
    return NOW + dt.timedelta(days=n)


def test_keeps_the_last_n_and_never_the_one_just_made(vault: Path, tmp_path: Path) -> None:
    memory = _memory(vault, backup_keep=3)
    folder = memory.locations.state / "backups"
    folder.mkdir(parents=True)
    foreign = [folder / "brainiac-other-20200101-000000.tar.gz", folder / "notes.txt"]
    for path in foreign:
        path.write_text("not ours")
    made = []
    for day in range(5):
        snap = creation.create(memory, _days(day))
        made.append(snap.path)
        assert len(snap.removed) == (1 if day >= 3 else 0)
    listed = snapshots.list_snapshots(memory)
    assert [s.path for s in listed] == made[2:]
    assert [s.created for s in listed] == [_days(2), _days(3), _days(4)]
    assert all(p.exists() for p in foreign)
    # Same second again: a second name, not an overwrite.
    again = creation.create(memory, _days(4))
    assert again.path.name == "brainiac-vault-20261126-120000-2.tar.gz"
    assert [s.path for s in snapshots.list_snapshots(memory)] == [made[3], made[4], again.path]
    # A clock set back: the new snapshot sorts oldest, and is still the one kept.
    old = creation.create(memory, NOW - dt.timedelta(days=30))
    assert old.path.exists() and old.path not in old.removed
    assert len(snapshots.list_snapshots(memory)) == 3


def test_a_snapshot_that_does_not_verify_is_discarded_and_nothing_pruned(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory = _memory(vault, backup_keep=1)
    first = creation.create(memory, NOW)

    def broken(path: Path) -> list[object]:
        raise archive.Damaged("vault/x: its SHA-256 does not match MANIFEST.json")

    monkeypatch.setattr(creation, "verify", broken)
    with pytest.raises(VaultError, match="does not read back as written"):
        creation.create(memory, _days(1))
    assert [s.path for s in snapshots.list_snapshots(memory)] == [first.path]
    assert sorted(p.name for p in first.path.parent.iterdir()) == [first.path.name]


def _rewrite(snapshot: Path, out: Path, change: Change) -> Path:
    """Copy a snapshot member by member through change(info, data) -> (info, data) or None."""
    with tarfile.open(snapshot) as src, tarfile.open(out, "w:gz") as dst:
        for info in src.getmembers():
            f = src.extractfile(info)
            data = f.read() if f is not None else b""
            changed = change(info, data)
            if changed is None:
                continue
            info, data = changed
            info.size = len(data) if info.isfile() else 0
            dst.addfile(info, io.BytesIO(data) if info.isfile() else None)
    return out


def _edit_manifest(edit: Callable[[dict[str, Any]], None]) -> Change:
    def change(info: tarfile.TarInfo, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
        if info.name != archive.MANIFEST:
            return info, data
        doc = json.loads(data)
        edit(doc)
        return info, json.dumps(doc).encode()

    return change


def _flip_member(info: tarfile.TarInfo, data: bytes) -> tuple[tarfile.TarInfo, bytes]:
    if info.name == "vault/memory/short_term.md":
        data = data.replace(b"a", b"b", 1)  # same size: only the hash can tell
    return info, data


def _bad_sha(doc: dict[str, Any]) -> None:
    entry = next(e for e in doc["entries"] if e["path"] == "system/core_identity.md")
    entry["sha256"] = "0" * 64


def _bad_mode(doc: dict[str, Any]) -> None:
    entry = next(e for e in doc["entries"] if e["path"] == "system/core_identity.md")
    entry["mode"] = "0777"


def _unlisted(doc: dict[str, Any]) -> None:
    doc["entries"] = [e for e in doc["entries"] if e["path"] != "memory/short_term.md"]


def _no_manifest(info: tarfile.TarInfo, data: bytes) -> tuple[tarfile.TarInfo, bytes] | None:
    return None if info.name == archive.MANIFEST else (info, data)


@pytest.mark.parametrize(
    ("change", "needle"),
    [
        (_flip_member, "memory/short_term.md: its SHA-256 does not match"),
        (_edit_manifest(_bad_sha), "system/core_identity.md: its SHA-256 does not match"),
        (_edit_manifest(_bad_mode), "system/core_identity.md: its mode does not match"),
        (_edit_manifest(_unlisted), "memory/short_term.md: in the archive but not in MANIFEST"),
        (_no_manifest, "no MANIFEST.json"),
    ],
)
def test_a_damaged_or_altered_snapshot_is_refused_and_nothing_written(
    vault: Path,
    tmp_path: Path,
    change: Change,
    needle: str,
) -> None:
    snap = creation.create(_memory(vault), NOW)
    bad = _rewrite(snap.path, tmp_path / "bad.tar.gz", change)
    target = tmp_path / "target"
    with pytest.raises(VaultError) as info:
        restoring.restore(bad, target)
    assert needle in str(info.value) and "nothing was restored" in str(info.value)
    assert "\n" not in str(info.value)
    assert not target.exists()


def test_flipped_bytes_in_the_file_are_refused(vault: Path, tmp_path: Path) -> None:
    snap = creation.create(_memory(vault), NOW)
    data = bytearray(snap.path.read_bytes())
    for i in range(len(data) // 2, len(data) // 2 + 16):
        data[i] ^= 0xFF
    bad = tmp_path / "flipped.tar.gz"
    bad.write_bytes(bytes(data))
    target = tmp_path / "empty"
    target.mkdir()
    with pytest.raises(VaultError, match=r"damaged or altered.*nothing was restored"):
        restoring.restore(bad, target)
    assert list(target.iterdir()) == []


def _hostile(tmp_path: Path, name: str, info: tarfile.TarInfo, data: bytes = b"") -> Path:
    """A snapshot whose manifest agrees with a member that must never be written."""
    rel = name.removeprefix("vault/")
    entry = {"path": rel, "type": "file", "mode": "0644", "mtime_ns": 0, "size": len(data)}
    entry["sha256"] = hashlib.sha256(data).hexdigest()
    if info.issym():
        entry = {"path": rel, "type": "symlink", "mode": "0777", "mtime_ns": 0}
        entry["target"] = info.linkname
    doc = json.dumps({"format": 1, "entries": [entry]}).encode()
    out = tmp_path / "hostile.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        info.name, info.mode, info.size = name, 0o777 if info.issym() else 0o644, len(data)
        tar.addfile(info, io.BytesIO(data) if info.isfile() else None)
        manifest = tarfile.TarInfo(archive.MANIFEST)
        manifest.size = len(doc)
        tar.addfile(manifest, io.BytesIO(doc))
    return out


def _link(target: str) -> tarfile.TarInfo:
    info = tarfile.TarInfo()
    info.type, info.linkname = tarfile.SYMTYPE, target
    return info


@pytest.mark.parametrize(
    ("name", "info", "needle"),
    [
        ("/tmp/evil.md", tarfile.TarInfo(), "outside vault/"),
        ("vault/../evil.md", tarfile.TarInfo(), "unsafe path"),
        ("vault/a/../../evil.md", tarfile.TarInfo(), "unsafe path"),
        ("vault/up.md", _link("../outside"), "leads outside the vault"),
        ("vault/abs.md", _link("/etc/passwd"), "is absolute"),
        ("vault/x/deep.md", _link("../../../etc"), "leads outside the vault"),
    ],
)
def test_paths_and_links_that_escape_the_target_are_refused(
    tmp_path: Path, name: str, info: tarfile.TarInfo, needle: str
) -> None:
    bad = _hostile(tmp_path, name, info, b"x" if info.isfile() else b"")
    target = tmp_path / "t"
    with pytest.raises(VaultError, match=needle):
        restoring.restore(bad, target)
    assert not target.exists() and not (tmp_path / "evil.md").exists()


def test_a_link_through_a_link_is_refused(tmp_path: Path) -> None:
    # `here -> .` is harmless alone, but `out -> here/..` would then reach the target's parent.
    entries = [
        {"path": "here", "type": "symlink", "mode": "0777", "mtime_ns": 0, "target": "."},
        {"path": "out", "type": "symlink", "mode": "0777", "mtime_ns": 0, "target": "here/.."},
    ]
    doc = json.dumps({"format": 1, "entries": entries}).encode()
    out = tmp_path / "chain.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for e in entries:
            info = _link(str(e["target"]))
            info.name, info.mode = f"vault/{e['path']}", 0o777
            tar.addfile(info)
        manifest = tarfile.TarInfo(archive.MANIFEST)
        manifest.size = len(doc)
        tar.addfile(manifest, io.BytesIO(doc))
    with pytest.raises(VaultError, match="passes through another symlink"):
        restoring.restore(out, tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_restore_only_into_an_empty_folder(vault: Path, tmp_path: Path) -> None:
    snap = creation.create(_memory(vault), NOW)
    target = tmp_path / "busy"
    target.mkdir()
    (target / "mine.md").write_text("keep me")
    with pytest.raises(VaultError, match=NOT_EMPTY):
        restoring.restore(snap.path, target)
    assert [p.name for p in target.iterdir()] == ["mine.md"]
    assert (target / "mine.md").read_text() == "keep me"
    (tmp_path / "file").write_text("x")
    with pytest.raises(VaultError, match="is not a folder"):
        restoring.restore(snap.path, tmp_path / "file")
    with pytest.raises(VaultError, match="no such snapshot"):
        restoring.restore(tmp_path / "missing.tar.gz", tmp_path / "new")


@pytest.mark.parametrize("folder", ["backups", "{vault}/memory/backups", "{vault}"])
def test_a_backups_folder_inside_the_vault_is_refused(vault: Path, folder: str) -> None:
    memory = _memory(vault, backup_folder=folder.format(vault=vault))
    with pytest.raises(ConfigError) as info:
        creation.create(memory, NOW)
    message = str(info.value)
    assert "inside the vault" in message and "[backup]" in message and "\n" not in message
    assert not (vault / "backups").exists() and not (vault / "memory/backups").exists()
    with pytest.raises(ConfigError):
        snapshots.list_snapshots(memory)


def test_a_configured_folder_outside_the_vault_is_used(vault: Path, tmp_path: Path) -> None:
    memory = _memory(vault, backup_folder="../offsite/brainiac")  # relative to the vault
    # A missing parent is a disk not mounted: refused, rather than filling the local disk.
    with pytest.raises(ConfigError, match="does not exist"):
        creation.create(memory, NOW)
    assert not (tmp_path / "offsite").exists()
    (tmp_path / "offsite").mkdir()
    snap = creation.create(memory, NOW)
    assert snap.path.parent == (tmp_path / "offsite/brainiac").resolve()
    assert stat.S_IMODE((tmp_path / "offsite/brainiac").stat().st_mode) == 0o700


def test_a_crash_leftover_is_ignored_by_listing_and_cleaned_by_the_next_backup(
    vault: Path,
) -> None:
    memory = _memory(vault)
    first = creation.create(memory, NOW)
    folder = first.path.parent
    leftover = folder / ".brainiac-vault-20261122-130000.k3j4.brainiac-tmp"
    leftover.write_bytes(b"\x1f\x8b half a snapshot")
    in_progress = folder / ".brainiac-vault-20261122-130001.zz9.brainiac-tmp"
    in_progress.write_bytes(b"being written")
    other_vault = folder / ".brainiac-other-20261122-130000.a1.brainiac-tmp"
    other_vault.write_bytes(b"not ours")
    assert [s.path for s in snapshots.list_snapshots(memory)] == [first.path]

    with open(in_progress, "rb") as held:  # a live backup holds its temp file's lock
        fcntl.flock(held.fileno(), fcntl.LOCK_EX)
        second = creation.create(memory, _days(1))
    assert not leftover.exists()
    assert in_progress.exists() and other_vault.exists()
    assert [s.path for s in snapshots.list_snapshots(memory)] == [first.path, second.path]


def test_the_backup_job_runs_through_memory(vault: Path) -> None:
    memory = _memory(vault, backup_keep=2)
    assert config_mod.job_interval_minutes(config_mod.Config(), "backup") == 1440.0
    [dry] = memory.run_job("backup", now=NOW, dry_run=True)
    assert dry.ok and dry.summary.startswith("dry run: would store")
    assert snapshots.list_snapshots(memory) == []
    for day in range(3):
        [report] = memory.run_job("backup", now=_days(day))
        assert report.ok and report.changed == ()
    snaps = snapshots.list_snapshots(memory)
    assert len(snaps) == 2
    assert str(snaps[-1].path) in report.summary
    assert " file(s), verified; 1 old snapshot(s) removed" in report.summary
    assert "kB" in report.summary


def test_the_cli_backs_up_lists_and_restores(vault: Path, tmp_path: Path) -> None:
    made = json.loads(
        run_cli("--vault", str(vault), "backup", "--json", check=True, in_process=True).stdout
    )
    path = Path(made["path"])
    assert path.exists() and made["files"] >= 4 and made["removed"] == []
    listing = run_cli("--vault", str(vault), "backup", "--list", check=True, in_process=True).stdout
    assert str(path) in listing
    target = tmp_path / "restored"
    proc = run_cli("restore", str(path), str(target), "--json", check=True, in_process=True)
    assert "memory/short_term.md" in json.loads(proc.stdout)["restored"]
    assert (target / "memory/short_term.md").read_bytes() == (
        vault / "memory/short_term.md"
    ).read_bytes()
    again = run_cli("restore", str(path), str(target), in_process=True)
    assert again.returncode == 2 and NOT_EMPTY in again.stderr
    assert again.stderr.count("\n") == 1
