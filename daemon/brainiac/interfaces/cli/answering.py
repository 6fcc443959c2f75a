"""A command's answer made by the running daemon: asked over its socket from the CLI's process,
or made in the daemon's, which parses a client's command line with the real commands.

In the CLI's process, `ask_daemon` sends a command's parsed arguments to the daemon's socket and
returns its answer (None: answer here). In the daemon's, `answer_client` runs the `brainiac`
group on the client's command line with a `_Client` in the root context's object: the command
runs up to where it would ask, and `ask_daemon` hands its arguments to the daemon's Memory
instead (answers.py makes the output, the same functions the CLI's process uses). Anything the
CLI's own process must do raises answers.RunHere. `read_stdin` and `emit` read a command's
standard input (the client's, in the daemon) and write an answer's parts.

Not the commands (the `*_commands` modules), nor the socket (daemon_socket.py, socket_server.py).
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

from brainiac.core.errors import BrainiacError
from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.conventions import resolve_vault

if TYPE_CHECKING:
    from brainiac.api import answers
    from brainiac.api.answers import Output
else:
    answers = lazy_module("brainiac.api.answers")

# The commands the daemon runs for a client, as paths of names: one of these parses its
# arguments and asks (ask_daemon), and the daemon's Memory answers there and then.
ASKABLE = {("context",), ("search",), ("check",), ("hook",), ("hook", "user-prompt-submit")}
# Options that act while they are parsed (help and version print; --prompt-file opens a file
# named relative to the client's folder): a command line with one is the CLI's own.
_ACTING_OPTIONS = ("-h", "--help", "--version", "--prompt-file")


class _Answered(Exception):
    def __init__(self, output: Output) -> None:
        super().__init__("answered")
        self.output = output


@dataclasses.dataclass(frozen=True)
class _Client:
    stdin: str | None  # what the client read from its standard input (None: not yet)
    answer: Callable[[str, dict[str, Any]], Output]  # (command, args) -> the output


def client_of(ctx: click.Context) -> _Client | None:
    obj = ctx.find_root().obj
    client = obj.get("client") if isinstance(obj, dict) else None
    return client if isinstance(client, _Client) else None


def answer_client(
    cli: click.Command,
    argv: list[str],
    stdin: str | None,
    answer: Callable[[str, dict[str, Any]], Output],
) -> Output:
    """What `brainiac ARGV` prints, made in the daemon: the arguments parsed by the real
    commands (`cli`, the `brainiac` group: `run` hands it to the daemon), the output made by
    `answer(command, args)`, which is what `ask_daemon` would have sent over the socket. RunHere
    for anything the CLI's own process must do (a usage error, --help, another command,
    --write); NeedsStdin when the command reads standard input and `stdin` is None (both
    answers.py's)."""
    acting = [a for a in argv if a.split("=", 1)[0] in _ACTING_OPTIONS]
    if acting:
        raise answers.RunHere(f"{acting[0]} is the CLI's own")
    try:
        cli.main(
            args=list(argv),
            prog_name="brainiac",
            standalone_mode=False,
            obj={"client": _Client(stdin, answer)},
        )
    except _Answered as done:
        return done.output
    except (click.ClickException, click.Abort, BrainiacError) as exc:
        raise answers.RunHere(f"{type(exc).__name__}: {exc}") from exc
    raise answers.RunHere("the command did not ask the daemon")


def ask_daemon(ctx: click.Context, command: str, args: dict[str, Any]) -> Output | None:
    """The running daemon's answer over its socket, or None: answer in this process.

    Imports next to nothing (daemon_socket.py), so an answered command never loads the index,
    the parser or the rest. In the daemon (answer_client) the answer is made there and then."""
    client = client_of(ctx)
    if client is not None:
        raise _Answered(client.answer(command, args))
    if ctx.obj.get("daemon_asked"):  # the entry point asked already (entry.py)
        return None
    from brainiac.api.answers import Output
    from brainiac.runtime import daemon_socket
    from brainiac.store.locations import Locations

    try:
        runtime = Locations.for_vault(resolve_vault(ctx.obj["vault"])).runtime
    except (BrainiacError, OSError, RuntimeError):  # said where the command says it (a hook: 1)
        return None
    reply = daemon_socket.ask(str(runtime), command, args)
    if "fallback" in reply:
        logging.getLogger(__name__).debug("%s: in this process: %s", command, reply["fallback"])
        return None
    try:
        output = Output.from_json(reply)
    except (KeyError, TypeError, ValueError):  # not what this version sends: answer here
        logging.getLogger(__name__).debug("%s: in this process: a garbled answer", command)
        return None
    logging.getLogger(__name__).debug("%s: answered by the daemon over its socket", command)
    return output


def read_stdin(ctx: click.Context) -> str:
    client = client_of(ctx)
    if client is None:
        return sys.stdin.read()
    if client.stdin is None:
        raise answers.NeedsStdin
    return client.stdin


def emit(ctx: click.Context, output: Output) -> None:
    for to_stderr, text in output.parts:
        click.echo(text, nl=False, err=to_stderr)
    if output.exit:
        ctx.exit(output.exit)
