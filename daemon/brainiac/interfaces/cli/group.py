"""The click group every `brainiac` group is (the root, `hook`, `jobs`, `service`): a
BrainiacError becomes one line on stderr and exit status 2 (`--debug` shows the traceback
instead), and the process of a short command ends with os._exit once its output is flushed
(root.main asks `may_exit_now`).

Not the commands, nor the `brainiac` group's options (root.py).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

import click

from brainiac.core.errors import BrainiacError
from brainiac.interfaces.cli.conventions import EXIT_ERROR

# Commands after which the process ends with os._exit once stdout and stderr are flushed (see
# root.main): they write only through safe_io (written, fsynced and closed before they return) and
# start no thread or child. The interpreter's teardown, which frees every object of every module
# loaded (the index's too), would be a real share of a hook call on a large vault.
_FAST_EXIT = {
    ("context",),
    ("search",),
    ("check",),
    ("status",),
    ("hook", "user-prompt-submit"),
}
_entered: list[str] = []  # the groups whose command started, outermost first
_finished: list[str] = []  # the commands that returned, innermost first


class Group(click.Group):
    group_class = type  # subgroups (hook, jobs, service) are Groups too

    def invoke(self, ctx: click.Context) -> Any:
        _entered.append(self.name or "")
        try:
            result = super().invoke(ctx)
            _finished.append(ctx.invoked_subcommand or "")
            return result
        except BrainiacError as exc:
            if ctx.find_root().params.get("debug"):
                raise
            click.echo(f"brainiac: {exc}", err=True)
            ctx.exit(EXIT_ERROR)


def may_exit_now() -> bool:
    """Whether the command that ran is one of _FAST_EXIT and finished, or none ran at all
    (--version, --help, a usage error), and no other thread is running."""
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False
    if not _entered:
        return True
    return len(_finished) == len(_entered) and tuple(reversed(_finished)) in _FAST_EXIT


def exit_now(code: int) -> None:
    try:
        logging.shutdown()
        sys.stdout.flush()
        sys.stderr.flush()
    except (OSError, ValueError):
        return  # a closed or broken pipe: the normal exit reports it as it always did
    os._exit(code)
