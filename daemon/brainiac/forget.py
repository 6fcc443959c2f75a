"""`brainiac forget`: the one operation that deletes (seed 004: the user can clear the memory).

A `Selection` says what goes: notes (the file and the events in it), facts (the fact lines with
their history, and the events that state them, or the jobs would learn them again), events (by
id, or every event whose text contains a text), every line that contains a text, or everything.
What was derived from it goes too: an event's ledger lines, the facts it set, the goals and tasks
reflection took from it, the short-term summary and working memory (rewritten by the next
reflection), a note left with nothing but generated lines, generated links to a note that went,
a kept chat export that holds it (replaced by a placeholder, so a re-import keeps no new copy),
the event journal (so promotion does not put it back), the job log's summaries, the search index
(rebuilt) and every backup snapshot (rewritten and verified, or deleted when that is impossible).
The import records keep the forgotten messages' keys, so importing the same export again does not
bring them back.

One set of pure rules (`Rules`, `scrub`) lists what would go and then removes it. Every vault
write is a compare-and-swap that re-applies the removal to a version a person saved meanwhile, so
their edit is kept; a file to be deleted whole that changed since the listing is left alone and
reported. It runs under the job lock, after finishing an interrupted promotion or import (their
plans hold event text). Beside a running daemon, which owns the index, the listing is made here
and the removal is asked of the daemon (daemon_requests.py), which carries it out the same way.
See docs/forget.md.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from brainiac import backup, clock, daemon_requests, extract, facts, journal, ltm, marks, safe_io
from brainiac import events as ev
from brainiac import jobs as jobs_mod
from brainiac import note as notes
from brainiac import working_memory as wm
from brainiac.errors import ImportFormatError, NoteParseError, StaleWriteError, VaultError
from brainiac.fences import Fences
from brainiac.importer import FORGOTTEN_HEAD
from brainiac.jobs import consolidate
from brainiac.jobs.edits import Outcome, update
from brainiac.jobs.reflection import SELF_ROLE
from brainiac.lock import holder_of
from brainiac.names import link_target, normalise
from brainiac.vault import (
    ARCHIVE_DIR,
    ATTACHMENTS_DIR,
    EXPORTS_DIR,
    IDENTITY,
    INBOX_DIR,
    INDEXES_DIR,
    LONG_TERM_DIR,
    SHORT_TERM,
    WORKING_MEMORY,
    is_conflict_copy,
    template_dir,
)

if TYPE_CHECKING:
    from brainiac.memory_protocol import MemoryLike

_LOCK_WAIT_S = 60.0
_DAEMON_WAIT_S = 600.0  # a forget asked of the daemon: it rewrites every backup snapshot
_ROUNDS = 8  # what one removal uncovers (an emptied note, a derived goal) needs a few passes
_SHOWN = 110  # characters of a removed line shown in the listing
_MIN_MATCH = 3  # a shorter --matching text would match nearly every line
_MIN_DERIVED = 8  # a goal or task shorter than this is not traced back to its event
_ID_RE = re.compile(rf"^\^?({ev.ID})$")
_QUOTED_ID_RE = re.compile(rf"\^({ev.ID})\s*$")
_ID_TOKEN_RE = re.compile(rf"(?<![\w^-])({ev.ID})\b")
_SOURCE_TAIL_RE = re.compile(rf"\b({ev.ID})\)\s*$")
_LIST_PREFIX_RE = re.compile(r"^\s*- (?:\[.?\] )?")
# `2026-11 (2).md`: where a month's lines go on when `2026-11.md` is full (jobs/moving.py)
_MONTH_RE = re.compile(rf"{ARCHIVE_DIR}/\d{{4}}-\d{{2}}(?: \(\d+\))?\.md")
_COPY_RE = re.compile(r"context/working_memory\.edited-[^/]*\.md")
_ARCHIVED_NOTES = f"{ARCHIVE_DIR}/notes"
_STRUCTURAL = frozenset(
    {"short-term memory", "summary", "working memory", "goals", "facts", "tasks"}
    | {"event log", "sources", "related", "promoted"}
)
_DERIVED_SECTIONS = ("goals", "tasks", "working memory")
_EVENT_SECTION = {"stm": "event log", "month": "event log", "note": "sources"}


def _fold(text: str) -> str:
    return " ".join(text.split()).casefold()


def _short(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= _SHOWN else flat[: _SHOWN - 1] + "…"


# -- what to forget ------------------------------------------------------------------------------


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
            if not _fold(text):
                raise VaultError("an empty selection would match everything; give a text")
        for text in self.matching:
            if len(_fold(text)) < _MIN_MATCH:
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


# -- what goes, and what went --------------------------------------------------------------------


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
            "notes": sum(1 for f in self.files if f.action == "delete" and _is_note(f.path)),
            "files": sum(
                1
                for f in self.files
                if f.action in ("reset", "placeholder")
                or (f.action == "delete" and not _is_note(f.path))
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


# -- the rules -----------------------------------------------------------------------------------


@dataclass
class Rules:
    """What a scrub takes out. Grows while scrubbing: a removed event's id also takes its ledger
    lines and facts elsewhere, an emptied note takes the generated links to it."""

    ids: set[str] = field(default_factory=set)
    needles: list[str] = field(default_factory=list)  # --matching, folded: any line
    event_needles: list[str] = field(default_factory=list)  # --event TEXT, folded: events only
    fact_keys: set[str] = field(default_factory=set)
    fact_scope: str | None = None  # --entity's file name, lowercase
    entity_names: tuple[str, ...] = ()
    gone: set[str] = field(default_factory=set)  # link targets (file names) of notes that go
    gone_paths: set[str] = field(default_factory=set)  # vault paths of notes that go whole
    phrases: set[str] = field(default_factory=set)  # goals, tasks, questions of forgotten events
    texts: set[str] = field(default_factory=set)  # folded text that went (for derived copies)
    everything: bool = False
    identity: bool = False
    projects: frozenset[str] = frozenset()  # --project: every event that belongs to one

    def copy(self) -> Rules:
        return dataclasses.replace(
            self,
            ids=set(self.ids),
            fact_keys=set(self.fact_keys),
            gone=set(self.gone),
            gone_paths=set(self.gone_paths),
            phrases=set(self.phrases),
            texts=set(self.texts),
        )

    def any_needle(self, text: str) -> bool:
        if not self.needles:
            return False
        folded = _fold(text)
        return any(n in folded for n in self.needles)

    def any_phrase(self, text: str) -> bool:
        folded = _fold(text)
        return any(p in folded for p in self.phrases)

    def any_text(self, text: str) -> bool:
        folded = _fold(text)
        return any(n in folded for n in self.needles) or any(t in folded for t in self.texts)

    def names_id(self, line: str) -> bool:
        return any(i in self.ids for i in _ID_TOKEN_RE.findall(line))

    def links_gone(self, line: str) -> bool:
        if not self.gone or "[[" not in line:
            return False
        return any(link_target(t).casefold() in self.gone for t in notes.wikilinks(line))

    def derived(self, line: str) -> bool:
        """A generated goal or task line reflection took from a forgotten event."""
        text = _fold(_LIST_PREFIX_RE.sub("", marks.unmark(line)))
        if not text:
            return False
        return any(p in text or (len(text) >= _MIN_DERIVED and text in p) for p in self.phrases)

    def event_goes(
        self, event: ev.Event, block: str, names: Sequence[str], in_scope: bool, mention: bool
    ) -> bool:
        if event.id in self.ids or self.any_needle(block):
            return True
        if event.project is not None and event.project in self.projects:
            return True
        if self.event_needles and any(n in _fold(event.text) for n in self.event_needles):
            return True
        if self.fact_keys and self.states_fact(event, names, in_scope, mention):
            return True
        return event.role == SELF_ROLE and bool(self.phrases) and self.any_phrase(event.text)

    def states_fact(
        self, event: ev.Event, names: Sequence[str], in_scope: bool, mention: bool
    ) -> bool:
        """Whether the event states a forgotten fact (the jobs would learn it again)."""
        if not in_scope:
            return False
        if mention:
            said = f" {normalise(event.text)} "
            if not any(f" {n} " in said for n in self.entity_names):
                return False
        for f in extract.facts(event.text, event.at, event.id, event.role):
            if f.key in self.fact_keys or consolidate.key_in_note(f.key, names) in self.fact_keys:
                return True
            if self.fact_scope is None and any(f.key.endswith(" " + k) for k in self.fact_keys):
                return True  # "atlas deadline" becomes the Atlas note's "deadline"
        return False

    def size(self) -> tuple[int, ...]:
        return (len(self.ids), len(self.phrases), len(self.gone), len(self.texts))

    def absorb(self, events: Iterable[ev.Event], gone_notes: Iterable[tuple[str, str]]) -> None:
        """Take in what a pass removed: the next pass takes what follows from it."""
        for event in events:
            self.ids.add(event.id)
            for line in event.text.split("\n"):
                if len(_fold(line)) >= 12:
                    self.texts.add(_fold(line))
            if event.role == SELF_ROLE:
                continue  # its own records never start another round of derived lines
            for found in (extract.goals, extract.tasks, extract.questions):
                self.phrases.update(
                    _fold(p) for p in found(event.text) if len(_fold(p)) >= _MIN_DERIVED
                )
        for rel, title in gone_notes:
            self.gone.add(link_target(rel).casefold())
            if len(_fold(title)) >= 4:
                self.texts.add(_fold(title))

    def quick_miss(self, text: str) -> bool:
        """True when `text` certainly holds nothing these rules take (skips most files)."""
        if self.gone_paths or any(i in text for i in self.ids):
            return False
        if any(f"[{p}]" in text for p in self.projects):
            return False
        folded = _fold(text)
        if any(n in folded for n in (*self.needles, *self.event_needles)):
            return False
        if any(p in folded for p in self.phrases) or any(g in folded for g in self.gone):
            return False
        return not any(all(w in folded for w in k.split()) for k in self.fact_keys)


# -- scrubbing one file --------------------------------------------------------------------------


@dataclass
class Scrubbed:
    text: str | None  # the new text; None: the whole file goes
    removed: list[Removal] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)  # events taken out
    left: list[str] = field(default_factory=list)  # matches left in place, and why
    title: str = ""  # a note that goes whole: its title


def _is_note(rel: str) -> bool:
    return _kind(rel) in ("note", "own")


def _kind(rel: str) -> str:
    if rel == SHORT_TERM:
        return "stm"
    if rel == IDENTITY:
        return "identity"
    if rel == WORKING_MEMORY:
        return "working"
    if _COPY_RE.fullmatch(rel):
        return "copy"
    if rel.startswith(EXPORTS_DIR + "/"):
        return "export"
    if rel.startswith(ATTACHMENTS_DIR + "/"):
        return "attachment"
    if rel.startswith(INBOX_DIR + "/"):
        return "inbox"
    if rel.startswith(INDEXES_DIR + "/"):
        return "index"
    if rel.startswith("context/"):
        return "context"
    if rel.endswith(".md") and is_conflict_copy(rel):
        return "conflict"
    if _MONTH_RE.fullmatch(rel):
        return "month"
    if rel.startswith("memory/") and rel.endswith(".md"):
        return "note"
    if rel.endswith(".md") and not rel.startswith(("system/", ".")):
        return "own"
    return "other"


def scrub(rel: str, text: str, rules: Rules) -> Scrubbed:
    """`text` of vault file `rel` without what `rules` take (pure)."""
    kind = _kind(rel)
    if kind in ("stm", "month", "note"):
        if rel not in rules.gone_paths and rules.quick_miss(text):
            return Scrubbed(text)
        return _scrub_markdown(rel, text, rules, kind)
    if kind == "copy":
        kept = [line for line in notes.split_lines(text) if not rules.any_text(line)]
        gone = [
            Removal("line", i + 1, _short(line))
            for i, line in enumerate(notes.split_lines(text))
            if rules.any_text(line)
        ]
        return Scrubbed("".join(kept), gone) if gone else Scrubbed(text)
    if kind == "own" and rel in rules.gone_paths:
        return Scrubbed(None, [Removal("note", 0, "the note, as asked")], title=rel)
    out = Scrubbed(text)
    hit = _first_match(text, rules) if rules.needles else 0
    if hit:
        why = {
            "identity": "brainiac never edits the core identity: edit it by hand",
            "own": f"a note of your own outside memory/; edit it by hand, or add --note {rel!r}",
            "conflict": "a sync-conflict copy; delete it (brainiac never writes these)",
        }.get(kind)
        if why:
            out.left.append(f"{rel}, line {hit}: {why}")
    return out


def _first_match(text: str, rules: Rules) -> int:
    for i, line in enumerate(notes.split_lines(text), 1):
        if rules.any_needle(line):
            return i
    return 0


class _Cut:
    """Lines of a file marked for removal, each run with one Removal."""

    def __init__(self, lines: list[str]) -> None:
        self.lines = lines
        self.dropped: set[int] = set()
        self.removed: list[Removal] = []

    def has(self, i: int) -> bool:
        return i in self.dropped

    def drop(self, first: int, last: int, what: str, text: str | None = None) -> None:
        self.dropped.update(range(first, last + 1))
        shown = text if text is not None else "".join(self.lines[first : last + 1])
        self.removed.append(Removal(what, first + 1, _short(shown)))

    def text(self) -> str:
        return "".join(line for i, line in enumerate(self.lines) if i not in self.dropped)


def _owners(note: notes.Note) -> list[str]:
    """For each line, the (lowercase) title of the nearest heading above it."""
    owner = [""] * len(note.lines)
    heads = {s.heading_line: s.title.casefold() for s in note.sections}
    current = ""
    for i in range(len(owner)):
        current = heads.get(i, current)
        owner[i] = current
    return owner


def _comments(lines: list[str], start: int) -> list[tuple[int, int]]:
    """(first, last) line of each HTML comment outside code fences."""
    blocks: list[tuple[int, int]] = []
    fences = Fences()
    opened: int | None = None
    for i in range(start, len(lines)):
        line = lines[i]
        if opened is not None:
            if "-->" in line:
                blocks.append((opened, i))
                opened = None
            continue
        if fences.code(line):
            continue
        if "<!--" in line:
            if "-->" in line[line.index("<!--") :]:
                blocks.append((i, i))
            else:
                opened = i
    if opened is not None:
        blocks.append((opened, len(lines) - 1))
    return blocks


def _whole_note(rel: str, note: notes.Note, rules: Rules) -> str | None:
    if rel in rules.gone_paths:
        return "the note, as asked"
    if not rules.needles:
        return None
    if rules.any_needle(rel.rsplit("/", 1)[-1]):
        return "the whole note: its file name matches"
    if note.frontmatter_lines is not None:
        first, close = note.frontmatter_lines
        if rules.any_needle("".join(note.lines[first:close])):
            return "the whole note: its properties (title, aliases or tags) match"
    return None


def _scrub_markdown(rel: str, text: str, rules: Rules, kind: str) -> Scrubbed:
    try:
        note = notes.parse(text, rel)
    except NoteParseError:
        return _scrub_plain(text, rules)
    name = rel.rsplit("/", 1)[-1].casefold()
    if kind == "note":
        why = _whole_note(rel, note, rules)
        if why is not None:
            whole = ltm.LongTermNote(note)
            return Scrubbed(None, [Removal("note", 0, why)], whole.sources, title=whole.title)
    lines = note.lines
    cut = _Cut(lines)
    left: list[str] = []
    owner = _owners(note)
    comments = _comments(lines, note.body_line)
    commented = {i for a, b in comments for i in range(a, b + 1)}
    headings = {s.heading_line: s.title.casefold() for s in note.sections}
    if note.frontmatter_lines is not None and rules.needles:
        first, close = note.frontmatter_lines
        if rules.any_needle("".join(lines[first:close])):
            left.append(f"{rel}, line 2: its properties match; edit them by hand")
    for a, b in comments:
        if rules.any_needle("".join(lines[a : b + 1])):
            cut.drop(a, b, "comment")
    if kind == "note":
        names: Sequence[str] = consolidate.note_names(ltm.LongTermNote(note))
        in_scope, mention = rules.fact_scope in (None, name), False
    else:
        names, in_scope, mention = rules.entity_names, True, rules.fact_scope is not None
    removed: list[ev.Event] = []
    for s in note.sections:
        if s.title.casefold() != _EVENT_SECTION[kind]:
            continue
        for loc in ev.parse_lines(lines[s.heading_line + 1 : s.end_line], s.heading_line + 1):
            if loc.first_line in commented or cut.has(loc.first_line):
                continue
            block = "".join(lines[loc.first_line : loc.last_line + 1])
            if rules.event_goes(loc.event, block, names, in_scope, mention):
                shown = f"{loc.event.id}: {block.removeprefix('- ')}"
                cut.drop(loc.first_line, loc.last_line, "event", shown)
                removed.append(loc.event)
    for i in range(note.body_line, len(lines)):
        m = _QUOTED_ID_RE.search(lines[i].rstrip("\r\n"))
        if m and m.group(1) in rules.ids and not cut.has(i) and i not in commented:
            cut.drop(i, i, "event")  # an event line quoted outside the event sections
    facts_scoped = rules.fact_scope is None or (kind == "note" and rules.fact_scope == name)
    for s in note.sections:
        if s.title.casefold() != "facts":
            continue
        start = s.heading_line + 1
        for fl in facts.parse("".join(lines[start : s.end_line])):
            a, b = start + fl.first, start + fl.last
            if cut.has(a):
                continue
            if (
                (facts_scoped and fl.fact.key in rules.fact_keys)
                or fl.fact.source in rules.ids
                or rules.any_needle(lines[a])
            ):
                cut.drop(a, b, "fact")
                continue
            for j in range(a + 1, b + 1):
                tail = _SOURCE_TAIL_RE.search(lines[j])
                if (tail and tail.group(1) in rules.ids) or rules.any_needle(lines[j]):
                    cut.drop(j, j, "history")
    lost = bool(removed)
    for i in range(note.body_line, len(lines)):
        if cut.has(i) or i in commented:
            continue
        line, section = lines[i], owner[i]
        if marks.is_generated(line):
            if rules.any_needle(line) or rules.links_gone(line):
                cut.drop(i, i, "generated")
            elif kind == "stm" and section in ("summary", "working memory") and lost:
                cut.drop(i, i, "generated", "(the next reflection rewrites it) " + line)
            elif kind == "stm" and section in _DERIVED_SECTIONS and rules.derived(line):
                cut.drop(i, i, "generated")
            continue
        ledger = kind == "month" and section == "promoted" and i not in headings
        if ledger and (rules.names_id(line) or rules.links_gone(line)):
            cut.drop(i, i, "ledger")
            continue
        if not rules.any_needle(line) and rules.links_gone(line):
            left.append(f"{rel}, line {i + 1}: links to a note that goes (a person's line)")
        if rules.any_needle(line):
            if headings.get(i) in _STRUCTURAL:
                left.append(f"{rel}, line {i + 1}: a heading brainiac relies on; rename it by hand")
            else:
                cut.drop(i, i, "heading" if i in headings else "line")
    if not cut.dropped:
        return Scrubbed(text, left=left)
    new = cut.text()
    summary = note.section(ltm.SUMMARY)
    if kind == "note" and lost and summary is not None:
        new = consolidate.refresh_summary(new)  # its generated lines came from the sources
        for i in range(summary.heading_line + 1, summary.end_line):
            if marks.is_generated(lines[i]) and not cut.has(i) and lines[i] not in new:
                cut.drop(i, i, "generated", "(rewritten from what is left) " + lines[i])
    cut.removed.sort(key=lambda r: r.line)
    if kind == "note" and lost and not _holds_anything(new, rel):
        whole = ltm.LongTermNote(note)
        reason = "the whole note: nothing but generated lines was left in it"
        return Scrubbed(
            None, [*cut.removed, Removal("note", 0, reason)], removed, left, whole.title
        )
    if kind == "note" and rules.projects:
        new = _without_projects(new, rel, rules.projects, cut)
    return Scrubbed(new, cut.removed, removed, left)


def _without_projects(text: str, rel: str, gone: frozenset[str], cut: _Cut) -> str:
    """A note that stays, its `projects` property without the projects forgotten (what is left
    of them in it went with their events)."""
    try:
        listed = ltm.parse(text, rel).projects
    except NoteParseError:
        return text
    kept = [p for p in listed if p not in gone]
    if kept == listed:
        return text
    value = f"[{', '.join(consolidate.yaml_item(p) for p in kept)}]"
    line = next((i + 1 for i, x in enumerate(cut.lines) if x.startswith("projects:")), 1)
    gone_names = ", ".join(p for p in listed if p not in kept)
    cut.removed.append(Removal("property", line, f"projects: {gone_names}"))
    return notes.set_frontmatter_field(text, "projects", value)


def _holds_anything(text: str, rel: str) -> bool:
    """Whether a note still holds an event or a line a person wrote."""
    try:
        note = ltm.parse(text, rel)
    except NoteParseError:
        return True
    if note.sources:
        return True
    lines = note.note.lines
    commented = {i for a, b in _comments(lines, note.note.body_line) for i in range(a, b + 1)}
    for i in range(note.note.body_line, len(lines)):
        line = lines[i].strip()
        if not line or line.startswith("#") or i in commented or marks.is_generated(line):
            continue
        return True
    return False


def _scrub_plain(text: str, rules: Rules) -> Scrubbed:
    """A file that does not parse as a note: lines with a forgotten event id or a match go."""
    lines = notes.split_lines(text)
    cut = _Cut(lines)
    for i, line in enumerate(lines):
        m = _QUOTED_ID_RE.search(line.rstrip("\r\n"))
        if (m and m.group(1) in rules.ids) or rules.any_needle(line):
            cut.drop(i, i, "line")
    return Scrubbed(cut.text(), cut.removed) if cut.dropped else Scrubbed(text)


# -- scrubbing a whole tree (the vault, or a snapshot) -------------------------------------------


@dataclass
class _Result:
    rel: str
    action: str  # edit, delete, placeholder, reset
    new: bytes | None
    removed: list[Removal]
    old_sha: str


@dataclass
class _Tree:
    results: dict[str, _Result] = field(default_factory=dict)
    journal_ids: set[str] = field(default_factory=set)
    taken: set[str] = field(default_factory=set)  # ids of the events found and taken
    left: list[str] = field(default_factory=list)


class _Exports:
    """Which events a kept chat export holds (by the importer's message keys), and its text."""

    def __init__(self) -> None:
        self._seen: dict[str, tuple[set[str], str]] = {}

    def read(self, rel: str, data: bytes) -> tuple[set[str], str]:
        sha = safe_io.sha256_hex(data)
        if sha not in self._seen:
            from brainiac import chatlogs
            from brainiac.importer import id_for_key, message_key

            raw = data.decode("utf-8", errors="replace")
            try:
                chat = chatlogs.parse(Path(rel), None, data)
                ids = {id_for_key(message_key(m)) for m in chat.messages}
                said = "\n".join(f"{m.title or ''}\n{m.text}" for m in chat.messages)
            except ImportFormatError:
                ids, said = set(), ""
            self._seen[sha] = (ids, _fold(raw) + "\n" + _fold(said))
        return self._seen[sha]


def _placeholder(now: dt.datetime) -> bytes:
    said = (
        f"this chat export was removed on {now:%Y-%m-%d %H:%M} because it held something you "
        "asked brainiac to forget. The placeholder keeps its name, so importing the same "
        "export again keeps no new copy; the messages you forgot are not imported again either "
        "(docs/forget.md).\n"
    )
    return FORGOTTEN_HEAD + said.encode()


def _scrub_export(
    rel: str, data: bytes, rules: Rules, exports: _Exports, placeholder: bytes
) -> _Result | None:
    if data.startswith(FORGOTTEN_HEAD):
        return None
    kind = _kind(rel)
    ids, text = exports.read(rel, data)
    held = ids & rules.ids
    if held:
        why = f"holds {len(held)} forgotten message(s)"
    elif any(n in text for n in rules.needles):
        why = "holds a match"
    else:
        return None
    sha = safe_io.sha256_hex(data)
    if kind == "export":
        reason = f"the kept chat export {why}; replaced by a placeholder"
        return _Result(rel, "placeholder", placeholder, [Removal("export", 0, reason)], sha)
    reason = f"a chat export waiting to be imported {why}"
    return _Result(rel, "delete", None, [Removal("file", 0, reason)], sha)


def _scrub_attachment(rel: str, data: bytes, rules: Rules) -> _Result | None:
    """The whole text of an event too large for one (attachments.py) goes with its event; a match
    anywhere in it takes the event too, as a match in its line would."""
    event_id = rel.rsplit("/", 1)[-1].split(".", 1)[0]
    if event_id not in rules.ids and rules.any_needle(data.decode("utf-8", errors="replace")):
        rules.ids.add(event_id)
    if event_id not in rules.ids:
        return None
    why = Removal("file", 0, "the whole text of a forgotten event")
    return _Result(rel, "delete", None, [why], safe_io.sha256_hex(data))


def _scrub_tree(
    files: Mapping[str, bytes],
    rules: Rules,
    journalled: Mapping[str, ev.Event],
    exports: _Exports,
    placeholder: bytes,
) -> _Tree:
    """Every file of a tree scrubbed with `rules`, which grow until nothing new turns up."""
    tree = _Tree()
    for _round in range(_ROUNDS):
        before = rules.size()
        tree = _Tree()
        taken: list[ev.Event] = []
        gone: list[tuple[str, str]] = []
        for rel, data in sorted(files.items()):
            kind = _kind(rel)
            if kind in ("export", "inbox"):
                result = _scrub_export(rel, data, rules, exports, placeholder)
                if result is not None:
                    tree.results[rel] = result
                continue
            if kind == "attachment":
                result = _scrub_attachment(rel, data, rules)
                if result is not None:
                    tree.results[rel] = result
                continue
            if kind in ("working", "index", "context", "other"):
                continue  # regenerated, or not the memory's
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
            done = scrub(rel, text, rules)
            tree.left += done.left
            taken += done.events
            sha = safe_io.sha256_hex(data)
            if done.text is None:
                tree.results[rel] = _Result(rel, "delete", None, done.removed, sha)
                gone.append((rel, done.title))
            elif done.removed:
                tree.results[rel] = _Result(rel, "edit", done.text.encode(), done.removed, sha)
        mention = rules.fact_scope is not None
        for i, event in journalled.items():
            if rules.event_goes(event, ev.render(event), rules.entity_names, True, mention):
                tree.journal_ids.add(i)
                taken.append(event)
        for rel, result in tree.results.items():
            if result.action == "edit" and _kind(rel) in ("note", "stm"):
                # Facts that went, for the job log's summaries ("fact deadline: Monday").
                for r in result.removed:
                    if r.what == "fact":
                        rules.texts.add(_fold(r.text.lstrip("- ").split(" (", 1)[0]))
        rules.absorb(taken, gone)
        tree.taken = {e.id for e in taken}
        if rules.size() == before:
            break
    return tree


def _everything(
    files: Mapping[str, bytes], identity: bool, placeholder: bytes, templates: Mapping[str, bytes]
) -> _Tree:
    """--everything: memory/, context/ and inbox/ go; short-term memory (and, asked, the identity)
    start again from the template; kept exports become placeholders."""
    tree = _Tree()
    for rel, data in sorted(files.items()):
        kind, sha = _kind(rel), safe_io.sha256_hex(data)
        if rel in templates and (kind == "stm" or identity):
            if data != templates[rel]:
                what = Removal("file", 0, "replaced by the template's")
                tree.results[rel] = _Result(rel, "reset", templates[rel], [what], sha)
        elif kind == "export":
            if not data.startswith(FORGOTTEN_HEAD):
                what = Removal("export", 0, "the kept chat export; replaced by a placeholder")
                tree.results[rel] = _Result(rel, "placeholder", placeholder, [what], sha)
        elif rel.startswith(("memory/", "context/", INBOX_DIR + "/")):
            what = Removal("note" if kind == "note" else "file", 0, "everything")
            tree.results[rel] = _Result(rel, "delete", None, [what], sha)
    return tree


# -- reading the vault ---------------------------------------------------------------------------


def _vault_files(memory: MemoryLike, everything: bool) -> tuple[dict[str, bytes], list[str]]:
    """Every file a forget may change, as bytes, and the ones that could not be read."""
    vault = memory.vault
    files: dict[str, bytes] = {}
    problems: list[str] = []
    wanted = set(vault.markdown_files())
    tops = (EXPORTS_DIR, ATTACHMENTS_DIR, "context", INBOX_DIR)
    for top in (*tops, *(["memory"] if everything else [])):
        base = vault.path(top)
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            for fname in filenames:
                path = Path(dirpath, fname)
                if fname.startswith(".") or path.is_symlink():
                    continue
                wanted.add(vault.rel(path))
    for rel in sorted(wanted):
        if _kind(rel) == "other" and not (everything and rel.startswith("memory/")):
            continue
        try:
            files[rel] = safe_io.read_bytes(vault.path(rel))[0]
        except FileNotFoundError:
            continue
        except (OSError, StaleWriteError) as exc:
            problems.append(f"{rel}: could not be read ({exc}); it was not checked")
    return files, problems


def _templates() -> dict[str, bytes]:
    root = template_dir()
    return {rel: (root / rel).read_bytes() for rel in (SHORT_TERM, IDENTITY)}


# -- planning ------------------------------------------------------------------------------------


@dataclass
class _Plan:
    selection: Selection
    rules: Rules
    working_memory: bool  # context/working_memory.md exists: it is written again
    tree: _Tree
    journal_ids: set[str]
    snapshots: list[tuple[Path, SnapshotChange, dict[str, tuple[str, bytes | None]]]]
    found: set[str]  # ids of the events found, in the vault, the journal or a snapshot
    left: list[str]
    placeholder: bytes

    def report(self, dry_run: bool) -> ForgetReport:
        out = ForgetReport(self.selection.describe(), dry_run)
        for rel, result in sorted(self.tree.results.items()):
            out.files.append(FileChange(rel, result.action, result.removed))
        if self.tree.results and self.working_memory:
            out.files.append(FileChange(WORKING_MEMORY, "regenerate"))
        out.events = sorted(self.found)
        out.journal = len(self.journal_ids)
        out.snapshots = [change for _path, change, _changes in self.snapshots]
        out.left = list(dict.fromkeys(self.left))
        if out.files:
            out.index = "rebuilt from the files"
        return out


def _resolve_note(memory: MemoryLike, spec: str) -> str:
    """A note's vault path from its path (with or without .md, absolute or in the vault) or its
    title, alias or file name."""
    vault = memory.vault
    raw = spec.strip()
    candidates = [raw, raw + ".md", f"{LONG_TERM_DIR}/{raw}", f"{LONG_TERM_DIR}/{raw}.md"]
    candidates += [f"{_ARCHIVED_NOTES}/{raw}", f"{_ARCHIVED_NOTES}/{raw}.md"]
    with contextlib.suppress(ValueError, OSError):
        candidates.insert(0, vault.rel(Path(raw).expanduser().resolve()))
    for rel in candidates:
        path = vault.path(rel)
        if path.is_file() and vault.inside(path) and _kind(rel) in ("note", "own"):
            return vault.rel(path.resolve()) if not path.is_symlink() else rel
    wanted = normalise(raw.removesuffix(".md"))
    found: list[str] = []
    for rel in vault.markdown_files("memory"):
        if _kind(rel) != "note":
            continue
        try:
            note = ltm.parse(vault.read(rel).text, rel)
        except (NoteParseError, FileNotFoundError):
            continue
        known = {normalise(n) for n in (note.title, *note.aliases, link_target(rel))}
        if wanted in known:
            found.append(rel)
    if len(found) == 1:
        return found[0]
    if found:
        raise VaultError(
            f"{len(found)} notes answer to {spec!r}: {', '.join(found)}; give the path of the one "
            "to forget"
        )
    raise VaultError(
        f"no note at or named {spec!r} under memory/; `brainiac search {spec!r}` shows where it is"
    )


def _rules(memory: MemoryLike, selection: Selection) -> Rules:
    rules = Rules(everything=selection.everything, identity=selection.identity)
    for spec in selection.notes:
        rel = _resolve_note(memory, spec)
        rules.gone_paths.add(rel)
        rules.gone.add(link_target(rel).casefold())
    for spec in selection.events:
        m = _ID_RE.match(spec.strip())
        if m:
            rules.ids.add(m.group(1))
        else:
            rules.event_needles.append(_fold(spec))
    rules.needles = [_fold(t) for t in selection.matching]
    rules.projects = frozenset(p.strip() for p in selection.projects)
    rules.fact_keys = {facts.normalise_key(k) for k in selection.facts}
    if selection.entity is not None:
        rel = _resolve_note(memory, selection.entity)
        rules.fact_scope = rel.rsplit("/", 1)[-1].casefold()
        try:
            note = ltm.parse(memory.vault.read(rel).text, rel)
            rules.entity_names = tuple(consolidate.note_names(note))
        except (NoteParseError, FileNotFoundError):
            rules.entity_names = (normalise(link_target(rel)),)
    return rules


def _for_snapshot(rules: Rules) -> Rules:
    """A note may have moved between long_term/ and archive/notes/ since a snapshot was made."""
    out = rules.copy()
    for rel in rules.gone_paths:
        if rel.startswith((LONG_TERM_DIR + "/", _ARCHIVED_NOTES + "/")):
            name = rel.rsplit("/", 1)[-1]
            out.gone_paths |= {f"{LONG_TERM_DIR}/{name}", f"{_ARCHIVED_NOTES}/{name}"}
    return out


def _snapshot_wanted(everything: bool) -> Callable[[str], bool]:
    def wanted(rel: str) -> bool:
        if everything:
            return rel.startswith(("memory/", "context/", INBOX_DIR + "/")) or rel == IDENTITY
        return _kind(rel) not in ("other", "index", "working", "context")

    return wanted


def _plan_snapshot(
    path: Path, rules: Rules, plan_exports: _Exports, placeholder: bytes, found: set[str]
) -> tuple[SnapshotChange, dict[str, tuple[str, bytes | None]]] | None:
    try:
        members = backup.read_files(path, _snapshot_wanted(rules.everything))
    except (VaultError, OSError) as exc:
        reason = f"it cannot be read, so it cannot be rewritten: {exc}"
        return SnapshotChange(str(path), "delete", reason=reason), {}
    if rules.everything:
        tree = _everything(members, rules.identity, placeholder, _templates())
    else:
        tree = _scrub_tree(members, _for_snapshot(rules), {}, plan_exports, placeholder)
    found |= tree.taken
    if not tree.results:
        return None
    change = SnapshotChange(str(path), "rewrite")
    changes: dict[str, tuple[str, bytes | None]] = {}
    for rel, result in sorted(tree.results.items()):
        changes[rel] = (result.old_sha, result.new)
        (change.dropped if result.new is None else change.changed).append(rel)
        change.removed += sum(1 for r in result.removed if r.line)
    return change, changes


def _plan(memory: MemoryLike, selection: Selection, now: dt.datetime) -> _Plan:
    rules = _rules(memory, selection)
    files, problems = _vault_files(memory, selection.everything)
    placeholder = _placeholder(now)
    exports = _Exports()
    journalled = journal.read(memory.locations.state)
    if selection.everything:
        tree = _everything(files, selection.identity, placeholder, _templates())
        journal_ids = set(journalled)
        found = journal_ids | journal.vault_event_ids(memory)
    else:
        tree = _scrub_tree(files, rules, journalled, exports, placeholder)
        journal_ids = tree.journal_ids
        found = set(tree.taken)
    snapshots = []
    for snap in backup.list_snapshots(memory):
        planned = _plan_snapshot(snap.path, rules, exports, placeholder, found)
        if planned is not None:
            snapshots.append((snap.path, *planned))
    left = [*problems, *tree.left]
    for name in (
        "promotion.intent.json",
        "imports/intent.json",
    ):
        if (memory.locations.state / name).exists():
            left.append(f"an interrupted run's plan ({name}) is finished before anything goes")
    return _Plan(
        selection,
        rules,
        WORKING_MEMORY in files,
        tree,
        journal_ids,
        snapshots,
        found,
        left,
        placeholder,
    )


# -- carrying it out -----------------------------------------------------------------------------


def forget(
    memory: MemoryLike,
    selection: Selection,
    now: dt.datetime | None = None,
    dry_run: bool = False,
    confirm: Callable[[ForgetReport], bool] | None = None,
) -> ForgetReport:
    """List what `selection` takes and, unless `dry_run` or `confirm(listing)` says no, remove
    it for good. Returns the listing, or what was removed (`done`)."""
    selection.check()
    when = clock.local(now) if now is not None else clock.now()
    if dry_run:
        return _plan(memory, selection, when).report(dry_run=True)
    holder = holder_of(memory.locations.runtime)
    by_daemon = holder is not None and holder.pid == os.getpid()  # asked of it (service.py)
    if (
        holder is not None
        and not by_daemon
        and not selection.everything
        and daemon_requests.daemon_takes_requests(memory.locations.state, holder.pid)
    ):
        return _ask_daemon(memory, selection, when, holder.pid, confirm)
    if (holder is not None and not by_daemon) or not memory.index_writes:
        raise VaultError(
            f"the daemon (pid {holder.pid if holder else '?'}) is running and owns the index; "
            "stop it (systemctl --user stop brainiac), forget, then start it again"
        )
    with jobs_mod.job_lock(memory.locations.state, wait_s=_LOCK_WAIT_S) as held:
        if not held:
            raise VaultError(
                f"{memory.vault.root}: a memory job has held the job lock for over "
                f"{_LOCK_WAIT_S:g} s; try again in a minute"
            )
        _finish_interrupted(memory, when)
        plan = _plan(memory, selection, when)
        listing = plan.report(dry_run=False)
        if not _go_ahead(listing, confirm):
            return listing
        return _carry_out(memory, plan, when, listing.confirmed)


def _go_ahead(listing: ForgetReport, confirm: Callable[[ForgetReport], bool] | None) -> bool:
    """Whether to remove what `listing` lists: something does match, and `confirm` (if given)
    says yes; its answer is recorded on the listing."""
    if listing.empty:
        return False
    if confirm is None:
        return True
    listing.confirmed = bool(confirm(listing))
    return listing.confirmed


def _ask_daemon(
    memory: MemoryLike,
    selection: Selection,
    now: dt.datetime,
    pid: int,
    confirm: Callable[[ForgetReport], bool] | None,
) -> ForgetReport:
    """Beside a running daemon, which owns the index: list here, then ask the daemon to remove
    (daemon_requests.py). It lists again under the job lock and removes what matches then."""
    listing = _plan(memory, selection, now).report(dry_run=False)
    if not _go_ahead(listing, confirm):
        return listing
    result = daemon_requests.ask(
        memory.locations.state, pid, "forget", selection.as_args(), _DAEMON_WAIT_S
    )
    report = ForgetReport.from_json(result)
    report.confirmed = listing.confirmed
    return report


def _finish_interrupted(memory: MemoryLike, now: dt.datetime) -> None:
    """A plan a crash left behind holds event text; carried out first, it is then forgotten."""
    from brainiac import importer
    from brainiac.jobs.moving import finish_interrupted

    finish_interrupted(memory, now)
    importer.finish_interrupted(memory)


def _carry_out(
    memory: MemoryLike, plan: _Plan, now: dt.datetime, confirmed: bool | None
) -> ForgetReport:
    out = ForgetReport(plan.selection.describe(), False, done=True, confirmed=confirmed)
    out.left = list(dict.fromkeys(plan.left))
    rules = plan.rules
    # The journal first: were the run cut short after the vault was changed, promotion would
    # otherwise put the events back. (Cut short here, running the same command again finishes.)
    ids = set(plan.journal_ids)
    if not plan.selection.everything:
        ids |= rules.ids
    out.journal = journal.forget(memory.locations.state, ids)
    changed: list[str] = []
    for rel, result in sorted(plan.tree.results.items()):
        change = _apply(memory, rel, result, plan, out.skipped)
        if change is not None:
            out.files.append(change)
            changed.append(rel)
    out.events = sorted(plan.found)
    if not plan.selection.everything:
        out.journal += journal.forget(memory.locations.state, rules.ids - ids)  # found meanwhile
    if changed:
        # The index first: the working memory is assembled from it.
        report = memory.reindex()
        out.index = f"rebuilt from the files ({report.docs_written} document(s))"
        _regenerate(memory, plan, now, out)
    out.state = _scrub_state(memory, rules, plan.selection.everything)
    out.snapshots = _rewrite_snapshots(plan, now, memory)
    rest = _still_there(memory, plan)
    if rest:
        out.skipped.append(f"still there after the run: {', '.join(rest)}; run it again")
    return out


def _still_there(memory: MemoryLike, plan: _Plan) -> list[str]:
    """The vault read again: what the rules would still take (only a concurrent save can leave
    something; it is reported, never silently kept)."""
    files, _problems = _vault_files(memory, plan.selection.everything)
    if plan.selection.everything:
        tree = _everything(files, plan.selection.identity, plan.placeholder, _templates())
    else:
        journalled = journal.read(memory.locations.state)
        tree = _scrub_tree(files, plan.rules.copy(), journalled, _Exports(), plan.placeholder)
        if tree.journal_ids:
            return [*sorted(tree.results), "the event journal"]
    return sorted(tree.results)


def _apply(
    memory: MemoryLike, rel: str, result: _Result, plan: _Plan, skipped: list[str]
) -> FileChange | None:
    """One file's change, by compare-and-swap: an edit is re-applied to a version saved since
    the listing; a file that goes whole (or is replaced) must still be what was listed."""
    vault = memory.vault
    if result.action == "edit":
        final: list[Scrubbed] = []

        def transform(text: str | None) -> str | None:
            if text is None:
                return None
            done = scrub(rel, text, plan.rules)
            final[:] = [done]
            if done.text is None:
                return None  # it would now go whole: only what was listed goes (below)
            return done.text

        outcome = Outcome()
        update(vault, rel, transform, outcome, dry_run=False)
        skipped += outcome.skipped
        if final and final[0].text is None:
            skipped.append(f"{rel}: changed since it was listed; left as it is, run it again")
            return None
        if not outcome.changed:
            return None
        plan.rules.absorb(final[0].events, [])
        return FileChange(rel, "edit", final[0].removed)
    path = vault.path(rel)
    try:
        data, fingerprint = safe_io.read_bytes(path)
    except FileNotFoundError:
        return None
    if safe_io.sha256_hex(data) != result.old_sha:
        skipped.append(f"{rel}: changed since it was listed; left as it is, run it again")
        return None
    try:
        if result.new is None:
            _delete_if_unchanged(path, fingerprint)
        else:
            safe_io.write_bytes(path, result.new, fingerprint)
    except StaleWriteError:
        skipped.append(f"{rel}: saved by someone else just now; left as it is, run it again")
        return None
    return FileChange(rel, result.action, result.removed)


def _delete_if_unchanged(path: Path, expected: safe_io.Fingerprint) -> None:
    """Delete `path` if it is still what `expected` describes (StaleWriteError otherwise): moved
    aside first, checked, then unlinked; a save that landed in between is moved back."""
    aside = path.with_name(f".{path.name}.forget{safe_io.TMP_SUFFIX}")
    os.rename(path, aside)
    try:
        data, fp = safe_io.read_bytes(aside)
    except FileNotFoundError:
        return
    if (fp.ino, safe_io.sha256_hex(data)) != (expected.ino, expected.sha256):
        if not safe_io.rename_noreplace(aside, path):
            raise StaleWriteError(f"{path}: saved meanwhile; the saved copy is kept as {aside}")
        raise StaleWriteError(f"{path}: saved by someone else meanwhile; kept theirs")
    aside.unlink()


def _regenerate(memory: MemoryLike, plan: _Plan, now: dt.datetime, out: ForgetReport) -> None:
    """The index notes and the working memory are made from the notes: made again."""
    vault = memory.vault
    index_dir = vault.path(INDEXES_DIR)
    if index_dir.is_dir() and any(index_dir.glob("*.md")):
        from brainiac.jobs.organization import write_indexes

        memory.names.refresh(vault, memory.config.private_folders)
        outcome = Outcome()
        write_indexes(memory, now, outcome, False)
        out.files += [FileChange(rel, "regenerate") for rel in outcome.changed]
    if not vault.path(WORKING_MEMORY).exists():
        return
    text = memory.context(None, now=now).text
    written = wm.write(vault, memory.locations.state, text, now)
    out.files.append(FileChange(WORKING_MEMORY, "regenerate"))
    if written.kept_aside:  # a hand edit, moved aside: it is scrubbed like any edited copy
        aside = written.kept_aside
        current = vault.read(aside)
        done = scrub(aside, current.text, plan.rules)
        if done.text is not None and done.removed:
            vault.write(aside, done.text, current.fingerprint)
            out.files.append(FileChange(aside, "edit", done.removed))


def _scrub_state(memory: MemoryLike, rules: Rules, everything: bool) -> list[str]:
    """brainiac's own records outside the vault that quote memory: the job log's summaries
    ("fact passport number: …") and diffs, and which notes were used (paths of notes that
    went)."""
    state = memory.locations.state
    said: list[str] = []

    def quotes(text: str) -> bool:
        return everything or rules.any_text(text)

    log_path = state / jobs_mod.LOG_FILE
    with contextlib.suppress(FileNotFoundError):
        lines = log_path.read_text(encoding="utf-8").splitlines(keepends=True)
        kept = [
            line for line in lines if not quotes(line) and not quotes(jobs_mod.entry_text(line))
        ]
        if len(kept) != len(lines):
            safe_io.replace_file(log_path, "".join(kept).encode("utf-8"))
            said.append(f"{jobs_mod.LOG_FILE}: {len(lines) - len(kept)} run(s) removed")
    records = jobs_mod.load_records(state)
    touched = [name for name, rec in records.items() if quotes(rec.last_summary)]
    for name in touched:
        records[name].last_summary = "(removed by brainiac forget)"
    if touched:
        jobs_mod.save_records(state, records)
        said.append(f"jobs.json: the last result of {', '.join(touched)} removed")
    if everything:  # goals are taken from events after this time: a new start takes all
        with contextlib.suppress(FileNotFoundError):
            (state / "reflection.json").unlink()
            said.append("reflection.json: removed")
    gone_paths = {link_target(p).casefold() for p in rules.gone_paths} | rules.gone
    for name in ("access.jsonl", "last_context.json"):
        path = state / name
        with contextlib.suppress(FileNotFoundError):
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            kept = [
                line
                for line in lines
                if not everything and not any(g and g in line.casefold() for g in gone_paths)
            ]
            if len(kept) != len(lines):
                if kept:
                    safe_io.replace_file(path, "".join(kept).encode("utf-8"))
                else:
                    path.unlink()
                said.append(f"{name}: {len(lines) - len(kept)} line(s) removed")
    return said


def _rewrite_snapshots(plan: _Plan, now: dt.datetime, memory: MemoryLike) -> list[SnapshotChange]:
    done: list[SnapshotChange] = []
    for path, change, changes in plan.snapshots:
        if change.action == "rewrite":
            try:
                backup.rewrite(memory, path, changes, now)
                again = _plan_snapshot(path, plan.rules, _Exports(), plan.placeholder, set())
                if again is not None:
                    raise VaultError("it still held what was forgotten after the rewrite")
                done.append(dataclasses.replace(change, action="rewritten"))
                continue
            except (VaultError, OSError) as exc:
                change = dataclasses.replace(
                    change, reason=f"could not be rewritten ({exc}); deleted instead"
                )
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        done.append(dataclasses.replace(change, action="deleted"))
    return done
