"""Making a snapshot: written to a locked temp file, read back and verified, then named.

Writing: temp file in the backups folder (flock'ed while it is written, so the next backup can tell
a crash's leftover from a backup in progress), fsync, read back and checked against the manifest,
then renamed to its final name: a name that ends in `.tar.gz` only ever holds a snapshot that
verified. Older snapshots beyond `[backup] keep` are deleted only after that. `verified_temp` is
the same discipline for rewriting.py. What goes in is contents.py's; the format, archive.py's.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import io
import json
import os
import stat
import tarfile
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING

from brainiac.core import clock
from brainiac.core.errors import ConfigError, VaultError
from brainiac.exchange.backup.archive import (
    CHUNK,
    FORMAT,
    MANIFEST,
    ROOT,
    Damaged,
    Entry,
    fill,
    verify,
)
from brainiac.exchange.backup.contents import collect
from brainiac.exchange.backup.snapshots import (
    STAMP,
    SUFFIX,
    Snapshot,
    backups_folder,
    prune,
    vault_name,
)
from brainiac.lifecycle import jobs as jobs_mod
from brainiac.store import safe_io
from brainiac.store.lock import try_flock, wait_flock

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

_SPOOL_BYTES = 16 << 20  # files up to this size are copied in memory, larger ones spill to disk
_LOCK_WAIT_S = 60.0


def create(memory: MemoryLike, now: dt.datetime) -> Snapshot:
    """Write, verify and keep a snapshot of the vault; then prune beyond `[backup] keep`.

    The caller holds the vault's job lock (the `backup` job runs under it; `create_by_hand` takes
    it), so no lifecycle job moves events between files while they are read.
    """
    now = clock.local(now)
    root = memory.vault.root
    folder = backups_folder(memory)
    _make_folder(folder, configured=bool(memory.config.backup_folder))
    name = vault_name(root)
    temp_prefix = f".brainiac-{name}-"
    _remove_leftovers(folder, temp_prefix)
    skipped: list[str] = []
    items = collect(root, skipped)
    with verified_temp(
        folder,
        temp_prefix,
        lambda raw: _write_archive(raw, root, items, now, name, skipped, folder),
        f"{folder}: the snapshot just written",
        "it was discarded and older snapshots kept; check the disk and try again",
    ) as (tmp, written):
        final = _rename_final(tmp, folder, f"brainiac-{name}-{now.strftime(STAMP)}")
    removed = prune(folder, name, memory.config.backup_keep, final)
    return Snapshot(
        final,
        now,
        final.stat().st_size,
        files=sum(1 for e in written if e.type == "file"),
        removed=tuple(removed),
        skipped=tuple(skipped),
    )


@contextlib.contextmanager
def verified_temp(
    folder: Path,
    prefix: str,
    write: Callable[[IO[bytes]], list[Entry]],
    what: str,
    outcome: str,
) -> Iterator[tuple[Path, list[Entry]]]:
    """A new archive in a temp file of `folder`: written by `write`, fsynced and read back.
    Yields (temp path, entries written) while the file is still open (and so locked), for the
    caller to rename into place; on any failure the temp file is removed. `what` and `outcome`
    word the VaultError when it does not read back as written."""
    fd, tmp = _new_temp(folder, prefix)
    try:
        with os.fdopen(fd, "w+b") as raw:  # open (and locked) until the caller's rename
            written = write(raw)
            raw.flush()
            os.fsync(raw.fileno())
            try:
                verified = verify(tmp)
            except Damaged as exc:
                raise VaultError(
                    f"{what} does not read back as written ({exc}); {outcome}"
                ) from None
            if verified != written:
                raise VaultError(f"{what} lists other files than were stored; {outcome}")
            yield tmp, written
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def create_by_hand(memory: MemoryLike, now: dt.datetime) -> Snapshot:
    """`create` under the vault's job lock, waiting for a running job (the CLI's `backup`)."""
    with jobs_mod.job_lock(memory.locations.state, wait_s=_LOCK_WAIT_S) as held:
        if not held:
            raise VaultError(
                f"{memory.vault.root}: a memory job has held the job lock for over "
                f"{_LOCK_WAIT_S:g} s; try the backup again in a minute"
            )
        return create(memory, now)


def preview(memory: MemoryLike) -> tuple[int, int, Path]:
    """What a snapshot would hold now: (files, bytes before compression, folder); writes nothing."""
    folder = backups_folder(memory)
    items = collect(memory.vault.root, [])
    files = [st for _rel, st, kind in items if kind == "file"]
    return len(files), sum(st.st_size for st in files), folder


def _make_folder(folder: Path, configured: bool) -> None:
    if not configured:
        # The state directory may not exist yet on a fresh machine.
        safe_io.make_private_dirs(folder)
        return
    try:
        folder.mkdir(mode=0o700, exist_ok=True)
    except FileNotFoundError:
        # Its parent is missing: most likely a backup disk that is not mounted. Creating the path
        # would put the snapshots on the local disk while the person believes them elsewhere.
        raise ConfigError(
            f"[backup] folder: {folder.parent} does not exist (a disk not mounted?); mount or "
            "create it, or change `folder` under [backup] in .brainiac/config.toml"
        ) from None


def _new_temp(folder: Path, prefix: str) -> tuple[int, Path]:
    """A new temp file, locked for as long as its descriptor is open."""
    while True:
        fd, name = tempfile.mkstemp(dir=folder, prefix=prefix, suffix=safe_io.TMP_SUFFIX)
        wait_flock(fd)
        if os.fstat(fd).st_nlink:
            return fd, Path(name)
        # Another backup's cleanup took it for a crash's leftover between mkstemp and flock.
        os.close(fd)


def _remove_leftovers(folder: Path, prefix: str) -> None:
    """Delete this vault's temp snapshots that no live backup holds: a crash left them."""
    for entry in list(os.scandir(folder)):
        if not (entry.name.startswith(prefix) and entry.name.endswith(safe_io.TMP_SUFFIX)):
            continue
        try:
            fd = os.open(entry.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            continue
        if not try_flock(fd):
            os.close(fd)  # a backup in progress (another process or thread)
            continue
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(entry.path)
        finally:
            os.close(fd)


def _write_archive(
    raw: IO[bytes],
    root: Path,
    items: list[tuple[str, os.stat_result, str]],
    now: dt.datetime,
    name: str,
    skipped: list[str],
    folder: Path,
) -> list[Entry]:
    written: list[Entry] = []
    with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT) as tar:
        for rel, st, kind in items:
            info = tarfile.TarInfo(f"{ROOT}/{rel}")
            if kind == "dir":
                entry = Entry(rel, "dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
                info.type = tarfile.DIRTYPE
                fill(info, entry)
                tar.addfile(info)
            elif kind == "symlink":
                target = os.readlink(root / rel)
                mode = stat.S_IMODE(st.st_mode)
                entry = Entry(rel, "symlink", mode, st.st_mtime_ns, target=target)
                info.type = tarfile.SYMTYPE
                info.linkname = target
                fill(info, entry)
                tar.addfile(info)
            else:
                with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, dir=str(folder)) as spool:
                    copied = _copy_stable(root / rel, spool)
                    if isinstance(copied, str):
                        if copied:
                            skipped.append(f"{rel}: {copied}")
                        continue
                    fst, digest = copied
                    entry = Entry(
                        rel,
                        "file",
                        stat.S_IMODE(fst.st_mode),
                        fst.st_mtime_ns,
                        size=fst.st_size,
                        sha256=digest,
                    )
                    info.size = entry.size
                    fill(info, entry)
                    spool.seek(0)
                    tar.addfile(info, spool)
            written.append(entry)
        manifest = {
            "format": FORMAT,
            "vault": name,
            "vault_path": str(root),
            "created": now.isoformat(timespec="seconds"),
            "files": sum(1 for e in written if e.type == "file"),
            "bytes": sum(e.size for e in written),
            "skipped": skipped,
            "entries": [e.as_json() for e in written],
        }
        data = json.dumps(manifest, ensure_ascii=False, indent=1).encode("utf-8")
        info = tarfile.TarInfo(MANIFEST)
        info.size, info.mode, info.mtime = len(data), 0o600, now.timestamp()
        tar.addfile(info, io.BytesIO(data))
    return written


