"""The bearer token of `brainiac serve --http` (docs/remote.md): a file only its owner can read.

Standard library only: the remote hooks (remote_hook.py) read the same file on every prompt, and
must not pay for more than they use. The server creates the file when it is missing; both sides
refuse a file the group or others can read, since whoever reads it can write the memory.
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import secrets
import stat
from pathlib import Path

from brainiac.core.errors import BrainiacError

_TOKEN_BYTES = 32  # 256 bits: not guessable, over any number of tries a network allows


class TokenFileError(BrainiacError):
    """The token file cannot be used: unsafe permissions, unreadable or empty."""


def is_loopback(host: str) -> bool:
    """Whether binding `host` serves this machine alone (a name other than localhost is not
    trusted to: it may resolve to any address)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def read_token(path: Path) -> str:
    """The token in `path`; TokenFileError when others could read it too, or it holds none."""
    try:
        info = path.stat()
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TokenFileError(
            f"{path}: no such token file; create it with brainiac serve --http "
            f"--token-file {path}, which writes a new token there"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise TokenFileError(
            f"{path}: cannot read the token file ({exc}); check the path"
        ) from None
    if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TokenFileError(
            f"{path}: the token file can be read by others (mode {stat.S_IMODE(info.st_mode):o}); "
            f"make it the owner's alone: chmod 600 {path}"
        )
    token = text.strip()
    if not token:
        raise TokenFileError(
            f"{path}: the token file is empty; delete it and start brainiac "
            "serve --http again to write a new token"
        )
    return token


def ensure_token(path: Path) -> tuple[str, bool]:
    """The token in `path`, written there first (mode 600) when the file is missing; and whether
    it was written now."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # O_EXCL: a file that appeared meanwhile is read, never overwritten.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return read_token(path), False
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(secrets.token_urlsafe(_TOKEN_BYTES) + "\n")
    return read_token(path), True


def authorized(header: bytes | None, token: str) -> bool:
    """Whether an Authorization header carries `token`, compared in constant time so that the
    time of a refusal says nothing about how much of a guess was right."""
    expected = b"Bearer " + token.encode("utf-8")
    return hmac.compare_digest(header or b"", expected)
