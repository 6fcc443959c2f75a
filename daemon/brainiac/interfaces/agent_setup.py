"""`brainiac setup CLIENT`: connect an agent to this vault by writing its configuration files.

What each client reads (docs/setup.md): the MCP server entry, `brainiac --vault VAULT mcp`, and
for Claude Code also the three hooks of docs/hooks.md.

- claude-code: `~/.claude.json`, `mcpServers.brainiac` (what `claude mcp add --scope user`
  writes), and `~/.claude/settings.json`, `hooks` (UserPromptSubmit, Stop, SessionEnd);
- claude-desktop: `claude_desktop_config.json` in Claude's folder (per OS), `mcpServers.brainiac`;
- cursor: `~/.cursor/mcp.json`, `mcpServers.brainiac`.

The files belong to the clients and hold the person's other settings (Claude Code keeps its whole
state in `~/.claude.json`), so a change is a merge: every other key stays as it was, an existing
`brainiac` server entry keeps its `env`, and brainiac's own hook commands (`brainiac ... hook
EVENT` and nothing more) are replaced in place, never added twice; a person's command that runs
one among other things (`... hook stop && notify-send done`) is theirs, kept whole and reported.
Values are read and written back as Node (the clients) reads them, each as it was written
(node_json). A file that would not change is not written and gets no backup, so running setup
twice changes nothing. A changed file is first copied to `NAME.brainiac-backup-YYYYMMDD-HHMMSS`
beside it, then written by compare-and-swap (safe_io) into the file itself, or through it when it
is a symbolic link (a dotfiles repository's), so a save by the client in between is kept and
reported, never overwritten. A file that is not valid JSON, or whose shape is not what the client
reads, is refused with one line and left alone.

The commands name the `brainiac` executable by its absolute path: clients do not start a login
shell, and the README's install puts brainiac in a virtual environment, not on PATH.
"""

from __future__ import annotations

import datetime as dt
import difflib
import itertools
import os
import shlex
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from brainiac.core.errors import ConfigError, StaleWriteError, StorageError
from brainiac.interfaces import node_json
from brainiac.store import safe_io

CLIENTS = ("claude-code", "claude-desktop", "cursor")
SERVER_NAME = "brainiac"
HOOK_BUDGET = 1500  # docs/hooks.md: every prompt carries it; Claude Code passes 10,000 characters
# Claude Code's hook events and the `brainiac hook` subcommand each one runs.
HOOKS = {
    "UserPromptSubmit": ["user-prompt-submit", "--budget", str(HOOK_BUDGET)],
    "Stop": ["stop"],
    "SessionEnd": ["session-end"],
}
BACKUP_INFIX = ".brainiac-backup-"
# What shlex (punctuation_chars) splits out of a command line as operators and redirections.
_SHELL_OPERATORS = frozenset("();<>|&")
# How setup changes one file's settings in place; returns what it left alone, to be said.
Merge = Callable[[dict[str, Any], Path], list[str]]


@dataclass(frozen=True)
class Change:
    """One client file: its text now (None: missing) and the text setup wants there.

    `target` is the file that holds the text: `path` itself, or the file a symbolic link at
    `path` points to (settings kept in a dotfiles repository), written through so the link stays.
    `notes` are what setup leaves alone in it and the person should know (one line each)."""

    path: Path
    before: str | None
    after: str
    fingerprint: safe_io.Fingerprint | None
    target: Path
    notes: tuple[str, ...] = ()

    @property
    def needed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        """A unified diff from the file as it is to the file as setup writes it."""
        old = (self.before or "").splitlines(keepends=True)
        new = self.after.splitlines(keepends=True)
        label = str(self.path)
        return "".join(
            difflib.unified_diff(
                old, new, f"{label} (now)" if self.before is not None else "/dev/null", label
            )
        )


@dataclass(frozen=True)
class Written:
    path: Path
    backup: Path | None  # None: the file was created (nothing to back up)


def brainiac_command() -> list[str]:
    """The command that starts this brainiac, as absolute paths: the `brainiac` script beside
    the running interpreter (a virtual environment's bin/), else `python -m brainiac`.

    The interpreter's path is kept as it is, not resolved: resolving a venv's python leads to
    the base interpreter, which does not have brainiac installed.
    """
    python = Path(sys.executable).absolute()
    script = python.parent / ("brainiac.exe" if sys.platform == "win32" else "brainiac")
    if script.is_file():
        return [str(script)]
    return [str(python), "-m", "brainiac"]


def config_files(client: str, home: Path | None = None) -> list[Path]:
    """The files setup changes for `client`, where that client reads them on this system."""
    home = home if home is not None else Path.home()
    if client == "claude-code":
        return [home / ".claude.json", home / ".claude" / "settings.json"]
    if client == "cursor":
        return [home / ".cursor" / "mcp.json"]
    if client == "claude-desktop":
        return [_desktop_folder(home) / "claude_desktop_config.json"]
    raise ConfigError(f"no client {client!r}; choose one of {', '.join(CLIENTS)}")


