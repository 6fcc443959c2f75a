"""The commands that set brainiac up: `init` (a vault from the template), `setup` (connect an
agent: its MCP server and hooks, docs/setup.md), `mcp` (the MCP server itself, over stdio) and
`serve --http` (the same server over HTTP, for agents on other machines: docs/remote.md).

Not the daemon's systemd unit (daemon_commands.py: `service`), nor what `setup` writes
(agent_setup.py).
"""

from __future__ import annotations

import importlib.util
import shlex
from pathlib import Path
from typing import TYPE_CHECKING

import click

from brainiac.core import clock
from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.conventions import EXIT_ERROR, print_json, resolve_vault, vault_flag
from brainiac.store.vault import WORKING_MEMORY, Vault

if TYPE_CHECKING:
    from brainiac.api import memory as memory_mod
else:
    memory_mod = lazy_module("brainiac.api.memory")


@click.command()
@click.argument("path", required=False, metavar="[PATH]")
@click.option(
    "--force",
    is_flag=True,
    help="Make a vault in a folder that already holds other files (never overwrites them).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the vault and created files as JSON.")
@click.pass_context
def init(ctx: click.Context, path: str | None, force: bool, as_json: bool) -> None:
    """Create a vault from the template (never overwrites an existing file).

    In an existing vault, only adds what is missing from its structure (folders, config,
    core identity, short-term memory), never the example notes again. A folder that holds
    other files is refused without --force.
    """
    target = Path(path).expanduser() if path else resolve_vault(ctx.obj["vault"])
    created = memory_mod.Memory.init(target, force=force)
    if as_json:
        print_json({"vault": str(target), "created": created})
        return
    click.echo(
        f"{target}: {len(created)} file(s) created"
        + ("" if created else " (everything was already there)"),
        err=True,
    )
    for rel in created:
        click.echo(rel)
    _next_steps(target)


def _next_steps(vault: Path) -> None:
    """What to do after `init` and at `run`: the README's two commands end here (on stderr)."""
    from brainiac.interfaces.agent_setup import brainiac_command

    command = shlex.join([*brainiac_command(), *vault_flag(vault)])
    click.echo(
        f"next: `{command} run` keeps the memory fresh (until Ctrl-C); connect an agent with "
        f"`{command} setup claude-code` (or claude-desktop, cursor; docs/setup.md); the working "
        f"memory file is {vault.absolute() / WORKING_MEMORY}",
        err=True,
    )


@click.command()
@click.argument("client", type=click.Choice(["claude-code", "claude-desktop", "cursor"]))
@click.option("--dry-run", is_flag=True, help="Print the changes as a diff; write nothing.")
@click.pass_context
def setup(ctx: click.Context, client: str, dry_run: bool) -> None:
    """Connect an agent: write this vault's MCP server (and, for Claude Code, the hooks) into
    the client's own configuration files (docs/setup.md).

    claude-code: ~/.claude.json (mcpServers) and ~/.claude/settings.json (hooks); claude-desktop:
    claude_desktop_config.json in Claude's folder; cursor: ~/.cursor/mcp.json. Other settings
    stay; a changed file is first copied beside it (NAME.brainiac-backup-TIME); running it again
    changes nothing. A file that is not valid JSON is refused and left alone. A file that is a
    link is written through it; a hook command of your own that runs brainiac's is left whole.
    """
    from brainiac.interfaces import agent_setup

    vault = Vault.open(resolve_vault(ctx.obj["vault"]).absolute())
    changes = agent_setup.plan(client, vault.root)
    for change in changes:
        for note in change.notes:
            click.echo(f"note: {note}", err=True)
        if not change.needed:
            click.echo(f"{change.path}: already set up; nothing to change", err=True)
        elif dry_run:
            click.echo(change.diff(), nl=False)
    if dry_run:
        click.echo("dry run: nothing was written", err=True)
        return
    for done in agent_setup.write(changes, clock.now()):
        kept = f" (the old file is kept as {done.backup})" if done.backup else " (created)"
        click.echo(f"wrote {done.path}{kept}", err=True)
    for step in agent_setup.next_steps(client):
        click.echo(f"next: {step}", err=True)
    click.echo(f"the working memory file: {vault.root / WORKING_MEMORY}", err=True)


@click.command()
@click.pass_context
def mcp(ctx: click.Context) -> None:
    """Serve this vault's memory to MCP clients over stdio (Claude Desktop, Claude Code, Cursor);
    see docs/mcp.md.

    Runs until the client disconnects. stdout carries only the protocol; logs go to stderr.
    """
    _needs_sdk(ctx)
    from brainiac.interfaces import mcp_server

    mcp_server.serve(resolve_vault(ctx.obj["vault"]))


def _needs_sdk(ctx: click.Context) -> None:
    """The MCP SDK (and uvicorn, which it brings) is an optional extra; only the servers need
    it: without it, one line saying how to install it."""
    # Looked up, not imported: only mcp_server.py imports the SDK (one seam for it).
    if not all(importlib.util.find_spec(name) for name in ("mcp", "uvicorn")):
        click.echo(
            "brainiac: the MCP server needs the mcp package; "
            "install it with pip install 'brainiac[mcp]'",
            err=True,
        )
        ctx.exit(EXIT_ERROR)


@click.command()
@click.option(
    "--http", "http", is_flag=True, help="Serve over HTTP (MCP streamable HTTP); required."
)
@click.option(
    "--host",
    default="127.0.0.1",
    show_default=True,
    help="The address to listen on; any but loopback needs --token-file.",
)
@click.option(
    "--port", type=click.IntRange(0, 65535), default=8765, show_default=True, help="0: any free."
)
@click.option(
    "--token-file",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="The bearer token every request must carry; written (mode 600) when missing.",
)
@click.pass_context
def serve(ctx: click.Context, http: bool, host: str, port: int, token_file: Path | None) -> None:
    """Serve this vault's MCP tools and the agent hooks to other machines over HTTP (MCP
    streamable HTTP at /mcp); see docs/remote.md.

    Loopback and no token by default. Any other address needs --token-file, and then every
    request needs `Authorization: Bearer <token>`; TLS is a reverse proxy's (Caddy, nginx).
    Runs until SIGINT or SIGTERM.
    """
    if not http:
        raise click.UsageError("say --http (MCP over stdio is `brainiac mcp`)")
    _needs_sdk(ctx)
    from brainiac.interfaces import mcp_http

    token_file = token_file.expanduser() if token_file is not None else None
    mcp_http.serve_http(
        resolve_vault(ctx.obj["vault"]),
        host,
        port,
        token_file,
        lambda line: click.echo(line, err=True),
    )
