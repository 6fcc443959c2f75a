"""Settings: defaults, then the vault's `.brainiac/config.toml`, then the environment, then flags.

Every setting lives in one table below (`SETTINGS`), which is the single place that names its TOML
section and key, its environment variable, its type and its range. The template's config file and
docs/configuration.md document the same names; a test keeps the three in step.
"""

from __future__ import annotations

import dataclasses
import difflib
import json
import math
import os
import re
import socket
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brainiac.core.errors import ConfigError
from brainiac.store import privacy, safe_io

CONFIG_RELPATH = ".brainiac/config.toml"


@dataclass(frozen=True)
class Config:
    # [context]
    budget: int = 2000
    recent_events: int = 10
    max_ltm_items: int = 200
    relevance_first_below: int = 1000
    long_term_share: float = 0.8
    # [retrieval]
    relevance_weight: float = 1.0
    strength_weight: float = 0.15
    reinforcement_weight: float = 0.15
    recency_weight: float = 0.1
    recency_half_life_days: float = 30.0
    # recall by meaning (search/semantic.py): a sentence model's closeness added to BM25F
    meaning: bool = True
    # [jobs]: minutes between runs of each scheduled job (0 turns a job off)
    rescan_minutes: float = 60.0
    merge_minutes: float = 10.0
    reflection_minutes: float = 15.0
    promotion_minutes: float = 60.0
    organization_minutes: float = 1440.0
    inbox_minutes: float = 1.0
    backup_minutes: float = 1440.0
    # the one device whose daemon runs the memory jobs on a vault synced between devices
    # (docs/multi-device.md); empty: every device that runs a daemon on the vault runs them
    jobs_device: str = ""
    # [lifecycle]
    short_term_window: int = 10
    working_memory_ttl_minutes: float = 30.0
    promotion_strength: float = 0.5
    decay_per_day: float = 0.98
    archive_below: float = 0.1
    learning_rate: float = 0.1
    # [llm]: an optional OpenAI-compatible endpoint; empty base_url means none (offline)
    llm_base_url: str = ""
    llm_model: str = ""
    llm_api_key_env: str = ""
    llm_timeout_s: float = 20.0
    # [backup]: snapshots of the vault (docs/backup.md); an empty folder means the state directory's
    backup_folder: str = ""
    backup_keep: int = 7
    # [vault]
    max_note_bytes: int = 1_000_000
    private_folders: tuple[str, ...] = field(default_factory=tuple)
    # [projects]: recall scoped to the project an agent works in (docs/projects.md)
    projects_isolate: bool = False
    project_paths: tuple[tuple[str, str], ...] = field(default_factory=tuple)


@dataclass(frozen=True)
class Setting:
    section: str
    key: str
    attr: str
    kind: type
    minimum: float | None = None
    maximum: float | None = None

    @property
    def env(self) -> str:
        return f"BRAINIAC_{self.section}_{self.key}".upper()


SETTINGS: tuple[Setting, ...] = (
    Setting("context", "budget", "budget", int, 1, 10_000_000),
    Setting("context", "recent_events", "recent_events", int, 0, 1000),
    Setting("context", "max_ltm_items", "max_ltm_items", int, 0, 10_000),
    Setting("context", "relevance_first_below", "relevance_first_below", int, 0, 10_000_000),
    Setting("context", "long_term_share", "long_term_share", float, 0, 1),
    Setting("retrieval", "relevance_weight", "relevance_weight", float, 0, 100),
    Setting("retrieval", "strength_weight", "strength_weight", float, 0, 100),
    Setting("retrieval", "reinforcement_weight", "reinforcement_weight", float, 0, 100),
    Setting("retrieval", "recency_weight", "recency_weight", float, 0, 100),
    Setting("retrieval", "recency_half_life_days", "recency_half_life_days", float, 0.01, 100_000),
    Setting("retrieval", "meaning", "meaning", bool),
    Setting("jobs", "rescan", "rescan_minutes", float, 0, 100_000),
    Setting("jobs", "merge", "merge_minutes", float, 0, 100_000),
    Setting("jobs", "reflection", "reflection_minutes", float, 0, 100_000),
    Setting("jobs", "promotion", "promotion_minutes", float, 0, 100_000),
    Setting("jobs", "organization", "organization_minutes", float, 0, 100_000),
    Setting("jobs", "inbox", "inbox_minutes", float, 0, 100_000),
    Setting("jobs", "backup", "backup_minutes", float, 0, 100_000),
    Setting("jobs", "device", "jobs_device", str),
    Setting("lifecycle", "short_term_window", "short_term_window", int, 0, 100_000),
    Setting("lifecycle", "working_memory_ttl_minutes", "working_memory_ttl_minutes", float, 1, 1e6),
    Setting("lifecycle", "promotion_strength", "promotion_strength", float, 0, 100),
    Setting("lifecycle", "decay_per_day", "decay_per_day", float, 0.01, 1),
    Setting("lifecycle", "archive_below", "archive_below", float, 0, 100),
    Setting("lifecycle", "learning_rate", "learning_rate", float, 0, 10),
    Setting("llm", "base_url", "llm_base_url", str),
    Setting("llm", "model", "llm_model", str),
    Setting("llm", "api_key_env", "llm_api_key_env", str),
    Setting("llm", "timeout_s", "llm_timeout_s", float, 0.1, 600),
    Setting("backup", "folder", "backup_folder", str),
    Setting("backup", "keep", "backup_keep", int, 1, 10_000),
    Setting("vault", "max_note_bytes", "max_note_bytes", int, 1024, 1 << 31),
    Setting("vault", "private_folders", "private_folders", tuple),
    Setting("projects", "isolate", "projects_isolate", bool),
    Setting("projects", "paths", "project_paths", dict),
)


