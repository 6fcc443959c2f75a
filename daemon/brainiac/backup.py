"""Snapshots of a vault: compressed, verified, kept outside the vault, restorable into any folder.

A snapshot is one `brainiac-<vault name>-YYYYmmdd-HHMMSS.tar.gz` in `[backup] folder` (default:
`backups/` in the vault's state directory). It holds every file a person could not get back
otherwise, under `vault/`, and a `MANIFEST.json` that lists each one with its size, SHA-256, mode
and mtime. Left out is what brainiac derives again (`context/`, `memory/indexes/`), temp files,
its own (`*.brainiac-tmp`) and editors' and sync tools' (`.note.md.swp`, `note.md~`, `.#note.md`,
`4913`, `.syncthing.*.tmp`: vault.is_temp_file), and dot-folders other than `.brainiac/`
(`.obsidian/`, `.git/`, `.trash/`).

Writing: temp file in the backups folder (flock'ed while it is written, so the next backup can tell
a crash's leftover from a backup in progress), fsync, read back and checked against the manifest,
then renamed to its final name: a name that ends in `.tar.gz` only ever holds a snapshot that
verified. Older snapshots beyond `[backup] keep` are deleted only after that.

Restoring: into an empty or missing folder only; the whole archive is read and checked against the
manifest first (paths, types, sizes, hashes, modes, links), so a damaged or doctored snapshot is
refused before anything is written. See docs/backup.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import hashlib
import io
import json
import os
import re
import stat
import tarfile
import tempfile
import time
import zlib
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from brainiac import clock, safe_io
from brainiac import jobs as jobs_mod
from brainiac.errors import ConfigError, VaultError
from brainiac.lock import try_flock, wait_flock
from brainiac.vault import INDEXES_DIR, is_temp_file

if TYPE_CHECKING:
    from brainiac.memory_protocol import MemoryLike

MANIFEST = "MANIFEST.json"
ROOT = "vault"  # every vault file is stored as vault/<path>, so no file can pose as the manifest
FORMAT = 1
SUFFIX = ".tar.gz"
_STAMP = "%Y%m%d-%H%M%S"
_CHUNK = 1 << 20
_SPOOL_BYTES = 16 << 20  # files up to this size are copied in memory, larger ones spill to disk
_MANIFEST_MAX_BYTES = 256 << 20  # a bigger "manifest" is an attack on memory, not a vault's list
_LOCK_WAIT_S = 60.0
_CONFIG_DIR = ".brainiac"  # the one dot-folder that is the vault's own (config.toml)
_CONTEXT_DIR = "context"
# The daemon moves a hand-edited working memory aside (working_memory.py) and promises it is never
# lost: a person's text, so it goes into snapshots although the rest of context/ is derived.
_KEPT_ASIDE = re.compile(r"working_memory\.edited-[^/]*\.md")
_READ_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeError)


@dataclass(frozen=True)
class Snapshot:
    path: Path
    created: dt.datetime  # the `now` it was made for, read back from its name
    size: int  # bytes of the compressed archive
    files: int | None = None  # regular files in it; None when only listed (counting reads it all)
    removed: tuple[Path, ...] = ()  # older snapshots deleted after this one verified
    skipped: tuple[str, ...] = ()  # "path: reason" for files that could not be included

    def as_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["path"] = str(self.path)
        data["created"] = self.created.isoformat(timespec="seconds")
        data["removed"] = [str(p) for p in self.removed]
        data["skipped"] = list(self.skipped)
        return data


@dataclass(frozen=True)
class _Entry:
    """One manifest line: a file, a folder or a symlink, by its POSIX path inside the vault."""

    path: str
    type: str  # "file" | "dir" | "symlink"
    mode: int
    mtime_ns: int
    size: int = 0
    sha256: str = ""
    target: str = ""  # a symlink's text

    def as_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "path": self.path,
            "type": self.type,
            "mode": f"{self.mode:04o}",
            "mtime_ns": self.mtime_ns,
        }
        if self.type == "file":
            data |= {"size": self.size, "sha256": self.sha256}
        elif self.type == "symlink":
            data["target"] = self.target
        return data


class _Damaged(Exception):
    """What is wrong with an archive; the caller says what that means (create vs restore)."""


# -- where snapshots go --------------------------------------------------------------------------


def vault_name(root: Path) -> str:
    """The vault's folder name as it appears in snapshot names (file-name safe)."""
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", root.name).strip("-.")[:40] or "vault"


