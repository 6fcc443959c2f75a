"""Whose a sentence is, and whether the owner's own evidence clears it: the rules that keep the
event path's conflict right in any conversation, whatever the alignment.

- a sentence about no one (between named people: no speaker, no one's possessive, no personal
  pronoun) contradicts no one's life (`has_owner`);
- the person whose event differs, stating the sentence's value in another event about the same
  thing, makes it two occasions or a change, not a wrong value (`said_elsewhere`).

Not how closely an event is aligned (alignment.py) nor what its values are (values.py).
"""

from __future__ import annotations

import re

from brainiac.guard.evidence.alignment import Aligned, EventLine
from brainiac.guard.evidence.values import Values
from brainiac.guard.evidence.words import FIRST_PERSON, YOU, bare, lemma, words_of
from brainiac.language import lexicon
from brainiac.language.life_facts import NOBODY_ROLES, USER_ROLES

# Words that make a sentence about a person (with the speakers' names): "The Grand Canyon is
# popular" is about no one
_PERSONAL = FIRST_PERSON | YOU | lexicon.word_set("he she his her him hers they their them")
_POSSESSIVE_RE = re.compile(r"\b[A-Z][a-z]+['’]s\b")


def has_owner(sentence: str, turns: list[EventLine]) -> bool:
    """Whether the sentence says whose life it is about, where the turns are between named
    people: a speaker's name, a person's possessive ("Jean's"), or a personal pronoun. Where
    only the user and the assistant speak, everything said is the user's."""
    said = {e.role.lower() for e in turns if e.role}
    if not said - USER_ROLES - NOBODY_ROLES:
        return True
    words = words_of(sentence)
    if (said | _PERSONAL) & {bare(w) for w in words}:
        return True
    return bool(_POSSESSIVE_RE.search(sentence))


def said_elsewhere(
    said: Values, differ: list[Aligned], agree: list[Aligned], relation: set[str]
) -> bool:
    """Whether the owner of the event that differs states the sentence's value in another event
    about the same thing: said by the same person, holding every relation word the differing
    event shares with the sentence, and (for a date) stating the date itself rather than being
    timed by when it was said. Then the two events are two occasions or a change, and the
    sentence agrees with one of them: no conflict, however closely either is aligned."""
    for d in differ:
        theirs = _shared(d, relation)
        for a in agree:
            if a.event.role.lower() != d.event.role.lower() or not a.core:
                continue
            if said.periods and not a.timed:
                continue
            if theirs <= _shared(a, relation):
                return True
    return False


def _shared(a: Aligned, relation: set[str]) -> set[str]:
    return relation & {lemma(w) for w in words_of(a.sentence)}
