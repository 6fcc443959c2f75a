"""What `brainiac forget` does to snapshots: reads the files it asks for, rewrites without them.

Both check the whole snapshot against its manifest first. A rewrite is written beside the old
snapshot and verified as a new one is (creation.verified_temp), and only then renamed over it, so
the name always holds a snapshot that verified. Deciding what to forget is forget/'s.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import io
import json
import os
import tarfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from brainiac.core.errors import VaultError
from brainiac.exchange.backup.archive import (
    MANIFEST,
    READ_ERRORS,
    Damaged,
    Entry,
    fill,
    member_rel,
    open_archive,
    verify,
)
from brainiac.exchange.backup.creation import verified_temp
from brainiac.exchange.backup.snapshots import vault_name
from brainiac.store import safe_io

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike


def read_files(snapshot: Path, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """The regular files of a snapshot that `wanted(path)` selects, by vault path, after the
    whole snapshot is checked against its manifest (VaultError when it is damaged)."""
    try:
        verify(snapshot)
        out: dict[str, bytes] = {}
        with open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST or not member.isfile():
                    continue
                rel = member_rel(member.name)
                if wanted(rel):
                    src = tar.extractfile(member)
                    out[rel] = src.read() if src is not None else b""
    except Damaged as exc:
        raise VaultError(f"{snapshot}: damaged or altered: {exc}") from None
    except READ_ERRORS as exc:
        raise VaultError(f"{snapshot}: cannot be read as a .tar.gz ({exc})") from None
    return out


def rewrite(
    memory: MemoryLike,
    snapshot: Path,
    changes: Mapping[str, tuple[str, bytes | None]],
    now: dt.datetime,
) -> None:
    """Rewrite one of this vault's snapshots with some files replaced or left out (`brainiac
    forget`). `changes` maps a vault path to (the SHA-256 its file must have in the snapshot, its
    new content, or None to leave it out). The new archive is written beside the old one, read
    back and verified as a new snapshot is, and only then renamed over it, so the name always
    holds a snapshot that verified. VaultError, with the snapshot unchanged, when it is damaged
    or a file is not what `changes` expects. Modes and times of the files are kept."""
    folder = snapshot.parent
    try:
        entries = verify(snapshot)
    except Damaged as exc:
        raise VaultError(f"{snapshot}: damaged or altered: {exc}") from None
    by_path = {e.path: e for e in entries}
    missing = sorted(set(changes) - {p for p, e in by_path.items() if e.type == "file"})
    if missing:
        raise VaultError(f"{snapshot}: holds no file {missing[0]}; nothing was rewritten")
    with verified_temp(
        folder,
        f".brainiac-{vault_name(memory.vault.root)}-",
        lambda raw: _write_rewritten(raw, snapshot, by_path, changes, now),
        f"{snapshot}: the rewritten copy",
        "the snapshot was left as it was",
    ) as (tmp, _written):
        os.replace(tmp, snapshot)
        safe_io.fsync_dir(folder)


def _write_rewritten(
    raw: IO[bytes],
    snapshot: Path,
    by_path: Mapping[str, Entry],
    changes: Mapping[str, tuple[str, bytes | None]],
    now: dt.datetime,
) -> list[Entry]:
    written: list[Entry] = []
    manifest: dict[str, Any] = {}
    try:
        with (
            open_archive(snapshot) as old,
            tarfile.open(
                fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT
            ) as tar,
        ):
            for member in old:
                src: IO[bytes] | None = old.extractfile(member) if member.isfile() else None
                if member.name == MANIFEST:
                    manifest = json.loads(src.read() if src is not None else b"{}")
                    continue
                entry = by_path[member_rel(member.name)]
                info = tarfile.TarInfo(member.name)
                if entry.type == "dir":
                    info.type = tarfile.DIRTYPE
                elif entry.type == "symlink":
                    info.type, info.linkname = tarfile.SYMTYPE, entry.target
                elif entry.path in changes:
                    expected, new = changes[entry.path]
                    data = src.read() if src is not None else b""
                    if hashlib.sha256(data).hexdigest() != expected:
                        raise VaultError(
                            f"{snapshot}: {entry.path} is not the version that was checked; "
                            "nothing was rewritten"
                        )
                    if new is None:
                        continue
                    entry = dataclasses.replace(
                        entry, size=len(new), sha256=hashlib.sha256(new).hexdigest()
                    )
                    src = io.BytesIO(new)
                info.size = entry.size if entry.type == "file" else 0
                fill(info, entry)
                tar.addfile(info, src)
                written.append(entry)
            manifest |= {
                "files": sum(1 for e in written if e.type == "file"),
                "bytes": sum(e.size for e in written),
                "entries": [e.as_json() for e in written],
                "rewritten": now.isoformat(timespec="seconds"),
            }
            data = json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8")
            info = tarfile.TarInfo(MANIFEST)
            info.size, info.mode, info.mtime = len(data), 0o600, now.timestamp()
            tar.addfile(info, io.BytesIO(data))
    except (*READ_ERRORS, Damaged, KeyError, ValueError) as exc:
        raise VaultError(
            f"{snapshot}: cannot be rewritten ({exc}); it was left as it was"
        ) from None
    return written
