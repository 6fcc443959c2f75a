"""A vault's key, and the runtime folder its lock and socket are in (locations.py has the rest).

Standard library only (os, re, SHA-256): the command's entry point (entry.py) finds the running
daemon's socket with it before anything else is loaded, so it cannot use pathlib or dataclasses.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

try:  # the built-in SHA-256 (3.11): hashlib's loads OpenSSL at every `brainiac` call
    from _sha256 import sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:
    from hashlib import sha256


def vault_key(vault: str | os.PathLike[str]) -> str:
    """A readable, unique directory name for a vault: `<folder-name>-<hash of its path>`."""
    resolved = os.path.realpath(vault)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", os.path.basename(resolved)).strip("-.") or "vault"
    return f"{slug[:40]}-{sha256(resolved.encode()).hexdigest()[:12]}"


def xdg_base(environ: Mapping[str, str], var: str, default: str) -> str:
    value = environ.get(var, "")
    # The XDG spec: a relative path in these variables is invalid and must be ignored.
    if value and os.path.isabs(value):
        return value
    return os.path.join(os.path.expanduser("~"), default)


def state_folder(key: str, environ: Mapping[str, str]) -> str:
    return os.path.join(xdg_base(environ, "XDG_STATE_HOME", ".local/state"), "brainiac", key)


def runtime_folder(key: str, environ: Mapping[str, str]) -> str:
    """`$XDG_RUNTIME_DIR/brainiac/<key>`, or `run` in the state folder without one."""
    base = environ.get("XDG_RUNTIME_DIR", "")
    if os.path.isabs(base):
        return os.path.join(base, "brainiac", key)
    return os.path.join(state_folder(key, environ), "run")
