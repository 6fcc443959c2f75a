"""The short-term document, `memory/short_term.md`.

Its sections are `## Summary`, `## Working Memory`, `## Goals`, `## Facts`, `## Tasks` and
`## Event Log`, in that order in the template; a person may reorder them, add their own sections or
write anything between them, and all of that is kept byte for byte. The only edits made here add
event lines to the Event Log (creating the section if a person deleted it): at its end for what
happens now, and in time order for imported history, so older conversations do not pose as the
most recent steps.

A person may also rename the `## Event Log` heading (`## Events`). The event lines brainiac wrote
are then still the log, under its new name (`log_section`): read, searched, promoted and added to
there, never a second log beside it, while `brainiac status` says how to put the name back.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass

from brainiac.core import clock
from brainiac.formats import events as ev
from brainiac.formats import note as notes

RELPATH = "memory/short_term.md"
EVENT_LOG = "Event Log"
STRUCTURED = ("Goals", "Facts", "Tasks")
SECTIONS = ("Summary", "Working Memory", *STRUCTURED, EVENT_LOG)
_NOT_THE_LOG = {title.casefold() for title in SECTIONS[:-1]}
# The head of an event line as brainiac writes it (a time and a role): a line a person writes in
# their own section does not look like this, so such lines mark where a renamed log went.
_LOGGED_HEAD = re.compile(r"^- \d{4}-\d{2}-\d{2}T\d{2}:\d{2}\S* \*\*[^*\n]+\*\*")


@dataclass(frozen=True)
class ShortTerm:
    note: notes.Note
    events: tuple[ev.Event, ...]
    renamed_log: str | None = None  # the heading the Event Log goes by, if a person renamed it

    def section(self, title: str) -> str:
        """A section's text with its blank edges and HTML comments (template hints) removed."""
        return strip_hints(self.note.section_text(title) or "")


def strip_hints(text: str) -> str:
    """Drop `<!-- ... -->` hint comments the template puts in empty sections."""
    out = []
    in_comment = False
    for line in text.split("\n"):
        stripped = line.strip()
        if not in_comment and stripped.startswith("<!--"):
            in_comment = "-->" not in stripped
            continue
        if in_comment:
            in_comment = "-->" not in stripped
            continue
        out.append(line)
    return "\n".join(out).strip("\n")


def parse(text: str, path: str = RELPATH) -> ShortTerm:
    note = notes.parse(text, path)
    section = log_section(note)
    renamed = section.title if section is not None and note.section(EVENT_LOG) is None else None
    return ShortTerm(note, tuple(_events_in(note, section)), renamed)


def log_section(note: notes.Note) -> notes.Section | None:
    """The Event Log: the `## Event Log` section or, if a person renamed its heading, the section
    (other than the Summary ... Tasks) holding the most event lines brainiac wrote."""
    section = note.section(EVENT_LOG)
    if section is not None:
        return section
    lines = note.lines
    best, most = None, 0
    for s in note.sections:
        if s.level < 2 or s.title.casefold() in _NOT_THE_LOG:
            continue
        count = sum(
            1 for line in lines[s.heading_line + 1 : s.end_line] if _LOGGED_HEAD.match(line)
        )
        if count > most:  # `>`: of a section and one nested in it, the outer one
            best, most = s, count
    return best


def log_problem(doc: ShortTerm) -> str | None:
    """What `status` says when the Event Log goes by another name, or event lines brainiac wrote
    stand outside it (its heading deleted, then made again): None when neither is the case."""
    if doc.renamed_log is not None:
        return (
            f"{doc.note.path}: has no `## {EVENT_LOG}` section; its {len(doc.events)} event(s) "
            f"are under `## {doc.renamed_log}` and are read from there; rename that heading back "
            f"to `## {EVENT_LOG}`"
        )
    log = log_section(doc.note)
    inside = range(log.heading_line, log.end_line) if log is not None else range(0)
    lines = doc.note.lines
    stray: dict[int, str] = {}  # line -> the innermost heading it stands under
    for s in doc.note.sections:
        if s.level >= 2:
            for i in range(s.heading_line + 1, s.end_line):
                if i not in inside and _LOGGED_HEAD.match(lines[i]):
                    stray[i] = s.title
    if not stray:
        return None
    where = ", ".join(f"`## {title}`" for title in dict.fromkeys(stray.values()))
    return (
        f"{doc.note.path}: {len(stray)} event line(s) stand outside the `## {EVENT_LOG}` "
        f"(under {where}) and are not read as recent events; move them under `## {EVENT_LOG}`"
    )


