"""Names said as a value: the name a thing is given ("the puppy is named Shadow", "your colleague
Samuel", "Oscar, my guinea pig", "... is Captain America", "Spider-Man has always been a favorite
of mine").

A name the memory knows elsewhere may still be the wrong value: "Your colleague Samuel invited
you" is wrong where the turn about the invitation says "my colleague Rob", though a veteran
named Samuel comes up in another session. So beside the names the memory never mentions
(evidence/__init__.py), a name in one of these places is a value: the event about the sentence
agrees when it names it, and contradicts it when it gives another name in such a place. Names
said anywhere else are context ("You and Melanie went to ..."). Pure reading: no I/O.
"""

from __future__ import annotations

import re

from brainiac.guard.evidence.words import VERB_FORMS, lemma
from brainiac.language import claims, lexicon

_NAME = r"[A-ZÀ-ÖØ-Þ][\w&'’-]*(?:\s+[A-ZÀ-ÖØ-Þ][\w&'’-]*)*"
# "named Max", "called Oscar", "his name is Kyle", "Her name's Coco"
_NAMING_RE = re.compile(
    rf"\b(?:named|called|name(?:'s|’s|\s+is|\s+was)|names\s+(?:are|were))\s+(?P<name>{_NAME})"
)
# "... is Captain America." / "... was Iron Man!" (the sentence ends on the name)
_COPULA_RE = re.compile(
    rf"\b(?:is|was|are|were)\s+(?:the\s+)?[\"“']?(?P<name>{_NAME})[\"”']?\s*[.!]?\s*$"
)
# "Iron Man is my top pick": the name opens a sentence that says what it is
_SUBJECT_RE = re.compile(rf"^\s*(?P<name>{_NAME})\s+(?:is|was|are|were)\s+(?:my|our)\s+")
# "Spider-Man has always been a favorite of mine", "Bach is one of my top picks": a name opening
# any sentence of a turn, said to be someone's preference, one the claim names too (only then:
# "Max is a good boy" gives no name for a favourite, and "Conroy Brothers are due to start the
# kitchen" names who starts, not a value)
_OPENING_RE = re.compile(
    rf"(?:^|[.!?]\s+|\s[-–—]\s+|,\s+)[\"“']?(?P<name>{_NAME})[\"”']?\s+"
    r"(?:is|was|are|were|has\s+(?:always\s+)?been|have\s+(?:always\s+)?been)\s+"
    r"(?P<what>(?:[\w'’-]+\s+){0,4}[\w'’-]+)"
)
_PREFERRED = frozenset(
    lemma(w) for w in ("favorite", "favourite", "fave", "faves", "pick", "choice", "go-to")
)
# "colleague Rob", "my son Kyle", "one of the residents, Laura,": a noun, then its name
_APPOSED_RE = re.compile(rf"\b(?P<noun>[a-z][a-z-]{{2,}}),?\s+(?P<name>{_NAME})")
# "Oscar, my guinea pig": the name, then what it is
_VERB_FORM_RE = re.compile(r"(?:ed|ing)$")  # "invited Samuel", "meeting Jean": not a noun
_BEFORE_RE = re.compile(rf"(?P<name>{_NAME}),\s+(?:my|our|his|her|their)\s+(?P<noun>[a-z][\w -]*)")


def value_names(sentence: str, nouns: set[str]) -> set[str]:
    """The lowercased names `sentence` gives as a value: after a naming word, ending the
    sentence after "is", opening a sentence that says it is a preference `nouns` names
    ("Spider-Man has always been a favorite of mine"), or right after one of `nouns` (lemmas:
    the relation words the claim and the event share, so "colleague Rob" answers "colleague
    Samuel")."""
    found: list[str] = []
    for pattern in (_NAMING_RE, _COPULA_RE, _SUBJECT_RE):
        found += [m.group("name") for m in pattern.finditer(sentence)]
    for m in _APPOSED_RE.finditer(sentence):
        noun = m.group("noun")
        if noun in lexicon.STOP_WORDS or noun in VERB_FORMS or _VERB_FORM_RE.search(noun):
            continue
        if lemma(noun) in nouns:
            found.append(m.group("name"))
    for m in _OPENING_RE.finditer(sentence):
        if {lemma(w) for w in m.group("what").lower().split()} & nouns & _PREFERRED:
            found.append(m.group("name"))
    for m in _BEFORE_RE.finditer(sentence):
        if {lemma(w) for w in m.group("noun").split()} & nouns:
            found.append(m.group("name"))
    return {n for name in found for n in claims.names(" " + name)}
