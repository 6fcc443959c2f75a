"""The `hook` commands an agent calls (docs/hooks.md): the prompt's memory before each prompt, and
the session's transcript imported after a turn and when the session ends.

Not what the hooks do (hooks.py), nor the command that writes them into an agent's settings
(setup_commands.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from brainiac.core.errors import BrainiacError
from brainiac.interfaces.cli.answering import ask_daemon, emit
from brainiac.interfaces.cli.conventions import EXIT_HOOK_FAILED
from brainiac.interfaces.cli.group import Group
from brainiac.interfaces.cli.opening import note_words_only, open_memory

if TYPE_CHECKING:
    from brainiac.api.memory import Memory


@click.group(cls=Group)
def hook() -> None:
    """Agent hooks: read the agent's event JSON on stdin (docs/hooks.md).

    A failure is one line on stderr and exit status 1, never 2: Claude Code takes status 2 from
    a UserPromptSubmit hook as "block this prompt".
    """


def _remote(ctx: click.Context, event: str, budget: int | None = None) -> None:
    """With BRAINIAC_URL set, the hook is the remote server's (remote_hook.py); exits."""
    if not os.environ.get("BRAINIAC_URL", "").strip():
        return
    from brainiac.interfaces import remote_hook

    url = remote_hook.configured()
    if url is not None:
        ctx.exit(remote_hook.run(url, event, sys.stdin.read(), budget))


def _run_hook(ctx: click.Context, event: str, act: Any, stdin: str | None = None) -> None:
    from brainiac.api import hooks as hooks_mod

    try:
        payload = hooks_mod.Payload.parse(sys.stdin.read() if stdin is None else stdin, event)
        act(open_memory(ctx), payload)
    except BrainiacError as exc:
        if ctx.find_root().params.get("debug"):
            raise
        click.echo(f"brainiac: {exc}", err=True)
        ctx.exit(EXIT_HOOK_FAILED)


@hook.command("user-prompt-submit")
@click.option("--budget", type=int, default=None, help="Token budget (default: [context] budget).")
@click.pass_context
def hook_user_prompt_submit(ctx: click.Context, budget: int | None) -> None:
    """Print the memory relevant to the prompt; Claude Code adds it to the prompt's context."""
    _remote(ctx, "user-prompt-submit", budget)
    from brainiac.api.socket_requests import PromptHookRequest

    stdin = sys.stdin.read()
    output = ask_daemon(ctx, PromptHookRequest(stdin, budget))
    if output is not None:
        emit(ctx, output)
        return
    from brainiac.api import hooks as hooks_mod

    def act(memory: Memory, payload: Any) -> None:
        click.echo(hooks_mod.prompt_context(memory, payload, budget), nl=False)
        note_words_only(memory)  # stderr: Claude Code adds only the hook's stdout to the prompt

    _run_hook(ctx, "user-prompt-submit", act, stdin)


@hook.command("stop")
@click.pass_context
def hook_stop(ctx: click.Context) -> None:
    """Import the session's transcript (only new messages; safe after every turn)."""
    _remote(ctx, "stop")
    _import_from_hook(ctx, "stop")


@hook.command("session-end")
@click.pass_context
def hook_session_end(ctx: click.Context) -> None:
    """Import the session's transcript when the session ends."""
    _remote(ctx, "session-end")
    _import_from_hook(ctx, "session-end")


def _import_from_hook(ctx: click.Context, event: str) -> None:
    from brainiac.api import hooks as hooks_mod

    damaged: list[str] = []

    def act(memory: Memory, payload: Any) -> None:
        report = hooks_mod.import_transcript(memory, payload)
        click.echo(f"brainiac: {report.new} new message(s) from {Path(report.path).name}", err=True)
        damaged.extend(hooks_mod.damage_messages(report))

    _run_hook(ctx, event, act)
    for line in damaged:
        click.echo(f"brainiac: {line}", err=True)
    if damaged:
        ctx.exit(EXIT_HOOK_FAILED)  # so that Claude Code shows it to the person, this once