def backups_folder(memory: MemoryLike) -> Path:
    """`[backup] folder` (relative: to the vault's folder), or the state directory's `backups/`.

    Refused inside the vault: every snapshot would carry the ones before it, and a synced vault
    would copy them to every device.
    """
    raw = memory.config.backup_folder
    root = memory.vault.root
    folder = Path(raw).expanduser() if raw else memory.locations.state / "backups"
    if not folder.is_absolute():
        folder = root / folder
    resolved = folder.resolve()
    if resolved == root or root in resolved.parents:
        raise ConfigError(
            f"[backup] folder: {folder} is inside the vault {root}; set `folder` under [backup] "
            f"in {root / '.brainiac/config.toml'} to a folder outside it (or remove the line for "
            "the default, the vault's state directory)"
        )
    return resolved


def _make_folder(folder: Path, configured: bool) -> None:
    if not configured:
        _private_dirs(folder)  # the state directory may not exist yet on a fresh machine
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


def list_snapshots(memory: MemoryLike) -> list[Snapshot]:
    """This vault's snapshots in its backups folder, oldest first (temp files are not listed)."""
    return _list(backups_folder(memory), vault_name(memory.vault.root))


def _list(folder: Path, name: str) -> list[Snapshot]:
    pattern = re.compile(rf"brainiac-{re.escape(name)}-(\d{{8}}-\d{{6}})(?:-(\d+))?\.tar\.gz")
    found: list[tuple[dt.datetime, int, Snapshot]] = []
    try:
        entries = list(os.scandir(folder))
    except FileNotFoundError:
        return []
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or not entry.is_file(follow_symlinks=False):
            continue
        try:
            created = dt.datetime.strptime(m.group(1), _STAMP)
            size = entry.stat(follow_symlinks=False).st_size
        except (ValueError, FileNotFoundError):
            continue  # not a date (a name that only looks like ours), or deleted meanwhile
        seq = int(m.group(2) or 1)
        found.append((created, seq, Snapshot(Path(entry.path), created, size)))
    return [s for _c, _s, s in sorted(found, key=lambda t: (t[0], t[1]))]


# -- creating ------------------------------------------------------------------------------------


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
    items = _collect(root, skipped)
    with _verified_temp(
        folder,
        temp_prefix,
        lambda raw: _write_archive(raw, root, items, now, name, skipped, folder),
        f"{folder}: the snapshot just written",
        "it was discarded and older snapshots kept; check the disk and try again",
    ) as (tmp, written):
        final = _rename_final(tmp, folder, f"brainiac-{name}-{now.strftime(_STAMP)}")
    removed = _prune(folder, name, memory.config.backup_keep, final)
    return Snapshot(
        final,
        now,
        final.stat().st_size,
        files=sum(1 for e in written if e.type == "file"),
        removed=tuple(removed),
        skipped=tuple(skipped),
    )


@contextlib.contextmanager
def _verified_temp(
    folder: Path,
    prefix: str,
    write: Callable[[IO[bytes]], list[_Entry]],
    what: str,
    outcome: str,
) -> Iterator[tuple[Path, list[_Entry]]]:
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
                verified = _verify(tmp)
            except _Damaged as exc:
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
    items = _collect(memory.vault.root, [])
    files = [st for _rel, st, kind in items if kind == "file"]
    return len(files), sum(st.st_size for st in files), folder


