"""The `brainiac` command: the root group, its global options (--vault, --debug, --version), the
commands it holds, and `main`, the whole CLI in one call. The only package that prints for the
user (click.echo).

Errors: any BrainiacError becomes one line on stderr and exit status 2; `--debug` shows the
traceback instead (group.py). Data goes to stdout (as JSON with `--json`), messages and warnings
to stderr. The commands live in one module per group of them: memory_commands (remember, search,
context, check, reindex, feedback), daemon_commands (status, run, service), job_commands (jobs),
hook_commands (hook), exchange_commands (import, forget, backup, restore), setup_commands (init,
setup, mcp); `completion` is here, since its script is the whole group's.

Every call imports these modules: each command loads the modules it uses when it first uses them
(lazy.py), so `--version` or a hook does not pay for the checker, the jobs or systemd.
"""

from __future__ import annotations

import logging
import os
import sys

import click

from brainiac import __version__
from brainiac.interfaces.cli import (
    daemon_commands,
    exchange_commands,
    hook_commands,
    job_commands,
    memory_commands,
    setup_commands,
)
from brainiac.interfaces.cli.group import Group, exit_now, may_exit_now


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--vault",
    "vault",
    metavar="PATH",
    default=None,
    help="The vault folder (default: $BRAINIAC_VAULT, then `vault` in "
    "~/.config/brainiac/config.toml, then ~/brainiac).",
)
@click.option("--debug", is_flag=True, help="Show tracebacks and debug logging.")
@click.version_option(__version__, prog_name="brainiac")
@click.pass_context
def cli(ctx: click.Context, vault: str | None, debug: bool) -> None:
    """An AI agent's memory as a Markdown vault you can read and edit.

    brainiac keeps the memory in Markdown files, indexes them, and assembles the context an
    LLM reads: Core Identity, Short-Term Memory, Relevant Long-Term Memory, User Prompt.
    """
    logging.basicConfig(
        level=logging.DEBUG if debug else logging.WARNING,
        format="brainiac: %(levelname)s: %(message)s",
        stream=sys.stderr,
    )
    ctx.ensure_object(dict)
    ctx.obj["vault"] = vault


# The commands, each group of them in its own module (`brainiac --help` lists them by name).
for command in (
    *(memory_commands.remember, memory_commands.search, memory_commands.context),
    *(memory_commands.check, memory_commands.reindex, memory_commands.feedback),
    *(daemon_commands.status, daemon_commands.run, daemon_commands.service),
    job_commands.jobs,
    hook_commands.hook,
    *(exchange_commands.import_, exchange_commands.forget),
    *(exchange_commands.backup, exchange_commands.restore),
    *(setup_commands.init, setup_commands.setup, setup_commands.mcp, setup_commands.serve),
):
    cli.add_command(command)


@cli.command()
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]))
def completion(shell: str) -> None:
    """Print the shell completion script for SHELL.

    bash: `eval "$(brainiac completion bash)"` in ~/.bashrc; zsh: the same with zsh in ~/.zshrc;
    fish: `brainiac completion fish > ~/.config/fish/completions/brainiac.fish`.
    """
    from click.shell_completion import get_completion_class

    completer = get_completion_class(shell)
    assert completer is not None  # the choice above lists only shells click supports
    click.echo(completer(cli, {}, "brainiac", "_BRAINIAC_COMPLETE").source())


def main(daemon_asked: bool = False) -> None:
    """The whole CLI (entry.main calls it for what the daemon did not answer; `daemon_asked`:
    the daemon was asked already, and is not asked again)."""
    # What brainiac creates (the index and state hold the memory's text too) is the user's alone;
    # files that exist keep their modes (safe_io copies a replaced file's mode).
    os.umask(0o077)
    try:
        cli.main(prog_name="brainiac", obj={"daemon_asked": daemon_asked})
    except SystemExit as exc:
        code = exc.code if exc.code is not None else 0
        if isinstance(code, int) and may_exit_now():
            exit_now(code)
        raise
