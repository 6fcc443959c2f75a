"""How a command opens the vault's Memory: closed when the command ends, with a progress bar on a
terminal for long work (a first index, a reindex, an import).

Not where the vault is (conventions.resolve_vault), nor the Memory itself (memory.py, loaded on
first use: `--version` and an answered call never import it).
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import click

from brainiac.core.lazy import lazy_module
from brainiac.interfaces.cli.conventions import resolve_vault

if TYPE_CHECKING:
    from brainiac.api import memory as memory_mod
    from brainiac.api.memory import Memory
else:
    memory_mod = lazy_module("brainiac.api.memory")


def open_memory(ctx: click.Context) -> Memory:
    # Words only: recall by meaning needs the sentence model loaded and every event's vector
    # known, which is the daemon's (or a long-lived program's) work, not a one-shot command's:
    # at 10,000 notes reading the events' texts to match the saved vectors, numpy and the model
    # would triple the CPU of a call (docs/architecture.md, "recall by meaning").
    memory = memory_mod.Memory(resolve_vault(ctx.obj["vault"]), meaning=False)
    ctx.call_on_close(memory.close)
    if sys.stdout.isatty() and sys.stderr.isatty():
        # Long work (a first index, a reindex, an import) shows a bar on the terminal; piped or
        # scripted output stays clean.
        bar = _ProgressBar()
        memory.on_progress = bar.update
        ctx.call_on_close(bar.close)
    return memory


# Beside a running daemon, what the CLI's process answers may differ from what the daemon would
# have: the daemon ranks by meaning as well, this process by words only (see open_memory).
WORDS_ONLY_NOTE = (
    "brainiac: answered in this process, by words only: the running daemon did not answer this "
    "call, and its answers use recall by meaning too (docs/service.md); `--debug` says why"
)


def note_words_only(memory: Memory) -> None:
    """Say on stderr that a context was assembled here by words only while a daemon that
    recalls by meaning as well holds the vault, so that its answer is not taken for the
    daemon's. Without a daemon there is no other answer to tell it from."""
    if memory.config.meaning and not memory.index_writes:
        click.echo(WORDS_ONLY_NOTE, err=True)


class _ProgressBar:
    """A bar on stderr for work of known size, shown only when it is long enough to wait for."""

    MIN_ITEMS = 200

    def __init__(self) -> None:
        self._bar: Any = None
        self._label = ""
        self._done = 0

    def update(self, label: str, done: int, total: int) -> None:
        if total < self.MIN_ITEMS:
            return
        if self._bar is None or label != self._label:
            self.close()
            self._bar = click.progressbar(length=total, label=label, file=sys.stderr)
            self._bar.__enter__()
            self._label, self._done = label, 0
        self._bar.update(done - self._done)
        self._done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self._bar = None
