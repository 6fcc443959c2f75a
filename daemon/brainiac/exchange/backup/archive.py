"""The snapshot archive format, and reading an archive back against its manifest.

A snapshot is a gzipped PAX tar: every vault path stored as `vault/<path>` (so no file can pose as
the manifest), and `MANIFEST.json`, which lists each file, folder and symlink with its type, mode,
mtime, and for a file its size and SHA-256 (`Entry`). `verify` reads a whole archive and checks
every member against the manifest and every path for safety (no `..`, nothing below a link or a
file, no link out of the vault); it raises `Damaged`, which the caller words for what it was doing
(creating, restoring, rewriting). Which files go in is contents.py's; writing one, creation.py's.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import tarfile
import zlib
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "MANIFEST.json"
ROOT = "vault"  # every vault file is stored as vault/<path>, so no file can pose as the manifest
FORMAT = 1
CHUNK = 1 << 20
_MANIFEST_MAX_BYTES = 256 << 20  # a bigger "manifest" is an attack on memory, not a vault's list
READ_ERRORS = (tarfile.TarError, OSError, EOFError, zlib.error, UnicodeError)


@dataclass(frozen=True)
class Entry:
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


class Damaged(Exception):
    """What is wrong with an archive; the caller says what that means (create vs restore)."""


def fill(info: tarfile.TarInfo, entry: Entry) -> None:
    info.mode = entry.mode
    info.mtime = entry.mtime_ns / 1e9  # PAX keeps the fraction, for plain `tar x` too
    info.uid = info.gid = 0  # restored as whoever restores; no user names leave the machine
    info.uname = info.gname = ""


@contextlib.contextmanager
def open_archive(snapshot: Path) -> Iterator[tarfile.TarFile]:
    # Stream mode ("r|gz"): one sequential read, no seeking back in the gzip stream.
    with tarfile.open(snapshot, mode="r|gz") as tar:
        yield tar


def member_rel(name: str) -> str:
    """The vault path a member stands for; refuses absolute paths, `..`, and anything else."""
    if not name.startswith(ROOT + "/"):
        raise Damaged(f"member {name!r} lies outside {ROOT}/ (absolute or foreign path)")
    rel = name[len(ROOT) + 1 :]
    if not rel or any(part in ("", ".", "..") for part in rel.split("/")) or "\0" in rel:
        raise Damaged(f"member {name!r} has an unsafe path (empty part, `.` or `..`)")
    return rel


def member_kind(member: tarfile.TarInfo) -> str:
    if member.isdir():
        return "dir"
    if member.issym():
        return "symlink"
    return "file" if member.isfile() else "other"


def _observe(tar: tarfile.TarFile, member: tarfile.TarInfo, rel: str) -> Entry:
    """What a member really holds, in manifest terms (mtime is taken from the manifest)."""
    mode = member.mode & 0o7777
    if member.isdir():
        return Entry(rel, "dir", mode, 0)
    if member.issym():
        return Entry(rel, "symlink", mode, 0, target=member.linkname)
    if not member.isfile():
        raise Damaged(f"{rel}: a hard link or special file; snapshots hold none")
    src = tar.extractfile(member)
    if src is None:
        raise Damaged(f"{rel}: its content cannot be read")
    digest = hashlib.sha256()
    size = 0
    while chunk := src.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return Entry(rel, "file", mode, 0, size=size, sha256=digest.hexdigest())


def _parse_manifest(data: bytes) -> list[Entry]:
    try:
        doc = json.loads(data.decode("utf-8"))
        if doc.get("format") != FORMAT:
            raise Damaged(f"{MANIFEST} is of format {doc.get('format')!r}, not {FORMAT}")
        entries = []
        for item in doc["entries"]:
            kind = item["type"]
            if kind not in ("file", "dir", "symlink"):
                raise Damaged(f"{MANIFEST}: unknown entry type {kind!r}")
            entries.append(
                Entry(
                    member_rel(f"{ROOT}/{item['path']}"),
                    kind,
                    int(item["mode"], 8),
                    int(item["mtime_ns"]),
                    size=int(item["size"]) if kind == "file" else 0,
                    sha256=str(item["sha256"]) if kind == "file" else "",
                    target=str(item["target"]) if kind == "symlink" else "",
                )
            )
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise Damaged(f"{MANIFEST} is malformed ({exc!r})") from None
    return entries


def verify(snapshot: Path) -> list[Entry]:
    """Read the whole archive; every member must match the manifest and every manifest entry a
    member, with a safe path. Returns the manifest's entries; raises Damaged."""
    found: dict[str, Entry] = {}
    manifest: bytes | None = None
    try:
        with open_archive(snapshot) as tar:
            for member in tar:
                if member.name == MANIFEST:
                    if manifest is not None or not member.isfile():
                        raise Damaged(f"more than one {MANIFEST}, or not a file")
                    if member.size > _MANIFEST_MAX_BYTES:
                        raise Damaged(f"{MANIFEST} is implausibly large")
                    src = tar.extractfile(member)
                    manifest = src.read() if src is not None else b""
                    continue
                rel = member_rel(member.name)
                if rel in found:
                    raise Damaged(f"{rel}: stored twice")
                found[rel] = _observe(tar, member, rel)
    except READ_ERRORS as exc:
        raise Damaged(f"cannot be read as a .tar.gz ({exc})") from None
    if manifest is None:
        raise Damaged(f"no {MANIFEST} in it; not a brainiac snapshot")
    expected = _parse_manifest(manifest)
    listed = {e.path: e for e in expected}
    if len(listed) != len(expected):
        raise Damaged(f"{MANIFEST} lists a path twice")
    extra = sorted(set(found) - set(listed))
    if extra:
        raise Damaged(f"{extra[0]}: in the archive but not in {MANIFEST}")
    missing = sorted(set(listed) - set(found))
    if missing:
        raise Damaged(f"{missing[0]}: listed in {MANIFEST} but missing from the archive")
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
                raise Damaged(f"{e.path}: its {what} does not match {MANIFEST}")
    _check_tree(expected)
    return expected


def _check_tree(entries: list[Entry]) -> None:
    """Nothing may lie below a link or a file, and no link may lead out (see link_problem)."""
    kinds = {e.path: e.type for e in entries}
    links = {p for p, k in kinds.items() if k == "symlink"}
    for e in entries:
        parts = e.path.split("/")
        for i in range(1, len(parts)):
            above = kinds.get("/".join(parts[:i]))
            if above is not None and above != "dir":
                raise Damaged(f"{e.path}: stored below a {above}, which could redirect it")
        if e.type == "symlink":
            problem = link_problem(e.path, e.target, links)
            if problem:
                raise Damaged(f"{e.path}: a symlink to {e.target} that {problem}")


def link_problem(rel: str, target: str, links: Collection[str]) -> str | None:
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
