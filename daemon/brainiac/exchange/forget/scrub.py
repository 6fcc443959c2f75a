"""Scrubbing one file by the rules (`scrub`): the lines that go from a note, the short-term
document, an archive month or a plain file, and what is left of it (pure). Lines inside code
fences and HTML comments are a person's text and are judged as the text they are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from brainiac.core.errors import NoteParseError
from brainiac.exchange.forget.kinds import file_kind
from brainiac.exchange.forget.rules import Rules
from brainiac.exchange.forget.selection import Removal, short
from brainiac.formats import events as ev
from brainiac.formats import ltm, marks
from brainiac.formats import note as notes
from brainiac.formats.fences import Fences
from brainiac.language import facts, observe
from brainiac.lifecycle.jobs import consolidate

_QUOTED_ID_RE = re.compile(rf"\^({ev.ID})\s*$")


_SOURCE_TAIL_RE = re.compile(rf"\b({ev.ID})\)\s*$")


_STRUCTURAL = frozenset(
    {"short-term memory", "summary", "working memory", "goals", "facts", "tasks"}
    | {"event log", "sources", "related", "promoted"}
)


_DERIVED_SECTIONS = ("goals", "tasks", "working memory")


_EVENT_SECTION = {"stm": "event log", "month": "event log", "note": "sources"}


@dataclass
class Scrubbed:
    text: str | None  # the new text; None: the whole file goes
    removed: list[Removal] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)  # events taken out
    left: list[str] = field(default_factory=list)  # matches left in place, and why
    title: str = ""  # a note that goes whole: its title


def scrub(rel: str, text: str, rules: Rules) -> Scrubbed:
    """`text` of vault file `rel` without what `rules` take (pure)."""
    kind = file_kind(rel)
    if kind in ("stm", "month", "note"):
        if rel not in rules.gone_paths and rules.quick_miss(text):
            return Scrubbed(text)
        return _scrub_markdown(rel, text, rules, kind)
    if kind == "copy":
        kept = [line for line in notes.split_lines(text) if not rules.any_text(line)]
        gone = [
            Removal("line", i + 1, short(line))
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
        self.removed.append(Removal(what, first + 1, short(shown)))

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
    for s in note.sections:
        if s.title.casefold() != observe.SECTION.casefold():
            continue
        for i in range(s.heading_line + 1, s.end_line):
            # What was read from a forgotten event goes with it, a person's edit of it too.
            if not cut.has(i) and i not in commented and observe.sources(lines[i]) & rules.ids:
                cut.drop(i, i, "observation")
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
