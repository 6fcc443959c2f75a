"""Every error brainiac raises on purpose.

    BrainiacError                 anything the CLI reports as one line and a non-zero exit
    ├── ConfigError               a setting is missing, unreadable or out of range
    ├── VaultError                the vault path is missing, not a vault, or a path escapes it
    │   └── StaleWriteError       a file changed between our read and our write; nothing written
    ├── NoteParseError            a note cannot be read (bad YAML, not UTF-8, too big, binary)
    ├── BudgetError               a token budget that cannot mean anything (zero, negative, absurd)
    ├── ImportFormatError         a chat export is not a known format or is malformed; nothing read
    └── SearchError               the index cannot answer (after a rebuild attempt failed)

Messages name the file, the problem and the fix, in that order, so that a person reading one line
in a terminal or the journal knows what to do.
"""

from __future__ import annotations


class BrainiacError(Exception):
    """Base of every error the user should see as a single line."""


class ConfigError(BrainiacError):
    """A configuration value is missing, malformed or out of range."""


class VaultError(BrainiacError):
    """The vault cannot be used as asked (missing, not a directory, path outside it)."""


class StaleWriteError(VaultError):
    """The file changed since it was read; the write was abandoned and the file left as it is."""


class NoteParseError(BrainiacError):
    """A note could not be parsed; it is skipped and left untouched."""

    def __init__(self, path: str, problem: str, line: int | None = None) -> None:
        self.path = path
        self.problem = problem
        self.line = line
        where = f"{path}, line {line}" if line is not None else path
        super().__init__(f"{where}: {problem}")


class BudgetError(BrainiacError):
    """A token budget that cannot be honoured as given."""


class ImportFormatError(BrainiacError):
    """A chat export cannot be read: not a format brainiac knows, or malformed. The whole file is
    rejected; nothing of it was read."""

    def __init__(self, path: str, where: str | None, problem: str, expected: str) -> None:
        self.path = path
        self.where = where
        self.problem = problem
        self.expected = expected
        place = f"{path}, {where}" if where is not None else path
        super().__init__(f"{place}: {problem}; expected {expected}")


class SearchError(BrainiacError):
    """The index could not answer a query."""