def _included(rel: str, is_dir: bool) -> bool:
    """Whether a vault path goes into a snapshot (a folder's answer covers all below it)."""
    parts = rel.split("/")
    name = parts[-1]
    if is_dir:
        if name.startswith("."):
            return rel == _CONFIG_DIR  # .obsidian, .git, .trash: an app's, not the memory's
        return rel != INDEXES_DIR  # generated by organization from the notes
    if is_temp_file(name):
        return False  # a write in flight, a crash's leftover, an editor's swap file
    if parts[0] == _CONTEXT_DIR:
        return len(parts) == 2 and _KEPT_ASIDE.fullmatch(name) is not None
    return True


def _collect(root: Path, skipped: list[str]) -> list[tuple[str, os.stat_result, str]]:
    """(path, lstat, type) of everything to store, each folder before what it holds; symlinks are
    never followed, and only those that stay inside the vault are kept (as links)."""
    items: list[tuple[str, os.stat_result, str]] = []
    pending = [""]
    while pending:
        prefix = pending.pop()
        try:
            with os.scandir(root / prefix if prefix else root) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            skipped.append(f"{prefix.rstrip('/') or '.'}: cannot be listed ({exc.strerror})")
            continue
        subdirs = []
        for entry in entries:
            rel = prefix + entry.name
            try:
                st = entry.stat(follow_symlinks=False)
            except FileNotFoundError:
                continue  # deleted while we looked
            except OSError as exc:
                skipped.append(f"{rel}: cannot be read ({exc.strerror})")
                continue
            if stat.S_ISDIR(st.st_mode):
                if _included(rel, True):
                    items.append((rel, st, "dir"))
                    subdirs.append(rel + "/")
            elif not _included(rel, False):
                continue
            elif stat.S_ISREG(st.st_mode):
                items.append((rel, st, "file"))
            elif stat.S_ISLNK(st.st_mode):
                items.append((rel, st, "symlink"))
            else:
                skipped.append(f"{rel}: not a regular file (a socket, pipe or device)")
        pending.extend(reversed(subdirs))
    links = {rel for rel, _st, kind in items if kind == "symlink"}
    kept = []
    for rel, st, kind in items:
        if kind == "symlink":
            try:
                target = os.readlink(root / rel)
            except OSError:
                continue
            problem = _link_problem(rel, target, links)
            if problem:
                skipped.append(f"{rel}: a symlink to {target} that {problem}; not included")
                continue
        kept.append((rel, st, kind))
    return kept


def _link_problem(rel: str, target: str, links: Collection[str]) -> str | None:
    """Why a symlink may not be stored or restored, or None. Resolved by hand, one component at a
    time, from the link's folder: it must stay inside the vault and never pass through another
    link (whose target could lead anywhere, e.g. `a -> .` then `b -> a/..`)."""
    if not target or target.startswith("/"):
        return "is absolute (it would point at this machine's files, not the vault's)"
    here = rel.split("/")[:-1]
    steps = target.split("/")
    for i, step in enumerate(steps):
        if step in ("", "."):
            continue
        if step == "..":
            if not here:
                return "leads outside the vault"
            here.pop()
            continue
        here.append(step)
        if "/".join(here) in links and i < len(steps) - 1:
            return "passes through another symlink"
    return None


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
) -> list[_Entry]:
    written: list[_Entry] = []
    with tarfile.open(fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT) as tar:
        for rel, st, kind in items:
            info = tarfile.TarInfo(f"{ROOT}/{rel}")
            if kind == "dir":
                entry = _Entry(rel, "dir", stat.S_IMODE(st.st_mode), st.st_mtime_ns)
                info.type = tarfile.DIRTYPE
                _fill(info, entry)
                tar.addfile(info)
            elif kind == "symlink":
                target = os.readlink(root / rel)
                mode = stat.S_IMODE(st.st_mode)
                entry = _Entry(rel, "symlink", mode, st.st_mtime_ns, target=target)
                info.type = tarfile.SYMTYPE
                info.linkname = target
                _fill(info, entry)
                tar.addfile(info)
            else:
                with tempfile.SpooledTemporaryFile(max_size=_SPOOL_BYTES, dir=str(folder)) as spool:
                    copied = _copy_stable(root / rel, spool)
                    if isinstance(copied, str):
                        if copied:
                            skipped.append(f"{rel}: {copied}")
                        continue
                    fst, digest = copied
                    entry = _Entry(
                        rel,
                        "file",
                        stat.S_IMODE(fst.st_mode),
                        fst.st_mtime_ns,
                        size=fst.st_size,
                        sha256=digest,
                    )
                    info.size = entry.size
                    _fill(info, entry)
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


