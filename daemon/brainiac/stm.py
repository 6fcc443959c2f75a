"""The short-term document, `memory/short_term.md`.

Its sections are `## Summary`, `## Working Memory`, `## Goals`, `## Facts`, `## Tasks` and
`## Event Log`, in that order in the template; a person may reorder them, add their own sections or
write anything between them, and all of that is kept byte for byte. The only edit made here is
appending event lines at the end of the Event Log (creating the section if a person deleted it).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from brainiac import events as ev
from brainiac import note as notes

RELPATH = "memory/short_term.md"
EVENT_LOG = "Event Log"
STRUCTURED = ("Goals", "Facts", "Tasks")
SECTIONS = ("Summary", "Working Memory", *STRUCTURED, EVENT_LOG)


@dataclass(frozen=True)
class ShortTerm:
    note: notes.Note
    events: tuple[ev.Event, ...]

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
    return ShortTerm(note, tuple(event_log(note)))


def event_log(note: notes.Note) -> list[ev.Event]:
    section = note.section(EVENT_LOG)
    if section is None:
        return []
    lines = note.lines[section.heading_line + 1 : section.end_line]
    return [loc.event for loc in ev.parse_lines(lines)]


def append_events(text: str, new: Iterable[ev.Event]) -> tuple[str, list[ev.Event]]:
    """The document with `new` events appended to its Event Log, skipping ids already present.

    Returns the new text and the events actually added (in order).
    """
    doc = parse(text)
    present = ev.ids(doc.events)
    added: list[ev.Event] = []
    for event in new:
        if event.id not in present:
            present.add(event.id)
            added.append(event)
    if not added:
        return text, []
    rendered = "".join(ev.render(e) for e in added)
    lines = doc.note.lines
    section = doc.note.section(EVENT_LOG)
    if section is None:
        return notes.replace_section(text, EVENT_LOG, rendered), added
    # Insert after the last non-blank line of the section, so blank lines before a following
    # heading (or at the end of the file) stay where the person left them.
    insert_at = section.end_line
    while insert_at > section.heading_line + 1 and not lines[insert_at - 1].strip():
        insert_at -= 1
    before = "".join(lines[:insert_at])
    if before and not before.endswith("\n"):
        before += "\n"
    return before + rendered + "".join(lines[insert_at:]), added
