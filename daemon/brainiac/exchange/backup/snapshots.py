"""The snapshots in a backups folder: where that folder is, their names, listing, retention.

`brainiac-<vault name>-YYYYmmdd-HHMMSS.tar.gz` (`-2`, `-3`... for a second snapshot within the
same second), in `[backup] folder` (default: `backups/` in the vault's state directory), never
inside the vault. A name that ends in `.tar.gz` only ever holds a snapshot that verified
(creation.py); temp files are not listed. Not the archive's content (archive.py).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainiac.core.errors import ConfigError

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

SUFFIX = ".tar.gz"
STAMP = "%Y%m%d-%H%M%S"


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
            created = dt.datetime.strptime(m.group(1), STAMP)
            size = entry.stat(follow_symlinks=False).st_size
        except (ValueError, FileNotFoundError):
            continue  # not a date (a name that only looks like ours), or deleted meanwhile
        seq = int(m.group(2) or 1)
        found.append((created, seq, Snapshot(Path(entry.path), created, size)))
    return [s for _c, _s, s in sorted(found, key=lambda t: (t[0], t[1]))]


def prune(folder: Path, name: str, keep: int, new: Path) -> list[Path]:
    """Delete the oldest snapshots so `keep` remain, never the one just made (even if its `now`
    is older than theirs: a clock set back must not cost the newest copy of the vault)."""
    others = [s.path for s in _list(folder, name) if s.path != new]
    doomed = others[: max(0, len(others) - (keep - 1))]
    for path in doomed:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
    return doomed


def human_size(size: int) -> str:
    if size < 1000:
        return f"{size} B"
    value, unit = size / 1000, "kB"
    for bigger in ("MB", "GB"):
        if value < 1000:
            break
        value, unit = value / 1000, bigger
    return f"{value:.1f} {unit}"
