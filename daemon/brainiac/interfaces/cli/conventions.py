"""What every `brainiac` command does alike: the vault it works on, its exit statuses, its JSON
output and the times it reads (the header of docs/cli.md says the same to users).

Not the commands themselves (the `*_commands` modules), nor how the memory is opened for them
(opening.py).
"""

from __future__ import annotations

import datetime as dt
import json
import tomllib
from pathlib import Path
from typing import Any

import click

from brainiac.core import clock
from brainiac.core.errors import ConfigError
from brainiac.store import vault_choice

EXIT_ERROR = 2
EXIT_CONFLICTS = 1  # `check`: the response contradicts the memory
EXIT_HOOK_FAILED = 1  # `hook ...`: never 2, which Claude Code reads as "block the prompt"


def resolve_vault(flag: str | None) -> Path:
    """--vault, then $BRAINIAC_VAULT, then `vault` in ~/.config/brainiac/config.toml, then
    ~/brainiac (vault_choice.py: the entry point finds the daemon's socket with it too)."""
    try:
        return Path(vault_choice.chosen_vault(flag))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"{vault_choice.user_config_path()}: cannot be read ({exc}); fix it or delete it"
        ) from exc


def vault_flag(vault: Path) -> list[str]:
    """`--vault PATH`, unless PATH is the vault brainiac finds without it."""
    return [] if resolve_vault(None).absolute() == vault.absolute() else ["--vault", str(vault)]


def print_json(data: Any) -> None:
    click.echo(json.dumps(data, ensure_ascii=False, indent=2, default=str))


def parse_time(value: str | None, option: str) -> dt.datetime | None:
    if value is None:
        return None
    try:
        return clock.local(dt.datetime.fromisoformat(value))
    except ValueError:
        raise click.BadParameter(
            f"{value!r} is not an ISO-8601 time such as 2026-11-22T09:30", param_hint=option
        ) from None
    except OverflowError:  # an offset that moves it out of the years 1-9999
        raise ConfigError(
            f"{option} {value}: out of range; give a time in the years 1-9999"
        ) from None