def _copy_stable(path: Path, spool: IO[bytes]) -> tuple[os.stat_result, str] | str:
    """Copy a file into `spool` as one consistent version: (its stat, SHA-256), or why not ("" if
    it vanished). An editor writing in place mid-copy makes us copy again, as safe_io does."""
    for _attempt in range(5):
        try:
            # O_NONBLOCK: a FIFO swapped in since the walk must not hang the backup.
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        except FileNotFoundError:
            return ""
        except OSError as exc:
            return f"cannot be read ({exc.strerror}); not included"
        spool.seek(0)
        spool.truncate()
        digest = hashlib.sha256()
        with os.fdopen(fd, "rb") as f:
            before = os.fstat(f.fileno())
            if not stat.S_ISREG(before.st_mode):
                return "is no longer a regular file; not included"
            while chunk := f.read(CHUNK):
                digest.update(chunk)
                spool.write(chunk)
            after = os.fstat(f.fileno())
        if (before.st_size, before.st_mtime_ns) == (after.st_size, after.st_mtime_ns) and (
            spool.tell() == after.st_size
        ):
            return after, digest.hexdigest()
        time.sleep(0.01)
    return "kept changing while being read; not included (the next snapshot takes it)"


def _rename_final(tmp: Path, folder: Path, base: str) -> Path:
    """Rename to `<base>.tar.gz`, or `<base>-2.tar.gz`... when a snapshot of that second exists."""
    seq = 1
    while True:
        final = folder / f"{base}{'' if seq == 1 else f'-{seq}'}{SUFFIX}"
        if safe_io.rename_noreplace(tmp, final):  # fsyncs the folder
            return final
        seq += 1