def _desktop_folder(home: Path) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / "Claude"
    if sys.platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude"
    # Linux has no official Claude Desktop; the community builds read the XDG config folder.
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude"


def plan(
    client: str, vault: Path, command: list[str] | None = None, home: Path | None = None
) -> list[Change]:
    """What setup would write for `client` (nothing is written). ConfigError, one line, for a
    file that cannot be read or merged."""
    command = command if command is not None else brainiac_command()
    vault_arg = ["--vault", str(vault)]
    server: dict[str, Any] = {"command": command[0], "args": [*command[1:], *vault_arg, "mcp"]}
    if client == "claude-code":
        server = {"type": "stdio", **server}
    changes = []
    for path in config_files(client, home):
        if path.name == "settings.json":
            merge: Merge = _hooks_merger(command, vault_arg)
        else:
            merge = _server_merger(server)
        changes.append(_change(client, path, merge))
    return changes


def _change(client: str, path: Path, merge: Merge) -> Change:
    target = _through_link(client, path)
    try:
        data, fingerprint = safe_io.read_bytes(target)
    except FileNotFoundError:
        before, fingerprint, config = None, None, {}
    except OSError as exc:
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror}); fix it and run setup again"
        ) from None
    else:
        before = _text(path, data)
        config = _parse(client, path, before)
    notes = merge(config, path)
    if before is not None and _parse(client, path, before) == config:
        after = before  # the same settings: keep the file byte for byte (its own formatting)
    else:
        try:
            after = node_json.dumps(config) + "\n"
        except RecursionError:
            raise ConfigError(
                f"{path}: its values nest too deep for setup to write them back; add the entries "
                "of docs/setup.md by hand; nothing was changed"
            ) from None
    return Change(path, before, after, fingerprint, target, tuple(notes))


def _through_link(client: str, path: Path) -> Path:
    """The file that holds `path`'s settings: `path`, or the file its symbolic link points to.

    Replacing the link by a file would cut it from the dotfiles repository it points into, so
    the write goes to the file at the end of the link, and the link stays."""
    if not path.is_symlink():
        return path
    again = f"then run `brainiac setup {client}` again; nothing was changed"
    try:
        return path.resolve(strict=True)
    except FileNotFoundError:
        raise ConfigError(
            f"{path}: is a link to {os.readlink(path)}, which does not exist; restore that file "
            f"(or remove the link), {again}"
        ) from None
    except (OSError, RuntimeError) as exc:  # a loop of links (RuntimeError before Python 3.13)
        raise ConfigError(
            f"{path}: is a link that cannot be followed ({exc}); fix the link, {again}"
        ) from None