def _fill(info: tarfile.TarInfo, entry: _Entry) -> None:
    info.mode = entry.mode
    info.mtime = entry.mtime_ns / 1e9  # PAX keeps the fraction, for plain `tar x` too
    info.uid = info.gid = 0  # restored as whoever restores; no user names leave the machine
    info.uname = info.gname = ""


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
            while chunk := f.read(_CHUNK):
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


def _prune(folder: Path, name: str, keep: int, new: Path) -> list[Path]:
    """Delete the oldest snapshots so `keep` remain, never the one just made (even if its `now`
    is older than theirs: a clock set back must not cost the newest copy of the vault)."""
    others = [s.path for s in _list(folder, name) if s.path != new]
    doomed = others[: max(0, len(others) - (keep - 1))]
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return doomed


# -- reading and verifying -----------------------------------------------------------------------


@contextlib.contextmanager
def _open_archive(snapshot: Path) -> Iterator[tarfile.TarFile]:
    # Stream mode ("r|gz"): one sequential read, no seeking back in the gzip stream.
    with tarfile.open(snapshot, mode="r|gz") as tar:
        yield tar


def _member_rel(name: str) -> str:
    """The vault path a member stands for; refuses absolute paths, `..`, and anything else."""
    if not name.startswith(ROOT + "/"):
        raise _Damaged(f"member {name!r} lies outside {ROOT}/ (absolute or foreign path)")
    rel = name[len(ROOT) + 1 :]
    if not rel or any(part in ("", ".", "..") for part in rel.split("/")) or "\0" in rel:
        raise _Damaged(f"member {name!r} has an unsafe path (empty part, `.` or `..`)")
    return rel


def _kind(member: tarfile.TarInfo) -> str:
    if member.isdir():
        return "dir"
    if member.issym():
        return "symlink"
    return "file" if member.isfile() else "other"


