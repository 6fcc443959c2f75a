"""The rules a selection becomes (`Rules`): the ids, texts, notes, facts and projects whose
lines go, and what was derived from them; pure, so the listing and the removal read them alike.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from brainiac.exchange.forget.selection import fold
from brainiac.formats import events as ev
from brainiac.formats import marks
from brainiac.formats import note as notes
from brainiac.language import extract
from brainiac.lifecycle.jobs import consolidate
from brainiac.lifecycle.jobs.reflection import SELF_ROLE
from brainiac.store.names import link_target, normalise

_MIN_DERIVED = 8  # a goal or task shorter than this is not traced back to its event


_ID_TOKEN_RE = re.compile(rf"(?<![\w^-])({ev.ID})\b")


_LIST_PREFIX_RE = re.compile(r"^\s*- (?:\[.?\] )?")


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
        folded = fold(text)
        return any(n in folded for n in self.needles)

    def any_phrase(self, text: str) -> bool:
        folded = fold(text)
        return any(p in folded for p in self.phrases)

    def any_text(self, text: str) -> bool:
        folded = fold(text)
        return any(n in folded for n in self.needles) or any(t in folded for t in self.texts)

    def names_id(self, line: str) -> bool:
        return any(i in self.ids for i in _ID_TOKEN_RE.findall(line))

    def links_gone(self, line: str) -> bool:
        if not self.gone or "[[" not in line:
            return False
        return any(link_target(t).casefold() in self.gone for t in notes.wikilinks(line))

    def derived(self, line: str) -> bool:
        """A generated goal or task line reflection took from a forgotten event."""
        text = fold(_LIST_PREFIX_RE.sub("", marks.unmark(line)))
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
        if self.event_needles and any(n in fold(event.text) for n in self.event_needles):
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
                if len(fold(line)) >= 12:
                    self.texts.add(fold(line))
            if event.role == SELF_ROLE:
                continue  # its own records never start another round of derived lines
            for found in (extract.goals, extract.tasks, extract.questions):
                self.phrases.update(
                    fold(p) for p in found(event.text) if len(fold(p)) >= _MIN_DERIVED
                )
        for rel, title in gone_notes:
            self.gone.add(link_target(rel).casefold())
            if len(fold(title)) >= 4:
                self.texts.add(fold(title))

    def quick_miss(self, text: str) -> bool:
        """True when `text` certainly holds nothing these rules take (skips most files)."""
        if self.gone_paths or any(i in text for i in self.ids):
            return False
        if any(f"[{p}]" in text for p in self.projects):
            return False
        folded = fold(text)
        if any(n in folded for n in (*self.needles, *self.event_needles)):
            return False
        if any(p in folded for p in self.phrases) or any(g in folded for g in self.gone):
            return False
        return not any(all(w in folded for w in k.split()) for k in self.fact_keys)