def _text(path: Path, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(
            f"{path}: is not UTF-8 text; fix it or move it away, then run setup again "
            "(nothing was changed)"
        ) from None


def _parse(client: str, path: Path, text: str) -> dict[str, Any]:
    if not text.strip():
        return {}  # an empty file holds no settings: it is filled in
    try:
        config = node_json.loads(text)
    except ValueError as exc:
        problem = f"is not valid JSON ({exc})"
    except RecursionError:
        problem = "is not JSON that setup can read (its values nest too deep)"
    else:
        if isinstance(config, dict):
            return config
        problem = f"holds a JSON {node_json.kind(config)}, not an object"
    raise ConfigError(
        f"{path}: {problem}; fix it (or move it away), then run `brainiac setup {client}` "
        "again; nothing was changed"
    )


def _refuse(path: Path, where: str, expected: str) -> ConfigError:
    return ConfigError(
        f"{path}: `{where}` is not {expected}; fix it (or move the file away), then run setup "
        "again; nothing was changed"
    )


def _server_merger(server: dict[str, Any]) -> Merge:
    def merge(config: dict[str, Any], path: Path) -> list[str]:
        servers = config.setdefault("mcpServers", {})
        if not isinstance(servers, dict):
            raise _refuse(path, "mcpServers", "an object")
        old = servers.get(SERVER_NAME)
        if old is not None and not isinstance(old, dict):
            raise _refuse(path, f"mcpServers.{SERVER_NAME}", "an object")
        # The person's own additions (env such as BRAINIAC_CONTEXT_BUDGET, a disabled flag) stay.
        entry = {**(old or {}), **server}
        entry.setdefault("env", {})
        servers[SERVER_NAME] = entry
        return []

    return merge


def hook_command(command: list[str], vault_arg: list[str], event: str) -> str:
    """The shell command line Claude Code runs for `event` (it runs hooks through a shell)."""
    return shlex.join([*command, *vault_arg, "hook", *HOOKS[event]])


def _runs_our_hook(entry: object, event: str) -> str | None:
    """The command of a hook entry that runs brainiac's hook for `event` (one setup wrote, one
    copied from docs/hooks.md, or a person's command that runs it among other things)."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return None
    command: str = entry["command"]
    words = command.split()
    sub = HOOKS[event][0]
    if any("brainiac" in w for w in words) and any(
        a == "hook" and b == sub for a, b in itertools.pairwise(words)
    ):
        return command
    return None


def _is_plain(command: str) -> bool:
    """Whether `command` is brainiac and its arguments alone, the shape setup writes: no shell
    operator, redirection, substitution or variable, nothing run around it (`nice`, `cd x &&`).
    Only such a command is setup's to replace: anything more is the person's, and replacing it
    would drop their part (`... hook stop && notify-send done`)."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        words = list(lexer)
    except ValueError:  # an unclosed quote: not a command setup wrote
        return False
    if not words or any(set(w) <= _SHELL_OPERATORS or "$" in w or "`" in w for w in words):
        return False
    program = words[0].replace("\\", "/").rsplit("/", 1)[-1]
    return program.startswith("brainiac") or words[1:3] == ["-m", "brainiac"]


def _hooks_merger(command: list[str], vault_arg: list[str]) -> Merge:
    def merge(config: dict[str, Any], path: Path) -> list[str]:
        notes = []
        hooks = config.setdefault("hooks", {})
        if not isinstance(hooks, dict):
            raise _refuse(path, "hooks", "an object")
        for event in HOOKS:
            wanted = {"type": "command", "command": hook_command(command, vault_arg, event)}
            groups = hooks.setdefault(event, [])
            if not isinstance(groups, list) or not all(isinstance(g, dict) for g in groups):
                raise _refuse(path, f"hooks.{event}", "a list of objects")
            placed = False
            emptied = []
            theirs: list[str] = []
            for group in groups:
                entries = group.get("hooks")
                if not isinstance(entries, list):
                    raise _refuse(path, f"hooks.{event}[].hooks", "a list")
                kept = []
                for entry in entries:
                    ours = _runs_our_hook(entry, event)
                    if ours is None:
                        kept.append(entry)
                    elif ours != wanted["command"] and not _is_plain(ours):
                        # The person's own command: kept whole (cutting it to ours drops theirs).
                        kept.append(entry)
                        theirs.append(ours)
                    elif not placed:  # the first of ours is brought up to date where it is
                        kept.append({**entry, **wanted})
                        placed = True
                    # (a second copy of ours is dropped: the hook would run twice)
                if entries and not kept:
                    emptied.append(group)
                entries[:] = kept
            groups[:] = [g for g in groups if not any(g is e for e in emptied)]
            notes += [
                f"{path}: hooks.{event}: `{own}` runs brainiac's hook inside a command of your "
                f"own; it is left as it is and no second {event} hook is added (to update it, "
                f"put `{wanted['command']}` in place of its brainiac part)"
                for own in theirs
            ]
            if not placed and not theirs:
                groups.append({"hooks": [wanted]})
        return notes

    return merge


def write(changes: list[Change], now: dt.datetime) -> list[Written]:
    """Write the files that change: a backup of each first (beside the path the client reads,
    a link's too), then the new text by compare-and-swap into the file that holds it.
    ConfigError or StorageError, nothing more written and the file's backup removed, if the
    client saved one meanwhile or it cannot be written."""
    written = []
    stamp = now.strftime("%Y%m%d-%H%M%S")
    for change in changes:
        if not change.needed:
            continue
        backup = None
        if change.before is not None:
            backup = change.path.with_name(f"{change.path.name}{BACKUP_INFIX}{stamp}")
            # Owner-only (replace_file's mode): ~/.claude.json holds account data.
            safe_io.replace_file(backup, change.before.encode("utf-8"))
        try:
            safe_io.write_bytes(change.target, change.after.encode("utf-8"), change.fingerprint)
        except (StaleWriteError, StorageError) as exc:
            if backup is not None:  # the file is as it was: its copy would only mislead
                backup.unlink(missing_ok=True)
            if isinstance(exc, StorageError):
                raise
            raise ConfigError(
                f"{change.path}: was changed by another program while setup ran; nothing was "
                "written to it, run setup again"
            ) from None
        written.append(Written(change.path, backup))
    return written


def next_steps(client: str) -> list[str]:
    """What the person does after setup, for the client to read the new settings."""
    if client == "claude-code":
        return [
            "start a new Claude Code session (`/mcp` shows brainiac, `/hooks` the hooks)",
        ]
    if client == "claude-desktop":
        return ["quit and restart Claude Desktop; brainiac's tools appear in a new chat"]
    return ["restart Cursor (or reload its MCP servers in Settings > MCP)"]
