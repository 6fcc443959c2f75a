"""The lines of a note's `## Observations` section: written (`render`, `add`) and read back
(what the guard compares with).

An observation is one top-level line, a third-person statement naming its owner, its relative
dates already made absolute, with the date it was said and the event it was read from in a tail
like a fact's (the format benchmarks/knowledge.py's docstring defines):

    ## Observations
    - Caroline went to an LGBTQ support group on 2023-05-07. (2023-05-08, e-3f2a1c9b0d)

The source may also be a link to the event's block (`[[#^e-3f2a1c9b0d]]`,
`[[note#^e-3f2a1c9b0d|...]]`), and a line may carry a generated-line mark (`^g-...`) at its end.
A line ending in a bare `^e-...` is an event line, not an observation (the index holds it as an
event already). No I/O; what a line says is language/observe.py's.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from brainiac.formats import note as note_mod
from brainiac.formats.fences import Fences

SECTION = "Observations"
# The id of an observation's source event, as the writer (observe.py) names it.
ID = r"e-[0-9a-f]{10}"
_ITEM_RE = re.compile(r"^[-*+]\s+(?!\[[ xX]\]\s)(?P<body>\S.*?)\s*$")
_MARK_RE = re.compile(r"\s+\^g-[\w-]+\s*$")
_EVENT_BLOCK_RE = re.compile(rf"\s\^{ID}\s*$")
_TAIL_RE = re.compile(r"\s*\((?P<inner>[^()\n]*)\)\s*$")
_LINK_RE = re.compile(rf"\[\[[^\]|#]*#\^(?P<id>{ID})(?:\|(?P<shown>[^\]]*))?\]\]")
_BARE_ID_RE = re.compile(rf"(?<![\w-])(?P<id>{ID})(?![\w-])")
_HEADING_RE = re.compile(r"^(?P<hashes>#{1,6})\s+(?P<title>.*?)\s*#*\s*$")
_DATE_RE = re.compile(r"\b(?P<date>\d{4}-\d{2}-\d{2})(?:[ T](?P<time>\d{2}:\d{2}))?")


@dataclass(frozen=True)
class ObservationLine:
    """One observation as written: the statement, when it was said, the event it came from."""

    text: str  # the statement, without its tail or links' markup
    said_at: dt.datetime | None
    source: str | None  # the event id (`e-...`), when the line names one
    line: int  # 0-based, in the lines given to `parse`


def parse(lines: list[str], offset: int = 0) -> list[ObservationLine]:
    """The observations among `lines` (a section's body); `offset` is added to each line
    number. Lines that are not top-level list items, and event lines, are left out."""
    out: list[ObservationLine] = []
    for i, raw in enumerate(lines):
        m = _ITEM_RE.match(raw.rstrip("\n"))
        if m is None:
            continue
        body = _MARK_RE.sub("", m.group("body"))
        if _EVENT_BLOCK_RE.search(" " + body):
            continue  # an event line: indexed as the event itself
        source: str | None = None
        said_at: dt.datetime | None = None
        tail = _TAIL_RE.search(body)
        named = _BARE_ID_RE.search(tail.group("inner")) if tail is not None else None
        if tail is not None and named is not None:
            source = named.group("id")
            said_at = _date(tail.group("inner"))
            body = body[: tail.start()]
        link = _LINK_RE.search(body)
        if link is not None:
            source = source or link.group("id")
            body = _LINK_RE.sub(lambda x: x.group("shown") or "", body)
        text = " ".join(body.split())
        if text:
            out.append(ObservationLine(text, said_at, source, offset + i))
    return out


def of_note(parsed: note_mod.Note) -> list[ObservationLine]:
    """The observations of a parsed note (line numbers are 0-based in the whole file)."""
    s = parsed.section(SECTION)
    if s is None:
        return []
    return parse(parsed.lines[s.heading_line + 1 : s.end_line], s.heading_line + 1)


def of_text(text: str) -> tuple[ObservationLine, ...]:
    """The observations of a file's text, found without parsing the whole note (its
    frontmatter's YAML is what costs): the lines under an `## Observations` heading, outside
    code fences, up to the next heading of the same or a higher level."""
    lines = note_mod.split_lines(text)
    fences = Fences()
    start: int | None = None
    level = 0
    for i, line in enumerate(lines):
        m = None if fences.code(line) else _HEADING_RE.match(line)
        if m is None:
            continue
        if start is not None and len(m.group("hashes")) <= level:
            return tuple(parse(lines[start:i], start))
        if start is None and m.group("title").strip().casefold() == SECTION.casefold():
            start, level = i + 1, len(m.group("hashes"))
    return tuple(parse(lines[start:], start)) if start is not None else ()


def _date(inner: str) -> dt.datetime | None:
    m = _DATE_RE.search(inner)
    if m is None:
        return None
    try:
        day = dt.date.fromisoformat(m.group("date"))
    except ValueError:
        return None
    hour, minute = (int(x) for x in (m.group("time") or "00:00").split(":"))
    return dt.datetime(day.year, day.month, day.day, hour, minute)


# The event ids a line names, as observe.py writes them in its tail.
_SOURCE_RE = re.compile(rf"(?<![\w-])({ID})(?![\w-])")


def sources(section_text: str) -> set[str]:
    """The event ids the lines of an `## Observations` section were read from."""
    return set(_SOURCE_RE.findall(section_text))


def by_source(section_text: str) -> dict[str, str]:
    """The section's top-level lines by the event id each names (the first line naming it), so
    a note's observations can go with their events to another note, a person's edits kept."""
    out: dict[str, str] = {}
    for line in section_text.split("\n"):
        if line.startswith("- "):
            for source in _SOURCE_RE.findall(line):
                out.setdefault(source, line.rstrip("\r"))
    return out


def without(section_text: str, gone: set[str]) -> str:
    """The section without the lines naming an event of `gone` (their events went elsewhere)."""
    kept = [
        line
        for line in section_text.split("\n")
        if not (line.startswith("- ") and set(_SOURCE_RE.findall(line)) & gone)
    ]
    return "\n".join(kept)


@dataclass(frozen=True)
class Observation:
    """One line of an `## Observations` section: whose, what (third person, dates absolute),
    when it was said and the event it was read from."""

    owner: str
    text: str
    said_at: dt.datetime | None
    source: str


def render(o: Observation) -> str:
    """The line: `- statement (said-at date, e-id)`, a fact's tail (never a bare block id)."""
    parts = [o.said_at.date().isoformat()] if o.said_at is not None else []
    return f"- {o.text} ({', '.join([*parts, o.source])})"


def add(
    section_text: str, new: Sequence[Observation], carried: Mapping[str, str] | None = None
) -> str:
    """The section with a line for each of `new` appended, unless a line of its event is there
    already (a person's edit of it included); `carried` (by event id) are lines the event had
    in the note it came from, written as they are instead. Every other line stays byte for
    byte."""
    have = sources(section_text)
    fresh: list[str] = []
    for o in new:
        if o.source not in have:
            have.add(o.source)
            fresh.append(render(o))
    for source, line in (carried or {}).items():
        if source not in have:
            have.add(source)
            fresh.append(line)
    if not fresh:
        return section_text
    body = section_text.rstrip("\n")
    body = body + "\n" if body.strip() else ""
    return body + "".join(f"{line}\n" for line in fresh)