def job_interval_minutes(cfg: Config, job: str) -> float:
    """A job's schedule: `[jobs] <name> = minutes`; 0 (or no setting) means not scheduled."""
    return float(getattr(cfg, f"{job}_minutes", 0.0))


# This device's name for `[jobs] device`: the host name, unless set (two "devices" on one machine,
# or a host name that changes).
DEVICE_ENV = "BRAINIAC_DEVICE"


def this_device(environ: Mapping[str, str] | None = None) -> str:
    """The name this device goes by in `[jobs] device`."""
    environ = os.environ if environ is None else environ
    return environ.get(DEVICE_ENV, "").strip() or socket.gethostname()


def runs_jobs(cfg: Config, environ: Mapping[str, str] | None = None) -> bool:
    """Whether this device runs the memory jobs: it is the vault's `[jobs] device`, or none is
    named. Compared without regard to case: host names are."""
    return not cfg.jobs_device or cfg.jobs_device.casefold() == this_device(environ).casefold()


def jobs_elsewhere(cfg: Config, environ: Mapping[str, str] | None = None) -> str:
    """Why a memory job does not run here, in one line (for a device that does not run them)."""
    return (
        f"the vault's [jobs] device is {cfg.jobs_device!r} and this device is "
        f"{this_device(environ)!r} (the host name, or {DEVICE_ENV}); the memory jobs run there"
    )


