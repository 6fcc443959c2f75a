"""Which vault a command means: --vault, then $BRAINIAC_VAULT, then `vault` in the user's
~/.config/brainiac/config.toml, then ~/brainiac.

Standard library only: the entry point (entry.py) finds the running daemon's socket with it before
anything else is loaded, and the CLI (cli.conventions.resolve_vault) reads the same choice.
"""

from __future__ import annotations

import os

DEFAULT_VAULT = "~/brainiac"


def user_config_path() -> str:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "brainiac", "config.toml")


def configured_vault() -> str | None:
    """`vault` in the user's config.toml, or None; OSError (not FileNotFoundError),
    UnicodeDecodeError or tomllib.TOMLDecodeError when the file cannot be read."""
    import tomllib  # only when neither --vault nor $BRAINIAC_VAULT says

    try:
        with open(user_config_path(), "rb") as f:
            value = tomllib.load(f).get("vault")
    except FileNotFoundError:
        return None
    return str(value) if value else None


def chosen_vault(flag: str | None) -> str:
    """--vault, then $BRAINIAC_VAULT, then `vault` in ~/.config/brainiac/config.toml, then
    ~/brainiac; `~` expanded (cli.conventions.resolve_vault turns a bad config file into
    ConfigError)."""
    chosen = flag or os.environ.get("BRAINIAC_VAULT") or configured_vault() or DEFAULT_VAULT
    return os.path.expanduser(chosen)
