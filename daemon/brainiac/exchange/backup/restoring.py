"""Restoring a snapshot into an empty or missing folder, after checking all of it.

The whole archive is read and checked against the manifest first (paths, types, sizes, hashes,
modes, links: archive.verify), so a damaged or doctored snapshot is refused before anything is
written; then files are written with O_EXCL | O_NOFOLLOW, links last, folders' modes and times
after what they hold. Needs no vault: this works on a fresh machine.
"""

from __future__ import annotations

import hashlib
import os
import tarfile
from pathlib import Path

from brainiac.core.errors import VaultError
from brainiac.exchange.backup.archive import (
    CHUNK,
    MANIFEST,
    READ_ERRORS,
    Damaged,
    Entry,
    member_kind,
    member_rel,
    open_archive,
    verify,
)
from brainiac.store import safe_io


def restore(snapshot: Path, target: Path) -> list[str]:
    """Restore `snapshot` into `target` (empty or missing), after checking all of it against its
    manifest; modes and mtimes come back. Returns the restored files' and links' paths."""
    snapshot = Path(snapshot).expanduser()
    target = Path(target).expanduser()
    if not snapshot.is_file():
        raise VaultError(f"{snapshot}: no such snapshot; list them with `brainiac backup --list`")
    _check_target(target)
    try:
        entries = verify(snapshot)
    except Damaged as exc:
        raise VaultError(
            f"{snapshot}: damaged or altered: {exc}; nothing was restored; use another snapshot "
            "(`brainiac backup --list`)"
        ) from None
    _check_target(target)  # again: it may have filled while we read a large snapshot
    by_path = {e.path: e for e in entries}
    safe_io.make_private_dirs(target)
    restored: list[str] = []
    try:
        with open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST:
                    continue
                entry = by_path[member_rel(member.name)]
                if member_kind(member) != entry.type:
                    raise Damaged(f"{entry.path}: changed since it was checked")
                dest = target / entry.path
                if entry.type == "dir":
                    safe_io.make_private_dirs(dest)  # 0700 until everything inside it is written
                elif entry.type == "file":
                    _write_file(tar, member, dest, entry)
                    restored.append(entry.path)
        # Links last, so no file is ever written through one; folders' modes and times after
        # everything inside them is written, deepest first.
        for entry in entries:
            if entry.type == "symlink":
                dest = target / entry.path
                os.symlink(entry.target, dest)
                os.utime(dest, ns=(entry.mtime_ns, entry.mtime_ns), follow_symlinks=False)
                restored.append(entry.path)
        for entry in sorted(entries, key=lambda e: e.path.count("/"), reverse=True):
            if entry.type == "dir":
                dest = target / entry.path
                safe_io.fsync_dir(dest)  # the names inside it survive a crash right after we return
                os.chmod(dest, entry.mode & 0o777)  # last: the mode may forbid reading it
                os.utime(dest, ns=(entry.mtime_ns, entry.mtime_ns))
        safe_io.fsync_dir(target)
    except (*READ_ERRORS, Damaged, KeyError) as exc:
        raise VaultError(
            f"{target}: restore stopped ({exc}); it holds a partial copy: delete it and restore "
            "again (into an empty folder)"
        ) from None
    return sorted(restored)


def _check_target(target: Path) -> None:
    if not (target.exists() or target.is_symlink()):
        return
    if not target.is_dir():
        raise VaultError(f"{target}: is not a folder; restore into an empty folder")
    if any(target.iterdir()):
        raise VaultError(
            f"{target}: target is not empty; restore into an empty folder and move what you need"
        )


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, entry: Entry) -> None:
    src = tar.extractfile(member)
    if src is None:
        raise Damaged(f"{entry.path}: its content cannot be read")
    safe_io.make_private_dirs(dest.parent)
    # O_EXCL | O_NOFOLLOW: the target was empty, so anything already here was planted meanwhile.
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    digest = hashlib.sha256()
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(CHUNK):
            digest.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
        os.fchmod(out.fileno(), entry.mode & 0o777)
    if digest.hexdigest() != entry.sha256:
        # Checked a moment ago; only a snapshot replaced during the restore gets here.
        raise Damaged(f"{entry.path}: changed since it was checked")
    os.utime(dest, ns=(entry.mtime_ns, entry.mtime_ns))