def load(
    vault: Path,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Any] | None = None,
) -> Config:
    """The vault's configuration: defaults < config.toml < environment < `overrides` (flags)."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    path = vault / CONFIG_RELPATH
    where = CONFIG_RELPATH
    table = _read_toml(path)
    _check_names(table)
    for s in SETTINGS:
        section = table.get(s.section, {})
        if not isinstance(section, dict):
            raise ConfigError(f"{where}: [{s.section}] must be a table; fix or delete that line")
        if s.key in section:
            values[s.attr] = _coerce(s, section[s.key], f"{where}: [{s.section}] {s.key}")
        if s.env in environ:
            values[s.attr] = _coerce(s, environ[s.env], f"environment variable {s.env}")
    for attr, raw in (overrides or {}).items():
        setting = next((s for s in SETTINGS if s.attr == attr), None)
        if setting is None:
            raise ConfigError(f"unknown setting {attr!r}")
        if raw is not None:
            values[attr] = _coerce(setting, raw, f"--{attr.replace('_', '-')}")
    return dataclasses.replace(Config(), **values)


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        data, _ = safe_io.read_bytes(path)  # a regular file only: a FIFO would wait for ever
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"{CONFIG_RELPATH}: cannot be read ({exc.strerror})") from exc
    try:
        # utf-8-sig: an editor that writes a byte order mark (Notepad) still gives a valid file
        return tomllib.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(
            f"{CONFIG_RELPATH}, line {line}: not UTF-8 text; re-save it as UTF-8 or delete it to "
            "use defaults"
        ) from exc
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(
            f"{CONFIG_RELPATH}: not valid TOML ({exc}); fix the file or delete it to use defaults"
        ) from exc


def _check_names(table: Mapping[str, Any]) -> None:
    """A section or key that is no setting is an error, not ignored: whoever wrote it meant to
    change something (`budjet = 500` would otherwise leave the budget at its default unnoticed)."""
    keys: dict[str, list[str]] = {}
    for s in SETTINGS:
        keys.setdefault(s.section, []).append(s.key)
    fix = "fix or delete it (docs/configuration.md lists the settings)"
    for name, value in table.items():
        if name in keys:
            unknown = [k for k in value if k not in keys[name]] if isinstance(value, dict) else []
            if unknown:
                raise ConfigError(
                    f"{CONFIG_RELPATH}: [{name}] {_name(unknown[0])} is not a setting"
                    f"{_did_you_mean(unknown[0], keys[name])}; {fix}"
                )
            continue  # a value that is not a table is reported with the section's settings
        home = [s.section for s in SETTINGS if s.key == name]
        if home and not isinstance(value, dict):
            raise ConfigError(
                f"{CONFIG_RELPATH}: {_name(name)} is outside any section; move it under [{home[0]}]"
            )
        what = "is not a section" if isinstance(value, dict) else "is not a setting"
        shown = f"[{_name(name)}]" if isinstance(value, dict) else _name(name)
        raise ConfigError(
            f"{CONFIG_RELPATH}: {shown} {what}{_did_you_mean(name, list(keys))}; {fix}"
        )


def _name(key: str) -> str:
    return key if re.fullmatch(r"[A-Za-z0-9_-]+", key) else json.dumps(key)


def _did_you_mean(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _shown(raw: Any) -> str:
    text = repr(raw)
    return text if len(text) <= 60 else text[:57] + "..."


def _coerce(s: Setting, raw: Any, where: str) -> Any:
    if s.kind is str:
        if not isinstance(raw, str):
            raise ConfigError(f"{where}: expected a string in quotes, got {_shown(raw)}")
        return raw.strip()
    if s.kind is tuple:
        if isinstance(raw, str):
            raw = [part.strip() for part in raw.split(",") if part.strip()]
        if not isinstance(raw, list) or not all(isinstance(x, str) for x in raw):
            raise ConfigError(f"{where}: expected a list of strings, got {_shown(raw)}")
        if s.attr == "private_folders":
            for folder in raw:
                problem = privacy.folder_problem(folder)
                if problem is not None:
                    raise ConfigError(f"{where}: {_shown(folder)} {problem}")
        return tuple(raw)
    if s.kind is bool:
        return _boolean(raw, where)
    if s.kind is dict:
        return _folder_names(raw, where)
    try:
        if isinstance(raw, bool):
            raise ValueError
        value = s.kind(raw)
        if s.kind is int and isinstance(raw, float) and raw != int(raw):
            raise ValueError
        if isinstance(value, float) and math.isnan(value):
            raise ValueError  # nan passes every range check, and decay wrote `strength: nan`
    except (TypeError, ValueError, OverflowError):
        raise ConfigError(f"{where}: expected {s.kind.__name__}, got {_shown(raw)}") from None
    if (s.minimum is not None and value < s.minimum) or (
        s.maximum is not None and value > s.maximum
    ):
        raise ConfigError(
            f"{where}: {value!r} is out of range; use a value from {s.minimum} to {s.maximum}"
        )
    return value


def _boolean(raw: Any, where: str) -> bool:
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.strip().lower() in ("true", "1", "yes", "on"):
        return True
    if isinstance(raw, str) and raw.strip().lower() in ("false", "0", "no", "off", ""):
        return False
    raise ConfigError(f"{where}: expected true or false, got {_shown(raw)}")


def _folder_names(raw: Any, where: str) -> tuple[tuple[str, str], ...]:
    """`[projects] paths`: folder = "name" pairs (a TOML table; in the environment
    `folder=name,folder=name`)."""
    if isinstance(raw, str):
        pairs = [part.split("=", 1) for part in raw.split(",") if part.strip()]
        if not all(len(p) == 2 for p in pairs):
            raise ConfigError(f"{where}: expected folder=name pairs, got {_shown(raw)}")
        raw = {k.strip(): v.strip() for k, v in pairs}
    if not isinstance(raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in raw.items()
    ):
        raise ConfigError(f'{where}: expected a table of "folder" = "name", got {_shown(raw)}')
    for folder, name in raw.items():
        if not folder.strip() or not _project_name_ok(name):
            raise ConfigError(
                f"{where}: {_shown(folder)} = {_shown(name)} needs a folder and a project name "
                "(letters, digits, dashes; no brackets, parentheses, stars or commas)"
            )
    return tuple((k.strip(), v.strip()) for k, v in raw.items())


def _project_name_ok(name: str) -> bool:
    """A project name that an event line keeps as it is."""
    from brainiac.formats.events import clean_project

    return bool(name.strip()) and clean_project(name) == name.strip()
