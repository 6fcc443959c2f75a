"""What `brainiac forget` is asked to take (`Selection`), and the report of what went
(`ForgetReport`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from brainiac.core.errors import VaultError
from brainiac.exchange.forget.kinds import is_note
from brainiac.formats import events as ev

_SHOWN = 110  # characters of a removed line shown in the listing


_MIN_MATCH = 3  # a shorter --matching text would match nearly every line


def fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"


@dataclass(frozen=True)
class Selection:
    """What `brainiac forget` removes; several kinds may be combined, except `everything`."""

    notes: tuple[str, ...] = ()  # a path or a title (or alias) of a note
    facts: tuple[str, ...] = ()  # fact keys
    entity: str | None = None  # with facts: only in this note
    events: tuple[str, ...] = ()  # an id (e-3f2a1c9b0d), or a text the event contains
    matching: tuple[str, ...] = ()  # every line, event, fact and export containing it
    everything: bool = False  # memory/, context/, inbox/: the vault starts from the template
    identity: bool = False  # with everything: system/core_identity.md too
    projects: tuple[str, ...] = ()  # every event of these projects (docs/projects.md)

    def check(self) -> None:
        chosen = self.notes or self.facts or self.events or self.matching or self.projects
        if self.everything and chosen:
            raise VaultError("--everything forgets everything; give it without other selections")
        if not self.everything and not chosen:
            raise VaultError(
                "say what to forget: --note, --fact, --event, --matching, --project or --everything"
            )
        for name in self.projects:
            if ev.clean_project(name) != name.strip() or not name.strip():
                raise VaultError(
                    f"--project {name!r} is no project name (event lines hold names without "
                    "spaces, brackets, parentheses, stars or commas); `brainiac status` lists them"
                )
        if self.identity and not self.everything:
            raise VaultError("--identity goes with --everything (the identity is never a match)")
        if self.entity is not None and not self.facts:
            raise VaultError("--entity says where a --fact is forgotten; give a --fact too")
        for text in (*self.notes, *self.facts, *self.events, *self.matching):
            if not fold(text):
                raise VaultError("an empty selection would match everything; give a text")
        for text in self.matching:
            if len(fold(text)) < _MIN_MATCH:
                raise VaultError(
                    f"--matching {text!r} is too short (it would match nearly every line); "
                    f"give at least {_MIN_MATCH} characters"
                )

    def as_args(self) -> dict[str, Any]:
        """The selection as a request to the daemon (daemon_requests.py; service.py reads it)."""
        return {
            "notes": list(self.notes),
            "facts": list(self.facts),
            "entity": self.entity,
            "events": list(self.events),
            "matching": list(self.matching),
            "projects": list(self.projects),
        }

    @classmethod
    def from_args(cls, args: dict[str, object]) -> Selection:
        """The selection a request to the daemon carries (`as_args`); VaultError when a part of
        it is not what `as_args` writes."""

        def strings(key: str) -> tuple[str, ...]:
            value = args.get(key) or ()
            if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
                raise VaultError(f"forget request: {key} must be a list of texts")
            return tuple(value)

        entity = args.get("entity")
        return cls(
            strings("notes"),
            strings("facts"),
            entity if isinstance(entity, str) else None,
            strings("events"),
            strings("matching"),
            projects=strings("projects"),
        )

    def describe(self) -> str:
        if self.everything:
            return "--everything" + (" --identity" if self.identity else "")
        parts = [f"--note {n!r}" for n in self.notes]
        parts += [f"--fact {k!r}" for k in self.facts]
        parts += [f"--entity {self.entity!r}"] if self.entity else []
        parts += [f"--event {e!r}" for e in self.events]
        parts += [f"--matching {m!r}" for m in self.matching]
        parts += [f"--project {p!r}" for p in self.projects]
        return " ".join(parts)


@dataclass(frozen=True)
class Removal:
    """One thing taken out of a file: an event, a fact, a line, or the whole file (line 0)."""

    what: str  # event, fact, history, ledger, generated, line, heading, comment, note, file, export
    line: int  # 1-based, in the file as it was read
    text: str


@dataclass
class FileChange:
    path: str  # in the vault
    action: str  # edit, delete, placeholder, reset (to the template), regenerate
    removed: list[Removal] = field(default_factory=list)


@dataclass
class SnapshotChange:
    path: str
    action: str  # rewrite or delete (planned); rewritten or deleted (done)
    changed: list[str] = field(default_factory=list)  # files rewritten inside it
    dropped: list[str] = field(default_factory=list)  # files left out of it
    removed: int = 0  # events, facts and lines taken out of the files rewritten
    reason: str = ""


@dataclass
class ForgetReport:
    """What `forget` would remove (a listing, `done` False) or removed (`done` True)."""

    selection: str
    dry_run: bool
    done: bool = False
    confirmed: bool | None = None  # None: nobody was asked
    files: list[FileChange] = field(default_factory=list)
    events: list[str] = field(default_factory=list)  # ids of the events forgotten
    journal: int = 0  # events taken out of the event journal
    snapshots: list[SnapshotChange] = field(default_factory=list)
    state: list[str] = field(default_factory=list)  # bookkeeping outside the vault scrubbed
    index: str = ""
    left: list[str] = field(default_factory=list)  # matches not changed, and why
    skipped: list[str] = field(default_factory=list)  # what could not be done; run it again

    @property
    def empty(self) -> bool:
        return not (self.files or self.journal or self.snapshots or self.events)

    def counts(self) -> dict[str, int]:
        removed = [r for f in self.files for r in f.removed]
        return {
            "events": len(self.events),
            "facts": sum(1 for r in removed if r.what in ("fact", "history")),
            "lines": sum(
                1 for r in removed if r.line and r.what not in ("event", "fact", "history")
            ),
            "notes": sum(1 for f in self.files if f.action == "delete" and is_note(f.path)),
            "files": sum(
                1
                for f in self.files
                if f.action in ("reset", "placeholder")
                or (f.action == "delete" and not is_note(f.path))
            ),
            "exports": sum(1 for f in self.files if f.action == "placeholder"),
            "snapshots": len(self.snapshots),
        }

    def as_json(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "counts": self.counts()}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ForgetReport:
        """The report `as_json` gave (the daemon's answer to a forget asked of it)."""
        plain = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        plain["files"] = [
            FileChange(f["path"], f["action"], [Removal(**r) for r in f.get("removed", [])])
            for f in data.get("files", [])
        ]
        plain["snapshots"] = [SnapshotChange(**s) for s in data.get("snapshots", [])]
        return cls(**plain)
