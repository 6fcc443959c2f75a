"""How a job changes a vault file: read, transform, compare-and-swap, and on a concurrent save
read again and re-apply to the person's version (their edit always wins, ours is redone on top).

A transform is a pure function of the file's current text (None for a missing file) that returns
the new text, or None for "no change". In a dry run nothing is written and the plan is reported.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field

from brainiac.core.errors import NoteParseError, StaleWriteError, TooLargeError
from brainiac.store.vault import Vault

_ATTEMPTS = 4

Transform = Callable[[str | None], str | None]


# What a job run changed, file by file: the text before its first write and after its last (None:
# the file did not exist, or no longer does), for `brainiac jobs log --diff`. A context variable
# rather than a parameter, so that every job's helpers record without passing it along; each
# thread (the daemon's writer loop, its job thread) has its own, and it is unset outside a run.
class Recording(dict[str, tuple[str | None, str | None]]):
    """{path: (text before, text after)} of one run, holding at most RECORD_BYTES of text: a
    run over thousands of notes lists the rest in `dropped` (their diffs are not kept)."""

    RECORD_BYTES = 20_000_000

    def __init__(self) -> None:
        super().__init__()
        self.size = 0
        self.dropped: list[str] = []


_recording: ContextVar[Recording | None] = ContextVar("brainiac_edits_recording", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Recording]:
    """Record the vault writes made inside the block: {path: (text before, text after)}."""
    texts = Recording()
    token = _recording.set(texts)
    try:
        yield texts
    finally:
        _recording.reset(token)


def record(rel: str, before: str | None, after: str | None) -> None:
    """Note a change a job made to `rel` (a no-op outside `recording`)."""
    texts = _recording.get()
    if texts is None or rel in texts.dropped:
        return
    first = texts.get(rel)
    old = first[0] if first is not None else before
    size = len(old or "") + len(after or "")
    grown = size - (len(first[0] or "") + len(first[1] or "") if first is not None else 0)
    if texts.size + grown > Recording.RECORD_BYTES:
        texts.pop(rel, None)
        texts.dropped.append(rel)
        return
    texts.size += grown
    texts[rel] = (old, after)


@dataclass
class Outcome:
    """What a job did to the vault, for its report."""

    changed: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # "path: why" for files left alone

    def note(self, rel: str) -> None:
        if rel not in self.changed:
            self.changed.append(rel)


def update(vault: Vault, rel: str, transform: Transform, outcome: Outcome, dry_run: bool) -> bool:
    """Apply `transform` to `rel`; True if the file changed (or would, in a dry run)."""
    for _attempt in range(_ATTEMPTS):
        try:
            current = vault.read(rel)
            text, expected = current.text, current.fingerprint
        except FileNotFoundError:
            text, expected = None, None
        except NoteParseError as exc:
            outcome.skipped.append(f"{rel}: {exc.problem}")
            return False
        new = transform(text)
        if new is None or new == text:
            return False
        if dry_run:
            outcome.note(rel)
            return True
        try:
            vault.write(rel, new, expected)
        except StaleWriteError:
            continue  # a person saved meanwhile: re-read and re-apply on top of their version
        except TooLargeError as exc:
            outcome.skipped.append(f"{rel}: {exc.problem}")
            return False
        record(rel, text, new)
        outcome.note(rel)
        return True
    outcome.skipped.append(f"{rel}: kept changing while the job worked on it; try again later")
    return False
