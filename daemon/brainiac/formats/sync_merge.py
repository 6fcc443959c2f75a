"""A sync tool's conflict copy merged back into the file it is a copy of. Pure: texts in, text out.

Syncthing keeps both versions when two devices changed a file before either saw the other's
change: the newer under the file's name, the older beside it as
`name.sync-conflict-<date>-<time>-<device>.md` (Dropbox and Obsidian Sync name theirs
`name (... conflicted copy ...).md`). Two kinds of text are in brainiac's files:

* event lines with their ids (`^e-...`). Ids are content-addressed, so the merge is a union: each
  id once, the copy's events placed in time order in the section they stood in (the Event Log,
  a note's Sources);
* everything else: a person's text, and what brainiac generates (lines marked `^g-`, the
  frontmatter fields the jobs keep up to date). The person's text of each side is compared as a
  sequence of lines. When one side's is the other's with lines added, the fuller side is kept;
  when both changed it differently there is no common version to merge from, so the original
  keeps its own, gets the copy's events, and the copy stays beside it to be reported: nothing a
  person typed is dropped.

An event of the copy that another memory file holds (`elsewhere`: promotion moved it into a note
while the other device still logged it) is not brought back, and an event the short-term Event Log
holds that another file holds is taken out of the log. Otherwise the stale side of a conflict
would put promoted events back into the log, a second copy of each.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from brainiac.formats import events as ev
from brainiac.formats import marks, stm
from brainiac.formats import note as notes

# The part of a conflict copy's name that the sync tool added (see vault.is_conflict_copy).
_MARKER_RE = re.compile(
    r"\.sync-conflict-\d{8}-\d{6}-[A-Z0-9]{7}"  # Syncthing
    r"| ?\([^()]*conflicted copy[^()]*\)",  # Obsidian Sync, Dropbox
    re.IGNORECASE,
)
# Frontmatter fields the jobs rewrite (decay, reinforcement, access): two devices' values differ
# without anyone having typed anything.
_MANAGED_FIELD_RE = re.compile(
    r"^(?:strength|reinforcement|updated|last_accessed|status|access_count)\s*:"
)


def original_of(copy_rel: str) -> str | None:
    """The vault path a conflict copy is a copy of (a copy of a copy too), or None if the name
    holds no sync tool's marker."""
    folder, _, name = copy_rel.rpartition("/")
    stripped = _MARKER_RE.sub("", name)
    if stripped == name or not stripped.endswith(".md") or stripped == ".md":
        return None
    return f"{folder}/{stripped}" if folder else stripped


@dataclass(frozen=True)
class Merged:
    text: str  # the original's new text
    added: tuple[ev.Event, ...]  # events the original did not hold
    dropped: tuple[str, ...]  # ids taken out of the Event Log: another file holds them
    keep_copy: bool  # both sides changed a person's text differently: the copy stays beside


@dataclass(frozen=True)
class _Logged:
    event: ev.Event
    section: str  # the heading it stands under ("" before the first)
    first_line: int
    last_line: int


def merge(original: str, copy: str, rel: str, elsewhere: Collection[str] = ()) -> Merged:
    """The original's text with the copy merged in (see the module's docstring). `rel` is the
    original's vault path; NoteParseError when either side is no readable note."""
    mine, theirs = person_text(original, rel), person_text(copy, rel)
    keep_copy = False
    if _within(theirs, mine):
        base, other = original, copy
    elif _within(mine, theirs):
        base, other = copy, original
    else:
        base, other, keep_copy = original, copy, True
    held = _logged(base, rel)
    present = {item.event.id for item in held}
    dropped: tuple[str, ...] = ()
    text = base
    if rel == stm.RELPATH:
        gone = [item for item in held if item.event.id in elsewhere]
        dropped = tuple(item.event.id for item in gone)
        text = _without(text, gone)
    added: dict[str, _Logged] = {}
    for item in _logged(other, rel):
        if item.event.id not in present and item.event.id not in elsewhere:
            added.setdefault(item.event.id, item)
    if rel == stm.RELPATH:
        text, _ = stm.insert_events(text, [item.event for item in added.values()])
    else:
        by_section: dict[str, list[ev.Event]] = {}
        for item in added.values():
            by_section.setdefault(item.section or "Sources", []).append(item.event)
        for title, new in by_section.items():
            text, _ = stm.insert_events_under(text, new, title)
    return Merged(text, tuple(item.event for item in added.values()), dropped, keep_copy)


def person_text(text: str, rel: str) -> list[str]:
    """A file's lines that a person wrote: not event lines with ids, not generated (`^g-`) lines,
    not the frontmatter fields the jobs keep, not blank."""
    note = notes.parse(text, rel)
    lines = note.lines
    skip: set[int] = set()
    for item in _logged(text, rel, note):
        skip.update(range(item.first_line, item.last_line + 1))
    fm = note.frontmatter_lines
    out = []
    for i, raw in enumerate(lines):
        line = raw.rstrip()
        if i in skip or not line.strip() or marks.is_generated(line):
            continue
        if fm is not None and fm[0] <= i <= fm[1] and _MANAGED_FIELD_RE.match(line):
            continue
        out.append(line)
    return out


def _within(small: list[str], large: list[str]) -> bool:
    """Whether `small` is `large` with some lines left out (a subsequence, in order)."""
    rest = iter(large)
    return all(any(line == other for other in rest) for line in small)


def _logged(text: str, rel: str, note: notes.Note | None = None) -> list[_Logged]:
    """The event lines with an id (brainiac's events; a line a person typed without one is their
    text), each with the heading it stands under."""
    note = note if note is not None else notes.parse(text, rel)
    lines = note.lines
    out = []
    for loc in ev.parse_lines(lines):
        if f"^{loc.event.id}" not in lines[loc.last_line]:
            continue
        under = [s for s in note.sections if s.heading_line < loc.first_line < s.end_line]
        section = max(under, key=lambda s: s.heading_line).title if under else ""
        out.append(_Logged(loc.event, section, loc.first_line, loc.last_line))
    return out


def _without(text: str, gone: list[_Logged]) -> str:
    if not gone:
        return text
    skip = {i for item in gone for i in range(item.first_line, item.last_line + 1)}
    return "".join(line for i, line in enumerate(notes.split_lines(text)) if i not in skip)