def event_log(note: notes.Note) -> list[ev.Event]:
    return _events_in(note, log_section(note))


def _events_in(note: notes.Note, section: notes.Section | None) -> list[ev.Event]:
    if section is None:
        return []
    lines = note.lines[section.heading_line + 1 : section.end_line]
    return [loc.event for loc in ev.parse_lines(lines)]


def append_events(text: str, new: Iterable[ev.Event]) -> tuple[str, list[ev.Event]]:
    """The document with `new` events appended to its Event Log, skipping ids already present.

    Returns the new text and the events actually added (in order).
    """
    return _add_events(text, new, in_time_order=False)


def insert_events(text: str, new: Iterable[ev.Event]) -> tuple[str, list[ev.Event]]:
    """Like `append_events`, but each new event goes before the first logged event that is
    later than it (imported history). Existing lines never move; undated events stay put."""
    return _add_events(text, new, in_time_order=True)


def insert_events_under(
    text: str, new: Iterable[ev.Event], title: str
) -> tuple[str, list[ev.Event]]:
    """Like `insert_events`, into the section `title` of any note (a long-term note's Sources),
    made at the end if missing; ids already anywhere in the text are skipped."""
    return _add_events(text, new, in_time_order=True, title=title)


def _add_events(
    text: str, new: Iterable[ev.Event], in_time_order: bool, title: str | None = None
) -> tuple[str, list[ev.Event]]:
    doc = parse(text)
    if title is None:
        present = ev.ids(doc.events)
        section = log_section(doc.note)
    else:
        present = ev.ids(ev.parse_text(text))
        section = doc.note.section(title)
    added: list[ev.Event] = []
    for event in new:
        if event.id not in present:
            present.add(event.id)
            added.append(event)
    if not added:
        return text, []
    lines = doc.note.lines
    if section is None:
        ordered = sorted(added, key=_time_key) if in_time_order else added
        rendered = "".join(map(ev.render, ordered))
        return notes.replace_section(text, title or EVENT_LOG, rendered), added
    # The end: after the last non-blank line of the section, so blank lines before a following
    # heading (or at the end of the file) stay where the person left them.
    end = section.end_line
    while end > section.heading_line + 1 and not lines[end - 1].strip():
        end -= 1
    placed: dict[int, list[ev.Event]] = {}
    if in_time_order:
        # A merge of the (sorted) new events into the log as it stands: one pass over each.
        pending = sorted((e for e in added if e.at is not None), key=_time_key)
        body = lines[section.heading_line + 1 : end]
        j = 0
        for loc in ev.parse_lines(body, offset=section.heading_line + 1):
            if loc.event.at is None:
                continue
            at = clock.instant(loc.event.at)
            while j < len(pending) and _time_key(pending[j]) < at:
                placed.setdefault(loc.first_line, []).append(pending[j])
                j += 1
        placed.setdefault(end, []).extend(pending[j:])
        placed[end].extend(e for e in added if e.at is None)
    else:
        placed[end] = added
    out: list[str] = []
    for i in range(len(lines) + 1):
        if i in placed:
            if out and not out[-1].endswith("\n"):
                out[-1] += "\n"
            out.extend(ev.render(e) for e in placed[i])
        if i < len(lines):
            out.append(lines[i])
    return "".join(out), added


def _time_key(event: ev.Event) -> float:
    """When the event happened, as an instant (the second 02:10 of a fall-back night after the
    first 02:50); undated first."""
    return clock.instant(event.at) if event.at else -math.inf
