"""The observations beside the events: the `## Observations` lines of the files the search hit.

An observation says what an event said, as a person would note it: in the third person, naming
its owner, its relative dates already made absolute ("Caroline went to an LGBTQ support group on
2023-05-07"). That is what a response states too, so an observation is evidence the same way
as the turn it was read from (evidence/__init__.py aligns and compares both alike), and it
still speaks when the turn itself was not among the hits, or said "we" and "yesterday".

Which observations: those written in the files the one search of `check` hit (a note, the
month file of the archive an event is logged in, the short-term document), read once per check.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from brainiac.core.errors import BrainiacError
from brainiac.formats import observation_lines
from brainiac.guard.evidence.alignment import EventLine
from brainiac.language import claims
from brainiac.language.life_facts import NOBODY_ROLES, USER_ROLES
from brainiac.store.vault import SHORT_TERM

if TYPE_CHECKING:
    from brainiac.guard.within import Within
    from brainiac.search.index_documents import Hit
    from brainiac.search.memory_protocol import MemoryLike

_WORD_RE = re.compile(r"[A-ZÀ-ÖØ-Þ][\w'’-]*")
_CACHED = 512  # files whose observations are kept (a few kilobytes each)
_READ: dict[tuple[str, int, int], tuple[tuple[observation_lines.ObservationLine, str], ...]] = {}
_FILES = 40  # files read, in the order the search ranked them
_LINES = 400  # observations compared at most (alignment drops the unrelated ones cheaply)


def observation_lines_of(
    memory: MemoryLike, hits: Sequence[Hit], within: Within | None = None
) -> list[EventLine]:
    """The observations written in the files among `hits` (and the short-term document), as
    event lines: the statement as text, its owner (the first name it says) as the speaker, the
    id of the event it was read from. In a project (`within`), those of the events it sees: a
    month of the archive or the short-term document holds every project's."""
    paths = list(dict.fromkeys(h.path for h in hits if h.path))[:_FILES]
    if SHORT_TERM not in paths:
        paths.append(SHORT_TERM)
    out: list[EventLine] = []
    for rel in paths:
        try:
            text = memory.vault.read(rel).text
        except (OSError, BrainiacError):
            continue  # gone since it was indexed, or unreadable: the events still speak
        # (a private note is never indexed, so never among the hits: privacy.py)
        for o, owner in _observations(rel, text):
            if within is not None and o.source and not within.sees(o.source):
                continue
            if len(out) >= _LINES:
                return out
            out.append(EventLine(o.source or "", rel, owner, o.said_at, o.text, True, o.line + 1))
    return out


def _observations(rel: str, text: str) -> tuple[tuple[observation_lines.ObservationLine, str], ...]:
    """A file's observations and their owners, read again only when its text changed: check
    after check the search hits the same few files. Keyed by the text's hash, so no file's
    text is kept."""
    key = (rel, hash(text), len(text))
    found = _READ.get(key)
    if found is None:
        if len(_READ) >= _CACHED:
            _READ.clear()
        found = _READ[key] = tuple((o, _owner(o.text)) for o in observation_lines.of_text(text))
    return found


def _owner(statement: str) -> str:
    """Whose the observation is: the first name it says ("Caroline went to ...", "Since they
    last spoke, Melanie took ..."), as an event's speaker is its role; "" when it names no one."""
    names = claims.names(statement)
    for m in _WORD_RE.finditer(statement):
        word = m.group().replace("’", "'").removesuffix("'s").rstrip("'")
        if word.lower() in names:
            return word
    return ""


def owned(observations: list[EventLine], turns: list[EventLine]) -> list[EventLine]:
    """Observations whose owner speaks as the turns' speakers do: in a conversation between
    named people an observation's first name is its owner only when it is one of them ("Lisbon
    was amazing" is nobody's); where only the user and the assistant speak, the people the
    observations name are the speakers to tell apart."""
    said = {e.role.lower() for e in turns if e.role}
    if not said - USER_ROLES - NOBODY_ROLES:
        return observations
    return [o if o.role.lower() in said else dataclasses.replace(o, role="") for o in observations]
