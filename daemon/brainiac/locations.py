"""Where brainiac keeps what is derived from a vault: outside it, in the XDG directories.

The index lives in the cache directory (rebuildable; delete it any time), runtime state such as the
manifest of indexed files in the state directory, and the single-instance lock in the runtime
directory. Each is keyed by the vault's resolved path, so two vaults never share anything and a
synced vault never carries a half-written index.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def vault_key(vault: Path) -> str:
    """A readable, unique directory name for a vault: `<folder-name>-<hash of its path>`."""
    resolved = str(vault.resolve())
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", vault.resolve().name).strip("-.") or "vault"
    return f"{slug[:40]}-{hashlib.sha256(resolved.encode()).hexdigest()[:12]}"


def _base(environ: Mapping[str, str], var: str, default: str) -> Path:
    value = environ.get(var, "")
    # The XDG spec: a relative path in these variables is invalid and must be ignored.
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / default


@dataclass(frozen=True)
class Locations:
    cache: Path  # the Whoosh index
    state: Path  # manifest and other state that survives restarts
    runtime: Path  # lock and socket

    @classmethod
    def for_vault(cls, vault: Path, environ: Mapping[str, str] | None = None) -> Locations:
        env = os.environ if environ is None else environ
        key = vault_key(vault)
        runtime_base = env.get("XDG_RUNTIME_DIR", "")
        state = _base(env, "XDG_STATE_HOME", ".local/state") / "brainiac" / key
        runtime = (
            Path(runtime_base) / "brainiac" / key if os.path.isabs(runtime_base) else state / "run"
        )
        return cls(
            cache=_base(env, "XDG_CACHE_HOME", ".cache") / "brainiac" / key,
            state=state,
            runtime=runtime,
        )

    @property
    def index_dir(self) -> Path:
        return self.cache / "index"

    @property
    def manifest_path(self) -> Path:
        return self.state / "manifest.sqlite3"