def _observe(tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str) -> _Entry:
    """What a member really holds, in manifest terms (mtime is taken from the manifest)."""
    mode = member.mode & 0o7777
    if member.isdir():
        return _Entry(rel, "dir", mode, 0)
    if member.issym():
        return _Entry(rel, "symlink", mode, 0, target=member.linkname)
    if not member.isfile():
        raise _Damaged(f"{rel}: a hard link or special file; snapshots hold none")
    src = tar.extractfile(member)
    if src is None:
        raise _Damaged(f"{rel}: its content cannot be read")
    digest = hashlib.sha256()
    size = 0
    while chunk := src.read(_CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return _Entry(rel, "file", mode, 0, size=size, sha256=digest.hexdigest())


def _parse_manifest(data: bytes) -> list[_Entry]:
    try:
        doc = json.loads(data.decode("utf-8"))
        if doc.get("format") != FORMAT:
            raise _Damaged(f"{MANIFEST} is of format {doc.get('format')!r}, not {FORMAT}")
        entries = []
        for item in doc["entries"]:
            kind = item["type"]
            if kind not in ("file", "dir", "symlink"):
                raise _Damaged(f"{MANIFEST}: unknown entry type {kind!r}")
            entries.append(
                _Entry(
                    _member_rel(f"{ROOT}/{item['path']}"),
                    kind,
                    int(item["mode"], 8),
                    int(item["mtime_ns"]),
                    size=int(item["size"]) if kind == "file" else 0,
                    sha256=str(item["sha256"]) if kind == "file" else "",
                    target=str(item["target"]) if kind == "symlink" else "",
                )
            )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise _Damaged(f"{MANIFEST} is malformed ({exc!r})") from None
    return entries


def _verify(snapshot: Path) -> list[_Entry]:
    """Read the whole archive; every member must match the manifest and every manifest entry a
    member, with a safe path. Returns the manifest's entries; raises _Damaged."""
    found: dict[str, _Entry] = {}
    manifest: bytes | None = None
    try:
        with _open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST:
                    if manifest is not None or not member.isfile():
                        raise _Damaged(f"more than one {MANIFEST}, or not a file")
                    if member.size > _MANIFEST_MAX_BYTES:
                        raise _Damaged(f"{MANIFEST} is implausibly large")
                    src = tar.extractfile(member)
                    manifest = src.read() if src is not None else b""
                    continue
                rel = _member_rel(member.name)
                if rel in found:
                    raise _Damaged(f"{rel}: stored twice")
                found[rel] = _observe(tar, member, rel)
    except _READ_ERRORS as exc:
        raise _Damaged(f"cannot be read as a .tar.gz ({exc})") from None
    if manifest is None:
        raise _Damaged(f"no {MANIFEST} in it; not a brainiac snapshot")
    expected = _parse_manifest(manifest)
    listed = {e.path: e for e in expected}
    if len(listed) != len(expected):
        raise _Damaged(f"{MANIFEST} lists a path twice")
    extra = sorted(set(found) - set(listed))
    if extra:
        raise _Damaged(f"{extra[0]}: in the archive but not in {MANIFEST}")
    missing = sorted(set(listed) - set(found))
    if missing:
        raise _Damaged(f"{missing[0]}: listed in {MANIFEST} but missing from the archive")
    for e in expected:
        got = found[e.path]
        for what, want, have in (
            ("type", e.type, got.type),
            ("mode", e.mode, got.mode),
            ("size", e.size, got.size),
            ("SHA-256", e.sha256, got.sha256),
            ("link target", e.target, got.target),
        ):
            if want != have:
                raise _Damaged(f"{e.path}: its {what} does not match {MANIFEST}")
    _check_tree(expected)
    return expected


def _check_tree(entries: list[_Entry]) -> None:
    """Nothing may lie below a link or a file, and no link may lead out (see _link_problem)."""
    kinds = {e.path: e.type for e in entries}
    links = {p for p, k in kinds.items() if k == "symlink"}
    for e in entries:
        parts = e.path.split("/")
        for i in range(1, len(parts)):
            above = kinds.get("/".join(parts[:i]))
            if above is not None and above != "dir":
                raise _Damaged(f"{e.path}: stored below a {above}, which could redirect it")
        if e.type == "symlink":
            problem = _link_problem(e.path, e.target, links)
            if problem:
                raise _Damaged(f"{e.path}: a symlink to {e.target} that {problem}")


# -- restoring -----------------------------------------------------------------------------------


def restore(snapshot: Path, target: Path) -> list[str]:
    """Restore `snapshot` into `target` (empty or missing), after checking all of it against its
    manifest; modes and mtimes come back. Returns the restored files' and links' paths."""
    snapshot = Path(snapshot).expanduser()
    target = Path(target).expanduser()
    if not snapshot.is_file():
        raise VaultError(f"{snapshot}: no such snapshot; list them with `brainiac backup --list`")
    _check_target(target)
    try:
        entries = _verify(snapshot)
    except _Damaged as exc:
        raise VaultError(
            f"{snapshot}: damaged or altered: {exc}; nothing was restored; use another snapshot "
            "(`brainiac backup --list`)"
        ) from None
    _check_target(target)  # again: it may have filled while we read a large snapshot
    by_path = {e.path: e for e in entries}
    _private_dirs(target)
    restored: list[str] = []
    try:
        with _open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST:
                    continue
                entry = by_path[_member_rel(member.name)]
                if _kind(member) != entry.type:
                    raise _Damaged(f"{entry.path}: changed since it was checked")
                dest = target / entry.path
                if entry.type == "dir":
                    _private_dirs(dest)  # 0700 until everything inside it is written
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
    except (*_READ_ERRORS, _Damaged, KeyError) as exc:
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


def _write_file(tar: tarfile.TarFile, member: tarfile.TarInfo, dest: Path, entry: _Entry) -> None:
    src = tar.extractfile(member)
    if src is None:
        raise _Damaged(f"{entry.path}: its content cannot be read")
    _private_dirs(dest.parent)
    # O_EXCL | O_NOFOLLOW: the target was empty, so anything already here was planted meanwhile.
    fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    digest = hashlib.sha256()
    with os.fdopen(fd, "wb") as out:
        while chunk := src.read(_CHUNK):
            digest.update(chunk)
            out.write(chunk)
        out.flush()
        os.fsync(out.fileno())
        os.fchmod(out.fileno(), entry.mode & 0o777)
    if digest.hexdigest() != entry.sha256:
        # Checked a moment ago; only a snapshot replaced during the restore gets here.
        raise _Damaged(f"{entry.path}: changed since it was checked")
    os.utime(dest, ns=(entry.mtime_ns, entry.mtime_ns))


# -- rewriting (brainiac forget) -----------------------------------------------------------------


def read_files(snapshot: Path, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """The regular files of a snapshot that `wanted(path)` selects, by vault path, after the
    whole snapshot is checked against its manifest (VaultError when it is damaged)."""
    try:
        _verify(snapshot)
        out: dict[str, bytes] = {}
        with _open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST or not member.isfile():
                    continue
                rel = _member_rel(member.name)
                if wanted(rel):
                    src = tar.extractfile(member)
                    out[rel] = src.read() if src is not None else b""
    except _Damaged as exc:
        raise VaultError(f"{snapshot}: damaged or altered: {exc}") from None
    except _READ_ERRORS as exc:
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
        entries = _verify(snapshot)
    except _Damaged as exc:
        raise VaultError(f"{snapshot}: damaged or altered: {exc}") from None
    by_path = {e.path: e for e in entries}
    missing = sorted(set(changes) - {p for p, e in by_path.items() if e.type == "file"})
    if missing:
        raise VaultError(f"{snapshot}: holds no file {missing[0]}; nothing was rewritten")
    with _verified_temp(
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
    by_path: Mapping[str, _Entry],
    changes: Mapping[str, tuple[str, bytes | None]],
    now: dt.datetime,
) -> list[_Entry]:
    written: list[_Entry] = []
    manifest: dict[str, Any] = {}
    try:
        with (
            _open_archive(snapshot) as old,
            tarfile.open(
                fileobj=raw, mode="w:gz", compresslevel=6, format=tarfile.PAX_FORMAT
            ) as tar,
        ):
            for member in old:
                src: IO[bytes] | None = old.extractfile(member) if member.isfile() else None
                if member.name == MANIFEST:
                    manifest = json.loads(src.read() if src is not None else b"{}")
                    continue
                entry = by_path[_member_rel(member.name)]
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
                _fill(info, entry)
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
    except (*_READ_ERRORS, _Damaged, KeyError, ValueError) as exc:
        raise VaultError(
            f"{snapshot}: cannot be rewritten ({exc}); it was left as it was"
        ) from None
    return written


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    value, unit = size / 1000, "kB"
    for bigger in ("MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"


def _private_dirs(path: Path) -> None:
    """mkdir -p, each folder it creates 0700 (Path.mkdir gives the parents the default mode)."""
    missing = []
    while not path.exists() and path != path.parent:
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):
            folder.mkdir(mode=0o700)
