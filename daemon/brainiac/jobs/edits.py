"""How a job changes a vault file: read, transform, compare-and-swap, and on a concurrent save
read again and re-apply to the person's version (their edit always wins, ours is redone on top).

A transform is a pure function of the file's current text (None for a missing file) that returns
the new text, or None for "no change". In a dry run nothing is written and the plan is reported.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from brainiac.errors import NoteParseError, StaleWriteError, TooLargeError
from brainiac.vault import Vault

_ATTEMPTS = 4

Transform = Callable[[str | None], str | None]


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
        outcome.note(rel)
        return True
    outcome.skipped.append(f"{rel}: kept changing while the job worked on it; try again later")
    return False
