"""The exchange a turn belongs to: the turns said just before it, which it answers.

A reply rarely repeats what it is about: "Three times a week; it keeps us on track." answers
"How often do you all work out together?", and "It was Matt Patterson, he is so talented!"
answers "What concert was it?" after "We celebrated my daughter's birthday with a concert". A
response names the thing ("You do boot camp with your family five times a week"), so the turn
alone shares none of its words. Where the turn before is another speaker's question, the two
turns before it are the turn's context: their words say which event the reply is about
(alignment.py), while the values compared stay the turn's own.

Read from the files the candidate events are logged in (a note's `## Sources`, an archive
month, the short-term Event Log: events in the order they were said), each file once per text.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import events as ev
from brainiac.guard.evidence.alignment import EventLine

if TYPE_CHECKING:
    from brainiac.search.memory_protocol import MemoryLike

_BEFORE = 2  # turns of context: the question, and the turn it asks about
_CACHED = 256  # files whose order of turns is kept
_ORDER: dict[tuple[str, int, int], dict[str, str]] = {}


def with_context(memory: MemoryLike, events: list[EventLine]) -> list[EventLine]:
    """`events` with the turns each answers as its `context` (an empty one where the turn
    before it asks nothing)."""
    out: list[EventLine] = []
    for e in events:
        context = _context_of(memory, e.path).get(e.id, "") if e.id and e.path else ""
        out.append(dataclasses.replace(e, context=context) if context else e)
    return out


def _context_of(memory: MemoryLike, rel: str) -> dict[str, str]:
    try:
        text = memory.vault.read(rel).text
    except (OSError, BrainiacError):
        return {}  # gone since it was indexed: the turn speaks alone
    key = (rel, hash(text), len(text))
    found = _ORDER.get(key)
    if found is None:
        if len(_ORDER) >= _CACHED:
            _ORDER.clear()
        found = _ORDER[key] = _answered(text)
    return found


def _answered(text: str) -> dict[str, str]:
    """Event id -> the text of the turns before it, for each turn that follows another
    speaker's question in the same session."""
    said = [loc.event for loc in ev.parse_lines(text.splitlines())]
    out: dict[str, str] = {}
    for i, event in enumerate(said):
        if i == 0:
            continue
        asked = said[i - 1]
        if asked.role == event.role or "?" not in asked.text or asked.session != event.session:
            continue
        before = [e.text for e in said[max(i - _BEFORE, 0) : i] if e.session == event.session]
        out[event.id] = " ".join(before)
    return out
