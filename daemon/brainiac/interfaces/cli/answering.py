"""A command's answer made by the running daemon, asked from the CLI's own process.

`search`, `context`, `check` and `hook user-prompt-submit` build the typed request of what they
parsed (api/socket_requests.py) and `ask_daemon` sends it to the daemon's socket, returning its
answer (None: answer here, with the same functions of answers.py the daemon calls). The entry
point asks first, before click loads (entry.py); the commands ask only when it did not (with
--debug, or the CLI called in-process). `emit` writes an answer's parts.

Not the commands (the `*_commands` modules), nor the socket (daemon_socket.py, socket_server.py).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import click

from brainiac.core.errors import BrainiacError
from brainiac.interfaces.cli.conventions import resolve_vault

if TYPE_CHECKING:
    from brainiac.api.answers import Output
    from brainiac.api.socket_requests import Request


def ask_daemon(ctx: click.Context, request: Request) -> Output | None:
    """The running daemon's answer to `request` over its socket, or None: answer in this process.

    Imports next to nothing (daemon_socket.py), so an answered command never loads the index,
    the parser or the rest."""
    if ctx.obj.get("daemon_asked"):  # the entry point asked already (entry.py)
        return None
    from brainiac.api.answers import Output
    from brainiac.api.socket_requests import as_json
    from brainiac.runtime import daemon_socket
    from brainiac.store.locations import Locations

    log = logging.getLogger(__name__)
    try:
        runtime = Locations.for_vault(resolve_vault(ctx.obj["vault"])).runtime
    except (BrainiacError, OSError, RuntimeError):  # said where the command says it (a hook: 1)
        return None
    reply = daemon_socket.ask(str(runtime), as_json(request))
    if "fallback" in reply:
        log.debug("%s: in this process: %s", request.OP, reply["fallback"])
        return None
    try:
        output = Output.from_json(reply)
    except (KeyError, TypeError, ValueError):  # not what this version sends: answer here
        log.debug("%s: in this process: a garbled answer", request.OP)
        return None
    log.debug("%s: answered by the daemon over its socket", request.OP)
    return output


def emit(ctx: click.Context, output: Output) -> None:
    for to_stderr, text in output.parts:
        click.echo(text, nl=False, err=to_stderr)
    if output.exit:
        ctx.exit(output.exit)
