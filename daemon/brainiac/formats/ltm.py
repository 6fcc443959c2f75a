"""Long-term notes: one Markdown file per topic or entity under `memory/long_term/`.

The format (see vault_template/memory/long_term/ and docs/vault-format.md):

    ---
    title: Project Atlas
    tags: [project, work]
    aliases: [Atlas]
    strength: 1.5
    reinforcement: 0.2
    created: 2026-10-02
    updated: 2026-11-18
    last_accessed: 2026-11-20T09:30
    status: active
    ---
    ## Summary        a few sentences about the topic
    ## Facts          `- key: value` lines, each with its history
    ## Sources        verbatim events (the event-line format of events.py, ids kept)
    ## Related        [[links]] to other notes, by file name: [[anna-berg|Anna Berg]]

Any other section or text a person adds is part of the note and is indexed with it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from brainiac.formats import events as ev
from brainiac.formats import note as notes

SUMMARY = "Summary"
FACTS = "Facts"
SOURCES = "Sources"
RELATED = "Related"

DEFAULT_STRENGTH = 1.0
_TRUE_WORDS = ("true", "yes", "on", "y", "1")  # `private:` written as text


@dataclass(frozen=True)
class LongTermNote:
    note: notes.Note

    @property
    def path(self) -> str:
        return self.note.path

    @property
    def title(self) -> str:
        return self.note.title

    @property
    def aliases(self) -> list[str]:
        return self.note.meta_list("aliases")

    @property
    def tags(self) -> list[str]:
        seen = dict.fromkeys(self.note.meta_list("tags") + notes.inline_tags(self.note.body))
        return list(seen)

    @property
    def projects(self) -> list[str]:
        """The projects of its sources (`projects: [atlas]`, docs/projects.md); [] is global."""
        return self.note.meta_list("projects")

    @property
    def strength(self) -> float:
        return self.note.meta_float("strength", DEFAULT_STRENGTH)

    @property
    def reinforcement(self) -> float:
        return self.note.meta_float("reinforcement", 0.0)

    @property
    def status(self) -> str:
        value = self.note.meta.get("status")
        return str(value).strip().lower() if value else "active"

    @property
    def private(self) -> bool:
        # Obsidian's checkbox writes `true`; a person may type "yes" or quote it ("true"), and
        # reading that as public would publish the note, so those count too.
        value = self.note.meta.get("private")
        if isinstance(value, str):
            return value.strip().lower() in _TRUE_WORDS
        return value is True or (type(value) is int and value == 1)

    @property
    def last_touched(self) -> dt.datetime | None:
        """The latest of updated, last_accessed and created: what recency is measured from."""
        times = [self.note.meta_time(k) for k in ("last_accessed", "updated", "created")]
        known = [t for t in times if t is not None]
        return max(known) if known else None

    @property
    def decay_start(self) -> dt.datetime | None:
        """What decay counts from: the latest of the last decay written (`decayed`), the last
        reinforcement, access, update or creation."""
        times = [self.note.meta_time(k) for k in ("decayed", "reinforced")] + [self.last_touched]
        known = [t for t in times if t is not None]
        return max(known) if known else None

    @property
    def links(self) -> list[str]:
        return notes.wikilinks(self.note.body)

    def section(self, title: str) -> str:
        return (self.note.section_text(title) or "").strip("\n")

    @property
    def sources(self) -> list[ev.Event]:
        return [loc.event for loc in self.located_sources()]

    def located_sources(
        self, wanted: Callable[[list[str]], bool] | None = None
    ) -> list[ev.Located]:
        """The Sources section's events; with `wanted`, only those whose lines it accepts, the
        others not parsed (events.parse_lines)."""
        s = self.note.section(SOURCES)
        if s is None:
            return []
        lines = self.note.lines[s.heading_line + 1 : s.end_line]
        return list(ev.parse_lines(lines, offset=s.heading_line + 1, wanted=wanted))


def parse(text: str, path: str) -> LongTermNote:
    return LongTermNote(notes.parse(text, path))
