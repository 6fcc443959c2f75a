"""Where brainiac keeps what is derived from a vault: outside it, in the XDG directories.

The index lives in the cache directory (rebuildable; delete it any time), runtime state such as the
manifest of indexed files in the state directory, and the single-instance lock in the runtime
directory. Each is keyed by the vault's resolved path, so two vaults never share anything and a
synced vault never carries a half-written index. A vault folder reached by two paths (a bind
mount) has two keys: beside a running daemon, the daemon's are the folder's (`daemon_locations`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from brainiac.store.lock import folder_daemon_path, holder_of
from brainiac.store.vault_key import runtime_folder, state_folder, vault_key, xdg_base

__all__ = ["Locations", "daemon_locations", "vault_key"]


@dataclass(frozen=True)
class Locations:
    cache: Path  # the Whoosh index
    state: Path  # manifest and other state that survives restarts
    runtime: Path  # lock and socket

    @classmethod
    def for_vault(cls, vault: Path, environ: Mapping[str, str] | None = None) -> Locations:
        env = os.environ if environ is None else environ
        key = vault_key(vault)
        return cls(
            cache=Path(xdg_base(env, "XDG_CACHE_HOME", ".cache"), "brainiac", key),
            state=Path(state_folder(key, env)),
            runtime=Path(runtime_folder(key, env)),
        )

    @property
    def index_dir(self) -> Path:
        return self.cache / "index"

    @property
    def vectors_dir(self) -> Path:
        """The events' vectors (search/semantic.py): a cache beside the index."""
        return self.cache / "vectors"

    @property
    def manifest_path(self) -> Path:
        return self.state / "manifest.sqlite3"


def daemon_locations(vault: Path, here: Locations) -> Locations:
    """`here` (the vault's own locations), or those of the daemon running on the `vault` folder
    through another path (a bind mount: it holds the folder's own lock, lock.py): its index and
    state are this vault's, and it is their only writer."""
    if holder_of(here.runtime) is not None:
        return here
    path = folder_daemon_path(vault)
    return here if path is None else Locations.for_vault(path)
